/* bab_input.c — input splitting (bab.h): bound a sub-box by interval
 * arithmetic intersected with the parent's bounds (sound on a sub-box), then
 * back-substitution of the neurons still unstable, and halve it along the
 * input dimension where the hardest objective is most sensitive: the smear
 * score_i = w_i · max|∂f/∂x_i| (w_i the width, the gradient bounded over the
 * sub-box through the ReLU phases the bounds allow, as ReluVal does). Unlike
 * |A_i|·w_i of the back-substituted objective, it does not vanish for an
 * input that only feeds unstable ReLUs relaxed with slope 0. When the
 * previous split did not raise the node's bound, the side widest relative to
 * the root is halved instead, so that no dimension is starved. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify/bab_internal.h"
#include "core/linop.h"
#include "core/traverse.h"
#include "verify/opstage.h"

static lg_status lg_bab_input_bound(const lg_bab_ctx *cx, const lg_bab_node *n, lg_bounds *b)
{
    lg_status st = lg_bounds_interval(b, cx->net, n->lo, n->hi);
    if (st != LG_OK) return st;
    if (!n->pre) return lg_bounds_symbolic_unstable_from(b, cx->net, 1);
    /* inherited bounds: keep the tighter side (layout of lg_bab_bounds_save) */
    const double *p = n->pre + 2 * (size_t)cx->n_in;
    for (int k = 0; k < b->n_layers; k++) {
        int w = b->width[k];
        for (int i = 0; i < w; i++) {
            if (p[i] > b->lo[k][i]) b->lo[k][i] = p[i];
            if (p[w + i] < b->hi[k][i]) b->hi[k][i] = p[w + i];
        }
        p += 2 * (size_t)w;
    }
    /* back-substitute only what is still unstable */
    return lg_bounds_symbolic_unstable_from(b, cx->net, 1);
}

/* |post-activation value| of node j's entry i is at most this over the node's bounds. */
static double lg_bab_node_mag(const lg_net *net, const lg_bounds *b, int j, int i)
{
    double l, h;
    if (j < 0) l = b->xlo[i], h = b->xhi[i];
    else lg_bounds_post(&net->layers[j], b->lo[j][i], b->hi[j][i], &l, &h);
    double m = fmax(fabs(l), fabs(h));
    return isfinite(m) ? m : 1e6;
}

/* The smear through a Transformer node (a split heuristic, not a bound):
 * each output's |c| + r goes to the inputs it reads, a product's scaled by
 * the other factor's magnitude (lg_bab_smear_product); softmax and layernorm
 * spread over the group (lg_bab_smear_group). Centres 0, radii added into rd
 * at the sources' offsets (seen as for terms). */
static void lg_bab_smear_srcs(const lg_net *net, const lg_layer *L, double *cn, double *rd, unsigned char *seen)
{
    int srcs[2] = {L->lin.src, lg_layer_src(L, lg_layer_n_src(L) - 1)}; /* a second source, else the first again */
    for (int q = 0; q < 2; q++) {
        int j = srcs[q];
        size_t so = lg_net_node_offset(net, j);
        if (!seen[j + 1]) {
            int w = lg_net_node_width(net, j);
            memset(cn + so, 0, (size_t)w * sizeof *cn);
            memset(rd + so, 0, (size_t)w * sizeof *rd);
            seen[j + 1] = 1;
        }
    }
}

void lg_bab_smear_product(const lg_net *net, const lg_bounds *b, const lg_layer *L, const double *cen, const double *rad,
                          double *cn, double *rd, unsigned char *seen, double *tc, double *tr)
{
    (void)tc, (void)tr;
    lg_bab_smear_srcs(net, L, cn, rd, seen);
    size_t K = (size_t)L->lin.op.K, sa = lg_net_node_offset(net, L->lin.src), sb = lg_net_node_offset(net, L->lin.op.src_b);
    const int *ia = L->lin.map, *ib = L->lin.map + (size_t)L->n_out * K;
    for (size_t o = 0; o < (size_t)L->n_out; o++) {
        double g = fabs(cen[o]) + rad[o];
        for (size_t q = o * K; q < (o + 1) * K; q++) {
            rd[sa + (size_t)ia[q]] += g * lg_bab_node_mag(net, b, L->lin.op.src_b, ib[q]);
            rd[sb + (size_t)ib[q]] += g * lg_bab_node_mag(net, b, L->lin.src, ia[q]);
        }
    }
}

