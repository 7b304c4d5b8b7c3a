/* milp.c — the neutral big-M model of an lg_problem (milp.h). */
#include "encode/milp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "encode/pwl.h"

void lg_milp_init(lg_milp *m) { memset(m, 0, sizeof *m); }

void lg_milp_free(lg_milp *m)
{
    free(m->cols);
    free(m->rows);
    free(m->ind);
    free(m->val);
    free(m->x_col);
    free(m->y_col);
    free(m->y_lo);
    free(m->y_hi);
    free(m->relu);
    free(m->mark);
    memset(m, 0, sizeof *m);
}

static int grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap) return 0;
    int c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * elem);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

lg_status lg_milp_add_col(lg_milp *m, const char *name, double lo, double hi, int binary, int *idx)
{
    if (isnan(lo) || isnan(hi)) return lg_fail(LG_ERR_ARG, "milp: column %s has a NaN bound", name);
    if (grow((void **)&m->cols, &m->cap_cols, m->n_cols + 1, sizeof *m->cols))
        return lg_fail(LG_ERR_NOMEM, "milp: cannot grow columns");
    lg_milp_col *c = &m->cols[m->n_cols];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->lo = lo;
    c->hi = hi;
    c->binary = binary;
    *idx = m->n_cols++;
    return LG_OK;
}

lg_status lg_milp_add_row(lg_milp *m, const char *name, char sense, double rhs, int n, const int *ind,
                          const double *val)
{
    if (sense != 'L' && sense != 'E' && sense != 'G') return lg_fail(LG_ERR_ARG, "milp: row %s: bad sense", name);
    if (!isfinite(rhs)) return lg_fail(LG_ERR_ARG, "milp: row %s: non-finite right-hand side", name);
    int cap_i = m->cap_nz, cap_v = m->cap_nz; /* ind and val grow in step */
    if (grow((void **)&m->rows, &m->cap_rows, m->n_rows + 1, sizeof *m->rows) ||
        grow((void **)&m->ind, &cap_i, m->n_nz + n, sizeof *m->ind) ||
        grow((void **)&m->val, &cap_v, m->n_nz + n, sizeof *m->val))
        return lg_fail(LG_ERR_NOMEM, "milp: cannot grow rows");
    m->cap_nz = cap_i;
    lg_milp_row *r = &m->rows[m->n_rows];
    snprintf(r->name, sizeof r->name, "%s", name);
    r->sense = sense;
    r->rhs = rhs;
    r->start = m->n_nz;
    r->n = 0;
    /* duplicate columns: mark[c] holds the stamp of the last call that used column c */
    if (grow((void **)&m->mark, &m->cap_mark, m->n_cols, sizeof *m->mark))
        return lg_fail(LG_ERR_NOMEM, "milp: cannot grow rows");
    for (int c = m->n_mark; c < m->cap_mark; c++) m->mark[c] = 0;
    m->n_mark = m->cap_mark;
    int stamp = ++m->stamp;
    for (int j = 0; j < n; j++) {
        if (val[j] == 0) continue;
        if (!isfinite(val[j])) return lg_fail(LG_ERR_ARG, "milp: row %s: non-finite coefficient", name);
        if (ind[j] < 0 || ind[j] >= m->n_cols) return lg_fail(LG_ERR_ARG, "milp: row %s: bad column %d", name, ind[j]);
        if (m->mark[ind[j]] == stamp) return lg_fail(LG_ERR_ARG, "milp: row %s: column %d twice", name, ind[j]);
        m->mark[ind[j]] = stamp;
        m->ind[r->start + r->n] = ind[j];
        m->val[r->start + r->n] = val[j];
        r->n++;
    }
    m->n_nz += r->n;
    m->n_rows++;
    return LG_OK;
}

/* The column of copy c ≥ 1 of position pos (pwl.h): made on first use as
 * v' with the bounds of v and the row v' − v = 0. al_col/al_next: records
 * of the copies, al_head[pos] the first (copy 1) of pos, −1 none. */
typedef struct milp_copies {
    int *head;          /* [nodes_len] */
    int *col, *next, n, cap_col, cap_next;
} milp_copies;

static lg_status milp_copy_col(lg_milp *m, milp_copies *cp, const int *colmap, int pos, int c, int *out)
{
    int *link = &cp->head[pos], v = colmap[pos];
    for (int level = 1;; level++) {
        if (*link < 0) {
            if (grow((void **)&cp->col, &cp->cap_col, cp->n + 1, sizeof *cp->col) ||
                grow((void **)&cp->next, &cp->cap_next, cp->n + 1, sizeof *cp->next))
                return lg_fail(LG_ERR_NOMEM, "milp: cannot grow the copies");
            char name[32];
            int col, ind[2];
            double val[2] = {1.0, -1.0};
            snprintf(name, sizeof name, "c%d_%.17s", level, m->cols[v].name);
            lg_status st = lg_milp_add_col(m, name, m->cols[v].lo, m->cols[v].hi, 0, &col);
            if (st) return st;
            ind[0] = col, ind[1] = v;
            snprintf(name, sizeof name, "rc%d_%.17s", level, m->cols[v].name);
            if ((st = lg_milp_add_row(m, name, 'E', 0.0, 2, ind, val))) return st; /* v' − v = 0 */
            cp->col[cp->n] = col;
            cp->next[cp->n] = -1;
            *link = cp->n++;
        }
        if (level == c) {
            *out = cp->col[*link];
            return LG_OK;
        }
        link = &cp->next[*link];
    }
}

