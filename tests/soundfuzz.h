/* soundfuzz.h — the differential soundness fuzzer: run a case with known
 * truth (gen_fuzz.h) through every --solver × --bab mode of the verdict
 * driver (lg_verify_run) and compare with the exact oracle (oracle.h).
 *
 * A run is WRONG when the driver says `robust` and the oracle found a
 * counterexample (wrong-robust), or says `violated` with a witness that is
 * not a counterexample in exact arithmetic (outside the box, or the exact
 * forward pass satisfies no term: wrong-witness). `unknown` is always
 * allowed. A driver error (lg_verify_run returning non-OK on a valid
 * instance) is counted separately as an error. Odd case indices run with
 * the attack off (--no-attack), even ones with it on, so the proof paths
 * are exercised without the attack deciding first.
 *
 * Direct runs vary the smooth pipeline's options (root intermediate α-CROWN
 * steps, activation branch and bound order, α steps and rate). Each direct
 * case with its own property (not VNN-LIB) also checks α-optimised bounds
 * themselves: the hidden layers tightened by lg_alpha_tighten and every
 * constraint row bounded by lg_alpha_optimize from random α (both the lower
 * and the upper line families of backsub.h, random rates up to 2, so α
 * reaches the ends of [0, 1]) must lie below the row's exact 300-bit value at
 * 24 sample points of the box and the oracle search's best point
 * (WRONG-ALPHA otherwise).
 *
 * Smooth near ties: every third case is also run as a smooth network (the
 * same weights with gelu, lgelu, swish, sigmoid or prelu hidden layers, or
 * sigmoid and prelu alternating) directly (lg_verify_run on the smooth net)
 * and, for the ReLU-like activations, through lg_verify_transfer, on the
 * case's box and terms with constants moved so that the boundary passes
 * within a few ulps, or 1e-12 … 1e-15 relative, of the box centre (by a
 * 300-bit MPFR forward pass written here, independent of lgelu). The gate
 * (lg_witness_accept) is asked about the centre directly, and every
 * `violated` witness and every `robust` is judged by the same MPFR pass
 * (points within 1e-40 of the boundary are not judged). For a conv case
 * the driver and the gate get the conv net, the MPFR pass its dense form
 * (lg_net_densify), like the exact oracle (gen_fuzz.h). The next third of
 * the cases run directly as smooth nets (lg_fuzz_direct), and batches of
 * MaxPool ONNX graphs (lg_fuzz_pool) are judged on the graph's semantics.
 *
 * Everything passed in is borrowed.
 */
#ifndef LG_SOUNDFUZZ_H
#define LG_SOUNDFUZZ_H

#include <stdio.h>

#include "gen_fuzz.h"

#define LG_FUZZ_N_SOLVERS 6
#define LG_FUZZ_N_BABS 4
#define LG_FUZZ_MAX_KINDS 48
#define LG_FUZZ_MAX_DCLASS 128

typedef struct lg_fuzz_opts {
    double timeout_s;                  /* per lg_verify_run (default 2) */
    int solver_on[LG_FUZZ_N_SOLVERS];  /* auto, glpk, z3, none, glpk-only, z3-lp (default all 1); glpk-only is
                                          GLPK's certified search alone (backend_only, the study's glpk
                                          mode), run once per case (bab none); z3-lp is Z3 over the
                                          certified LP theory (verify --solver z3 --z3-theory lp) */
    int bab_on[LG_FUZZ_N_BABS];        /* none, input, relu, auto (default all 1) */
    int verbose;                       /* 1: a line per run */
    int direct;                        /* 1: the smooth direct class (lg_fuzz_direct; default 1) */
    double direct_timeout_s;           /* per direct run; ≤ 0: timeout_s (default 0) */
    int refine;                        /* lg_refine_mode (verify.h) of the piecewise-linear runs (default auto) */
    int cuts;                          /* 1: cuts in ReLU branch and bound (--bab-cuts on) in those runs (default 0) */
} lg_fuzz_opts;

