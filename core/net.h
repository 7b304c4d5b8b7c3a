/* net.h — the network type shared by every stage.
 *
 * An lg_net is a graph over one input, its layers in topological order
 * (DESIGN.md §1 "The network as a graph"). Layer k computes
 *   z_k = Σ_t A_t·out(src_t) + b_k,   out_k = act_k(z_k),
 * a sum of linear operators (dense, conv, or an index map: Pad, Slice,
 * Concat part, Transpose, …) applied to the input or to earlier layers'
 * outputs. A chain is the case of one term per layer reading the layer
 * before it; its layers read as they always have (L->W, L->conv, …). Every
 * stage takes this one type. Activations: identity, relu, gelu, lgelu with
 * its hardness λ and raw parameter s (DESIGN.md §1), … An optional
 * per-input normalisation x' = (x − in_sub)/in_div precedes the first layer
 * (kept separate so imported ONNX constants stay exact).
 *
 * Parameters are double so that imported networks (float or double
 * initialisers) and verification encodings are exact; the trainer keeps its
 * own float copy. All W and b live in one allocation `params`, carved by the
 * layer shapes (W of layer k then b of layer k, in order). The net owns
 * params, layers, terms, maps and the normalisation arrays; lg_net_free
 * releases them.
 *
 * A conv layer (LG_LAYER_CONV2D) is the same affine map written compactly:
 * its input is the flat [c_in][h_in][w_in] image (NCHW, batch 1, so Flatten
 * is the identity), its output the flat [c_out][h_out][w_out] map, W holds
 * the kernel [c_out][c_in][kh][kw] and b one bias per output *position*
 * [n_out] (constant per channel when it comes from a conv's bias). One
 * group, no dilation, zero padding. Average pooling is a conv layer whose
 * kernel is 1/(kh·kw) on the diagonal channel pair (c, c) and 0 elsewhere.
 * Every stage applies a conv through its structure (core/linop.h: bounds,
 * the certified deviation, the attack, the exact re-check, the encodings
 * row by row). lg_net_densify (tests, and whoever wants the matrix) refuses
 * when the dense matrices would exceed a memory cap; every dense entry is a
 * kernel weight or 0, so the dense net is the same real function.
 */
#ifndef LG_NET_H
#define LG_NET_H

#include <stddef.h>

#include "core/act.h"
#include "core/status.h"

/* The kind of a linear operator (lg_linear). An index map (Identity,
 * Flatten, Reshape in NCHW order, Pad, Slice, Split, Transpose, one part of a
 * Concat) is stored as a table, never as a matrix: out[o] = in[map[o]], or 0
 * where map[o] < 0 (padding). */
typedef enum lg_layer_kind {
    LG_LAYER_DENSE = 0,
    LG_LAYER_CONV2D = 1,
    LG_LAYER_INDEX = 2,
    LG_LAYER_MAX = 3,
    LG_LAYER_BILINEAR = 4,  /* product node (DESIGN.md §1 "Transformer nodes") */
    LG_LAYER_SOFTMAX = 5,   /* softmax node */
    LG_LAYER_LAYERNORM = 6, /* layernorm node */
    LG_LAYER_TOKMAP = 7     /* per-token map: one block shared by every token (below) */
} lg_layer_kind;
#define LG_LAYER_KIND_COUNT 8

/* A per-token map (LG_LAYER_TOKMAP, DESIGN.md §1 "The per-token map") is
 * the linear term kron(I_T, A) written compactly: its input is T tokens of
 * i values each, token-major ([T][i], token t at t·i), its output T tokens
 * of o values ([T][o]), and every token goes through the same block
 * A[o][i] (W, row-major, o·i weights):
 *   out[t·o + r] = Σ_j A[r][j] · in[t·i + j].
 * Its geometry is held in `conv` as c_in = i, c_out = o, h_in = h_out = T
 * and every other field 1 (w_in, w_out, kh, kw, sh, sw) or 0 (ph, pw).
 * The bias belongs to the layer as for every term ([T·o]; a trained
 * Transformer's is the block's bias tiled over the tokens). It may be any
 * term of a layer. Stages apply it through core/linop.h (T small products
 * with A, or one dgemm over the tokens), never as its dense matrix. */

