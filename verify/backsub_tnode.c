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
    free(s->tscr);
    s->tscr = NULL;
    s->tscr_len = 0;
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

/* Row r's coefficients Ar through the groups of node l (planes P, their sums at P + xoff): the
 * shifts, intercepts and rounding sums of the row; the slopes of a group with finite ones go to
 * Lr (every entry of the group written, use[G] = 1 when one is not 0), the others element-wise
 * into ya. The sums may be taken in any order: the constant's rounding is covered by the final
 * margin (bounds.h lg_bounds_margin, every intercept counted), the rounding sums' own by the
 * growth factor of lg_bs_tnode_row_end, both for every summation order (cnt and nic are
 * integers, exact). */
static void lg_bs_group_row(lg_backsub *s, int l, int r, const double *Ar, const double *P, size_t xoff, double *Lr,
                            unsigned char *use, double *ya, double gam, double *mu, int *idx)
{
    const lg_layer *L = &s->net->layers[l];
    const lg_vopdef *vop = lg_layer_vop(L);
    size_t n = (size_t)L->n_out, gs = (size_t)L->lin.op.group, rl = lg_bt_row_len(L, gs);
    int soft = vop->bs_shift && gs > 1;
    lg_bt_acc a = {0, 0, 0, 0, 0, 0};
    double cr = s->c[r], ms = s->mass[r];
    double esh = 0.0; /* the shifts' rounding (the entry's bs_shift) */
    const double *lo_w = P, *lo_c = lo_w + n * gs, *up_w = lo_c + n, *up_c = up_w + n * gs;
    const double *xm = up_c + n, *X = P + xoff;
    const double *Pl = lg_bs_tgemm_P(X, n, 0), *Pu = lg_bs_tgemm_P(X, n, 1);
    const double *Ul = lg_bs_tgemm_U(X, n, 0), *Uu = lg_bs_tgemm_U(X, n, 1);
    const double *Nl = lg_bs_tgemm_nnz(X, n, 0), *Nu = lg_bs_tgemm_nnz(X, n, 1);
    for (size_t G = 0, o0 = 0; o0 < n; G++, o0 += gs) {
        const double *ag = Ar + o0;
        if (use) use[G] = 0;
        int any = 0; /* a group of zero coefficients adds nothing */
        for (size_t j = 0; j < gs; j++) any |= ag[j] != 0.0;
        if (!any) continue;
        const double *lamv = ag;
        if (soft) {
            /* Σ s = 1 over the group: the coefficients shifted by the weighted median t */
            double es, t = vop->bs_shift(gs, ag, lo_c + o0, up_c + o0, mu, &es, idx);
            if (t != 0.0) {
                cr += t;
                ms += fabs(t);
                a.I += fabs(t);
                a.nic += 1.0;
                esh = lg_up(esh + es);
            }
            lamv = mu;
        }
        int row_icpt = 0; /* the group's intercept is the entry's bs_row_icpt (one for the group) */
        if (vop->bs_row_icpt) {
            /* the weighted sum's own bound when it beats the sum of the planes' intercepts */
            const double *rd = up_c + 2 * n + G * rl;
            double sum = 0.0, rv = vop->bs_row_icpt(gs, rd, ag, L->lin.W + 0);
            for (size_t j = 0; j < gs; j++)
                if (ag[j] != 0.0) sum += ag[j] * (ag[j] > 0.0 ? lo_c[o0 + j] : up_c[o0 + j]);
            row_icpt = rv > sum;
            if (row_icpt) {
                cr += rv;
                ms += fabs(rv);
                a.I += fabs(rv);
                a.nic += 1.0;
            }
        }
        int fin = Lr && lg_bs_tgemm_finite(X, n, G), used = 0;
        if (fin) { /* the sums in two lanes (any order: see lg_bs_group_row) */
            double S[2] = {0, 0}, U[2] = {0, 0}, C[2] = {0, 0}, ic2[2] = {0, 0}, I[2] = {0, 0}, ni[2] = {0, 0};
            for (size_t j = 0; j < gs; j++) {
                size_t o = o0 + j, q = j & 1;
                double lam = lamv[j];
                Lr[o] = lam == 0.0 ? 0.0 : lam;
                if (lam == 0.0) continue;
                int lo = lam > 0.0;
                used = 1;
                S[q] += fabs(lam) * (lo ? Pl : Pu)[o];
                U[q] += (lo ? Ul : Uu)[o];
                C[q] += (lo ? Nl : Nu)[o];
                if (row_icpt) continue;
                double ic = lam * (lo ? lo_c[o] : up_c[o]);
                ic2[q] += ic;
                I[q] += fabs(ic);
                ni[q] += 1.0;
            }
            a.S += S[0] + S[1];
            a.und += U[0] + U[1];
            a.cnt += C[0] + C[1];
            cr += ic2[0] + ic2[1];
            ms += I[0] + I[1];
            a.I += I[0] + I[1];
            a.nic += ni[0] + ni[1];
            if (use) use[G] = (unsigned char)used;
            continue;
        }
        for (size_t j = 0; j < gs; j++) {
            size_t o = o0 + j;
            double lam = lamv[j];
            if (fin) Lr[o] = lam == 0.0 ? 0.0 : lam;
            if (lam == 0.0) continue;
            int lo = lam > 0.0;
            if (fin) {
                used = 1;
                a.S += fabs(lam) * (lo ? Pl : Pu)[o];
                a.und += (lo ? Ul : Uu)[o];
                a.cnt += (lo ? Nl : Nu)[o];
            } else {
                const double *w = (lo ? lo_w : up_w) + o * gs;
                for (size_t q = 0; q < gs; q++) lg_bt_coef(&a, &ya[o0 + q], lam * w[q], w[q], xm[o0 + q]);
            }
            if (row_icpt) continue;
            double ic = lam * (lo ? lo_c[o] : up_c[o]);
            cr += ic;
            ms += fabs(ic);
            a.I += fabs(ic);
            a.nic += 1.0;
        }
        if (use) use[G] = (unsigned char)used;
    }
    lg_bs_tnode_row_end(s, r, &a, gam, cr, ms, esh, 0.0);
}

