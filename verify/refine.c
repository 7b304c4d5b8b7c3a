/* refine.c — certified LP refinement of the intermediate bounds (refine.h). */
#include "verify/refine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "verify/alpha.h"
#include "verify/bounds_lp.h"

lg_refine_opts lg_refine_opts_default(void)
{
    lg_refine_opts o = {5, 0.5, 2, 64, 2};
    return o;
}

/* The search of one bound: min over the LP of obj·v + c0 with the ReLU
 * splits of the nodes above fixed in the LP's bounds and rows. */
typedef struct lg_refine_search {
    lg_lp_net *n;
    const lg_bounds *b;
    const lg_net *net;
    const double *obj;
    double c0;
    const lg_runctx *run;
    unsigned char *fixed; /* [off[k]] 1 while a neuron is split on the path */
    long n_lp;
} lg_refine_search;

/* The unstable neuron of layers < k whose chord row carries the largest
 * dual weight in the last certificate (|y|·(−s·l), the bound it costs),
 * not fixed on the path: its flat index, or −1. */
static long lg_refine_pick(const lg_refine_search *S)
{
    const lg_lp_net *n = S->n;
    long best = -1;
    double best_w = 0.0;
    for (size_t f = 0; f < n->off[n->k]; f++) {
        int r = n->row_up[f];
        if (r < 0 || S->fixed[f]) continue;
        double y = fabs(lg_lp_relax_mult(&n->lp, r));
        if (y == 0.0) continue;
        double w = y * fabs(n->lp.rows[r].rhs);
        if (w > best_w) {
            best_w = w;
            best = (long)f;
        }
    }
    return best;
}

/* Layer and neuron of flat index f. */
static void lg_refine_unflat(const lg_lp_net *n, size_t f, int *j, int *o)
{
    int l = 0;
    while (n->off[l + 1] <= f) l++;
    *j = l;
    *o = (int)(f - n->off[l]);
}

/* A certified lower bound of the sub-LP at hand, `depth` splits below;
 * `parent` is a bound that already holds there (its parent's). */
static double lg_refine_min(lg_refine_search *S, int depth, double parent)
{
    lg_lp_net *n = S->n;
    double lb;
    S->n_lp++;
    if (lg_runctx_expired(S->run) || !lg_lp_relax_min(&n->lp, S->obj, S->c0, S->run, &lb)) return parent;
    if (lb < parent) lb = parent;
    if (depth <= 0 || lg_runctx_expired(S->run)) return lb;
    long f = lg_refine_pick(S);
    if (f < 0) return lb;
    int j, o;
    lg_refine_unflat(n, (size_t)f, &j, &o);
    int zc = n->base_z[j] + o, ac = n->base_a[j] + o, rge = n->row_ge[f];
    double zl = n->lp.lo[zc], zh = n->lp.hi[zc], al = n->lp.lo[ac], ah = n->lp.hi[ac];
    S->fixed[f] = 1;
    int dual = n->lp.dual;
    n->lp.dual = 1; /* bounds changed, objective kept */
    /* inactive: z ≤ 0, a = 0 */
    lg_lp_relax_col(&n->lp, zc, zl, 0.0);
    lg_lp_relax_col(&n->lp, ac, al, 0.0);
    double lb0 = lg_refine_min(S, depth - 1, lb);
    lg_lp_relax_col(&n->lp, zc, zl, zh);
    lg_lp_relax_col(&n->lp, ac, al, ah);
    double lb1 = lb; /* the active side, unless the deadline stops it */
    if (!lg_runctx_expired(S->run)) {
        /* active: z ≥ 0, a = z */
        lg_lp_relax_col(&n->lp, zc, 0.0, zh);
        lg_lp_relax_row_sense(&n->lp, rge, 'E');
        lb1 = lg_refine_min(S, depth - 1, lb);
        lg_lp_relax_row_sense(&n->lp, rge, 'G');
        lg_lp_relax_col(&n->lp, zc, zl, zh);
    }
    n->lp.dual = dual;
    S->fixed[f] = 0;
    double m = lb0 < lb1 ? lb0 : lb1;
    return m > lb ? m : lb;
}

/* −l·u/(u − l) of an unstable neuron: its triangle's height at 0 — how
 * much its relaxation costs. */
static double lg_refine_score(double l, double u) { return -l * u / (u - l); }

typedef struct lg_refine_cand {
    double score;
    int o;
} lg_refine_cand;

static int lg_refine_cand_cmp(const void *a, const void *b)
{
    double x = ((const lg_refine_cand *)a)->score, y = ((const lg_refine_cand *)b)->score;
    return x > y ? -1 : x < y ? 1 : ((const lg_refine_cand *)a)->o - ((const lg_refine_cand *)b)->o;
}

