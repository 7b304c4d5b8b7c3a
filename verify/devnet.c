/* devnet.c — the difference network of a substitution pair, with the
 * rounding of both forward passes as noise inputs, and its bound
 * (devnet.h). */
#include "verify/devnet.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/deviation.h"
#include "core/act.h"
#include "core/linop.h"
#include "core/op.h"
#include "core/traverse.h"
#include "verify/devgrad_net.h"

/* Most doubles of one layer's coefficient rows over D's input (max width × input width). */
#define LG_DEVNET_CAP ((size_t)1 << 25)

/* n values of src (NULL: none) then m copies of fill, or NULL if src is NULL. */
static lg_status lg_devnet_extend(double **dst, const double *src, int n, int m, double fill)
{
    if (!src) return LG_OK;
    if (!(*dst = malloc(((size_t)n + (size_t)m) * sizeof **dst))) return lg_fail(LG_ERR_NOMEM, "devnet: out of memory");
    memcpy(*dst, src, (size_t)n * sizeof **dst);
    for (int i = 0; i < m; i++) (*dst)[n + i] = fill;
    return LG_OK;
}

/* Copy layer S's parameters, maps and activation into K (its own terms first, then K's noise term;
 * a Transformer node has none: its rounding reaches its consumers' noise, lg_dev_noise). */
static void lg_devnet_copy_layer(lg_layer *K, const lg_layer *S, int noise_at)
{
    for (int t = 0; t < lg_layer_n_lin(S); t++) {
        const lg_linear *A = lg_layer_lin(S, t);
        lg_linear *B = lg_layer_lin_mut(K, t);
        if (A->W) memcpy(B->W, A->W, lg_linear_n_weights(A) * sizeof *A->W);
        if (A->map)
            memcpy(B->map, A->map, lg_linear_n_map(A) * sizeof *A->map); /* its entry's count (core/op.h) */
    }
    lg_layer_copy_act_bias(K, S);
    if (lg_kind_is_tnode(S->lin.kind) || noise_at < 0) return;
    lg_linear *Nz = lg_layer_lin_mut(K, lg_layer_n_lin(S)); /* ν of this layer's neurons */
    for (int o = 0; o < S->n_out; o++) Nz->map[o] = noise_at + o;
}

/* Build the difference network of (relu, ref) into D: with noise (D) its input is (x, ν_relu,
 * ν_ref), n0 + 2N values; without (D0) x alone. */
