/* devnet_joint.c — the differential (joint) deviation bound (devnet_joint.h). */
#include "verify/devnet_joint.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "anneal/deviation.h"
#include "core/act.h"
#include "core/linop.h"

#define EPS DBL_EPSILON

/* One node's forms: L, U [m][n] (row r < n_in: coefficient of x'_r; row n_in: the constant),
 * slack s[n] (the quantity lies in [L(x) − s, U(x) + s]), mag[n] ≥ Σ_r |L_r|·|x|_r + |L_c| + the
 * same of U (the size the next products' rounding scales with). */
typedef struct jform {
    double *L, *U, *s, *mag;
    int n;
} jform;

typedef struct jctx {
    int nin, m;          /* n_in, n_in + 1 */
    const double *xlo, *xhi;
    double *xm;          /* [n_in] max |x'_r| */
} jctx;

static double up(double x) { return x + EPS * fabs(x) + DBL_MIN; }
static double dn(double x) { return x - EPS * fabs(x) - DBL_MIN; }

static void jform_free(jform *f)
{
    free(f->L);
    memset(f, 0, sizeof *f);
}

static int jform_alloc(jform *f, int m, int n)
{
    size_t sz = (size_t)m * (size_t)n;
    f->L = calloc(2 * sz + 2 * (size_t)n, sizeof *f->L);
    if (!f->L) return -1;
    f->U = f->L + sz;
    f->s = f->U + sz;
    f->mag = f->s + n;
    f->n = n;
    return 0;
}

/* Lower (hi = 0) or upper (hi = 1) value of form F's neuron i over the box, the form's own
 * rounding included (slack not included). *mag (may be NULL) += Σ |F_r|·xm_r + |F_c|. */
static double jconc(const jctx *c, const double *F, int n, int i, int hi, double *mag)
{
    double v = F[(size_t)c->nin * n + i], a = fabs(v);
    for (int r = 0; r < c->nin; r++) {
        double f = F[(size_t)r * n + i];
        if (f == 0.0) continue;
        v += f * ((f > 0) == hi ? c->xhi[r] : c->xlo[r]);
        a += fabs(f) * c->xm[r];
    }
    a *= 1.0 + (c->nin + 4) * EPS;
    if (mag) *mag += a;
    double r = (c->nin + 4) * EPS * a + DBL_MIN;
    return hi ? v + r : v - r;
}

/* dst = a·src + cst (one form, neuron i; a ≥ 0), the rounding into *rs. */
static void jaffine(const jctx *c, double *dst, const double *src, int n, int i, double a, double cst, double *rs)
{
    double mg = fabs(cst);
    for (int r = 0; r < c->m; r++) {
        double f = src[(size_t)r * n + i];
        dst[(size_t)r * n + i] = a * f;
        mg += a * fabs(f) * (r < c->nin ? c->xm[r] : 1.0);
    }
    dst[(size_t)c->nin * n + i] += cst;
    *rs += 2.0 * EPS * mg * (1.0 + (c->nin + 4) * EPS);
}

/* dst = p − q (neuron i), rounding into *rs. */
static void jsub(const jctx *c, double *dst, const double *p, const double *q, int n, int i, double *rs)
{
    double mg = 0.0;
    for (int r = 0; r < c->m; r++) {
        size_t k = (size_t)r * n + i;
        dst[k] = p[k] - q[k];
        mg += (fabs(p[k]) + fabs(q[k])) * (r < c->nin ? c->xm[r] : 1.0);
    }
    *rs += 2.0 * EPS * mg * (1.0 + (c->nin + 4) * EPS);
}

static void jzero(const jctx *c, double *dst, int n, int i)
{
    for (int r = 0; r < c->m; r++) dst[(size_t)r * n + i] = 0.0;
}

static void jcopy(const jctx *c, double *dst, const double *src, int n, int i)
{
    for (int r = 0; r < c->m; r++) dst[(size_t)r * n + i] = src[(size_t)r * n + i];
}

