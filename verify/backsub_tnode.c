/* backsub_tnode.c — the back-substitution's step through a Transformer node
 * (backsub_tnode.h): the plane tables' cache, what the kinds' steps share,
 * and the group step softmax and layernorm share; each kind's own part is
 * reached through its entry (opstage.h). */
#include "verify/backsub_tnode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/act_relax.h"
#include "verify/backsub_tgemm.h"
#include "verify/relax_iv.h"
#include "verify/relax_layernorm.h"
#include "verify/relax_softmax.h"
#include "verify/opstage.h"

/* Plane table of a softmax or layernorm layer: lo_w [n·g], lo_c [n], up_w [n·g],
 * up_c [n], max|x| [n], then its groups' row data (bs_row_len each: a layernorm's
 * lg_layernorm_row_icpt data), then the sums of backsub_tgemm.h. (A product's:
 * opstage_bilinear.c.) */
static size_t lg_bt_row_len(const lg_layer *L, size_t gs)
{
    const lg_vopdef *vop = lg_layer_vop(L);
    return vop->bs_row_len ? vop->bs_row_len(gs) : 0;
}

size_t lg_bs_group_len(const lg_layer *L)
{
    size_t n = (size_t)L->n_out;
    size_t extra = n / (size_t)L->lin.op.group * lg_bt_row_len(L, (size_t)L->lin.op.group);
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
    if (!s->talpha || !lg_layer_vop(&s->net->layers[l]) || !lg_layer_vop(&s->net->layers[l])->bs_n_alpha) return;
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
        if (!lg_kind_is_tnode(L->lin.kind)) continue;
        int reads = 0;
        for (int i = 0; i < lg_layer_n_src(L); i++) reads |= lg_layer_src(L, i) == l;
        if (!reads) continue;
        for (int g = 0; g < s->ng; g++) s->tp_ok[(size_t)g * (size_t)nl + (size_t)k] = 0;
    }
}

int lg_bs_tnode_addends(const lg_layer *L, int second)
{
    return second && lg_layer_n_src(L) < 2 ? 0 : lg_layer_vop(L)->bs_taddends(L);
}

void lg_bs_tnode_post(const lg_backsub *s, int g, int src, int i, double *lo, double *hi)
{
    const lg_bounds *b = s->gb[g];
    double l = src < 0 ? b->xlo[i] : b->lo[src][i], h = src < 0 ? b->xhi[i] : b->hi[src][i];
    if (src >= 0) lg_bounds_post(&s->net->layers[src], l, h, &l, &h);
    *lo = l == l ? l : -INFINITY;
    *hi = h == h ? h : INFINITY;
}

double lg_bs_tnode_mag(double l, double h)
{
    double a = fabs(l), b = fabs(h);
    return a > b ? a : b;
}

/* The planes of tnode layer l in group g (its entry's bs_tplanes); 0 out of memory. */
static int lg_bt_planes(lg_backsub *s, int g, int l)
{
    size_t at = (size_t)g * (size_t)s->net->n_layers + (size_t)l;
    const lg_layer *L = &s->net->layers[l];
    const lg_vopdef *vop = lg_layer_vop(L);
    if (!s->tp[at] && !(s->tp[at] = malloc(vop->bs_tlen(L) * sizeof(double)))) return 0;
    if (!vop->bs_tplanes(s, g, l, s->tp[at])) return 0;
    s->tp_ok[at] = 1;
    return 1;
}

int lg_bs_tnode_ready(lg_backsub *s, int l)
{
    int nl = s->net->n_layers, ok = 1;
    for (int g = 0; g < s->ng; g++)
        if (!s->tp_ok[(size_t)g * (size_t)nl + (size_t)l] && !lg_bt_planes(s, g, l)) ok = 0;
    return ok;
}

int lg_bs_group_planes(lg_backsub *s, int g, int l, double *P)
{
    const lg_layer *L = &s->net->layers[l];
    const lg_vopdef *vop = lg_layer_vop(L);
    int n = L->n_out;
    size_t gs = (size_t)L->lin.op.group, rl = lg_bt_row_len(L, gs);
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
            lg_bs_tnode_post(s, g, L->lin.src, (int)(o0 + j), &lu[j], &lu[gs + j]);
            xm[o0 + j] = lg_bs_tnode_mag(lu[j], lu[gs + j]);
        }
        vop->bs_gplanes(s, g, l, G, gs, lu, lo_w + o0 * gs, lo_c + o0, up_w + o0 * gs, up_c + o0, xm + n + G * rl, work);
    }
    free(lu);
    free(work);
    size_t extra = (size_t)n / gs * rl;
    lg_bs_tgemm_sums((size_t)n, gs, lo_w, up_w, xm, xm + n + extra);
    return 1;
}