void lg_bab_smear_group(const lg_net *net, const lg_bounds *b, const lg_layer *L, const double *cen, const double *rad,
                        double *cn, double *rd, unsigned char *seen, double *tc, double *tr)
{
    (void)b, (void)tc, (void)tr;
    lg_bab_smear_srcs(net, L, cn, rd, seen);
    size_t so = lg_net_node_offset(net, L->lin.src);
    int g = L->lin.op.group;
    for (int s = 0; s < L->n_out; s += g) {
        double t = 0;
        for (int i = s; i < s + g; i++) t += fabs(cen[i]) + rad[i];
        for (int i = s; i < s + g; i++) rd[so + (size_t)i] += t;
    }
}

/* The smear's step through one term of a layer's sum (lg_layer_terms_back): Aᵀc, |A|ᵀr
 * written into its source's slots the first time, else added through tc, tr. */
typedef struct lg_smear_at {
    const lg_net *net;
    const double *cen, *rad;
    double *cn, *rd, *tc, *tr;
} lg_smear_at;
static void lg_bab_smear_term(void *ctx, const lg_linear *T, int first)
{
    const lg_smear_at *at = ctx;
    size_t so = lg_net_node_offset(at->net, T->src);
    if (first) {
        lg_linear_mul_t(T, 1, at->cen, at->cn + so, 0);
        lg_linear_mul_t(T, 1, at->rad, at->rd + so, 1);
    } else {
        lg_linear_mul_t(T, 1, at->cen, at->tc, 0);
        lg_linear_mul_t(T, 1, at->rad, at->tr, 1);
        for (int i = 0; i < T->n_in; i++) at->cn[so + i] += at->tc[i], at->rd[so + i] += at->tr[i];
    }
}

/* Smear of objective row crow over the node: for each normalised input i,
 * width_i × max |∂(crow·y)/∂x'_i| over the box, the gradient bounded by
 * interval back-propagation (ReLU derivative 1 if active, 0 if inactive,
 * [0, 1] if unstable), in centre/radius form: c_src += A_tᵀc, r_src +=
 * |A_t|ᵀr for every term of a node (the radii add; the centres' sum is
 * the centre of the sum). score [n_in]; buf: 2·nodes_len + 2 × max width
 * scratch; seen [n_layers + 1]. */
static void lg_bab_smear(const lg_bab_ctx *cx, const lg_bounds *b, const double *crow, double *score, double *buf,
                         unsigned char *seen)
{
    const lg_net *net = cx->net;
    size_t w = (size_t)lg_net_max_width(net), nl = lg_net_nodes_len(net);
    double *cn = buf, *rd = buf + nl, *tc = buf + 2 * nl, *tr = tc + w; /* node layout (core/net.h) */
    memset(seen, 0, (size_t)net->n_layers + 1);
    size_t oout = lg_net_node_offset(net, net->n_layers - 1);
    for (int j = 0; j < cx->n_out; j++) {
        cn[oout + j] = crow[j];
        rd[oout + j] = 0;
    }
    seen[net->n_layers] = 1;
    size_t ol = nl;
    for (int l = net->n_layers - 1; l >= 0; l--) {
        const lg_layer *L = &net->layers[l];
        ol -= (size_t)L->n_out;
        double *cen = cn + ol, *rad = rd + ol;
        if (!seen[l + 1]) continue; /* the objective does not read this node */
        if (L->act != LG_ACT_RELU && L->act != LG_ACT_IDENTITY) {
            /* smooth: the derivative over [lo, hi] taken from its ends and
             * middle (a split heuristic, not a bound) */
            const lg_act_info *info = lg_act_info_of(L->act);
            double pp = L->lambda; /* the table reads its own parameter (gelu: 1) */
            for (int j = 0; j < L->n_out; j++) {
                double lo = b->lo[l][j], hi = b->hi[l][j];
                if (!isfinite(lo) || !isfinite(hi)) lo = -10, hi = 10;
                double d0 = info->df(lo, pp), d1 = info->df(hi, pp), d2 = info->df(0.5 * (lo + hi), pp);
                double dl = fmin(d0, fmin(d1, d2)), dh = fmax(d0, fmax(d1, d2));
                if (lo < 0 && hi > 0) dl = fmin(dl, info->df(0.0, pp)), dh = fmax(dh, info->df(0.0, pp));
                double c = cen[j], r = rad[j];
                double e[4] = {dl * (c - r), dl * (c + r), dh * (c - r), dh * (c + r)};
                double gl = fmin(fmin(e[0], e[1]), fmin(e[2], e[3])), gh = fmax(fmax(e[0], e[1]), fmax(e[2], e[3]));
                cen[j] = 0.5 * (gl + gh);
                rad[j] = 0.5 * (gh - gl);
            }
        } else if (L->act == LG_ACT_RELU) {
            for (int j = 0; j < L->n_out; j++) {
                double lo = b->lo[l][j], hi = b->hi[l][j];
                if (lo >= 0) continue;
                if (hi <= 0) {
                    cen[j] = rad[j] = 0;
                    continue;
                }
                double gl = fmin(0, cen[j] - rad[j]), gh = fmax(0, cen[j] + rad[j]);
                cen[j] = 0.5 * (gl + gh);
                rad[j] = 0.5 * (gh - gl);
            }
        }
        const lg_vopdef *vop = lg_vop(L->lin.kind);
        if (vop) { /* a node: the kind's smear (opstage.h) */
            vop->smear(net, b, L, cen, rad, cn, rd, seen, tc, tr);
            continue;
        }
        lg_smear_at at = {net, cen, rad, cn, rd, tc, tr};
        lg_layer_terms_back(L, seen, lg_bab_smear_term, &at); /* Aᵀc, |A|ᵀr (core/traverse.h) */
    }
    for (int i = 0; i < cx->n_in; i++)
        score[i] = seen[0] ? (fabs(cn[i]) + rd[i]) * (b->xhi[i] - b->xlo[i]) : 0.0;
}

