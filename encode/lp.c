/* lp.c — CPLEX LP text export: ONE MILP deciding the whole disjunction.
 *
 * Convention: the file is feasible ⇔ a counterexample exists (SAT), up to
 * the reading solver's tolerances; its optimum t* ≤ 0 is the deepest
 * violation min_x min_T max_k (c_k·y + d_k). Network part: milp.h. Output
 * condition with terms T_1..T_m and a free variable t ≤ 0:
 *
 *   one term:   c_k·y − t ≤ −d_k                          (every k)
 *   m > 1:      s_1 + … + s_m = 1,  s_T ∈ {0,1} selects a term,
 *               c_k·y − t + M_k·s_T ≤ M_k − d_k            (every k of T)
 *               i.e. c_k·y + d_k ≤ t + M_k(1 − s_T), with
 *               M_k = max(0, U_k − t_lo), [L_k, U_k] the interval range of
 *               c_k·y + d_k over the output bounds (the last layer's
 *               pre-activation bounds) and t ≥ t_lo = min(0, min_k L_k) − 1,
 *               which cuts no solution of a selected term.
 *   no term:    the row "none: t ≥ 1" makes the file infeasible.
 *   t_lo ≤ t ≤ 0 always (t_lo as above), so the optimum is finite.
 *   minimise t.
 *
 * Numbers are written with 17 significant digits, which round-trip every
 * double exactly through strtod. Every variable gets explicit bounds (the LP
 * format's default lower bound is 0). A net with Transformer nodes is
 * written relaxed (milp.h; the header says so). */
#include <math.h>
#include <stdlib.h>

#include "encode/backends.h"
#include "encode/milp.h"
#include "encode/pwl.h"

static void lp_bound(FILE *f, const lg_milp_col *c)
{
    if (isinf(c->lo) && isinf(c->hi))
        fprintf(f, " %s free\n", c->name);
    else if (c->lo == c->hi)
        fprintf(f, " %s = %.17g\n", c->name, c->lo);
    else if (isinf(c->lo))
        fprintf(f, " -inf <= %s <= %.17g\n", c->name, c->hi);
    else if (isinf(c->hi))
        fprintf(f, " %s >= %.17g\n", c->name, c->lo);
    else
        fprintf(f, " %.17g <= %s <= %.17g\n", c->lo, c->name, c->hi);
}

static void lp_row(FILE *f, const lg_milp *m, const lg_milp_row *r)
{
    fprintf(f, " %s:", r->name);
    if (r->n == 0) fprintf(f, " 0 %s", m->cols[0].name);
    for (int k = 0; k < r->n; k++) {
        double v = m->val[r->start + k];
        fprintf(f, "%s %c %.17g %s", k && k % 4 == 0 ? "\n   " : "", v < 0 ? '-' : '+', fabs(v),
                m->cols[m->ind[r->start + k]].name);
    }
    fprintf(f, " %s %.17g\n", r->sense == 'E' ? "=" : r->sense == 'L' ? "<=" : ">=", r->rhs);
}

