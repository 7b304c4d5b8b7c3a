/* lp_cert.c — the safe Lagrangian bound of a GLPK LP and its two uses,
 * "optimum ≥ t" and "infeasible" (lp_cert.h, DESIGN.md §3). */
#include "encode/lp_cert.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"

lg_status lg_lp_cert_init(lg_lp_cert *c, glp_prob *P)
{
    memset(c, 0, sizeof *c);
    c->P = P;
    c->m = glp_get_num_rows(P);
    c->n = glp_get_num_cols(P);
    int m = c->m, n = c->n, nnz = glp_get_num_nz(P);
    size_t mm = (size_t)m + 1, nn = (size_t)n + 1;
    c->cstart = malloc(nn * sizeof *c->cstart);
    c->crow = malloc(((size_t)nnz + 1) * sizeof *c->crow);
    c->cval = malloc(((size_t)nnz + 1) * sizeof *c->cval);
    c->y = calloc(mm, sizeof *c->y);
    c->d = calloc(nn, sizeof *c->d);
    c->rl = calloc(mm, sizeof *c->rl);
    c->ru = calloc(mm, sizeof *c->ru);
    c->lo = calloc(nn, sizeof *c->lo);
    c->hi = calloc(nn, sizeof *c->hi);
    c->obj = calloc(nn, sizeof *c->obj);
    c->work = calloc(mm + 1, sizeof *c->work);
    c->side_col = calloc(nn, sizeof *c->side_col);
    c->side_row = calloc(mm, sizeof *c->side_row);
    /* glp_get_mat_col fills ind/val[1..len]: 1-based scratch of m + 1 */
    int *ind = malloc((mm + 1) * sizeof *ind);
    double *val = malloc((mm + 1) * sizeof *val);
    if (!c->cstart || !c->crow || !c->cval || !c->y || !c->d || !c->rl || !c->ru || !c->lo || !c->hi || !c->obj ||
        !c->work || !c->side_col || !c->side_row || !ind || !val) {
        free(ind);
        free(val);
        lg_lp_cert_free(c);
        return lg_fail(LG_ERR_NOMEM, "lp certificate: out of memory");
    }
    int e = 0;
    for (int j = 0; j < n; j++) {
        c->cstart[j] = e;
        int len = glp_get_mat_col(P, j + 1, ind, val);
        for (int k = 1; k <= len; k++) {
            c->crow[e] = ind[k] - 1;
            c->cval[e] = val[k];
            e++;
        }
    }
    c->cstart[n] = e;
    free(ind);
    free(val);
    return LG_OK;
}

void lg_lp_cert_free(lg_lp_cert *c)
{
    free(c->cstart);
    free(c->crow);
    free(c->cval);
    free(c->y);
    free(c->d);
    free(c->rl);
    free(c->ru);
    free(c->lo);
    free(c->hi);
    free(c->obj);
    free(c->work);
    free(c->side_col);
    free(c->side_row);
    memset(c, 0, sizeof *c);
}

/* Bounds and objective of P now (±INFINITY for an absent side). */
static void lg_lp_cert_read(lg_lp_cert *c, int use_obj)
{
    glp_prob *P = c->P;
    for (int i = 0; i < c->m; i++) {
        int type = glp_get_row_type(P, i + 1);
        c->rl[i] = type == GLP_LO || type == GLP_DB || type == GLP_FX ? glp_get_row_lb(P, i + 1) : -INFINITY;
        c->ru[i] = type == GLP_UP || type == GLP_DB || type == GLP_FX ? glp_get_row_ub(P, i + 1) : INFINITY;
    }
    for (int j = 0; j < c->n; j++) {
        int type = glp_get_col_type(P, j + 1);
        c->lo[j] = type == GLP_LO || type == GLP_DB || type == GLP_FX ? glp_get_col_lb(P, j + 1) : -INFINITY;
        c->hi[j] = type == GLP_UP || type == GLP_DB || type == GLP_FX ? glp_get_col_ub(P, j + 1) : INFINITY;
        c->obj[j] = use_obj ? glp_get_obj_coef(P, j + 1) : 0.0;
    }
}

