/* backsub_tnode.c — the back-substitution's step through a Transformer node
 * (backsub_tnode.h). */
#include "verify/backsub_tnode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/act_relax.h"
#include "verify/backsub_tbil.h"
#include "verify/backsub_tgemm.h"
#include "verify/relax_bilinear.h"
#include "verify/relax_iv.h"
#include "verify/relax_layernorm.h"
#include "verify/relax_softmax.h"
#include "verify/opstage.h"

/* Plane table of one layer: a product's pairs q = o·K + k hold
 * [lo_a, lo_b, lo_c, up_a, up_b, up_c, max|a|, max|b|], then the sums of
 * backsub_tbil.h; a softmax or layernorm
 * holds lo_w [n·g], lo_c [n], up_w [n·g], up_c [n], max|x| [n] (a layernorm then
 * its groups' lg_layernorm_row_icpt data), then the sums of backsub_tgemm.h. */
#define LG_BT_PAIR LG_BS_TBIL_PAIR

static size_t lg_bt_len(const lg_layer *L)
{
    size_t n = (size_t)L->n_out;
    if (L->lin.kind == LG_LAYER_BILINEAR) return n * (size_t)L->lin.op.K * LG_BT_PAIR + LG_BS_TBIL_LEN(n);
    size_t extra = L->lin.kind == LG_LAYER_LAYERNORM ? n / (size_t)L->lin.op.group * LG_LN_ROW_LEN((size_t)L->lin.op.group) : 0;
    return 2 * n * (size_t)L->lin.op.group + 3 * n + extra + LG_BS_TGEMM_LEN(n, (size_t)L->lin.op.group);
}

lg_status lg_bs_tnode_init(lg_backsub *s)
{
    if (lg_net_first_tnode(s->net) < 0) return LG_OK;
    size_t n = (size_t)s->ng * (size_t)s->net->n_layers;
    s->tp = calloc(n, sizeof *s->tp);
    s->tp_ok = calloc(n, 1);
    s->talpha = malloc(2 * (size_t)s->net->n_layers * sizeof *s->talpha);
    if (s->talpha)
        for (int k = 0; k < 2 * s->net->n_layers; k++) s->talpha[k] = LG_BS_BILINEAR_ALPHA;
    if (!s->tp || !s->tp_ok || !s->talpha) return lg_fail(LG_ERR_NOMEM, "bounds: out of memory for the Transformer nodes' planes");
    return LG_OK;
}

void lg_bs_tnode_free(lg_backsub *s)
{
    if (s->tp)
        for (size_t q = 0; q < (size_t)s->ng * (size_t)s->net->n_layers; q++) free(s->tp[q]);
    free(s->tp);
    free(s->tp_ok);
    free(s->talpha);
    s->tp = NULL;
    s->tp_ok = NULL;
    s->talpha = NULL;
}

void lg_bs_tnode_set_alpha(lg_backsub *s, int l, double alpha_lo, double alpha_up)
{
    if (!s->talpha || s->net->layers[l].lin.kind != LG_LAYER_BILINEAR) return;
    if (s->talpha[2 * l] == alpha_lo && s->talpha[2 * l + 1] == alpha_up) return;
    s->talpha[2 * l] = alpha_lo;
    s->talpha[2 * l + 1] = alpha_up;
    for (int g = 0; g < s->ng; g++) s->tp_ok[(size_t)g * (size_t)s->net->n_layers + (size_t)l] = 0;
}

void lg_bs_tnode_changed(lg_backsub *s, int l)
{
    if (!s->tp_ok) return;
    int nl = s->net->n_layers;
    for (int k = l + 1; k < nl; k++) {
        const lg_layer *L = &s->net->layers[k];
        if (!lg_kind_is_tnode(L->lin.kind) || (L->lin.src != l && !(L->lin.kind == LG_LAYER_BILINEAR && L->lin.op.src_b == l)))
            continue;
        for (int g = 0; g < s->ng; g++) s->tp_ok[(size_t)g * (size_t)nl + (size_t)k] = 0;
    }
}

int lg_bs_tnode_addends(const lg_layer *L, int second)
{
    if (L->lin.kind == LG_LAYER_BILINEAR) return L->n_out * L->lin.op.K; /* every pair could read one entry */
    return second ? 0 : L->lin.op.group;
}