typedef struct lg_fuzz_stats {
    long cases, runs;
    long truth_sat, truth_unsat;
    long robust, violated, unknown;
    long timeouts;                     /* unknowns that came from the deadline */
    long wrong_robust, wrong_witness, errors;
    long ties;                         /* cases of a tie class */
    long convs;                        /* cases of the conv class */
    long dags;                         /* cases of the dag class (graphs: gen_graph.h) */
    long dag_max;                      /* of those, with a max-pool node (dag-max) */
    long dag_runs, dag_robust, dag_violated; /* driver runs on them */
    long smooth_runs, smooth_gate_yes;  /* smooth near-tie runs; centres the gate accepted */
    long exact_route;                   /* of those, the difference network's exact route checked at 3 points */
    long wrong_smooth;                 /* wrong smooth verdicts or gate answers */
    long direct_runs, direct_robust, direct_violated, direct_unknown; /* lg_fuzz_direct */
    long direct_known;                 /* direct cases where the oracle's search found a counterexample */
    long wrong_direct;                 /* wrong direct verdicts */
    long alpha_checks, alpha_points;   /* α-optimised bounds of direct cases (lg_fuzz_direct: the smooth net,
                                        * and the ReLU net when it has a max-pool node), sample points */
    long alpha_max;                    /* of those checks, on a net with a max-pool node (random α on its planes) */
    long wrong_alpha;                  /* bounds above the exact value of their row at a sample point */
    double t_direct;                   /* seconds in direct runs */
    int n_dclass;                      /* direct runs by class ("sigmoid", "mix conv", "prelu vnnlib", ...) */
    char dclass[LG_FUZZ_MAX_DCLASS][32];
    long dclass_n[LG_FUZZ_MAX_DCLASS];
    long pool_graphs, pool_decided, pool_known; /* lg_fuzz_pool: graphs, decided by the exact oracle, with a
                                                  known counterexample */
    long pool_runs, pool_robust, pool_violated, pool_wrong;
    long onnx_graphs, onnx_imported, onnx_wrong; /* foldable ONNX graphs (lg_fuzz_onnx) */
    long tnet_nets, tnet_runs, tnet_robust, tnet_violated, tnet_known; /* attention blocks (lg_fuzz_tnet) */
    long tnet_bound_checks, tnet_wrong;
    long bad_cases;                    /* cases with at least one wrong verdict or error */
    double t_oracle, t_verify;         /* seconds */
    int n_kinds;                       /* wrong verdicts by kind and deciding method */
    char kind[LG_FUZZ_MAX_KINDS][64];  /* e.g. "WRONG-ROBUST glpk/glpk" (solver/method) */
    long kind_n[LG_FUZZ_MAX_KINDS];
} lg_fuzz_stats;

lg_fuzz_opts lg_fuzz_opts_default(void);

/* Names, in index order, of the solver and bab modes. */
extern const char *const lg_fuzz_solver_names[LG_FUZZ_N_SOLVERS];
extern const char *const lg_fuzz_bab_names[LG_FUZZ_N_BABS];

/* Enable only the comma-separated names in list (e.g. "glpk,z3"); LG_ERR_ARG
 * for an unknown name. which: 0 solvers, 1 bab modes. */
lg_status lg_fuzz_opts_select(lg_fuzz_opts *o, int which, const char *list);

/* Run fc through every enabled mode, add to s, and print every wrong verdict
 * or error to log (with the case and a reproducer command). Returns the
 * number of wrong verdicts plus errors for this case. */
long lg_fuzz_run_case(const lg_fuzz_case *fc, const lg_fuzz_opts *o, lg_fuzz_stats *s, FILE *log);

/* The smooth near-tie runs of one case (above); called by lg_fuzz_run_case
 * for every third case. Returns the number of wrong answers. */
long lg_fuzz_smooth(const lg_fuzz_case *fc, const lg_fuzz_opts *o, lg_fuzz_stats *s, FILE *log);

