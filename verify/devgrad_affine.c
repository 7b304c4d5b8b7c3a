/* devgrad_affine.c — the interval-gradient deviation bound with the adjoint as an
 * affine form (devgrad.h, lg_devgrad_bound_affine).
 *
 * Per output, node j's adjoint over the region is a_j = m + M·ε + diag(f)·ε' + r·η:
 * ε ∈ [−1, 1]^K the shared noise symbols (K slots), ε' one fresh symbol per entry (the
 * Jacobian uncertainty the node's consumers added, f ≥ 0), η ∈ [−1, 1]^n per entry. At a
 * point p of the region the exact adjoint is one such value with one ε for every node.
 * Backward through node k with Jacobian J(p) = J_c + Δ:
 *     J(p)ᵀ·(m + Σ_s ε_s·M_s + r∘η) = J(p)ᵀm + Σ_s ε_s·J(p)ᵀM_s + J(p)ᵀ(r∘η),
 * and the kind's entry (or Aᵀ for a term sum) encloses each J(p)ᵀv in c(v) ± ρ(v) over the
 * region (point vectors v; its rounding included). So the source's adjoint is
 *     c(m) + Σ_s ε_s·c(M_s) + [ρ(m) + Σ_s ρ(M_s) + |J(p)ᵀ(r∘η)|]·ε'
 * with one fresh ε' per source entry: a single value of p in [−1, 1] (consumers of one
 * source add theirs into the same f). The symbolic part keeps its signs through every
 * later node; only the order reduction (at most K symbols, the smallest folded into r)
 * and the relu's [0, 1] slope go to the radius.
 *
 * At node k the fresh symbols of the node become slots (order reduction: the K largest
 * of the live slots and the node's fresh entries stay); a slot dropped is folded into the
 * radius of every live node, and its coefficient in the result is closed. At a substituted
 * layer, Σ_i g_i·δ_i with g_i = −a_i: per slot the interval C_s = Σ_i −M_is·δ_i (signs
 * kept), the centre Σ_i −m_i·δ_i, the radius Σ_i r_i·|δ_i|; the bound is
 *     Σ −m·δ ± (Σ_s max |C_s| + Σ r·|δ|)
 * in outward rounding. Every double operation that is claimed is rounded outward or its
 * error (|x|·u per sum, γ·|A|ᵀ|v| per term sum) added to the radius. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/deviation.h"
#include "core/traverse.h"
#include "verify/devgrad.h"
#include "verify/opstage.h"


typedef struct af_node {
    double *m, *r, *f, *M; /* M: [K][n] column-major by slot; NULL until first written */
    size_t n;
} af_node;

typedef struct af_ctx {
    const lg_net *relu;
    size_t K, nn; /* slots; nodes (layers + input) */
    af_node *nd;  /* [nn], index j + 1 */
    unsigned char *used; /* [K] */
    lg_dv *C;            /* [K]: the slot's coefficient in Σ g·δ */
    double closed;       /* Σ max|C| of slots dropped */
} af_ctx;

static int af_alloc(af_ctx *c, int j)
{
    af_node *a = &c->nd[j + 1];
    if (a->M) return 1;
    a->m = calloc(a->n * 3, sizeof *a->m);
    a->M = calloc(a->n * c->K, sizeof *a->M);
    if (!a->m || !a->M) {
        free(a->m), free(a->M);
        a->m = a->M = NULL;
        return 0;
    }
    a->r = a->m + a->n, a->f = a->r + a->n;
    return 1;
}

static void af_release(af_node *a)
{
    free(a->m), free(a->M);
    a->m = a->r = a->f = a->M = NULL;
}

/* max |x| over the interval; +∞ for a NaN end (fmax would drop it). */
static double af_cmag(lg_dv x) { return isnan(x.lo) || isnan(x.hi) ? INFINITY : fmax(fabs(x.lo), fabs(x.hi)); }