static lg_status lg_devnet_build(lg_net *D, const lg_net *relu, const lg_net *ref, long N, int noise)
{
    const int L = relu->n_layers, no = lg_net_n_out(relu), nl = 2 * L + 2, n0 = relu->n_in;
    const int ni = n0 + (noise ? 2 * (int)N : 0);
    lg_status st = LG_OK;
    int n_terms = 3;
    for (int k = 0; k < L; k++) n_terms += 2 * (lg_layer_n_lin(&relu->layers[k]) + 1);
    lg_layer_spec *specs = calloc((size_t)nl, sizeof *specs);
    lg_linear *terms = calloc((size_t)n_terms, sizeof *terms);
    if (!specs || !terms) {
        st = lg_fail(LG_ERR_NOMEM, "devnet: out of memory");
        goto done;
    }
    lg_linear *tp = terms;
    /* layer 0: P = x', the first n0 values of the input */
    *tp = (lg_linear){.kind = LG_LAYER_INDEX, .n_in = ni, .src = LG_NET_INPUT};
    specs[0] = (lg_layer_spec){.n_out = n0, .act = LG_ACT_IDENTITY, .n_terms = 1, .terms = tp++};
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < L; k++) {
            const lg_layer *S = &(c ? ref : relu)->layers[k];
            lg_layer_spec *sp = &specs[1 + c * L + k];
            sp->n_out = S->n_out;
            sp->act = S->act;
            const int nz = noise && !lg_kind_is_tnode(S->lin.kind); /* a node is its layer's only term */
            sp->n_terms = lg_layer_n_lin(S) + nz;
            sp->terms = tp;
            for (int t = 0; t < lg_layer_n_lin(S); t++, tp++) {
                *tp = *lg_layer_lin(S, t);
                tp->src = tp->src == LG_NET_INPUT ? 0 : tp->src + 1 + c * L;
                if (lg_op_is(tp->kind, LG_OPF_TWO_SRC))
                    tp->op.src_b = tp->op.src_b == LG_NET_INPUT ? 0 : tp->op.src_b + 1 + c * L;
            }
            if (nz) *tp++ = (lg_linear){.kind = LG_LAYER_INDEX, .n_in = ni, .src = LG_NET_INPUT};
        }
    tp[0] = (lg_linear){.kind = LG_LAYER_DENSE, .n_in = no, .src = L};
    tp[1] = (lg_linear){.kind = LG_LAYER_DENSE, .n_in = no, .src = 2 * L};
    specs[nl - 1] = (lg_layer_spec){.n_out = no, .act = LG_ACT_IDENTITY, .n_terms = 2, .terms = tp};
    if ((st = lg_net_build(D, ni, nl, specs)) != LG_OK) goto done;
    D->t = ref->t;
    for (int o = 0; o < n0; o++) D->layers[0].lin.map[o] = o;
    for (int c = 0, at = n0; c < 2; c++)
        for (int k = 0; k < L; k++) {
            lg_devnet_copy_layer(&D->layers[1 + c * L + k], &(c ? ref : relu)->layers[k], noise ? at : -1);
            at += relu->layers[k].n_out;
        }
    lg_layer *O = &D->layers[nl - 1]; /* parameters are zero: the diagonals and a zero bias */
    for (int j = 0; j < no; j++) {
        O->lin.W[(size_t)j * (size_t)no + (size_t)j] = 1.0;
        O->terms[0].W[(size_t)j * (size_t)no + (size_t)j] = -1.0;
    }
    /* the noise coordinates are read as they are: x' = (ν − 0)/1 */
    const int m = ni - n0;
    if ((st = lg_devnet_extend(&D->in_sub, relu->in_sub, n0, m, 0.0)) != LG_OK ||
        (st = lg_devnet_extend(&D->in_div, relu->in_div, n0, m, 1.0)) != LG_OK)
        goto done;
    st = lg_net_validate(D);
done:
    free(specs);
    free(terms);
    return st;
}

const char *lg_devnet_stage_name(int stage)
{
    static const char *const names[LG_DEVNET_N_STAGES] = {"propagated", "difference_network", "pair", "joint",
                                                          "gradient",   "refinement",         "point"};
    return stage >= 0 && stage < LG_DEVNET_N_STAGES ? names[stage] : "?";
}

