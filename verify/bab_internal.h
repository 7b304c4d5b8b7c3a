/* bab_internal.h — what the branch-and-bound driver (bab.c) shares with the
 * node work (bab_node.c) and the two splitting strategies (bab_input.c,
 * bab_relu.c). Not a public header.
 *
 * A node owns one allocation (lg_bab_node_new) holding its raw input box,
 * the open flags of the terms and the pre-activation bounds it inherits from
 * its parent (flat: xlo, xhi [n_in], then lo, hi of every layer), which stay
 * sound for the child because its region is a subset of the parent's.
 */
#ifndef LG_BAB_INTERNAL_H
#define LG_BAB_INTERNAL_H

#include "verify/bab.h"

typedef struct lg_bab_node {
    long id;
    int depth;
    double key;              /* parent's worst open bound (smaller = explored first) */
    double pkey;             /* parent's worst open bound under the plain slopes */
    double *lo, *hi;         /* [n_in] raw input box */
    unsigned char *open;     /* [n_terms] 1 while the term is not refuted */
    double *pre;             /* [n_pre] inherited bounds, or NULL (none yet) */
    int split_k, split_j;    /* ReLU split to apply (k = −1: none) */
    int split_active;        /* 1: z ≥ 0 (a = z); 0: z ≤ 0 (a = 0) */
    signed char *sign;       /* [size] every split on the path (alpha.h: +1 z ≤ 0, −1 z ≥ 0, 0 none) */
    float *warm;             /* [m][2·size] α then β of each constraint row, from the parent
                                (β-CROWN warm start), or NULL (ReLU mode with β only) */
    int has_warm;            /* warm holds the parent's values */
} lg_bab_node;

/* A cut found by a node's work (bab_cuts.h: lg_bab_cut_try), handed to the driver. */
typedef struct lg_bab_cut {
    int n;                   /* 0: none */
    int *idx;                /* [n] neurons (lg_alpha_offset layout; owned: free(idx)) */
    signed char *sgn;        /* [n] their phases (same allocation as idx) */
} lg_bab_cut;

typedef struct lg_bab_ctx {
    const lg_net *net;
    const double *lo, *hi;   /* the case's box (every candidate is re-checked against it) */
    int n_terms;
    const lg_term *terms;
    const lg_bab_opts *o;
    const lg_runctx *run;    /* deadline, seed, verbosity, back-end memory cap (bab.h) */
    lg_bab_mode mode;        /* INPUT or RELU */
    const struct lg_bab_strategy *strategy; /* the mode's splitting strategy (below) */
    int n_in, n_out, size;   /* size = lg_alpha_size */
    size_t n_pre;            /* doubles in a node's inherited bounds */
    int *row0;               /* [n_terms + 1] first constraint row of each term */
    double *C, *d;           /* all constraints [m][n_out], [m] */
    int m;
    int attack;              /* 1: this round's nodes run their sub-domain attacks (set by the driver
                                between rounds, lg_bab_attack_round; read-only while a round runs) */
    double *root_pre;        /* [n_pre] the root's bounds (owned by the driver), or NULL: what cuts are
                                verified on (bab_cuts.h) */
} lg_bab_ctx;

/* What bounding one node gave (bab_node.c); the driver merges it. */
typedef enum lg_bab_kind { LG_BK_CLOSED = 0, LG_BK_FOUND, LG_BK_SPLIT, LG_BK_STUCK } lg_bab_kind;

typedef struct lg_bab_res {
    lg_bab_kind kind;
    const char *why;            /* STUCK: static reason */
    lg_bab_node *c0, *c1;       /* SPLIT */
    double key;                 /* children's key */
    double pkey;                /* node's worst bound with the plain slopes */
    double *x;                  /* FOUND: [n_in] (owned) */
    int solver_closed;          /* back-ends that closed it: bit i = solver table entry i (encode/problem.h) */
    long solver_calls, solver_nodes;
    lg_lp_stats lp;             /* LP work of the back-ends */
    double t_bounds, t_solver;
    lg_bab_cut cut;             /* CLOSED by α/β-CROWN with cuts on: the verified cut, or n = 0 */
} lg_bab_res;

