/* opstage_bilinear.c — the product node's verify entries (opstage.h entry
 * "product", DESIGN.md §1 "Transformer nodes"): its interval bound (each
 * pair's four corner products, the sums widened by the margin rule,
 * bounds.h, as a linear row's), the attack's backward step, its rows for
 * the complete back-ends (tnode_planes.h: McCormick's planes per pair, an
 * auxiliary value per pair when an output sums K > 1 of them) and its
 * McCormick α for the α search (two per node, lg_backsub.talpha), and its
 * back-substitution planes and step (backsub_tnode.h; the pairs' sums:
 * backsub_tbil.h). The rows' and the step's scratch is allocated per call
 * and freed before returning; the planes live in the caller's lg_backsub
 * (lg_bs_tnode_ready). */
#include "verify/opstage.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "core/act_relax.h"
#include "encode/problem.h"
#include "verify/devgrad.h"
#include "verify/backsub_tbil.h"
#include "verify/backsub_tnode.h"
#include "verify/relax_bilinear.h"
#include "verify/tnode_planes.h"

/* [pl, ph] ⊇ [al, ah]·[bl, bh] as the four products of doubles (each one
 * rounding: the margin rule covers it); a 0·∞ gives no bound. */
static void lg_bt_mul(double al, double ah, double bl, double bh, double *pl, double *ph)
{
    double p[4] = {al * bl, al * bh, ah * bl, ah * bh};
    double l = p[0], h = p[0];
    for (int i = 0; i < 4; i++) {
        if (p[i] != p[i]) {
            *pl = -INFINITY;
            *ph = INFINITY;
            return;
        }
        l = fmin(l, p[i]);
        h = fmax(h, p[i]);
    }
    *pl = l;
    *ph = h;
}

void lg_bounds_product(const lg_net *net, const lg_layer *L, const double *al_, const double *ah_, const size_t *noff,
                       double *lo, double *hi)
{
    (void)net;
    size_t so = noff[L->lin.src + 1], sb = noff[L->lin.op.src_b + 1];
    const double *al = al_ + so, *ah = ah_ + so, *bl = al_ + sb, *bh = ah_ + sb;
    size_t K = (size_t)L->lin.op.K;
    const int *ia = L->lin.map, *ib = L->lin.map + (size_t)L->n_out * K;
    for (size_t o = 0; o < (size_t)L->n_out; o++) {
        double sl = 0, sh = 0, mass = 0;
        for (size_t q = o * K; q < (o + 1) * K; q++) {
            double pl, ph;
            lg_bt_mul(al[ia[q]], ah[ia[q]], bl[ib[q]], bh[ib[q]], &pl, &ph);
            sl += pl;
            sh += ph;
            mass += fmax(fabs(pl), fabs(ph));
        }
        double l = sl - lg_bounds_margin(sl, mass, (double)K), h = sh + lg_bounds_margin(sh, mass, (double)K);
        lo[o] = isfinite(l) ? l : -INFINITY;
        hi[o] = isfinite(h) ? h : INFINITY;
    }
}

void lg_attack_product_backward(const lg_layer *L, const double *a, const double *b, const double *out,
                                const double *dz, double *da, double *db)
{ /* ∂(a_i·b_j) = b_j·da_i + a_i·db_j */
    (void)out;
    int n = L->n_out;
    size_t K = (size_t)L->lin.op.K;
    const int *ia = L->lin.map, *ib = L->lin.map + (size_t)n * K;
    for (size_t o = 0; o < (size_t)n; o++)
        for (size_t q = o * K; q < (o + 1) * K; q++) {
            da[ia[q]] += dz[o] * b[ib[q]];
            db[ib[q]] += dz[o] * a[ia[q]];
        }
}

/* One product pair's planes on v(pa)·v(pb) into rows on target t. */
static lg_status tp_pair(lg_trelax *r, int t, int pa, int pb, double la, double ua, double lb, double ub)
{
    lg_status st = LG_OK;
    for (int side = 0; side < 2 && st == LG_OK; side++) {
        lg_bilinear_planes P;
        double al = side == 0 ? 1.0 : 0.0;
        if (!lg_relax_bilinear(la, ua, lb, ub, al, al, &P)) continue; /* vacuous */
        /* t − a·x − b·y ≥ lo_c ; t − a·x − b·y ≤ up_c */
        for (int up = 0; up < 2 && st == LG_OK; up++) {
            double a = up ? P.up_a : P.lo_a, bb = up ? P.up_b : P.lo_b, c = up ? P.up_c : P.lo_c;
            int var[3] = {t, pa, pb};
            double coef[3] = {1.0, -a, -bb};
            int n = 3;
            if (pa == pb) { /* x·x: one coefficient, kept only when the sum is exact */
                double s = a + bb;
                if (!isfinite(s) || s - a != bb || s - bb != a) continue;
                coef[1] = -s;
                n = 2;
            }
            if (!isfinite(c)) continue;
            st = lg_trelax_add_row(r, up ? 'L' : 'G', c, n, var, coef);
        }
    }
    return st;
}

