/* xlp.h — an exact rational LP solver for the test oracle (oracle.h):
 * feasibility and minimisation over GMP mpq, no floating point anywhere.
 *
 *   variables  x[0..n), lo_j ≤ x_j ≤ hi_j (either bound may be absent)
 *   rows       Σ_j row_r[j]·x_j + row_r[n] ≤ 0     (r = 0..m−1)
 *   objective  min Σ_j obj[j]·x_j                   (optional)
 *
 * Algorithm: the general simplex of Dutertre & de Moura (CAV 2006) — the
 * x_j start nonbasic at a bound, one slack s_r = row_r·x per row is basic
 * with the upper bound −row_r[n]; repair violated basics by pivoting with
 * Bland's rule (smallest variable index), which terminates. Minimisation
 * then runs the bounded primal simplex on the same tableau, again with
 * Bland's rule for entering and leaving variables. Every number is an exact
 * rational, so "infeasible" is a proof and the returned x satisfies every
 * row exactly. Meant for tiny problems (n ≤ ~8, m ≤ ~100; dense tableau).
 *
 * lg_xlp owns its workspace (grown on demand); lg_xlp_free releases it. The
 * caller's rows, bounds and objective are borrowed.
 */
#ifndef LG_XLP_H
#define LG_XLP_H

#include <gmp.h>

typedef struct lg_xlp {
    int n_cap, m_cap;   /* allocated sizes */
    mpq_t *T;           /* [(m_cap+1)][n_cap] tableau; the last used row is the objective */
    mpq_t *val;         /* [n_cap + m_cap] assignment of every variable */
    mpq_t *lo, *hi;     /* [n_cap + m_cap] bounds */
    char *has_lo, *has_hi;
    int *basic, *nonb;  /* [m_cap] variable in each row, [n_cap] variable in each column */
    mpq_t q1, q2, q3;   /* scratch */
    long pivots;        /* pivots done by the last solve */
} lg_xlp;

typedef enum lg_xlp_result { LG_XLP_INFEASIBLE = 0, LG_XLP_OPTIMAL = 1, LG_XLP_UNBOUNDED = 2 } lg_xlp_result;

void lg_xlp_init(lg_xlp *s);
void lg_xlp_free(lg_xlp *s);

/* Solve. lo/hi: [n] (entries unused where has_lo/has_hi is 0; NULL flags
 * mean every bound is present). rows: m pointers to n+1 rationals. obj: [n]
 * or NULL (feasibility only). On OPTIMAL (= feasible when obj is NULL) x[n]
 * (initialised mpq_t) receives a point satisfying everything exactly and,
 * if obj and opt are given, opt the minimum. */
lg_xlp_result lg_xlp_solve(lg_xlp *s, int n, const mpq_t *lo, const mpq_t *hi, const char *has_lo,
                           const char *has_hi, int m, mpq_t *const *rows, const mpq_t *obj, mpq_t *x, mpq_t opt);

#endif