lg_status lg_devnet_init(lg_devnet *v, const lg_net *relu, const lg_net *ref)
{
    memset(v, 0, sizeof *v);
    lg_status st = lg_dev_check_pair(relu, ref);
    if (st != LG_OK) return st;
    const int L = relu->n_layers, no = lg_net_n_out(relu), nl = 2 * L + 2, n0 = relu->n_in;
    long N = 0;
    for (int k = 0; k < L; k++) N += relu->layers[k].n_out;
    if (nl > LG_NET_MAX_LAYERS || (long)n0 + 2 * N > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_ARG, "devnet: the pair is too large to double (%d layers, %ld neurons)", L, N);
    const int ni = n0 + 2 * (int)N;
    if ((st = lg_devnet_build(&v->diff, relu, ref, N, 1)) != LG_OK) goto fail;
    lg_net *D = &v->diff;
    if ((st = lg_bounds_init(&v->b, D)) != LG_OK) goto fail;
    v->n_noise = (int)N;
    v->lo = malloc(((size_t)2 * (size_t)ni + (size_t)6 * (size_t)N + (size_t)11 * (size_t)no) * sizeof *v->lo);
    v->zp = malloc((size_t)2 * (size_t)L * sizeof *v->zp);
    v->node = calloc((size_t)2 * (size_t)N, 1);
    if (!v->lo || !v->zp || !v->node) {
        st = lg_fail(LG_ERR_NOMEM, "devnet: out of memory");
        goto fail;
    }
    v->hi = v->lo + ni;
    v->tau = v->hi + ni;
    v->zmag = v->tau + 2 * N;
    v->xi = v->zmag + 2 * N;
    v->e = v->xi + 2 * no;
    v->err = v->e + 5 * no;
    v->env = v->err + 2 * N;
    for (int c = 0, at = 0; c < 2; c++)
        for (int k = 0; k < L; k++) {
            v->zp[c * L + k] = v->zmag + at;
            if (lg_kind_is_tnode(relu->layers[k].lin.kind)) memset(v->node + at, 1, (size_t)relu->layers[k].n_out);
            at += relu->layers[k].n_out;
        }
    /* the bound engine keeps a coefficient row over D's input per neuron of a layer: past
     * LG_DEVNET_CAP doubles the pair is too large for this bound (lg_devnet_bound: no claim) */
    v->off = (double)lg_net_max_width(D) * (double)ni > (double)LG_DEVNET_CAP;
    /* the exact route: D0 over x alone, for a pair too large for D (devnet.h) */
    v->off0 = !v->off || lg_net_first_tnode(relu) >= 0 || lg_net_has_max(relu) ||
              (double)lg_net_max_width(D) * (double)n0 > (double)LG_DEVNET_CAP;
    if (!v->off0 && ((st = lg_devnet_build(&v->diff0, relu, ref, N, 0)) != LG_OK ||
                     (st = lg_bounds_init(&v->b0, &v->diff0)) != LG_OK))
        goto fail;
    v->relu = relu;
    v->ref = ref;
    v->want = INFINITY;
    v->refine_share = 1.0;
    return LG_OK;
fail:
    lg_devnet_free(v);
    return st;
}

lg_status lg_devnet_use_exact(lg_devnet *v)
{
    if (!v->relu) return lg_fail(LG_ERR_ARG, "devnet used before lg_devnet_init");
    if (lg_net_first_tnode(v->relu) >= 0 || lg_net_has_max(v->relu))
        return lg_fail(LG_ERR_ARG, "devnet: the exact route does not take max-pool or Transformer nodes");
    if (!v->diff0.layers) {
        long N = v->n_noise;
        lg_status st = lg_devnet_build(&v->diff0, v->relu, v->ref, N, 0);
        if (st == LG_OK) st = lg_bounds_init(&v->b0, &v->diff0);
        if (st != LG_OK) {
            lg_net_free(&v->diff0);
            lg_bounds_free(&v->b0);
            return st;
        }
    }
    v->off = 1;
    v->off0 = 0;
    return LG_OK;
}

void lg_devnet_free(lg_devnet *v)
{
    lg_net_free(&v->diff);
    lg_bounds_free(&v->b);
    lg_net_free(&v->diff0);
    lg_bounds_free(&v->b0);
    free(v->lo);
    free(v->zp);
    free(v->node);
    lg_devgrad_net_free(v->grad);
    free(v->grad);
    memset(v, 0, sizeof *v);
}

double *const *lg_devnet_pre_lo(const lg_devnet *v, int which)
{
    return (v->exact ? v->b0.lo : v->b.lo) + 1 + which * v->relu->n_layers;
}
double *const *lg_devnet_pre_hi(const lg_devnet *v, int which)
{
    return (v->exact ? v->b0.hi : v->b.hi) + 1 + which * v->relu->n_layers;
}

/* max |bound| of every neuron of both copies, in D's neuron order from layer 1 (zmag's order). */
static int lg_devnet_mags(const lg_devnet *v, double *out, double scale, double add)
{
    const int L = v->relu->n_layers;
    size_t at = 0;
    for (int k = 1; k <= 2 * L; k++)
        for (int i = 0; i < v->diff.layers[k].n_out; i++, at++) {
            double m = fmax(fabs(v->b.lo[k][i]), fabs(v->b.hi[k][i]));
            if (!(m <= DBL_MAX / 4)) return 0;
            if (out) out[at] = m * scale + add;
            else if (!(m <= v->zmag[at])) return 0; /* check mode: within the guess */
        }
    return 1;
}