/* The Transformer nodes' relaxation rows (problem.h lg_trelax): auxiliary
 * columns t_<a>, rows tr_<i> over the columns of colmap (a position whose
 * column is −1 holds 0 and drops out). */
static lg_status milp_add_trelax(lg_milp *m, const lg_trelax *tr, const int *colmap)
{
    lg_status st = LG_OK;
    int width = 1;
    for (int i = 0; i < tr->n_rows; i++)
        if (tr->rows[i].n > width) width = tr->rows[i].n;
    int *aux = malloc(((size_t)tr->n_aux + 1) * sizeof *aux), *ind = malloc((size_t)width * sizeof *ind);
    double *val = malloc((size_t)width * sizeof *val);
    if (!aux || !ind || !val) {
        st = lg_fail(LG_ERR_NOMEM, "milp: cannot allocate the relaxation");
        goto done;
    }
    char name[32];
    for (int a = 0; a < tr->n_aux; a++) {
        snprintf(name, sizeof name, "t_%d", a);
        if ((st = lg_milp_add_col(m, name, tr->aux_lo[a], tr->aux_hi[a], 0, &aux[a]))) goto done;
    }
    for (int i = 0; i < tr->n_rows; i++) {
        const lg_trow *w = &tr->rows[i];
        int n = 0;
        for (int q = w->start; q < w->start + w->n; q++) {
            int v = tr->var[q];
            int c = (size_t)v < tr->nodes_len ? colmap[v] : aux[v - (int)tr->nodes_len];
            if (c < 0) continue; /* the constant 0 */
            ind[n] = c;
            val[n++] = tr->coef[q];
        }
        snprintf(name, sizeof name, "tr_%d", i);
        if ((st = lg_milp_add_row(m, name, w->sense, w->rhs, n, ind, val))) goto done;
    }
done:
    free(aux);
    free(ind);
    free(val);
    return st;
}

