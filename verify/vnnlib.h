/* vnnlib.h — VNN-LIB 1.0 properties (the fragment VNN-COMP uses) → lg_prop.
 *
 * Accepted: comments `;`, (declare-const X_i Real), (declare-const Y_j Real),
 * (assert F) where F is built from (<= a b), (>= a b), (= a b), (and F...),
 * (or F...) over linear terms: numbers (decimal or scientific), declared
 * variables, (+ ...), (- a) (- a b ...), (* ...) with at most one
 * non-constant factor, (/ a c) by a nonzero constant. Multiple asserts are
 * conjoined and the whole is put in disjunctive normal form (at most
 * LG_VNNLIB_MAX_CONJ conjunctions). Each conjunction must bound every X_i
 * from both sides with single-variable constraints (coefficient ±1) — the
 * input box — and constrain only outputs otherwise; conjunctions with the
 * same box become one lg_prop case whose terms are their output parts.
 * As in VNN-LIB, the assertions describe the counterexample region
 * (sat = violated); see verify/prop.h. Empty boxes and constant-false
 * conjunctions are dropped.
 *
 * Limits (refused up front with a message): LG_VNNLIB_MAX_BYTES of text,
 * nesting LG_VNNLIB_MAX_DEPTH, LG_VNNLIB_MAX_ATOMS comparisons, the DNF
 * size above and LG_VNNLIB_MAX_DNF_ENTRIES atom references in it, tokens of 4096 bytes; a constraint whose coefficients or
 * constant overflow to ±Inf (e.g. (* 1e300 1e300 X_0)) is refused at its
 * line:column, and the result passes lg_prop_validate.
 *
 * Errors name file:line:column and what was expected. The caller owns the
 * lg_prop filled in (lg_prop_free); on failure it is left zeroed.
 */
#ifndef LG_VNNLIB_H
#define LG_VNNLIB_H

#include <stddef.h>

#include <stdio.h>

#include "verify/prop.h"

#define LG_VNNLIB_MAX_BYTES ((size_t)256 << 20)
#define LG_VNNLIB_MAX_CONJ 100000
#define LG_VNNLIB_MAX_DEPTH 256
/* comparisons (linear constraints) in one file */
#define LG_VNNLIB_MAX_ATOMS 1000000
/* atom references summed over the DNF's conjunctions */
#define LG_VNNLIB_MAX_DNF_ENTRIES (1 << 24)

/* Read a property file. n_in, n_out: the network's sizes; the file must
 * declare exactly X_0..X_{n_in−1} and Y_0..Y_{n_out−1} (else LG_ERR_ARG: the
 * file does not fit the network). Pass 0 for either to take the size from
 * the declarations instead. */
lg_status lg_vnnlib_read(lg_prop *p, const char *path, int n_in, int n_out);
/* Same from a buffer (need not be NUL-terminated); `name` is used in messages. */
lg_status lg_vnnlib_parse(lg_prop *p, const char *text, size_t len, const char *name, int n_in, int n_out);

/* As lg_vnnlib_read / lg_vnnlib_parse for the network net (its sizes), which
 * also admits a constraint over outputs whose coefficients no scale makes
 * doubles (`(<= (* 0.10000000000000001 Y_0) Y_1)`): each coefficient becomes
 * its nearest double c_j with |exact_j − c_j| ≤ r_j, and the constraint's
 * constant is widened by E = Σ_j r_j·max|y_j| over the case's box (interval
 * bounds of net's outputs, verify/bounds.h) — outward for proofs, inward for
 * witnesses, as a constant that is no double (DESIGN.md §3 "Numbers that are
 * not doubles"). The property then holds for net only: a property for
 * another network (verify --ref) is read with lg_vnnlib_read, which refuses
 * such a constraint. net is borrowed. */
lg_status lg_vnnlib_read_net(lg_prop *p, const char *path, const lg_net *net);
lg_status lg_vnnlib_parse_net(lg_prop *p, const char *text, size_t len, const char *name, const lg_net *net);

/* Write the declarations and assertions of the property file at path to
 * out as SMT-LIB 2 text with every number replaced by its exact rational
 * ((/ p q), (- (/ p q)) with integer literals): the property exactly, for
 * exports (DESIGN.md §3). Other commands (check-sat, set-logic, ...) are
 * dropped. The file must already have been read by lg_vnnlib_read. */
lg_status lg_vnnlib_write_smt(const char *path, FILE *out);

/* Write the local-robustness property that lg_prop_robustness(x0, n_in, eps,
 * clip_lo, clip_hi, label, n_out, margin) builds, as a VNN-LIB file: every
 * input bound is the exact decimal of the real ball's end max(clip_lo,
 * x0_i − eps) / min(clip_hi, x0_i + eps) (a sum of two doubles, written with
 * all its digits, so reading the file back gives the same outward and
 * inward boxes; where the ball misses [clip_lo, clip_hi] the written box is
 * empty, as the inward one is), and the counterexample region is one disjunct per j ≠ label,
 * Y_label − Y_j ≤ margin (margin written exactly). `comment` (may be NULL)
 * opens the file as `; ` lines. LG_OK, LG_ERR_ARG for a label outside
 * [0, n_out) or a non-finite number, LG_ERR_IO on a write error. */
lg_status lg_vnnlib_write_robustness(FILE *f, const double *x0, int n_in, double eps, double clip_lo, double clip_hi,
                                     int label, int n_out, double margin, const char *comment);

/* Read a VNN-COMP counterexample / assignment file: an optional leading
 * `sat`, then ((X_0 v) ... (Y_j v)). Fills x[n_in] and y[n_out]; every X_i
 * and Y_j must appear exactly once. y may be NULL (Y entries then ignored). */
lg_status lg_vnnlib_read_assignment(const char *path, int n_in, int n_out, double *x, double *y);

#endif
