/* traverse.c — the graph traversal (traverse.h): the term sum written once,
 * forward, backward and row by row, through each term's structure
 * (core/linop.h) and each node's table entry (core/op.h). No allocation. */
#include "core/traverse.h"

#include "core/linop.h"
#include "core/op.h"

const double *lg_node_buf_val(const void *ctx, int node)
{
    const lg_node_buf *at = ctx;
    return at->vals + lg_net_node_offset(at->net, node);
}

double *lg_node_buf_slot(void *ctx, int node)
{
    lg_node_buf *at = ctx;
    return at->vals + lg_net_node_offset(at->net, node);
}

void lg_layer_sum(const lg_layer *L, int m, lg_node_val_fn val, const void *ctx, double *Z, int absw, int acc)
{
    for (int t = 0; t < lg_layer_n_lin(L); t++) {
        const lg_linear *A = lg_layer_lin(L, t);
        lg_linear_mul(A, m, val(ctx, A->src), Z, absw, acc || t > 0);
    }
}

void lg_layer_pre(const lg_layer *L, lg_node_val_fn val, const void *ctx, double *z, int bias_first)
{
    const lg_opdef *op = lg_layer_op(L);
    if (op->flags & LG_OPF_NODE) { /* its layer's only term, bias 0 */
        op->forward(&L->lin, val(ctx, lg_layer_src(L, 0)), (op->flags & LG_OPF_TWO_SRC) ? val(ctx, lg_layer_src(L, 1)) : NULL,
                    z);
        return;
    }
    if (bias_first)
        for (int o = 0; o < L->n_out; o++) z[o] = L->b[o];
    lg_layer_sum(L, 1, val, ctx, z, 0, bias_first);
    if (!bias_first)
        for (int o = 0; o < L->n_out; o++) z[o] += L->b[o];
}

void lg_layer_terms_visit(const lg_layer *L, lg_term_visit_fn fn, void *ctx)
{
    for (int t = 0; t < lg_layer_n_lin(L); t++) fn(ctx, t, lg_layer_lin(L, t));
}

void lg_layer_terms_back(const lg_layer *L, unsigned char *seen, lg_term_back_fn fn, void *ctx)
{
    for (int t = 0; t < lg_layer_n_lin(L); t++) {
        const lg_linear *A = lg_layer_lin(L, t);
        int first = !seen[A->src + 1];
        seen[A->src + 1] = 1;
        fn(ctx, A, first);
    }
}

typedef struct lg_pre_t_at {
    const double *dz;
    int absw;
    lg_node_slot_fn slot;
    void *ctx;
    double *tmp;
} lg_pre_t_at;

static void lg_pre_t_term(void *ctx, const lg_linear *T, int first)
{
    lg_pre_t_at *at = ctx;
    double *dst = at->slot(at->ctx, T->src);
    if (first) {
        lg_linear_mul_t(T, 1, at->dz, dst, at->absw);
    } else {
        lg_linear_mul_t(T, 1, at->dz, at->tmp, at->absw);
        for (int i = 0; i < T->n_in; i++) dst[i] += at->tmp[i];
    }
}

void lg_layer_pre_t(const lg_layer *L, const double *dz, int absw, lg_node_slot_fn slot, void *ctx,
                    unsigned char *seen, double *tmp)
{
    lg_pre_t_at at = {dz, absw, slot, ctx, tmp};
    lg_layer_terms_back(L, seen, lg_pre_t_term, &at);
}

void lg_layer_row_visit(const lg_layer *L, int o, int *idx, double *wv, lg_row_fn fn, void *ctx)
{
    for (int t = 0; t < lg_layer_n_lin(L); t++) {
        const lg_linear *A = lg_layer_lin(L, t);
        int nz = lg_linear_row_nz(A, o, idx, wv); /* a conv's row through its structure (core/linop.h) */
        for (int q = 0; q < nz; q++)
            if (wv[q] != 0) fn(ctx, A, idx[q], wv[q]);
    }
}

size_t lg_layer_sum_row_cap(const lg_layer *L)
{
    size_t n = 0;
    for (int t = 0; t < lg_layer_n_lin(L); t++) n += (size_t)lg_linear_row_cap(lg_layer_lin(L, t));
    return n;
}

int lg_layer_sum_len(const lg_layer *L)
{
    int n = 0;
    for (int t = 0; t < lg_layer_n_lin(L); t++) {
        const lg_linear *A = lg_layer_lin(L, t);
        n += A->kind == LG_LAYER_INDEX ? 1 : A->n_in; /* an index map adds one term per output */
    }
    return n;
}

int lg_layer_n_src(const lg_layer *L) { return lg_layer_n_lin(L) + lg_layer_is(L, LG_OPF_TWO_SRC); }

int lg_layer_src(const lg_layer *L, int i)
{
    return i < lg_layer_n_lin(L) ? lg_layer_lin(L, i)->src : L->lin.op.src_b; /* a node's second source (term 0's) */
}

void lg_net_last_read(const lg_net *net, int n, int *last)
{
    for (int j = 0; j <= n; j++) last[j] = -1;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < lg_layer_n_src(&net->layers[k]); i++) last[lg_layer_src(&net->layers[k], i) + 1] = k;
}
