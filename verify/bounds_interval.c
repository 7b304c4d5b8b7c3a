/* bounds_interval.c — lg_bounds storage, the margin rule, the normalised
 * input box, interval-arithmetic bounds, and the objective's bound from the
 * output layer's intervals (bounds.h). */
#include "verify/bounds.h"

#include "core/act_relax.h"
#include "core/linop.h"
#include "core/traverse.h"
#include "verify/opstage.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

double lg_bounds_margin(double v, double mass, double n_terms)
{
    /* (|v| + Σ|t_i|)·N·2^-50 + 2^-1000 (bounds.h) */
    return (fabs(v) + mass) * (n_terms + 1.0) * 0x1p-50 + 0x1p-1000;
}

lg_status lg_bounds_check_net(const lg_net *net)
{
    if (!net || net->n_layers < 1) return lg_fail(LG_ERR_ARG, "bounds: empty network");
    if (lg_net_require_no_tnode(net, "verification") != LG_OK) return LG_ERR_UNSUPPORTED;
    for (int k = 0; k < net->n_layers; k++) {
        lg_act a = net->layers[k].act;
        const lg_act_info *info = lg_act_info_of(a);
        if (info && info->smooth && !info->relu_like)
            return lg_fail(LG_ERR_UNSUPPORTED,
                           "layer %d has activation %s: verification needs a piecewise-linear (relu/identity) "
                           "network, and %s has no ReLU substitution",
                           k, info->name, info->name);
        if (a != LG_ACT_RELU && a != LG_ACT_IDENTITY)
            return lg_fail(LG_ERR_UNSUPPORTED,
                           "layer %d has activation %s: verification needs a piecewise-linear (relu/identity) "
                           "network; substitute ReLU first with `lgelu relu`",
                           k, lg_act_name(a) ? lg_act_name(a) : "?");
    }
    return LG_OK;
}

lg_status lg_bounds_check_direct(const lg_net *net)
{
    if (!net || net->n_layers < 1) return lg_fail(LG_ERR_ARG, "bounds: empty network");
    if (lg_net_require_no_tnode(net, "verification") != LG_OK) return LG_ERR_UNSUPPORTED;
    for (int k = 0; k < net->n_layers; k++) {
        lg_act a = net->layers[k].act;
        const lg_act_info *info = lg_act_info_of(a);
        if (!info || (a != LG_ACT_RELU && a != LG_ACT_IDENTITY && !info->smooth))
            return lg_fail(LG_ERR_UNSUPPORTED, "layer %d has activation %s, which has no relaxation", k,
                           info ? info->name : "?");
    }
    return LG_OK;
}

int lg_bounds_net_smooth(const lg_net *net)
{
    for (int k = 0; k < net->n_layers; k++) {
        const lg_act_info *info = lg_act_info_of(net->layers[k].act);
        if (info && info->smooth) return 1;
    }
    return 0;
}

/* Difference bounds per output node L keeps (its entry, opstage.h; 0: none). */
static int lg_bounds_n_diff(const lg_layer *L)
{
    const lg_vopdef *vop = lg_layer_vop(L);
    return vop && vop->n_diff ? vop->n_diff(L) : 0;
}

size_t lg_bounds_diff_len(const lg_net *net)
{
    size_t nd = 0;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        size_t K = (size_t)lg_bounds_n_diff(L);
        if (K) /* the difference bounds, dref as doubles */
            nd += (size_t)L->n_out * (2 * K + 1);
    }
    return nd;
}

