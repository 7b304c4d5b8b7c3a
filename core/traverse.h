/* traverse.h — the graph traversal every stage reads the term sum through
 * (DESIGN.md "Adding an operator"). A layer computes a node's forward (its
 * table entry, core/op.h) or the term sum Σ_t A_t·out(src_t) + b; the
 * functions here are that sum written once: its value in double (one row or
 * m rows, |A| or A, written or accumulated), its backward step into the
 * sources, one row of it in any arithmetic, the nodes a layer reads (every
 * term's source, then a second source) and the counts a stage sizes its
 * rows and its rounding with. A stage says where a node's values live
 * (lg_node_val_fn, lg_node_slot_fn, or the node layout of core/net.h through
 * lg_node_buf) and keeps its own per-layer work (activation, relaxation).
 * Nothing here allocates; the caller owns every buffer.
 */
#ifndef LG_TRAVERSE_H
#define LG_TRAVERSE_H

#include <stddef.h>

#include "core/net.h"

/* Pointer to the value of node `node` (LG_NET_INPUT or a layer) in the caller's layout. */
typedef const double *(*lg_node_val_fn)(const void *ctx, int node);
/* Pointer to the writable slot of node `node` (LG_NET_INPUT or a layer) in the caller's layout. */
typedef double *(*lg_node_slot_fn)(void *ctx, int node);

/* The node layout of core/net.h (lg_net_node_offset: input at 0, then each layer):
 * ctx of lg_node_buf_val and lg_node_buf_slot. */
typedef struct lg_node_buf {
    const lg_net *net;
    double *vals; /* [lg_net_nodes_len(net)] (read only through lg_node_buf_val) */
} lg_node_buf;
const double *lg_node_buf_val(const void *ctx, int node);
double *lg_node_buf_slot(void *ctx, int node);

/* The traversal's one step: z[n_out] = layer L's pre-activation from the values of
 * the nodes it reads: a node's forward (its table entry), or the term sum
 * Σ_t A_t·out(src_t) + b (bias_first: z = b + A_0·… + A_1·… in that order; else
 * (A_0·… + A_1·… ) + b). The activation is the caller's. */
void lg_layer_pre(const lg_layer *L, lg_node_val_fn val, const void *ctx, double *z, int bias_first);
/* The term sum of layer L (not a node) over m rows, no bias: Z[m][n_out] = Σ_t A_t·X_src(t)
 * (absw: |A_t|) with X_src the [m][n_in] values val gives for term t's source; acc: added
 * to Z (else term 0 writes it). The terms in order, each through its structure (core/linop.h). */
void lg_layer_sum(const lg_layer *L, int m, lg_node_val_fn val, const void *ctx, double *Z, int absw, int acc);

/* The visit of layer L's terms in order: fn(ctx, t, A) with A = lg_layer_lin(L, t) for
 * t = 0 .. lg_layer_n_lin(L) − 1 (a node: its one term). A stage that keeps its own copy of
 * each term (the trainer's float terms) reads it by t. */
typedef void (*lg_term_visit_fn)(void *ctx, int t, const lg_linear *A);
void lg_layer_terms_visit(const lg_layer *L, lg_term_visit_fn fn, void *ctx);

/* The backward visit of layer L's terms (not a node): fn(ctx, A, first) for every term in
 * order, first = 1 when its source's slot is met for the first time (seen[src + 1] was 0;
 * it is then set to 1): the term writes its source's slot, else adds into it. */
typedef void (*lg_term_back_fn)(void *ctx, const lg_linear *A, int first);
void lg_layer_terms_back(const lg_layer *L, unsigned char *seen, lg_term_back_fn fn, void *ctx);
/* The traversal's step backward through layer L's term sum (not a node): every term's
 * A_tᵀ·dz (absw: |A_t|ᵀ·dz) into its source's slot: written where seen[src + 1] is 0 (then
 * set to 1), else added through tmp (scratch of the widest source). */
void lg_layer_pre_t(const lg_layer *L, const double *dz, int absw, lg_node_slot_fn slot, void *ctx,
                    unsigned char *seen, double *tmp);

/* The term sum's row o of layer L (not a node) in any arithmetic: fn(ctx, A, i, w) for every
 * nonzero weight w of the row on input i of term A (its source A->src), the terms in order,
 * each term's row in lg_linear_row_nz's order; idx, wv: scratch of the widest row. */
typedef void (*lg_row_fn)(void *ctx, const lg_linear *A, int i, double w);
void lg_layer_row_visit(const lg_layer *L, int o, int *idx, double *wv, lg_row_fn fn, void *ctx);
/* Entries of one row of L's term sum: Σ_t lg_linear_row_cap(A_t) (the scratch of
 * lg_layer_row_visit's idx and wv is the largest single term's). */
size_t lg_layer_sum_row_cap(const lg_layer *L);
/* Addends of one output of L's term sum for a rounding bound: every term's row length
 * (n_in; an index map adds one). */
int lg_layer_sum_len(const lg_layer *L);

/* The nodes layer L reads: its terms' sources in order, then a two-source node's second
 * source (core/op.h LG_OPF_TWO_SRC); a node read twice is listed twice. */
int lg_layer_n_src(const lg_layer *L);
int lg_layer_src(const lg_layer *L, int i);
/* last[j + 1] for the nodes j = LG_NET_INPUT .. n − 1 (last holds n + 1 entries): the last
 * of the layers 0 .. n − 1 that reads node j (lg_layer_src), −1 where none does. */
void lg_net_last_read(const lg_net *net, int n, int *last);

#endif
