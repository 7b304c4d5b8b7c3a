/* trelax.c — the container of the Transformer nodes' relaxation rows a
 * back-end query carries (problem.h: lg_trelax). Storage and checks only;
 * the rows themselves come from verify/tnode_planes.h. */
#include "encode/problem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void lg_trelax_init(lg_trelax *r, size_t nodes_len)
{
    memset(r, 0, sizeof *r);
    r->nodes_len = nodes_len;
}

void lg_trelax_free(lg_trelax *r)
{
    free(r->aux_lo);
    free(r->aux_hi);
    free(r->rows);
    free(r->var);
    free(r->coef);
    memset(r, 0, sizeof *r);
}

static int trelax_grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap) return 0;
    int c = *cap ? *cap : 64;
    while (c < need) {
        if (c > (1 << 29)) return -1;
        c *= 2;
    }
    void *q = realloc(*p, (size_t)c * elem);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

lg_status lg_trelax_add_aux(lg_trelax *r, double lo, double hi, int *var)
{
    if (!isfinite(lo) || !isfinite(hi) || lo > hi)
        return lg_fail(LG_ERR_ARG, "relaxation: auxiliary value with bounds [%g, %g]", lo, hi);
    int cap = r->cap_aux;
    if (trelax_grow((void **)&r->aux_lo, &cap, r->n_aux + 1, sizeof *r->aux_lo) ||
        trelax_grow((void **)&r->aux_hi, &r->cap_aux, r->n_aux + 1, sizeof *r->aux_hi))
        return lg_fail(LG_ERR_NOMEM, "relaxation: cannot grow the auxiliary values");
    r->aux_lo[r->n_aux] = lo;
    r->aux_hi[r->n_aux] = hi;
    *var = (int)r->nodes_len + r->n_aux++;
    return LG_OK;
}

lg_status lg_trelax_add_row(lg_trelax *r, char sense, double rhs, int n, const int *var, const double *coef)
{
    if (sense != 'L' && sense != 'G' && sense != 'E') return lg_fail(LG_ERR_ARG, "relaxation: bad row sense");
    if (!isfinite(rhs)) return lg_fail(LG_ERR_ARG, "relaxation: row with a right-hand side that is not finite");
    for (int j = 0; j < n; j++) {
        if (!isfinite(coef[j])) return lg_fail(LG_ERR_ARG, "relaxation: row with a coefficient that is not finite");
        for (int q = 0; q < j; q++)
            if (var[q] == var[j] && coef[q] != 0 && coef[j] != 0)
                return lg_fail(LG_ERR_ARG, "relaxation: row names value %d twice", var[j]);
    }
    int cap_v = r->cap_nz;
    if (trelax_grow((void **)&r->rows, &r->cap_rows, r->n_rows + 1, sizeof *r->rows) ||
        trelax_grow((void **)&r->var, &cap_v, r->n_nz + n, sizeof *r->var) ||
        trelax_grow((void **)&r->coef, &r->cap_nz, r->n_nz + n, sizeof *r->coef))
        return lg_fail(LG_ERR_NOMEM, "relaxation: cannot grow the rows");
    lg_trow *w = &r->rows[r->n_rows];
    w->sense = sense;
    w->rhs = rhs;
    w->start = r->n_nz;
    w->n = 0;
    for (int j = 0; j < n; j++) {
        if (coef[j] == 0) continue;
        r->var[r->n_nz + w->n] = var[j];
        r->coef[r->n_nz + w->n] = coef[j];
        w->n++;
    }
    r->n_nz += w->n;
    r->n_rows++;
    return LG_OK;
}

lg_status lg_trelax_check(const lg_trelax *r, size_t nodes_len)
{
    if (r->nodes_len != nodes_len)
        return lg_fail(LG_ERR_ARG, "problem: the Transformer relaxation was built for another network");
    for (int a = 0; a < r->n_aux; a++)
        if (!isfinite(r->aux_lo[a]) || !isfinite(r->aux_hi[a]) || r->aux_lo[a] > r->aux_hi[a])
            return lg_fail(LG_ERR_ARG, "problem: relaxation auxiliary %d has bounds [%g, %g]", a, r->aux_lo[a],
                           r->aux_hi[a]);
    long top = (long)nodes_len + r->n_aux;
    for (int i = 0; i < r->n_rows; i++) {
        const lg_trow *w = &r->rows[i];
        if ((w->sense != 'L' && w->sense != 'G' && w->sense != 'E') || !isfinite(w->rhs) || w->start < 0 ||
            w->n < 0 || w->start + w->n > r->n_nz)
            return lg_fail(LG_ERR_ARG, "problem: relaxation row %d is malformed", i);
        for (int q = w->start; q < w->start + w->n; q++)
            if (r->var[q] < 0 || r->var[q] >= top || !isfinite(r->coef[q]))
                return lg_fail(LG_ERR_ARG, "problem: relaxation row %d names value %d (expected 0..%ld)", i,
                               r->var[q], top - 1);
    }
    return LG_OK;
}
