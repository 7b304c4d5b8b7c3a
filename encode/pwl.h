/* pwl.h — shared, solver-independent view of an lg_problem for the
 * back-ends in encode/ (internal to encode/ and its tests).
 *
 * lg_pwl_validate checks everything a back-end relies on before any solver
 * call (GLPK aborts on bad input; Z3 must never see NaN): activations
 * identity/relu only, consistent shapes, finite data, lo ≤ hi, finite
 * pre-activation bounds with pre_lo ≤ pre_hi, well-formed terms.
 * lg_pwl_phase classifies a neuron by its bounds (DESIGN.md §3). Nothing is
 * allocated here.
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

/* Phase of neuron i of layer k (p validated). */
lg_phase lg_pwl_phase(const lg_problem *p, int k, int i);

/* Number of unstable neurons over all layers (p validated). */
int lg_pwl_count_unstable(const lg_problem *p);

/* 1 if x (in the box) drives the double forward pass of p->net into term t
 * (every constraint coef·y + d ≤ tol). scratch: 2·max_width + n_out doubles. */
int lg_pwl_term_holds(const lg_problem *p, int t, const double *x, double tol, double *scratch);

#endif
