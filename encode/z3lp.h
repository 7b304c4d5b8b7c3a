/* z3lp.h — the Z3 back-end with lgelu's linear arithmetic as its theory
 * (internal to encode/ and its tests; callers outside use the solver
 * table's rows z3-lp, z3-lp-lemmas, z3-auto).
 *
 * Z3's CDCL engine decides the Boolean structure alone: one literal per
 * unstable ReLU (true = active: z ≥ 0, a = z; false = inactive: z ≤ 0,
 * a = 0) and one per term of the counterexample region (at least one term
 * holds). Each Boolean model is checked by an LP over the exact encoding
 * (lemmas on demand, z3lp.c): an infeasible LP, proved by the safe
 * Lagrangian bound of lp_cert.h (through lp_relax.h), gives a conflict clause made of the
 * literals whose rows carry a nonzero multiplier in that bound; a feasible
 * LP gives the candidate x. Literals are numbered 0 .. n_unstable − 1 for
 * the unstable neurons in layer-major order (layer k, then neuron i; the
 * order of lg_pwl_phase) and n_unstable + t for term t.
 *
 * lg_z3lp_solve answers as every back-end (problem.h): UNSAT only when every
 * Boolean model was closed by a certified bound (LG_UNSAT_CERTIFIED in the
 * solver table: a proof about the exact reals, given sound pre-activation
 * bounds), SAT with a candidate that holds in the double and the exact
 * forward pass (verify/ applies the witness gate), else UNKNOWN.
 * r->theory = "lp", r->nodes = theory conflicts (each one learned clause),
 * r->lp = the LP work (LPs, seconds, models no certificate closed).
 */
#ifndef LG_Z3LP_H
#define LG_Z3LP_H

#include "encode/problem.h"

/* Called once per certified conflict with its explanation: n literals
 * lit[0..n) (numbered as above) and the values val[0..n) (1 true, 0 false)
 * they had; the LP restricted to their rows (and the rows no literal
 * controls) is infeasible. propagated 1: a phase propagation (online mode):
 * lit[n−1] is the propagated neuron with the phase it excludes, lit[0..n−1)
 * the literals Z3 got as its explanation, and the same holds: their rows
 * and the excluded phase's are infeasible together. Both arrays are
 * borrowed for the call. */
typedef void (*lg_z3lp_conflict_fn)(void *ctx, int n, const int *lit, const int *val, int propagated);

/* How the theory talks to Z3: ONLINE through Z3's user propagator (the
 * theory sees every partial assignment and raises conflicts during the
 * search), LEMMAS on demand (Z3 solves the abstraction, the theory checks
 * each full model and adds the clause). */
typedef enum lg_z3lp_mode { LG_Z3LP_ONLINE = 0, LG_Z3LP_LEMMAS } lg_z3lp_mode;

/* ONLINE ("z3-lp") and LEMMAS ("z3-lp-lemmas"). */
lg_status lg_z3lp_solve(const lg_problem *p, const lg_solve_opts *o, lg_result *r);
lg_status lg_z3lp_lemmas_solve(const lg_problem *p, const lg_solve_opts *o, lg_result *r);

/* Either mode, reporting every certified conflict to fn (may be NULL). */
lg_status lg_z3lp_solve_traced(const lg_problem *p, const lg_solve_opts *o, lg_z3lp_mode mode, lg_result *r,
                               lg_z3lp_conflict_fn fn, void *ctx);

/* Input dimension up to which "z3-auto" runs the exact theory: measured
 * (benchmarks/Z3.md), the exact theory decides more of the soundness
 * fuzzer's 1–4-input near-ties and none of the 64-64 Fashion-MNIST nets at
 * 16 inputs or more, nor ACAS Xu (5 inputs) without splitting. */
#define LG_Z3_AUTO_EXACT_MAX_IN 4

/* Phase propagation (online only): LPs per partial check that try to prove
 * an unassigned neuron's phase from the fixed ones (z3lp.c, DESIGN.md §3
 * "Z3's theory"); lg_solve_opts.z3lp.propagate sets it. Off
 * by default: measured (benchmarks/Z3.md), it proves about one phase in a
 * hundred tries on the main job and costs a third of the conflicts per
 * second. */
#define LG_Z3LP_PROPAGATE_DEFAULT 0
/* Simplex iterations per propagation LP (lg_solve_opts.z3lp.propagate_it
 * overrides it): the duals of the basis reached still certify a bound. */
#define LG_Z3LP_PROPAGATE_IT_DEFAULT 30

#endif