/* Smooth nets verified directly (lg_verify_run on the smooth net itself):
 * called by lg_fuzz_run_case for case indices ≡ 1 mod 3. The case's net
 * gets sigmoid, prelu, swish, gelu or lgelu hidden layers (random
 * parameters, prelu slopes of either sign), or, for a third of the nets
 * with ≥ 2 hidden layers, a mix across layers (relu among them); conv
 * cases stay conv. Even indices use the case's property; odd ones write it
 * as VNN-LIB text with 2–3 boxes in one disjunction (the case's box and
 * sub-boxes of it, some points) and the output constants as decimals of
 * 3–17 digits, often not doubles, read back by lg_vnnlib_parse. The oracle
 * (no lgelu code): the centre, corners, 192 uniform points and a pattern
 * search in double, the best judged by the MPFR pass with the file's
 * decimal constants; margin cases (gen_fuzz.h) give the driver dprop and
 * the oracle d − K at 300 bits; every fourth other case (`tight`) moves the constants by
 * the best depth found ± 10^[−15, −9] relative and searches again, or
 * (`point`) shrinks the box to that point first (± 10^[−16, −10]).
 * `robust` is wrong when that found a counterexample;
 * `violated` when the witness is in no written box or its MPFR depth is
 * > 1e-40. One run per case, the mode (--solver auto / none, --bab none /
 * input / auto, attack on / off) drawn from the case; then --solver z3 or
 * glpk must refuse the smooth net (LG_ERR_UNSUPPORTED). Returns the number
 * of wrong answers and errors. */
long lg_fuzz_direct(const lg_fuzz_case *fc, const lg_fuzz_opts *o, lg_fuzz_stats *s, FILE *log);

/* MaxPool graphs: tests/onnx_poolfuzz.py writes n random ONNX graphs
 * (Conv, Relu, MaxPool with strides = kernel and floor-dropped rows, or
 * GlobalMaxPool, Flatten, Gemm; float64 or float32) and a description of
 * each, which an exact rational evaluator here (soundfuzz_pool.c) runs on
 * the graph's own semantics. Each graph must import (they are all within
 * what the importer rewrites exactly); the import must equal the evaluator
 * exactly at 24 points of a random box; a property of 1–2 terms through a
 * sampled anchor point (on it, inside by 5 %, outside by 1e-3 or 1e-13,
 * or moved by the exact depth lg_oracle_gap of the import to a margin of
 * +1e-13 relative or to 0) is decided by the exact oracle on the imported
 * net when it has ≤ 12
 * unstable ReLUs, and that answer is cross-checked on the graph (a robust
 * answer where the anchor is a counterexample, or a witness that is none
 * on the graph, is wrong); then three driver runs (auto/auto, glpk/relu,
 * z3/input, attack alternating) are judged on the graph: `robust` with a
 * known counterexample, or a `violated` witness that is not one exactly.
 * Returns wrong answers plus errors. batch picks the graphs. */
long lg_fuzz_pool(unsigned long seed, long batch, long n, const lg_fuzz_opts *o, lg_fuzz_stats *s, FILE *log);

/* Attention blocks (soundfuzz_tnet.c): n random nets of tests/gen_tnet.h
 * (layernorm, Q/K/V, product, softmax, product, residual, ReLU MLP) with
 * robustness properties at radii 1e-4 … 0.5. The oracle (double, no lgelu
 * bounds): the centre, corners, uniform points and a pattern search; a
 * point whose margin is below −1e-9 is a counterexample. Each property runs
 * through --solver none and auto × --bab none, input and auto, attack on
 * and off: `robust` is wrong when the search found a counterexample,
 * `violated` when the witness is outside the box or its double margin is
 * above 1e-9. The back-substitution bounds of every node (lg_bounds_symbolic)
 * and an objective's lower bound are checked against every searched point.
 * Returns the number of wrong answers and errors. */
long lg_fuzz_tnet(unsigned long seed, long batch, long n, const lg_fuzz_opts *o, lg_fuzz_stats *s, FILE *log);

/* Foldable ONNX graphs: tests/onnx_foldfuzz.py writes n random float64
 * graphs (Gemm/MatMul, Relu, constant Add/Sub/Mul/Div by foldable and
 * unfoldable numbers, input normalisation) with exact outputs at three
 * points (Python Fractions). Each must be refused, or imported as a net
 * whose exact outputs (lg_oracle_forward) equal them. batch picks the
 * graphs. Returns the number of wrong imports (and errors). */
long lg_fuzz_onnx_fold(unsigned long seed, long batch, long n, lg_fuzz_stats *s, FILE *log);

/* A summary line (cases, runs, cases/hour, verdict counts, wrong verdicts,
 * errors), then one line per kind of wrong verdict. */
void lg_fuzz_stats_print(const lg_fuzz_stats *s, double seconds, FILE *f);

#endif
