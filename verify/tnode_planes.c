/* tnode_planes.c — the Transformer nodes' relaxation rows for the
 * back-ends (tnode_planes.h): the walk over the nodes, each node's rows
 * from its entry (opstage.h relax_rows, in the kind's own file), and the
 * parts the kinds share (their sources' bounds, the rows of a grouped
 * node's planes). */
#include "verify/tnode_planes.h"

#include <math.h>
#include <stdlib.h>

#include "verify/opstage.h"

lg_status lg_tnode_relax_check(const lg_net *net)
{
    for (int k = 0; k < net->n_layers; k++) {
        lg_act a = net->layers[k].act;
        if (a != LG_ACT_RELU && a != LG_ACT_IDENTITY)
            return lg_fail(LG_ERR_UNSUPPORTED, "layer %d has activation %s: a network with Transformer nodes is "
                           "verified with relu and identity activations only (substitute ReLU first)", k,
                           lg_act_name(a) ? lg_act_name(a) : "?");
    }
    if (lg_net_has_max(net))
        return lg_fail(LG_ERR_UNSUPPORTED, "verification does not take max-pool and Transformer nodes in one network yet");
    return LG_OK;
}

void lg_tnode_post(const lg_net *net, const lg_bounds *b, int src, int i, double *lo, double *hi)
{
    if (src < 0) {
        *lo = b->xlo[i], *hi = b->xhi[i];
        return;
    }
    lg_bounds_post(&net->layers[src], b->lo[src][i], b->hi[src][i], lo, hi);
}

lg_status lg_tnode_group_rows(const lg_net *net, const lg_bounds *b, int k, lg_trelax *r, lg_tnode_group_planes planes,
                              size_t work_n, int sum_one, int *count)
{
    const lg_layer *L = &net->layers[k];
    size_t g = (size_t)L->lin.op.group, n = (size_t)L->n_out;
    int os = (int)lg_net_node_offset(net, L->lin.src), oz = (int)lg_net_node_offset(net, k);
    double *lu = malloc(2 * g * sizeof *lu), *lo_w = malloc(g * g * sizeof *lo_w), *up_w = malloc(g * g * sizeof *up_w);
    double *lo_c = malloc(g * sizeof *lo_c), *up_c = malloc(g * sizeof *up_c), *coef = malloc((g + 1) * sizeof *coef);
    int *var = malloc((g + 1) * sizeof *var);
    lg_dv *work = malloc(work_n * sizeof *work);
    lg_status st = LG_OK;
    if (!lu || !lo_w || !up_w || !lo_c || !up_c || !coef || !var || !work) {
        st = lg_fail(LG_ERR_NOMEM, "relaxation: out of memory");
        goto done;
    }
    for (size_t G = 0; G < n / g && st == LG_OK; G++) {
        size_t o0 = G * g;
        for (size_t j = 0; j < g; j++) lg_tnode_post(net, b, L->lin.src, (int)(o0 + j), &lu[j], &lu[g + j]);
        planes(net, b, k, (int)G, g, lu, lu + g, lo_w, lo_c, up_w, up_c, work);
        for (size_t i = 0; i < g && st == LG_OK; i++) {
            for (int up = 0; up < 2 && st == LG_OK; up++) {
                const double *w = (up ? up_w : lo_w) + i * g;
                double c = up ? up_c[i] : lo_c[i];
                int ok = isfinite(c);
                var[0] = oz + (int)(o0 + i);
                coef[0] = 1.0;
                for (size_t j = 0; j < g; j++) {
                    var[j + 1] = os + (int)(o0 + j);
                    coef[j + 1] = -w[j];
                    ok = ok && isfinite(w[j]);
                }
                if (ok) st = lg_trelax_add_row(r, up ? 'L' : 'G', c, (int)g + 1, var, coef); /* y − w·x ≷ c */
            }
        }
        if (st == LG_OK && sum_one) { /* Σ_i s_i = 1 over the group, exactly */
            for (size_t i = 0; i < g; i++) var[i] = oz + (int)(o0 + i), coef[i] = 1.0;
            st = lg_trelax_add_row(r, 'E', 1.0, (int)g, var, coef);
        }
    }
    (*count)++;
done:
    free(lu);
    free(lo_w);
    free(up_w);
    free(lo_c);
    free(up_c);
    free(coef);
    free(var);
    free(work);
    return st;
}

lg_status lg_tnode_relax_build(const lg_net *net, const lg_bounds *b, lg_trelax *r)
{
    lg_trelax_init(r, lg_net_nodes_len(net));
    if (!lg_bounds_finite(b)) return lg_fail(LG_ERR_ARG, "relaxation: the bounds are not finite");
    for (int i = 0; i < net->n_in; i++)
        if (!isfinite(b->xlo[i]) || !isfinite(b->xhi[i]))
            return lg_fail(LG_ERR_ARG, "relaxation: the normalised input box is not finite");
    lg_status st = LG_OK;
    for (int k = 0; k < net->n_layers && st == LG_OK; k++) {
        const lg_vopdef *vop = lg_layer_vop(&net->layers[k]);
        if (vop && vop->relax_rows) st = vop->relax_rows(net, b, k, r);
    }
    if (st != LG_OK) lg_trelax_free(r);
    return st;
}