double lg_devnet_lip(const lg_layer *L)
{
    if (L->act == LG_ACT_RELU || L->act == LG_ACT_IDENTITY) return 1.0;
    if (!lg_act_relu_like(L->act)) return INFINITY;
    const lg_act_info *ai = lg_act_info_of(L->act);
    return 1.2 * (ai && ai->fmag ? ai->fmag(L->lambda) : 1.0);
}

/* The rounding envelope of net's double forward pass (devnet.h "The exact route"): from its
 * noise radii tau ([N], lg_dev_noise), err[N] ≥ |ẑ − z| per neuron and out[n_out] ≥ |f_out(ẑ) −
 * f_out(z)| (the output's ξ not included); +∞ where it overflows. */
static lg_status lg_devnet_envelope(const lg_net *net, const double *tau, double *err, double *out)
{
    const size_t len = lg_net_nodes_len(net);
    double *ae = calloc(len + (size_t)lg_net_max_width(net), sizeof *ae); /* Lip·err per node; x: 0 */
    if (!ae) return lg_fail(LG_ERR_NOMEM, "devnet: out of memory");
    double *sx = ae + len;
    size_t at = 0;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        lg_node_buf be = {net, ae};
        lg_layer_sum(L, 1, lg_node_buf_val, &be, sx, 1, 0); /* Σ |A|·Lip·err (core/traverse.h) */
        const double lip = lg_devnet_lip(L);
        double *ao = ae + lg_net_node_offset(net, k);
        for (int o = 0; o < L->n_out; o++, at++) {
            /* the sum has < 2^30 terms: its rounding is below 1e−9 relative */
            double x = (sx[o] * (1.0 + 1e-9) + tau[at]) * (1.0 + 2.0 * DBL_EPSILON) + 1e-300;
            if (!(x <= DBL_MAX)) x = INFINITY;
            err[at] = x;
            double a = lip * x * (1.0 + DBL_EPSILON);
            ao[o] = a <= DBL_MAX ? a : INFINITY;
        }
    }
    memcpy(out, ae + lg_net_node_offset(net, net->n_layers - 1),
           (size_t)net->layers[net->n_layers - 1].n_out * sizeof *out);
    free(ae);
    return LG_OK;
}

/* The exact route (devnet.h): CROWN on D0 over the raw box, the rounding envelope of both passes,
 * the magnitude check, D0's neuron bounds widened by the envelope. LG_ERR_NOMEM: the caller takes
 * the interval route. */