static int jkind_ok(lg_layer_kind k)
{
    return k == LG_LAYER_DENSE || k == LG_LAYER_CONV2D || k == LG_LAYER_INDEX || k == LG_LAYER_TOKMAP;
}

/* out = Σ_t A_t·(forms of src_t) + bias, as lower/upper forms with slack: with S = L + U and
 * D = L − U, W⁺L + W⁻U = (W·S + |W|·D)/2 and W⁺U + W⁻L = (W·S − |W|·D)/2. A term whose
 * source has no forms (fs[src] NULL: the input's difference, 0) is skipped. The rounding: every
 * entry is a sum of at most K = Σ_t n_in + 2·terms products and additions of magnitude
 * |W|·(|L| + |U|), so (K + 8)·ε·|W|·mag bounds it over the box. */
static lg_status jlinear(const jctx *c, const lg_layer *Ly, jform *const *fs, const double *bias, jform *out,
                         double *S, double *D, double *P, double *Q, double *tv)
{
    const int n = Ly->n_out, m = c->m;
    const size_t sz = (size_t)m * n;
    memset(P, 0, sz * sizeof *P);
    memset(Q, 0, sz * sizeof *Q);
    memset(out->s, 0, (size_t)n * sizeof *out->s);
    double *ms = tv + n; /* |A|·mag accumulated, then the slack's */
    memset(ms, 0, (size_t)n * sizeof *ms);
    double K = 8.0;
    int any = 0;
    for (int t = 0; t < lg_layer_n_lin(Ly); t++) {
        const lg_linear *A = lg_layer_lin(Ly, t);
        const jform *f = fs[A->src + 1];
        if (!f) continue;
        K += A->n_in + 2.0;
        const size_t ssz = (size_t)m * A->n_in;
        for (size_t k = 0; k < ssz; k++) {
            S[k] = f->L[k] + f->U[k];
            D[k] = f->L[k] - f->U[k];
        }
        lg_linear_mul(A, m, S, P, 0, any);
        lg_linear_mul(A, m, D, Q, 1, any);
        lg_linear_mul(A, 1, f->mag, tv, 1, 0);
        for (int i = 0; i < n; i++) ms[i] += tv[i];
        lg_linear_mul(A, 1, f->s, tv, 1, 0);
        for (int i = 0; i < n; i++) out->s[i] += tv[i];
        any = 1;
    }
    for (size_t k = 0; k < sz; k++) {
        out->L[k] = 0.5 * (P[k] + Q[k]);
        out->U[k] = 0.5 * (P[k] - Q[k]);
    }
    for (int i = 0; i < n; i++) {
        double r = ms[i] * (1.0 + 1e-9) * (K * EPS);
        if (bias) {
            out->L[(size_t)c->nin * n + i] += bias[i];
            out->U[(size_t)c->nin * n + i] += bias[i];
            r += 2.0 * EPS * (fabs(bias[i]) + ms[i] * (1.0 + 1e-9));
        }
        out->s[i] = up(out->s[i] * (1.0 + 1e-9) + r);
    }
    return LG_OK;
}

/* Finish one node's forms: the magnitude (and the concrete bounds when lo/hi are given). */
static void jfinish(const jctx *c, jform *f, int i, double *lo, double *hi)
{
    double mg = 0.0;
    double a = jconc(c, f->L, f->n, i, 0, &mg), b = jconc(c, f->U, f->n, i, 1, &mg);
    f->mag[i] = mg;
    if (lo) *lo = dn(a - f->s[i]);
    if (hi) *hi = up(b + f->s[i]);
}

