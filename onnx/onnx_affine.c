/* onnx_affine.c — the pending affine map of the ONNX importer (see
 * onnx_internal.h, lg_ox_b): z = W·a + b over the last layer boundary a,
 * composed op by op and closed into dense layers.
 *
 * The imported network must be the file's exact function (DESIGN.md §3
 * "Which function is verified"): a constant is folded into the pending map
 * only when every folded number is exact in double (checked with FMA /
 * TwoSum); otherwise the pending map is closed as an identity layer and the
 * constant starts a new map, and a division whose reciprocal is not a double
 * is refused. Two matrices are never multiplied together. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/op.h"
#include "onnx/onnx.h"
#include "onnx/onnx_internal.h"

static void lg_ox_terms_free(lg_ox_term *xt, int n)
{
    for (int t = 0; t < n; t++) {
        free(xt[t].W);
        free(xt[t].map);
    }
    free(xt);
}

void lg_ox_pm_free(lg_ox_pm *p)
{
    free(p->W);
    free(p->d);
    free(p->b);
    free(p->K);
    free(p->map);
    lg_ox_terms_free(p->xt, p->n_xt);
    memset(p, 0, sizeof *p);
}

static int *lg_ox_idup(const int *v, size_t n)
{
    int *p = malloc((n ? n : 1) * sizeof *p);
    if (p && n) memcpy(p, v, n * sizeof *p);
    return p;
}

lg_status lg_ox_pm_copy(lg_ox_pm *dst, const lg_ox_pm *src)
{
    *dst = *src;
    dst->W = dst->d = dst->b = dst->K = NULL;
    dst->map = NULL;
    dst->xt = NULL;
    dst->n_xt = 0;
    size_t n = (size_t)src->n, m = (size_t)src->m;
    size_t nk = (size_t)src->conv.c_out * (size_t)src->conv.c_in * (size_t)src->conv.kh * (size_t)src->conv.kw;
    if ((src->W && !(dst->W = lg_ox_dup(src->W, n * m))) || (src->d && !(dst->d = lg_ox_dup(src->d, n))) ||
        (src->b && !(dst->b = lg_ox_dup(src->b, n))) || (src->K && !(dst->K = lg_ox_dup(src->K, nk))) ||
        (src->map && !(dst->map = lg_ox_idup(src->map, n))))
        goto oom;
    if (src->n_xt) {
        if (!(dst->xt = calloc((size_t)src->n_xt, sizeof *dst->xt))) goto oom;
        dst->n_xt = src->n_xt;
        for (int t = 0; t < src->n_xt; t++) {
            const lg_ox_term *a = &src->xt[t];
            lg_ox_term *c = &dst->xt[t];
            *c = *a;
            c->W = NULL;
            c->map = NULL;
            size_t nw = a->kind == LG_LAYER_CONV2D || a->kind == LG_LAYER_TOKMAP
                            ? (size_t)a->conv.c_out * (size_t)a->conv.c_in * (size_t)a->conv.kh * (size_t)a->conv.kw
                            : n * (size_t)a->n_in;
            if ((a->W && !(c->W = lg_ox_dup(a->W, nw))) || (a->map && !(c->map = lg_ox_idup(a->map, n)))) goto oom;
        }
    }
    return LG_OK;
oom:
    lg_ox_pm_free(dst);
    return lg_fail(LG_ERR_NOMEM, "out of memory copying a pending map");
}

void lg_ox_b_free(lg_ox_b *B)
{
    lg_ox_pm_free(&B->pm);
    free(B->in_sub);
    free(B->in_div);
    for (int k = 0; k < B->n_layers; k++) {
        free(B->layers[k].W);
        free(B->layers[k].b);
        free(B->layers[k].map);
        lg_ox_terms_free(B->layers[k].xt, B->layers[k].n_xt);
    }
    free(B->layers);
    memset(B, 0, sizeof *B);
}

int lg_ox_b_identity(const lg_ox_b *B) { return !B->W && !B->d && !B->b && !B->K && !B->map && !B->n_xt; }

lg_status lg_ox_b_materialize(lg_ox_b *B)
{
    if (!B->K) return LG_OK;
    const lg_conv *c = &B->conv;
    size_t n = (size_t)B->n, m = (size_t)B->m;
    if (n > LG_OX_DENSE_MAX_BYTES / sizeof(double) / m)
        return lg_fail(LG_ERR_UNSUPPORTED,
                       "%s: a conv followed by a linear op before its activation would be a dense %zu x %zu matrix "
                       "above %zu MB",
                       B->file, n, m, LG_OX_DENSE_MAX_BYTES >> 20);
    double *W = calloc(n * m, sizeof *W);
    if (!W) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
    if (B->tok) { /* kron(I_T, A): the block on the diagonal */
        size_t bo = (size_t)c->c_out, bi = (size_t)c->c_in;
        for (size_t t = 0; t < (size_t)c->h_in; t++)
            for (size_t r = 0; r < bo; r++)
                memcpy(W + (t * bo + r) * m + t * bi, B->K + r * bi, bi * sizeof *W);
    } else {
        lg_conv_kernel_dense(c, B->K, W); /* m = c_in·h_in·w_in */
    }
    free(B->K);
    B->K = NULL;
    B->tok = 0;
    B->W = W;
    memset(&B->conv, 0, sizeof B->conv);
    return LG_OK;
}