/* The Transformer nodes (DESIGN.md §1 "Transformer nodes"), held like a
 * max-pool node: the node kind is its layer's only term (term 0, source
 * `src`, width n_in), the layer's activation is the identity and its bias 0.
 *   product   (LG_LAYER_BILINEAR): a second source op.src_b of width
 *             op.n_in_b, K = op.K products per output and index tables
 *             ia = map[0 .. n_out·K), ib = map[n_out·K .. 2·n_out·K):
 *             out[o] = Σ_k h_src[ia[o·K+k]] · h_src_b[ib[o·K+k]].
 *   softmax   (LG_LAYER_SOFTMAX): contiguous groups of g = op.group
 *             (n_out = n_in, a multiple of g):
 *             out[o] = exp(x[o]) / Σ_{o' in o's group} exp(x[o']).
 *   layernorm (LG_LAYER_LAYERNORM): contiguous groups of g, op.eps > 0,
 *             W = [gamma[g]; beta[g]] (2g weights in params):
 *             out[o] = gamma[o mod g]·(x[o] − μ)/sqrt(σ² + eps) + beta[o mod g],
 *             μ, σ² the group's mean and biased variance.
 * Every other term kind has op zeroed. */
typedef struct lg_nodeop {
    int src_b;   /* product: the second source (LG_NET_INPUT or an earlier layer) */
    int n_in_b;  /* product: its width */
    int K;       /* product: products per output (≥ 1) */
    int group;   /* softmax, layernorm: group size g (≥ 1) */
    double eps;  /* layernorm: ε > 0 */
} lg_nodeop;

/* A max-pool node (LG_LAYER_MAX, DESIGN.md §1 "The max-pool node") is the
 * one operator that is not linear: out[c][oy][ox] = max over the window
 * positions (ky, kx) that fall inside the input of
 * in[c][oy·sh − ph + ky][ox·sw − pw + kx] (ONNX MaxPool: padding is −∞, so
 * it is left out; overlapping windows, any stride; GlobalMaxPool is the
 * window of the whole map). Its geometry is held in `conv` with
 * c_out = c_in and ph < kh, pw < kw (every window meets the input); it has
 * no weights (W NULL). It is a layer's only term, and that layer's
 * activation is the identity and its bias 0 (lg_net_validate). Stages that
 * do not take it natively run on lg_net_lower_max's exact ReLU form. */

/* Geometry of a conv layer: h_out = (h_in + 2·ph − kh)/sh + 1 (likewise w). */
typedef struct lg_conv {
    int c_in, h_in, w_in;
    int c_out, h_out, w_out;
    int kh, kw, sh, sw, ph, pw;
} lg_conv;

/* The input of a term: LG_NET_INPUT (the normalised network input) or the
 * index of an earlier layer whose output (after its activation) it reads. */
#define LG_NET_INPUT (-1)

/* One linear operator A: R^n_in → R^n_out applied to the output of node src
 * (no bias: the bias belongs to the layer). W and map point into the net's
 * params and maps allocations. */
typedef struct lg_linear {
    lg_layer_kind kind;
    int n_in, n_out;
    double *W;    /* dense: [n_out][n_in] row-major; conv: [c_out][c_in][kh][kw]; index: NULL */
    lg_conv conv; /* conv: geometry (n_in = c_in·h_in·w_in, n_out = c_out·h_out·w_out); else zero */
    int *map;     /* index: [n_out], input index read by output o or −1 (a zero); product: ia, ib;
                     else NULL */
    int src;      /* LG_NET_INPUT or an earlier layer's index */
    lg_nodeop op; /* Transformer nodes' parameters (above); else zero */
} lg_linear;

/* A layer (a node of the graph): z = Σ_t A_t·out(src_t) + b, out = act(z).
 * The first term A_0 is the layer's own linear part, kept in the layer
 * itself as L->lin; a residual Add, a Concat or a skip connection adds
 * terms 1..n_terms in L->terms. Every term has n_out = L->n_out, the
 * layer's width. A read of a term's fields names its term: L->lin.W (term 0,
 * e.g. in a node's own code: a node is its layer's only term), or
 * lg_layer_lin(L, t) in a loop over every term (core/traverse.h holds the
 * term sum); the compiler refuses L->W (DESIGN.md §2 "Adding an operator"). */