/* Post-activation interval of entry i of node src in group g (NaN: none). */
static void lg_bt_post(const lg_backsub *s, int g, int src, int i, double *lo, double *hi)
{
    const lg_bounds *b = s->gb[g];
    double l = src < 0 ? b->xlo[i] : b->lo[src][i], h = src < 0 ? b->xhi[i] : b->hi[src][i];
    if (src >= 0) lg_bounds_post(&s->net->layers[src], l, h, &l, &h);
    *lo = l == l ? l : -INFINITY;
    *hi = h == h ? h : INFINITY;
}

static double lg_bt_mag(double l, double h)
{
    double a = fabs(l), b = fabs(h);
    return a > b ? a : b;
}

/* The planes of tnode layer l in group g; 0 out of memory. */
static int lg_bt_planes(lg_backsub *s, int g, int l)
{
    size_t at = (size_t)g * (size_t)s->net->n_layers + (size_t)l;
    const lg_layer *L = &s->net->layers[l];
    if (!s->tp[at] && !(s->tp[at] = malloc(lg_bt_len(L) * sizeof(double)))) return 0;
    double *P = s->tp[at];
    int n = L->n_out;
    if (L->lin.kind == LG_LAYER_BILINEAR) {
        int K = L->lin.op.K;
        const int *ia = L->lin.map, *ib = L->lin.map + (size_t)n * (size_t)K;
        for (size_t q = 0; q < (size_t)n * (size_t)K; q++) {
            double la, ua, lb, ub;
            lg_bt_post(s, g, L->lin.src, ia[q], &la, &ua);
            lg_bt_post(s, g, L->lin.op.src_b, ib[q], &lb, &ub);
            lg_bilinear_planes p;
            lg_relax_bilinear(la, ua, lb, ub, s->talpha[2 * l], s->talpha[2 * l + 1], &p);
            double *e = P + q * LG_BT_PAIR;
            e[0] = p.lo_a, e[1] = p.lo_b, e[2] = p.lo_c, e[3] = p.up_a, e[4] = p.up_b, e[5] = p.up_c;
            e[6] = lg_bt_mag(la, ua), e[7] = lg_bt_mag(lb, ub);
        }
        lg_bs_tbil_sums((size_t)n, (size_t)K, P, P + (size_t)n * (size_t)K * LG_BT_PAIR);
    } else {
        size_t gs = (size_t)L->lin.op.group;
        double *lo_w = P, *lo_c = lo_w + (size_t)n * gs, *up_w = lo_c + n, *up_c = up_w + (size_t)n * gs;
        double *xm = up_c + n;
        double *lu = malloc(2 * gs * sizeof *lu);
        lg_dv *work = malloc((LG_LAYERNORM_WORK(gs) > LG_SOFTMAX_WORK(gs) ? LG_LAYERNORM_WORK(gs) : LG_SOFTMAX_WORK(gs)) *
                             sizeof *work);
        if (!lu || !work) {
            free(lu);
            free(work);
            return 0;
        }
        for (size_t G = 0; G < (size_t)n / gs; G++) {
            size_t o0 = G * gs;
            for (size_t j = 0; j < gs; j++) {
                lg_bt_post(s, g, L->lin.src, (int)(o0 + j), &lu[j], &lu[gs + j]);
                xm[o0 + j] = lg_bt_mag(lu[j], lu[gs + j]);
            }
            if (L->lin.kind == LG_LAYER_SOFTMAX)
                lg_relax_softmax(gs, lu, lu + gs, NULL, lo_w + o0 * gs, lo_c + o0, up_w + o0 * gs, up_c + o0, work);
            else { /* with the centred input's bounds when the symbolic pass kept them (bounds.h dlo) */
                lg_ln_region reg;
                lg_ln_region_of(s->gb[g], s->net, l, (int)G, &reg);
                lg_relax_layernorm_ex(gs, lu, lu + gs, &reg, L->lin.op.eps, L->lin.W, L->lin.W + gs, NULL, lo_w + o0 * gs,
                                      lo_c + o0, up_w + o0 * gs, up_c + o0, xm + n + G * LG_LN_ROW_LEN(gs), work);
            }
        }
        free(lu);
        free(work);
        size_t extra = L->lin.kind == LG_LAYER_LAYERNORM ? (size_t)n / gs * LG_LN_ROW_LEN(gs) : 0;
        lg_bs_tgemm_sums((size_t)n, gs, lo_w, up_w, xm, xm + n + extra);
    }
    s->tp_ok[at] = 1;
    return 1;
}