static lg_status lg_devnet_bound_exact(lg_devnet *v, const double *lo, const double *hi, const lg_runctx *run,
                                       double *e)
{
    const int L = v->relu->n_layers, no = lg_net_n_out(v->relu), N = v->n_noise;
    lg_bounds *b = &v->b0;
    b->run = run;
    lg_status st = lg_bounds_symbolic(b, &v->diff0, lo, hi);
    if (st != LG_OK) goto done;
    /* the guess: twice D0's bounds, plus 1 */
    for (int k = 1, at = 0; k <= 2 * L; k++)
        for (int i = 0; i < v->diff0.layers[k].n_out; i++, at++) {
            double m = fmax(fabs(b->lo[k][i]), fabs(b->hi[k][i]));
            if (!(m <= DBL_MAX / 4)) goto done; /* overflow: no claim */
            v->zmag[at] = 2.0 * m + 1.0;
        }
    double *oe = v->env + no; /* [2][n_out] Lip·err of each net's output */
    if ((st = lg_dev_noise(v->relu, lo, hi, v->zp, v->tau, v->xi)) != LG_OK ||
        (st = lg_dev_noise(v->ref, lo, hi, v->zp + L, v->tau + N, v->xi + no)) != LG_OK ||
        (st = lg_devnet_envelope(v->relu, v->tau, v->err, oe)) != LG_OK ||
        (st = lg_devnet_envelope(v->ref, v->tau + N, v->err + N, oe + no)) != LG_OK)
        goto done;
    /* the induction closes when every computed pre-activation, within err of D0's bound, is
     * within its guess; those bounds widened by err then hold the computed values */
    for (int k = 1, at = 0; k <= 2 * L; k++)
        for (int i = 0; i < v->diff0.layers[k].n_out; i++, at++) {
            double *pl = &b->lo[k][i], *ph = &b->hi[k][i], r = v->err[at];
            if (!(fmax(fabs(*pl), fabs(*ph)) + r <= v->zmag[at])) goto done; /* no claim */
            *pl = (*pl - r) - DBL_EPSILON * (fabs(*pl) + r);
            *ph = (*ph + r) + DBL_EPSILON * (fabs(*ph) + r);
        }
    const double *dl = b->lo[2 * L + 1], *dh = b->hi[2 * L + 1];
    for (int j = 0; j < no; j++) {
        /* computed outputs: f_out(z) + Lip·err + ξ for each net */
        double r = (oe[j] + v->xi[j] + oe[no + j] + v->xi[no + j]) * (1.0 + 4.0 * DBL_EPSILON);
        v->env[j] = r <= DBL_MAX ? r : INFINITY;
        double x = (fmax(fabs(dl[j]), fabs(dh[j])) + v->env[j]) * (1.0 + 4.0 * DBL_EPSILON);
        e[j] = x <= DBL_MAX ? x : INFINITY; /* NaN: +∞ */
    }
    v->valid = 1;
    v->exact = 1;
done:
    b->run = NULL;
    return st;
}

/* The noisy D: CROWN unless v->off, else (or without memory for CROWN) interval arithmetic. */
static lg_status lg_devnet_bound_noisy(lg_devnet *v, const double *lo, const double *hi, const lg_runctx *run,
                                       double *e)
{
    const int L = v->relu->n_layers, no = lg_net_n_out(v->relu), n0 = v->relu->n_in, N = v->n_noise;
    lg_bounds *b = &v->b;
    lg_status st;
    v->valid = v->exact = 0;
    for (int j = 0; j < no; j++) e[j] = INFINITY;
    memcpy(v->lo, lo, (size_t)n0 * sizeof *lo);
    memcpy(v->hi, hi, (size_t)n0 * sizeof *hi);
    memset(v->lo + n0, 0, 2 * (size_t)N * sizeof *v->lo);
    memset(v->hi + n0, 0, 2 * (size_t)N * sizeof *v->hi);
    /* the guess: twice the noise-free interval bounds, plus 1 */
    b->run = run;
    st = lg_bounds_interval(b, &v->diff, v->lo, v->hi);
    if (st != LG_OK) goto done;
    if (!lg_devnet_mags(v, v->zmag, 2.0, 1.0)) goto done; /* overflow: no claim */
    /* CROWN through D; a pair too large for it (v->off) or no memory for its rows: interval
     * arithmetic through the noisy D, the same induction (tight where the box is small) */
    /* with Transformer nodes too (CROWN passes them by their planes, DESIGN.md §3
     * "Back-substitution through the Transformer nodes"); their bounds are then widened by the
     * nodes' ξ below, so valid = 2 there: transfer.c keeps the ReLU net's own bounds, which the
     * widening would otherwise loosen */
    int sym = !v->off;
    /* a net with Transformer nodes: a bound that leaves its guess is guessed again from the noisy
     * bounds (twice them, plus 1), at most twice more (every try is the whole induction) */
    for (int tries = lg_net_first_tnode(v->relu) >= 0 ? 3 : 1;; tries--) {
        if ((st = lg_dev_noise(v->relu, lo, hi, v->zp, v->tau, v->xi)) != LG_OK ||
            (st = lg_dev_noise(v->ref, lo, hi, v->zp + L, v->tau + N, v->xi + no)) != LG_OK)
            goto done;
        for (int i = 0; i < 2 * N; i++) {
            if (!(v->tau[i] <= DBL_MAX)) goto done;
            v->lo[n0 + i] = v->node[i] ? 0.0 : -v->tau[i]; /* a Transformer node reads no noise: tau is its ξ */
            v->hi[n0 + i] = v->node[i] ? 0.0 : v->tau[i];
        }
        if (sym && (st = lg_bounds_symbolic(b, &v->diff, v->lo, v->hi)) != LG_OK) {
            if (st != LG_ERR_NOMEM) goto done;
            sym = 0;
        }
        if (!sym && (st = lg_bounds_interval(b, &v->diff, v->lo, v->hi)) != LG_OK) goto done;
        if (lg_devnet_mags(v, NULL, 0, 0)) break;
        if (tries <= 1 || !lg_devnet_mags(v, v->zmag, 2.0, 1.0)) goto done; /* a bound left its guess: no claim */
    }
    /* a Transformer node's bounds hold D's value, the exact node of its sources' values; the
     * computed output is within ξ (tau) of it: widen, so the bounds hold both */
    for (int c = 0, at = 0; c < 2; c++)
        for (int k = 0; k < L; k++) {
            const int w = v->relu->layers[k].n_out;
            if (lg_kind_is_tnode(v->relu->layers[k].lin.kind))
                for (int i = 0; i < w; i++) {
                    double t = v->tau[at + i], *pl = &b->lo[1 + c * L + k][i], *ph = &b->hi[1 + c * L + k][i];
                    *pl = (*pl - t) - DBL_EPSILON * (fabs(*pl) + t);
                    *ph = (*ph + t) + DBL_EPSILON * (fabs(*ph) + t);
                    if (!(*pl >= -DBL_MAX)) *pl = -INFINITY;
                    if (!(*ph <= DBL_MAX)) *ph = INFINITY;
                }
            at += w;
        }
    const double *dl = b->lo[2 * L + 1], *dh = b->hi[2 * L + 1];
    for (int j = 0; j < no; j++) {
        /* computed outputs: f_out(ẑ) + ξ; D's output is the difference of the f_out(ẑ) */
        double x = fmax(fabs(dl[j]), fabs(dh[j])) + v->xi[j] + v->xi[no + j];
        e[j] = isnan(x) ? INFINITY : x * (1.0 + 4.0 * DBL_EPSILON);
    }
    v->valid = sym && lg_net_first_tnode(v->relu) < 0 ? 1 : 2;
done:
    b->run = NULL;
    return st;
}

