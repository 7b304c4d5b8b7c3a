/* op_tokmap.c — the per-token map (core/op.h entry "per-token map",
 * core/net.h LG_LAYER_TOKMAP, DESIGN.md §1 "The per-token map"): its
 * geometry, shape check and `lgelu info` line, its dense expansion
 * kron(I_T, A), and the compaction of dense terms that are exactly such
 * an expansion (lg_net_compact_tokmap). Its products are core/linop.c.
 * lg_net_compact_tokmap allocates the compact net and frees the old one;
 * nothing else allocates. */
#include "core/op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lg_conv lg_tokmap_geom(int T, int n_in_tok, int n_out_tok)
{
    return (lg_conv){.c_in = n_in_tok, .h_in = T, .w_in = 1, .c_out = n_out_tok, .h_out = T, .w_out = 1,
                     .kh = 1, .kw = 1, .sh = 1, .sw = 1, .ph = 0, .pw = 0};
}

lg_linear lg_tokmap_term(int src, int T, int n_in_tok, int n_out_tok)
{
    return (lg_linear){.kind = LG_LAYER_TOKMAP, .n_in = T * n_in_tok, .n_out = T * n_out_tok,
                       .conv = lg_tokmap_geom(T, n_in_tok, n_out_tok), .src = src};
}

lg_status lg_tokmap_check_shape(const lg_net *net, int k, int t, const lg_linear *A, int n_out, lg_status code)
{
    (void)net;
    const lg_conv *c = &A->conv, g = lg_tokmap_geom(c->h_in, c->c_in, c->c_out);
    if (c->c_in < 1 || c->c_out < 1 || c->h_in < 1 || memcmp(c, &g, sizeof g) != 0 ||
        (size_t)c->h_in * (size_t)c->c_in != (size_t)A->n_in || (size_t)c->h_in * (size_t)c->c_out != (size_t)n_out)
        return lg_fail(code,
                       "layer %d, term %d: per-token map of %d tokens, %d -> %d values each, does not match sizes "
                       "%d -> %d (or its geometry fields are not those of a per-token map)",
                       k, t, c->h_in, c->c_in, c->c_out, A->n_in, n_out);
    return LG_OK;
}

int lg_tokmap_describe(const lg_linear *A, const char *from, char *buf, size_t cap)
{
    return snprintf(buf, cap, "per-token map from %s: %d tokens, %d -> %d values each (one %dx%d block)", from,
                    A->conv.h_in, A->conv.c_in, A->conv.c_out, A->conv.c_out, A->conv.c_in);
}

void lg_tokmap_dense(const lg_linear *A, double *W)
{
    int T = A->conv.h_in, bi = A->conv.c_in, bo = A->conv.c_out;
    size_t ni = (size_t)A->n_in;
    for (int t = 0; t < T; t++)
        for (int r = 0; r < bo; r++)
            memcpy(W + ((size_t)t * (size_t)bo + (size_t)r) * ni + (size_t)t * (size_t)bi, A->W + (size_t)r * (size_t)bi,
                   (size_t)bi * sizeof *W);
}

/* 1 if the dense n_out×n_in matrix W is kron(I_T, A) with T tokens: the
 * diagonal blocks bit-equal to the first, every other entry +0.0 or −0.0. */
static int lg_tokmap_is_kron(const double *W, int n_out, int n_in, int T)
{
    int bo = n_out / T, bi = n_in / T;
    for (int o = 0; o < n_out; o++) {
        const double *row = W + (size_t)o * (size_t)n_in;
        int t = o / bo;
        const double *blk = W + (size_t)(o - t * bo) * (size_t)n_in; /* the same row of block 0 */
        for (int i = 0; i < n_in; i++) {
            int in_blk = i / bi == t;
            if (!in_blk && row[i] != 0.0) return 0;
            if (in_blk && t > 0 && memcmp(&row[i], &blk[i - t * bi], sizeof *row) != 0) return 0;
        }
    }
    return 1;
}

