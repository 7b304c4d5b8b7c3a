/* devnet_refine.c — α-CROWN and input branch and bound on the difference
 * network (devnet_refine.h). */
#include "verify/devnet_refine.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify/alpha.h"
#include "verify/devnet_joint.h"

lg_status lg_devnet_alpha(lg_devnet *v, const lg_runctx *run, double *e, double *ain)
{
    if (v->valid != 1) return LG_OK;
    /* the exact route: D0 and its bounds, the rounding envelope in place of the noise (devnet.h) */
    const lg_net *D = v->exact ? &v->diff0 : &v->diff;
    lg_bounds *bb = v->exact ? &v->b0 : &v->b;
    const int no = lg_net_n_out(v->relu), m = 2 * no, size = lg_alpha_size(D), L = v->relu->n_layers;
    const size_t ni = (size_t)D->n_in, stride = (size_t)v->diff.n_in;
    double *C = calloc((size_t)m * (size_t)no + (size_t)m * 2, sizeof *C);
    double *al = malloc((size_t)m * (size_t)size * sizeof *al);
    double *A = ain ? malloc((size_t)m * ni * sizeof *A) : NULL;
    if (!C || !al || (ain && !A)) {
        free(C);
        free(al);
        free(A);
        return lg_fail(LG_ERR_NOMEM, "devnet: out of memory");
    }
    double *d = C + (size_t)m * (size_t)no, *out = d + m;
    for (int j = 0; j < no; j++) { /* row 2j: min y_j; row 2j+1: min −y_j */
        C[(size_t)(2 * j) * (size_t)no + (size_t)j] = 1.0;
        C[(size_t)(2 * j + 1) * (size_t)no + (size_t)j] = -1.0;
    }
    lg_alpha_default(bb, D, m, al);
    lg_status st = lg_alpha_optimize(bb, D, m, C, d, LG_DEVNET_ALPHA_STEPS, 0.1, run, al, out, A);
    if (st == LG_ERR_TIMEOUT) { /* no bound finished: nothing to add */
        st = LG_OK;
        goto done;
    }
    if (st != LG_OK) goto done;
    const double *dl = bb->lo[2 * L + 1], *dh = bb->hi[2 * L + 1];
    for (int j = 0; j < no; j++) {
        double lo = fmax(dl[j], out[2 * j]), hi = fmin(dh[j], -out[2 * j + 1]);
        /* computed outputs: D's value plus both nets' output rounding ξ (devnet.c), or D0's value
         * plus the rounding envelope */
        double r = v->exact ? v->env[j] : v->xi[j] + v->xi[no + j];
        double x = (fmax(fabs(lo), fabs(hi)) + r) * (1.0 + 4.0 * DBL_EPSILON);
        if (x < e[j]) e[j] = x; /* NaN: kept */
        if (A) /* the worse row of output j: the larger of −lower(y_j), −lower(−y_j) (stride D's n_in) */
            memcpy(ain + (size_t)j * stride, A + (size_t)(out[2 * j] < out[2 * j + 1] ? 2 * j : 2 * j + 1) * ni,
                   ni * sizeof *A);
    }
done:
    free(C);
    free(al);
    free(A);
    return st;
}

static double lg_devnet_emax(const double *e, int no)
{
    double m = 0.0;
    for (int j = 0; j < no; j++)
        if (!(e[j] <= m)) m = e[j];
    return m;
}

/* The coordinate of the box [lo, hi] to split: the largest |ain_i|·width_i
 * over the input x (ain NULL or all 0: the widest, in normalised units); −1
 * if every coordinate is a point. */
static int lg_devnet_pick(const lg_net *net, const double *lo, const double *hi, const double *ain)
{
    int best = -1;
    double bs = 0.0;
    for (int pass = ain ? 0 : 1; pass < 2 && best < 0; pass++)
        for (int i = 0; i < net->n_in; i++) {
            double w = (hi[i] - lo[i]) / (net->in_div ? fabs(net->in_div[i]) : 1.0);
            double s = pass == 0 ? fabs(ain[i]) * w : w;
            if (hi[i] > lo[i] && s > bs) {
                bs = s;
                best = i;
            }
        }
    return best;
}

/* One leaf [lo, hi] inside a parent whose bound is ep (per output): e = the
 * smallest of ep, the difference network's bound, its α-CROWN bound, the
 * propagation with both nets' bounds from it and the joint relaxation on
 * those bounds (devnet_joint.h); ain as lg_devnet_alpha. */
static lg_status lg_devnet_leaf(lg_dev *dev, lg_devnet *v, const double *lo, const double *hi, const double *ep,
                                const lg_runctx *run, double *e, double *ain, double *s1, double *s2)
{
    const int no = lg_net_n_out(v->relu);
    lg_status st = lg_devnet_bound(v, lo, hi, run, s1);
    if (st != LG_OK) return st;
    for (int j = 0; j < no; j++) e[j] = fmin(ep[j], s1[j]);
    if (!v->valid) return LG_OK;
    if ((st = lg_devnet_alpha(v, run, e, ain)) != LG_OK) return st;
    lg_dev_ext x = {lg_devnet_pre_lo(v, 0), lg_devnet_pre_hi(v, 0), lg_devnet_pre_lo(v, 1), lg_devnet_pre_hi(v, 1), 1, NULL, NULL};
    double dd;
    st = lg_dev_bound_box_pair(dev, lo, hi, &x, &dd, s2, NULL);
    if (st == LG_ERR_ARG) return LG_OK; /* bounds it refuses: that bound is left out */
    if (st != LG_OK) return st;
    for (int j = 0; j < no; j++) e[j] = fmin(e[j], s2[j]);
    /* the joint relaxation on the leaf (devnet_joint.h) */
    if ((st = lg_devjoint_bound(v, run, s2)) != LG_OK) return st;
    for (int j = 0; j < no; j++) e[j] = fmin(e[j], s2[j]);
    return LG_OK;
}