/* The bound of lp_cert.h. Rounding: with u = 2^-53, a sum of k products
 * and terms has error ≤ γ_k·Σ|terms| (γ_k = k·u/(1 − k·u) < 2·k·u here),
 * plus 2^-1075 per operation that underflows; both are bounded generously
 * by (k + 1)·2^-52·mass + (k + 1)·2^-1073 and subtracted. */
static double lg_lp_cert_bound(lg_lp_cert *c, const double *y, double c0)
{
    double *yy = c->y;
    double S = c0, M = fabs(c0);
    double ops = 2.0;
    for (int i = 0; i < c->m; i++) {
        double v = y[i];
        c->side_row[i] = 0;
        yy[i] = 0.0;
        if (!(v != 0.0) || !isfinite(v)) continue; /* 0 or NaN: unused */
        double r = v > 0 ? c->rl[i] : c->ru[i];
        if (!isfinite(r)) continue; /* that side is absent: drop the row */
        yy[i] = v;
        c->side_row[i] = v > 0 ? -1 : 1;
        double t = v * r;
        S += t;
        M += fabs(t);
        ops += 2.0;
    }
    for (int j = 0; j < c->n; j++) {
        double dj = c->obj[j], mass = fabs(dj);
        double k = 1.0;
        for (int e = c->cstart[j]; e < c->cstart[j + 1]; e++) {
            double v = yy[c->crow[e]];
            if (v == 0.0) continue;
            double p = v * c->cval[e];
            dj -= p;
            mass += fabs(p);
            k += 1.0;
        }
        double err = mass * (k + 1.0) * 0x1p-52 + (k + 1.0) * 0x1p-1073;
        if (mass == 0.0) err = 0.0; /* d_j = 0 exactly: the column is not used */
        c->d[j] = dj;
        c->side_col[j] = 0;
        if (dj == 0.0 && err == 0.0) continue;
        double lo = c->lo[j], hi = c->hi[j], t;
        if (fabs(dj) > err) { /* the sign of d_j is certain: one bound */
            double b = dj > 0 ? lo : hi;
            if (!isfinite(b)) return -INFINITY;
            t = dj * b - err * fabs(b);
            c->side_col[j] = dj > 0 ? -1 : 1;
            M += fabs(dj * b) + err * fabs(b);
        } else { /* sign uncertain: both */
            if (!isfinite(lo) || !isfinite(hi)) return -INFINITY;
            double big = fmax(fabs(lo), fabs(hi));
            t = fmin(dj * lo, dj * hi) - err * big;
            c->side_col[j] = 2;
            M += fmax(fabs(dj * lo), fabs(dj * hi)) + err * big;
        }
        S += t;
        ops += 3.0;
    }
    double lb = S - (M + fabs(S)) * (ops + 2.0) * 0x1p-52 - (ops + 2.0) * 0x1p-1073;
    if (!isfinite(lb)) return -INFINITY;
    return nextafter(lb, -INFINITY);
}

/* Try y = ± row p of B⁻¹ (p 1-based basis position) as a Farkas multiplier. */
static int lg_lp_cert_farkas_row(lg_lp_cert *c, int p)
{
    double *w = c->work;
    memset(w, 0, ((size_t)c->m + 1) * sizeof *w);
    w[p] = 1.0;
    glp_btran(c->P, w);
    for (int s = 0; s < 2; s++) {
        double *y = w + 1;
        if (s == 1)
            for (int i = 0; i < c->m; i++) y[i] = -y[i];
        if (lg_lp_cert_bound(c, y, 0.0) > 0.0) return 1;
    }
    return 0;
}

