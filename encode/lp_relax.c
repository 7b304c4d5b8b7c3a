/* lp_relax.c — a boxed LP loaded into GLPK and sound lower bounds from its
 * duals (lp_relax.h). */
#include "encode/lp_relax.h"
#include "encode/glpk_guard.h"
#include "encode/lp_cert.h"

#include <assert.h>
#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

lg_status lg_lp_relax_init(lg_lp_relax *lp, int n_cols, int max_rows, size_t max_nnz)
{
    memset(lp, 0, sizeof *lp);
    lp->n_cols = n_cols;
    lp->max_rows = max_rows;
    lp->max_nnz = max_nnz;
    size_t nc = (size_t)n_cols + 1;
    lp->lo = calloc(nc, sizeof *lp->lo);
    lp->hi = calloc(nc, sizeof *lp->hi);
    lp->obj = calloc(nc, sizeof *lp->obj);
    lp->rows = calloc((size_t)max_rows + 1, sizeof *lp->rows);
    lp->ind = malloc((max_nnz + 1) * sizeof *lp->ind);
    lp->val = malloc((max_nnz + 1) * sizeof *lp->val);
    if (!lp->lo || !lp->hi || !lp->obj || !lp->rows || !lp->ind || !lp->val) {
        lg_lp_relax_free(lp);
        return lg_fail(LG_ERR_NOMEM, "lp relaxation: out of memory");
    }
    return LG_OK;
}

void lg_lp_relax_free(lg_lp_relax *lp)
{
    if (lp->cert) lg_lp_cert_free(lp->cert);
    free(lp->cert);
    if (lp->P) glp_delete_prob(lp->P);
    free(lp->lo);
    free(lp->hi);
    free(lp->obj);
    free(lp->rows);
    free(lp->ind);
    free(lp->val);
    memset(lp, 0, sizeof *lp);
}

void lg_lp_relax_col(lg_lp_relax *lp, int c, double lo, double hi)
{
    assert(c >= 0 && c < lp->n_cols);
    lp->lo[c] = lo;
    lp->hi[c] = hi;
    if (lp->P) glp_set_col_bnds(lp->P, c + 1, lo == hi ? GLP_FX : GLP_DB, lo, hi);
}

void lg_lp_relax_row_add(lg_lp_relax *lp, char sense, double rhs)
{
    assert(lp->n_rows < lp->max_rows && !lp->P);
    lg_lp_relax_row *R = &lp->rows[lp->n_rows++];
    R->sense = sense;
    R->rhs = rhs;
    R->n = 0;
    R->col = lp->ind + lp->nnz;
    R->val = lp->val + lp->nnz;
}

void lg_lp_relax_ent(lg_lp_relax *lp, int col, double val)
{
    assert(lp->n_rows > 0 && lp->nnz < lp->max_nnz && col >= 0 && col < lp->n_cols);
    lp->ind[lp->nnz] = col;
    lp->val[lp->nnz] = val;
    lp->nnz++;
    lp->rows[lp->n_rows - 1].n++;
}

/* The GLPK part of lg_lp_relax_load, run under lg_glpk_guard. */
typedef struct lp_relax_load_call {
    lg_lp_relax *lp;
    int *ind; /* [max row length + 1] */
    lg_status st;
} lp_relax_load_call;

static void lp_relax_load_run(void *arg)
{
    lp_relax_load_call *m = arg;
    lg_lp_relax *lp = m->lp;
    int *ind = m->ind;
    glp_prob *P = glp_create_prob();
    lp->P = P;
    glp_set_obj_dir(P, GLP_MIN);
    if (lp->n_cols > 0) glp_add_cols(P, lp->n_cols);
    for (int c = 0; c < lp->n_cols; c++)
        glp_set_col_bnds(P, c + 1, lp->lo[c] == lp->hi[c] ? GLP_FX : GLP_DB, lp->lo[c], lp->hi[c]);
    if (lp->n_rows > 0) glp_add_rows(P, lp->n_rows);
    for (int i = 0; i < lp->n_rows; i++) {
        const lg_lp_relax_row *R = &lp->rows[i];
        int type = R->sense == 'E' ? GLP_FX : R->sense == 'G' ? GLP_LO : R->sense == 'F' ? GLP_FR : GLP_UP;
        glp_set_row_bnds(P, i + 1, type, R->rhs, R->rhs);
        /* glp_set_mat_row reads ind[1..n] (1-based columns), val[1..n] */
        for (int e = 0; e < R->n; e++) ind[e + 1] = R->col[e] + 1;
        glp_set_mat_row(P, i + 1, R->n, ind, R->val - 1);
    }
    m->st = lg_lp_cert_init(lp->cert, P);
}

