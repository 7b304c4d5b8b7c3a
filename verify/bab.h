/* bab.h — branch and bound for one case of a property (prop.h): split the
 * input box (low-dimensional inputs) or unstable ReLUs (high-dimensional
 * inputs) until every sub-problem is closed.
 *
 * Each node is bounded with the symbolic (CROWN) bounds of bounds.h and the
 * objective bounds of alpha.h (optionally with optimised slopes, α-CROWN);
 * a term of the counterexample region is closed in a node when one of its
 * constraints has a lower bound > 0 there, and stays closed in the node's
 * children. A node is closed when all its terms are; or by a complete
 * back-end (GLPK, Z3) once few unstable ReLUs are left; otherwise the
 * centre, the minimisers of the relaxed objectives and a short local
 * attack from them, steered into the node's region by its splits
 * (lg_attack_subdomain), are re-checked (lg_recheck), and the node is
 * split. The most promising node of each group (lowest bound) gets a 5×
 * longer sub-domain attack, a node with every ReLU fixed a 20× longer one
 * from each open objective's minimiser. ReLU splitting runs the first two
 * in fewer rounds as the search goes on (lg_bab_attack_round).
 *
 *   PROVED  only when every node was closed by a sound bound or a back-end's
 *           UNSAT: the case holds.
 *   FOUND   x is a counterexample confirmed by lg_recheck.
 *   OPEN    anything else (deadline, node/depth limit, a sub-box below the
 *           minimum width): reason says which; never a guess.
 *
 * Nodes are explored in rounds: the `batch` nodes with the worst bound are
 * taken from the work list (worklist.h), cut into groups of `group` nodes
 * bounded together (batched bounds, alpha.h), the groups taken by `threads`
 * worker threads, and their results merged in a fixed order, so that the
 * answer (and, without a deadline, every count) does not depend on the
 * number of threads.
 *
 * The deadline, seed, verbosity and memory cap come from the run context
 * (core/runctx.h): the search stops at run->deadline; with a memory cap
 * (run->memory_mb > 0) the open nodes go depth first past half of it
 * (max_queue_mb, if smaller, still applies) and the search stops, OPEN with
 * out_of_memory set, when they would exceed it; node n's
 * back-end call uses seed run->seed + n's id; run->verbose 1 prints a
 * progress line per round, 2 also solver chatter.
 *
 * Max-pool nodes (DESIGN.md §1 "The max-pool node") are bounded on the
 * nodes themselves: each node's planes follow its own bounds (backsub.h),
 * the windows' difference bounds (bounds.h) are inherited from the parent,
 * the attacks' gradient goes through the window's largest input. ReLU
 * splitting also takes a window's difference x_q − x_p as a candidate
 * (split ≥ 0 / ≤ 0 through the difference bounds, no β; bab_relu.c), and
 * no node is handed to a back-end (they take the exact ReLU form only): a
 * node with nothing left to split is STUCK, and the driver goes on on the
 * ReLU form (verify.h).
 *
 * Everything passed in is borrowed; x [n_in] is the caller's.
 */
#ifndef LG_BAB_H
#define LG_BAB_H

#include "core/net.h"
#include "encode/problem.h"
#include "verify/bounds.h"
#include "verify/outcome.h"

typedef enum lg_bab_mode { LG_BAB_AUTO = 0, LG_BAB_NONE, LG_BAB_INPUT, LG_BAB_RELU } lg_bab_mode;

/* Which unstable ReLU a node is split on (ReLU splitting; bab_relu.c).
 * BABSR: the largest BaBSR-style score |λ_j|·(−l_j·u_j)/(u_j − l_j) (λ_j the
 *        hardest objective's coefficient on a_k[j]);
 * FSB:   filtered smart branching: the branch_k best by that score are
 *        each evaluated by bounding the hardest objective in both children
 *        (the neuron fixed, current α and β, intermediate bounds kept) and
 *        the one whose worse child bound is highest is taken. */