lg_status lg_lp_write(const lg_problem *p, FILE *f)
{
    lg_milp m;
    lg_milp_init(&m);
    int *ind = NULL;
    double *val = NULL;
    lg_status st = lg_milp_add_net(&m, p);
    if (st) goto fail;
    int n_out = m.n_out;
    ind = malloc(((size_t)n_out + 3) * sizeof *ind);
    val = malloc(((size_t)n_out + 3) * sizeof *val);
    if (!ind || !val) {
        st = lg_fail(LG_ERR_NOMEM, "lp: cannot allocate rows");
        goto fail;
    }
    double t_lo = 0.0;
    for (int t = 0; t < p->n_terms; t++)
        for (int c = 0; c < p->terms[t].n_cons; c++) {
            double lo, hi;
            lg_milp_con_range(&m, &p->terms[t].cons[c], &lo, &hi);
            if (lo < t_lo) t_lo = lo;
        }
    t_lo -= 1.0; /* strictly below every reachable value: t is never tight there */
    int multi = p->n_terms > 1, tcol;
    if ((st = lg_milp_add_col(&m, "t", t_lo, 0.0, 0, &tcol))) goto fail;
    if (p->n_terms == 0) {
        ind[0] = tcol;
        val[0] = 1.0;
        if ((st = lg_milp_add_row(&m, "none", 'G', 1.0, 1, ind, val))) goto fail;
    }
    int s0 = m.n_cols;
    if (multi) {
        for (int t = 0; t < p->n_terms; t++) {
            char name[32];
            snprintf(name, sizeof name, "s_%d", t);
            if ((st = lg_milp_add_col(&m, name, 0.0, 1.0, 1, &ind[0]))) goto fail;
        }
        int *sel = malloc((size_t)p->n_terms * sizeof *sel);
        double *one = malloc((size_t)p->n_terms * sizeof *one);
        if (!sel || !one) {
            free(sel);
            free(one);
            st = lg_fail(LG_ERR_NOMEM, "lp: cannot allocate the selection row");
            goto fail;
        }
        for (int t = 0; t < p->n_terms; t++) sel[t] = s0 + t, one[t] = 1.0;
        st = lg_milp_add_row(&m, "pick", 'E', 1.0, p->n_terms, sel, one);
        free(sel);
        free(one);
        if (st) goto fail;
    }
    for (int t = 0; t < p->n_terms; t++) {
        const lg_term *T = &p->terms[t];
        for (int c = 0; c < T->n_cons; c++) {
            int n = 0;
            for (int j = 0; j < n_out; j++) {
                if (m.y_col[j] < 0) continue;
                ind[n] = m.y_col[j];
                val[n++] = T->cons[c].coef[j];
            }
            ind[n] = tcol;
            val[n++] = -1.0;
            double rhs = -T->cons[c].d;
            if (multi) {
                double lo, hi;
                lg_milp_con_range(&m, &T->cons[c], &lo, &hi);
                double M = hi - t_lo > 0 ? hi - t_lo : 0.0;
                ind[n] = s0 + t;
                val[n++] = M;
                rhs += M;
            }
            char name[32];
            snprintf(name, sizeof name, "c_%d_%d", t, c);
            if ((st = lg_milp_add_row(&m, name, 'L', rhs, n, ind, val))) goto fail;
        }
    }
    fprintf(f, "\\ lgelu verification query (CPLEX LP): numbers are doubles written with 17 digits;\n"
               "\\ %s\n",
            p->rounded ? "the property's box or constants were rounded toward the counterexample region\n"
                         "\\ (box outward, constants down): infeasible => no counterexample; feasible may be spurious"
                       : "every property constant is a double");
    if (p->trelax)
        fprintf(f, "\\ RELAXED: the network's Transformer nodes (%d product, %d softmax, %d layernorm) are replaced\n"
                   "\\ by linear rows tr_* (auxiliaries t_*) that hold on the input box: infeasible (or optimum > 0)\n"
                   "\\ => no counterexample; a feasible point may be spurious (re-check it on the network).\n",
                p->trelax->n_product, p->trelax->n_softmax, p->trelax->n_layernorm);
    fprintf(f, "\\ feasible %s a counterexample exists (up to the reading solver's tolerances);\n"
               "\\ optimum t* <= 0 is the deepest violation. %d unstable relu, %d terms.\n",
            p->trelax ? "<=" : "<=>", lg_pwl_count_unstable(p), p->n_terms);
    fprintf(f, "Minimize\n obj: + 1 t\nSubject To\n");
    for (int i = 0; i < m.n_rows; i++) lp_row(f, &m, &m.rows[i]);
    fprintf(f, "Bounds\n");
    for (int j = 0; j < m.n_cols; j++)
        if (!m.cols[j].binary) lp_bound(f, &m.cols[j]);
    int nb = 0;
    for (int j = 0; j < m.n_cols; j++) {
        if (!m.cols[j].binary) continue;
        if (nb++ == 0) fputs("Binaries\n", f);
        fprintf(f, " %s\n", m.cols[j].name);
    }
    fprintf(f, "End\n");
    if (fflush(f) != 0 || ferror(f)) st = lg_fail(LG_ERR_IO, "lp: write failed");
fail:
    free(ind);
    free(val);
    lg_milp_free(&m);
    return st;
}