lg_status lg_devjoint_bound(lg_devnet *v, const lg_runctx *run, double *e)
{
    const lg_net *R = v->relu, *G = v->ref;
    const int NL = R->n_layers, no = lg_net_n_out(R), nin = R->n_in, N = v->n_noise;
    for (int j = 0; j < no; j++) e[j] = INFINITY;
    if (!v->valid || lg_net_first_tnode(R) >= 0) return LG_OK;
    for (int k = 0; k < NL; k++)
        for (int t = 0; t < lg_layer_n_lin(&R->layers[k]); t++)
            if (!jkind_ok(lg_layer_lin(&R->layers[k], t)->kind)) return LG_OK;
    double *const *rl = lg_devnet_pre_lo(v, 0), *const *rh = lg_devnet_pre_hi(v, 0);
    double *const *gl = lg_devnet_pre_lo(v, 1), *const *gh = lg_devnet_pre_hi(v, 1);
    /* the noise radii hold for the computed passes when every bound lies within its magnitude */
    for (int c = 0, at = 0; c < 2; c++)
        for (int k = 0; k < NL; k++)
            for (int i = 0; i < R->layers[k].n_out; i++, at++) {
                double a = c ? gl[k][i] : rl[k][i], b = c ? gh[k][i] : rh[k][i];
                if (!(fmax(fabs(a), fabs(b)) <= v->zmag[at]) || !(v->tau[at] <= DBL_MAX)) return LG_OK;
            }
    /* last reader of every node (input = 0, layer k = k + 1) */
    int *last = malloc((size_t)(NL + 1) * sizeof *last);
    if (!last) return lg_fail(LG_ERR_NOMEM, "devjoint: out of memory");
    for (int k = 0; k <= NL; k++) last[k] = k == NL ? NL : -1;
    for (int k = 0; k < NL; k++)
        for (int t = 0; t < lg_layer_n_lin(&R->layers[k]); t++) last[lg_layer_lin(&R->layers[k], t)->src + 1] = k;
    /* memory: the live forms at the widest point, plus the scratch */
    const int m = nin + 1, W = lg_net_max_width(R) > nin ? lg_net_max_width(R) : nin;
    size_t live = 2 * (size_t)nin, peak = 0; /* doubles per form row: 2 per input, 4 per neuron */
    for (int k = 0; k < NL; k++) {
        live += 4 * (size_t)R->layers[k].n_out;
        if (live > peak) peak = live;
        for (int q = 0; q <= k; q++)
            if (last[q] == k) live -= q == 0 ? 2 * (size_t)nin : 4 * (size_t)R->layers[q - 1].n_out;
    }
    if ((peak + 8 * (size_t)W) * (size_t)m > LG_DEVJOINT_MAX_DOUBLES) {
        free(last);
        return LG_OK; /* too large: no claim */
    }
    lg_status st = LG_OK;
    jform *H = calloc(2 * (size_t)(NL + 1), sizeof *H), *Dl = H + NL + 1; /* h forms, δ forms per node */
    jform **fh = calloc(2 * (size_t)(NL + 1), sizeof *fh), **fd = fh + NL + 1;
    const size_t wsz = (size_t)m * W;
    double *scr = malloc((4 * wsz + 2 * (size_t)W + (size_t)nin) * sizeof *scr);
    jform z = {0}, d = {0};
    if (!H || !fh || !scr || jform_alloc(&z, m, W) || jform_alloc(&d, m, W)) {
        st = lg_fail(LG_ERR_NOMEM, "devjoint: out of memory");
        goto done;
    }
    double *S = scr, *D = S + wsz, *P = D + wsz, *Q = P + wsz, *tv = Q + wsz;
    jctx c = {nin, m, NULL, NULL, NULL};
    {
        const lg_bounds *vb = v->exact ? &v->b0 : &v->b;
        c.xlo = vb->xlo;
        c.xhi = vb->xhi;
        double *xm = tv + 2 * (size_t)W;
        for (int r = 0; r < nin; r++) {
            if (!(c.xlo[r] >= -DBL_MAX && c.xhi[r] <= DBL_MAX)) goto done; /* no claim */
            xm[r] = fmax(fabs(c.xlo[r]), fabs(c.xhi[r]));
        }
        c.xm = xm;
    }
    /* the input: h = x' (the identity form), δ = 0 (no forms) */
    if (jform_alloc(&H[0], m, nin)) {
        st = lg_fail(LG_ERR_NOMEM, "devjoint: out of memory");
        goto done;
    }
    for (int r = 0; r < nin; r++) {
        H[0].L[(size_t)r * nin + r] = H[0].U[(size_t)r * nin + r] = 1.0;
        H[0].mag[r] = 2.0 * c.xm[r];
    }
    fh[0] = &H[0];
    fd[0] = NULL;
    size_t at = 0;
    for (int k = 0; k < NL; k++) {
        if (lg_runctx_expired(run)) goto done; /* past the deadline: no claim */
        const lg_layer *Ly = &R->layers[k], *Lg = &G->layers[k];
        const int n = Ly->n_out;
        z.n = d.n = n;
        jlinear(&c, Ly, fh, Ly->b, &z, S, D, P, Q, tv);
        jlinear(&c, Ly, fd, NULL, &d, S, D, P, Q, tv);
        if (jform_alloc(&H[k + 1], m, n) || jform_alloc(&Dl[k + 1], m, n)) {
            st = lg_fail(LG_ERR_NOMEM, "devjoint: out of memory");
            goto done;
        }
        jform *h = &H[k + 1], *dd = &Dl[k + 1];
        const int relu = Ly->act == LG_ACT_RELU;
        const int same = Lg->act == Ly->act;
        if (!relu && Ly->act != LG_ACT_IDENTITY) goto done;  /* no claim */
        if (!same && !(relu && lg_act_relu_like(Lg->act))) goto done;
        const double p = lg_act_has_param(Lg->act) ? Lg->lambda : 1.0;
        for (int i = 0; i < n; i++) {
            const double tr = v->tau[at + i], tg = v->tau[N + at + i];
            z.s[i] = up(z.s[i] + tr);
            d.s[i] = up(d.s[i] + up(tr + tg));
            double l, u, dl, du;
            jfinish(&c, &z, i, &l, &u);
            jfinish(&c, &d, i, &dl, &du);
            l = fmax(l, rl[k][i]);
            u = fmin(u, rh[k][i]);
            const double lg = gl[k][i], ug = gh[k][i];
            dl = fmax(dl, dn(l - ug));
            du = fmin(du, up(u - lg));
            if (!(l <= u && dl <= du) || !(fabs(l) + fabs(u) + fabs(dl) + fabs(du) <= DBL_MAX)) goto done;
            if (!relu) { /* identity in both */
                jcopy(&c, h->L, z.L, n, i);
                jcopy(&c, h->U, z.U, n, i);
                h->s[i] = z.s[i];
                jcopy(&c, dd->L, d.L, n, i);
                jcopy(&c, dd->U, d.U, n, i);
                dd->s[i] = d.s[i];
                jfinish(&c, h, i, NULL, NULL);
                jfinish(&c, dd, i, NULL, NULL);
                continue;
            }
            /* the ReLU net: DeepPoly's relaxation */
            if (l >= 0.0) {
                jcopy(&c, h->L, z.L, n, i);
                jcopy(&c, h->U, z.U, n, i);
                h->s[i] = z.s[i];
            } else if (u <= 0.0) {
                jzero(&c, h->L, n, i);
                jzero(&c, h->U, n, i);
                h->s[i] = 0.0;
            } else {
                /* h ≤ a·(z − l) with a ≥ u/(u − l) (a ≤ 1): at z = u it is ≥ u, at l it is 0 */
                double a = fmin(1.0, up(up(u / dn(u - l))));
                double rs = up(a * z.s[i]);
                jaffine(&c, h->U, z.U, n, i, a, up(a * -l), &rs);
                if (u > -l) jcopy(&c, h->L, z.L, n, i);
                else jzero(&c, h->L, n, i);
                h->s[i] = up(fmax(rs, u > -l ? z.s[i] : 0.0));
            }
            jfinish(&c, h, i, NULL, NULL);
            /* the difference: relu(z) − relu(w) jointly in (z, d), then the gap of f on [lg, ug] */
            double rs = 0.0;
            if (l >= 0.0 && lg >= 0.0) { /* d */
                jcopy(&c, dd->L, d.L, n, i);
                jcopy(&c, dd->U, d.U, n, i);
                rs = d.s[i];
            } else if (u <= 0.0 && ug <= 0.0) { /* 0 */
                jzero(&c, dd->L, n, i);
                jzero(&c, dd->U, n, i);
            } else if (l >= 0.0 && ug <= 0.0) { /* z */
                jcopy(&c, dd->L, z.L, n, i);
                jcopy(&c, dd->U, z.U, n, i);
                rs = z.s[i];
            } else if (u <= 0.0 && lg >= 0.0) { /* −w = d − z */
                rs = up(d.s[i] + z.s[i]);
                jsub(&c, dd->L, d.L, z.U, n, i, &rs);
                jsub(&c, dd->U, d.U, z.L, n, i, &rs);
            } else if (dl >= 0.0) { /* [0, d] */
                jzero(&c, dd->L, n, i);
                jcopy(&c, dd->U, d.U, n, i);
                rs = d.s[i];
            } else if (du <= 0.0) { /* [d, 0] */
                jcopy(&c, dd->L, d.L, n, i);
                jzero(&c, dd->U, n, i);
                rs = d.s[i];
            } else {
                /* chords: a_l·d + c_l ≤ min(0, d) and a_u·d + c_u ≥ max(0, d) on [dl, du], the
                 * constants from the endpoint checks (concave / convex in d), rounded outward */
                double w = up(du - dl);
                double al = fmin(1.0, fmax(0.0, -dl / w)), au = fmin(1.0, fmax(0.0, du / w));
                double cl = fmin(dn(dl - up(al * dl)), dn(-up(al * du)));
                double cu = fmax(up(-dn(au * dl)), up(du - dn(au * du)));
                double r1 = up(al * d.s[i]), r2 = up(au * d.s[i]);
                jaffine(&c, dd->L, d.L, n, i, al, cl, &r1);
                jaffine(&c, dd->U, d.U, n, i, au, cu, &r2);
                rs = fmax(r1, r2);
            }
            if (!same) {
                double gap = lg_dev_act_gap_certified(Lg->act, p, lg, ug, NULL);
                if (!(gap <= DBL_MAX)) goto done;
                rs = up(rs + gap);
            }
            dd->s[i] = up(rs);
            jfinish(&c, dd, i, NULL, NULL);
        }
        if (getenv("LG_DJ_DEBUG")) {
            double md = 0, mz = 0, mzc = 0; int unst = 0, gen = 0;
            for (int i = 0; i < n; i++) {
                double a, b; jfinish(&c, &d, i, &a, &b); md = fmax(md, fmax(-a, b));
                jfinish(&c, &z, i, &a, &b); mz = fmax(mz, b - a); mzc = fmax(mzc, rh[k][i] - rl[k][i]);
                if (rl[k][i] < 0 && rh[k][i] > 0) unst++;
                if (!(rl[k][i] >= 0 && gl[k][i] >= 0) && !(rh[k][i] <= 0 && gh[k][i] <= 0)) gen++;
            }
            fprintf(stderr, "DJ layer %d: max|d| %g  zwidth form %g crown %g unstable %d nonexact %d of %d\n", k, md, mz, mzc, unst, gen, n);
        }
        at += (size_t)n;
        fh[k + 1] = h;
        fd[k + 1] = dd;
        /* forms no later layer reads */
        for (int q = 0; q <= k; q++)
            if (last[q] == k) {
                jform_free(&H[q]);
                jform_free(&Dl[q]);
                fh[q] = fd[q] = NULL;
            }
    }
    {
        jform *dd = fd[NL];
        for (int j = 0; j < no; j++) {
            double a = jconc(&c, dd->L, dd->n, j, 0, NULL), b = jconc(&c, dd->U, dd->n, j, 1, NULL);
            double x = up(fmax(-a, b) + dd->s[j]);
            x = up(x + up(v->xi[j] + v->xi[no + j]));
            e[j] = x <= DBL_MAX ? x : INFINITY; /* NaN: +∞ */
        }
    }
done:
    if (H)
        for (int k = 0; k <= NL; k++) {
            jform_free(&H[k]);
            jform_free(&Dl[k]);
        }
    free(H);
    free(fh);
    free(scr);
    jform_free(&z);
    jform_free(&d);
    free(last);
    return st;
}
