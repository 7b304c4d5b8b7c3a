/* op.h — the node-kind table: one entry per kind of term (lg_layer_kind,
 * core/net.h), read by every stage instead of comparing kinds
 * (DESIGN.md "Adding an operator").
 *
 * An entry says what the kind is (flags), how many weights and index-table
 * entries it stores, how its shape and values are checked, its forward pass
 * in double and, for a kind that has one, its exact ReLU form. The stages'
 * own entries (interval bound, back-substitution planes, attack gradient,
 * encoding) live beside the stage: verify/opstage.h. The table is static
 * and constant; nothing here allocates except lg_net_lower_nodes, whose dst
 * the caller frees.
 */
#ifndef LG_OP_H
#define LG_OP_H

#include <gmp.h>

#include "core/net.h"
#include "core/traverse.h"

struct lg_iv;      /* core/act_mpfr.h */
struct lg_iv_work; /* core/act_mpfr.h */

enum {
    LG_OPF_LINEAR = 1u << 0,    /* a linear term: any term of a layer, summed with the others */
    LG_OPF_NODE = 1u << 1,      /* a node: its layer's only term (term 0), identity activation, bias 0 */
    LG_OPF_PWL = 1u << 2,       /* piecewise linear (linear, or with an exact ReLU form: `lower`) */
    LG_OPF_TNODE = 1u << 3,     /* a Transformer node (product, softmax, layernorm): op holds its parameters */
    LG_OPF_CONV_GEOM = 1u << 4, /* its geometry is held in conv */
    LG_OPF_MAP = 1u << 5,       /* index tables in map (n_map entries) */
    LG_OPF_TWO_SRC = 1u << 6,   /* reads a second source, op.src_b */
    LG_OPF_RATIONAL = 1u << 7   /* exact in the rationals (core/exact.h); else the enclosure decides */
};

typedef struct lg_opdef {
    lg_layer_kind kind;
    const char *name; /* in messages: "dense", "conv", "index map", "max-pool", "product", … */
    unsigned flags;   /* LG_OPF_* */
    /* Weights the term stores in the net's params (W). */
    size_t (*n_weights)(const lg_linear *A);
    /* Entries of its index tables in the net's maps (map), or NULL: none. */
    size_t (*n_map)(const lg_linear *A);
    /* Shape check of term t of layer k (n_out: the layer's width), or NULL: none beyond the
     * source and width checks every term has. LG_OK or `code` with a message naming the layer. */
    lg_status (*check_shape)(const lg_net *net, int k, int t, const lg_linear *A, int n_out, lg_status code);
    /* Value check (index tables in range, ε > 0, …) of a built term, or NULL: LG_OK or LG_ERR_FORMAT. */
    lg_status (*check_values)(const lg_net *net, int k, int t, const lg_linear *A);
    /* A node's forward pass in double: z[n_out] from its source's value a (and b, the second
     * source's, LG_OPF_TWO_SRC; else NULL). NULL for a linear term (lg_linear_mul). */
    void (*forward)(const lg_linear *A, const double *a, const double *b, double *z);
    /* A node's exact forms (core/exact.h), or NULL: not rational (the enclosure decides).
     * exact_z: values as integers times 2^e (a at exponent ea, b at eb: the second source's,
     * else a's) into z; returns z's exponent. exact_q: rationals a, b into z (t: scratch). */
    long (*exact_z)(const lg_linear *A, const mpz_t *a, long ea, const mpz_t *b, long eb, mpz_t *z);
    void (*exact_q)(const lg_linear *A, const mpq_t *a, const mpq_t *b, mpq_t *z, mpq_t t);
    /* The kind's line in `lgelu info` (from: "input" or "layer k") into buf[cap]; returns its
     * length (snprintf), or NULL: no line of its own. */
    int (*describe)(const lg_linear *A, const char *from, char *buf, size_t cap);
    /* A node's certified enclosure (core/exact.h, MPFR, outward): layer L's intervals at
     * v + off[k + 1] from its sources' at v + off[src + 1]; 0, −2 (not finite) or −3 (memory).
     * NULL for a linear term (enclose.c sums its rows). */
    int (*enclose)(const lg_net *net, const lg_layer *L, struct lg_iv *v, const size_t *off, struct lg_iv_work *w);
    /* dst = src with every node of this kind written as ReLU layers computing the same real
     * function (any_sign: see lg_net_lower_max), or NULL: the kind has no such form. */
    lg_status (*lower)(lg_net *dst, const lg_net *src, int any_sign);
} lg_opdef;