typedef struct lg_layer {
    union {
        lg_linear lin; /* term 0 */
        struct {       /* lin's first fields (C11 6.5.2.3p6, common initial sequence): only n_out is */
            lg_layer_kind term0_kind_; /* read here, the layer's width, every term's; term 0's   */
            int term0_n_in_, n_out;    /* kind and n_in are L->lin.kind, L->lin.n_in             */
        };
    };
    double *b;         /* [n_out], points into net->params */
    int n_terms;       /* further terms (0 for a chain layer) */
    lg_linear *terms;  /* [n_terms] or NULL, points into net->terms */
    lg_act act;     /* applied to z */
    double lambda;  /* the activation's parameter (act.h entry: param_sym, param_ok):
                       λ for lgelu, β for swish, the negative slope a for prelu; else 1 */
    double s;       /* raw parameter: λ (β) = 1 + softplus(s/t) while learned;
                       prelu: s = a (no reparameterisation) */
} lg_layer;

typedef struct lg_net {
    int n_in;          /* input dimension */
    int n_layers;
    lg_layer *layers;  /* [n_layers], topologically ordered; the last is the output */
    double *in_sub;    /* [n_in] or NULL: x' = (x − in_sub)/in_div */
    double *in_div;    /* [n_in] or NULL */
    double t;          /* temperature of the λ reparameterisation (default 0.1) */
    double *params;    /* one allocation: all W and b */
    size_t n_params;
    lg_linear *terms;  /* one allocation: every layer's further terms, layer by layer */
    int n_terms;
    int *maps;         /* one allocation: every index map, layer by layer */
    size_t n_maps;
} lg_net;

/* The shape of one layer before allocation (lg_net_build): n_out, the
 * activation (its parameter starts as in lg_net_init) and 1 + the number of
 * further terms; terms[t] gives kind, n_in, conv and src (W, map, n_out are
 * ignored and set by the build). */
typedef struct lg_layer_spec {
    int n_out;
    lg_act act;
    int n_terms;             /* ≥ 1: terms[0] is the layer's own linear part */
    const lg_linear *terms;  /* [n_terms], borrowed */
} lg_layer_spec;

/* Hard limits that keep hostile files from causing giant allocations. */
#define LG_NET_MAX_DIM (1 << 24)
#define LG_NET_MAX_LAYERS 4096
#define LG_NET_MAX_PARAMS ((size_t)1 << 30)

/* Allocate a graph: n_layers layers shaped by specs (checked: every src
 * earlier than its layer, every term's n_in the width of its src, conv
 * geometry as lg_net_init_conv, index maps of length n_out). Parameters and
 * maps are zero (fill every map before use: lg_net_validate checks them);
 * t = 0.1 and each activation's parameter as lg_net_init. */
lg_status lg_net_build(lg_net *net, int n_in, int n_layers, const lg_layer_spec *specs);

/* Copy src's activation (kind, λ, s) and bias into dst, a layer of the
 * same n_out (e.g. built by lg_net_build); the linear terms are the
 * caller's to fill. */
void lg_layer_copy_act_bias(lg_layer *dst, const lg_layer *src);
/* Number of linear terms of L (1 + L->n_terms) and term t of it (0: L->lin). */
static inline int lg_layer_n_lin(const lg_layer *L) { return 1 + L->n_terms; }
static inline const lg_linear *lg_layer_lin(const lg_layer *L, int t) { return t == 0 ? &L->lin : &L->terms[t - 1]; }
static inline lg_linear *lg_layer_lin_mut(lg_layer *L, int t) { return t == 0 ? &L->lin : &L->terms[t - 1]; }
/* Width of node `node` (LG_NET_INPUT: n_in; else layers[node].n_out). */
int lg_net_node_width(const lg_net *net, int node);
/* LG_OK for a chain; for a graph, LG_ERR_ARG naming `stage` (a stage that
 * does not take graphs yet refuses rather than misread one). */
lg_status lg_net_require_chain(const lg_net *net, const char *stage);
/* 1 when the net is a chain of dense and conv layers (every layer one term
 * reading the layer before it): the shape every pre-graph file had. */
int lg_net_is_chain(const lg_net *net);
/* Doubles that hold every node's value: n_in + Σ n_out (saturating). */
size_t lg_net_nodes_len(const lg_net *net);
/* Offset of node `node`'s value in such a buffer (input at 0, layer k after
 * the input and the layers before it). */
size_t lg_net_node_offset(const lg_net *net, int node);
/* Number of weights of one linear term (0 for an index map). */
size_t lg_linear_n_weights(const lg_linear *A);
/* Forward pass keeping every node: vals[lg_net_nodes_len] receives the
 * normalised input and each layer's output; pre (may be NULL) receives each
 * layer's pre-activation z at the same offsets (its first n_in unused). */
void lg_net_forward_nodes(const lg_net *net, const double *x, double *vals, double *pre);