lg_status lg_devnet_bound(lg_devnet *v, const double *lo, const double *hi, const lg_runctx *run, double *e)
{
    if (!v->relu) return lg_fail(LG_ERR_ARG, "devnet used before lg_devnet_init");
    const int L = v->relu->n_layers, no = lg_net_n_out(v->relu);
    v->valid = v->exact = 0;
    for (int j = 0; j < no; j++) e[j] = INFINITY;
    if (!v->off || v->off0) return lg_devnet_bound_noisy(v, lo, hi, run, e);
    /* the exact route, then the interval route through the noisy D (cheap; tighter on small boxes,
     * where the envelope's growth through the layers dominates): per output the smaller bound, per
     * neuron the intersection (both hold the exact and the computed values) */
    double *ex = v->env + 3 * no;
    lg_status st = lg_devnet_bound_exact(v, lo, hi, run, ex);
    if (st != LG_OK && st != LG_ERR_NOMEM) return st;
    const int vx = st == LG_OK && v->valid;
    if ((st = lg_devnet_bound_noisy(v, lo, hi, run, e)) != LG_OK) return st;
    if (!vx) return LG_OK; /* the interval route's answer (valid 2, or no claim) */
    if (v->valid)
        for (int k = 1; k <= 2 * L; k++)
            for (int i = 0; i < v->diff0.layers[k].n_out; i++) {
                v->b0.lo[k][i] = fmax(v->b0.lo[k][i], v->b.lo[k][i]);
                v->b0.hi[k][i] = fmin(v->b0.hi[k][i], v->b.hi[k][i]);
            }
    for (int j = 0; j < no; j++) e[j] = fmin(e[j], ex[j]);
    v->valid = 1;
    v->exact = 1;
    return LG_OK;
}
