/* op_max.c — the max-pool node (core/op.h entry "max-pool", DESIGN.md §1
 * "The max-pool node"): its windows, its forward pass in double and its
 * shape check. Its exact ReLU form is op_max_lower.c. No allocation. */
#include "core/op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lg_net_has_max(const lg_net *net)
{
    for (int k = 0; k < net->n_layers; k++)
        if (net->layers[k].lin.kind == LG_LAYER_MAX) return 1;
    return 0;
}

lg_window lg_max_window_box(const lg_conv *c, int o)
{
    int hw = c->h_out * c->w_out, oy = (o % hw) / c->w_out, ox = o % c->w_out;
    lg_window w = {o / hw, oy * c->sh - c->ph, oy * c->sh - c->ph + c->kh, ox * c->sw - c->pw,
                   ox * c->sw - c->pw + c->kw};
    if (w.y0 < 0) w.y0 = 0;
    if (w.y1 > c->h_in) w.y1 = c->h_in;
    if (w.x0 < 0) w.x0 = 0;
    if (w.x1 > c->w_in) w.x1 = c->w_in;
    return w;
}

int lg_max_window(const lg_conv *c, int o, int *idx)
{
    lg_window w = lg_max_window_box(c, o);
    int n = 0;
    for (int iy = w.y0; iy < w.y1; iy++)
        for (int ix = w.x0; ix < w.x1; ix++) idx[n++] = (w.ch * c->h_in + iy) * c->w_in + ix;
    return n;
}

void lg_max_forward(const lg_linear *A, const double *x, double *out)
{
    const lg_conv *c = &A->conv;
    for (int o = 0; o < A->n_out; o++) {
        lg_window w = lg_max_window_box(c, o);
        int any = 0;
        double m = 0.0;
        for (int iy = w.y0; iy < w.y1 && m == m; iy++)
            for (int ix = w.x0; ix < w.x1; ix++) {
                double v = x[((size_t)w.ch * (size_t)c->h_in + (size_t)iy) * (size_t)c->w_in + (size_t)ix];
                if (!any || v > m || v != v) m = v; /* NaN propagates */
                any = 1;
                if (m != m) break;
            }
        out[o] = m;
    }
}


lg_status lg_max_check_shape(const lg_net *net, int k, int t, const lg_linear *A, int n_out, lg_status code)
{
    (void)net;
    const lg_conv *c = &A->conv;
    if (!lg_conv_ok(c) || c->c_out != c->c_in || c->c_in * c->h_in * c->w_in != A->n_in ||
        c->c_out * c->h_out * c->w_out != n_out || (size_t)c->kh * (size_t)c->kw > LG_NET_MAX_DIM)
        return lg_fail(code,
                       "layer %d, term %d: max-pool geometry %dx%dx%d -> %dx%dx%d (window %dx%d, stride %dx%d, "
                       "padding %dx%d) is inconsistent or does not match sizes %d -> %d",
                       k, t, c->c_in, c->h_in, c->w_in, c->c_out, c->h_out, c->w_out, c->kh, c->kw, c->sh, c->sw,
                       c->ph, c->pw, A->n_in, n_out);
    return LG_OK;
}

void lg_max_node_forward(const lg_linear *A, const double *a, const double *b, double *z)
{
    (void)b;
    lg_max_forward(A, a, z);
}

int lg_max_describe(const lg_linear *A, const char *from, char *buf, size_t cap)
{
    const lg_conv *g = &A->conv;
    return snprintf(buf, cap, "max-pool from %s %dx%dx%d -> %dx%dx%d, window %dx%d, stride %dx%d, padding %dx%d", from,
                    g->c_in, g->h_in, g->w_in, g->c_out, g->h_out, g->w_out, g->kh, g->kw, g->sh, g->sw, g->ph, g->pw);
}