lg_status lg_bounds_init(lg_bounds *b, const lg_net *net)
{
    memset(b, 0, sizeof *b);
    if (!net || net->n_layers < 1 || net->n_in < 1) return lg_fail(LG_ERR_ARG, "bounds: empty network");
    size_t n = 2 * (size_t)net->n_in, nd = lg_bounds_diff_len(net);
    for (int k = 0; k < net->n_layers; k++) n += 2 * (size_t)net->layers[k].n_out;
    n += nd;
    size_t ptrs = 5 * (size_t)net->n_layers;
    size_t bytes = ptrs * sizeof(double *) + n * sizeof(double) + (size_t)net->n_layers * sizeof(int);
    unsigned char *s = malloc(bytes);
    if (!s) return lg_fail(LG_ERR_NOMEM, "bounds: cannot allocate %zu bytes", bytes);
    b->store = s;
    b->lo = (double **)s;
    b->hi = b->lo + net->n_layers;
    double *v = (double *)(s + ptrs * sizeof(double *));
    b->xlo = v;
    b->xhi = v + net->n_in;
    v += 2 * (size_t)net->n_in;
    for (int k = 0; k < net->n_layers; k++) {
        b->lo[k] = v;
        b->hi[k] = v + net->layers[k].n_out;
        v += 2 * (size_t)net->layers[k].n_out;
    }
    b->n_diff = nd;
    b->dlo = b->hi + net->n_layers;
    b->dhi = b->dlo + net->n_layers;
    b->dref = (int **)(b->dhi + net->n_layers);
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        b->dlo[k] = b->dhi[k] = NULL;
        b->dref[k] = NULL;
        size_t K = (size_t)lg_bounds_n_diff(L), no = (size_t)L->n_out;
        if (!K) continue;
        b->dlo[k] = v;
        b->dhi[k] = v + no * K;
        for (size_t q = 0; q < no * K; q++) b->dlo[k][q] = -INFINITY, b->dhi[k][q] = INFINITY;
        v += 2 * no * K;
        b->dref[k] = (int *)v; /* n_out ints in the room of n_out doubles */
        for (size_t o = 0; o < no; o++) b->dref[k][o] = -1;
        v += no;
    }
    b->width = (int *)v;
    b->n_layers = net->n_layers;
    b->n_in = net->n_in;
    for (int k = 0; k < net->n_layers; k++) {
        b->width[k] = net->layers[k].n_out;
        for (int i = 0; i < b->width[k]; i++) {
            b->lo[k][i] = -INFINITY;
            b->hi[k][i] = INFINITY;
        }
    }
    return LG_OK;
}

void lg_bounds_free(lg_bounds *b)
{
    free(b->store);
    memset(b, 0, sizeof *b);
}

int lg_bounds_finite(const lg_bounds *b)
{
    for (int k = 0; k < b->n_layers; k++)
        for (int i = 0; i < b->width[k]; i++)
            if (!isfinite(b->lo[k][i]) || !isfinite(b->hi[k][i])) return 0;
    return 1;
}

int lg_bounds_unstable_in(const lg_bounds *b, const lg_net *net, int k, const unsigned char *mask)
{
    if (net->layers[k].act != LG_ACT_RELU) return 0;
    int n = 0;
    for (int i = 0; i < b->width[k]; i++) n += (!mask || mask[i]) && b->lo[k][i] < 0.0 && b->hi[k][i] > 0.0;
    return n;
}

int lg_bounds_unstable(const lg_bounds *b, const lg_net *net, int k) { return lg_bounds_unstable_in(b, net, k, NULL); }

/* The normalised box x' = (x − in_sub)/in_div, one ulp outward per operation. */
static lg_status lg_bounds_input_box(lg_bounds *b, const lg_net *net, const double *lo, const double *hi)
{
    for (int i = 0; i < net->n_in; i++) {
        if (!(lo[i] <= hi[i]) || !isfinite(lo[i]) || !isfinite(hi[i]))
            return lg_fail(LG_ERR_ARG, "bounds: input %d has an empty or infinite interval [%g, %g]", i, lo[i], hi[i]);
        double l = lo[i], h = hi[i];
        if (net->in_sub) {
            l = nextafter(l - net->in_sub[i], -INFINITY);
            h = nextafter(h - net->in_sub[i], INFINITY);
        }
        if (net->in_div) {
            double p = l / net->in_div[i], q = h / net->in_div[i];
            l = nextafter(fmin(p, q), -INFINITY);
            h = nextafter(fmax(p, q), INFINITY);
        }
        b->xlo[i] = l;
        b->xhi[i] = h;
    }
    return LG_OK;
}

void lg_bounds_post(const lg_layer *L, double l, double h, double *al, double *ah)
{
    if (L->act == LG_ACT_RELU) {
        *al = l > 0 ? l : 0;
        *ah = h > 0 ? h : 0;
    } else if (lg_act_info_of(L->act)->smooth) {
        lg_act_image(L->act, L->lambda, l, h, al, ah); /* certified (core/act_relax.h) */
    } else {
        *al = l;
        *ah = h;
    }
}

/* Terms of the sum z_k[o] (the margin rule's N): every term's row length
 * counted together (an index map adds at most one per output). */
static double lg_bounds_row_terms(const lg_layer *L)
{
    return (double)lg_layer_sum_len(L); /* core/traverse.h */
}

/* lg_bounds_check_direct without its refusal of the Transformer nodes,
 * which interval bounds take (their opstage.h entries). */
