/* onnx_run.h — the ONNX interpreter's state and the op table (not a public
 * header; shared by onnx_read.c, which owns the run and its helpers, and
 * onnx_ops.c, which holds the op table and the dispatch of one node).
 *
 * lg_ox_run owns its graph G, its builder B and cur; onnx_read.c frees them.
 * An op-table entry is static data; nothing in it is owned.
 */
#ifndef LG_ONNX_RUN_H
#define LG_ONNX_RUN_H

#include "core/runctx.h"
#include "onnx/onnx_internal.h"

typedef struct lg_ox_run {
    lg_ox_graph G;
    lg_ox_b B;
    int gen;   /* generation of the pending map: values with this gen are relative to its z */
    int *cur;  /* [n_vals] values produced in this generation */
    int n_cur;
    const lg_runctx *run; /* deadline checked per initializer and per node (NULL none) */
    int opset;            /* the default domain's opset version (0: not declared) */
    unsigned char *skip;  /* [n_node] 1: the node was read as part of an earlier node's pattern */
} lg_ox_run;

/* ---- one node's call (onnx_ops.c fills it before the handler runs) ---- */
typedef struct lg_ox_op lg_ox_op;
typedef struct lg_ox_call {
    int node;
    const Onnx__NodeProto *nd;
    const int *in;        /* value index per input, −1 for "" */
    lg_ox_val *dyn[2];    /* the first two network-valued inputs */
    int nd_dyn, dpos;     /* how many inputs are network values; the first one's position */
    lg_ox_val *x;         /* the network value the op reads (taken back into the pending map) */
    lg_ox_val tmp;        /* storage behind x when it was set aside */
    int sole;             /* no other value of this generation is still read */
    const lg_ox_op *op;
} lg_ox_call;

typedef lg_status (*lg_ox_op_fn)(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out);

/* Flags of an op-table entry: what the dispatcher checks or does before the handler. */
enum {
    LG_OXF_RAW = 1 << 0,      /* called with every network input as it is (no value taken back) */
    LG_OXF_PAIR = 1 << 1,     /* two network inputs call the handler as they are (Add, Sub, Mul) */
    LG_OXF_LIN = 1 << 2,      /* the value must be a plain linear value read by this node only */
    LG_OXF_FIRST = 1 << 3,    /* the network value must be input 0 */
    LG_OXF_FOLD = 1 << 4,     /* the value's scalar factor is applied to the pending map first */
    LG_OXF_MULTIOUT = 1 << 5, /* may have outputs beyond the first (unused ones) */
    LG_OXF_PATTERN = 1 << 6,  /* continues a GELU or Swish pattern on a forked value (Erf, Sigmoid) */
    LG_OXF_SCALAR = 1 << 7,   /* continues a pattern with a scalar constant operand (Mul, Div) */
    LG_OXF_ADD = 1 << 8,      /* as SCALAR, but not on a plain linear value (Add, Sub: the 1 + erf step) */
    LG_OXF_OUTPUTS = 1 << 9   /* every output is a value of its own that others may read (Split) */
};

struct lg_ox_op {
    const char *op;   /* the ONNX op_type, written here only */
    lg_ox_op_fn fn;
    unsigned flags;
    int aux;          /* handler-specific (the arithmetic operator, a pool's global flag, ...) */
    const char *doc;  /* what is read, for the supported-ops text ("" when the name says it) */
};

/* The entry of op, or NULL. */
const lg_ox_op *lg_ox_op_find(const char *op);
/* The supported-ops text generated from the table (static storage). */
const char *lg_ox_ops_text(void);
/* The supported op nearest to op by edit distance (case-insensitive). */
const char *lg_ox_op_nearest(const char *op);
/* Interpret node (with at least one network-valued input) into out. */
lg_status lg_ox_dyn_node(lg_ox_run *R, int node, lg_ox_val *out);

