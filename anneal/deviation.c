/* deviation.c — the certified ReLU-substitution deviation bound; the
 * derivation and the floating-point margins are in deviation.h
 * (DESIGN.md §1 "Deviation bound"). */
#include "anneal/deviation.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LG_DEV_GAP_REL 1e-12 /* relative margin on every gap value */
#define LG_DEV_ABS 1e-300    /* absolute margin for underflow in erfc */
#define LG_DEV_EPS DBL_EPSILON

/* γ_n for a dot product of length n (deviation.h "Floating point"). */
static double lg_dev_gamma(int n) { return 1e-12 + ((double)n + 2.0) * LG_DEV_EPS; }

double lg_dev_gap_mag(double lambda, double a, double b)
{
    double peak = LG_DEV_PEAK_S / lambda;
    if (a <= peak && peak <= b) return LG_DEV_PEAK_V / lambda;
    double t = b < peak ? b : a; /* the end closest to the peak (h_λ unimodal) */
    return t * lg_Phi(-lambda * t);
}

double lg_dev_gap(double lambda, double l, double u)
{
    if (l <= 0.0 && u >= 0.0) return lg_dev_gap_mag(lambda, 0.0, -l > u ? -l : u);
    if (l > 0.0) return lg_dev_gap_mag(lambda, l, u);
    return lg_dev_gap_mag(lambda, -u, -l);
}

static int lg_dev_is_smooth(lg_act a) { return a == LG_ACT_GELU || a == LG_ACT_LGELU; }

static int lg_dev_same_vec(const double *a, const double *b, int n)
{
    if (!a || !b) return a == b;
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

lg_status lg_dev_check_pair(const lg_net *rn, const lg_net *ref)
{
    if (rn->n_in != ref->n_in)
        return lg_fail(LG_ERR_ARG, "the ReLU net takes %d inputs but the reference net %d", rn->n_in, ref->n_in);
    if (rn->n_layers != ref->n_layers)
        return lg_fail(LG_ERR_ARG, "the ReLU net has %d layers but the reference net %d", rn->n_layers, ref->n_layers);
    for (int k = 0; k < rn->n_layers; k++) {
        const lg_layer *A = &rn->layers[k], *B = &ref->layers[k];
        if (A->kind != B->kind || A->n_in != B->n_in || A->n_out != B->n_out)
            return lg_fail(LG_ERR_ARG, "layer %d: shapes differ (ReLU net %dx%d, reference net %dx%d)", k, A->n_out,
                           A->n_in, B->n_out, B->n_in);
        if (A->act != LG_ACT_RELU && A->act != LG_ACT_IDENTITY)
            return lg_fail(LG_ERR_ARG,
                           "layer %d: the ReLU net has activation '%s', expected relu or identity (is the ReLU net "
                           "given first and the reference with --ref?)",
                           k, lg_act_name(A->act) ? lg_act_name(A->act) : "unknown");
        if (A->act != B->act && !(A->act == LG_ACT_RELU && lg_dev_is_smooth(B->act)))
            return lg_fail(LG_ERR_ARG,
                           "layer %d: activation '%s' in the ReLU net cannot stand for '%s' in the reference net "
                           "(expected the same activation, or relu for gelu/lgelu)",
                           k, lg_act_name(A->act), lg_act_name(B->act) ? lg_act_name(B->act) : "unknown");
    }
    if (rn->n_params != ref->n_params || memcmp(rn->params, ref->params, rn->n_params * sizeof *rn->params) != 0) {
        size_t i = 0;
        while (i < rn->n_params && i < ref->n_params && memcmp(&rn->params[i], &ref->params[i], sizeof(double)) == 0)
            i++;
        return lg_fail(LG_ERR_ARG,
                       "the weights differ (first at parameter %zu); the bound assumes the ReLU net is the "
                       "substitution of the reference net with identical weights",
                       i);
    }
    if (!lg_dev_same_vec(rn->in_sub, ref->in_sub, rn->n_in) || !lg_dev_same_vec(rn->in_div, ref->in_div, rn->n_in))
        return lg_fail(LG_ERR_ARG, "the input normalisation (in_sub/in_div) differs between the two nets");
    return LG_OK;
}

lg_status lg_dev_init(lg_dev *d, const lg_net *rn, const lg_net *ref)
{
    memset(d, 0, sizeof *d);
    lg_status st;
    if ((st = lg_net_validate(rn)) != LG_OK || (st = lg_net_validate(ref)) != LG_OK) return st;
    if ((st = lg_dev_check_pair(rn, ref)) != LG_OK) return st;
    d->width = lg_net_max_width(rn);
    d->absW = malloc(rn->n_params * sizeof *d->absW);
    d->buf = malloc((size_t)8 * LG_DEV_CHUNK * (size_t)d->width * sizeof *d->buf);
    if (!d->absW || !d->buf) {
        lg_dev_free(d);
        return lg_fail(LG_ERR_NOMEM, "cannot allocate deviation-bound buffers for width %d", lg_net_max_width(rn));
    }
    for (size_t i = 0; i < rn->n_params; i++) d->absW[i] = fabs(rn->params[i]);
    d->relu_net = rn;
    d->ref = ref;
    return LG_OK;
}

void lg_dev_free(lg_dev *d)
{
    free(d->absW);
    free(d->buf);
    memset(d, 0, sizeof *d);
}

/* [lo, hi] → centre/radius with [c − r, c + r] ⊇ [lo, hi] exactly. */
static void lg_dev_recentre(double lo, double hi, double *c, double *r)
{
    *c = 0.5 * (lo + hi);
    *r = (0.5 * (hi - lo) + LG_DEV_EPS * (fabs(lo) + fabs(hi))) * (1.0 + LG_DEV_EPS);
}

/* Z[m][no] = A[m][ni] · Wᵀ (+ Z if beta = 1); W is [no][ni] row-major. */
static void lg_dev_gemm(int m, int no, int ni, const double *A, const double *W, double beta, double *Z)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, no, ni, 1.0, A, ni, W, ni, beta, Z, no);
}