static inline void lg_bt_coef(lg_bt_acc *a, double *y, double coef, double w, double xm)
{
    if (w == 0.0) return; /* coef = 0 exactly */
    *y += coef;
    a->S += fabs(coef) * xm;
    a->und += xm;
    a->cnt += 1.0;
}

void lg_bs_tnode_row_end(lg_backsub *s, int r, const lg_bt_acc *a, double gam, double cr, double ms, double esh,
                         double eic)
{
    /* err += (2^-51 + γ')·S + 2^-1073·und + 2^-51·I + 2^-1072·nic, every sum above
     * taken up by its own rounding (≤ (cnt + 2)·2^-52 relative), each step rounded up */
    double grow = lg_up(1.0 + (a->cnt + a->nic + 2.0) * 0x1p-52);
    double e = lg_up(lg_up(lg_up(0x1p-51 + gam) * a->S) * grow);
    e = lg_up(e + lg_up(lg_up(a->und * grow) * 0x1p-1073));
    e = lg_up(e + lg_up(lg_up(a->I * grow) * 0x1p-51));
    e = lg_up(e + lg_up(a->nic * 0x1p-1072));
    e = lg_up(e + esh);
    e = lg_up(e + lg_up(eic * grow)); /* nic addends, each within 2^-53: grow covers them */
    if (a->bad || !(e < INFINITY)) e = INFINITY;
    s->err[r] = lg_up(s->err[r] + e);
    s->c[r] = cr;
    s->mass[r] = ms;
}

double lg_bs_group_step(lg_backsub *s, int l, int m, const double *A, double *Ya, double *Yb, double gam)
{
    (void)Yb;
    const lg_layer *L = &s->net->layers[l];
    const lg_vopdef *vop = lg_layer_vop(L);
    int n = L->n_out, nl = s->net->n_layers, ok = lg_bs_tnode_ready(s, l);
    size_t na = (size_t)L->lin.n_in, gs = (size_t)L->lin.op.group, rl = lg_bt_row_len(L, gs);
    int soft = vop->bs_shift && gs > 1;
    double *mu = soft ? malloc(gs * sizeof *mu) : NULL;
    int *idx = soft ? malloc(gs * sizeof *idx) : NULL;
    if (soft && (!mu || !idx)) ok = 0;
    /* the slopes go through dgemm per group (backsub_tgemm.h), Lm the coefficients each row
     * applies there; the element-wise loop where a group's slopes are not finite */
    size_t xoff = 2 * (size_t)n * gs + 3 * (size_t)n + (size_t)n / gs * rl;
    double *Lm = ok ? calloc((size_t)m * (size_t)n, sizeof *Lm) : NULL;
    for (int r = 0; r < m; r++) {
        const double *Ar = A + (size_t)r * (size_t)n;
        double *ya = Ya + (size_t)r * na;
        lg_bt_acc a = {0, 0, 0, 0, 0, !ok};
        double cr = s->c[r], ms = s->mass[r];
        const double *P = ok ? s->tp[(size_t)s->grp[r] * (size_t)nl + (size_t)l] : NULL;
        int row_icpt = 0; /* the group's intercept is the entry's bs_row_icpt (one for the group) */
        double esh = 0.0;  /* the shifts' rounding (the entry's bs_shift) */
        for (int o = 0; o < n && !a.bad; o++) {
            double lam = Ar[o];
            if (P && (size_t)o % gs == 0) { /* a group of zero coefficients adds nothing */
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
                    double es, t = vop->bs_shift(gs, Ar + o, lo_c + o, up_c + o, mu, &es, idx);
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
            if (P && vop->bs_row_icpt && (size_t)o % gs == 0) {
                /* the weighted sum's own bound when it beats the sum of the planes' intercepts */
                const double *lo_c = P + (size_t)n * gs, *up_c = lo_c + n + (size_t)n * gs;
                const double *rd = up_c + 2 * (size_t)n + (size_t)o / gs * rl;
                double sum = 0.0, rv = vop->bs_row_icpt(gs, rd, Ar + o, L->lin.W + 0);
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
        lg_bs_tnode_row_end(s, r, &a, gam, cr, ms, esh, 0.0);
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
    return (double)n + (soft ? (double)(n / (int)gs) : 0.0);
}

double lg_bs_tnode_step(lg_backsub *s, int l, int m, const double *A, double *Ya, double *Yb, double gam)
{
    return lg_layer_vop(&s->net->layers[l])->bs_tstep(s, l, m, A, Ya, Yb, gam);
}