/* One row's accumulators of the rounding term (backsub_tnode.h). */
typedef struct lg_bt_acc {
    double S;   /* Σ |coef|·max|x| */
    double und; /* Σ max|x| of the coefficients */
    double I;   /* Σ |icpt| */
    double cnt; /* addends summed into S and und */
    double nic; /* intercepts */
    int bad;
} lg_bt_acc;

static inline void lg_bt_coef(lg_bt_acc *a, double *y, double coef, double w, double xm)
{
    if (w == 0.0) return; /* coef = 0 exactly */
    *y += coef;
    a->S += fabs(coef) * xm;
    a->und += xm;
    a->cnt += 1.0;
}

/* One lane of a bilinear row's sums: S, und, cnt as lg_bt_acc, c the intercepts, I their Σ |·|. */
typedef struct lg_bt_lane {
    double S, und, cnt, c, I;
} lg_bt_lane;

/* One product's pair of planes: w its lower or upper (coef a, coef b, intercept), x its
 * max|x| pair (a, b); all five are loaded before the stores into ya and yb (never the planes). */
static inline void lg_bt_pair(lg_bt_lane *t, double *ya, double *yb, double lam, const double *w, const double *x)
{
    double w0 = w[0], w1 = w[1], w2 = w[2], x0 = x[0], x1 = x[1];
    if (w0 != 0.0) {
        double c0 = lam * w0;
        *ya += c0;
        t->S += fabs(c0) * x0;
        t->und += x0;
        t->cnt += 1.0;
    }
    if (w1 != 0.0) {
        double c1 = lam * w1;
        *yb += c1;
        t->S += fabs(c1) * x1;
        t->und += x1;
        t->cnt += 1.0;
    }
    double ic = lam * w2;
    t->c += ic;
    t->I += fabs(ic);
}