/* One chunk of m ≤ LG_DEV_CHUNK boxes. */
static void lg_dev_chunk(lg_dev *d, const double *lo, const double *hi, int m, double *delta, double *e_out,
                         lg_dev_stats *stats)
{
    const lg_net *rn = d->relu_net, *ref = d->ref;
    size_t slot = (size_t)LG_DEV_CHUNK * (size_t)d->width;
    /* C, R: centre/radius of the ReLU-net layer output; E: deviation bound;
     * T: |C| + R; Zc, Zr, Mt, P: centre, radius, |W|·T, |W|·E of z. */
    double *C = d->buf, *R = C + slot, *E = R + slot, *T = E + slot;
    double *Zc = T + slot, *Zr = Zc + slot, *Mt = Zr + slot, *P = Mt + slot;
    int n = rn->n_in;

    /* Input box through the shared normalisation x' = (x − sub)/div. Rounding
     * is monotone, so the computed x' of every x in the box lies between the
     * computed ends; widen by one ulp-ish for the exact x'. */
    for (int r = 0; r < m; r++)
        for (int i = 0; i < n; i++) {
            size_t at = (size_t)r * (size_t)n + (size_t)i;
            double a = lo[at], b = hi[at];
            if (rn->in_sub) a -= rn->in_sub[i], b -= rn->in_sub[i];
            if (rn->in_div) {
                a /= rn->in_div[i], b /= rn->in_div[i];
                if (a > b) {
                    double t = a;
                    a = b;
                    b = t;
                }
            }
            a -= LG_DEV_EPS * fabs(a);
            b += LG_DEV_EPS * fabs(b);
            lg_dev_recentre(a, b, &C[at], &R[at]);
            E[at] = 0.0;
        }
    int e_zero = 1; /* E is all zero: skip |W|·E */
    unsigned char blown[LG_DEV_CHUNK] = {0}; /* row overflowed: its bound is +∞ */

    for (int k = 0; k < rn->n_layers; k++) {
        const lg_layer *L = &rn->layers[k];
        const lg_act ga = ref->layers[k].act;
        const double lambda = ga == LG_ACT_LGELU ? ref->layers[k].lambda : 1.0;
        const double *aW = d->absW + (L->W - rn->params);
        const int ni = L->n_in, no = L->n_out;
        const double g = lg_dev_gamma(ni);
        size_t nin = (size_t)m * (size_t)ni, nout = (size_t)m * (size_t)no;

        for (size_t i = 0; i < nin; i++) T[i] = fabs(C[i]) + R[i];
        for (int r = 0; r < m; r++) memcpy(Zc + (size_t)r * (size_t)no, L->b, (size_t)no * sizeof *Zc);
        lg_dev_gemm(m, no, ni, C, L->W, 1.0, Zc);  /* W·c + b */
        lg_dev_gemm(m, no, ni, R, aW, 0.0, Zr);    /* |W|·r */
        lg_dev_gemm(m, no, ni, T, aW, 0.0, Mt);    /* |W|·(|c| + r) */
        if (e_zero) memset(P, 0, nout * sizeof *P);
        else lg_dev_gemm(m, no, ni, E, aW, 0.0, P); /* |W|·e */

        int gap_layer = L->act == LG_ACT_RELU && ga != LG_ACT_RELU;
        int any_e = 0;
        for (size_t i = 0; i < nout; i++) {
            int o = (int)(i % (size_t)no);
            double M = (Mt[i] + fabs(L->b[o])) * (1.0 + g);
            double zc = Zc[i];
            double zr = (Zr[i] * (1.0 + g) + 3.0 * g * M) * (1.0 + g);
            double p = P[i] * (1.0 + g);
            /* ≥ |z_R − z_G|; 0 while both nets have computed the same
             * values bit for bit (no substituted layer yet) */
            double dk = e_zero ? 0.0 : (p + 2.0 * g * (M + p)) * (1.0 + g);
            double e = dk;
            if (!isfinite(zc) || !isfinite(zr) || !isfinite(dk)) blown[i / (size_t)no] = 1;
            if (L->act == LG_ACT_IDENTITY) {
                Zc[i] = zc;
                Zr[i] = zr;
            } else {
                double l = (zc - zr) - LG_DEV_EPS * (fabs(zc) + zr);
                double u = (zc + zr) + LG_DEV_EPS * (fabs(zc) + zr);
                lg_dev_recentre(l > 0.0 ? l : 0.0, u > 0.0 ? u : 0.0, &Zc[i], &Zr[i]);
                /* |relu(z_R) − relu(z_G)| ≤ min(d_k, max(0, u_G)): both values
                 * lie in [0, max(0, u_G)], u_G = u + d_k the top of z_G */
                double ug = (u + dk) + LG_DEV_EPS * (fabs(u) + dk);
                e = ug > 0.0 ? (ug < dk ? ug : dk) : 0.0;
                if (gap_layer) {
                    /* |x| over the z_G interval [zc − zr − dk, zc + zr + dk] */
                    double rho = (zr + dk) * (1.0 + LG_DEV_EPS);
                    double a = fabs(zc) - rho;
                    a = a > 0.0 ? a * (1.0 - 2.0 * LG_DEV_EPS) : 0.0;
                    double b = (fabs(zc) + rho) * (1.0 + 2.0 * LG_DEV_EPS);
                    double gap = lg_dev_gap_mag(lambda, a, b) * (1.0 + LG_DEV_GAP_REL);
                    e = (e + gap + 16.0 * LG_DEV_EPS * b + LG_DEV_ABS) * (1.0 + LG_DEV_EPS);
                    if (stats) {
                        double peak = LG_DEV_PEAK_S / lambda;
                        stats->n_gap++;
                        stats->n_peak += a <= peak && peak <= b;
                    }
                }
            }
            P[i] = e;
            any_e |= e != 0.0;
        }
        e_zero = !any_e;
        double *t;
        t = C, C = Zc, Zc = t;
        t = R, R = Zr, Zr = t;
        t = E, E = P, P = t;
    }
    int no = lg_net_n_out(rn);
    for (int r = 0; r < m; r++) {
        double mx = 0.0;
        for (int o = 0; o < no; o++) {
            double e = E[(size_t)r * (size_t)no + (size_t)o];
            if (!(e <= DBL_MAX)) blown[r] = 1; /* +∞ or NaN */
            if (e > mx) mx = e;
            if (e_out) e_out[(size_t)r * (size_t)no + (size_t)o] = e;
        }
        delta[r] = blown[r] ? INFINITY : mx;
        if (e_out && delta[r] == INFINITY)
            for (int o = 0; o < no; o++) e_out[(size_t)r * (size_t)no + (size_t)o] = INFINITY;
    }
}

