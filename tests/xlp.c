/* xlp.c — exact rational general simplex (xlp.h). */
#include "xlp.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"

#define T_(s, r, c) ((s)->T[(size_t)(r) * (size_t)(s)->n_cap + (size_t)(c)])

void lg_xlp_init(lg_xlp *s)
{
    memset(s, 0, sizeof *s);
    mpq_inits(s->q1, s->q2, s->q3, NULL);
}

static void clear_arr(mpq_t *a, size_t n)
{
    for (size_t i = 0; a && i < n; i++) mpq_clear(a[i]);
    free(a);
}

static mpq_t *new_arr(size_t n)
{
    mpq_t *a = malloc(n * sizeof *a);
    LG_ASSERT(a);
    for (size_t i = 0; i < n; i++) mpq_init(a[i]);
    return a;
}

static void release(lg_xlp *s)
{
    size_t nv = (size_t)s->n_cap + (size_t)s->m_cap;
    clear_arr(s->T, ((size_t)s->m_cap + 1) * (size_t)s->n_cap);
    clear_arr(s->val, nv);
    clear_arr(s->lo, nv);
    clear_arr(s->hi, nv);
    free(s->has_lo);
    free(s->has_hi);
    free(s->basic);
    free(s->nonb);
    s->T = s->val = s->lo = s->hi = NULL;
    s->has_lo = s->has_hi = NULL;
    s->basic = s->nonb = NULL;
    s->n_cap = s->m_cap = 0;
}

void lg_xlp_free(lg_xlp *s)
{
    release(s);
    mpq_clears(s->q1, s->q2, s->q3, NULL);
    memset(s, 0, sizeof *s);
}

static void reserve(lg_xlp *s, int n, int m)
{
    if (n <= s->n_cap && m <= s->m_cap) return;
    int nc = n > s->n_cap ? n : s->n_cap, mc = m > s->m_cap ? 2 * m : s->m_cap;
    release(s);
    s->n_cap = nc;
    s->m_cap = mc;
    size_t nv = (size_t)nc + (size_t)mc;
    s->T = new_arr(((size_t)mc + 1) * (size_t)nc);
    s->val = new_arr(nv);
    s->lo = new_arr(nv);
    s->hi = new_arr(nv);
    s->has_lo = calloc(nv, 1);
    s->has_hi = calloc(nv, 1);
    s->basic = calloc((size_t)mc, sizeof *s->basic);
    s->nonb = calloc((size_t)nc, sizeof *s->nonb);
    LG_ASSERT(s->has_lo && s->has_hi && s->basic && s->nonb);
}

/* Exchange basic variable of row r with nonbasic variable of column c
 * (n columns, m constraint rows plus the objective row m when obj). */
static void pivot(lg_xlp *s, int n, int rows, int r, int c)
{
    mpq_t *q1 = &s->q1, *q2 = &s->q2;
    mpq_inv(*q1, T_(s, r, c)); /* 1/p */
    for (int j = 0; j < n; j++) {
        if (j == c) continue;
        mpq_mul(T_(s, r, j), T_(s, r, j), *q1);
        mpq_neg(T_(s, r, j), T_(s, r, j));
    }
    mpq_set(T_(s, r, c), *q1);
    for (int i = 0; i < rows; i++) {
        if (i == r || mpq_sgn(T_(s, i, c)) == 0) continue;
        mpq_set(*q2, T_(s, i, c)); /* q */
        for (int j = 0; j < n; j++) {
            if (j == c) continue;
            mpq_mul(*q1, *q2, T_(s, r, j));
            mpq_add(T_(s, i, j), T_(s, i, j), *q1);
        }
        mpq_mul(T_(s, i, c), *q2, T_(s, r, c));
    }
    int b = s->basic[r];
    s->basic[r] = s->nonb[c];
    s->nonb[c] = b;
}

/* Move nonbasic column c by delta; every basic variable follows. */
static void shift(lg_xlp *s, int m, int c, const mpq_t delta)
{
    mpq_add(s->val[s->nonb[c]], s->val[s->nonb[c]], delta);
    for (int i = 0; i < m; i++) {
        if (mpq_sgn(T_(s, i, c)) == 0) continue;
        mpq_mul(s->q3, T_(s, i, c), delta);
        mpq_add(s->val[s->basic[i]], s->val[s->basic[i]], s->q3);
    }
}

static int below_hi(const lg_xlp *s, int v) { return !s->has_hi[v] || mpq_cmp(s->val[v], s->hi[v]) < 0; }
static int above_lo(const lg_xlp *s, int v) { return !s->has_lo[v] || mpq_cmp(s->val[v], s->lo[v]) > 0; }

/* Phase 1: 1 if a feasible assignment was reached, 0 if a row proves
 * infeasibility. */
