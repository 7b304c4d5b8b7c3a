/* onnx_internal.h — shared by onnx_graph.c and onnx_read.c only (not a
 * public header): decoded constant tensors, the tensor-name table, the
 * topological node order and attribute access over the protoc-c structs.
 *
 * lg_ox_graph owns every array it holds (names are borrowed from the
 * unpacked ModelProto, which must outlive it); lg_ox_graph_free releases.
 * lg_ox_b (onnx_affine.c) is the affine map under construction.
 */
#ifndef LG_ONNX_INTERNAL_H
#define LG_ONNX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/act.h"
#include "core/net.h"
#include "core/status.h"
#include "onnx.pb-c.h"

#define LG_OX_MAX_RANK 8

typedef struct lg_ox_shape {
    int rank;
    int64_t d[LG_OX_MAX_RANK];
} lg_ox_shape;

/* A decoded constant: values as double (float/double tensors) or int64. */
typedef struct lg_ox_const {
    lg_ox_shape shape;
    size_t n;       /* element count (1 for a scalar) */
    int dtype;      /* ONNX__TENSOR_PROTO__DATA_TYPE__* */
    double *v;      /* [n] for FLOAT/DOUBLE, else NULL */
    int64_t *iv;    /* [n] for INT64, else NULL */
} lg_ox_const;

typedef enum lg_ox_kind { LG_OX_UNDEF = 0, LG_OX_CONST, LG_OX_DYN } lg_ox_kind;

/* Forms of a dynamic value relative to the current pre-activation z. */
typedef enum lg_ox_form {
    LG_OX_LIN = 0,  /* (kmul/kdiv)·z */
    LG_OX_ERF,      /* k·erf(λ z/√2) */
    LG_OX_HALF1,    /* k·(1 + erf(λ z/√2)) */
    LG_OX_PROD,     /* k·z·(1 + erf(λ z/√2)) */
    LG_OX_SIG       /* k·σ(λ z): the gate of the Swish pattern z·σ(βz), λ = β */
} lg_ox_form;

typedef struct lg_ox_val {
    const char *name;
    lg_ox_kind kind;
    int uses;          /* remaining consumers (+1 if a graph output) */
    int producer;      /* node index, or -1 */
    lg_ox_const c;     /* when CONST */
    lg_ox_form form;   /* when DYN */
    double kmul, kdiv, k, lambda;
    int has_mul;
    /* where a DYN value lives (onnx_read.c): gen == the run's current
     * generation: relative to the pending map z of lg_ox_b; gen == 0: set
     * aside, (kmul/kdiv)·v with v = pm's map (owned, when pm) or the output of
     * node `node` (LG_NET_INPUT or a layer), of shape `shape` */
    int gen;
    int node;
    struct lg_ox_pm *pm;
    lg_ox_shape shape;
} lg_ox_val;

typedef struct lg_ox_graph {
    const Onnx__GraphProto *g;
    const char *file;
    size_t n_vals, cap;
    lg_ox_val *vals;
    size_t hcap;          /* hash table of value indices, open addressing */
    size_t *hash;         /* [hcap], SIZE_MAX = empty */
    int *order;           /* [n_node] topological order */
    int **in_idx;         /* [n_node][n_input] value index or -1 for "" */
    int **out_idx;        /* [n_node][n_output] */
} lg_ox_graph;

/* Decode a TensorProto into c (owns c->v / c->iv). `what` names it in
 * messages. Sizes are checked against LG_NET_MAX_PARAMS. */
lg_status lg_ox_const_decode(lg_ox_const *c, const Onnx__TensorProto *t, const char *file, const char *what);
void lg_ox_const_free(lg_ox_const *c);
/* Element count of a shape with overflow/limit check; 0 on failure. */
size_t lg_ox_shape_count(const lg_ox_shape *s);

/* 1 if the protobuf message nesting of a ModelProto image stays within
 * max_depth (protobuf-c's decoder recurses without a limit, so a deeply
 * nested hostile file would overflow the stack). */
int lg_ox_nesting_ok(const uint8_t *buf, size_t len, int max_depth);

/* Build the name table and the topological order of g; refuses duplicate
 * producers, dangling inputs and cycles. */
lg_status lg_ox_graph_init(lg_ox_graph *G, const Onnx__GraphProto *g, const char *file);
void lg_ox_graph_free(lg_ox_graph *G);
/* Index of a name or -1. */
long lg_ox_find(const lg_ox_graph *G, const char *name);

/* Attribute access on node nd: returns 1 and sets *out if present with the
 * right type, 0 if absent, -1 (with lg_fail set) if present with a wrong type. */
