/* bounds_lp.c — LP tightening of unstable neurons with GLPK (bounds.h).
 *
 * For target layer k the LP has columns x' (normalised input), z_j and a_j
 * for every layer j < k (a_j is z_j itself for identity layers), each boxed
 * by the current bounds, and rows
 *     z_j − W_j·a_{j−1} = b_j                          (affine layers)
 *     a − z = 0                  (relu, l ≥ 0)
 *     a fixed to 0               (relu, u ≤ 0: column bounds)
 *     a − z ≥ 0,  a − s·z ≤ −s·l,  s = u/(u−l)   (relu unstable, a ≥ 0 by bounds)
 * and minimises ±(W_k[i]·a_{k−1}) + b_k[i]. GLPK's optimum is not trusted as
 * such: its row duals y (signs clipped to be dual feasible) give the sound
 * Lagrangian bound  yᵀrhs + Σ_j min over [vl_j, vu_j] of (c − Aᵀy)_j·v_j,
 * evaluated in double and widened by the margin rule (bounds.h).
 */
#include "core/clock.h"
#include "verify/bounds.h"
#include "verify/relax.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One row of the LP in our own copy (GLPK's is write-only for us). */
typedef struct lg_lprow {
    int type;        /* GLP_FX, GLP_LO, GLP_UP */
    double rhs;
    int n;           /* entries */
    const int *col;  /* 1-based column indices */
    const double *val;
} lg_lprow;

typedef struct lg_lp {
    glp_prob *P;
    int n_cols, n_rows;
    double *vl, *vu;     /* [n_cols + 1] column bounds (1-based) */
    lg_lprow *rows;      /* [n_rows + 1] (1-based) */
    int *ia;             /* row entries, carved per row */
    double *ar;
    size_t nnz;
} lg_lp;

static void lg_lp_free(lg_lp *lp)
{
    if (lp->P) glp_delete_prob(lp->P);
    free(lp->vl);
    free(lp->vu);
    free(lp->rows);
    free(lp->ia);
    free(lp->ar);
    memset(lp, 0, sizeof *lp);
}

/* Column of a_j[o] (j = −1: input). */
static int lg_lp_acol(const int *base_a, int j, int o) { return (j < 0 ? 1 : base_a[j]) + o; }