static lg_status lg_bounds_check_interval(const lg_net *net)
{
    if (lg_net_first_tnode(net) < 0) return lg_bounds_check_direct(net);
    for (int k = 0; k < net->n_layers; k++) {
        lg_act a = net->layers[k].act;
        const lg_act_info *info = lg_act_info_of(a);
        if (!info || (a != LG_ACT_RELU && a != LG_ACT_IDENTITY && !info->smooth))
            return lg_fail(LG_ERR_UNSUPPORTED, "layer %d has activation %s, which has no relaxation", k,
                           info ? info->name : "?");
    }
    return LG_OK;
}

/* Layer k's interval bounds from the post-activation intervals al/ah of
 * the nodes before it (at noff), into b->lo[k], b->hi[k]. */
static void lg_bi_layer(lg_bounds *b, const lg_net *net, int k, double *al, double *ah, const size_t *noff, int *idx,
                        double *wv)
{
    size_t koff = noff[k + 1];
    const lg_layer *L = &net->layers[k];
    const lg_vopdef *vop = lg_layer_vop(L);
    if (vop) { /* a node (max-pool, product, softmax, layernorm; opstage.h): identity activation */
        vop->interval(net, L, al, ah, noff, b->lo[k], b->hi[k]);
        memcpy(al + koff, b->lo[k], (size_t)L->n_out * sizeof *al);
        memcpy(ah + koff, b->hi[k], (size_t)L->n_out * sizeof *ah);
        return;
    }
    double nterm = lg_bounds_row_terms(L);
    for (int o = 0; o < L->n_out; o++) {
        double sl = L->b[o], sh = L->b[o], mass = fabs(L->b[o]);
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            /* the row's structural nonzeros (core/linop.h), inputs ascending;
             * the margin counts every term's row length, as for the dense rows */
            const lg_linear *A = lg_layer_lin(L, t);
            size_t so = noff[A->src + 1];
            const double *sal = al + so, *sah = ah + so;
            /* a dense row is read in place (every input, ascending: the same order) */
            int dense = A->kind == LG_LAYER_DENSE;
            const double *Wr = dense ? A->W + (size_t)o * (size_t)A->n_in : wv;
            int nz = dense ? A->n_in : lg_linear_row_nz(A, o, idx, wv);
            for (int q = 0; q < nz; q++) {
                double wi = Wr[q];
                int i = dense ? q : idx[q];
                if (wi == 0.0) continue; /* 0·∞ */
                double wl = wi > 0.0 ? wi * sal[i] : wi * sah[i], wh = wi > 0.0 ? wi * sah[i] : wi * sal[i];
                sl += wl;
                sh += wh;
                double fl = fabs(wl), fh = fabs(wh);
                mass += fh > fl ? fh : fl;
            }
        }
        double l = sl - lg_bounds_margin(sl, mass, nterm), h = sh + lg_bounds_margin(sh, mass, nterm);
        /* overflow, ∞ − ∞: a non-finite end is no bound (never finite,
         * never the wrong infinity) */
        b->lo[k][o] = isfinite(l) ? l : -INFINITY;
        b->hi[k][o] = isfinite(h) ? h : INFINITY;
        lg_bounds_post(L, b->lo[k][o], b->hi[k][o], &al[koff + o], &ah[koff + o]);
    }
}

/* Layers k0 … n_layers − 1 from the current bounds of the nodes before k0;
 * keep: each bound intersected with the one it had. */
