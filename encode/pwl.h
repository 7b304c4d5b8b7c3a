/* pwl.h — shared, solver-independent view of an lg_problem for the
 * back-ends in encode/ (internal to encode/ and its tests).
 *
 * lg_pwl_validate checks everything a back-end relies on before any solver
 * call (GLPK aborts on bad input; Z3 must never see NaN): activations
 * identity/relu only, Transformer nodes only with their relaxation
 * (problem.h lg_trelax, checked), consistent shapes, finite data, lo ≤ hi, finite
 * pre-activation bounds with pre_lo ≤ pre_hi, well-formed terms.
 * lg_pwl_phase classifies a neuron by its bounds (DESIGN.md §3).
 *
 * The network is a graph (core/net.h): layer k's pre-activation is one
 * linear row per output over the values of every term's source node
 * (DESIGN.md §1 "The network as a graph"). lg_pwl_row gives that row over
 * the flat node positions of lg_net_node_offset (the normalised input at
 * 0..n_in, then each layer's outputs), one entry per (position, copy). Two
 * terms that read the same position are merged into one entry when the sum
 * of their weights is a double (TwoSum exact); otherwise the second weight
 * goes on copy 1 of the position (copy 2 for a third, …): a column v' = v
 * that an LP or MILP encoder adds with the row v' − v = 0, so that no row
 * names a column twice and every coefficient is a weight of the file,
 * exact. Z3 and SMT-LIB, which add duplicate products exactly, give every
 * copy the position's own variable. A chain's row is its layer's row
 * itself (one term, no merging). The lg_pwl_row object owns its scratch
 * (lg_pwl_row_init / lg_pwl_row_free); the net is borrowed.
 */
#ifndef LG_PWL_H
#define LG_PWL_H

#include "encode/problem.h"

typedef enum lg_phase {
    LG_PHASE_LINEAR = 0, /* identity layer, or relu with pre_lo ≥ 0: a = z */
    LG_PHASE_ZERO,       /* relu with pre_hi ≤ 0: a = 0 */
    LG_PHASE_UNSTABLE    /* relu with pre_lo < 0 < pre_hi: needs a split */
} lg_phase;

/* LG_OK, or LG_ERR_UNSUPPORTED (non-relu/identity activation, naming the
 * layer) / LG_ERR_ARG (anything malformed, naming the field). */
lg_status lg_pwl_validate(const lg_problem *p);
/* The node kinds the encoders take (every row's `supports` in the solver table): LG_OK, or
 * LG_ERR_UNSUPPORTED for a node with an exact ReLU form (max-pool: encode that form) or a
 * Transformer node without the query's relaxation (p->trelax). */
lg_status lg_pwl_supports(const lg_problem *p);

/* Phase of neuron i of layer k (p validated). */
lg_phase lg_pwl_phase(const lg_problem *p, int k, int i);

/* Number of unstable neurons over all layers (p validated). */
int lg_pwl_count_unstable(const lg_problem *p);

/* A row of a layer's pre-activation (above): z = Σ_q w[q]·v(pos[q], copy[q]) + b. */
typedef struct lg_pwl_row {
    int n;            /* entries of the last row */
    int *pos;         /* [cap] flat node position (lg_net_node_offset(src) + index) */
    int *copy;        /* [cap] 0: the value itself; c ≥ 1: its c-th copy */
    double *w;        /* [cap] weight, nonzero */
    int cap;          /* Σ over the terms of the widest layer of lg_linear_row_cap */
    /* scratch */
    const lg_net *net;
    size_t *node_off; /* [n_layers + 1] offset of node k − 1 */
    int *next;        /* [cap] entry of the next copy of the same position, −1 none */
    int *slot;        /* [nodes_len] entry of (pos, copy 0) in the current row */
    unsigned *stamp;  /* [nodes_len] row number that set slot[pos] */
    unsigned row_no;
    int *idx;         /* [max term row cap] */
    double *tw;
} lg_pwl_row;

/* Allocate the scratch for rows of net (LG_ERR_NOMEM; r zeroed on failure). */
lg_status lg_pwl_row_init(lg_pwl_row *r, const lg_net *net);
void lg_pwl_row_free(lg_pwl_row *r);
/* Fill r with row i of layer k (a Transformer node has none: 0; terms in order, each term's structural
 * nonzeros with input indices ascending, zero weights left out); with col
 * non-NULL ([nodes_len]), positions whose col is < 0 (a stably inactive
 * ReLU: the value 0) are left out too. Returns r->n. */
int lg_pwl_row_get(lg_pwl_row *r, int k, int i, const int *col);
/* Offset of node `node`'s values among the flat positions (LG_NET_INPUT: 0). */
static inline size_t lg_pwl_node_off(const lg_pwl_row *r, int node) { return r->node_off[node + 1]; }
/* Largest copy number any row of net uses (0 when no two terms of a layer
 * meet at one position with an inexact sum); copies[pos] (may be NULL,
 * [nodes_len]) gets the largest copy number of each position. col as in
 * lg_pwl_row_get. */
int lg_pwl_row_copies(lg_pwl_row *r, const int *col, int *copies);

/* 1 if x (in the box) drives the double forward pass of p->net into term t
 * (every constraint coef·y + d ≤ tol). scratch: 2·max_width + n_out doubles. */
int lg_pwl_term_holds(const lg_problem *p, int t, const double *x, double tol, double *scratch);

#endif