static lg_status lg_lp_build(lg_lp *lp, const lg_bounds *b, const lg_net *net, int k)
{
    memset(lp, 0, sizeof *lp);
    int base_z[LG_NET_MAX_LAYERS], base_a[LG_NET_MAX_LAYERS];
    int col = 1 + net->n_in;
    size_t nnz = 0;
    int rows = 0;
    for (int j = 0; j < k; j++) {
        const lg_layer *L = &net->layers[j];
        base_z[j] = col;
        col += L->n_out;
        if (L->act == LG_ACT_RELU) {
            base_a[j] = col;
            col += L->n_out;
        } else {
            base_a[j] = base_z[j];
        }
        rows += L->n_out;
        nnz += (size_t)L->n_out * ((size_t)L->n_in + 1);
        if (L->act == LG_ACT_RELU) {
            rows += 2 * L->n_out;
            nnz += 4 * (size_t)L->n_out;
        }
    }
    lp->n_cols = col - 1;
    lp->vl = malloc((size_t)col * sizeof *lp->vl);
    lp->vu = malloc((size_t)col * sizeof *lp->vu);
    lp->rows = calloc((size_t)rows + 1, sizeof *lp->rows);
    lp->ia = malloc((nnz + 1) * sizeof *lp->ia);
    lp->ar = malloc((nnz + 1) * sizeof *lp->ar);
    if (!lp->vl || !lp->vu || !lp->rows || !lp->ia || !lp->ar) {
        lg_lp_free(lp);
        return lg_fail(LG_ERR_NOMEM, "bounds lp: out of memory");
    }
    for (int i = 0; i < net->n_in; i++) {
        lp->vl[1 + i] = b->xlo[i];
        lp->vu[1 + i] = b->xhi[i];
    }
    int r = 0;
    size_t e = 1;
#define LG_ROW(TYPE, RHS)                                                                                             \
    do {                                                                                                              \
        r++;                                                                                                          \
        lp->rows[r].type = (TYPE);                                                                                    \
        lp->rows[r].rhs = (RHS);                                                                                      \
        lp->rows[r].col = lp->ia + e;                                                                                 \
        lp->rows[r].val = lp->ar + e;                                                                                 \
    } while (0)
#define LG_ENT(C, V)                                                                                                  \
    do {                                                                                                              \
        lp->ia[e] = (C);                                                                                              \
        lp->ar[e] = (V);                                                                                              \
        e++;                                                                                                          \
        lp->rows[r].n++;                                                                                              \
    } while (0)
    for (int j = 0; j < k; j++) {
        const lg_layer *L = &net->layers[j];
        for (int o = 0; o < L->n_out; o++) {
            double l = b->lo[j][o], u = b->hi[j][o];
            lp->vl[base_z[j] + o] = l;
            lp->vu[base_z[j] + o] = u;
            LG_ROW(GLP_FX, L->b[o]);
            LG_ENT(base_z[j] + o, 1.0);
            const double *Wr = L->W + (size_t)o * (size_t)L->n_in;
            for (int i = 0; i < L->n_in; i++)
                if (Wr[i] != 0.0) LG_ENT(lg_lp_acol(base_a, j - 1, i), -Wr[i]);
            if (L->act != LG_ACT_RELU) continue;
            int ac = base_a[j] + o, zc = base_z[j] + o;
            lp->vl[ac] = l > 0 ? l : 0;
            lp->vu[ac] = u > 0 ? u : 0;
            if (l >= 0) {
                LG_ROW(GLP_FX, 0.0);
                LG_ENT(ac, 1.0);
                LG_ENT(zc, -1.0);
            } else if (u > 0) {
                /* a ≤ s·(z − l) with the chord of relax.h (s rounded up); the
                 * right-hand side −s·l rounded up too, so true points satisfy it */
                double s = lg_relax_chord(l, u);
                LG_ROW(GLP_LO, 0.0);
                LG_ENT(ac, 1.0);
                LG_ENT(zc, -1.0);
                LG_ROW(GLP_UP, nextafter(-s * l, INFINITY));
                LG_ENT(ac, 1.0);
                LG_ENT(zc, -s);
            }
        }
    }
#undef LG_ROW
#undef LG_ENT
    lp->n_rows = r;
    lp->nnz = e - 1;
    for (int c = 1; c <= lp->n_cols; c++)
        if (!isfinite(lp->vl[c]) || !isfinite(lp->vu[c])) {
            lg_lp_free(lp);
            return lg_fail(LG_ERR_NUMERIC, "bounds lp: infinite bound on column %d", c);
        }
    glp_prob *P = glp_create_prob();
    lp->P = P;
    glp_set_obj_dir(P, GLP_MIN);
    glp_add_cols(P, lp->n_cols);
    for (int c = 1; c <= lp->n_cols; c++)
        glp_set_col_bnds(P, c, lp->vl[c] == lp->vu[c] ? GLP_FX : GLP_DB, lp->vl[c], lp->vu[c]);
    if (lp->n_rows > 0) glp_add_rows(P, lp->n_rows);
    for (int i = 1; i <= lp->n_rows; i++) {
        lg_lprow *R = &lp->rows[i];
        glp_set_row_bnds(P, i, R->type, R->rhs, R->rhs);
        /* glp_set_mat_row reads ind[1..n], val[1..n] */
        glp_set_mat_row(P, i, R->n, R->col - 1, R->val - 1);
    }
    return LG_OK;
}

/* Sound lower bound of obj·v + c0 from the current GLPK duals. obj is
 * [n_cols + 1] (1-based). r scratch [n_cols + 1], rm [n_cols + 1]. */
