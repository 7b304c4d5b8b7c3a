/* exact.h — exact rational evaluation of a ReLU network and of the
 * counterexample region (GMP rationals), and a certified enclosure of a
 * smooth network's outputs (MPFR interval arithmetic, enclose.c): the
 * second half of the witness rule (DESIGN.md §3).
 *
 * The network is the real-valued one whose weights, biases and input
 * normalisation are the file's doubles taken as exact values; x is a vector
 * of doubles, also exact. The network may be a graph (core/net.h): each
 * node's value is the sum of its terms over their sources' values. Every
 * product and sum is exact, so the answer is
 * the truth about that network, not about its double evaluation. Networks
 * with a smooth activation (gelu, lgelu, sigmoid, swish, prelu) cannot be
 * evaluated in rationals; for them a term holds only when an outward-rounded
 * interval enclosure of f(x) (128-bit MPFR, correctly rounded erfc/exp)
 * proves it: a near-tie the enclosure cannot decide is not a witness.
 * Nothing is kept between calls; all memory is released before returning.
 */
#ifndef LG_EXACT_H
#define LG_EXACT_H

#include "core/net.h"
#include "core/term.h"

/* Index of the first term of terms[0..n_terms) whose every constraint the
 * exact outputs f(x) satisfy exactly: Σ coef·y + d + slack[r] ≤ 0 (slack:
 * one per constraint of every term in order, or NULL for zeros); −1 if
 * none (for a smooth network: none certified by lg_enclose_first_holding);
 * −2 if a value is not finite; −3 out of memory. */
int lg_exact_first_holding(const lg_net *net, const double *x, int n_terms, const lg_term *terms,
                           const double *slack);

/* The same for any network through the enclosure: a term counts only when
 * the upper end of every constraint's enclosure is ≤ 0. */
int lg_enclose_first_holding(const lg_net *net, const double *x, int n_terms, const lg_term *terms,
                             const double *slack);

/* The enclosure itself: ylo[j] ≤ f_j(x) ≤ yhi[j] for every output (n_out
 * each; ∓∞ where a value is not finite). 0, −2 (a value not finite) or −3
 * (out of memory). */
int lg_enclose_outputs(const lg_net *net, const double *x, double *ylo, double *yhi);

/* The exact value of Σ coef·f(x) + d for one constraint, rounded to a
 * nearby double (reports and tests); NAN as for −2 / −3. */
double lg_exact_constraint_value(const lg_net *net, const double *x, const lg_lincon *L);

#endif
