/* milp.h — a solver-neutral mixed-integer linear model (internal to encode/).
 *
 * The big-M encoding of an lg_problem is built once here and then either
 * loaded into GLPK (glpk.c) or written as CPLEX LP text (lp.c), so the two
 * share one formulation. Columns have bounds (±INFINITY for none) and a
 * binary flag; rows are sparse a·v {≤,=,≥} rhs. Indices are 0-based; every
 * row's columns are distinct and valid (checked on insertion).
 * The lg_milp owns its arrays: lg_milp_init / lg_milp_free.
 *
 * Network encoding (lg_milp_add_net), l = pre_lo, u = pre_hi (finite):
 *   x_i ∈ [lo_i, hi_i]
 *   div_i·xn_i − x_i = −sub_i                          (only with normalisation;
 *                        xn_i boxed by its range over [lo_i, hi_i], widened outward)
 *   z_k,i − Σ_t Σ_j A_t[i,j]·a_{src(t)},j = b_i,   z_k,i ∈ [l, u]
 *                        (one row over every term's source node, a_{−1} = xn or x;
 *                         pwl.h lg_pwl_row: a position two terms read with an
 *                         inexact weight sum goes on a copy column v' ∈ [v's bounds],
 *                         v' − v = 0, made once and named c<copy>_<v>)
 *   identity or relu with l ≥ 0: a = z (the z column itself)
 *   relu with u ≤ 0:             a = 0 (no column; dropped from sums)
 *   relu with l < 0 < u (Marabou MILPEncoder::encodeReLUConstraint style),
 *   a ∈ [0, u], δ ∈ {0, 1}:
 *     a − z ≥ 0                 (a ≥ z)
 *     a − z − l·δ ≤ −l          (a ≤ z − l(1 − δ))
 *     a − u·δ ≤ 0               (a ≤ u·δ)
 *   δ = 0 forces a = 0 with z ≤ 0 (from a ≥ z); δ = 1 forces a = z ≥ 0.
 *   Transformer node output: z ∈ [l, u] with no row of its own; the
 *   relaxation's rows (problem.h lg_trelax) over the columns, auxiliary
 *   columns t_<a>, rows tr_<i>.
 */
#ifndef LG_MILP_H
#define LG_MILP_H

#include "encode/problem.h"

typedef struct lg_milp_col {
    char name[32];
    double lo, hi; /* -INFINITY / INFINITY when unbounded */
    int binary;
} lg_milp_col;

typedef struct lg_milp_row {
    char name[32];
    char sense;    /* 'L' (≤), 'E' (=), 'G' (≥) */
    double rhs;
    int start, n;  /* entries ind/val[start .. start+n) */
} lg_milp_row;

typedef struct lg_milp_relu {
    int z, a, d;    /* columns of z, a and δ of one unstable ReLU */
    int layer, neuron;
} lg_milp_relu;

typedef struct lg_milp {
    int n_cols, n_rows;
    lg_milp_col *cols;
    lg_milp_row *rows;
    int *ind;       /* [n_nz] column indices */
    double *val;    /* [n_nz] coefficients */
    int n_nz;
    int cap_cols, cap_rows, cap_nz;
    int *x_col;     /* [n_in] column of each input */
    int *y_col;     /* [n_out] column of each output, −1 when the output is 0 */
    double *y_lo, *y_hi; /* [n_out] output bounds implied by pre-activation bounds */
    int n_in, n_out;
    lg_milp_relu *relu; /* [n_relu] the unstable ReLUs, in layer order */
    int n_relu, cap_relu;
    int *mark;          /* [cap_mark] scratch of lg_milp_add_row (duplicate columns) */
    int n_mark, cap_mark, stamp;
} lg_milp;

void lg_milp_init(lg_milp *m);
void lg_milp_free(lg_milp *m);

/* Append a column; returns its index in *idx. */
lg_status lg_milp_add_col(lg_milp *m, const char *name, double lo, double hi, int binary, int *idx);
/* Append a row Σ val[j]·v[ind[j]] sense rhs (zero coefficients skipped). */
lg_status lg_milp_add_row(lg_milp *m, const char *name, char sense, double rhs, int n, const int *ind,
                          const double *val);

/* Validate p (pwl.h) and append its network encoding (above); fills x_col,
 * y_col, y_lo, y_hi and relu. */
lg_status lg_milp_add_net(lg_milp *m, const lg_problem *p);

/* Interval bounds [*lo, *hi] of coef·y + d over the output bounds. */
void lg_milp_con_range(const lg_milp *m, const lg_lincon *c, double *lo, double *hi);

#endif