/* ---- helpers of onnx_read.c the handlers call ---- */
const char *lg_ox_name(const lg_ox_run *R, int node);
int lg_ox_live_gen(const lg_ox_run *R);
int lg_ox_is_scalar(const lg_ox_const *c);
lg_status lg_ox_pattern_fail(const lg_ox_run *R, int node);
lg_status lg_ox_release(lg_ox_run *R, int node);
int lg_ox_param_down(double num, double den, int sqrt2, double *p_lo);
lg_status lg_ox_erf_lambda(const lg_ox_run *R, int node, const lg_ox_val *x, lg_ox_val *o);
int lg_ox_pattern_is(double kmul, double kdiv, double k, double want);
lg_status lg_ox_close_pattern(const lg_ox_run *R, lg_ox_b *B, int node, lg_act_onnx_pattern pat, double p);
/* Add/Sub/Mul/Div ('+', '-', '*', '/') with one dynamic operand x and one constant c. */
lg_status lg_ox_arith(lg_ox_run *R, int node, char op, lg_ox_val *x, int x_first, const lg_ox_const *c,
                      lg_ox_val *out);
lg_status lg_ox_gemm(lg_ox_run *R, int node);
lg_status lg_ox_matmul(lg_ox_run *R, int node, int dyn_first, const lg_ox_const *W);
lg_status lg_ox_swish(lg_ox_run *R, int node, const lg_ox_val *a, const lg_ox_val *h, int sole);
lg_status lg_ox_act_param_op(lg_ox_run *R, int node, lg_ox_val *x, int dpos, int sole, lg_act act, int alias);
lg_status lg_ox_settle(lg_ox_run *R, int node, const int *keep, int nk);
lg_status lg_ox_attach(lg_ox_run *R, int node, lg_ox_val *v);
/* The value v as the output of node *src with factor 1, read through the index map *map
 * (owned by the caller; NULL: read as it is); closes v's map into a layer when needed. */
lg_status lg_ox_as_node(lg_ox_run *R, int node, lg_ox_val *v, int *src, int **map);
/* Width of node src (LG_NET_INPUT or a layer) of the builder. */
int lg_ox_node_width(const lg_ox_b *B, int src);
/* ---- Transformer ops (onnx_tnode.c): product, softmax, layernorm nodes and reductions ---- */
/* MatMul (elementwise = 0) or Mul (elementwise = 1) of two network values a, b: a product node. */
lg_status lg_ox_product(lg_ox_run *R, int node, lg_ox_val *a, lg_ox_val *b, int elementwise, lg_ox_val *out);
/* Softmax of the pending map (opset ≥ 13: one axis; older: the axes from `axis` on, coalesced). */
lg_status lg_ox_softmax(lg_ox_run *R, int node);
/* LayerNormalization (opset 17) of the pending map. */
lg_status lg_ox_layernorm(lg_ox_run *R, int node);
/* ReduceMean (mean = 1) or ReduceSum of the pending map: a layernorm node when the node starts
 * PyTorch's decomposition of LayerNorm (ReduceMean, Sub, Pow 2, ReduceMean, Add ε, Sqrt, Div,
 * and optionally Mul γ, Add β), else a linear map (the mean divides by the count exactly or
 * is refused). */
lg_status lg_ox_reduce(lg_ox_run *R, int node, lg_ox_val *x, int mean);
lg_status lg_ox_sum(lg_ox_run *R, int node, lg_ox_val *a, lg_ox_val *b, int sub, lg_ox_val *out);
/* v as the output of a node with factor 1: *src, and an index map over it (*map, owned) or NULL. */
lg_status lg_ox_as_node(lg_ox_run *R, int node, lg_ox_val *v, int *src, int **map);
/* Flat element counts equal and the shapes equal up to leading 1s. */
int lg_ox_same_shape(const lg_ox_shape *a, const lg_ox_shape *b);
/* Max or Min (is_max 1 or 0) of two network values (onnx_maxmin.c). */
lg_status lg_ox_maxmin2(lg_ox_run *R, int node, lg_ox_val *a, lg_ox_val *b, int is_max, lg_ox_val *out);
lg_status lg_ox_concat(lg_ox_run *R, int node, lg_ox_val *out);
lg_status lg_ox_slice(lg_ox_run *R, int node, lg_ox_val *x, lg_ox_val *out);
lg_status lg_ox_split(lg_ox_run *R, int node, lg_ox_val *x);
lg_status lg_ox_gather(lg_ox_run *R, int node, lg_ox_val *x, lg_ox_val *out);
lg_status lg_ox_clip(lg_ox_run *R, int node, lg_ox_val *x, int dpos, int sole);

#endif
