/* onnx.h — ONNX import into an lg_net and export of an lg_net to ONNX.
 *
 * Reading (the op table in onnx_ops.c is the list of ops, lg_onnx_supported_ops its text): the
 * ModelProto is decoded with protoc-c bindings generated at
 * build time from the system onnx.proto. The graph must be a feed-forward
 * graph over ONE dynamic input (graph inputs that also have an initializer
 * are constants, as in MATLAB exports); it becomes an lg_net graph
 * (core/net.h): Add/Sub of two network values sum their terms into one
 * layer, Concat, Slice, Split, Gather, Transpose and Pad are index maps
 * (docs/FORMATS.md has the table). Supported ops: Gemm (transA, transB,
 * alpha, beta), MatMul, Add, Sub, Mul, Div (with constant operands), Relu,
 * Sigmoid, Tanh (read as 2·Sigmoid(2x) − 1, the same real function),
 * Flatten, Squeeze, Unsqueeze, Reshape (whose target shape may be computed from the value's
 * Shape by Gather, Unsqueeze, Squeeze, Concat, Slice and Cast, as torch
 * exports x.view(x.size(0), -1); folded in onnx_shape.c), Identity, Constant, PRelu (one slope for the whole
 * layer: a scalar or a tensor whose values are all equal), the Swish pattern
 * x·Sigmoid(β·x) (β = 1: SiLU, in either operand order), and Erf inside the GELU pattern
 * x·0.5·(1 + erf(x/√2)) in its usual node orders, or the λ-GELU pattern
 * x·0.5·(1 + erf(λ·x/√2)) that lg_onnx_write produces. Sub/Div by constants
 * before the first linear op become lg_net in_sub/in_div (exact; an all-zero
 * shift or all-one divisor is dropped as the identity it is). Linear ops
 * between activations are composed into one layer, except across an Identity
 * node, which closes a layer with identity activation. Float and
 * double initialisers (raw_data or typed fields); int64 for shapes. Every
 * size from the file is bounded (LG_NET_MAX_*) before allocation; cycles,
 * dangling inputs, unknown ops, inconsistent shapes and wrong types are
 * refused with a message naming the file, node and op. Transformer ops
 * (MatMul/Mul of two network values, Softmax, LayerNormalization and its
 * decomposition, ReduceMean) become product, softmax and layernorm nodes
 * (onnx_tnode.c).
 *
 * Writing: input "input" [1, n_in], optional Sub/Div normalisation, one Gemm
 * (transB = 1) per layer (a graph layer: one Gemm, Conv or Gather per term on
 * its source, summed by Add), then Relu, the (λ-)GELU pattern with Mul, Div,
 * Erf, Add, Sigmoid, Swish as Mul(z, β)·Sigmoid·Mul(z, ·), PRelu with a
 * [1] slope, or Identity for a hidden identity layer; Transformer nodes as
 * Gather/Reshape/batched MatMul (product), Softmax, LayerNormalization or its
 * decomposition (onnx_write.c lg_ow_tnode); output "output" [1, n_out]. IR
 * version 7, opset 13 (17 with a LayerNormalization). Tensors are
 * float32 when every value of the network is exactly float-representable,
 * else double. λ-GELU's and Swish's raw parameters s and t go to metadata_props
 * ("lgelu.t", "lgelu.s.<k>") so a round trip is bit-exact.
 *
 * The caller owns the lg_net filled in by the readers (lg_net_free).
 */
#ifndef LG_ONNX_H
#define LG_ONNX_H

#include <stddef.h>

#include "core/net.h"
#include "core/runctx.h"

/* Largest ONNX file read (bytes). */
#define LG_ONNX_MAX_BYTES ((size_t)2 << 30)

/* Parse an in-memory ONNX model; `name` is used in messages. On failure
 * *net is left zeroed. */
lg_status lg_onnx_parse(lg_net *net, const unsigned char *buf, size_t len, const char *name);
/* The same under run's deadline (NULL: none), checked after the protobuf
 * decode, per initializer, per node, per 64 rows of a Gemm/MatMul weight
 * and per layer built: past it, LG_ERR_TIMEOUT and *net zeroed. */
lg_status lg_onnx_parse_in(lg_net *net, const unsigned char *buf, size_t len, const char *name, const lg_runctx *run);
/* Import options of every later ONNX read in this process (the command line's
 * --drop-final-softmax and --round-weights, set once before any read; default all 0):
 *   drop_final_softmax: a Softmax node that produces the graph output is removed, so the
 *     network's outputs are its input (the logits), as VNN-COMP properties over the logits
 *     expect; a graph output produced by anything else is refused.
 *   round_weights: an AveragePool weight 1/k, a linear Resize weight or the reciprocal 1/c of
 *     a Div by a constant c (attention's 1/sqrt(d_head)) that is not a double is rounded to the nearest double (without it such a node is refused): the network
 *     read is then not the file's exact function, and lg_onnx_import_note says so. */
typedef struct lg_onnx_import_opts {
    int drop_final_softmax;
    int round_weights;
} lg_onnx_import_opts;
void lg_onnx_set_import_opts(const lg_onnx_import_opts *o);
const lg_onnx_import_opts *lg_onnx_get_import_opts(void);
/* What the last successful ONNX read of this thread changed in the file's function, one line
 * ("" when nothing: the network read is the file's exact function); static storage. Its
 * "rounded" part (lg_onnx_import_rounded) means a verdict is about the rounded network. */
const char *lg_onnx_import_note(void);
int lg_onnx_import_rounded(void);
/* The ONNX ops the reader takes, one text generated from its op table (static storage). */
const char *lg_onnx_supported_ops(void);
/* Read an ONNX file. */
lg_status lg_onnx_read(lg_net *net, const char *path);
/* Write net as ONNX to path (see above). */
lg_status lg_onnx_write(const lg_net *net, const char *path);

/* Tensor element type of an export: AUTO as above (float32 when exact, else
 * float64); FLOAT64 always; FLOAT32 always, rounding every value to the
 * nearest float (the file is then a slightly different network: verify the
 * exported file, not the original). */
typedef enum { LG_ONNX_DTYPE_AUTO, LG_ONNX_DTYPE_FLOAT32, LG_ONNX_DTYPE_FLOAT64 } lg_onnx_dtype;

/* lg_onnx_write with a chosen element type; *n_rounded (may be NULL) is set
 * to the number of parameters a FLOAT32 export changed. */
lg_status lg_onnx_write_dtype(const lg_net *net, const char *path, lg_onnx_dtype dtype, size_t *n_rounded);
/* The writer's entry for kind k (onnx_write.c's table of kinds): 1 when it writes k as a term
 * (summed with a layer's others), 2 as a node, 0 when it has no ONNX form for k. */
int lg_onnx_write_form(lg_layer_kind k);

#endif