lg_status lg_milp_add_net(lg_milp *m, const lg_problem *p)
{
    lg_status st = lg_pwl_validate(p);
    if (st) return st;
    const lg_net *net = p->net;
    int n_in = net->n_in, n_out = lg_net_n_out(net);
    size_t len = lg_net_nodes_len(net);
    lg_pwl_row R;
    milp_copies cp = {0};
    if ((st = lg_pwl_row_init(&R, net))) return st;
    /* colmap[pos]: the column holding node value pos (input: x or its normalised xn; a layer
     * output: z, a, or −1 for a stably inactive ReLU, whose value 0 is dropped from sums) */
    int *colmap = malloc(len * sizeof *colmap);
    int *ind = malloc(((size_t)R.cap + 2) * sizeof *ind);
    double *val = malloc(((size_t)R.cap + 2) * sizeof *val);
    cp.head = malloc(len * sizeof *cp.head);
    m->n_in = n_in;
    m->n_out = n_out;
    m->x_col = malloc((size_t)n_in * sizeof *m->x_col);
    m->y_col = malloc((size_t)n_out * sizeof *m->y_col);
    m->y_lo = malloc((size_t)n_out * sizeof *m->y_lo);
    m->y_hi = malloc((size_t)n_out * sizeof *m->y_hi);
    if (!colmap || !ind || !val || !cp.head || !m->x_col || !m->y_col || !m->y_lo || !m->y_hi) {
        st = lg_fail(LG_ERR_NOMEM, "milp: cannot allocate the encoding");
        goto fail;
    }
    for (size_t q = 0; q < len; q++) cp.head[q] = -1;
    char name[32];
    for (int i = 0; i < n_in; i++) {
        snprintf(name, sizeof name, "X_%d", i); /* VNN-LIB input names */
        if ((st = lg_milp_add_col(m, name, p->lo[i], p->hi[i], 0, &m->x_col[i]))) goto fail;
        colmap[i] = m->x_col[i];
        if (net->in_sub || net->in_div) {
            /* div·xn − x = −sub */
            snprintf(name, sizeof name, "xn_%d", i);
            /* xn's range from the box, widened by far more than the two roundings of (x − sub)/div */
            double sub = net->in_sub ? net->in_sub[i] : 0.0, div = net->in_div ? net->in_div[i] : 1.0;
            double e1 = (p->lo[i] - sub) / div, e2 = (p->hi[i] - sub) / div;
            double nlo = fmin(e1, e2), nhi = fmax(e1, e2);
            nlo -= fabs(nlo) * 0x1p-50 + 0x1p-1000;
            nhi += fabs(nhi) * 0x1p-50 + 0x1p-1000;
            if (!isfinite(nlo) || !isfinite(nhi)) nlo = -INFINITY, nhi = INFINITY;
            if ((st = lg_milp_add_col(m, name, nlo, nhi, 0, &colmap[i]))) goto fail;
            ind[0] = colmap[i];
            val[0] = net->in_div ? net->in_div[i] : 1.0;
            ind[1] = m->x_col[i];
            val[1] = -1.0;
            snprintf(name, sizeof name, "n_%d", i);
            if ((st = lg_milp_add_row(m, name, 'E', net->in_sub ? -net->in_sub[i] : 0.0, 2, ind, val))) goto fail;
        }
    }
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        int *cur = colmap + lg_pwl_node_off(&R, k);
        for (int i = 0; i < L->n_out; i++) {
            double l = p->pre_lo[k][i], u = p->pre_hi[k][i];
            int z, a, d;
            snprintf(name, sizeof name, "z_%d_%d", k, i);
            if ((st = lg_milp_add_col(m, name, l, u, 0, &z))) goto fail;
            if (lg_layer_is_tnode(L)) { /* no row: the relaxation's, below */
                cur[i] = z;
                goto last;
            }
            /* z − Σ_t Σ_j A_t[i,j]·v_src(t),j = b  (one row over every term's source; zero
             * weights and stably inactive inputs left out: a conv's row is sparse) */
            lg_pwl_row_get(&R, k, i, colmap);
            int n = 0;
            ind[n] = z;
            val[n++] = 1.0;
            for (int q = 0; q < R.n; q++) {
                if (R.w[q] == 0.0) continue;
                int c = colmap[R.pos[q]];
                if (R.copy[q] > 0 && (st = milp_copy_col(m, &cp, colmap, R.pos[q], R.copy[q], &c))) goto fail;
                ind[n] = c;
                val[n++] = -R.w[q];
            }
            snprintf(name, sizeof name, "r_%d_%d", k, i);
            if ((st = lg_milp_add_row(m, name, 'E', L->b[i], n, ind, val))) goto fail;
            switch (lg_pwl_phase(p, k, i)) {
            case LG_PHASE_LINEAR: cur[i] = z; break;
            case LG_PHASE_ZERO: cur[i] = -1; break;
            case LG_PHASE_UNSTABLE:
                snprintf(name, sizeof name, "a_%d_%d", k, i);
                if ((st = lg_milp_add_col(m, name, 0.0, u, 0, &a))) goto fail;
                snprintf(name, sizeof name, "d_%d_%d", k, i);
                if ((st = lg_milp_add_col(m, name, 0.0, 1.0, 1, &d))) goto fail;
                if (grow((void **)&m->relu, &m->cap_relu, m->n_relu + 1, sizeof *m->relu)) {
                    st = lg_fail(LG_ERR_NOMEM, "milp: cannot grow the relu list");
                    goto fail;
                }
                m->relu[m->n_relu++] = (lg_milp_relu){z, a, d, k, i};
                ind[0] = a, ind[1] = z, ind[2] = d;
                val[0] = 1.0, val[1] = -1.0; /* a − z ≥ 0 */
                snprintf(name, sizeof name, "ra_%d_%d", k, i);
                if ((st = lg_milp_add_row(m, name, 'G', 0.0, 2, ind, val))) goto fail;
                val[2] = -l; /* a − z − l·δ ≤ −l */
                snprintf(name, sizeof name, "rb_%d_%d", k, i);
                if ((st = lg_milp_add_row(m, name, 'L', -l, 3, ind, val))) goto fail;
                ind[1] = d;
                val[1] = -u; /* a − u·δ ≤ 0 */
                snprintf(name, sizeof name, "rc_%d_%d", k, i);
                if ((st = lg_milp_add_row(m, name, 'L', 0.0, 2, ind, val))) goto fail;
                cur[i] = a;
                break;
            }
        last:
            if (k == net->n_layers - 1) {
                lg_phase ph = lg_pwl_phase(p, k, i);
                m->y_col[i] = cur[i];
                m->y_lo[i] = ph == LG_PHASE_LINEAR ? l : 0.0;
                m->y_hi[i] = ph == LG_PHASE_ZERO ? 0.0 : u;
            }
        }
    }
    if (p->trelax && (st = milp_add_trelax(m, p->trelax, colmap))) goto fail;
    st = LG_OK;
fail:
    lg_pwl_row_free(&R);
    free(colmap);
    free(ind);
    free(val);
    free(cp.head);
    free(cp.col);
    free(cp.next);
    return st;
}

void lg_milp_con_range(const lg_milp *m, const lg_lincon *c, double *lo, double *hi)
{
    double a = c->d, b = c->d;
    for (int j = 0; j < m->n_out; j++) {
        double p = c->coef[j] * m->y_lo[j], q = c->coef[j] * m->y_hi[j];
        a += p < q ? p : q;
        b += p < q ? q : p;
    }
    *lo = a;
    *hi = b;
}