/* Bound nodes[nb] together and decide each: closed, counterexample
 * (re-checked), split into two children, or stuck (a limit). Each node's
 * plain bound and falsification, then α/β-CROWN of all of them in one
 * batched optimisation (batched bounds; alpha.h: one dgemm per
 * layer over the stacked rows of every node), then each node's back-end
 * call or split. Reads only cx and the nodes; writes res[nb]. The result
 * of a node depends on the group it is bounded with only through rounding
 * and the group's attack (never on the thread running it). */
lg_status lg_bab_process_batch(const lg_bab_ctx *cx, lg_bab_node **nodes, int nb, lg_bab_res *res);

lg_bab_node *lg_bab_node_new(const lg_bab_ctx *cx);
/* Bytes of one node (the work list's memory guard). */
size_t lg_bab_node_bytes(const lg_bab_ctx *cx);
/* 1 if β-CROWN runs in this search (ReLU splitting, α steps, opts beta). */
int lg_bab_use_beta(const lg_bab_ctx *cx);
/* A copy of parent's box and open flags (pre, split and depth left to the caller). */
lg_bab_node *lg_bab_node_child(const lg_bab_ctx *cx, const lg_bab_node *parent);
void lg_bab_node_free(lg_bab_node *n);

/* Flat copies of a bounds object to/from a node's pre array. */
void lg_bab_bounds_save(const lg_bab_ctx *cx, const lg_bounds *b, double *pre);
void lg_bab_bounds_load(const lg_bab_ctx *cx, lg_bounds *b, const double *pre);
/* Initialise b for cx's net and run: pre's bounds when pre is not NULL
 * (lg_bab_bounds_load), else CROWN over cx's box. b is the caller's to free
 * (also on failure, once initialised). */
lg_status lg_bab_bounds_start(const lg_bab_ctx *cx, lg_bounds *b, const double *pre);
/* 1 if some pre-activation interval is empty (lo > hi): the region is empty. */
int lg_bab_bounds_empty(const lg_bounds *b);

/* What a split takes from the node's bounding: the hardest objective row
 * and, for ReLU splitting, its sensitivities, slopes and multipliers. */
typedef struct lg_bab_split_in {
    const double *crow;          /* [n_out] the hardest objective row */
    double drow;                 /* its constant */
    double key;                  /* the node's worst open bound, plain slopes (n->pkey is its parent's) */
    const double *lam;           /* [size] the row's sensitivities (ReLU splitting) */
    const double *alpha, *beta;  /* [size] the row's slopes and multipliers, or NULL (default slopes, no β) */
} lg_bab_split_in;

/* A splitting strategy: the one interface the node code (bab_node.c) calls;
 * the driver puts the strategy of the search's mode in cx->strategy.
 *   bound: bounds of the node's region into b (initialised by the caller);
 *   split: two children (*c0, *c1 newly allocated, pre filled from b); on a
 *          node that cannot be split (minimum width, no unstable ReLU)
 *          *c0 = *c1 = NULL and why is set. ReLU splitting bounds every
 *          candidate's children as one batch for its estimates (b is not
 *          changed). */
typedef struct lg_bab_strategy {
    lg_bab_mode mode;
    lg_status (*bound)(const lg_bab_ctx *cx, const lg_bab_node *n, lg_bounds *b);
    lg_status (*split)(const lg_bab_ctx *cx, const lg_bab_node *n, lg_bounds *b, const lg_bab_split_in *in,
                       lg_bab_node **c0, lg_bab_node **c1, const char **why);
} lg_bab_strategy;

extern const lg_bab_strategy lg_bab_input_strategy; /* bab_input.c: split the widest-scoring input */
extern const lg_bab_strategy lg_bab_relu_strategy;  /* bab_relu.c: split a ReLU (FSB, BaBSR) */

#endif
