/* alpha_tnode.c — the products' McCormick α optimised by coordinate search
 * for the objective's bound (alpha_tnode.h). */
#include "verify/alpha_tnode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/op.h"
#include "verify/backsub.h"
#include "verify/alpha.h"
#include "verify/backsub_tnode.h"
#include "verify/opstage.h"

/* The bound of every row at the current α into v; the score (alpha_tnode.h)
 * as *score. Each value raises out[r]. Returns the back-substitution's status. */
static lg_status lg_at_eval(lg_backsub *s, const lg_net *net, int m, const double *C, const double *d,
                            const double *alpha, double *v, double *out, double *score)
{
    int no = lg_net_n_out(net);
    memcpy(s->A, C, (size_t)m * (size_t)no * sizeof *s->A);
    memcpy(s->c, d, (size_t)m * sizeof *s->c);
    lg_status st = lg_backsub_lower(s, net->n_layers - 1, m, alpha, NULL, 0, NULL, v);
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
    int np = 0, open = 0;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_vopdef *vop = lg_layer_vop(&net->layers[k]);
        np += vop && vop->bs_n_alpha > 0;
    }
    for (int r = 0; r < m; r++) open |= !(out[r] > 0.0);
    if (np == 0 || m < 1 || !open) return LG_OK;
    size_t size = (size_t)lg_alpha_size(net);
    double *v = malloc((size_t)m * sizeof *v), *al = malloc(size * sizeof *al);
    lg_backsub s;
    lg_status st = v && al ? lg_backsub_init(&s, b, net, m) : lg_fail(LG_ERR_NOMEM, "bounds: out of memory");
    if (st != LG_OK) {
        free(v);
        free(al);
        return st;
    }
    lg_alpha_default(b, net, 1, al); /* the ReLU slopes every row shares (stride 0) */
    /* a ReLU that reaches no output (bounds.h lg_bounds_reach) has no slope worth an evaluation */
    unsigned char **reach = lg_bounds_reach_alloc(net); /* NULL: every ReLU counts */
    static const double grid[] = LG_ALPHA_TNODE_GRID;
    static const double rgrid[] = {0.0, 0.5, 1.0};
    int ng = (int)(sizeof grid / sizeof grid[0]), evals = 0;
    double best;
    st = lg_at_eval(&s, net, m, C, d, al, v, out, &best);
    for (int sweep = 0; sweep < LG_ALPHA_TNODE_SWEEPS && st == LG_OK; sweep++) {
        int moved = 0;
        for (int k = 0; k < net->n_layers && st == LG_OK && evals < LG_ALPHA_TNODE_EVALS; k++) {
            const lg_layer *L = &net->layers[k];
            const lg_vopdef *vop = lg_layer_vop(L);
            if (vop && vop->bs_n_alpha > 0) { /* the node's planes' α (lower, upper): opstage.h bs_n_alpha */
                for (int side = 0; side < vop->bs_n_alpha && st == LG_OK; side++) {
                    double a0 = s.talpha[2 * k + side], keep = a0;
                    for (int i = 0; i < ng && st == LG_OK; i++, evals++) {
                        if (grid[i] == a0) continue;
                        lg_bs_tnode_set_alpha(&s, k, side ? s.talpha[2 * k] : grid[i], side ? grid[i] : s.talpha[2 * k + 1]);
                        double sc;
                        st = lg_at_eval(&s, net, m, C, d, al, v, out, &sc);
                        if (st == LG_OK && sc > best) {
                            best = sc;
                            keep = grid[i];
                            moved = 1;
                        }
                    }
                    lg_bs_tnode_set_alpha(&s, k, side ? s.talpha[2 * k] : keep, side ? keep : s.talpha[2 * k + 1]);
                }
            } else if (L->act == LG_ACT_RELU && !lg_op_is(L->lin.kind, LG_OPF_NODE)) {
                double *a = al + lg_alpha_offset(net, k);
                for (int j = 0; j < L->n_out && st == LG_OK && evals < LG_ALPHA_TNODE_EVALS; j++) {
                    if (!(b->lo[k][j] < 0.0 && b->hi[k][j] > 0.0)) continue; /* stable: no slope to choose */
                    if (reach && !reach[k][j]) continue;
                    double a0 = a[j], keep = a0;
                    for (int i = 0; i < 3 && st == LG_OK; i++, evals++) {
                        if (rgrid[i] == a0) continue;
                        a[j] = rgrid[i];
                        double sc;
                        st = lg_at_eval(&s, net, m, C, d, al, v, out, &sc);
                        if (st == LG_OK && sc > best) {
                            best = sc;
                            keep = rgrid[i];
                            moved = 1;
                        }
                    }
                    a[j] = keep;
                }
            }
        }
        int left = 0;
        for (int r = 0; r < m; r++) left |= !(out[r] > 0.0);
        if (!moved || !left || evals >= LG_ALPHA_TNODE_EVALS) break;
    }
    lg_backsub_free(&s);
    free(v);
    free(al);
    free(reach);
    return st == LG_ERR_TIMEOUT ? LG_OK : st; /* out holds the bounds found before the deadline */
}