static int check(lg_xlp *s, int n, int m, int rows)
{
    for (;;) {
        int r = -1, up = 0;
        for (int i = 0; i < m; i++) {
            int v = s->basic[i];
            int lo_bad = s->has_lo[v] && mpq_cmp(s->val[v], s->lo[v]) < 0;
            int hi_bad = s->has_hi[v] && mpq_cmp(s->val[v], s->hi[v]) > 0;
            if ((lo_bad || hi_bad) && (r < 0 || v < s->basic[r])) r = i, up = lo_bad;
        }
        if (r < 0) return 1;
        int c = -1;
        for (int j = 0; j < n; j++) {
            int v = s->nonb[j], sg = mpq_sgn(T_(s, r, j));
            if (sg == 0) continue;
            int ok = up ? (sg > 0 ? below_hi(s, v) : above_lo(s, v)) : (sg < 0 ? below_hi(s, v) : above_lo(s, v));
            if (ok && (c < 0 || v < s->nonb[c])) c = j;
        }
        if (c < 0) return 0;
        int b = s->basic[r];
        /* theta = (bound − val_b)/T[r][c] */
        mpq_sub(s->q2, up ? s->lo[b] : s->hi[b], s->val[b]);
        mpq_div(s->q2, s->q2, T_(s, r, c));
        shift(s, m, c, s->q2);
        mpq_set(s->val[b], up ? s->lo[b] : s->hi[b]); /* exact already; guards nothing but clarity */
        pivot(s, n, rows, r, c);
        s->pivots++;
    }
}

/* Phase 2: minimise the objective row m. Returns OPTIMAL or UNBOUNDED. */
static lg_xlp_result minimise(lg_xlp *s, int n, int m)
{
    mpq_t theta, lim;
    mpq_inits(theta, lim, NULL);
    lg_xlp_result res = LG_XLP_OPTIMAL;
    for (;;) {
        int c = -1, dir = 0;
        for (int j = 0; j < n; j++) {
            int v = s->nonb[j], sg = mpq_sgn(T_(s, m, j));
            if (sg == 0) continue;
            int d = sg > 0 ? (above_lo(s, v) ? -1 : 0) : (below_hi(s, v) ? 1 : 0);
            if (d && (c < 0 || v < s->nonb[c])) c = j, dir = d;
        }
        if (c < 0) break;
        int nv = s->nonb[c], leave = -1, bounded = 0;
        if (dir > 0 ? s->has_hi[nv] : s->has_lo[nv]) {
            mpq_sub(theta, dir > 0 ? s->hi[nv] : s->val[nv], dir > 0 ? s->val[nv] : s->lo[nv]);
            bounded = 1;
        }
        for (int i = 0; i < m; i++) {
            int sg = mpq_sgn(T_(s, i, c)) * dir, b = s->basic[i];
            if (sg == 0 || !(sg > 0 ? s->has_hi[b] : s->has_lo[b])) continue;
            /* basic moves by T·dir·θ: limit |bound − val| / |T| */
            mpq_sub(lim, sg > 0 ? s->hi[b] : s->val[b], sg > 0 ? s->val[b] : s->lo[b]);
            mpq_div(lim, lim, T_(s, i, c));
            if (mpq_sgn(lim) < 0) mpq_neg(lim, lim);
            int cmp = bounded ? mpq_cmp(lim, theta) : -1;
            if (cmp < 0 || (cmp == 0 && leave >= 0 && b < s->basic[leave])) {
                mpq_set(theta, lim);
                leave = i;
                bounded = 1;
            }
        }
        if (!bounded) {
            res = LG_XLP_UNBOUNDED;
            break;
        }
        if (dir < 0) mpq_neg(theta, theta);
        shift(s, m, c, theta);
        if (leave >= 0) pivot(s, n, m + 1, leave, c);
        s->pivots++;
    }
    mpq_clears(theta, lim, NULL);
    return res;
}

lg_xlp_result lg_xlp_solve(lg_xlp *s, int n, const mpq_t *lo, const mpq_t *hi, const char *has_lo,
                           const char *has_hi, int m, mpq_t *const *rows, const mpq_t *obj, mpq_t *x, mpq_t opt)
{
    reserve(s, n, m);
    s->pivots = 0;
    for (int j = 0; j < n; j++) {
        s->nonb[j] = j;
        s->has_lo[j] = (char)(has_lo ? has_lo[j] : 1);
        s->has_hi[j] = (char)(has_hi ? has_hi[j] : 1);
        if (s->has_lo[j]) mpq_set(s->lo[j], lo[j]);
        if (s->has_hi[j]) mpq_set(s->hi[j], hi[j]);
        if (s->has_lo[j])
            mpq_set(s->val[j], lo[j]);
        else if (s->has_hi[j])
            mpq_set(s->val[j], hi[j]);
        else
            mpq_set_ui(s->val[j], 0, 1);
    }
    for (int r = 0; r < m; r++) {
        int v = n + r;
        s->basic[r] = v;
        s->has_lo[v] = 0;
        s->has_hi[v] = 1;
        mpq_neg(s->hi[v], rows[r][n]);
        mpq_set_ui(s->val[v], 0, 1);
        for (int j = 0; j < n; j++) {
            mpq_set(T_(s, r, j), rows[r][j]);
            mpq_mul(s->q1, rows[r][j], s->val[j]);
            mpq_add(s->val[v], s->val[v], s->q1);
        }
    }
    for (int j = 0; j < n; j++) {
        if (obj)
            mpq_set(T_(s, m, j), obj[j]);
        else
            mpq_set_ui(T_(s, m, j), 0, 1);
    }
    if (!check(s, n, m, obj ? m + 1 : m)) return LG_XLP_INFEASIBLE;
    lg_xlp_result res = obj ? minimise(s, n, m) : LG_XLP_OPTIMAL;
    if (res != LG_XLP_OPTIMAL) return res;
    for (int j = 0; j < n; j++) mpq_set(x[j], s->val[j]);
    if (obj && opt) {
        mpq_set_ui(opt, 0, 1);
        for (int j = 0; j < n; j++) {
            mpq_mul(s->q1, obj[j], x[j]);
            mpq_add(opt, opt, s->q1);
        }
    }
    return LG_XLP_OPTIMAL;
}
