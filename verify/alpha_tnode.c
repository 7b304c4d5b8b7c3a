/* alpha_tnode.c — the products' McCormick α optimised by coordinate search
 * for the objective's bound (alpha_tnode.h). */
#include "verify/alpha_tnode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify/backsub.h"
#include "verify/backsub_tnode.h"

/* The bound of every row at the current α into v; the score (alpha_tnode.h)
 * as *score. Each value raises out[r]. Returns the back-substitution's status. */
static lg_status lg_at_eval(lg_backsub *s, const lg_net *net, int m, const double *C, const double *d, double *v,
                            double *out, double *score)
{
    int no = lg_net_n_out(net);
    memcpy(s->A, C, (size_t)m * (size_t)no * sizeof *s->A);
    memcpy(s->c, d, (size_t)m * sizeof *s->c);
    lg_status st = lg_backsub_lower(s, net->n_layers - 1, m, NULL, NULL, 0, NULL, v);
    double sc = 0.0;
    for (int r = 0; r < m; r++) {
        double x = st == LG_OK && v[r] == v[r] ? v[r] : -INFINITY;
        if (x > out[r]) out[r] = x;
        if (x < 0.0) sc += x;
    }
    *score = sc;
    return st;
}

lg_status lg_alpha_tnode_objective(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                                   double *out)
{
    int np = 0;
    for (int k = 0; k < net->n_layers; k++) np += net->layers[k].kind == LG_LAYER_BILINEAR;
    int open = 0;
    for (int r = 0; r < m; r++) open |= !(out[r] > 0.0);
    if (np == 0 || m < 1 || !open) return LG_OK;
    double *v = malloc((size_t)m * sizeof *v);
    lg_backsub s;
    lg_status st = v ? lg_backsub_init(&s, b, net, m) : lg_fail(LG_ERR_NOMEM, "bounds: out of memory");
    if (st != LG_OK) {
        free(v);
        return st;
    }
    static const double grid[] = LG_ALPHA_TNODE_GRID;
    int ng = (int)(sizeof grid / sizeof grid[0]);
    double best;
    st = lg_at_eval(&s, net, m, C, d, v, out, &best);
    for (int sweep = 0; sweep < LG_ALPHA_TNODE_SWEEPS && st == LG_OK; sweep++) {
        int moved = 0;
        for (int k = 0; k < net->n_layers && st == LG_OK; k++) {
            if (net->layers[k].kind != LG_LAYER_BILINEAR) continue;
            for (int side = 0; side < 2 && st == LG_OK; side++) {
                double a0 = s.talpha[2 * k + side], keep = a0;
                for (int i = 0; i < ng && st == LG_OK; i++) {
                    if (grid[i] == a0) continue;
                    double al = side ? s.talpha[2 * k] : grid[i], au = side ? grid[i] : s.talpha[2 * k + 1];
                    lg_bs_tnode_set_alpha(&s, k, al, au);
                    double sc;
                    st = lg_at_eval(&s, net, m, C, d, v, out, &sc);
                    if (st == LG_OK && sc > best) {
                        best = sc;
                        keep = grid[i];
                        moved = 1;
                    }
                }
                lg_bs_tnode_set_alpha(&s, k, side ? s.talpha[2 * k] : keep, side ? keep : s.talpha[2 * k + 1]);
            }
        }
        int left = 0;
        for (int r = 0; r < m; r++) left |= !(out[r] > 0.0);
        if (!moved || !left) break;
    }
    lg_backsub_free(&s);
    free(v);
    return st == LG_ERR_TIMEOUT ? LG_OK : st; /* out holds the bounds found before the deadline */
}