/* LP refinement of the chosen neurons of relu layer k. */
static lg_status lg_refine_layer(lg_bounds *b, const lg_net *net, int k, const lg_refine_opts *o,
                                 const lg_runctx *run, lg_refine_stats *s)
{
    const lg_layer *L = &net->layers[k];
    lg_refine_cand *cand = malloc(((size_t)L->n_out + 1) * sizeof *cand);
    if (!cand) return lg_fail(LG_ERR_NOMEM, "refine: out of memory");
    int nc = 0;
    for (int i = 0; i < L->n_out; i++)
        if (b->lo[k][i] < 0.0 && b->hi[k][i] > 0.0) cand[nc++] = (lg_refine_cand){lg_refine_score(b->lo[k][i], b->hi[k][i]), i};
    qsort(cand, (size_t)nc, sizeof *cand, lg_refine_cand_cmp);
    if (o->per_layer > 0 && nc > o->per_layer) nc = o->per_layer;
    lg_lp_net n;
    lg_status st = lg_lp_net_build(&n, b, net, k);
    if (st != LG_OK) {
        free(cand);
        return st == LG_ERR_NUMERIC ? LG_OK : st; /* no LP: the bounds stay */
    }
    double *obj = malloc(((size_t)n.lp.n_cols + 1) * sizeof *obj);
    unsigned char *fixed = calloc(n.off[k] + 1, 1);
    if (!obj || !fixed) {
        st = lg_fail(LG_ERR_NOMEM, "refine: out of memory");
        goto done;
    }
    s->layers++;
    lg_refine_search S = {&n, b, net, obj, 0.0, run, fixed, 0};
    for (int c = 0; c < nc && !lg_runctx_expired(run); c++) {
        int i = cand[c].o;
        for (int sign = 0; sign < 2 && !lg_runctx_expired(run); sign++) {
            if (!(b->lo[k][i] < 0.0 && b->hi[k][i] > 0.0)) break; /* stable now */
            double g = sign ? -1.0 : 1.0;
            if (!lg_lp_net_objective(&n, net, i, g, obj)) break;
            S.c0 = g * L->b[i];
            n.lp.dual = 0;
            double lb = lg_refine_min(&S, o->splits, -INFINITY);
            if (!isfinite(lb)) continue;
            if (sign == 0 && lb > b->lo[k][i]) {
                b->lo[k][i] = lb;
                s->n_tight++;
                s->n_stable += lb >= 0.0;
            } else if (sign == 1 && -lb < b->hi[k][i]) {
                b->hi[k][i] = -lb;
                s->n_tight++;
                s->n_stable += -lb <= 0.0;
            }
        }
    }
    s->n_lp += S.n_lp;
done:
    free(obj);
    free(fixed);
    free(cand);
    lg_lp_net_free(&n);
    return st;
}

lg_status lg_refine_bounds(lg_bounds *b, const lg_net *net, const lg_refine_opts *o, const lg_runctx *run,
                           lg_refine_stats *s)
{
    lg_refine_stats tmp;
    if (!s) s = &tmp;
    memset(s, 0, sizeof *s);
    double t0 = lg_now();
    if (lg_net_require_no_max(net, "LP refinement (run it on lg_net_lower_max's ReLU form)") != LG_OK)
        return LG_ERR_UNSUPPORTED;
    lg_status st = lg_bounds_check_net(net);
    if (st != LG_OK) return st;
    const lg_runctx *saved = b->run;
    b->run = run;
    int lp_layers = 0;
    for (int k = 1; k < net->n_layers && st == LG_OK; k++) {
        if (net->layers[k].act != LG_ACT_RELU || lg_bounds_unstable(b, net, k) == 0) continue;
        if (lg_runctx_expired(run)) {
            st = LG_ERR_TIMEOUT;
            break;
        }
        int nt = 0, changed = 0;
        if (o->alpha_steps > 0) {
            st = lg_alpha_tighten(b, net, k, o->alpha_steps, o->alpha_lr, run, &nt);
            if (st != LG_OK) break;
            changed |= nt > 0;
        }
        if (lp_layers < o->max_layers && lg_bounds_unstable(b, net, k) > 0) {
            lp_layers++;
            long before = s->n_tight;
            if ((st = lg_refine_layer(b, net, k, o, run, s)) != LG_OK) break;
            changed |= s->n_tight > before;
            if (lg_runctx_expired(run)) {
                st = LG_ERR_TIMEOUT;
                break;
            }
        }
        if (changed && k + 1 < net->n_layers) st = lg_bounds_symbolic_unstable_from(b, net, k + 1);
    }
    b->run = saved;
    s->seconds = lg_now() - t0;
    return st;
}
