/* lp_cert.h — certified answers of an LP that GLPK solved in floating point
 * (internal to encode/; DESIGN.md §3 "Certified LP answers").
 *
 * GLPK's verdicts ("optimal with value v", "no primal feasible solution")
 * are never trusted as such. What GLPK leaves behind — its row duals, or a
 * row of the inverse basis when it stops infeasible — is only a multiplier
 * vector y, and every y gives a bound (Neumaier–Shcherbina, the safe
 * Lagrangian bound): for the LP  min c·x + c0,  r = A·x,  r ∈ [rl, ru],
 * x ∈ [lo, hi] (all of x bounded),
 *     c·x + c0 = (c − Aᵀy)·x + yᵀr + c0
 *              ≥ Σ_j min over [lo_j, hi_j] of d_j·x_j + Σ_i min over [rl_i, ru_i] of y_i·r_i + c0,
 * with d = c − Aᵀy. Entries of y whose row side is infinite are set to 0
 * (any y is valid, so dropping one is too). Every quantity is computed in
 * double with a rigorous bound on its rounding error (d_j's error from the
 * length of column j, the sums' from their number of terms, plus underflow)
 * and the result is moved outward by it, so the bound holds in exact real
 * arithmetic for the LP whose data are the doubles loaded in GLPK.
 *   - "optimum ≥ t": y = GLPK's row duals, c the objective; certified when
 *     the bound is ≥ t.
 *   - "infeasible" (Farkas, phase 1): the same bound with c = 0 and y = ±
 *     a row of B⁻¹ (glp_btran of the basic variable GLPK names in
 *     glp_get_unbnd_ray, else of each basic variable out of its bounds);
 *     certified when the bound is > 0 (then 0 = (0 − Aᵀy)·x + yᵀr has no
 *     solution in the box).
 * Where neither closes (ill-conditioning) the answer is LG_LP_CERT_NONE —
 * "not certified": the caller splits further or says unknown; it never
 * falls back to GLPK's word.
 *
 * The certificate's support — the rows with a nonzero multiplier and the
 * columns whose bound it used — is kept and can be read back: it is the
 * explanation of the conflict (a subset of the rows and column bounds that
 * is already infeasible, or already forces the objective ≥ t).
 *
 * Ownership: lg_lp_cert borrows the glp_prob P (the caller keeps it and
 * frees it after lg_lp_cert_free); it copies P's matrix at init (column
 * form), so the matrix must not change afterwards. Bounds, row bounds, the
 * objective and the basis may change between checks: they are read from P
 * at every check. Objective direction GLP_MIN only. Scratch is sized at
 * init; no allocation per check. One object per thread (as GLPK).
 */
#ifndef LG_LP_CERT_H
#define LG_LP_CERT_H

#include <glpk.h>

#include "core/status.h"

typedef enum lg_lp_cert_res {
    LG_LP_CERT_NONE = 0,    /* not certified: nothing may be concluded */
    LG_LP_CERT_BOUND,       /* min objective ≥ t, certified (the bound is *lb) */
    LG_LP_CERT_INFEASIBLE   /* no x in the box satisfies the rows, certified */
} lg_lp_cert_res;

typedef struct lg_lp_cert {
    glp_prob *P;            /* borrowed */
    int m, n;               /* rows, columns of P at init */
    int *cstart;            /* [n + 1] column j's entries are [cstart[j], cstart[j+1]) */
    int *crow;              /* [nnz] 0-based row of each entry */
    double *cval;           /* [nnz] */
    double *y;              /* [m] multipliers of the last check (0 where unused) */
    double *d;              /* [n] reduced costs (rounded) of the last check */
    double *rl, *ru;        /* [m] row bounds read at each check (±INFINITY when absent) */
    double *lo, *hi;        /* [n] column bounds read at each check */
    double *obj;            /* [n] objective read at each check */
    double *work;           /* [m + 1] glp_btran scratch, 1-based */
    int *side_col;          /* [n] bound the last certificate used: −1 lower, +1 upper, 0 none */
    int *side_row;          /* [m] row side it used: −1 lower (rl), +1 upper (ru), 0 none */
    /* statistics, summed over checks */
    long n_checks, n_closed, n_open;
    double seconds;         /* wall-clock time in checks */
} lg_lp_cert;

/* Snapshot P's matrix. LG_ERR_NOMEM (c left freed). */
lg_status lg_lp_cert_init(lg_lp_cert *c, glp_prob *P);
void lg_lp_cert_free(lg_lp_cert *c);

/* Certify what GLPK's last glp_simplex on P left: BOUND when its duals
 * give a safe bound ≥ t (*lb set; t = −INFINITY asks for any finite bound),
 * INFEASIBLE when a Farkas multiplier from its basis proves the rows
 * infeasible in the box, else NONE. Reads the basis, the duals and (for
 * Farkas) calls glp_factorize/glp_btran; never trusts glp_get_status. */
lg_lp_cert_res lg_lp_cert_check(lg_lp_cert *c, double t, double *lb);

/* The support of the last certificate (BOUND or INFEASIBLE): rows with a
 * nonzero multiplier into rows [m] (0-based) and the side used into side
 * (−1 lower, +1 upper; may be NULL); returns their number. */
int lg_lp_cert_rows(const lg_lp_cert *c, int *rows, int *side);
/* Columns whose bound the last certificate used (nonzero reduced cost),
 * 0-based into cols [n], the bound into side (−1 lower, +1 upper, 2 both
 * when the sign of the reduced cost is within its rounding error; may be
 * NULL); returns their number. */
int lg_lp_cert_cols(const lg_lp_cert *c, int *cols, int *side);

#endif