lg_status lg_devnet_refine(lg_dev *dev, lg_devnet *v, const double *lo, const double *hi, double want,
                           const lg_runctx *run, double *e, int *split)
{
    const int no = lg_net_n_out(v->relu), n0 = v->relu->n_in, cap = LG_DEVNET_LEAVES;
    const size_t ni = (size_t)v->diff.n_in, n = (size_t)n0;
    *split = 0;
    if (lg_devnet_emax(e, no) <= want) return LG_OK;
    /* leaves: box [cap][2][n0], bound [cap][no], split coordinate [cap] */
    double *box = malloc(((size_t)cap * (2 * n + (size_t)no) + (size_t)no * ni + 4 * (size_t)no) * sizeof *box);
    int *dim = malloc((size_t)cap * sizeof *dim);
    if (!box || !dim) {
        free(box);
        free(dim);
        return lg_fail(LG_ERR_NOMEM, "devnet: out of memory");
    }
    double *eb = box + (size_t)cap * 2 * n, *ain = eb + (size_t)cap * (size_t)no, *s1 = ain + (size_t)no * ni;
    double *s2 = s1 + no, *ec = s2 + no, *eg = ec + no;
    lg_status st = LG_OK;
    memcpy(box, lo, n * sizeof *box);
    memcpy(box + n, hi, n * sizeof *box);
    memset(ain, 0, (size_t)no * ni * sizeof *ain);
    /* the root: v holds its bounds (the caller's lg_devnet_bound) */
    if ((st = lg_devnet_alpha(v, run, e, ain)) != LG_OK) goto done;
    memcpy(eb, e, (size_t)no * sizeof *eb);
    int nl = 1, worst = 0;
    {
        int j = 0;
        for (int q = 1; q < no; q++)
            if (!(e[q] <= e[j])) j = q;
        dim[0] = lg_devnet_pick(v->relu, lo, hi, ain + (size_t)j * ni);
    }
    double hist[LG_DEVNET_STALL + 1]; /* the box's bound (the worst leaf's) before each split */
    while (nl < cap && !lg_runctx_expired(run)) {
        worst = 0;
        for (int i = 1; i < nl; i++)
            if (!(lg_devnet_emax(eb + (size_t)i * (size_t)no, no) <= lg_devnet_emax(eb + (size_t)worst * (size_t)no, no)))
                worst = i;
        const double gmax = lg_devnet_emax(eb + (size_t)worst * (size_t)no, no);
        if (gmax <= want || dim[worst] < 0) break;
        /* stalled: the last LG_DEVNET_STALL splits lowered the bound by under 1 % */
        if (nl > LG_DEVNET_STALL && !(gmax < 0.99 * hist[(nl - 1 - LG_DEVNET_STALL) % (LG_DEVNET_STALL + 1)])) break;
        hist[(nl - 1) % (LG_DEVNET_STALL + 1)] = gmax;
        double *pl = box + (size_t)worst * 2 * n, *ph = pl + n, *pe = eb + (size_t)worst * (size_t)no;
        const int k = dim[worst];
        const double mid = pl[k] + 0.5 * (ph[k] - pl[k]); /* lo ≤ mid ≤ hi: the halves cover the leaf */
        /* child 0 replaces the leaf in place only once both children are bounded */
        double *cl = box + (size_t)nl * 2 * n, *ch = cl + n;
        double *e0 = ec, *e1 = eb + (size_t)nl * (size_t)no;
        int d0, d1;
        memcpy(cl, pl, n * sizeof *cl);
        memcpy(ch, ph, n * sizeof *ch);
        ch[k] = mid; /* child 0: [lo, mid] */
        *split = 1;
        if ((st = lg_devnet_leaf(dev, v, cl, ch, pe, run, e0, ain, s1, s2)) != LG_OK) break;
        {
            int j = 0;
            for (int q = 1; q < no; q++)
                if (!(e0[q] <= e0[j])) j = q;
            d0 = lg_devnet_pick(v->relu, cl, ch, v->valid == 1 ? ain + (size_t)j * ni : NULL);
        }
        cl[k] = mid; /* child 1: [mid, hi] */
        ch[k] = ph[k];
        if ((st = lg_devnet_leaf(dev, v, cl, ch, pe, run, e1, ain, s1, s2)) != LG_OK) break;
        {
            int j = 0;
            for (int q = 1; q < no; q++)
                if (!(e1[q] <= e1[j])) j = q;
            d1 = lg_devnet_pick(v->relu, cl, ch, v->valid == 1 ? ain + (size_t)j * ni : NULL);
        }
        ph[k] = mid;
        memcpy(pe, e0, (size_t)no * sizeof *pe);
        dim[worst] = d0;
        dim[nl] = d1;
        nl++;
    }
    if (st == LG_ERR_TIMEOUT) st = LG_OK; /* the leaves bounded so far stand */
    if (st != LG_OK) goto done;
    for (int j = 0; j < no; j++) eg[j] = 0.0;
    for (int i = 0; i < nl; i++)
        for (int j = 0; j < no; j++) {
            double x = eb[(size_t)i * (size_t)no + (size_t)j];
            if (!(x <= eg[j])) eg[j] = x;
        }
    for (int j = 0; j < no; j++)
        if (eg[j] < e[j]) e[j] = eg[j];
done:
    free(box);
    free(dim);
    return st;
}