lg_status lg_ox_b_tokmap(lg_ox_b *B, double *A, int T, int Kin, int N)
{
    size_t rows = (size_t)T * (size_t)N, cols = (size_t)T * (size_t)Kin;
    if (lg_ox_b_identity(B) && (size_t)B->n == cols && (size_t)Kin * (size_t)N > 1) { /* a 1 × 1 block stays dense */
        B->K = A;
        B->conv = lg_tokmap_geom(T, Kin, N);
        B->tok = 1;
        B->n = (int)rows;
        return LG_OK;
    }
    if (rows * cols > LG_NET_MAX_PARAMS || rows * cols * sizeof(double) > LG_OX_DENSE_MAX_BYTES) {
        free(A);
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: a per-token map of %d tokens (%d -> %d values each) after a "
                       "pending linear op would be a dense %zu x %zu matrix, more than %zu weights",
                       B->file, T, Kin, N, rows, cols, (size_t)LG_NET_MAX_PARAMS);
    }
    double *M = calloc(rows * cols, sizeof *M);
    if (!M) {
        free(A);
        return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
    }
    for (size_t t = 0; t < (size_t)T; t++)
        for (size_t r = 0; r < (size_t)N; r++)
            memcpy(M + (t * (size_t)N + r) * cols + t * (size_t)Kin, A + r * (size_t)Kin, (size_t)Kin * sizeof *M);
    free(A);
    return lg_ox_b_linear(B, M, (int)rows, NULL);
}

double *lg_ox_dup(const double *v, size_t n)
{
    double *p = malloc(n * sizeof *p);
    if (p) memcpy(p, v, n * sizeof *p);
    return p;
}

/* Results below this magnitude may have lost bits to underflow, where the
 * FMA residual is no longer exact: treated as inexact. A factor or divisor of
 * ±1 needs no test at any magnitude (the result is ±the other number), so a
 * Gemm's alpha = beta = 1 keeps weights down to the subnormals exact. */
#define LG_OX_TINY 0x1p-969

int lg_ox_mul_exact(double a, double b, double *r)
{
    *r = a * b;
    if (a == 0 || b == 0) return 1;
    if (fabs(a) == 1.0 || fabs(b) == 1.0) return isfinite(*r);
    return isfinite(*r) && fabs(*r) >= LG_OX_TINY && fma(a, b, -*r) == 0;
}

int lg_ox_div_exact(double a, double c, double *r)
{
    *r = a / c;
    if (a == 0) return c != 0;
    if (fabs(c) == 1.0) return isfinite(*r);
    return isfinite(*r) && fabs(*r) >= LG_OX_TINY && fma(*r, c, -a) == 0;
}

int lg_ox_add_exact(double a, double b, double *r)
{
    double s = a + b, bb = s - a;
    *r = s;
    return isfinite(s) && (a - (s - bb)) + (b - bb) == 0;
}

/* 1 if nothing but a permutation of the input is pending before the first
 * layer (a Transpose at the input, NHWC → NCHW): z_i = x_{pi[i]}, pi [n]
 * filled; then a Sub or Div of z moves to the input exactly, element pi[i]
 * taking c[i]. */
static int lg_ox_b_input_perm(const lg_ox_b *B, size_t *pi)
{
    size_t n = (size_t)B->n;
    if (B->n_layers != 0 || B->K || B->n_xt || !(B->W || B->map) || B->d || B->b || B->n != B->m || B->n != B->n_in)
        return 0;
    unsigned char *seen = calloc(n ? n : 1, 1);
    if (!seen) return 0;
    int ok = 1;
    if (B->map) {
        for (size_t i = 0; i < n && ok; i++) {
            int j = B->map[i];
            if (j < 0 || seen[j]) ok = 0;
            else seen[j] = 1, pi[i] = (size_t)j;
        }
        free(seen);
        return ok;
    }
    for (size_t i = 0; i < n && ok; i++) {
        size_t hit = n;
        for (size_t j = 0; j < n && ok; j++) {
            double w = B->W[i * n + j];
            if (w == 1.0 && hit == n && !seen[j]) hit = j;
            else if (w != 0.0) ok = 0;
        }
        if (hit == n) ok = 0;
        else seen[hit] = 1, pi[i] = hit;
    }
    free(seen);
    return ok;
}

/* When only a permutation of the input is pending (lg_ox_b_input_perm),
 * *slot (in_sub or in_div) ← c [n] moved through it to the input: 1. 0 when
 * something else is pending, −1 out of memory. */
static int lg_ox_b_perm_const(const lg_ox_b *B, const double *c, double **slot)
{
    size_t n = (size_t)B->n;
    size_t *pi = malloc((n ? n : 1) * sizeof *pi);
    if (!pi) return -1;
    int perm = lg_ox_b_input_perm(B, pi);
    double *v = perm ? malloc((n ? n : 1) * sizeof *v) : NULL;
    if (v)
        for (size_t i = 0; i < n; i++) v[pi[i]] = c[i];
    free(pi);
    if (!perm) return 0;
    *slot = v;
    return v ? 1 : -1;
}

