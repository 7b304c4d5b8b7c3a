/* attack.h — counterexample search: random sampling and PGD with restarts.
 *
 * Looks for x in the box [lo, hi] whose output satisfies some term of the
 * counterexample region (prop.h). The objective minimised is
 *     g(x) = min_t max_k (coef_tk · y(x) + d_tk)      (violation iff g ≤ 0),
 * its gradient computed by hand in double through the relu/identity network
 * (active term and constraint, ReLU masks, in-graph normalisation; a
 * max-pool node passes it to the first largest input of each window).
 * Sampling tries the centre, both extreme corners, random corners and
 * uniform points; PGD takes signed-gradient steps of a decaying fraction of
 * the box width from the centre, then in turn from a uniform random point,
 * a random corner, and a random point aimed at a single term (the terms
 * ranked by their value at the centre, closest to violated first). Seeded: the same seed
 * gives the same search. Every hit is confirmed with lg_recheck before it is
 * returned. The seed and the deadline come from the run context
 * (core/runctx.h), whose deadline is checked in every loop.
 * Nothing is owned: the caller provides x[n_in].
 */
#ifndef LG_ATTACK_H
#define LG_ATTACK_H

#include "core/net.h"
#include "core/runctx.h"
#include "encode/problem.h"

typedef struct lg_attack_opts {
    int samples;      /* random points (corners and uniform), default 256 */
    int restarts;     /* PGD starts (first one is the centre), default 8 */
    int steps;        /* PGD steps per start, default 100 */
    double step0;     /* first step as a fraction of the box width, default 0.25 */
} lg_attack_opts;

lg_attack_opts lg_attack_opts_default(void);

/* *found = 1 and x[n_in] = a re-checked counterexample, or *found = 0.
 * run: seed (run->seed) and deadline. Fails only on bad arguments or out of
 * memory. */
lg_status lg_attack_run(const lg_net *net, const double *lo, const double *hi, int n_terms, const lg_term *terms,
                        const lg_attack_opts *o, const lg_runctx *run, double *x, int *found);

/* Local search from a given candidate x (e.g. a solver witness that failed
 * the re-check): clip into the box, then up to `steps` small PGD steps
 * (fraction `step0` of the box width). *found as above; x updated. */
lg_status lg_attack_repair(const lg_net *net, const double *lo, const double *hi, int n_terms, const lg_term *terms,
                           int steps, double step0, double *x, int *found);

/* Sub-domain attack: the local search of lg_attack_repair with
 * the steps steered into a branch-and-bound node's region, i.e. PGD on
 *     g(x) + μ·Σ_j max(0, sign_j·z_j(x))      (μ = 1)
 * with sign [Σ n_out] in the layout of alpha.h (+1: the node has z_j ≤ 0,
 * −1: z_j ≥ 0, 0: free; NULL: plain repair). Any x of the box with
 * g(x) ≤ 0 is a hit (re-checked), in the region or not: the splits only
 * steer the search. Stops at run's deadline (run NULL: none). */
lg_status lg_attack_subdomain(const lg_net *net, const double *lo, const double *hi, int n_terms, const lg_term *terms,
                              const signed char *sign, int steps, double step0, const lg_runctx *run, double *x,
                              int *found);

/* g(x) and, when grad is not NULL, ∂g/∂x[n_in]. Returns LG_ERR_NOMEM or LG_OK. */
lg_status lg_attack_objective(const lg_net *net, int n_terms, const lg_term *terms, const double *x, double *g,
                              double *grad);

#endif
