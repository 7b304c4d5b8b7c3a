/* node.h — the trainer's entries of the node kinds (core/net.h "Transformer
 * nodes": product, softmax, layernorm), one table keyed by kind that the
 * float trainer (train/model.h) dispatches a node layer through
 * (DESIGN.md §1 "Training through the node entries"). Each kind's entry is
 * its file: node_bilinear.c, node_softmax.c, node_layernorm.c; the kernels
 * shared with the fixed ViT (train/attention.h, train/layernorm.h) are
 * reused, not written twice. The linear term kinds (dense, conv, index
 * map, per-token map) have no entry: they are the term sum of
 * train/model.c.
 *
 * A node reads its term A of the net (A->op, A->map: borrowed) and works on
 * a batch of B rows. Nothing here allocates: every array is the caller's
 * (the model's activations and parameters).
 */
#ifndef LG_TRAIN_NODE_H
#define LG_TRAIN_NODE_H

#include <stddef.h>

#include "core/net.h"

/* One node's arrays for a batch (all [B][width] row-major). */
typedef struct lg_tnode_io {
    const lg_linear *A; /* the net's term: op, map, n_in, n_out */
    int B;
    const float *a;     /* [B][n_in] the source's output */
    const float *b;     /* [B][op.n_in_b] the second source's (product), else NULL */
    float *z;           /* [B][n_out] the node's output */
    float *keep;        /* [B·keep(A)] what the backward needs, or NULL when keep is 0 */
    const float *W;     /* weights (layernorm: γ[g] then β[g]), or NULL */
    float *dW;          /* their gradients (ADDED to), or NULL */
    const int *plan;    /* what the entry's plan computed from A's tables, or NULL: none */
} lg_tnode_io;

typedef struct lg_train_op {
    lg_layer_kind kind;
    /* Floats per batch row the forward keeps for the backward, or NULL: none. */
    size_t (*keep)(const lg_linear *A);
    /* Ints of the node's plan (worked out once from its tables by `plan`, kept by the
     * trainer for the node's life), or NULL: no plan. */
    size_t (*plan_len)(const lg_linear *A);
    void (*plan)(const lg_linear *A, int *plan);
    /* io->z from io->a (and io->b); fills io->keep. */
    void (*forward)(const lg_tnode_io *io);
    /* The backward of the last forward with dz = ∂L/∂z [B][n_out]: ADDS ∂L/∂a into da
     * [B][n_in], ∂L/∂b into db [B][n_in_b] (the product's; da and db may be the same array
     * when both sources are one node) and the weight gradients into io->dW. da and db are
     * never NULL (the trainer gives scratch for a gradient it does not want). */
    void (*backward)(const lg_tnode_io *io, const float *dz, float *da, float *db);
} lg_train_op;

/* The entry of kind k, or NULL: k is not a node kind the trainer takes (a linear term, or a
 * node without a training entry such as the max-pool). */
const lg_train_op *lg_train_op_of(lg_layer_kind k);
/* Floats per batch row kind A->kind keeps (0 without an entry or a keep). */
size_t lg_train_op_keep(const lg_linear *A);
/* Ints of A's plan (0 without an entry or a plan). */
size_t lg_train_op_plan_len(const lg_linear *A);

/* The entries' parts (node_bilinear.c, node_softmax.c, node_layernorm.c). */
size_t lg_tnode_bilinear_plan_len(const lg_linear *A);
void lg_tnode_bilinear_plan(const lg_linear *A, int *plan);
void lg_tnode_bilinear_forward(const lg_tnode_io *io);
void lg_tnode_bilinear_backward(const lg_tnode_io *io, const float *dz, float *da, float *db);
void lg_tnode_softmax_forward(const lg_tnode_io *io);
void lg_tnode_softmax_backward(const lg_tnode_io *io, const float *dz, float *da, float *db);
size_t lg_tnode_layernorm_keep(const lg_linear *A);
void lg_tnode_layernorm_forward(const lg_tnode_io *io);
void lg_tnode_layernorm_backward(const lg_tnode_io *io, const float *dz, float *da, float *db);

#endif