/* The entry of kind k; an entry named "unknown" with no flags for a kind out of range. */
const lg_opdef *lg_op(lg_layer_kind k);
/* 1 if kind k's entry has every flag of `flags`. */
int lg_op_is(lg_layer_kind k, unsigned flags);
/* A layer's entry: a node's (a node is its layer's only term, lg_net_validate, so term 0 is
 * the whole node), or for a term sum the entry of term 0's linear kind (flags LG_OPF_LINEAR:
 * then every term is read through lg_layer_lin). Stages dispatch on the layer through these
 * rather than compare term 0's kind (L->lin.kind) themselves. */
const lg_opdef *lg_layer_op(const lg_layer *L);
int lg_layer_is(const lg_layer *L, unsigned flags);
/* 1 when L is a single term (a chain layer or a node): term 0 (L->lin) is its whole sum, so
 * code that reads L->lin's fields is complete only under this check. */
int lg_layer_single(const lg_layer *L);
/* Entries of term A's index tables (its entry's n_map), 0 for a kind without. */
size_t lg_linear_n_map(const lg_linear *A);
/* Index of the first layer whose term 0 kind has none of the flags of `flags`
 * (e.g. LG_OPF_PWL: the first layer the encoders cannot take), or −1. */
int lg_net_first_without(const lg_net *net, unsigned flags);
/* 1 if some layer has a node kind with an exact ReLU form (lg_opdef.lower). */
int lg_net_has_lowering(const lg_net *net);
/* The one helper for the stages that take piecewise-linear layers only: when some
 * node of src has an exact ReLU form, dst = src with every such node lowered
 * (lg_opdef.lower, any_sign as lg_net_lower_max); otherwise dst is left zeroed
 * (dst->n_layers == 0) and src is to be used as it is. LG_OK, or the lowering's error
 * (dst zeroed). dst must be uninitialised or zeroed; caller frees it. */
lg_status lg_net_lower_nodes(lg_net *dst, const lg_net *src, int any_sign);

/* The graph traversal (the term sum written once, forward, backward and row by row):
 * core/traverse.h. */

/* Per-kind parts the table points at (net.c, op_max.c, op_max_exact.c). */
/* 1 if conv geometry c is consistent (sizes positive, outputs as documented in net.h). */
int lg_conv_ok(const lg_conv *c);
lg_status lg_conv_check_shape(const lg_net *net, int k, int t, const lg_linear *A, int n_out, lg_status code);
lg_status lg_max_check_shape(const lg_net *net, int k, int t, const lg_linear *A, int n_out, lg_status code);
void lg_max_node_forward(const lg_linear *A, const double *a, const double *b, double *z);
int lg_max_describe(const lg_linear *A, const char *from, char *buf, size_t cap);
int lg_conv_describe(const lg_linear *A, const char *from, char *buf, size_t cap);
long lg_max_exact_z(const lg_linear *A, const mpz_t *a, long ea, const mpz_t *b, long eb, mpz_t *z);
void lg_max_exact_q(const lg_linear *A, const mpq_t *a, const mpq_t *b, mpq_t *z, mpq_t t);
int lg_max_enclose(const lg_net *net, const lg_layer *L, struct lg_iv *v, const size_t *off, struct lg_iv_work *w);

