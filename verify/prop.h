/* prop.h — properties: the counterexample region of a verification query.
 *
 * Following VNN-LIB, a property describes where a counterexample lives:
 *
 *   violated  ⇔  ∃ case c, ∃ x ∈ box_c :  y = f(x) satisfies some term of c,
 *
 * where a term is a conjunction of linear constraints Σ_j coef[j]·y_j + d ≤ 0
 * (closed: equality counts as a counterexample). A property "holds" (verdict
 * robust, VNN-COMP `unsat`) when no case has such an x.
 *
 * Local robustness of label ℓ with margin κ is one case (the ε-box) with
 * one term per j ≠ ℓ:  y_ℓ − y_j − κ ≤ 0.
 *
 * The lg_prop owns every array below; lg_prop_free releases them.
 */
#ifndef LG_PROP_H
#define LG_PROP_H

#include "core/status.h"
#include "encode/problem.h" /* lg_lincon, lg_term */

typedef struct lg_prop_case {
    double *lo, *hi;       /* input box [n_in], lo ≤ hi */
    int n_terms;           /* disjunction of terms */
    lg_term *terms;
} lg_prop_case;

/* What a witness must satisfy when the file's constants were not doubles
 * (DESIGN.md §3): the case box rounded inward and, per constraint, the
 * constant rounded the other way (exact constant ≤ d + slack). */
typedef struct lg_prop_inner {
    double *lo, *hi;   /* [n_in] box a witness must lie in (⊆ the case box) */
    double *slack;     /* one per constraint of every term in order, ≥ 0; NULL: all 0 */
} lg_prop_inner;

typedef struct lg_prop {
    int n_in, n_out;
    int n_cases;
    lg_prop_case *cases;  /* boxes and constants rounded outward: what a proof covers */
    lg_prop_inner *inner; /* [n_cases], or NULL when every constant is exact */
    double *center;       /* [n_in] the clean input of a robustness property (lg_prop_robustness), else NULL:
                             the driver first asks whether it is itself a counterexample (misclassified) */
} lg_prop;

/* Local robustness: box = [x0 − eps, x0 + eps] ∩ [clip_lo, clip_hi], label
 * must beat every other output by more than margin. */
/* A one-case property of the given shape, every array allocated and zeroed:
 * box lo/hi [n_in], n_terms terms, term t with n_cons[t] constraints (1 each
 * if n_cons is NULL), each coef [n_out]. No inner box. LG_ERR_NOMEM (p
 * freed) or LG_OK; the caller fills the numbers. */
lg_status lg_prop_alloc(lg_prop *p, int n_in, int n_out, int n_terms, const int *n_cons);

lg_status lg_prop_robustness(lg_prop *p, const double *x0, int n_in, double eps, double clip_lo, double clip_hi,
                             int label, int n_out, double margin);

/* Margin K on every constraint, kept both ways (DESIGN.md §3): the proof
 * constant becomes d − K rounded down (the counterexample region only
 * grows), and the witness constant (d + slack) − K rounded up, stored as the
 * new slack so that d' + slack' ≥ the exact d − K (allocates prop->inner
 * and its slack when absent). K must be finite. LG_OK or LG_ERR_NOMEM. */
lg_status lg_prop_margin(lg_prop *p, double K);

/* 1 if case c's proof box or constants differ from its witness ones (a
 * number of the property was not a double and is kept rounded both ways). */
int lg_prop_rounded(const lg_prop *p, int c);

/* 1 if y satisfies some term of case c (a counterexample output), else 0.
 * Constraints are checked as coef·y + d ≤ 0 in double, with no tolerance. */
int lg_prop_case_violated_by(const lg_prop *p, int c, const double *y);

/* 1 if x lies inside box_c (inclusive). */
int lg_prop_case_contains(const lg_prop *p, int c, const double *x);

/* Refuse a property that holds NaN or ±Inf anywhere (box bounds, constraint
 * coefficients and constants), an empty box (lo > hi) or more than
 * LG_PROP_MAX_CONS output constraints in all. `name` (file or "robustness
 * property") starts the message, which names case, term and field. Every
 * property constructor calls this before returning, so nothing non-finite
 * reaches bounds, encoders or solvers. */
#define LG_PROP_MAX_CONS 1000000
/* output constraints are stored densely (n_out coefficients each): at most
 * this many coefficients in all (1 GiB of doubles), checked before allocation
 * by every constructor */
#define LG_PROP_MAX_COEFS ((size_t)1 << 27)
lg_status lg_prop_validate(const lg_prop *p, const char *name);

void lg_prop_free(lg_prop *p);

#endif