/* Allocate a dense chain with sizes dims[0..n_layers] (dims[0] = input),
 * hidden activation `hidden` on layers 0..n_layers−2 and identity on the last.
 * Parameters are zero and t = 0.1; lgelu and swish layers get s = 0, i.e.
 * λ (β) = 1 + log 2; prelu layers get a = s = LG_PRELU_INIT_SLOPE (0.25,
 * PyTorch's default); every other layer has λ = 1, s = 0. */
lg_status lg_net_init(lg_net *net, int n_layers, const int *dims, lg_act hidden);
/* Free everything; a zeroed net is a no-op. Leaves *net zeroed. */
void lg_net_free(lg_net *net);
/* Deep copy: dst must be uninitialised or zeroed; caller frees dst. */
lg_status lg_net_copy(lg_net *dst, const lg_net *src);

/* Allocate like lg_net_init, but layer k is a conv layer when convs[k] is
 * non-NULL and convs[k]->c_out > 0 (geometry checked: kernel inside the padded input,
 * h_out/w_out as above; dims[k] and dims[k+1] must be its n_in and n_out).
 * convs may be NULL (all dense). */
lg_status lg_net_init_conv(lg_net *net, int n_layers, const int *dims, const lg_conv *const *convs, lg_act hidden);
/* Number of weights of layer L's own term (n_out·n_in dense; c_out·c_in·kh·kw conv; 0 index). */
size_t lg_layer_n_weights(const lg_layer *L);
/* 1 if some layer is a conv layer. */
int lg_net_has_conv(const lg_net *net);
/* Fill out[n] with h_out or w_out for input size n_in, kernel k, stride s,
 * padding p; returns 0 when the kernel does not fit (no output). */
int lg_conv_out_size(int n_in, int k, int s, int p);
/* Bytes of the dense matrices lg_net_densify would allocate (saturating). */
size_t lg_net_dense_bytes(const lg_net *net);
/* dst = src with every conv layer written as a dense layer (the same real
 * function: each entry is a kernel weight or 0). Refuses with LG_ERR_NOMEM
 * and a message when the dense parameters would take more than max_bytes
 * (0: no cap). dst must be uninitialised or zeroed; caller frees it. */
lg_status lg_net_densify(lg_net *dst, const lg_net *src, size_t max_bytes);
/* Write the kernel K [c_out][c_in][kh][kw] of conv geometry c into the
 * zeroed dense matrix W [n_out][n_in] (entries outside the receptive
 * fields are left as they are). */
void lg_conv_kernel_dense(const lg_conv *c, const double *K, double *W);
/* col[K][hw] (K = c_in·kh·kw, row (ci, ky, kx), column (oy, ox)) of one
 * image x of conv geometry c: x[ci][oy·sh − ph + ky][ox·sw − pw + kx], 0 in
 * the padding. col holds K·h_out·w_out doubles (the caller's). */
void lg_conv_im2col(const lg_conv *c, const double *x, double *col);
/* out[n_out] = conv(x)[n_in] + b for a conv layer (double, direct loops). */
void lg_conv_forward(const lg_layer *L, const double *x, double *out);

/* Max-pool nodes (core/op_max.c, core/op_max_lower.c). */
/* 1 if some layer is a max-pool node. */
int lg_net_has_max(const lg_net *net);
/* The part of window o of max-pool geometry c inside the input (the rest
 * is padding): channel ch, rows [y0, y1), columns [x0, x1); the input
 * position of (iy, ix) is (ch·h_in + iy)·w_in + ix. */
typedef struct lg_window {
    int ch, y0, y1, x0, x1;
} lg_window;
lg_window lg_max_window_box(const lg_conv *c, int o);
/* The input positions of window o of max-pool geometry c, ascending, into
 * idx (room for kh·kw); returns their count (≥ 1 for a valid geometry). */
int lg_max_window(const lg_conv *c, int o, int *idx);
/* out[n_out] = the max over each window of x[n_in] (a max-pool term A). */
void lg_max_forward(const lg_linear *A, const double *x, double *out);
/* LG_OK when the net has no max-pool node; else LG_ERR_UNSUPPORTED naming `stage`
 * (a stage that does not take max-pool nodes refuses rather than misread one). */