typedef enum lg_bab_branch { LG_BAB_BRANCH_FSB = 0, LG_BAB_BRANCH_BABSR } lg_bab_branch;

typedef struct lg_bab_opts {
    lg_bab_mode mode;      /* AUTO: input splitting if n_in ≤ 16, else ReLU splitting */
    int threads;           /* worker threads; ≤ 0: number of cores */
    int batch;             /* nodes per round (default 16); not tied to threads */
    int group;             /* nodes bounded together by one worker (default 8, ≤ batch): their
                              α/β-CROWN rows go through one batched back-substitution
                              (lg_alpha_optimize_batch); fixed per round, not tied to threads */
    long max_nodes;        /* explored-node limit (default 2,000,000); then OPEN */
    int max_depth;         /* split depth limit (default 400); then OPEN */
    double max_queue_mb;   /* memory for open nodes (default 1024 MB; at least 32 nodes); beyond
                              it the search goes depth first, so the list grows only by at
                              most one batch per level of depth */
    double min_width;      /* input splitting: a side narrower than min_width × its width
                              at the root is not split again (default 1e-9) */
    int alpha_steps;       /* α-CROWN steps on nodes the plain bound leaves open (default 10; 0 off) */
    double alpha_lr;       /* Adam rate for the nodes' α and β (default 0.1; the root's
                              intermediate steps use LG_BAB_ROOT_ALPHA_LR) */
    lg_bab_branch branch;  /* ReLU choice (default FSB) */
    int branch_k;          /* FSB candidates (default 8) */
    int root_alpha_steps;  /* α-CROWN steps tightening the intermediate bounds of every hidden
                              layer at the root (lg_alpha_tighten): ReLU splitting's unstable
                              neurons, a smooth network's every neuron; 0 = off; −1 (default):
                              LG_BAB_ROOT_ALPHA_AUTO for ReLU splitting on a net without conv
                              layers (none with them), LG_BAB_SMOOTH_ROOT_ALPHA on smooth networks */
    int beta;              /* 1 (default): ReLU splitting optimises split multipliers β ≥ 0 jointly
                              with α (β-CROWN), warm-started from the parent node; 0: α only */
    int solver_unstable;   /* hand a node to the back-end when ≤ this many unstable ReLUs remain
                              (default 12; 0 = never) */
    lg_solver_pick solver; /* back-end for those nodes (encode/problem.h): one row (default glpk),
                              auto (GLPK, then Z3) or none */
    double solver_timeout; /* seconds per back-end call (default 10) */
    int attack_steps;      /* sub-domain attack steps from each node's best candidate (default 10;
                              ×5 on each group's most promising node, ×20 on fully split leaves) */
    int act_order;         /* smooth networks' activation splitting (bab_act.h): LG_BAB_ACT_DEPTH
                              (default, depth first) or LG_BAB_ACT_BEST (best first) */
    int conj;              /* 1 (default): also refute a conjunction by a combination
                              Σ λ_k (c_k·y + d_k), λ ≥ 0, of its constraints */
    int cuts;              /* 1: ReLU splitting learns cuts from the nodes α/β-CROWN refutes and
                              refutes later nodes that contain one (bab_cuts.h); 0 (default) off */
    int cuts_mutant;       /* tests only: keep cuts without verifying them (must be 0) */
    void (*on_cut)(void *ctx, int n, const int *idx, const signed char *sgn);
    void *on_cut_ctx;      /* on_cut (optional, tests and diagnostics): called by the driver with every
                              cut learnt — n neurons (lg_alpha_offset layout) and their phases (+1 z ≤ 0,
                              −1 z ≥ 0) no counterexample has all at once */
} lg_bab_opts;

/* Root intermediate α-CROWN steps on a smooth network when root_alpha_steps
 * is −1 (verify.c gives them at most half the case's remaining time). */
#define LG_BAB_SMOOTH_ROOT_ALPHA 20

