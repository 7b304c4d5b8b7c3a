/* gen_graph.c — seeded random small DAGs (gen_graph.h). */
#include "gen_graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GG_MAX 16 /* nodes incl. the output */

typedef struct gg_node {
    int width;
    int c, h, w; /* image shape when c > 0 */
} gg_node;

typedef struct gg {
    lg_rng *r;
    int n_in;
    gg_node in;
    gg_node node[GG_MAX];
    lg_linear terms[GG_MAX][3];
    lg_layer_spec spec[GG_MAX];
    int n;
    /* index-map recipes, applied after the build */
    int kind[GG_MAX][3]; /* 0: none, 1: identity, 2: concat part (offset), 3: slice (offset) */
    int off[GG_MAX][3];
} gg;

static const gg_node *gg_get(const gg *g, int src) { return src < 0 ? &g->in : &g->node[src]; }

static int gg_pick(gg *g) { return (int)lg_rng_below(g->r, (uint32_t)(g->n + 1)) - 1; }

static void gg_term(gg *g, int t, lg_layer_kind kind, int src)
{
    memset(&g->terms[g->n][t], 0, sizeof g->terms[g->n][t]);
    g->terms[g->n][t].kind = kind;
    g->terms[g->n][t].src = src;
    g->terms[g->n][t].n_in = gg_get(g, src)->width;
}

static void gg_push(gg *g, int width, lg_act act, int n_terms)
{
    g->node[g->n].width = width;
    g->spec[g->n] = (lg_layer_spec){width, act, n_terms, g->terms[g->n]};
    g->n++;
}