/* Drop slot s: |M_·s| into every live node's radius, its coefficient closed. */
static void af_drop(af_ctx *c, size_t s)
{
    for (size_t j = 0; j < c->nn; j++) {
        af_node *a = &c->nd[j];
        if (!a->M) continue;
        double *col = a->M + s * a->n;
        for (size_t i = 0; i < a->n; i++)
            if (col[i] != 0.0) a->r[i] = lg_up(a->r[i] + fabs(col[i])), col[i] = 0.0;
    }
    double x = af_cmag(c->C[s]);
    c->closed = isfinite(x) ? lg_up(c->closed + x) : INFINITY;
    c->used[s] = 0;
    c->C[s] = lg_dv_pt(0.0);
}

typedef struct af_cand {
    double score;
    long id; /* ≥ 0: slot; < 0: −1 − entry of the node's fresh symbols */
} af_cand;

static int af_cmp(const void *x, const void *y)
{
    double a = ((const af_cand *)x)->score, b = ((const af_cand *)y)->score;
    return a < b ? 1 : a > b ? -1 : 0;
}

/* Node k's fresh symbols into slots, keeping the K largest of the live slots and them. */
static int af_reduce(af_ctx *c, int k)
{
    af_node *a = &c->nd[k + 1];
    size_t nc = 0;
    af_cand *cd = malloc((c->K + a->n) * sizeof *cd);
    if (!cd) return 0;
    for (size_t s = 0; s < c->K; s++) {
        if (!c->used[s]) continue;
        double sc = 0.0;
        for (size_t j = 0; j < c->nn; j++) {
            const af_node *b = &c->nd[j];
            if (!b->M) continue;
            const double *col = b->M + s * b->n;
            for (size_t i = 0; i < b->n; i++) sc += fabs(col[i]);
        }
        if (sc == 0.0) { /* no live node carries it: its coefficient is final */
            af_drop(c, s);
            continue;
        }
        cd[nc++] = (af_cand){sc == sc ? sc : INFINITY, (long)s};
    }
    for (size_t i = 0; i < a->n; i++)
        if (!(a->f[i] == 0.0)) cd[nc++] = (af_cand){a->f[i] == a->f[i] ? a->f[i] : INFINITY, -1 - (long)i};
    qsort(cd, nc, sizeof *cd, af_cmp);
    for (size_t q = c->K; q < nc; q++) /* dropped */
        if (cd[q].id >= 0) af_drop(c, (size_t)cd[q].id);
        else {
            size_t i = (size_t)(-1 - cd[q].id);
            a->r[i] = lg_up(a->r[i] + a->f[i]);
        }
    size_t s = 0;
    for (size_t q = 0; q < nc && q < c->K; q++) {
        if (cd[q].id >= 0) continue;
        while (c->used[s]) s++;
        size_t i = (size_t)(-1 - cd[q].id);
        c->used[s] = 1;
        c->C[s] = lg_dv_pt(0.0);
        a->M[s * a->n + i] = a->f[i];
    }
    for (size_t i = 0; i < a->n; i++) a->f[i] = 0.0;
    free(cd);
    return 1;
}

/* dst += src (centre), the sum's rounding into err. */
static void af_add(double *dst, const double *src, size_t n, double *err)
{
    for (size_t i = 0; i < n; i++) {
        if (src[i] == 0.0) continue;
        double v = dst[i] + src[i];
        err[i] = lg_up(err[i] + lg_up(fabs(v) * DBL_EPSILON));
        dst[i] = v;
    }
}

static void af_addr(double *dst, const double *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (src[i] != 0.0) dst[i] = lg_up(dst[i] + src[i]);
}

/* *C += Σ_i −x_i·[dlo_i, dhi_i] for a point column x: the ends' sums in round-to-nearest, whose
 * error is at most γ_{n+1}·Σ|x_i|·max(|dlo_i|, |dhi_i|) (Higham, Lemma 3.1; the magnitude's own
 * rounding and each product's underflow, below 2^-1074, covered by the factor 2 and the n·2^-1073). */