/* z ← z + sign·c, c [n]. */
lg_status lg_ox_b_shift(lg_ox_b *B, const double *c, double sign)
{
    size_t n = (size_t)B->n;
    lg_status st;
    if (sign < 0 && B->n_layers == 0 && !B->input_shared && lg_ox_b_identity(B) && !B->in_sub && !B->in_div) {
        if (!(B->in_sub = lg_ox_dup(c, n))) goto oom;
        return LG_OK;
    }
    if (sign < 0 && !B->in_sub && !B->in_div && B->n_layers == 0 && !B->input_shared && (B->W || B->map)) {
        int moved = lg_ox_b_perm_const(B, c, &B->in_sub);
        if (moved < 0) goto oom;
        if (moved) return LG_OK;
    }
    if (B->b) {
        double *nb = malloc(n * sizeof *nb);
        if (!nb) goto oom;
        int exact = 1;
        for (size_t i = 0; i < n && exact; i++) exact = lg_ox_add_exact(B->b[i], sign * c[i], &nb[i]);
        if (exact) {
            free(B->b);
            B->b = nb;
            return LG_OK;
        }
        free(nb); /* the sum is not a double: keep the pending map as its own exact layer */
        if ((st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) return st;
    }
    if (!(B->b = calloc(n, sizeof *B->b))) goto oom;
    for (size_t i = 0; i < n; i++) B->b[i] = sign * c[i];
    return LG_OK;
oom:
    return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
}

/* The pending map times c (divide = 0) or divided by c (divide = 1) into
 * W2/d2/b2 (each allocated when the map has it); 1 if every entry is exact. */
static int lg_ox_b_scaled(const lg_ox_b *B, const double *c, int divide, double *W2, double *d2, double *b2)
{
    size_t n = (size_t)B->n, m = (size_t)B->m;
    for (size_t i = 0; i < n; i++) {
        if (B->W)
            for (size_t j = 0; j < m; j++)
                if (!(divide ? lg_ox_div_exact(B->W[i * m + j], c[i], &W2[i * m + j])
                             : lg_ox_mul_exact(B->W[i * m + j], c[i], &W2[i * m + j])))
                    return 0;
        if (!B->W) {
            double dv = B->d ? B->d[i] : 1.0;
            if (!(divide ? lg_ox_div_exact(dv, c[i], &d2[i]) : lg_ox_mul_exact(dv, c[i], &d2[i]))) return 0;
        }
        if (B->b && !(divide ? lg_ox_div_exact(B->b[i], c[i], &b2[i]) : lg_ox_mul_exact(B->b[i], c[i], &b2[i])))
            return 0;
    }
    return 1;
}

/* z ← z·c (divide = 0) or z/c (divide = 1), c [n]. */
lg_status lg_ox_b_scale(lg_ox_b *B, const double *c, int divide)
{
    size_t n = (size_t)B->n, m = (size_t)B->m;
    lg_status st;
    if (divide)
        for (size_t i = 0; i < n; i++)
            if (c[i] == 0.0) return lg_fail(LG_ERR_FORMAT, "%s: division by zero constant (element %zu)", B->file, i);
    if ((st = lg_ox_b_materialize(B)) != LG_OK) return st;
    if (divide && B->n_layers == 0 && !B->input_shared && lg_ox_b_identity(B) && !B->in_div) {
        if (!(B->in_div = lg_ox_dup(c, n))) goto oom;
        return LG_OK;
    }
    if (divide && B->n_layers == 0 && !B->input_shared && (B->W || B->map) && !B->in_div) {
        int moved = lg_ox_b_perm_const(B, c, &B->in_div);
        if (moved < 0) goto oom;
        if (moved) return LG_OK;
    }
    /* a scale does not compose with an index map or further terms: they close first */
    if ((B->map || B->n_xt) && (st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) return st;
    double *W2 = B->W ? malloc(n * m * sizeof *W2) : NULL, *d2 = malloc(n * sizeof *d2);
    double *b2 = B->b ? malloc(n * sizeof *b2) : NULL;
    if ((B->W && !W2) || !d2 || (B->b && !b2)) {
        free(W2);
        free(d2);
        free(b2);
        goto oom;
    }
    if (!lg_ox_b_scaled(B, c, divide, W2, d2, b2)) {
        /* a product or quotient is not a double: the pending map becomes its own exact
         * layer and the constant starts a new diagonal map (1/c must then be a double) */
        free(W2);
        free(b2);
        W2 = b2 = NULL;
        if ((st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) {
            free(d2);
            return st;
        }
        int noted = 0;
        for (size_t i = 0; i < n; i++)
            if (!(divide ? lg_ox_div_exact(1.0, c[i], &d2[i]) : lg_ox_mul_exact(1.0, c[i], &d2[i]))) {
                if (lg_onnx_get_import_opts()->round_weights) {
                    d2[i] = 1.0 / c[i]; /* correctly rounded */
                    if (!noted)
                        lg_ox_note_add(1, "division by %.17g: 1/%.17g rounded to the nearest double %.17g "
                                       "(--round-weights)", c[i], c[i], d2[i]);
                    noted = 1;
                    continue;
                }
                free(d2);
                return lg_fail(LG_ERR_UNSUPPORTED,
                               "%s: division by %.17g: 1/%.17g is not a double, so the layer would not be the "
                               "file's exact function (lgelu verifies only exact weights; divide at the input or "
                               "by a power of two; --round-weights verifies the net with 1/%.17g rounded to the "
                               "nearest double instead, and says so)",
                               B->file, c[i], c[i], c[i]);
            }
    }
    if (B->W) {
        free(B->W);
        B->W = W2;
        free(d2);
        free(B->d);
        B->d = NULL;
    } else {
        free(B->d);
        B->d = d2;
    }
    if (b2) {
        free(B->b);
        B->b = b2;
    }
    return LG_OK;
oom:
    return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
}

/* 1 if A [rows][cols] is a selection: every row holds at most one nonzero,
 * which is 1, and no column holds two; src[r] = its column or −1. */
static int lg_ox_selection(const double *A, size_t rows, size_t cols, long *src)
{
    unsigned char *used = calloc(cols ? cols : 1, 1);
    if (!used) return 0;
    int ok = 1;
    for (size_t r = 0; r < rows && ok; r++) {
        src[r] = -1;
        for (size_t j = 0; j < cols && ok; j++) {
            double v = A[r * cols + j];
            if (v == 0.0) continue;
            if (v != 1.0 || src[r] >= 0 || used[j]) ok = 0;
            else src[r] = (long)j, used[j] = 1;
        }
    }
    free(used);
    return ok;
}

/* Compose M [N][n] with the pending matrix W [n][m] exactly when one of
 * them is a selection (zero Pad, Transpose): the product then copies
 * entries and adds nothing. Returns the new W [N][m] and bias, or NULL
 * (nothing composed; *oom set when allocation failed). */
static double *lg_ox_compose_selection(const lg_ox_b *B, const double *M, size_t N, const double *c, double **nb,
                                       int *oom)
{
    size_t n = (size_t)B->n, m = (size_t)B->m;
    *nb = NULL;
    *oom = 0;
    if (!B->W || B->d || N * m > LG_NET_MAX_PARAMS) return NULL;
    long *src = malloc((N > n ? N : n) * sizeof *src);
    double *W2 = calloc(N * m, sizeof *W2), *b2 = calloc(N, sizeof *b2);
    if (!src || !W2 || !b2) goto oom;
    int zero_b = 1;
    for (size_t i = 0; B->b && i < n; i++) zero_b &= B->b[i] == 0.0;
    if (lg_ox_selection(M, N, n, src)) { /* rows of W gathered: W2[i] = W[src(i)], b2[i] = b[src(i)] + c[i] */
        for (size_t i = 0; i < N; i++) {
            double bi = src[i] >= 0 && B->b ? B->b[src[i]] : 0.0, ci = c ? c[i] : 0.0;
            if (!lg_ox_add_exact(bi, ci, &b2[i])) goto none;
            if (src[i] >= 0) memcpy(W2 + i * m, B->W + (size_t)src[i] * m, m * sizeof *W2);
        }
    } else if (zero_b && lg_ox_selection(B->W, n, m, src)) { /* W's row k is the unit row e_src(k): columns scattered */
        for (size_t i = 0; i < N; i++) {
            for (size_t k = 0; k < n; k++)
                if (src[k] >= 0) W2[i * m + (size_t)src[k]] = M[i * n + k];
            b2[i] = c ? c[i] : 0.0;
        }
    } else {
        goto none;
    }
    free(src);
    *nb = b2;
    return W2;
oom:
    *oom = 1;
none:
    free(src);
    free(W2);
    free(b2);
    return NULL;
}

/* z ← M·z + c; M [n2][n] is taken over (freed here), c [n2] or NULL. */
/* M [N][n] composed with a pending index map (no bias): columns of M
 * scattered to the map's sources, M'[·][map[o]] = M[·][o] (each source read
 * once, so every entry is a copy: exact). Only when M' is at most twice
 * M's size; NULL otherwise (*oom set when allocation failed). */
static double *lg_ox_compose_map(const lg_ox_b *B, const double *M, size_t N, int *oom)
{
    size_t n = (size_t)B->n, m = (size_t)B->m;
    *oom = 0;
    if (B->b || m > 2 * n + 16 || N * m > LG_NET_MAX_PARAMS) return NULL;
    unsigned char *seen = calloc(m ? m : 1, 1);
    if (!seen) goto oom;
    for (size_t o = 0; o < n; o++)
        if (B->map[o] >= 0 && seen[B->map[o]]++) {
            free(seen);
            return NULL;
        }
    free(seen);
    double *W2 = calloc(N * m > 0 ? N * m : 1, sizeof *W2);
    if (!W2) goto oom;
    for (size_t i = 0; i < N; i++)
        for (size_t o = 0; o < n; o++)
            if (B->map[o] >= 0) W2[i * m + (size_t)B->map[o]] = M[i * n + o];
    return W2;
oom:
    *oom = 1;
    return NULL;
}

/* M [N][n] applied to a pending sum of index maps (a Concat): one dense term
 * per index term, M·P_t with columns scattered as lg_ox_compose_map (each
 * entry a copy: exact). Only without bias, when every map reads each
 * source at most once and the terms take at most about twice M's weights.
 * 1 when composed (M taken over), 0 when not, −1 out of memory. */
static int lg_ox_compose_sum(lg_ox_b *B, double *M, size_t N, const double *c)
{
    size_t n = (size_t)B->n, total = 0;
    if (!B->map || B->b) return 0;
    for (int t = 0; t < B->n_xt; t++)
        if (B->xt[t].kind != LG_LAYER_INDEX) return 0;
    int nt = 1 + B->n_xt;
    for (int t = 0; t < nt; t++) {
        const int *map = t == 0 ? B->map : B->xt[t - 1].map;
        size_t m = (size_t)(t == 0 ? B->m : B->xt[t - 1].n_in);
        unsigned char *seen = calloc(m ? m : 1, 1);
        if (!seen) return -1;
        int inj = 1;
        for (size_t o = 0; o < n && inj; o++)
            if (map[o] >= 0 && seen[map[o]]++) inj = 0;
        free(seen);
        if (!inj) return 0;
        total += N * m;
    }
    if (total > 2 * N * n + 64 || total > LG_NET_MAX_PARAMS) return 0;
    double **Wt = calloc((size_t)nt, sizeof *Wt);
    double *nb = c ? lg_ox_dup(c, N) : NULL;
    if (!Wt || (c && !nb)) {
        free(Wt);
        free(nb);
        return -1;
    }
    for (int t = 0; t < nt; t++) {
        const int *map = t == 0 ? B->map : B->xt[t - 1].map;
        size_t m = (size_t)(t == 0 ? B->m : B->xt[t - 1].n_in);
        if (!(Wt[t] = calloc(N * m > 0 ? N * m : 1, sizeof **Wt))) {
            for (int q = 0; q < t; q++) free(Wt[q]);
            free(Wt);
            free(nb);
            return -1;
        }
        for (size_t i = 0; i < N; i++)
            for (size_t o = 0; o < n; o++)
                if (map[o] >= 0) Wt[t][i * m + (size_t)map[o]] = M[i * n + o];
    }
    free(B->map);
    B->map = NULL;
    B->W = Wt[0];
    for (int t = 1; t < nt; t++) {
        free(B->xt[t - 1].map);
        B->xt[t - 1].map = NULL;
        B->xt[t - 1].kind = LG_LAYER_DENSE;
        B->xt[t - 1].W = Wt[t];
    }
    free(Wt);
    free(M);
    B->b = nb;
    B->n = (int)N;
    B->is_pad = 0;
    return 1;
}

lg_status lg_ox_b_linear(lg_ox_b *B, double *M, int n2, const double *c)
{
    lg_status st;
    if (B->n_xt) {
        int r = lg_ox_compose_sum(B, M, (size_t)n2, c);
        if (r < 0) {
            free(M);
            return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
        }
        if (r) return LG_OK;
    }
    if (B->n_xt && (st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) {
        free(M);
        return st;
    }
    if (B->map) {
        int oom;
        double *W2 = lg_ox_compose_map(B, M, (size_t)n2, &oom);
        if (oom) {
            free(M);
            return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
        }
        if (W2) {
            free(M);
            free(B->map);
            B->map = NULL;
            B->is_pad = 0;
            B->W = W2;
            B->b = NULL;
            if (c && !(B->b = lg_ox_dup(c, (size_t)n2))) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
            B->n = n2;
            return LG_OK;
        }
        if ((st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) {
            free(M);
            return st;
        }
    }
    if (B->K) {
        /* a pending conv composes with M only when M is a selection; otherwise it would be
         * closed as an identity layer after being written out: close it as a conv layer */
        long *src = malloc((size_t)n2 * sizeof *src);
        if (!src) {
            free(M);
            return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
        }
        int sel = lg_ox_selection(M, (size_t)n2, (size_t)B->n, src);
        if (!sel && B->tok && !B->b) { /* the dense kron composed when its block is a selection */
            long *s2 = malloc((size_t)B->conv.c_out * sizeof *s2);
            if (!s2) {
                free(src);
                free(M);
                return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
            }
            sel = lg_ox_selection(B->K, (size_t)B->conv.c_out, (size_t)B->conv.c_in, s2);
            free(s2);
        }
        free(src);
        if (!sel && (st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) {
            free(M);
            return st;
        }
    }
    if ((st = lg_ox_b_materialize(B)) != LG_OK) {
        free(M);
        return st;
    }
    size_t n = (size_t)B->n, m = (size_t)B->m, N = (size_t)n2;
    if (N * n > LG_NET_MAX_PARAMS) {
        free(M);
        return lg_fail(LG_ERR_FORMAT, "%s: composed layer %zu x %zu exceeds %zu parameters", B->file, N, n,
                       LG_NET_MAX_PARAMS);
    }
    /* fold a pending diagonal into M's columns only when every product is exact; a pending
     * matrix or bias is never multiplied into M: it is closed as an exact identity layer */
    int fold = !B->W && !B->b;
    if (fold && B->d) {
        double *M2 = malloc(N * n * sizeof *M2);
        if (!M2) goto oom;
        for (size_t i = 0; i < N && fold; i++)
            for (size_t j = 0; j < n && fold; j++) fold = lg_ox_mul_exact(M[i * n + j], B->d[j], &M2[i * n + j]);
        if (fold) {
            free(M);
            M = M2;
        } else {
            free(M2);
        }
    }
    if (!fold) {
        int oom;
        double *nb2, *W2 = lg_ox_compose_selection(B, M, N, c, &nb2, &oom);
        if (oom) goto oom;
        if (W2) {
            free(M);
            free(B->W);
            free(B->b);
            B->W = W2;
            B->b = nb2;
            B->n = n2;
            return LG_OK;
        }
    }
    if (!fold && (st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) {
        free(M);
        return st;
    }
    double *nb = NULL;
    if (c && !(nb = lg_ox_dup(c, N))) goto oom;
    free(B->d);
    B->d = NULL;
    free(B->W);
    B->W = M;
    free(B->b);
    B->b = nb;
    B->n = n2;
    (void)m;
    return LG_OK;
oom:
    free(M);
    return lg_fail(LG_ERR_NOMEM, "%s: out of memory composing a %zu x %zu layer", B->file, N, n);
}

/* 1 if v [n] holds only ones (NULL counts as ones). */
static int lg_ox_all_ones(const double *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        if (v[i] != 1.0) return 0;
    return 1;
}

/* Dense matrices of the identity or a diagonal a close may write (entries). */
#define LG_OX_DIAG_DENSE_MAX ((size_t)1 << 24)

/* Close the current affine map into a layer with activation act. A pending
 * diagonal constant per channel of an image becomes a 1x1 conv; another
 * diagonal, or the identity on the layer just closed, a dense diagonal
 * matrix where that is small (as a chain always had it); any other identity
 * an index map. */
lg_status lg_ox_b_close(lg_ox_b *B, lg_act act, double lambda)
{
    size_t n = (size_t)B->n, m = (size_t)B->m;
    if (B->n_layers >= LG_NET_MAX_LAYERS)
        return lg_fail(LG_ERR_FORMAT, "%s: more than %d layers", B->file, LG_NET_MAX_LAYERS);
    if (B->n_layers == B->cap_layers) {
        int cap = B->cap_layers ? 2 * B->cap_layers : 8;
        lg_ox_layer *nl = realloc(B->layers, (size_t)cap * sizeof *nl);
        if (!nl) goto oom;
        B->layers = nl;
        B->cap_layers = cap;
    }
    if (!B->W && !B->K && !B->map) {
        int ones = lg_ox_all_ones(B->d, n);
        const lg_ox_shape *s = &B->shape;
        int image = s->rank >= 3 && n == m;
        size_t C = image ? (size_t)s->d[s->rank - 3] : 0, hw = image && C ? n / C : 0;
        for (int a = 0; image && a + 3 < s->rank; a++) image = s->d[a] == 1;
        int per_channel = image && C * hw == n;
        for (size_t i = 0; per_channel && B->d && i < n; i++) per_channel = B->d[i] == B->d[(i / hw) * hw];
        /* a constant per channel of an image (a Clip's negation, a shift or scale after an
         * activation) is a 1x1 conv of C x C weights, not n x n; a plain identity that reads
         * another node stays an index map */
        int after = B->src == B->n_layers - 1 && !B->n_xt;
        int conv1 = per_channel && C * C <= LG_NET_MAX_PARAMS && (!ones || after);
        int dense = n * m <= LG_OX_DIAG_DENSE_MAX && (!ones || after);
        if (conv1 && (C * C < n * m || !dense)) {
            if (!(B->K = calloc(C * C, sizeof *B->K))) goto oom;
            for (size_t c = 0; c < C; c++) B->K[c * C + c] = B->d ? B->d[c * hw] : 1.0;
            B->conv = (lg_conv){(int)C, (int)(hw / (size_t)s->d[s->rank - 1]), (int)s->d[s->rank - 1], (int)C,
                                (int)(hw / (size_t)s->d[s->rank - 1]), (int)s->d[s->rank - 1], 1, 1, 1, 1, 0, 0};
        } else if (dense) {
            if (!(B->W = calloc(n * m, sizeof *B->W))) goto oom;
            for (size_t i = 0; i < n; i++) B->W[i * m + i] = B->d ? B->d[i] : 1.0;
        } else if (ones) {
            if (!(B->map = malloc(n * sizeof *B->map))) goto oom;
            for (size_t i = 0; i < n; i++) B->map[i] = (int)i;
        } else {
            return lg_fail(LG_ERR_UNSUPPORTED,
                           "%s: a per-element scale of %zu values would be a dense %zu x %zu layer (too large)",
                           B->file, n, n, n);
        }
        free(B->d);
        B->d = NULL;
    }
    /* stored weights: the kernel of a pending conv, none for an index map, else the dense matrix */
    size_t nw = B->K ? (size_t)B->conv.c_out * (size_t)B->conv.c_in * (size_t)B->conv.kh * (size_t)B->conv.kw
                     : B->map ? 0 : n * m;
    for (int t = 0; t < B->n_xt; t++) {
        const lg_ox_term *a = &B->xt[t];
        nw += a->kind == LG_LAYER_CONV2D || a->kind == LG_LAYER_TOKMAP
                  ? (size_t)a->conv.c_out * (size_t)a->conv.c_in * (size_t)a->conv.kh * (size_t)a->conv.kw
                  : a->kind == LG_LAYER_DENSE ? n * (size_t)a->n_in : 0;
    }
    if (nw > LG_NET_MAX_PARAMS || B->n_params + nw + n > LG_NET_MAX_PARAMS)
        return lg_fail(LG_ERR_FORMAT, "%s: more than %zu parameters", B->file, LG_NET_MAX_PARAMS);
    if (!B->b && !(B->b = calloc(n, sizeof *B->b))) goto oom;
    lg_ox_layer *L = &B->layers[B->n_layers++];
    L->tkind = (lg_layer_kind)0;
    memset(&L->op, 0, sizeof L->op);
    L->n_in = B->m;
    L->n_out = B->n;
    L->W = B->K ? B->K : B->W;
    L->conv = B->conv; /* zero unless a conv or a per-token map */
    L->tok = B->tok;
    L->map = B->map;
    L->is_max = 0;
    L->src = B->src;
    L->n_xt = B->n_xt;
    L->xt = B->xt;
    L->b = B->b;
    L->act = act;
    L->lambda = lambda;
    B->n_params += nw + n;
    free(B->d);
    B->W = B->d = B->b = B->K = NULL;
    B->map = NULL;
    B->xt = NULL;
    B->n_xt = 0;
    B->is_pad = 0;
    B->tok = 0;
    B->bn_rounded = 0;
    memset(&B->conv, 0, sizeof B->conv);
    B->m = B->n;
    B->src = B->n_layers - 1;
    return LG_OK;
oom:
    return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
}

lg_status lg_ox_b_max(lg_ox_b *B, const lg_conv *c)
{
    if (B->n_layers >= LG_NET_MAX_LAYERS)
        return lg_fail(LG_ERR_FORMAT, "%s: more than %d layers", B->file, LG_NET_MAX_LAYERS);
    size_t n = (size_t)c->c_out * (size_t)c->h_out * (size_t)c->w_out;
    if (B->n_params + n > LG_NET_MAX_PARAMS)
        return lg_fail(LG_ERR_FORMAT, "%s: more than %zu parameters", B->file, LG_NET_MAX_PARAMS);
    if (B->n_layers == B->cap_layers) {
        int cap = B->cap_layers ? 2 * B->cap_layers : 8;
        lg_ox_layer *nl = realloc(B->layers, (size_t)cap * sizeof *nl);
        if (!nl) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
        B->layers = nl;
        B->cap_layers = cap;
    }
    double *b = calloc(n ? n : 1, sizeof *b);
    if (!b) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
    lg_ox_layer *L = &B->layers[B->n_layers++];
    memset(L, 0, sizeof *L);
    L->n_in = B->n;
    L->n_out = (int)n;
    L->conv = *c;
    L->is_max = 1;
    L->src = B->src;
    L->b = b;
    L->act = LG_ACT_IDENTITY;
    L->lambda = 1.0;
    B->n_params += n;
    B->n = B->m = (int)n;
    B->src = B->n_layers - 1;
    return LG_OK;
}

lg_status lg_ox_b_tnode(lg_ox_b *B, lg_layer_kind kind, const lg_nodeop *op, int src, int n_in, int n_out, double *W,
                        int *map)
{
    lg_status st = LG_OK;
    const lg_linear spec = {.kind = kind, .n_in = n_in, .n_out = n_out, .op = *op};
    size_t n = (size_t)n_out, nw = lg_linear_n_weights(&spec); /* its entry's (core/op.h): layernorm's γ, β */
    if (B->n_layers >= LG_NET_MAX_LAYERS) {
        st = lg_fail(LG_ERR_FORMAT, "%s: more than %d layers", B->file, LG_NET_MAX_LAYERS);
        goto fail;
    }
    if (B->n_params + n + nw > LG_NET_MAX_PARAMS) {
        st = lg_fail(LG_ERR_FORMAT, "%s: more than %zu parameters", B->file, LG_NET_MAX_PARAMS);
        goto fail;
    }
    if (B->n_layers == B->cap_layers) {
        int cap = B->cap_layers ? 2 * B->cap_layers : 8;
        lg_ox_layer *nl = realloc(B->layers, (size_t)cap * sizeof *nl);
        if (!nl) goto oom;
        B->layers = nl;
        B->cap_layers = cap;
    }
    double *b = calloc(n ? n : 1, sizeof *b);
    if (!b) goto oom;
    lg_ox_pm_free(&B->pm);
    lg_ox_layer *L = &B->layers[B->n_layers++];
    memset(L, 0, sizeof *L);
    L->n_in = n_in;
    L->n_out = n_out;
    L->tkind = kind;
    L->op = *op;
    L->W = W;
    L->map = map;
    L->src = src;
    L->b = b;
    L->act = LG_ACT_IDENTITY;
    L->lambda = 1.0;
    B->n_params += n + nw;
    B->n = B->m = n_out;
    B->src = B->n_layers - 1;
    return LG_OK;
oom:
    st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
fail:
    free(W);
    free(map);
    return st;
}

lg_status lg_ox_b_index(lg_ox_b *B, int *op, int n2)
{
    lg_status st = LG_OK;
    size_t n = (size_t)B->n, N = (size_t)n2;
    /* a per-token map's rows are gathered as the dense matrix's were; a conv, a diagonal or
     * further terms are closed first (never written out) */
    if (B->tok && !B->n_xt && (st = lg_ox_b_materialize(B)) != LG_OK) goto done;
    if ((B->K || B->n_xt || (B->d && !lg_ox_all_ones(B->d, n))) && (st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK)
        goto done;
    free(B->d);
    B->d = NULL;
    double *b2 = NULL;
    if (B->b) {
        if (!(b2 = calloc(N ? N : 1, sizeof *b2))) goto oom;
        for (size_t o = 0; o < N; o++) b2[o] = op[o] >= 0 ? B->b[op[o]] : 0.0;
    }
    if (B->W) { /* rows of W gathered (a zero row for a padding entry): copies only */
        size_t m = (size_t)B->m;
        if (N * m > LG_NET_MAX_PARAMS) {
            free(b2);
            st = lg_fail(LG_ERR_FORMAT, "%s: composed layer %zu x %zu exceeds %zu parameters", B->file, N, m,
                         LG_NET_MAX_PARAMS);
            goto done;
        }
        double *W2 = calloc(N * m > 0 ? N * m : 1, sizeof *W2);
        if (!W2) {
            free(b2);
            goto oom;
        }
        for (size_t o = 0; o < N; o++)
            if (op[o] >= 0) memcpy(W2 + o * m, B->W + (size_t)op[o] * m, m * sizeof *W2);
        free(B->W);
        B->W = W2;
        free(op);
        op = NULL;
    } else if (B->map) { /* map2[o] = map[op[o]] */
        for (size_t o = 0; o < N; o++) op[o] = op[o] >= 0 ? B->map[op[o]] : -1;
        free(B->map);
        B->map = op;
        op = NULL;
    } else {
        B->map = op;
        op = NULL;
    }
    free(B->b);
    B->b = b2;
    B->n = n2;
    B->is_pad = 0;
    goto done;
oom:
    st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
done:
    free(op);
    return st;
}

lg_status lg_ox_b_take_terms(lg_ox_b *B, lg_ox_term **terms, int *n_terms, double **bias)
{
    lg_status st;
    size_t n = (size_t)B->n;
    *terms = NULL;
    *n_terms = 0;
    *bias = NULL;
    if (B->d && !lg_ox_all_ones(B->d, n) && (st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) return st;
    free(B->d);
    B->d = NULL;
    lg_ox_term *t = calloc((size_t)B->n_xt + 1, sizeof *t);
    if (!t) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
    t[0] = (lg_ox_term){LG_LAYER_DENSE, B->src, B->m, NULL, NULL, {0}};
    if (B->K) {
        t[0].kind = B->tok ? LG_LAYER_TOKMAP : LG_LAYER_CONV2D;
        t[0].W = B->K;
        t[0].conv = B->conv;
    } else if (B->W) {
        t[0].W = B->W;
    } else {
        t[0].kind = LG_LAYER_INDEX;
        if (B->map) {
            t[0].map = B->map;
        } else {
            if (!(t[0].map = malloc(n * sizeof *t[0].map))) {
                free(t);
                return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
            }
            for (size_t i = 0; i < n; i++) t[0].map[i] = (int)i;
        }
    }
    for (int k = 0; k < B->n_xt; k++) t[k + 1] = B->xt[k];
    *n_terms = B->n_xt + 1;
    *terms = t;
    *bias = B->b;
    free(B->xt);
    B->W = B->K = B->b = NULL;
    B->map = NULL;
    B->xt = NULL;
    B->n_xt = 0;
    B->is_pad = 0;
    B->tok = 0;
    memset(&B->conv, 0, sizeof B->conv);
    return LG_OK;
}

/* Apply a pending scalar factor kmul/kdiv of a LIN value to the base map. */
lg_status lg_ox_b_fold(lg_ox_b *B, lg_ox_val *v)
{
    lg_status st = LG_OK;
    if (v->kmul == 1.0 && v->kdiv == 1.0) return LG_OK;
    double *c = malloc((size_t)B->n * sizeof *c);
    if (!c) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
    if (v->kmul != 1.0) {
        for (int i = 0; i < B->n; i++) c[i] = v->kmul;
        st = lg_ox_b_scale(B, c, 0);
    }
    if (st == LG_OK && v->kdiv != 1.0) {
        for (int i = 0; i < B->n; i++) c[i] = v->kdiv;
        st = lg_ox_b_scale(B, c, 1);
    }
    free(c);
    v->kmul = v->kdiv = 1.0;
    return st;
}


/* z ← a·z + c elementwise, rounded to nearest (the BatchNormalization fold). */
lg_status lg_ox_b_affine_rounded(lg_ox_b *B, const double *a, const double *c)
{
    if (B->map || B->n_xt) { /* an index map or a sum does not scale: closed first */
        lg_status st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0);
        if (st != LG_OK) return st;
    }
    B->bn_rounded = 1;
    size_t n = (size_t)B->n, m = (size_t)B->m;
    if (B->tok) { /* scaled as the dense matrix was */
        lg_status st = lg_ox_b_materialize(B);
        if (st != LG_OK) return st;
    }
    if (B->K) {
        /* a pending conv keeps its structure when a is constant over each output channel
         * (BatchNormalization's is): kernel rows of channel co times a, the same roundings
         * as the dense rows, whose other entries are 0 */
        const lg_conv *cv = &B->conv;
        size_t hw = (size_t)cv->h_out * (size_t)cv->w_out, kk = (size_t)cv->c_in * (size_t)cv->kh * (size_t)cv->kw;
        int per_channel = 1;
        for (size_t i = 0; i < n && per_channel; i++) per_channel = a[i] == a[(i / hw) * hw];
        if (!per_channel) {
            lg_status st = lg_ox_b_materialize(B);
            if (st != LG_OK) return st;
        } else {
            for (int co = 0; co < cv->c_out; co++)
                for (size_t j = 0; j < kk; j++) B->K[(size_t)co * kk + j] *= a[(size_t)co * hw];
            if (!B->b && !(B->b = calloc(n, sizeof *B->b))) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
            for (size_t i = 0; i < n; i++) B->b[i] = B->b[i] * a[i] + c[i];
            return LG_OK;
        }
    }
    if (!B->b && !(B->b = calloc(n, sizeof *B->b))) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
    if (!B->W && !B->d) {
        if (!(B->d = malloc(n * sizeof *B->d))) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
        for (size_t i = 0; i < n; i++) B->d[i] = 1.0;
    }
    for (size_t i = 0; i < n; i++) {
        if (B->W)
            for (size_t j = 0; j < m; j++) B->W[i * m + j] *= a[i];
        else
            B->d[i] *= a[i];
        B->b[i] = B->b[i] * a[i] + c[i];
    }
    return LG_OK;
}

/* tanh(z) = 2·σ(2z) − 1 in the reals, so a Tanh layer is a sigmoid layer:
 * the map is scaled by 2 (exact in binary; where a product is not a double
 * lg_ox_b_scale keeps an identity layer, as for any scale), closed with
 * LG_ACT_SIGMOID, and 2·a − 1 stays pending for the next linear op (folded
 * only where exact, like every affine op). */
lg_status lg_ox_b_tanh(lg_ox_b *B)
{
    size_t n = (size_t)B->n;
    double *c = calloc(n ? n : 1, sizeof *c);
    if (!c) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
    for (size_t i = 0; i < n; i++) c[i] = 2.0;
    lg_status st = lg_ox_b_scale(B, c, 0);
    if (st == LG_OK) st = lg_ox_b_close(B, LG_ACT_SIGMOID, 1.0);
    if (st == LG_OK) st = lg_ox_b_scale(B, c, 0);
    for (size_t i = 0; i < n; i++) c[i] = 1.0;
    if (st == LG_OK) st = lg_ox_b_shift(B, c, -1.0);
    free(c);
    return st;
}

/* Fill c [n] with v; shift or scale the pending map by it. */
static lg_status lg_ox_b_shift_all(lg_ox_b *B, double *c, double v)
{
    for (int i = 0; i < B->n; i++) c[i] = v;
    return lg_ox_b_shift(B, c, 1.0);
}

static lg_status lg_ox_b_negate(lg_ox_b *B, double *c)
{
    for (int i = 0; i < B->n; i++) c[i] = -1.0;
    return lg_ox_b_scale(B, c, 0);
}

/* clip(z, lo, hi) = hi − relu((hi − lo) − relu(z − lo)) in the reals for lo ≤ hi; with one bound
 * relu(z − lo) + lo or hi − relu(hi − z). Each step is a diagonal map (negation, a shift by a
 * constant) folded where exact like every affine op, and each relu closes a layer of the same
 * width; hi − lo must be a double. */
lg_status lg_ox_b_clip(lg_ox_b *B, int has_lo, double lo, int has_hi, double hi)
{
    double span = 0;
    if (has_lo && has_hi && !lg_ox_add_exact(hi, -lo, &span))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: Clip: max − min = %.17g − %.17g is not a double (lgelu verifies "
                       "only the file's exact function)", B->file, hi, lo);
    /* right after a ReLU layer (PyTorch writes ReLU6 as Relu then Clip(0, 6)) the value is ≥ 0:
     * a lower bound ≤ 0 changes nothing */
    if (has_lo && lo <= 0 && lg_ox_b_identity(B) && B->n_layers > 0 && B->src == B->n_layers - 1 &&
        B->layers[B->src].act == LG_ACT_RELU)
        has_lo = 0;
    double *c = malloc((size_t)(B->n ? B->n : 1) * sizeof *c);
    if (!c) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
    lg_status st = LG_OK;
    if (has_lo) { /* h = relu(z − lo) */
        if (lo != 0) st = lg_ox_b_shift_all(B, c, -lo);
        if (st == LG_OK) st = lg_ox_b_close(B, LG_ACT_RELU, 1.0);
        if (st == LG_OK && !has_hi && lo != 0) st = lg_ox_b_shift_all(B, c, lo);
    }
    if (has_hi && st == LG_OK) { /* hi − relu(span − h), or hi − relu(hi − z) without lo */
        st = lg_ox_b_negate(B, c);
        if (st == LG_OK) st = lg_ox_b_shift_all(B, c, has_lo ? span : hi);
        if (st == LG_OK) st = lg_ox_b_close(B, LG_ACT_RELU, 1.0);
        if (st == LG_OK) st = lg_ox_b_negate(B, c);
        if (st == LG_OK) st = lg_ox_b_shift_all(B, c, hi);
    }
    free(c);
    /* on an image the trailing −h + hi (or h + lo) closes now, as a 1x1 conv: after a
     * Flatten it would become an n x n diagonal */
    const lg_ox_shape *sh = &B->shape;
    int image = sh->rank >= 3 && sh->d[sh->rank - 3] * sh->d[sh->rank - 2] * sh->d[sh->rank - 1] == B->n;
    for (int a = 0; image && a + 3 < sh->rank; a++) image = sh->d[a] == 1;
    if (st == LG_OK && image && !lg_ox_b_identity(B)) st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0);
    return st;
}