static double lg_lp_dual_bound(const lg_lp *lp, const double *obj, double c0, double *rc, double *rm)
{
    double v = c0, mass = fabs(c0);
    for (int c = 1; c <= lp->n_cols; c++) {
        rc[c] = obj[c];
        rm[c] = fabs(obj[c]);
    }
    size_t terms = 0;
    for (int i = 1; i <= lp->n_rows; i++) {
        const lg_lprow *R = &lp->rows[i];
        double y = glp_get_row_dual(lp->P, i);
        if (R->type == GLP_LO && y < 0) y = 0;
        if (R->type == GLP_UP && y > 0) y = 0;
        if (y == 0.0 || !isfinite(y)) continue;
        double t = y * R->rhs;
        v += t;
        mass += fabs(t);
        for (int e = 0; e < R->n; e++) {
            double q = y * R->val[e];
            rc[R->col[e]] -= q;
            rm[R->col[e]] += fabs(q);
        }
        terms += (size_t)R->n;
    }
    for (int c = 1; c <= lp->n_cols; c++) {
        double p = rc[c] * lp->vl[c], q = rc[c] * lp->vu[c];
        v += fmin(p, q);
        double big = fmax(fabs(lp->vl[c]), fabs(lp->vu[c]));
        mass += fmax(fabs(p), fabs(q)) + rm[c] * big;
    }
    return v - lg_bounds_margin(v, mass, (double)terms + lp->n_cols + lp->n_rows);
}

lg_status lg_bounds_lp(lg_bounds *b, const lg_net *net, double deadline, long *n_lp)
{
    lg_status st = lg_bounds_check_net(net);
    if (st != LG_OK) return st;
    long count = 0;
    int term_was = glp_term_out(GLP_OFF); /* glp_adv_basis talks even with msg_lev off */
    for (int k = 1; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->act != LG_ACT_RELU || lg_bounds_unstable(b, net, k) == 0) continue;
        if (deadline > 0 && lg_now() >= deadline) break;
        lg_lp lp;
        if ((st = lg_lp_build(&lp, b, net, k)) != LG_OK) {
            if (st == LG_ERR_NUMERIC) continue; /* keep the bounds we have */
            goto fail;
        }
        double *obj = calloc(3 * ((size_t)lp.n_cols + 1), sizeof *obj);
        if (!obj) {
            lg_lp_free(&lp);
            st = lg_fail(LG_ERR_NOMEM, "bounds lp: out of memory");
            goto fail;
        }
        double *rc = obj + lp.n_cols + 1, *rm = rc + lp.n_cols + 1;
        const lg_layer *P = &net->layers[k - 1];
        int base = P->act == LG_ACT_RELU ? lp.n_cols - P->n_out + 1 : lp.n_cols - P->n_out + 1;
        glp_smcp parm;
        glp_init_smcp(&parm);
        parm.msg_lev = GLP_MSG_OFF;
        parm.presolve = GLP_OFF;
        for (int o = 0; o < L->n_out; o++) {
            if (!(b->lo[k][o] < 0 && b->hi[k][o] > 0)) continue;
            for (int sign = 0; sign < 2; sign++) {
                double now = lg_now();
                if (deadline > 0 && now >= deadline) break;
                if (deadline > 0) parm.tm_lim = (int)fmin(1e9, 1000.0 * (deadline - now)) + 1;
                double g = sign ? -1.0 : 1.0;
                const double *Wr = L->W + (size_t)o * (size_t)L->n_in;
                for (int i = 0; i < P->n_out; i++) {
                    obj[base + i] = g * Wr[i];
                    glp_set_obj_coef(lp.P, base + i, obj[base + i]);
                }
                int rc_s = glp_simplex(lp.P, &parm);
                if (rc_s != 0) { /* bad basis etc.: rebuild the basis once */
                    int term = glp_term_out(GLP_OFF); /* glp_adv_basis prints to stdout regardless of msg_lev */
                    glp_adv_basis(lp.P, 0);
                    glp_term_out(term);
                    rc_s = glp_simplex(lp.P, &parm);
                }
                count++;
                if (rc_s != 0 || glp_get_status(lp.P) != GLP_OPT) continue;
                double lb = lg_lp_dual_bound(&lp, obj, g * L->b[o], rc, rm);
                if (!isfinite(lb)) continue;
                if (sign == 0 && lb > b->lo[k][o]) b->lo[k][o] = lb;
                if (sign == 1 && -lb < b->hi[k][o]) b->hi[k][o] = -lb;
            }
        }
        free(obj);
        lg_lp_free(&lp);
        if ((st = lg_bounds_symbolic_from(b, net, k + 1)) != LG_OK) goto fail;
    }
    st = LG_OK;
fail:
    glp_term_out(term_was);
    if (n_lp) *n_lp = count;
    return st;
}