lg_status lg_product_relax_rows(const lg_net *net, const lg_bounds *b, int k, struct lg_trelax *r)
{
    const lg_layer *L = &net->layers[k];
    int K = L->lin.op.K, n = L->n_out;
    const int *ia = L->lin.map, *ib = L->lin.map + (size_t)n * (size_t)K;
    int oa = (int)lg_net_node_offset(net, L->lin.src), ob = (int)lg_net_node_offset(net, L->lin.op.src_b);
    int oz = (int)lg_net_node_offset(net, k);
    int *var = malloc(((size_t)K + 1) * sizeof *var);
    double *coef = malloc(((size_t)K + 1) * sizeof *coef);
    lg_status st = LG_OK;
    if (!var || !coef) {
        st = lg_fail(LG_ERR_NOMEM, "relaxation: out of memory");
        goto done;
    }
    for (int o = 0; o < n && st == LG_OK; o++) {
        var[0] = oz + o;
        coef[0] = 1.0;
        for (int q = 0; q < K && st == LG_OK; q++) {
            size_t e = (size_t)o * (size_t)K + (size_t)q;
            double la, ua, lb, ub;
            lg_tnode_post(net, b, L->lin.src, ia[e], &la, &ua);
            lg_tnode_post(net, b, L->lin.op.src_b, ib[e], &lb, &ub);
            int t = oz + o;
            if (K > 1) { /* the pair's own value, within its image */
                double pl, ph;
                lg_bilinear_image(la, ua, lb, ub, &pl, &ph);
                if (!isfinite(pl) || !isfinite(ph)) {
                    st = lg_fail(LG_ERR_ARG, "relaxation: layer %d: a product's bounds are not finite", k);
                    break;
                }
                if ((st = lg_trelax_add_aux(r, pl, ph, &t))) break;
                var[q + 1] = t;
                coef[q + 1] = -1.0;
            }
            st = tp_pair(r, t, oa + ia[e], ob + ib[e], la, ua, lb, ub);
        }
        if (st == LG_OK && K > 1) st = lg_trelax_add_row(r, 'E', 0.0, K + 1, var, coef); /* z − Σ t = 0 */
    }
    r->n_product++;
done:
    free(var);
    free(coef);
    return st;
}


/* Plane table of a product layer: its pairs q = o·K + k hold
 * [lo_a, lo_b, lo_c, up_a, up_b, up_c, max|a|, max|b|], then the sums of
 * backsub_tbil.h. */
#define LG_BT_PAIR LG_BS_TBIL_PAIR

size_t lg_bs_product_len(const lg_layer *L)
{
    size_t n = (size_t)L->n_out;
    return n * (size_t)L->lin.op.K * LG_BT_PAIR + LG_BS_TBIL_LEN(n);
}

int lg_bs_product_addends(const lg_layer *L)
{
    return L->n_out * L->lin.op.K; /* every pair could read one entry */
}

int lg_bs_product_planes(lg_backsub *s, int g, int l, double *P)
{
    const lg_layer *L = &s->net->layers[l];
    int n = L->n_out;
    int K = L->lin.op.K;
    const int *ia = L->lin.map, *ib = L->lin.map + (size_t)n * (size_t)K;
    for (size_t q = 0; q < (size_t)n * (size_t)K; q++) {
        double la, ua, lb, ub;
        lg_bs_tnode_post(s, g, L->lin.src, ia[q], &la, &ua);
        lg_bs_tnode_post(s, g, L->lin.op.src_b, ib[q], &lb, &ub);
        lg_bilinear_planes p;
        lg_relax_bilinear(la, ua, lb, ub, s->talpha[2 * l], s->talpha[2 * l + 1], &p);
        double *e = P + q * LG_BT_PAIR;
        e[0] = p.lo_a, e[1] = p.lo_b, e[2] = p.lo_c, e[3] = p.up_a, e[4] = p.up_b, e[5] = p.up_c;
        e[6] = lg_bs_tnode_mag(la, ua), e[7] = lg_bs_tnode_mag(lb, ub);
    }
    lg_bs_tbil_sums((size_t)n, (size_t)K, P, P + (size_t)n * (size_t)K * LG_BT_PAIR);
    return 1;
}

/* One lane of a row's sums: S, und, cnt as lg_bt_acc, c the intercepts, I their Σ |·|. */
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