lg_status lg_net_require_no_max(const lg_net *net, const char *stage);
/* dst = src with every max-pool node replaced by its exact ReLU form
 * (DESIGN.md §1 "The max-pool node"): an identity layer gathering each
 * window (an index map; a window with fewer positions than the largest
 * repeats its first one, which leaves the max unchanged), then
 * ceil(log2 K) ReLU layers that reduce pairs by max(a, b) = b + relu(a − b)
 * (b carried as relu(b) − relu(−b), or as relu(b) when the pool reads a
 * ReLU layer and any_sign is 0: a pair of nets that differ in that
 * activation, lowered with any_sign = 1, get the same shapes), and an identity 1×1 conv that sums the last level; every
 * coefficient is ±1 or 0, so dst is the same real function. Later layers
 * read the last of them. A net without max-pool nodes is copied. dst must
 * be uninitialised or zeroed; caller frees it. */
lg_status lg_net_lower_max(lg_net *dst, const lg_net *src, int any_sign);

/* Transformer nodes (core/op_bilinear.c, core/op_softmax.c, core/op_layernorm.c; their table entries: core/op.h). */
/* 1 for a product, softmax or layernorm kind (the kind table's LG_OPF_TNODE, core/op.h). */
int lg_kind_is_tnode(lg_layer_kind k);
/* 1 when layer L is a Transformer node (a node is its layer's only term: term 0's kind, core/op.h lg_layer_op). */
int lg_layer_is_tnode(const lg_layer *L);
/* The kind's name in messages: "product", "softmax", "layernorm", "max-pool", … (core/op.h) */
const char *lg_kind_name(lg_layer_kind k);
/* Index of the first layer that is a Transformer node, or −1. */
int lg_net_first_tnode(const lg_net *net);
/* LG_OK when the net has no Transformer node; else LG_ERR_UNSUPPORTED
 * naming the node, its layer and `stage` (a stage that does not take the
 * kind refuses rather than misread it). */
lg_status lg_net_require_no_tnode(const lg_net *net, const char *stage);
/* Map entries (ia and ib) of a product term: 2·n_out·K. */
size_t lg_bilinear_n_map(const lg_linear *A);
/* out[n_out] of a product term A from its two sources' values a, b. */
void lg_bilinear_forward(const lg_linear *A, const double *a, const double *b, double *out);
/* out[n] = softmax over contiguous groups of A->op.group of x[n]. */
void lg_softmax_forward(const lg_linear *A, const double *x, double *out);
/* out[n] = layernorm over contiguous groups of x[n] (gamma, beta in A->W). */
void lg_layernorm_forward(const lg_linear *A, const double *x, double *out);
/* Forward of a Transformer layer L (index k) into z from the node buffer vals. */
void lg_tnode_forward(const lg_net *net, const lg_layer *L, const double *vals, double *z);

/* Parse an architecture "784,256,10" or, with conv layers,
 * "1x28x28,c8k3s2,c16k3s2p1,10": the input is N or CxHxW; a hidden token is
 * a dense width N or a conv c<C>k<KH>[x<KW>][s<SH>[x<SW>]][p<PH>[x<PW>]]
 * (C output channels, kernel, stride 1 and padding 0 by default), which
 * needs an image before it (the input or another conv; a dense layer
 * flattens). Fills dims[0..n] and convs[0..n−1] (c_out = 0 for dense),
 * n ≤ cap − 1, and returns n (the number of layers), or −1 with lg_fail set.
 * The chain case of core/arch.h (lg_arch_parse), which also parses residual
 * blocks; a text with blocks is refused here. */
int lg_net_arch_parse(const char *s, int *dims, lg_conv *convs, int cap);

/* Output dimension (n_out of the last layer). */
int lg_net_n_out(const lg_net *net);
/* Widest layer (max over n_in of the first layer and every n_out). */
int lg_net_max_width(const lg_net *net);

/* Forward pass in double for one input x[n_in] into y[n_out].
 * scratch must hold 2·lg_net_max_width(net) doubles (a graph that is not a
 * chain allocates the node buffer it needs; on allocation failure y is NaN). */
void lg_net_forward(const lg_net *net, const double *x, double *y, double *scratch);

/* Batched forward in double (cblas_dgemm): X [n][n_in] → Y [n][n_out].
 * Allocates its own scratch. */
lg_status lg_net_forward_batch(const lg_net *net, const double *X, double *Y, size_t n);

/* Check internal consistency (dims chain, conv geometry, finite values, λ ≥ 1 where used,
 * β ≥ 1 for swish, a finite prelu slope).
 * Returns LG_ERR_FORMAT with a message naming the layer on failure. */
lg_status lg_net_validate(const lg_net *net);

#endif
