/* opstage_bilinear.c — the product node's verify entries (opstage.h entry
 * "product", DESIGN.md §1 "Transformer nodes"): its interval bound (each
 * pair's four corner products, the sums widened by the margin rule,
 * bounds.h, as a linear row's), the attack's backward step, its rows for
 * the complete back-ends (tnode_planes.h: McCormick's planes per pair, an
 * auxiliary value per pair when an output sums K > 1 of them) and its
 * McCormick α for the α search (two per node, lg_backsub.talpha). Its
 * back-substitution planes are backsub_tnode.c's. The rows' scratch is
 * allocated per call and freed before returning; nothing else allocates. */
#include "verify/opstage.h"

#include <math.h>
#include <stdlib.h>

#include "encode/problem.h"
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