static void af_coef(lg_dv *C, const double *x, const double *dlo, const double *dhi, size_t n)
{
    double lo = 0.0, hi = 0.0, mag = 0.0;
    size_t nz = 0;
    for (size_t i = 0; i < n; i++) {
        if (x[i] == 0.0) continue;
        double p = -x[i] * dlo[i], q = -x[i] * dhi[i];
        lo += p < q ? p : q, hi += p < q ? q : p;
        mag += fabs(x[i]) * fmax(fabs(dlo[i]), fabs(dhi[i]));
        nz++;
    }
    if (!nz) return;
    double err = lg_up(lg_up(2.0 * lg_dev_gamma((double)nz + 1.0) * mag) + 2.0 * (double)nz * DBL_TRUE_MIN);
    if (isnan(lo) || isnan(hi) || isnan(err)) *C = (lg_dv){NAN, NAN};
    else *C = lg_dv_add(*C, (lg_dv){lg_dn(lo - err), lg_up(hi + err)});
}

static int af_nonzero(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] != 0.0) return 1;
    return 0;
}

lg_status lg_devgrad_bound_affine(const lg_net *relu, const lg_net *ref, const lg_devgrad_region *R, size_t K,
                                  const lg_runctx *run, double *dlo, double *dhi)
{
    int nl = relu->n_layers, n_out = relu->layers[nl - 1].n_out;
    lg_status cs = lg_devgrad_check_net(relu);
    if (cs != LG_OK) return cs;
    if (K < 1) K = 1;
    int kfirst = nl;
    for (int k = 0; k < nl; k++)
        if (ref->layers[k].act != relu->layers[k].act) {
            kfirst = k;
            break;
        }
    size_t N, w, gmax;
    lg_devgrad_sizes(relu, &N, &w, &gmax);
    af_ctx c = {relu, K, (size_t)nl + 1, NULL, NULL, NULL, 0.0};
    size_t *off = malloc((size_t)(nl + 1) * sizeof *off);
    double *buf = malloc((4 * N + 6 * w) * sizeof *buf);
    unsigned char *seen = malloc((size_t)nl + 1);
    lg_dv *work = malloc(LG_DEVGRAD_VJP_WORK(gmax) * sizeof *work);
    c.nd = calloc(c.nn, sizeof *c.nd);
    c.used = calloc(K, 1);
    c.C = calloc(K, sizeof *c.C);
    lg_status st = LG_OK;
    if (!off || !buf || !seen || !work || !c.nd || !c.used || !c.C) {
        st = lg_fail(LG_ERR_NOMEM, "out of memory for the interval-gradient deviation");
        goto done;
    }
    for (int j = -1; j < nl; j++)
        off[j + 1] = lg_net_node_offset(relu, j), c.nd[j + 1].n = (size_t)lg_net_node_width(relu, j);
    double *alo = buf, *ahi = buf + N, *sm = buf + 2 * N, *sr = buf + 3 * N;
    double *tmp = buf + 4 * N, *vz = tmp + w, *ta = vz + w, *tar = ta + w, *tb = tar + w, *tbr = tb + w;
    memset(vz, 0, w * sizeof *vz);
    lg_devgrad_region_post(relu, ref, R, off, alo, ahi);
    lg_node_buf bm = {relu, sm}, br = {relu, sr};
    for (int o = 0; o < n_out; o++) {
        if ((st = lg_runctx_check(run, "devgrad")) != LG_OK) goto done;
        for (size_t j = 0; j < c.nn; j++) af_release(&c.nd[j]);
        memset(c.used, 0, K);
        for (size_t s = 0; s < K; s++) c.C[s] = lg_dv_pt(0.0);
        c.closed = 0.0;
        if (kfirst >= nl) {
            dlo[o] = dhi[o] = 0.0;
            continue;
        }
        if (!af_alloc(&c, nl - 1)) goto nomem;
        c.nd[nl].m[o] = 1.0;
        lg_dv acc = lg_dv_pt(0.0);
        double accr = 0.0;
        for (int k = nl - 1; k >= kfirst; k--) {
            const lg_layer *L = &relu->layers[k];
            af_node *a = &c.nd[k + 1];
            if (!a->M) continue;
            size_t n = a->n;
            if (!af_reduce(&c, k)) goto nomem;
            if (ref->layers[k].act != L->act) { /* Σ g·δ, g = −a */
                for (size_t i = 0; i < n; i++) {
                    lg_dv d = {R->band_lo[k][i], R->band_hi[k][i]};
                    if (a->m[i] != 0.0) acc = lg_dv_add(acc, lg_dv_mul(lg_dv_pt(-a->m[i]), d));
                    if (a->r[i] != 0.0) accr = lg_up(accr + lg_up(a->r[i] * af_cmag(d)));
                }
                for (size_t s = 0; s < K; s++)
                    if (c.used[s]) af_coef(&c.C[s], a->M + s * n, R->band_lo[k], R->band_hi[k], n);
            }
            if (k == kfirst) break;
            if (L->act == LG_ACT_RELU) { /* slope 1, 0 or s ∈ [0, 1]: 1/2 + (s − 1/2) */
                int fresh = 0;
                for (size_t i = 0; i < n; i++) {
                    if (R->lo[k][i] >= 0.0) continue;
                    int dead = R->hi[k][i] <= 0.0;
                    double sa = fabs(a->m[i]);
                    for (size_t s = 0; s < K; s++) {
                        double *x = &a->M[s * n + i];
                        sa = lg_up(sa + fabs(*x));
                        *x = dead ? 0.0 : 0.5 * *x;
                    }
                    a->m[i] = dead ? 0.0 : 0.5 * a->m[i];
                    /* (s − 1/2)·(m + M·ε): one value in ±sa/2 at p, a fresh symbol; s·r∘η stays
                     * within r∘η (+ the halving's underflow, below 2^-1074 per term) */
                    a->f[i] = dead ? 0.0 : lg_up(0.5 * sa);
                    a->r[i] = dead ? 0.0 : lg_up(a->r[i] + (double)(K + 1) * DBL_TRUE_MIN);
                    fresh |= !dead;
                }
                if (fresh && !af_reduce(&c, k)) goto nomem;
            }
            const lg_vopdef *vop = lg_layer_vop(L);
            if (vop) {
                int sa = lg_layer_src(L, 0), sb = lg_layer_n_src(L) > 1 ? lg_layer_src(L, 1) : sa;
                int ua = sa >= kfirst, ub = sb >= kfirst && lg_layer_n_src(L) > 1;
                if ((ua && !af_alloc(&c, sa)) || (ub && !af_alloc(&c, sb))) goto nomem;
                af_node *A = &c.nd[sa + 1], *B = &c.nd[sb + 1];
                size_t na = A->n, nb = B->n;
                lg_devgrad_src S = {alo + off[sa + 1], ahi + off[sa + 1], alo + off[sb + 1], ahi + off[sb + 1],
                                    alo + off[k + 1],  ahi + off[k + 1],  NULL, NULL, ta, tar, tb, tbr};
                if (R->clo && R->chi && R->clo[k] && R->chi[k]) S.clo = R->clo[k], S.chi = R->chi[k];
                /* column v (or the radius when v is NULL): c(v) into dst's centre, ρ(v) into f */
                for (long s = -2; s < (long)K; s++) {
                    const double *v = s == -2 ? a->m : s == -1 ? vz : a->M + (size_t)s * n;
                    const double *vr = s == -1 ? a->r : vz;
                    if (s >= 0 && !c.used[s]) continue;
                    if (!af_nonzero(v, n) && !af_nonzero(vr, n)) continue;
                    memset(ta, 0, na * sizeof *ta), memset(tar, 0, na * sizeof *tar);
                    memset(tb, 0, nb * sizeof *tb), memset(tbr, 0, nb * sizeof *tbr);
                    vop->dev_vjp(L, &S, v, vr, work);
                    for (int t = 0; t < 2; t++) {
                        if (!(t == 0 ? ua : ub)) continue;
                        af_node *D = t == 0 ? A : B;
                        double *cm = t == 0 ? ta : tb, *cr = t == 0 ? tar : tbr;
                        double *dst = s >= 0 ? D->M + (size_t)s * D->n : D->m;
                        af_add(dst, cm, D->n, D->r);
                        af_addr(D->f, cr, D->n);
                    }
                }
                af_release(a);
                continue;
            }
            /* term sum: c(v) = Aᵀv, ρ(v) = γ·|A|ᵀ|v| (with the merges' rounding); the radius
             * through |A|ᵀ into the fresh symbols */
            double gam = lg_dev_gamma((double)L->n_out * lg_layer_n_lin(L));
            double grow = lg_up(lg_up(1.0 + gam) * lg_up(1.0 + gam));
            int ns = lg_layer_n_src(L);
            for (int t = 0; t < ns; t++) {
                int s = lg_layer_src(L, t);
                if (s >= kfirst && !af_alloc(&c, s)) goto nomem;
            }
            double *sa = ta; /* |m| + Σ|M| per entry */
            for (size_t i = 0; i < n; i++) sa[i] = fabs(a->m[i]);
            for (size_t s = 0; s < K; s++)
                if (c.used[s])
                    for (size_t i = 0; i < n; i++) sa[i] = lg_up(sa[i] + fabs(a->M[s * n + i]));
            for (size_t i = 0; i < n; i++) tar[i] = lg_up(lg_up(a->r[i] + lg_up(gam * sa[i])) * grow);
            for (long s = -2; s < (long)K; s++) {
                const double *v = s == -2 ? a->m : s == -1 ? tar : a->M + (size_t)s * n;
                if (s >= 0 && !c.used[s]) continue;
                if (!af_nonzero(v, n)) continue;
                memset(seen, 0, (size_t)nl + 1);
                lg_layer_pre_t(L, v, s == -1, lg_node_buf_slot, s == -1 ? (void *)&br : (void *)&bm, seen, tmp);
                for (int t = 0; t < ns; t++) {
                    int q = lg_layer_src(L, t);
                    if (!seen[q + 1]) continue;
                    seen[q + 1] = 0;
                    if (q < kfirst) continue;
                    af_node *D = &c.nd[q + 1];
                    if (s == -1) af_addr(D->f, sr + off[q + 1], D->n);
                    else {
                        double *dst = s >= 0 ? D->M + (size_t)s * D->n : D->m;
                        af_add(dst, sm + off[q + 1], D->n, D->r);
                    }
                }
            }
            af_release(a);
        }
        /* the slots' coefficients: Σ_s max|C_s| */
        double sym = c.closed;
        for (size_t s = 0; s < K; s++)
            if (c.used[s] || c.C[s].lo != 0.0 || c.C[s].hi != 0.0) sym = lg_up(sym + af_cmag(c.C[s]));
        double rad = lg_up(sym + accr);
        if (isnan(rad)) rad = INFINITY;
        double lo = lg_dn(acc.lo - rad), hi = lg_up(acc.hi + rad);
        if (isnan(lo) || isnan(hi) || !isfinite(rad)) lo = -INFINITY, hi = INFINITY;
        dlo[o] = lo, dhi[o] = hi;
    }
    goto done;
nomem:
    st = lg_fail(LG_ERR_NOMEM, "out of memory for the affine interval-gradient deviation");
done:
    if (c.nd)
        for (size_t j = 0; j < c.nn; j++) af_release(&c.nd[j]);
    free(off), free(buf), free(seen), free(work), free(c.nd), free(c.used), free(c.C);
    return st;
}
