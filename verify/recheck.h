/* recheck.h — the double-precision re-check of a counterexample candidate.
 *
 * Only what passes lg_recheck may be reported `violated`: x lies in the box
 * (inclusive, no tolerance) and the plain forward pass lg_net_forward(x) in
 * double satisfies some term (every constraint coef·y + d ≤ 0, no
 * tolerance). Everything is borrowed; nothing is allocated by the caller
 * except the output vector y.
 */
#ifndef LG_RECHECK_H
#define LG_RECHECK_H

#include "core/net.h"
#include "encode/problem.h"
#include "verify/prop.h"

/* Index of the first term of terms[0..n_terms) satisfied by y[n_out], or −1. */
int lg_terms_violated_by(int n_out, int n_terms, const lg_term *terms, const double *y);

/* 1 if x ∈ [lo, hi] and lg_net_forward(x) (written to y[n_out] when y is
 * not NULL) satisfies some term; 0 otherwise; −1 out of memory. */
int lg_recheck(const lg_net *net, const double *lo, const double *hi, int n_terms, const lg_term *terms,
               const double *x, double *y);

/* The witness rule (DESIGN.md §3), the one gate every `violated` passes:
 * x is first clipped into the box a witness must lie in (prop->inner's
 * inward box, else the case box), then it must (1) pass the double forward
 * pass against the case's terms with the inner constants (d + slack) and
 * (2) satisfy some term in exact rational arithmetic (core/exact.h) on the
 * network with the file's weights as exact values. 1 accepted (x clipped,
 * y[n_out] = its double outputs if y is not NULL), 0 rejected (a near-tie:
 * the caller answers unknown), −1 out of memory. */
int lg_witness_accept(const lg_net *net, const lg_prop *prop, int c, double *x, double *y);

/* The opt-in witness tolerance (VNN-COMP's counterexample check): x is
 * clipped into case c's box (the file's box rounded outward, so within one
 * rounding of it) and its double forward pass must satisfy some term with
 * every constraint within tol (coef·y + d ≤ tol). 1 within tolerance (y as
 * above), 0 not, −1 out of memory. Never a `violated`: the caller reports the
 * kind "violated-within-tolerance" (verify.h lg_verify_kind). */
int lg_witness_within_tol(const lg_net *net, const lg_prop *prop, int c, double tol, double *x, double *y);

#endif
