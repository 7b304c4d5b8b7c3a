/* onnx_maxmin.c — Max and Min of two network values (onnx_run.h lg_ox_maxmin2):
 * max(a, b) = a + relu(b − a) and min(a, b) = a − relu(a − b), exact in the reals.
 *
 * a becomes the output of a node (or an index map over one) read twice: once inside the
 * difference, closed into a ReLU layer, and once in the sum with that layer, which stays
 * pending as the node's value (onnx_read.c lg_ox_sum builds both). Nothing is owned past the
 * call: the temporary values' maps are taken over by the pending map.
 */
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_run.h"

/* A set-aside value: out(src) or map over it (taken over), factor 1, of shape s. */
static lg_status lg_ox_node_val(const lg_ox_run *R, lg_ox_val *v, int src, const int *map, const lg_ox_shape *s)
{
    memset(v, 0, sizeof *v);
    v->kind = LG_OX_DYN;
    v->form = LG_OX_LIN;
    v->kmul = v->kdiv = 1.0;
    v->node = src;
    v->shape = *s;
    if (!map) return LG_OK;
    size_t n = lg_ox_shape_count(s);
    if (!(v->pm = calloc(1, sizeof *v->pm)) || !(v->pm->map = malloc(n * sizeof *v->pm->map))) {
        free(v->pm);
        v->pm = NULL;
        return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
    }
    memcpy(v->pm->map, map, n * sizeof *map);
    v->pm->shape = *s;
    v->pm->n = (int)n;
    v->pm->m = src < 0 ? R->B.n_in : R->B.layers[src].n_out;
    v->pm->src = src;
    return LG_OK;
}

static void lg_ox_val_drop(lg_ox_val *v)
{
    if (v->pm) {
        lg_ox_pm_free(v->pm);
        free(v->pm);
        v->pm = NULL;
    }
}

lg_status lg_ox_maxmin2(lg_ox_run *R, int node, lg_ox_val *a, lg_ox_val *b, int is_max, lg_ox_val *out)
{
    lg_ox_b *B = &R->B;
    const int *in = R->G.in_idx[node];
    lg_status st;
    if (a->form != LG_OX_LIN || b->form != LG_OX_LIN) return lg_ox_pattern_fail(R, node);
    int keep[2] = {in[0], in[1]};
    if ((st = lg_ox_settle(R, node, keep, 2)) != LG_OK) return st;
    if (!lg_ox_same_shape(&a->shape, &b->shape))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: %s of network values of different shapes (%zu and %zu values); "
                       "it must not broadcast", R->G.file, lg_ox_name(R, node), is_max ? "Max" : "Min",
                       lg_ox_shape_count(&a->shape), lg_ox_shape_count(&b->shape));
    lg_ox_shape os = a->shape.rank >= b->shape.rank ? a->shape : b->shape;
    int sa, *map = NULL;
    if ((st = lg_ox_as_node(R, node, a, &sa, &map)) != LG_OK) return st;
    lg_ox_val a1, a2, d, r;
    memset(&a2, 0, sizeof a2);
    st = lg_ox_node_val(R, &a1, sa, map, &os);
    if (st == LG_OK) st = lg_ox_node_val(R, &a2, sa, map, &os);
    free(map);
    lg_ox_val bb = *b; /* b's map stays with b (taken by the first sum, or copied when read later) */
    memset(&d, 0, sizeof d);
    /* the difference b − a (max) or a − b (min), pending; then its ReLU layer */
    if (st == LG_OK) st = is_max ? lg_ox_sum(R, node, &bb, &a1, 1, &d) : lg_ox_sum(R, node, &a1, &bb, 1, &d);
    b->pm = bb.pm;
    if (st == LG_OK) st = lg_ox_b_fold(B, &d);
    if (st == LG_OK) st = lg_ox_b_close(B, LG_ACT_RELU, 1.0);
    if (st == LG_OK) {
        st = lg_ox_node_val(R, &r, B->src, NULL, &os);
        lg_ox_pm_free(&B->pm); /* the identity over the ReLU layer: r reads it */
        R->gen++;
    }
    /* a + relu(b − a) or a − relu(a − b) */
    if (st == LG_OK) st = lg_ox_sum(R, node, &a2, &r, !is_max, out);
    lg_ox_val_drop(&a1);
    lg_ox_val_drop(&a2);
    return st;
}