static lg_status lg_bab_input_split(const lg_bab_ctx *cx, const lg_bab_node *n, lg_bounds *b,
                                    const lg_bab_split_in *in, lg_bab_node **c0, lg_bab_node **c1, const char **why)
{
    const double *crow = in->crow;
    double key = in->key;
    *c0 = *c1 = NULL;
    size_t w = (size_t)lg_net_max_width(cx->net), nl = lg_net_nodes_len(cx->net);
    double *buf = malloc((2 * nl + 2 * w + (size_t)cx->n_in) * sizeof *buf + (size_t)cx->net->n_layers + 1);
    if (!buf) return lg_fail(LG_ERR_NOMEM, "bab: out of memory");
    double *score = buf + 2 * nl + 2 * w;
    lg_bab_smear(cx, b, crow, score, buf, (unsigned char *)(score + cx->n_in));
    int best = -1, widest = -1;
    double best_s = 0, widest_r = 0;
    for (int i = 0; i < cx->n_in; i++) {
        double wi = n->hi[i] - n->lo[i], w0 = cx->hi[i] - cx->lo[i];
        if (!(wi > cx->o->min_width * w0) || !(wi > 0)) continue;
        /* the midpoint must differ from both ends */
        double mid = n->lo[i] + 0.5 * wi;
        if (!(mid > n->lo[i] && mid < n->hi[i])) continue;
        if (score[i] > best_s) {
            best_s = score[i];
            best = i;
        }
        if (wi / w0 > widest_r) {
            widest_r = wi / w0;
            widest = i;
        }
    }
    free(buf);
    /* objective flat in every splittable dimension, or the last split did not
     * raise the bound: halve the side widest relative to the root instead */
    if (best < 0 || (n->depth > 0 && !(key > n->pkey))) best = widest;
    if (best < 0) {
        *why = "sub-box below the minimum width";
        return LG_OK;
    }
    *c0 = lg_bab_node_child(cx, n);
    *c1 = lg_bab_node_child(cx, n);
    if (!*c0 || !*c1) {
        lg_bab_node_free(*c0);
        lg_bab_node_free(*c1);
        *c0 = *c1 = NULL;
        return lg_fail(LG_ERR_NOMEM, "bab: out of memory for a node");
    }
    double mid = n->lo[best] + 0.5 * (n->hi[best] - n->lo[best]);
    (*c0)->hi[best] = mid;
    (*c1)->lo[best] = mid;
    lg_bab_bounds_save(cx, b, (*c0)->pre);
    lg_bab_bounds_save(cx, b, (*c1)->pre);
    return LG_OK;
}

const lg_bab_strategy lg_bab_input_strategy = {LG_BAB_INPUT, lg_bab_input_bound, lg_bab_input_split};
