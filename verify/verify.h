/* verify.h — the verdict driver: bounds → quick proof → attack → solver →
 * re-check, for every case of a property (prop.h), under one deadline.
 *
 * Verdicts (DESIGN.md §3): ROBUST only from a proof (bounds, or a back-end's
 * UNSAT); VIOLATED only with a counterexample that lg_recheck confirmed
 * (x in the box, double forward pass satisfies a term); everything else is
 * UNKNOWN with a reason. Cases are decided one by one: any violated ⇒
 * violated; all robust ⇒ robust; else unknown.
 *
 * One run context (core/runctx.h) per run carries the deadline, the seed,
 * the verbosity and the back-end memory cap to every stage; the stages take
 * sub-budgets of its deadline, never a clock of their own.
 *
 * Order per case: symbolic bounds → proof from the bounds → attack →
 * [--tighten lp: LP tightening (at most half the remaining time) → proof]
 * → branch and bound (opts.bab, bab.h; nodes with few unstable ReLUs go to
 * the back-end; with --solver auto and --bab auto, ReLU splitting is a first
 * pass of at most a tenth of the remaining time and 32 nodes) → if still
 * open and time remains: back-end on the whole case.
 * The route — the list of stages a case goes through — is chosen once per
 * run: piecewise-linear (the order above), smooth (DESIGN.md §3 "Smooth
 * activations": bounds, attack, α-CROWN, input and activation splitting,
 * no back-end) or back-end only (opts.backend_only). A piecewise-linear net
 * with max-pool nodes (DESIGN.md §1 "The max-pool node") goes, after its
 * bounds leave a term open, through the node route: attack and branch and
 * bound on the nodes themselves with all the time left (no LP, no
 * back-end); a case still open with time left (branch and bound stuck or at
 * a limit), --tighten lp and back-end only go on on the exact ReLU form
 * (bounds again, then the piecewise-linear route; the attack not again).
 * Every route opens with the same stages — a short attack first where
 * bounds are costly (convs, max-pool nodes), the symbolic bounds, the choice
 * of the case's route — and the case is one loop over the opening and the
 * route's stages, one pass per net (the nodes, then their ReLU form).
 * A net with Transformer nodes goes through bounds, attack and input
 * splitting; with one back-end (`--solver glpk|z3`) or back-end only, the
 * back-end decides the case after the attack on the ReLU parts exactly and
 * each node's relaxation over the case's box (verify/tnode_planes.h,
 * DESIGN.md §3 "Back-ends on Transformer nodes"): its unsat is a proof, its
 * model a candidate the witness rules re-check on the real net.
 * Solvers (opts.solver, an lg_solver_pick of encode/problem.h resolved at
 * the edge): one row of the solver table (z3, glpk, …), auto (quick paths,
 * then GLPK, then Z3 if GLPK says unknown and time remains), none (quick
 * paths only). The back-end receives the remaining time and,
 * with a timeout, runs in a child process killed 0.5 s after the deadline
 * (encode/isolate.h), so the deadline holds whatever the native solver does.
 *
 * The report owns x, y and unstable; lg_verify_report_free releases them.
 * net and prop are borrowed.
 */
#ifndef LG_VERIFY_H
#define LG_VERIFY_H

#include <stdio.h>

#include "core/net.h"
#include "encode/problem.h"
#include "verify/attack.h"
#include "verify/bab.h"
#include "verify/bounds.h"
#include "verify/outcome.h"
#include "verify/prop.h"

typedef enum lg_verdict { LG_VERDICT_UNKNOWN = 0, LG_VERDICT_ROBUST, LG_VERDICT_VIOLATED } lg_verdict;
typedef enum lg_tighten { LG_TIGHTEN_NONE = 0, LG_TIGHTEN_LP } lg_tighten;
/* Refined intermediate bounds before ReLU branch and bound (refine.h): auto decides per case
 * (lg_verify_auto_refine), off never, on always. */
typedef enum lg_refine_mode { LG_REFINE_AUTO = 0, LG_REFINE_OFF, LG_REFINE_ON } lg_refine_mode;