lg_bab_opts lg_bab_opts_default(void);

/* Root α steps of the ReLU search on net: opts root_alpha_steps, −1 read as
 * LG_BAB_ROOT_ALPHA_AUTO on a net without conv layers and 0 on one with them.
 * Measured in benchmarks/VERIFY.md "Residual networks". */
#define LG_BAB_ROOT_ALPHA_AUTO 5
#define LG_BAB_ROOT_ALPHA_SHARE 0.5
/* Adam rate of those root steps (the nodes' alpha_lr is for their warm-started
 * output slopes): from the default slopes, 5 steps at this rate reach the bound
 * of 20 steps at 0.1, at a quarter of the cost. */
#define LG_BAB_ROOT_ALPHA_LR 0.5
int lg_bab_root_alpha_steps(const lg_bab_opts *o, const lg_net *net);

/* The sub-domain attacks' back-off in ReLU splitting (bab.c): whether round
 * r runs them; *next and *done carry the schedule between rounds (start at
 * 0). After each LG_BAB_ATTACK_BACKOFF attack rounds the gap between attack
 * rounds doubles, up to LG_BAB_ATTACK_GAP_MAX rounds (rounds 0–4, 6, 8, 10,
 * 12, 16, 20, 24, 28, 36, …). Measured in benchmarks/VERIFY.md "Residual
 * networks". */
#define LG_BAB_ATTACK_BACKOFF 4
#define LG_BAB_ATTACK_GAP_MAX 8
int lg_bab_attack_round(lg_bab_mode mode, long r, long *next, long *done);

/* AUTO resolved for a network with n_in inputs (NONE/INPUT/RELU unchanged). */
lg_bab_mode lg_bab_pick(lg_bab_mode m, int n_in);
/* "auto", "none", "input", "relu". */
const char *lg_bab_mode_name(lg_bab_mode m);
/* Parse one of those names; LG_ERR_ARG otherwise. */
lg_status lg_bab_mode_parse(const char *s, lg_bab_mode *m);

typedef enum lg_bab_answer { LG_BAB_OPEN = 0, LG_BAB_PROVED, LG_BAB_FOUND } lg_bab_answer;

typedef struct lg_bab_out {
    lg_bab_answer answer;
    lg_outcome how;         /* stage INPUT_SPLIT or RELU_SPLIT; by: the last row of the solver table that
                               closed a node (method "bab-relu+glpk"), else NULL; OPEN: why (timed_out) */
    int out_of_memory;      /* OPEN because the open nodes reached the run's memory cap (run->memory_mb) */
    long nodes;             /* nodes bounded */
    int max_depth;          /* deepest node bounded */
    long peak_open;         /* most open nodes in the work list at once */
    long solver_calls;      /* nodes handed to a back-end */
    long solver_nodes;      /* back-end nodes/decisions summed */
    long root_stabilised;   /* neurons made stable by root_alpha_steps */
    double t_bounds;        /* seconds spent bounding (summed over threads) */
    double t_solver;        /* seconds spent in back-ends (summed over threads) */
    lg_lp_stats lp;         /* LP work of the back-ends (GLPK), summed */
    long cuts;              /* cuts learnt (opts cuts) */
    long cut_pruned;        /* nodes refuted by a cut without being bounded */
} lg_bab_out;

/* Branch and bound on the box [lo, hi] against the terms (a disjunction).
 * root: sound pre-activation bounds already computed for this box (e.g. LP
 * tightened), or NULL. mode must be INPUT or RELU after lg_bab_pick.
 * Returns an error only for bad arguments, out of memory or a back-end
 * failure that is not a plain unknown. */
lg_status lg_bab_run(const lg_net *net, const double *lo, const double *hi, int n_terms, const lg_term *terms,
                     const lg_bounds *root, const lg_bab_opts *o, const lg_runctx *run, lg_bab_out *out, double *x);

#endif