static lg_status lg_bi_run(lg_bounds *b, const lg_net *net, int k0, int keep)
{
    lg_status st = LG_OK;
    /* post-activation intervals of every node (input at 0, layer k at
     * lg_net_node_offset): a sum node reads any earlier node */
    size_t nl = lg_net_nodes_len(net), w = (size_t)lg_net_max_width(net);
    int *idx = NULL;
    double *wv = NULL;
    double *al = malloc((2 * nl + 2 * w) * sizeof *al);
    size_t *noff = malloc(((size_t)net->n_layers + 1) * sizeof *noff); /* [node + 1] offsets */
    if (!al || !noff || lg_net_row_alloc(net, &idx, &wv) != 0) {
        free(al);
        free(noff);
        return lg_fail(LG_ERR_NOMEM, "bounds: out of memory");
    }
    double *ah = al + nl, *ol = ah + nl, *oh = ol + w;
    memcpy(al, b->xlo, (size_t)net->n_in * sizeof *al);
    memcpy(ah, b->xhi, (size_t)net->n_in * sizeof *ah);
    noff[0] = 0;
    for (int k = 0; k < net->n_layers; k++) noff[k + 1] = k ? noff[k] + (size_t)net->layers[k - 1].n_out : (size_t)net->n_in;
    for (int k = 0; k < k0 && k < net->n_layers; k++)
        for (int o = 0; o < net->layers[k].n_out; o++)
            lg_bounds_post(&net->layers[k], b->lo[k][o], b->hi[k][o], &al[noff[k + 1] + o], &ah[noff[k + 1] + o]);
    for (int k = k0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if ((st = lg_runctx_check(b->run, "bounds: interval")) != LG_OK) { /* this and later layers: no bound */
            for (int q = k; q < net->n_layers && !keep; q++)
                for (int o = 0; o < net->layers[q].n_out; o++) b->lo[q][o] = -INFINITY, b->hi[q][o] = INFINITY;
            break;
        }
        if (keep) {
            memcpy(ol, b->lo[k], (size_t)L->n_out * sizeof *ol);
            memcpy(oh, b->hi[k], (size_t)L->n_out * sizeof *oh);
        }
        lg_bi_layer(b, net, k, al, ah, noff, idx, wv);
        if (keep)
            for (int o = 0; o < L->n_out; o++) {
                if (ol[o] > b->lo[k][o]) b->lo[k][o] = ol[o];
                if (oh[o] < b->hi[k][o]) b->hi[k][o] = oh[o];
                lg_bounds_post(L, b->lo[k][o], b->hi[k][o], &al[noff[k + 1] + o], &ah[noff[k + 1] + o]);
            }
    }
    free(idx);
    free(wv);
    free(al);
    free(noff);
    return st;
}

lg_status lg_bounds_interval_from(lg_bounds *b, const lg_net *net, int k0)
{
    return lg_bi_run(b, net, k0, 1);
}

lg_status lg_bounds_interval(lg_bounds *b, const lg_net *net, const double *lo, const double *hi)
{
    lg_status st = lg_bounds_check_interval(net);
    if (st != LG_OK) return st;
    if ((st = lg_bounds_input_box(b, net, lo, hi)) != LG_OK) return st;
    lg_bounds_diff_forget(b, net); /* a new box: what the layernorm regions knew need not hold on it */
    return lg_bi_run(b, net, 0, 0);
}

lg_status lg_bounds_output_box(const lg_net *net, const double *lo, const double *hi, double *ylo, double *yhi)
{
    lg_bounds b;
    lg_status st = lg_bounds_init(&b, net);
    if (st != LG_OK) return st;
    if ((st = lg_bounds_interval(&b, net, lo, hi)) == LG_OK) {
        int k = net->n_layers - 1;
        for (int o = 0; o < net->layers[k].n_out; o++) lg_bounds_post(&net->layers[k], b.lo[k][o], b.hi[k][o], &ylo[o], &yhi[o]);
    }
    lg_bounds_free(&b);
    return st;
}

void lg_bounds_diff_save(const lg_bounds *b, double *v)
{
    for (int k = 0; k < b->n_layers; k++) {
        if (!b->dlo[k]) continue;
        size_t no = (size_t)b->width[k], nk = (size_t)(b->dhi[k] - b->dlo[k]); /* n_out·K */
        memcpy(v, b->dlo[k], 2 * nk * sizeof *v); /* dlo, dhi are adjacent */
        v += 2 * nk;
        for (size_t o = 0; o < no; o++) *v++ = (double)b->dref[k][o];
    }
}

void lg_bounds_diff_load(lg_bounds *b, const double *v)
{
    for (int k = 0; k < b->n_layers; k++) {
        if (!b->dlo[k]) continue;
        size_t no = (size_t)b->width[k], nk = (size_t)(b->dhi[k] - b->dlo[k]);
        memcpy(b->dlo[k], v, 2 * nk * sizeof *v);
        v += 2 * nk;
        for (size_t o = 0; o < no; o++) b->dref[k][o] = (int)*v++;
    }
}

lg_status lg_bounds_tnode_objective(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                                    double *out)
{
    int k = net->n_layers - 1, no = lg_net_n_out(net);
    const lg_layer *L = &net->layers[k];
    for (int r = 0; r < m; r++) {
        double s = d[r], mass = fabs(d[r]);
        for (int j = 0; j < no; j++) {
            double c = C[(size_t)r * (size_t)no + (size_t)j], al, ah;
            if (c == 0.0) continue;
            lg_bounds_post(L, b->lo[k][j], b->hi[k][j], &al, &ah);
            double v = c > 0 ? c * al : c * ah;
            s += v;
            mass += fabs(v);
        }
        double l = s - lg_bounds_margin(s, mass, (double)no + 1.0);
        out[r] = l == l ? l : -INFINITY;
    }
    return LG_OK;
}