/* The group step's scratch of m rows over n outputs (Lm [m][n], use [m][n/gs]), kept in s
 * between calls; NULL when out of memory. */
static double *lg_bs_group_scratch(lg_backsub *s, size_t m, size_t n, size_t gs, unsigned char **use)
{
    size_t need = m * n * sizeof(double) + m * (n / gs);
    if (need > s->tscr_len) {
        free(s->tscr);
        s->tscr = malloc(need);
        s->tscr_len = s->tscr ? need : 0;
    }
    if (!s->tscr) return NULL;
    *use = (unsigned char *)((double *)s->tscr + m * n);
    return s->tscr;
}

double lg_bs_group_step(lg_backsub *s, int l, int m, const double *A, double *Ya, double *Yb, double gam)
{
    (void)Yb;
    const lg_layer *L = &s->net->layers[l];
    const lg_vopdef *vop = lg_layer_vop(L);
    int n = L->n_out, nl = s->net->n_layers, ok = lg_bs_tnode_ready(s, l);
    size_t na = (size_t)L->lin.n_in, gs = (size_t)L->lin.op.group, rl = lg_bt_row_len(L, gs), ngr = (size_t)n / gs;
    int soft = vop->bs_shift && gs > 1;
    double *mu = soft ? malloc(gs * sizeof *mu) : NULL;
    int *idx = soft ? malloc(gs * sizeof *idx) : NULL;
    if (soft && (!mu || !idx)) ok = 0;
    /* the slopes go through dgemm per group (backsub_tgemm.h), Lm the coefficients each row
     * applies there (use: the row's groups that apply any); the element-wise loop where a
     * group's slopes are not finite */
    size_t xoff = 2 * (size_t)n * gs + 3 * (size_t)n + ngr * rl;
    unsigned char *use = NULL;
    double *Lm = ok ? lg_bs_group_scratch(s, (size_t)m, (size_t)n, gs, &use) : NULL;
    for (int r = 0; r < m; r++) {
        if (!ok) { /* no planes: no bound */
            lg_bt_acc a = {0, 0, 0, 0, 0, 1};
            lg_bs_tnode_row_end(s, r, &a, gam, s->c[r], s->mass[r], 0.0, 0.0);
            continue;
        }
        const double *P = s->tp[(size_t)s->grp[r] * (size_t)nl + (size_t)l];
        lg_bs_group_row(s, l, r, A + (size_t)r * (size_t)n, P, xoff, Lm ? Lm + (size_t)r * (size_t)n : NULL,
                        Lm ? use + (size_t)r * ngr : NULL, Ya + (size_t)r * na, gam, mu, idx);
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
                                       (const double *const *)pl + s->ng, Lm, use, Ya))
            for (int r = 0; r < m; r++) s->err[r] = INFINITY; /* out of memory: no bound */
        free(pl);
    }
    free(mu);
    free(idx);
    return (double)n + (soft ? (double)(n / (int)gs) : 0.0);
}

double lg_bs_tnode_step(lg_backsub *s, int l, int m, const double *A, double *Ya, double *Yb, double gam)
{
    return lg_layer_vop(&s->net->layers[l])->bs_tstep(s, l, m, A, Ya, Yb, gam);
}