lg_status lg_test_dag_random(lg_net *net, lg_rng *r, const lg_test_dag_opts *o)
{
    gg g;
    memset(&g, 0, sizeof g);
    g.r = r;
    int max_nodes = o->max_nodes > 0 ? o->max_nodes : 4, maxw = o->max_width > 0 ? o->max_width : 5;
    if (max_nodes > GG_MAX - 1) max_nodes = GG_MAX - 1;
    if (o->conv) {
        g.in.c = 1 + (int)lg_rng_below(r, 2);
        g.in.h = 2 + (int)lg_rng_below(r, 2);
        g.in.w = 2 + (int)lg_rng_below(r, 2);
        g.in.width = g.in.c * g.in.h * g.in.w;
    } else {
        g.in.width = 2 + (int)lg_rng_below(r, 3);
    }
    int hidden = 1 + (int)lg_rng_below(r, (uint32_t)max_nodes);
    for (int k = 0; k < hidden; k++) {
        int last = g.n - 1;
        const gg_node *lp = gg_get(&g, last);
        int choice = (int)lg_rng_below(r, o->maxpool ? 7 : 5);
        if (choice >= 5) choice = 5; /* max-pool: a third of the draws when enabled */
        if (choice >= 4 && !(lp->c > 0)) choice = 0;
        if (choice == 0) { /* dense from a random earlier node */
            int src = lg_rng_below(r, 2) ? last : gg_pick(&g);
            gg_term(&g, 0, LG_LAYER_DENSE, src);
            gg_push(&g, 2 + (int)lg_rng_below(r, (uint32_t)(maxw - 1)), o->act, 1);
        } else if (choice == 1) { /* residual: dense(last) + shortcut from an earlier node */
            int src = gg_pick(&g), w = gg_get(&g, src)->width;
            gg_term(&g, 0, LG_LAYER_DENSE, last);
            if (lg_rng_below(r, 2)) {
                gg_term(&g, 1, LG_LAYER_INDEX, src);
                g.kind[g.n][1] = 1;
            } else {
                gg_term(&g, 1, LG_LAYER_DENSE, src);
                w = 2 + (int)lg_rng_below(r, (uint32_t)(maxw - 1));
            }
            gg_push(&g, w, o->act, 2);
        } else if (choice == 2) { /* concat of two earlier nodes */
            int a = last, b = gg_pick(&g);
            int wa = gg_get(&g, a)->width, wb = gg_get(&g, b)->width;
            gg_term(&g, 0, LG_LAYER_INDEX, a);
            gg_term(&g, 1, LG_LAYER_INDEX, b);
            g.kind[g.n][0] = 2;
            g.off[g.n][0] = 0;
            g.kind[g.n][1] = 2;
            g.off[g.n][1] = wa;
            gg_push(&g, wa + wb, LG_ACT_IDENTITY, 2);
        } else if (choice == 3) { /* slice of an earlier node under the activation */
            int src = gg_pick(&g), w = gg_get(&g, src)->width;
            int len = 1 + (int)lg_rng_below(r, (uint32_t)w), start = (int)lg_rng_below(r, (uint32_t)(w - len + 1));
            gg_term(&g, 0, LG_LAYER_INDEX, src);
            g.kind[g.n][0] = 3;
            g.off[g.n][0] = start;
            gg_push(&g, len, o->act, 1);
        } else if (choice == 5) { /* max-pool node on the last image: window 1–3 (≤ the image), stride 1–2,
                                     padding below the window (−∞: left out) */
            lg_conv c;
            memset(&c, 0, sizeof c);
            c.c_in = c.c_out = lp->c, c.h_in = lp->h, c.w_in = lp->w;
            c.kh = 1 + (int)lg_rng_below(r, (uint32_t)(lp->h < 3 ? lp->h : 3));
            c.kw = 1 + (int)lg_rng_below(r, (uint32_t)(lp->w < 3 ? lp->w : 3));
            if (c.kh * c.kw == 1) c.kw = lp->w > 1 ? 2 : 1;
            c.sh = 1 + (int)lg_rng_below(r, 2), c.sw = 1 + (int)lg_rng_below(r, 2);
            c.ph = (int)lg_rng_below(r, (uint32_t)c.kh), c.pw = (int)lg_rng_below(r, (uint32_t)c.kw);
            c.h_out = lg_conv_out_size(c.h_in, c.kh, c.sh, c.ph);
            c.w_out = lg_conv_out_size(c.w_in, c.kw, c.sw, c.pw);
            gg_term(&g, 0, LG_LAYER_MAX, last);
            g.terms[g.n][0].conv = c;
            g.node[g.n].c = c.c_out, g.node[g.n].h = c.h_out, g.node[g.n].w = c.w_out;
            gg_push(&g, c.c_out * c.h_out * c.w_out, LG_ACT_IDENTITY, 1);
        } else { /* conv on the last image, 1–2 channels, kernel 1–2 (≤ the image), stride 1, padding 0–1 */
            lg_conv c;
            memset(&c, 0, sizeof c);
            c.c_in = lp->c, c.h_in = lp->h, c.w_in = lp->w;
            c.c_out = 1 + (int)lg_rng_below(r, 2);
            /* a kernel no larger than the image: an output of at least one pixel */
            c.kh = 1 + (int)lg_rng_below(r, lp->h > 1 ? 2 : 1), c.kw = 1 + (int)lg_rng_below(r, lp->w > 1 ? 2 : 1);
            c.sh = c.sw = 1;
            c.ph = c.kh > 1 ? (int)lg_rng_below(r, 2) : 0;
            c.pw = c.kw > 1 ? (int)lg_rng_below(r, 2) : 0;
            c.h_out = lg_conv_out_size(c.h_in, c.kh, c.sh, c.ph);
            c.w_out = lg_conv_out_size(c.w_in, c.kw, c.sw, c.pw);
            gg_term(&g, 0, LG_LAYER_CONV2D, last);
            g.terms[g.n][0].conv = c;
            g.node[g.n].c = c.c_out, g.node[g.n].h = c.h_out, g.node[g.n].w = c.w_out;
            gg_push(&g, c.c_out * c.h_out * c.w_out, o->act, 1);
        }
    }
    /* output: dense from the last node, half the time a dense skip too */
    int n_out = o->n_out > 0 ? o->n_out : 2 + (int)lg_rng_below(r, 2);
    int last = g.n - 1, skip = lg_rng_below(r, 2) && g.n > 1;
    gg_term(&g, 0, LG_LAYER_DENSE, last);
    if (skip) {
        int s2 = gg_pick(&g);
        gg_term(&g, 1, LG_LAYER_DENSE, s2 == last ? LG_NET_INPUT : s2);
    }
    gg_push(&g, n_out, LG_ACT_IDENTITY, 1 + skip);
    lg_status st = lg_net_build(net, g.in.width, g.n, g.spec);
    if (st != LG_OK) return st;
    for (int k = 0; k < net->n_layers; k++) {
        lg_layer *L = &net->layers[k];
        int fan = 0;
        for (int t = 0; t < lg_layer_n_lin(L); t++)
            fan += lg_layer_lin(L, t)->kind == LG_LAYER_CONV2D
                       ? lg_layer_lin(L, t)->conv.c_in * lg_layer_lin(L, t)->conv.kh * lg_layer_lin(L, t)->conv.kw
                       : lg_layer_lin(L, t)->n_in;
        double sc = 1.0 / sqrt((double)(fan > 0 ? fan : 1));
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            lg_linear *A = lg_layer_lin_mut(L, t);
            size_t nw = lg_linear_n_weights(A);
            for (size_t i = 0; i < nw; i++) A->W[i] = sc * lg_rng_normal(r);
            if (A->kind != LG_LAYER_INDEX) continue;
            for (int q = 0; q < A->n_out; q++) {
                int m = -1;
                if (g.kind[k][t] == 1) m = q;
                if (g.kind[k][t] == 2) m = q - g.off[k][t] >= 0 && q - g.off[k][t] < A->n_in ? q - g.off[k][t] : -1;
                if (g.kind[k][t] == 3) m = g.off[k][t] + q;
                A->map[q] = m;
            }
        }
        for (int q = 0; q < L->n_out; q++) L->b[q] = 0.3 * lg_rng_normal(r);
        if (L->act == LG_ACT_IDENTITY && k + 1 < net->n_layers)
            for (int q = 0; q < L->n_out; q++) L->b[q] = 0.0; /* a concat adds no bias */
    }
    lg_status vs = lg_net_validate(net);
    if (vs != LG_OK) lg_net_free(net);
    return vs;
}