double lg_bs_tnode_step(lg_backsub *s, int l, int m, const double *A, double *Ya, double *Yb, double gam)
{
    const lg_layer *L = &s->net->layers[l];
    int n = L->n_out, nl = s->net->n_layers, ok = 1;
    for (int g = 0; g < s->ng; g++)
        if (!s->tp_ok[(size_t)g * (size_t)nl + (size_t)l] && !lg_bt_planes(s, g, l)) ok = 0;
    int bil = L->lin.kind == LG_LAYER_BILINEAR;
    int K = bil ? L->lin.op.K : 0;
    size_t na = (size_t)L->lin.n_in, nb = bil ? (size_t)L->lin.op.n_in_b : 0, gs = bil ? 0 : (size_t)L->lin.op.group;
    int soft = L->lin.kind == LG_LAYER_SOFTMAX && gs > 1;
    double *mu = soft ? malloc(gs * sizeof *mu) : NULL;
    int *idx = soft ? malloc(gs * sizeof *idx) : NULL;
    if (soft && (!mu || !idx)) ok = 0;
    /* softmax and layernorm: the slopes go through dgemm per group (backsub_tgemm.h), Lm the
     * coefficients each row applies there; the element-wise loop where a group's slopes are not finite */
    size_t xoff = bil ? 0 : 2 * (size_t)n * gs + 3 * (size_t)n + (L->lin.kind == LG_LAYER_LAYERNORM ? (size_t)n / gs * LG_LN_ROW_LEN(gs) : 0);
    double *Lm = !bil && ok ? calloc((size_t)m * (size_t)n, sizeof *Lm) : NULL;
    /* products: the pairs' slopes applied to blocks of rows (backsub_tbil.h) when every group's are finite */
    size_t boff = (size_t)n * (size_t)K * LG_BT_PAIR;
    int fast = bil && ok;
    for (int g = 0; fast && g < s->ng; g++) fast = lg_bs_tbil_finite(s->tp[(size_t)g * (size_t)nl + (size_t)l] + boff, (size_t)n);
    for (int r = 0; r < m; r++) {
        const double *Ar = A + (size_t)r * (size_t)n;
        double *ya = Ya + (size_t)r * na, *yb = bil ? Yb + (size_t)r * nb : NULL;
        lg_bt_acc a = {0, 0, 0, 0, 0, !ok};
        double cr = s->c[r], ms = s->mass[r];
        const double *P = ok ? s->tp[(size_t)s->grp[r] * (size_t)nl + (size_t)l] : NULL;
        int row_icpt = 0; /* the group's intercept is lg_layernorm_row_icpt's (one for the group) */
        double esh = 0.0;  /* the softmax shifts' rounding (lg_softmax_shift) */
        double eic = 0.0;  /* Σ |λ_o|·E_o of the products' summed intercepts (backsub_tbil.h) */
        for (int o = 0; o < n && !a.bad; o++) {
            double lam = Ar[o];
            if (P && !bil && (size_t)o % gs == 0) { /* a group of zero coefficients adds nothing */
                int any = 0;
                for (size_t j = 0; j < gs; j++) any |= Ar[(size_t)o + j] != 0.0;
                if (!any) {
                    o += (int)gs - 1;
                    continue;
                }
            }
            if (P && soft) {
                /* Σ s = 1 over the group: the coefficients shifted by the weighted median t */
                if ((size_t)o % gs == 0) {
                    const double *lo_c = P + (size_t)n * gs, *up_c = lo_c + n + (size_t)n * gs;
                    double es, t = lg_softmax_shift(gs, Ar + o, lo_c + o, up_c + o, mu, &es, idx);
                    if (t != 0.0) {
                        cr += t;
                        ms += fabs(t);
                        a.I += fabs(t);
                        a.nic += 1.0;
                        esh = lg_up(esh + es);
                    }
                }
                lam = mu[(size_t)o % gs];
            }
            if (P && L->lin.kind == LG_LAYER_LAYERNORM && (size_t)o % gs == 0) {
                /* the weighted sum's own bound when it beats the sum of the planes' intercepts */
                const double *lo_c = P + (size_t)n * gs, *up_c = lo_c + n + (size_t)n * gs;
                const double *rd = up_c + 2 * (size_t)n + (size_t)o / gs * LG_LN_ROW_LEN(gs);
                double sum = 0.0, rv = lg_layernorm_row_icpt(gs, rd, Ar + o, L->lin.W + 0);
                for (size_t j = 0; j < gs; j++)
                    if (Ar[o + (int)j] != 0.0) sum += Ar[o + (int)j] * (Ar[o + (int)j] > 0.0 ? lo_c[o + (int)j] : up_c[o + (int)j]);
                row_icpt = rv > sum;
                if (row_icpt) {
                    cr += rv;
                    ms += fabs(rv);
                    a.I += fabs(rv);
                    a.nic += 1.0;
                }
            }
            if (lam == 0.0) continue;
            int lo = lam > 0.0;
            if (fast) { /* the sums of the output's pairs (backsub_tbil.h); its coefficients after the rows */
                const double *X = P + boff;
                int up = !lo;
                a.S += fabs(lam) * lg_bs_tbil_P(X, (size_t)n, up)[o];
                a.und += lg_bs_tbil_U(X, (size_t)n, up)[o];
                a.cnt += lg_bs_tbil_nnz(X, (size_t)n, up)[o];
                double ic = lam * lg_bs_tbil_C(X, (size_t)n, up)[o];
                cr += ic;
                ms += fabs(ic);
                a.I += fabs(ic);
                a.nic += 1.0;
                eic += fabs(lam) * lg_bs_tbil_E(X, (size_t)n, up)[o];
            } else if (bil) {
                const int *ia = L->lin.map + (size_t)o * (size_t)K, *ib = L->lin.map + (size_t)n * (size_t)K + (size_t)o * (size_t)K;
                /* the sums of lg_bt_coef and of the intercepts in two lanes, even k in lane 0 and
                 * odd k in lane 1 (any order: the growth factor and the constant's margin cover
                 * every order) */
                lg_bt_lane l0 = {0, 0, 0, 0, 0}, l1 = {0, 0, 0, 0, 0};
                const double *e = P + (size_t)o * (size_t)K * LG_BT_PAIR, *f = e + LG_BT_PAIR;
                int wo = lo ? 0 : 3, k = 0;
                for (; k + 1 < K; k += 2, e += 2 * LG_BT_PAIR, f += 2 * LG_BT_PAIR) {
                    lg_bt_pair(&l0, ya + ia[k], yb + ib[k], lam, e + wo, e + 6);
                    lg_bt_pair(&l1, ya + ia[k + 1], yb + ib[k + 1], lam, f + wo, f + 6);
                }
                if (k < K) lg_bt_pair(&l0, ya + ia[k], yb + ib[k], lam, e + wo, e + 6);
                a.S += l0.S + l1.S;
                a.und += l0.und + l1.und;
                a.cnt += l0.cnt + l1.cnt;
                cr += l0.c + l1.c;
                ms += l0.I + l1.I;
                a.I += l0.I + l1.I;
                a.nic += (double)K;
            } else {
                size_t G0 = (size_t)o / gs * gs;
                const double *lo_w = P, *lo_c = lo_w + (size_t)n * gs, *up_w = lo_c + n, *up_c = up_w + (size_t)n * gs;
                const double *xm = up_c + n;
                const double *w = (lo ? lo_w : up_w) + (size_t)o * gs;
                const double *X = P + xoff;
                if (Lm && lg_bs_tgemm_finite(X, (size_t)n, (size_t)o / gs)) {
                    Lm[(size_t)r * (size_t)n + (size_t)o] = lam;
                    a.S += fabs(lam) * lg_bs_tgemm_P(X, (size_t)n, !lo)[o];
                    a.und += lg_bs_tgemm_U(X, (size_t)n, !lo)[o];
                    a.cnt += lg_bs_tgemm_nnz(X, (size_t)n, !lo)[o];
                } else
                    for (size_t j = 0; j < gs; j++) lg_bt_coef(&a, &ya[G0 + j], lam * w[j], w[j], xm[G0 + j]);
                if (row_icpt) continue;
                double ic = lam * (lo ? lo_c[o] : up_c[o]);
                cr += ic;
                ms += fabs(ic);
                a.I += fabs(ic);
                a.nic += 1.0;
            }
        }
        /* err += (2^-51 + γ')·S + 2^-1073·und + 2^-51·I + 2^-1072·nic, every sum above
         * taken up by its own rounding (≤ (cnt + 2)·2^-52 relative), each step rounded up */
        double grow = lg_up(1.0 + (a.cnt + a.nic + 2.0) * 0x1p-52);
        double e = lg_up(lg_up(lg_up(0x1p-51 + gam) * a.S) * grow);
        e = lg_up(e + lg_up(lg_up(a.und * grow) * 0x1p-1073));
        e = lg_up(e + lg_up(lg_up(a.I * grow) * 0x1p-51));
        e = lg_up(e + lg_up(a.nic * 0x1p-1072));
        e = lg_up(e + esh);
        e = lg_up(e + lg_up(eic * grow)); /* nic addends, each within 2^-53: grow covers them */
        if (a.bad || !(e < INFINITY)) e = INFINITY;
        s->err[r] = lg_up(s->err[r] + e);
        s->c[r] = cr;
        s->mass[r] = ms;
    }
    if (fast) {
        const double **pl = malloc((size_t)s->ng * 2 * sizeof *pl);
        if (pl)
            for (int g = 0; g < s->ng; g++) {
                pl[g] = s->tp[(size_t)g * (size_t)nl + (size_t)l];
                pl[s->ng + g] = pl[g] + boff;
            }
        if (!pl || !lg_bs_tbil_apply(m, (size_t)n, (size_t)K, L->lin.map, L->lin.map + (size_t)n * (size_t)K, na, nb, s->ng,
                                      s->grp, (const double *const *)pl, (const double *const *)pl + s->ng, A, Ya, Yb))
            for (int r = 0; r < m; r++) s->err[r] = INFINITY; /* out of memory: no bound */
        free(pl);
    }
    if (Lm) {
        const double **pl = malloc((size_t)s->ng * 2 * sizeof *pl);
        if (pl) {
            for (int g = 0; g < s->ng; g++) {
                pl[g] = s->tp[(size_t)g * (size_t)nl + (size_t)l];
                pl[s->ng + g] = pl[g] + xoff;
            }
        }
        if (!pl || !lg_bs_tgemm_apply(m, (size_t)n, gs, s->ng, s->grp, (const double *const *)pl,
                                       (const double *const *)pl + s->ng, Lm, Ya))
            for (int r = 0; r < m; r++) s->err[r] = INFINITY; /* out of memory: no bound */
        free(pl);
        free(Lm);
    }
    free(mu);
    free(idx);
    return bil ? (double)n * K : (double)n + (soft ? (double)(n / (int)gs) : 0.0);
}
