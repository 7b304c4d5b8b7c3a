/* opstage_max.c — the max-pool node's verify-stage entries (opstage.h): its
 * interval bound (the largest end over each window: exact), the bounds of a
 * max-pool layer tightened from its source's (lg_bounds_max_layer,
 * bounds.h), the attack's backward step (the gradient of a max goes to its
 * first largest input) and the input-split smear. lg_bounds_max_layer
 * allocates a window's index scratch and frees it. */
#include "verify/opstage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void lg_bounds_max_node(const lg_net *net, const lg_layer *L, const double *al, const double *ah, const size_t *noff,
                        double *lo, double *hi)
{
    (void)net;
    const lg_conv *c = &L->conv;
    size_t so = noff[L->src + 1];
    for (int o = 0; o < L->n_out; o++) {
        lg_window wb = lg_max_window_box(c, o);
        int first = 1;
        double l = 0.0, h = 0.0;
        for (int iy = wb.y0; iy < wb.y1; iy++)
            for (int ix = wb.x0; ix < wb.x1; ix++) {
                size_t i = so + (size_t)((wb.ch * c->h_in + iy) * c->w_in + ix);
                double a = al[i], u = ah[i];
                if (first || a > l || a != a) l = a;
                if (first || u > h || u != u) h = u;
                first = 0;
            }
        lo[o] = l == l ? l : -INFINITY;
        hi[o] = h == h ? h : INFINITY;
    }
}

lg_status lg_bounds_max_layer(lg_bounds *b, const lg_net *net, int k)
{
    const lg_layer *L = &net->layers[k], *S = L->src >= 0 ? &net->layers[L->src] : NULL;
    int *idx = malloc((size_t)L->conv.kh * (size_t)L->conv.kw * sizeof *idx);
    if (!idx) return lg_fail(LG_ERR_NOMEM, "bounds: out of memory");
    for (int o = 0; o < L->n_out; o++) {
        int n = lg_max_window(&L->conv, o, idx);
        double l = -INFINITY, h = -INFINITY;
        for (int q = 0; q < n; q++) {
            int i = idx[q];
            double a, c;
            if (S) lg_bounds_post(S, b->lo[L->src][i], b->hi[L->src][i], &a, &c);
            else a = b->xlo[i], c = b->xhi[i];
            if (a != a) a = -INFINITY;
            if (c != c) c = INFINITY;
            if (a > l) l = a;
            if (c > h) h = c;
        }
        if (l > b->lo[k][o]) b->lo[k][o] = l;
        if (h < b->hi[k][o]) b->hi[k][o] = h;
    }
    free(idx);
    return LG_OK;
}

void lg_attack_max_backward(const lg_layer *L, const double *a, const double *b, const double *out, const double *dz,
                            double *da, double *db)
{
    (void)b, (void)out, (void)db;
    const lg_conv *c = &L->lin.conv;
    for (int o = 0; o < L->n_out; o++) {
        lg_window wb = lg_max_window_box(c, o);
        int top = -1;
        for (int iy = wb.y0; iy < wb.y1; iy++)
            for (int ix = wb.x0; ix < wb.x1; ix++) {
                int i = (wb.ch * c->h_in + iy) * c->w_in + ix;
                if (top < 0 || a[i] > a[top]) top = i;
            }
        if (top >= 0) da[top] += dz[o];
    }
}

void lg_bab_smear_max(const lg_net *net, const lg_bounds *b, const lg_layer *L, const double *cen, const double *rad,
                      double *cn, double *rd, unsigned char *seen, double *tc, double *tr)
{
    (void)b;
    const lg_linear *T = &L->lin; /* each window input may carry the output */
    size_t so = lg_net_node_offset(net, T->src);
    double *dc = seen[T->src + 1] ? tc : cn + so, *dr = seen[T->src + 1] ? tr : rd + so;
    memset(dc, 0, (size_t)T->n_in * sizeof *dc);
    memset(dr, 0, (size_t)T->n_in * sizeof *dr);
    for (int j = 0; j < T->n_out; j++) {
        lg_window wb = lg_max_window_box(&T->conv, j);
        for (int iy = wb.y0; iy < wb.y1; iy++)
            for (int ix = wb.x0; ix < wb.x1; ix++)
                dr[(wb.ch * T->conv.h_in + iy) * T->conv.w_in + ix] += fabs(cen[j]) + rad[j];
    }
    if (seen[T->src + 1])
        for (int i = 0; i < T->n_in; i++) cn[so + i] += tc[i], rd[so + i] += tr[i];
    seen[T->src + 1] = 1;
}