lg_status lg_test_dag_fixed(lg_net *net, unsigned seed)
{
    lg_linear t0[1] = {{.kind = LG_LAYER_DENSE, .n_in = 4, .src = LG_NET_INPUT}};
    lg_linear t1[2] = {{.kind = LG_LAYER_DENSE, .n_in = 3, .src = 0}, {.kind = LG_LAYER_INDEX, .n_in = 4, .src = LG_NET_INPUT}};
    lg_linear t2[2] = {{.kind = LG_LAYER_INDEX, .n_in = 3, .src = 0}, {.kind = LG_LAYER_INDEX, .n_in = 3, .src = 1}};
    lg_linear t3[2] = {{.kind = LG_LAYER_DENSE, .n_in = 6, .src = 2}, {.kind = LG_LAYER_DENSE, .n_in = 4, .src = LG_NET_INPUT}};
    lg_layer_spec sp[4] = {{3, LG_ACT_RELU, 1, t0}, {3, LG_ACT_RELU, 2, t1}, {6, LG_ACT_IDENTITY, 2, t2},
                           {2, LG_ACT_IDENTITY, 2, t3}};
    lg_status st = lg_net_build(net, 4, 4, sp);
    if (st != LG_OK) return st;
    lg_rng r;
    lg_rng_init(&r, seed, 0);
    for (size_t i = 0; i < net->n_params; i++) net->params[i] = lg_rng_uniform(&r) * 2.0 - 1.0;
    for (int o = 0; o < 3; o++) net->layers[1].terms[0].map[o] = o;
    for (int o = 0; o < 6; o++) {
        net->layers[2].lin.map[o] = o < 3 ? o : -1;
        net->layers[2].terms[0].map[o] = o < 3 ? -1 : o - 3;
    }
    return LG_OK;
}
