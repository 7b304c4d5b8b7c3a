/* lp_relax.h — a boxed linear program (an LP relaxation built by verify/)
 * and sound lower bounds of linear objectives over it, solved with GLPK's
 * simplex. Nothing solver-typed leaves encode/: the caller fills columns and
 * rows, encode/ loads them into GLPK and turns its answers into bounds.
 *
 * The LP has n_cols columns v_c ∈ [lo_c, hi_c] (finite; 0-based indices)
 * and rows Σ val·v {=, ≥, ≤} rhs, given in order (lg_lp_relax_row starts a
 * row, lg_lp_relax_ent appends one entry to it). verify/bounds_lp.c builds
 * the triangle relaxation of a network with the ReLU chord of verify/relax.h.
 *
 * lg_lp_relax_min does not trust GLPK's optimum: its row duals y give the
 * safe Lagrangian bound of encode/lp_cert.h (the one certified-LP mechanism)
 *     yᵀrhs + Σ_c min over [lo_c, hi_c] of (obj − Aᵀy)_c·v_c + c0,
 * valid for every y, evaluated with its rounding error bounded and
 * subtracted.
 *
 * The lg_lp_relax owns its arrays and the GLPK problem:
 * lg_lp_relax_init / lg_lp_relax_free. One object per thread; GLPK keeps
 * one environment per thread (lg_encode_thread_done in problem.h frees it).
 */
#ifndef LG_LP_RELAX_H
#define LG_LP_RELAX_H

#include <stddef.h>

#include "core/runctx.h"
#include "core/status.h"

typedef struct lg_lp_relax_row {
    char sense;      /* 'E' (=), 'G' (≥), 'L' (≤), 'F' (free: switched off) */
    double rhs;
    int n;           /* entries */
    const int *col;  /* 0-based column indices (into the lg_lp_relax arrays) */
    const double *val;
} lg_lp_relax_row;

typedef struct lg_lp_relax {
    void *P;               /* GLPK's glp_prob once loaded, else NULL */
    int n_cols, n_rows, max_rows;
    size_t nnz, max_nnz;
    double *lo, *hi;       /* [n_cols] column bounds */
    lg_lp_relax_row *rows; /* [max_rows] */
    int *ind;              /* [max_nnz] row entries, carved per row */
    double *val;
    double *obj;           /* [n_cols] objective currently loaded */
    struct lg_lp_cert *cert; /* the certificate of P (lp_cert.h), made at load */
    int dual;              /* 1: lg_lp_relax_min starts with the dual simplex (GLPK's GLP_DUALP;
                            * the right start when rows were tightened since the last solve
                            * and the objective kept), 0 (lg_lp_relax_init): primal */
    int it_lim;            /* > 0: lg_lp_relax_min stops the simplex after that many
                            * iterations (the bound of the duals reached is still
                            * certified, only weaker); 0: no limit */
} lg_lp_relax;

/* Room for n_cols columns (bounds 0), max_rows rows and max_nnz entries.
 * LG_ERR_NOMEM (lp left freed). */
lg_status lg_lp_relax_init(lg_lp_relax *lp, int n_cols, int max_rows, size_t max_nnz);
void lg_lp_relax_free(lg_lp_relax *lp);

/* Bounds of column c (lo ≤ hi, finite once loaded); on a loaded LP the
 * next lg_lp_relax_min starts from the current basis. */
void lg_lp_relax_col(lg_lp_relax *lp, int c, double lo, double hi);
/* Start a row; entries follow with lg_lp_relax_ent. The caller keeps within
 * the room given to lg_lp_relax_init (checked by assert). */
void lg_lp_relax_row_add(lg_lp_relax *lp, char sense, double rhs);
void lg_lp_relax_ent(lg_lp_relax *lp, int col, double val);

/* Hand the LP to GLPK. LG_ERR_NUMERIC if a column bound is not finite (the
 * bound would be useless), LG_ERR_SOLVER if it is already loaded. */
lg_status lg_lp_relax_load(lg_lp_relax *lp);

/* Switch row i (0-based) of a loaded LP to sense 'E', 'G', 'L' or 'F'
 * (free: the row is dropped until switched back; its multiplier is 0). The
 * next lg_lp_relax_min starts from the current basis. */
void lg_lp_relax_row_sense(lg_lp_relax *lp, int i, char sense);

/* Minimise obj·v + c0 (obj [n_cols]) with the simplex stopped at run's
 * deadline (run NULL or without one: no limit). 1 and *lb = a certified
 * lower bound (finite) from the duals GLPK left, else 0 (no bound: keep
 * what you have). A GLPK fatal error is caught (glpk_guard.h): 0, and the LP
 * is dead from then on (lp->P is NULL, every later call answers 0). */
int lg_lp_relax_min(lg_lp_relax *lp, const double *obj, double c0, const lg_runctx *run, double *lb);

/* The basis of a loaded LP: the status of every row, then every column,
 * into stat [n_rows + n_cols] (GLPK's codes, opaque to the caller), and
 * back. A saved basis may be set again after row senses or bounds changed;
 * the next lg_lp_relax_min starts from it (or from a fresh basis when it is
 * singular). No-ops on a dead LP. */
void lg_lp_relax_basis_get(const lg_lp_relax *lp, int *stat);
void lg_lp_relax_basis_set(lg_lp_relax *lp, const int *stat);

/* After lg_lp_relax_min returned 1: the multiplier of row i in the
 * certificate of that bound (0 when it does not use the row: the same bound
 * holds for the LP without it; lp_cert.h), and GLPK's primal value of
 * column c. */
double lg_lp_relax_mult(const lg_lp_relax *lp, int i);
double lg_lp_relax_value(const lg_lp_relax *lp, int c);

#endif