typedef struct lg_verify_opts {
    lg_solver_pick solver;  /* auto (default), none, or one row of the solver table (encode/problem.h) */
    double timeout_s;       /* overall wall-clock limit (default 60); ≤ 0 none */
    lg_tighten tighten;     /* LP tightening of the bounds (default none) */
    lg_refine_mode refine;  /* certified LP refinement of the early layers' most unstable neurons
                               before ReLU branch and bound (refine.h; default auto) */
    int attack;             /* run sampling + PGD before the solver (default 1) */
    lg_attack_opts atk;     /* samples, restarts, steps */
    unsigned long seed;     /* seed of the attack, branch and bound and the back-ends (default 1; case c's
                               attack and branch and bound use seed + c) */
    int verbose;            /* 1: progress lines on stderr; 2: also solver chatter */
    double memory_mb;       /* memory cap of every back-end call (isolated child's RLIMIT_AS plus the
                               solver's own limit); ≤ 0 none (default) */
    lg_bab_opts bab;        /* branch and bound (bab.h): mode AUTO (default) splits the input box
                               when n_in ≤ 16, else ReLUs; NONE = bounds, attack, LP, back-end only.
                               Its solver follows `solver`; deadline, seed, verbosity and memory cap
                               come from the run context the driver makes from the fields here. */
    double witness_tol;     /* > 0: a candidate that fails the exact witness gate but lies in the box and
                               satisfies a term within this absolute tolerance (VNN-COMP's counterexample
                               check, 1e-4) is reported as the kind "violated-within-tolerance" (the verdict
                               stays UNKNOWN, reason LG_REASON_TOLERANCE); 0 (default): off */
    int backend_only;       /* 1: after the symbolic bounds, hand every term straight to `solver` (z3 or glpk):
                               no proof from the bounds, no attack, no tightening, no branch and bound, so the
                               time is that back-end's on that formulation (the study's z3/glpk modes) */
} lg_verify_opts;

lg_verify_opts lg_verify_opts_default(void);

/* The options of o that can change a verdict, as canonical text: every one
 * that differs from lg_verify_opts_default() as " key=value", in a fixed
 * order (solver, backend_only, attack, bab, tighten, refine, seed, memory,
 * bab_nodes, alpha_steps, bab_branch, beta, bab_group, bab_root_alpha,
 * bab_solver_relus); "" for the defaults. Threads and verbosity are left
 * out (verdicts do not depend on them) and so is the timeout, which callers
 * put first. The study's row keys (study/run.h) and bench's results.csv
 * rows (cli/cmd_bench.c) are made of it, so a resume never takes a row
 * made with other options for one of these. Returns the length snprintf
 * would have written. */
int lg_verify_opts_settings(const lg_verify_opts *o, char *buf, size_t n);

/* Compare two settings texts ("key=value" words): "" and 0 when equal, else
 * "key: old -> new" for every key whose value differs ("default" where a key
 * is absent), joined by "; ", into buf, and the number of such keys. */
int lg_verify_settings_diff(const char *old_s, const char *new_s, char *buf, size_t n);

typedef struct lg_verify_report {
    lg_verdict verdict;
    lg_outcome how;           /* what decided (stage, the solver table's row, the theory that ran), or why
                                 unknown (reason code and message "timeout", "witness failed re-check", ...;
                                 timed_out: the unknown came from the deadline) */
    char method[32];          /* how as text ("bounds", "attack", "glpk", "z3-lp", "bab-relu+glpk", ""):
                                 rendered from how (lg_verify_report_method) for printing, never parsed */
    const char *bound_method; /* "symbolic" or "symbolic+lp" (static string) */
    double seconds;           /* elapsed wall-clock */
    long nodes;               /* back-end nodes/decisions summed over cases (Z3's LP theory: conflicts,
                                 each a learned clause) */
    long n_lp;                /* LPs solved by --tighten lp and the bound refinement (refine.h) */
    int n_layers;
    int *unstable;            /* [n_layers] unstable ReLUs per layer, summed over cases */
    int unstable_total;
    int n_cases_bounded;      /* cases whose bounds were computed (0: decided before any bound, by the
                                 clean input or the attack run first); unstable counts only those */
    int n_cases_robust;
    int violated_case;        /* case index of the counterexample, −1 if none */
    int misclassified;        /* 1: violated because the clean input (prop->center) is itself a counterexample
                                 (misclassified, or not beating another output by the margin); method
                                 "clean input", nothing else ran */
    int n_in, n_out;
    double *x, *y;            /* counterexample [n_in] and its outputs [n_out], or NULL */
    const char *bab_mode;     /* "none", "input" or "relu" (static string): the strategy used */
    long bab_nodes;           /* branch-and-bound nodes bounded, summed over cases */
    int bab_max_depth;        /* deepest branch-and-bound node */
    double t_bounds;          /* seconds in bound computations (B&B: summed over threads) */
    double t_solver;          /* seconds in complete back-ends (B&B: summed over threads) */
    lg_lp_stats lp;           /* LP work inside them (GLPK, Z3's LP theory): LPs, LP seconds, certificate
                                 seconds */
    const char *net_note;     /* borrowed, set by the caller after the run (NULL or ""): what reading the
                                 network changed in the file's function (onnx.h lg_onnx_import_note);
                                 the result file carries it as a comment line */
} lg_verify_report;

