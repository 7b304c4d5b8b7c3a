/* devnet.c — the difference network of a substitution pair, with the
 * rounding of both forward passes as noise inputs, and its bound
 * (devnet.h). */
#include "verify/devnet.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/deviation.h"

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
            memcpy(B->map, A->map,
                   (A->kind == LG_LAYER_BILINEAR ? lg_bilinear_n_map(A) : (size_t)A->n_out) * sizeof *A->map);
    }
    lg_layer_copy_act_bias(K, S);
    if (lg_kind_is_tnode(S->kind)) return;
    lg_linear *Nz = lg_layer_lin_mut(K, lg_layer_n_lin(S)); /* ν of this layer's neurons */
    for (int o = 0; o < S->n_out; o++) Nz->map[o] = noise_at + o;
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
    int n_terms = 3;
    for (int k = 0; k < L; k++) n_terms += 2 * (lg_layer_n_lin(&relu->layers[k]) + 1);
    lg_layer_spec *specs = calloc((size_t)nl, sizeof *specs);
    lg_linear *terms = calloc((size_t)n_terms, sizeof *terms);
    if (!specs || !terms) {
        st = lg_fail(LG_ERR_NOMEM, "devnet: out of memory");
        goto fail;
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
            const int node = lg_kind_is_tnode(S->kind); /* the node is its layer's only term */
            sp->n_terms = lg_layer_n_lin(S) + !node;
            sp->terms = tp;
            for (int t = 0; t < lg_layer_n_lin(S); t++, tp++) {
                *tp = *lg_layer_lin(S, t);
                tp->src = tp->src == LG_NET_INPUT ? 0 : tp->src + 1 + c * L;
                if (tp->kind == LG_LAYER_BILINEAR)
                    tp->op.src_b = tp->op.src_b == LG_NET_INPUT ? 0 : tp->op.src_b + 1 + c * L;
            }
            if (!node) *tp++ = (lg_linear){.kind = LG_LAYER_INDEX, .n_in = ni, .src = LG_NET_INPUT};
        }
    tp[0] = (lg_linear){.kind = LG_LAYER_DENSE, .n_in = no, .src = L};
    tp[1] = (lg_linear){.kind = LG_LAYER_DENSE, .n_in = no, .src = 2 * L};
    specs[nl - 1] = (lg_layer_spec){.n_out = no, .act = LG_ACT_IDENTITY, .n_terms = 2, .terms = tp};
    if ((st = lg_net_build(&v->diff, ni, nl, specs)) != LG_OK) goto fail;
    lg_net *D = &v->diff;
    D->t = ref->t;
    for (int o = 0; o < n0; o++) D->layers[0].map[o] = o;
    for (int c = 0, at = n0; c < 2; c++)
        for (int k = 0; k < L; k++) {
            lg_devnet_copy_layer(&D->layers[1 + c * L + k], &(c ? ref : relu)->layers[k], at);
            at += relu->layers[k].n_out;
        }
    lg_layer *O = &D->layers[nl - 1]; /* parameters are zero: the diagonals and a zero bias */
    for (int j = 0; j < no; j++) {
        O->W[(size_t)j * (size_t)no + (size_t)j] = 1.0;
        O->terms[0].W[(size_t)j * (size_t)no + (size_t)j] = -1.0;
    }
    /* the noise coordinates are read as they are: x' = (ν − 0)/1 */
    if ((st = lg_devnet_extend(&D->in_sub, relu->in_sub, n0, 2 * (int)N, 0.0)) != LG_OK ||
        (st = lg_devnet_extend(&D->in_div, relu->in_div, n0, 2 * (int)N, 1.0)) != LG_OK)
        goto fail;
    if ((st = lg_net_validate(D)) != LG_OK) goto fail;
    if ((st = lg_bounds_init(&v->b, D)) != LG_OK) goto fail;
    v->n_noise = (int)N;
    v->lo = malloc(((size_t)2 * (size_t)ni + (size_t)4 * (size_t)N + (size_t)7 * (size_t)no) * sizeof *v->lo);
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
    for (int c = 0, at = 0; c < 2; c++)
        for (int k = 0; k < L; k++) {
            v->zp[c * L + k] = v->zmag + at;
            if (lg_kind_is_tnode(relu->layers[k].kind)) memset(v->node + at, 1, (size_t)relu->layers[k].n_out);
            at += relu->layers[k].n_out;
        }
    /* the bound engine keeps a coefficient row over D's input per neuron of a layer: past
     * LG_DEVNET_CAP doubles the pair is too large for this bound (lg_devnet_bound: no claim) */
    v->off = (double)lg_net_max_width(D) * (double)ni > (double)LG_DEVNET_CAP;
    v->relu = relu;
    v->ref = ref;
    v->want = INFINITY;
    v->refine_share = 1.0;
    free(specs);
    free(terms);
    return LG_OK;
fail:
    free(specs);
    free(terms);
    lg_devnet_free(v);
    return st;
}

void lg_devnet_free(lg_devnet *v)
{
    lg_net_free(&v->diff);
    lg_bounds_free(&v->b);
    free(v->lo);
    free(v->zp);
    free(v->node);
    memset(v, 0, sizeof *v);
}

double *const *lg_devnet_pre_lo(const lg_devnet *v, int which) { return v->b.lo + 1 + which * v->relu->n_layers; }
double *const *lg_devnet_pre_hi(const lg_devnet *v, int which) { return v->b.hi + 1 + which * v->relu->n_layers; }

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

lg_status lg_devnet_bound(lg_devnet *v, const double *lo, const double *hi, const lg_runctx *run, double *e)
{
    if (!v->relu) return lg_fail(LG_ERR_ARG, "devnet used before lg_devnet_init");
    const int L = v->relu->n_layers, no = lg_net_n_out(v->relu), n0 = v->relu->n_in, N = v->n_noise;
    lg_bounds *b = &v->b;
    lg_status st;
    v->valid = 0;
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
            if (lg_kind_is_tnode(v->relu->layers[k].kind))
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