lg_status lg_dev_bound_boxes(lg_dev *d, const double *lo, const double *hi, size_t n, double *delta, double *e_out,
                             lg_dev_stats *stats)
{
    if (!d->relu_net) return lg_fail(LG_ERR_ARG, "deviation bound used before lg_dev_init");
    size_t ni = (size_t)d->relu_net->n_in, no = (size_t)lg_net_n_out(d->relu_net);
    for (size_t i = 0; i < n * ni; i++)
        if (!isfinite(lo[i]) || !isfinite(hi[i]) || lo[i] > hi[i])
            return lg_fail(LG_ERR_ARG, "box %zu, input %zu: [%g, %g] is not a finite interval with lo <= hi", i / ni,
                           i % ni, lo[i], hi[i]);
    for (size_t s = 0; s < n; s += LG_DEV_CHUNK) {
        int m = (int)(n - s < LG_DEV_CHUNK ? n - s : LG_DEV_CHUNK);
        lg_dev_chunk(d, lo + s * ni, hi + s * ni, m, delta + s, e_out ? e_out + s * no : NULL, stats);
    }
    return LG_OK;
}

lg_status lg_dev_bound_balls(lg_dev *d, const double *X, size_t n, double eps, double clip_lo, double clip_hi,
                             double *delta, double *e_out, lg_dev_stats *stats)
{
    if (!d->relu_net) return lg_fail(LG_ERR_ARG, "deviation bound used before lg_dev_init");
    if (!(eps >= 0.0) || !isfinite(eps)) return lg_fail(LG_ERR_ARG, "radius eps = %g, expected a finite value >= 0", eps);
    if (!(clip_lo <= clip_hi)) return lg_fail(LG_ERR_ARG, "clip range [%g, %g] is empty", clip_lo, clip_hi);
    size_t ni = (size_t)d->relu_net->n_in, no = (size_t)lg_net_n_out(d->relu_net);
    size_t chunk = (size_t)LG_DEV_CHUNK * ni;
    double *lo = malloc(chunk * sizeof *lo), *hi = malloc(chunk * sizeof *hi);
    lg_status st = LG_OK;
    if (!lo || !hi) {
        st = lg_fail(LG_ERR_NOMEM, "cannot allocate %zu input boxes", (size_t)LG_DEV_CHUNK);
        goto fail;
    }
    for (size_t s = 0; s < n; s += LG_DEV_CHUNK) {
        size_t m = n - s < LG_DEV_CHUNK ? n - s : LG_DEV_CHUNK;
        for (size_t i = 0; i < m * ni; i++) {
            double x = X[s * ni + i];
            if (!isfinite(x)) {
                st = lg_fail(LG_ERR_ARG, "input %zu, feature %zu is not finite", s + i / ni, i % ni);
                goto fail;
            }
            double a = x - eps, b = x + eps;
            lo[i] = a < clip_lo ? clip_lo : a > clip_hi ? clip_hi : a;
            hi[i] = b > clip_hi ? clip_hi : b < clip_lo ? clip_lo : b;
        }
        if ((st = lg_dev_bound_boxes(d, lo, hi, m, delta + s, e_out ? e_out + s * no : NULL, stats)) != LG_OK)
            goto fail;
    }
fail:
    free(lo);
    free(hi);
    return st;
}

lg_status lg_dev_bound_global(lg_dev *d, double clip_lo, double clip_hi, double *delta, double *e_out,
                              lg_dev_stats *stats)
{
    if (!d->relu_net) return lg_fail(LG_ERR_ARG, "deviation bound used before lg_dev_init");
    if (!(clip_lo <= clip_hi) || !isfinite(clip_lo) || !isfinite(clip_hi))
        return lg_fail(LG_ERR_ARG, "domain [%g, %g] is not a finite nonempty interval", clip_lo, clip_hi);
    size_t ni = (size_t)d->relu_net->n_in;
    double *lo = malloc(ni * sizeof *lo), *hi = malloc(ni * sizeof *hi);
    lg_status st;
    if (!lo || !hi) {
        st = lg_fail(LG_ERR_NOMEM, "cannot allocate the input domain box");
    } else {
        for (size_t i = 0; i < ni; i++) lo[i] = clip_lo, hi[i] = clip_hi;
        st = lg_dev_bound_boxes(d, lo, hi, 1, delta, e_out, stats);
    }
    free(lo);
    free(hi);
    return st;
}