void lg_verify_report_free(lg_verify_report *r);
/* Render r->how into r->method (lg_outcome_method); the driver does it at
 * the end of a run, whoever changes r->how after calls it again. */
void lg_verify_report_method(lg_verify_report *r);

/* "robust", "violated", "unknown". */
const char *lg_verdict_name(lg_verdict v);
/* The kind a report prints (CLI, JSON, CSV): lg_verdict_name, except
 * "violated-within-tolerance" for an unknown whose reason is
 * LG_REASON_TOLERANCE (its x, y are the witness within tolerance). The one
 * place that names the kind. */
const char *lg_verify_kind(const lg_verify_report *r);

/* Run the driver. Returns an error only for bad input (non piecewise-linear
 * net, shape mismatch), out of memory or a back-end failure that is not a
 * plain unknown; every verdict (including unknown) is LG_OK. r is
 * initialised here. */
lg_status lg_verify_run(const lg_net *net, const lg_prop *prop, const lg_verify_opts *o, lg_verify_report *r);

/* The same under a caller's run context (core/runctx.h): run's deadline,
 * seed, verbosity and memory cap replace o->timeout_s, seed, verbose and
 * memory_mb (lg_verify_run makes run from those, its deadline timeout_s
 * from now). E.g. several properties under one budget. */
lg_status lg_verify_run_in(const lg_net *net, const lg_prop *prop, const lg_verify_opts *o, const lg_runctx *run,
                           lg_verify_report *r);

/* Auto mode's ReLU branch-and-bound pass before the whole-case back-end, on a
 * net with `unstable` unstable ReLUs after the symbolic bounds: the share of
 * the case's remaining time it gets (lg_runctx_share) and its node cap
 * (*max_nodes lowered, never raised). A dense net with at most
 * LG_VERIFY_MILP_UNSTABLE of them gets a cheap first pass (a tenth, 32
 * nodes) and the MILP the rest; a conv net, or a dense net past that many
 * (one binary each: the MILP does not close in the time), gives β-CROWN
 * LG_VERIFY_BAB_SHARE of it without a cap. */
#define LG_VERIFY_MILP_UNSTABLE 400

/* --refine auto: 1 when a case with `unstable` unstable ReLUs after its
 * bounds, on net, goes through the bound refinement (refine.h) before
 * ReLU branch and bound, within LG_VERIFY_REFINE_SHARE of its time
 * (--refine on: every case that reaches ReLU branch and bound). At
 * present never: benchmarks/VERIFY.md "Refined intermediate bounds". */
int lg_verify_auto_refine(const lg_net *net, int unstable);
#define LG_VERIFY_REFINE_SHARE 0.3
#define LG_VERIFY_BAB_SHARE 0.8
double lg_verify_auto_bab_share(const lg_net *net, int unstable, long *max_nodes);

/* The clean-input check of a robustness property: 1 if prop->center lies in
 * case 0's witness box and passes the one witness gate on net
 * (lg_witness_accept) — the unperturbed input is already a counterexample;
 * x[n_in] and y[n_out] then hold it and its double outputs. 0 otherwise
 * (always without a center), −1 out of memory. lg_verify_run_in and
 * lg_verify_transfer call it first and report such an instance violated with
 * misclassified = 1, as ERAN and alpha-beta-CROWN count them apart. */
int lg_verify_misclassified(const lg_net *net, const lg_prop *prop, double *x, double *y);

/* Add margin K to a property: every constraint coef·y + d ≤ 0 becomes
 * coef·y + d − K ≤ 0 (a counterexample is any output that does not beat the
 * constraint by more than K), kept both ways as lg_prop_margin does. For
 * robustness properties built with margin 0 this equals lg_prop_robustness
 * with margin K. LG_OK or LG_ERR_NOMEM. */
lg_status lg_verify_apply_margin(lg_prop *p, double K);

/* Bounds for case c of prop and the lg_problem a back-end receives (terms
 * that the bounds refute are dropped). LP tightening stops at run's deadline
 * (run NULL: none). prob borrows from net, prop and b; b is initialised here
 * and owned by the caller, as is *kept. */
lg_status lg_verify_prepare(const lg_net *net, const lg_prop *prop, int c, lg_tighten tighten, const lg_runctx *run,
                            lg_bounds *b, lg_term **kept, lg_problem *prob, long *n_lp);

/* VNN-COMP result file (result_file.c): `unsat`, `sat` + counterexample
 * ((X_i v) ... (Y_j v)) numbers in their shortest round-trip form (core/json.h), `unknown` or `timeout`. */
lg_status lg_verify_write_result(const lg_verify_report *r, FILE *f);
lg_status lg_verify_write_result_path(const lg_verify_report *r, const char *path);

#endif
