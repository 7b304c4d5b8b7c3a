/* bounds_tnode.c — the objective's bound of a net with Transformer nodes
 * from its output layer's interval bounds (bounds.h
 * lg_bounds_tnode_objective; margin rule). The nodes' own interval bounds
 * are their entries' (opstage.h interval, in each kind's opstage file). No
 * allocation. */
#include "verify/bounds.h"

#include <math.h>

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