double lg_bs_product_step(lg_backsub *s, int l, int m, const double *A, double *Ya, double *Yb, double gam)
{
    const lg_layer *L = &s->net->layers[l];
    int n = L->n_out, nl = s->net->n_layers, ok = lg_bs_tnode_ready(s, l);
    int K = L->lin.op.K;
    size_t na = (size_t)L->lin.n_in, nb = (size_t)L->lin.op.n_in_b;
    /* the pairs' slopes applied to blocks of rows (backsub_tbil.h) when every group's are finite */
    size_t boff = (size_t)n * (size_t)K * LG_BT_PAIR;
    int fast = ok;
    for (int g = 0; fast && g < s->ng; g++) fast = lg_bs_tbil_finite(s->tp[(size_t)g * (size_t)nl + (size_t)l] + boff, (size_t)n);
    for (int r = 0; r < m; r++) {
        const double *Ar = A + (size_t)r * (size_t)n;
        double *ya = Ya + (size_t)r * na, *yb = Yb + (size_t)r * nb;
        lg_bt_acc a = {0, 0, 0, 0, 0, !ok};
        double cr = s->c[r], ms = s->mass[r];
        const double *P = ok ? s->tp[(size_t)s->grp[r] * (size_t)nl + (size_t)l] : NULL;
        double eic = 0.0; /* Σ |λ_o|·E_o of the summed intercepts (backsub_tbil.h) */
        for (int o = 0; o < n && !a.bad; o++) {
            double lam = Ar[o];
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
            } else {
                const int *ia = L->lin.map + (size_t)o * (size_t)K, *ib = L->lin.map + (size_t)n * (size_t)K + (size_t)o * (size_t)K;
                /* the sums of lg_bt_pair and of the intercepts in two lanes, even k in lane 0 and
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
            }
        }
        lg_bs_tnode_row_end(s, r, &a, gam, cr, ms, 0.0, eic);
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
    return (double)n * K;
}

void lg_reach_product(const lg_layer *L, int o, unsigned char **rel)
{
    const int *ia = L->lin.map, *ib = L->lin.map + (size_t)L->n_out * (size_t)L->lin.op.K;
    for (size_t q = (size_t)o * (size_t)L->lin.op.K; q < (size_t)(o + 1) * (size_t)L->lin.op.K; q++) {
        if (L->lin.src >= 0) rel[L->lin.src][ia[q]] = 1;
        if (L->lin.op.src_b >= 0) rel[L->lin.op.src_b][ib[q]] = 1;
    }
}

/* The certified deviation's interval vector–Jacobian product of this kind (its verify entry's
 * dev_vjp, verify/devgrad.h): from the node's output adjoint (centre vm, radius vr) add an
 * enclosure of vᵀ·J over the region into the sources' adjoints, in outward-rounded interval
 * arithmetic (DESIGN.md §1 "Deviation bound", *the interval gradient*). */
/* *am += v·[lo, hi] as the point v times b = c ± h (c = mid, h its radius rounded up): the centre
 * v·c summed to nearest, its product's and sum's rounding (u·|p| + u·|s|, and 2^-1074 for an
 * underflow) and |v|·h into *ar rounded up (lg_devgrad_acc's claim: [am − ar, am + ar] holds
 * the old interval plus v·b). */
static void dg_point_acc(double v, double av, double lo, double hi, double *am, double *ar)
{
    double c = 0.5 * lo + 0.5 * hi, h = fmax(lg_up(hi - c), lg_up(c - lo));
    double p = v * c, s = *am + p;
    double e = lg_up(lg_up(lg_up(av * h) + lg_up((fabs(p) + fabs(s)) * DBL_EPSILON)) + DBL_TRUE_MIN);
    if (!(e <= DBL_MAX) || !isfinite(s)) { /* not finite (a NaN end too): no bound */
        *ar = INFINITY;
        return;
    }
    *am = s;
    *ar = lg_up(*ar + e);
}

void lg_devgrad_product(const lg_layer *L, const lg_devgrad_src *S, const double *vm, const double *vr, lg_dv *work)
{
    (void)work;
    size_t n = (size_t)L->n_out, K = (size_t)L->lin.op.K;
    const int *ia = L->lin.map, *ib = L->lin.map + n * K;
    for (size_t o = 0; o < n; o++) {
        if (vm[o] == 0.0 && vr[o] == 0.0) continue;
        if (vr[o] == 0.0 && isfinite(vm[o])) { /* a point v: v·b = v·mid(b) ± |v|·rad(b) */
            double v = vm[o], av = fabs(v);
            for (size_t q = o * K; q < (o + 1) * K; q++) {
                dg_point_acc(v, av, S->blo[ib[q]], S->bhi[ib[q]], &S->am[ia[q]], &S->ar[ia[q]]);
                dg_point_acc(v, av, S->alo[ia[q]], S->ahi[ia[q]], &S->bm[ib[q]], &S->br[ib[q]]);
            }
            continue;
        }
        lg_dv v = lg_devgrad_iv(vm[o], vr[o]);
        for (size_t q = o * K; q < (o + 1) * K; q++) {
            lg_dv a = {S->alo[ia[q]], S->ahi[ia[q]]}, b = {S->blo[ib[q]], S->bhi[ib[q]]};
            lg_devgrad_acc(lg_dv_mul(v, b), &S->am[ia[q]], &S->ar[ia[q]]);
            lg_devgrad_acc(lg_dv_mul(v, a), &S->bm[ib[q]], &S->br[ib[q]]);
        }
    }
}