/* The largest T > 1 (a common divisor of the sizes) for which dense term A is
 * kron(I_T, block), or 0; also 0 when that block is 1×1 (a multiple of the
 * identity, left as it is). */
static int lg_tokmap_tokens(const lg_linear *A)
{
    if (A->kind != LG_LAYER_DENSE || A->n_out < 2 || A->n_in < 2) return 0;
    for (int T = A->n_out < A->n_in ? A->n_out : A->n_in; T > 1; T--)
        if (A->n_out % T == 0 && A->n_in % T == 0 && lg_tokmap_is_kron(A->W, A->n_out, A->n_in, T))
            return A->n_out == T && A->n_in == T ? 0 : T;
    return 0;
}

lg_status lg_net_compact_tokmap(lg_net *net, int *n_compacted)
{
    int nt = net->n_layers + net->n_terms, found = 0;
    int *tok = calloc((size_t)nt, sizeof *tok); /* per term (layer by layer): its token count, or 0 */
    if (!tok) return lg_fail(LG_ERR_NOMEM, "out of memory");
    for (int k = 0, q = 0; k < net->n_layers; k++)
        for (int t = 0; t < lg_layer_n_lin(&net->layers[k]); t++, q++)
            found += (tok[q] = lg_tokmap_tokens(lg_layer_lin(&net->layers[k], t))) > 0;
    if (n_compacted) *n_compacted = found;
    if (!found) {
        free(tok);
        return LG_OK;
    }
    lg_layer_spec *sp = malloc((size_t)net->n_layers * sizeof *sp);
    lg_linear *tm = malloc((size_t)nt * sizeof *tm);
    lg_net dst = {0};
    lg_status st = LG_ERR_NOMEM;
    if (!sp || !tm) {
        lg_fail(LG_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int k = 0, q = 0; k < net->n_layers; k++) {
        const lg_layer *S = &net->layers[k];
        sp[k] = (lg_layer_spec){S->n_out, S->act, lg_layer_n_lin(S), tm + q};
        for (int t = 0; t < lg_layer_n_lin(S); t++, q++) {
            const lg_linear *A = lg_layer_lin(S, t);
            tm[q] = *A;
            if (tok[q]) tm[q] = lg_tokmap_term(A->src, tok[q], A->n_in / tok[q], A->n_out / tok[q]);
        }
    }
    if ((st = lg_net_build(&dst, net->n_in, net->n_layers, sp)) != LG_OK) goto done;
    dst.t = net->t;
    for (int k = 0, q = 0; k < net->n_layers; k++) {
        const lg_layer *S = &net->layers[k];
        lg_layer *D = &dst.layers[k];
        lg_layer_copy_act_bias(D, S);
        for (int t = 0; t < lg_layer_n_lin(S); t++, q++) {
            const lg_linear *A = lg_layer_lin(S, t);
            lg_linear *B = lg_layer_lin_mut(D, t);
            if (tok[q]) { /* block 0: the top-left bo×bi of the dense matrix */
                int bo = B->conv.c_out, bi = B->conv.c_in;
                for (int r = 0; r < bo; r++)
                    memcpy(B->W + (size_t)r * (size_t)bi, A->W + (size_t)r * (size_t)A->n_in, (size_t)bi * sizeof *B->W);
            } else {
                if (lg_linear_n_weights(A)) memcpy(B->W, A->W, lg_linear_n_weights(A) * sizeof *B->W);
                if (lg_op(A->kind)->n_map) memcpy(B->map, A->map, lg_op(A->kind)->n_map(A) * sizeof *B->map);
            }
        }
    }
    dst.in_sub = net->in_sub;
    dst.in_div = net->in_div;
    net->in_sub = net->in_div = NULL;
    lg_net_free(net);
    *net = dst;
    st = LG_OK;
done:
    free(tok);
    free(sp);
    free(tm);
    return st;
}