lg_status lg_lp_relax_load(lg_lp_relax *lp)
{
    if (lp->P) return lg_fail(LG_ERR_SOLVER, "lp relaxation: already loaded");
    for (int c = 0; c < lp->n_cols; c++)
        if (!isfinite(lp->lo[c]) || !isfinite(lp->hi[c]))
            return lg_fail(LG_ERR_NUMERIC, "lp relaxation: infinite bound on column %d", c + 1);
    int max_n = 0;
    for (int i = 0; i < lp->n_rows; i++)
        if (lp->rows[i].n > max_n) max_n = lp->rows[i].n;
    int *ind = malloc(((size_t)max_n + 1) * sizeof *ind);
    lp->cert = malloc(sizeof *lp->cert);
    if (!ind || !lp->cert) {
        free(ind);
        free(lp->cert);
        lp->cert = NULL;
        return lg_fail(LG_ERR_NOMEM, "lp relaxation: out of memory");
    }
    lp_relax_load_call m = {lp, ind, LG_OK};
    if (lg_glpk_guard(lp_relax_load_run, &m)) {
        lp->P = NULL; /* freed with GLPK's environment */
        m.st = lg_fail(LG_ERR_SOLVER, "lp relaxation: GLPK internal error: %s", lg_glpk_guard_message());
    }
    free(ind);
    if (m.st != LG_OK) {
        free(lp->cert); /* lg_lp_cert_init cleans up after itself when it fails */
        lp->cert = NULL;
    }
    return m.st;
}

/* The simplex and certificate of lg_lp_relax_min, run under lg_glpk_guard. */
typedef struct lp_relax_min_call {
    lg_lp_relax *lp;
    const double *obj;
    double c0;
    const lg_runctx *run;
    double lb;
    int ok;
} lp_relax_min_call;

static void lp_relax_min_run(void *arg)
{
    lp_relax_min_call *m = arg;
    lg_lp_relax *lp = m->lp;
    glp_prob *P = lp->P;
    for (int c = 0; c < lp->n_cols; c++)
        if (m->obj[c] != lp->obj[c]) {
            lp->obj[c] = m->obj[c];
            glp_set_obj_coef(P, c + 1, m->obj[c]);
        }
    glp_set_obj_coef(P, 0, m->c0);
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_OFF;
    if (lp->dual) parm.meth = GLP_DUALP; /* dual simplex, primal where the basis is not dual feasible */
    if (lp->it_lim > 0) parm.it_lim = lp->it_lim;
    if (m->run && m->run->deadline > 0) /* the time left until the deadline, at least 1 ms */
        parm.tm_lim = (int)fmin(1e9, 1000.0 * lg_runctx_remaining(m->run)) + 1;
    int rc_s = glp_simplex(P, &parm);
    if (rc_s != 0 && rc_s != GLP_EITLIM && rc_s != GLP_ETMLIM) { /* bad basis etc.: rebuild the basis once */
        glp_adv_basis(P, 0);
        rc_s = glp_simplex(P, &parm);
    }
    if (rc_s != 0 && rc_s != GLP_ETMLIM && rc_s != GLP_EITLIM) return;
    /* whatever GLPK reached, its duals give a certified bound (lp_cert.h) */
    double b;
    if (lg_lp_cert_check(lp->cert, -INFINITY, &b) != LG_LP_CERT_BOUND || !isfinite(b)) return;
    m->lb = b;
    m->ok = 1;
}

int lg_lp_relax_min(lg_lp_relax *lp, const double *obj, double c0, const lg_runctx *run, double *lb)
{
    if (!lp->P) return 0;
    lp_relax_min_call m = {lp, obj, c0, run, -INFINITY, 0};
    if (lg_glpk_guard(lp_relax_min_run, &m)) {
        lp->P = NULL; /* freed with GLPK's environment: this LP is dead */
        return 0;
    }
    if (m.ok) *lb = m.lb;
    return m.ok;
}

void lg_lp_relax_row_sense(lg_lp_relax *lp, int i, char sense)
{
    assert(i >= 0 && i < lp->n_rows && (sense == 'E' || sense == 'G' || sense == 'L' || sense == 'F'));
    lg_lp_relax_row *R = &lp->rows[i];
    if (R->sense == sense) return;
    R->sense = sense;
    if (lp->P) {
        int type = sense == 'E' ? GLP_FX : sense == 'G' ? GLP_LO : sense == 'F' ? GLP_FR : GLP_UP;
        glp_set_row_bnds(lp->P, i + 1, type, R->rhs, R->rhs);
    }
}

void lg_lp_relax_basis_get(const lg_lp_relax *lp, int *stat)
{
    if (!lp->P) return;
    for (int i = 0; i < lp->n_rows; i++) stat[i] = glp_get_row_stat(lp->P, i + 1);
    for (int c = 0; c < lp->n_cols; c++) stat[lp->n_rows + c] = glp_get_col_stat(lp->P, c + 1);
}

void lg_lp_relax_basis_set(lg_lp_relax *lp, const int *stat)
{
    if (!lp->P) return;
    for (int i = 0; i < lp->n_rows; i++) glp_set_row_stat(lp->P, i + 1, stat[i]);
    for (int c = 0; c < lp->n_cols; c++) glp_set_col_stat(lp->P, c + 1, stat[lp->n_rows + c]);
}

double lg_lp_relax_mult(const lg_lp_relax *lp, int i)
{
    assert(lp->cert && i >= 0 && i < lp->n_rows);
    return lp->cert->y[i];
}

double lg_lp_relax_value(const lg_lp_relax *lp, int c)
{
    assert(lp->P && c >= 0 && c < lp->n_cols);
    return glp_get_col_prim(lp->P, c + 1);
}