/* Basis position of variable k (1..m rows, m+1..m+n columns), 0 if non-basic. */
static int lg_lp_cert_bind(glp_prob *P, int m, int k)
{
    if (k <= m) return glp_get_row_stat(P, k) == GLP_BS ? glp_get_row_bind(P, k) : 0;
    return glp_get_col_stat(P, k - m) == GLP_BS ? glp_get_col_bind(P, k - m) : 0;
}

lg_lp_cert_res lg_lp_cert_check(lg_lp_cert *c, double t, double *lb)
{
    double t0 = lg_now();
    glp_prob *P = c->P;
    lg_lp_cert_res res = LG_LP_CERT_NONE;
    c->n_checks++;
    if (glp_get_obj_dir(P) != GLP_MIN || glp_get_num_rows(P) != c->m || glp_get_num_cols(P) != c->n) goto done;
    /* 1. the duals, whatever GLPK says its status is */
    lg_lp_cert_read(c, 1);
    double *y = c->work + 1;
    for (int i = 0; i < c->m; i++) y[i] = glp_get_row_dual(P, i + 1);
    double b = lg_lp_cert_bound(c, y, glp_get_obj_coef(P, 0));
    if (b > -INFINITY && b >= t) {
        *lb = b;
        res = LG_LP_CERT_BOUND;
        goto done;
    }
    /* 2. Farkas multipliers from the basis: the variable GLPK names, then the
     * basic variables furthest out of their bounds */
    if (glp_get_prim_stat(P) == GLP_FEAS) goto done;
    if (!glp_bf_exists(P) && glp_factorize(P) != 0) goto done;
    for (int j = 0; j < c->n; j++) c->obj[j] = 0.0;
    int tried[6], n_tried = 0;
    int k = glp_get_unbnd_ray(P);
    if (k > 0 && k <= c->m + c->n) {
        int p = lg_lp_cert_bind(P, c->m, k);
        if (p > 0) {
            tried[n_tried++] = k;
            if (lg_lp_cert_farkas_row(c, p)) {
                res = LG_LP_CERT_INFEASIBLE;
                goto done;
            }
        }
    }
    while (n_tried < 6) {
        int best = 0;
        double worst = 0.0;
        for (int v = 1; v <= c->m + c->n; v++) {
            int used = 0;
            for (int q = 0; q < n_tried; q++) used |= tried[q] == v;
            if (used || !lg_lp_cert_bind(P, c->m, v)) continue;
            double x = v <= c->m ? glp_get_row_prim(P, v) : glp_get_col_prim(P, v - c->m);
            double l = v <= c->m ? c->rl[v - 1] : c->lo[v - c->m - 1];
            double h = v <= c->m ? c->ru[v - 1] : c->hi[v - c->m - 1];
            double viol = x < l ? (l - x) / (1.0 + fabs(l)) : x > h ? (x - h) / (1.0 + fabs(h)) : 0.0;
            if (viol > worst) {
                worst = viol;
                best = v;
            }
        }
        if (!best) break;
        tried[n_tried++] = best;
        if (lg_lp_cert_farkas_row(c, lg_lp_cert_bind(P, c->m, best))) {
            res = LG_LP_CERT_INFEASIBLE;
            goto done;
        }
    }
done:
    if (res == LG_LP_CERT_NONE) c->n_open++;
    else c->n_closed++;
    c->seconds += lg_now() - t0;
    return res;
}

int lg_lp_cert_rows(const lg_lp_cert *c, int *rows, int *side)
{
    int n = 0;
    for (int i = 0; i < c->m; i++)
        if (c->side_row[i]) {
            rows[n] = i;
            if (side) side[n] = c->side_row[i];
            n++;
        }
    return n;
}

int lg_lp_cert_cols(const lg_lp_cert *c, int *cols, int *side)
{
    int n = 0;
    for (int j = 0; j < c->n; j++)
        if (c->side_col[j]) {
            cols[n] = j;
            if (side) side[n] = c->side_col[j];
            n++;
        }
    return n;
}