/* The Transformer nodes' entries, each in its kind's files (DESIGN.md §1 "Transformer nodes"):
 * the product's (op_bilinear.c, op_bilinear_exact.c; its index tables' length and forward
 * pass: net.h), softmax's (op_softmax.c, op_softmax_exact.c) and layernorm's (op_layernorm.c,
 * op_layernorm_exact.c). The enclosures round outward (MPFR): a product by interval
 * multiplication, softmax by exp(l_o)/(exp(l_o) + Σ_{o'≠o} exp(u_o')) ≤ out_o ≤
 * exp(u_o)/(exp(u_o) + Σ exp(l_o')), layernorm through x − μ, the biased variance,
 * 1/√(σ² + ε), gamma and beta; 0, −2 (a value not finite) or −3 (memory). */
lg_status lg_bilinear_check_shape(const lg_net *net, int k, int t, const lg_linear *A, int n_out, lg_status code);
lg_status lg_bilinear_check_values(const lg_net *net, int k, int t, const lg_linear *A);
int lg_bilinear_describe(const lg_linear *A, const char *from, char *buf, size_t cap);
long lg_bilinear_exact_z(const lg_linear *A, const mpz_t *a, long ea, const mpz_t *b, long eb, mpz_t *z);
void lg_bilinear_exact_q(const lg_linear *A, const mpq_t *a, const mpq_t *b, mpq_t *z, mpq_t t);
int lg_bilinear_enclose(const lg_net *net, const lg_layer *L, struct lg_iv *v, const size_t *off,
                        struct lg_iv_work *w);
lg_status lg_softmax_check_shape(const lg_net *net, int k, int t, const lg_linear *A, int n_out, lg_status code);
lg_status lg_softmax_check_values(const lg_net *net, int k, int t, const lg_linear *A);
void lg_softmax_node_forward(const lg_linear *A, const double *a, const double *b, double *z);
int lg_softmax_describe(const lg_linear *A, const char *from, char *buf, size_t cap);
int lg_softmax_enclose(const lg_net *net, const lg_layer *L, struct lg_iv *v, const size_t *off,
                       struct lg_iv_work *w);
size_t lg_layernorm_n_weights(const lg_linear *A);
lg_status lg_layernorm_check_shape(const lg_net *net, int k, int t, const lg_linear *A, int n_out, lg_status code);
lg_status lg_layernorm_check_values(const lg_net *net, int k, int t, const lg_linear *A);
void lg_layernorm_node_forward(const lg_linear *A, const double *a, const double *b, double *z);
int lg_layernorm_describe(const lg_linear *A, const char *from, char *buf, size_t cap);
int lg_layernorm_enclose(const lg_net *net, const lg_layer *L, struct lg_iv *v, const size_t *off,
                         struct lg_iv_work *w);
/* The shape check softmax and layernorm share (op.c): no product fields, as many values
 * out as in, a group size dividing the width. LG_OK or `code` naming layer k. */
lg_status lg_group_check_shape(const lg_net *net, int k, const lg_linear *A, int n_out, lg_status code);

/* The per-token map (op_tokmap.c; core/net.h LG_LAYER_TOKMAP). */
/* Its geometry in conv for T tokens of n_in_tok values in, n_out_tok out. */
lg_conv lg_tokmap_geom(int T, int n_in_tok, int n_out_tok);
/* A term spec (lg_net_build) of that map reading node src. */
lg_linear lg_tokmap_term(int src, int T, int n_in_tok, int n_out_tok);
lg_status lg_tokmap_check_shape(const lg_net *net, int k, int t, const lg_linear *A, int n_out, lg_status code);
int lg_tokmap_describe(const lg_linear *A, const char *from, char *buf, size_t cap);
/* Write kron(I_T, A) of per-token map A into the zeroed dense W [n_out][n_in]. */
void lg_tokmap_dense(const lg_linear *A, double *W);
/* Replace, in place, every dense term that is exactly kron(I_T, A) for some
 * T > 1 (diagonal blocks bit-equal, every other entry zero; the largest such
 * T; a 1×1 block, a multiple of the identity, is left dense) by a per-token
 * map of that block: the same real function, the same weights. *n_compacted (may be NULL) gets the number of terms replaced.
 * LG_OK (net unchanged when none is) or LG_ERR_NOMEM (net unchanged). */
lg_status lg_net_compact_tokmap(lg_net *net, int *n_compacted);

#endif