int lg_ox_attr_int(const lg_ox_graph *G, int node, const char *name, int64_t *out);
int lg_ox_attr_float(const lg_ox_graph *G, int node, const char *name, double *out);
const Onnx__AttributeProto *lg_ox_attr(const Onnx__NodeProto *nd, const char *name);

/* "node 3 'Gemm_0' (Gemm)" for messages, in a static buffer. */
const char *lg_ox_node_desc(const lg_ox_graph *G, int node);

/* ---- the import note (onnx_opts.c; onnx.h lg_onnx_import_note) ----
 * Started empty by each read; a handler that changes the file's function adds one clause
 * (rounded = 1: the network read differs from the file's exact function). */
void lg_ox_note_begin(void);
void lg_ox_note_add(int rounded, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- the pending affine map (onnx_affine.c) ----
 * Owns W, d, b, in_sub, in_div and every layer's W and b until
 * onnx_read.c copies them into the lg_net; lg_ox_b_free releases all. */
/* A further linear term A·out(src) of a pending map or a layer (core/net.h
 * lg_linear): dense W [n][n_in], a conv kernel, or an index map [n]; owned. */
typedef struct lg_ox_term {
    lg_layer_kind kind;
    int src, n_in;
    double *W;
    int *map;
    lg_conv conv;
} lg_ox_term;

typedef struct lg_ox_layer {
    int n_in, n_out;
    double *W, *b;  /* [n_out][n_in] (conv: the kernel), [n_out]; owned */
    lg_conv conv;   /* c_out > 0: a conv layer (core/net.h), or a per-token map when tok */
    int tok;        /* term 0 is a per-token map (core/net.h LG_LAYER_TOKMAP): block in W, geometry in conv */
    int *map;       /* an index-map term 0 [n_out] (W NULL), owned; else NULL */
    int is_max;     /* a max-pool node (core/net.h LG_LAYER_MAX): geometry in conv, W NULL, b zeros */
    lg_layer_kind tkind; /* a Transformer node (core/net.h: product, softmax, layernorm) when
                            lg_kind_is_tnode(tkind): parameters in op, index tables ia, ib in map
                            (product), gamma then beta in W (layernorm); b zeros; else 0 */
    lg_nodeop op;
    int src;        /* node term 0 reads: LG_NET_INPUT or an earlier layer */
    int n_xt;       /* further terms, owned */
    lg_ox_term *xt;
    lg_act act;
    double lambda;
} lg_ox_layer;

/* The pending affine map z = A·out(src) + Σ xt + b, A one of: nothing (the
 * identity), a diagonal d, a dense W [n][m], a conv K, an index map. */
#define LG_OX_PM_FIELDS                                                                              \
    lg_ox_shape shape; /* shape of z */                                                             \
    int n, m;          /* width of z; width of node src */                                          \
    double *W;         /* [n][m] or NULL (diagonal) */                                              \
    double *d;         /* [n] diagonal, NULL = ones */                                              \
    double *b;         /* [n] or NULL = zeros */                                                    \
    double *K;         /* a pending conv: z = conv_K(a) + b with geometry conv (W, d NULL) */       \
    lg_conv conv;                                                                                   \
    int src;           /* the node A reads: LG_NET_INPUT or a layer */                              \
    int *map;          /* [n] an index map (W, d, K NULL) or NULL */                                \
    int tok;           /* K with conv is a per-token map (core/net.h LG_LAYER_TOKMAP: block [c_out][c_in] \
                          over h_in tokens, token-major), not a conv */                                 \
    int is_pad;        /* map is a zero Pad of an image by pad_h, pad_w on each side (a conv folds it) */ \
    int pad_h, pad_w;                                                                               \
    int n_xt;          /* further terms (a residual sum, a Concat) */                               \
    lg_ox_term *xt;                                                                                 \
    int bn_rounded;    /* b holds a BatchNormalization fold (rounded to nearest) */
typedef struct lg_ox_pm {
    LG_OX_PM_FIELDS
} lg_ox_pm;

typedef struct lg_ox_b {
    const char *file;
    int n_in;
    union {
        struct {
            LG_OX_PM_FIELDS
        };
        lg_ox_pm pm; /* the pending map as a value of its own (set aside and taken back) */
    };
    double *in_sub, *in_div;  /* [n_in] or NULL */
    int input_shared;         /* several nodes read the input: no Sub/Div becomes in_sub/in_div */
    int n_layers, cap_layers;
    lg_ox_layer *layers;
    size_t n_params;
} lg_ox_b;

/* z ← kron(I_T, A)·z, A [N][Kin] (taken over) the same matrix on each of T tokens: a pending
 * per-token map when the map is the identity (never written out densely until an op needs
 * the dense matrix: lg_ox_b_materialize); otherwise the dense kron through lg_ox_b_linear. */
lg_status lg_ox_b_tokmap(lg_ox_b *B, double *A, int T, int Kin, int N);
/* Free a pending map's arrays and zero it. */
void lg_ox_pm_free(lg_ox_pm *p);
/* Deep copy (dst zeroed on failure): LG_OK or LG_ERR_NOMEM. */
lg_status lg_ox_pm_copy(lg_ox_pm *dst, const lg_ox_pm *src);
/* z ← op(z) for an index map op [n2] (op[o] in −1..n−1; taken over). */
lg_status lg_ox_b_index(lg_ox_b *B, int *op, int n2);
/* Make the pending map a list of terms over nodes plus a bias (a diagonal
 * d is closed into a layer first): the map becomes empty (terms and bias
 * returned, owned by the caller: *bias may be NULL). */
lg_status lg_ox_b_take_terms(lg_ox_b *B, lg_ox_term **terms, int *n_terms, double **bias);

void lg_ox_b_free(lg_ox_b *B);
/* r = a·b, a/c, a + b in double; 1 if r is the exact real result (FMA or
 * TwoSum residual 0, no underflow), 0 otherwise (r is then rounded). */
int lg_ox_mul_exact(double a, double b, double *r);
int lg_ox_div_exact(double a, double c, double *r);
int lg_ox_add_exact(double a, double b, double *r);
/* 1 if the pending map is the identity (no W, d, b or conv). */
int lg_ox_b_identity(const lg_ox_b *B);
double *lg_ox_dup(const double *v, size_t n);
/* z ← z + sign·c, c [n]; a first Sub at the input becomes in_sub. */
lg_status lg_ox_b_shift(lg_ox_b *B, const double *c, double sign);
/* z ← z·c or z/c (divide = 1), c [n]; a first Div at the input becomes in_div. */
lg_status lg_ox_b_scale(lg_ox_b *B, const double *c, int divide);
/* z ← M·z + c; M [n2][n] is taken over (freed), c [n2] or NULL. Only exact
 * folds (onnx_affine.c); otherwise the pending map is closed as an identity
 * layer first (a pending conv as a conv layer). */
lg_status lg_ox_b_linear(lg_ox_b *B, double *M, int n2, const double *c);
/* A pending conv (or per-token map) written as the dense W (every entry a kernel weight or 0),
 * within LG_OX_DENSE_MAX_BYTES; no-op without one. Every op other than a
 * bias shift, the BatchNormalization fold and the close calls it first;
 * lg_ox_b_linear first closes a pending conv as an identity conv layer
 * unless M is a selection, so a conv stays structured unless a selection
 * composes into it. */
lg_status lg_ox_b_materialize(lg_ox_b *B);
/* Close the map into a layer with activation act (λ for lgelu); a pending
 * conv becomes a conv layer. */
lg_status lg_ox_b_close(lg_ox_b *B, lg_act act, double lambda);
/* Append a Transformer node (core/net.h lg_nodeop) of kind reading node src (width n_in) and,
 * for a product, op->src_b: n_out outputs; W (layernorm: gamma then beta, 2·group values) or
 * map (product: ia then ib, 2·n_out·K entries) is taken over. The pending map must be empty
 * (the caller settled it); it becomes the identity on the new node. */
lg_status lg_ox_b_tnode(lg_ox_b *B, lg_layer_kind kind, const lg_nodeop *op, int src, int n_in, int n_out, double *W,
                        int *map);
/* Append a max-pool node of geometry c reading the node the (identity)
 * pending map reads; the map becomes the identity on its output. */
lg_status lg_ox_b_max(lg_ox_b *B, const lg_conv *c);
/* A Tanh layer as 2·σ(2z) − 1 (exact in the reals): scale, close as a
 * sigmoid layer, 2·a − 1 pending. */
lg_status lg_ox_b_tanh(lg_ox_b *B);
/* z ← clip(z, lo, hi) (a bound absent when has_lo/has_hi is 0; lo ≤ hi): one or two ReLU
 * layers of the same width (onnx_affine.c). */
lg_status lg_ox_b_clip(lg_ox_b *B, int has_lo, double lo, int has_hi, double hi);
/* Apply a LIN value's pending scalar kmul/kdiv to the map (v becomes 1·z). */
lg_status lg_ox_b_fold(lg_ox_b *B, lg_ox_val *v);

/* z ← a·z + c, a and c [n], rounded to nearest (BatchNormalization only). */
lg_status lg_ox_b_affine_rounded(lg_ox_b *B, const double *a, const double *c);

/* ---- image ops (onnx_conv.c), each on the pending map of node `node` ---- */
/* Largest dense matrix an image op may become (bytes). */
#define LG_OX_DENSE_MAX_BYTES ((size_t)1 << 30)
lg_status lg_ox_conv(const lg_ox_graph *G, lg_ox_b *B, int node);
/* ConvTranspose: an index-map layer (zeros between and around the pixels) and a stride-1 conv
 * with the flipped kernel (onnx_conv.c). */
lg_status lg_ox_convtranspose(const lg_ox_graph *G, lg_ox_b *B, int node);
/* Resize and Upsample in nearest mode (every coordinate and rounding mode of the spec; integer
 * or dyadic scales, or sizes): an index map (onnx_conv.c). upsample: the node is the older
 * Upsample op (the op table's aux). */
lg_status lg_ox_resize(const lg_ox_graph *G, lg_ox_b *B, int node, int upsample);
/* AveragePool, or GlobalAveragePool when global = 1. */
lg_status lg_ox_avgpool(const lg_ox_graph *G, lg_ox_b *B, int node, int global);
/* MaxPool, or GlobalMaxPool when global = 1: a max-pool node (onnx_conv.c). */
lg_status lg_ox_maxpool(const lg_ox_graph *G, lg_ox_b *B, int node, int global);
lg_status lg_ox_pad(const lg_ox_graph *G, lg_ox_b *B, int node);
lg_status lg_ox_transpose(const lg_ox_graph *G, lg_ox_b *B, int node);
lg_status lg_ox_batchnorm(const lg_ox_graph *G, lg_ox_b *B, int node);

/* ---- shape arithmetic (onnx_shape.c) ---- */
/* The constant-folding table (DESIGN.md "Adding an ONNX op"): each op folded on
 * constant inputs is one entry {op, fold, flags, aux}; the op name is written
 * there once, and the supported-ops text and the refusal are generated from it.
 * An entry is static data; nothing in it is owned. */
typedef struct lg_ox_fold_in {
    const lg_ox_const *x;     /* input 0 (NULL for a source) */
    const lg_ox_shape *dyn;   /* the known shape of a network-valued input 0, else NULL */
    int aux;                  /* the entry's aux */
} lg_ox_fold_in;
typedef lg_status (*lg_ox_fold_fn)(const lg_ox_graph *G, int node, const lg_ox_fold_in *a, lg_ox_const *out);
enum {
    LG_OXK_SOURCE = 1 << 0, /* no input: the value is the node's own (Constant) */
    LG_OXK_SHAPE = 1 << 1   /* reads only its input's shape, which may be the network value's (Shape) */
};
typedef struct lg_ox_fold {
    const char *op;   /* the ONNX op_type */
    lg_ox_fold_fn fn;
    unsigned flags;   /* LG_OXK_* */
    int aux;          /* fold-specific (Identity 0, Flatten 1, Reshape 2) */
} lg_ox_fold;
/* The folding entry of op, or NULL. */
const lg_ox_fold *lg_ox_fold_find(const char *op);
/* The folded ops as a list for messages, generated from the table (static storage). */
const char *lg_ox_folds_text(void);
/* Edit distance of a and b, case-insensitive (at most 31 characters count; onnx_ops.c). */
int lg_ox_edit(const char *a, const char *b);
/* The refusal of a node that computes on constants with an op not in the table: it names
 * the op and the nearest folded one. */
lg_status lg_ox_fold_refuse(const lg_ox_graph *G, int node);
/* Fold node on constant inputs into out (owned by the caller, lg_ox_const_free)
 * through the table. dyn is the known shape of a dynamic first input (only an
 * LG_OXK_SHAPE entry may read one), else NULL. */
lg_status lg_ox_shape_fold(const lg_ox_graph *G, int node, const lg_ox_shape *dyn, lg_ox_const *out);
/* New shape for Flatten(axis) of s (onnx_read.c). */
lg_status lg_ox_flatten_shape(const lg_ox_graph *G, int node, const lg_ox_shape *s, lg_ox_shape *o);
/* New shape for Reshape(s, spec) (onnx_read.c). */
lg_status lg_ox_reshape_shape(const lg_ox_graph *G, int node, const lg_ox_shape *s, const lg_ox_const *spec,
                              lg_ox_shape *o);
/* The shape after Squeeze or Unsqueeze node (axes as attribute or input) of
 * a value of shape in; in and o may alias. */
lg_status lg_ox_squeeze_shape(const lg_ox_graph *G, int node, const lg_ox_shape *in, lg_ox_shape *o);

#endif
