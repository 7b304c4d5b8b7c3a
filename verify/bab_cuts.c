/* bab_cuts.c — cuts of ReLU branch and bound from refuted sub-problems
 * (bab_cuts.h): the store, and the strengthening and verification of a
 * refuted node's split set. */
#include "verify/bab_cuts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify/alpha.h"

int lg_bab_cuts_on(const lg_bab_ctx *cx)
{
    return cx->o->cuts && lg_bab_use_beta(cx) && !lg_net_has_max(cx->net);
}

void lg_bab_cuts_init(lg_bab_cuts *c) { memset(c, 0, sizeof *c); }

void lg_bab_cuts_free(lg_bab_cuts *c)
{
    free(c->start);
    free(c->idx);
    free(c->sgn);
    memset(c, 0, sizeof *c);
}

lg_status lg_bab_cuts_add(lg_bab_cuts *c, int n, const int *idx, const signed char *sgn)
{
    if (n <= 0) return LG_OK;
    if (c->n + 2 > c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        size_t *s = realloc(c->start, (size_t)cap * sizeof *s);
        if (!s) return lg_fail(LG_ERR_NOMEM, "bab: out of memory for cuts");
        c->start = s;
        c->cap = cap;
    }
    if (c->len + (size_t)n > c->lcap) {
        size_t cap = c->lcap ? 2 * c->lcap : 1024;
        while (cap < c->len + (size_t)n) cap *= 2;
        int *i = realloc(c->idx, cap * sizeof *i);
        if (!i) return lg_fail(LG_ERR_NOMEM, "bab: out of memory for cuts");
        c->idx = i;
        signed char *g = realloc(c->sgn, cap);
        if (!g) return lg_fail(LG_ERR_NOMEM, "bab: out of memory for cuts");
        c->sgn = g;
        c->lcap = cap;
    }
    if (c->n == 0) c->start[0] = 0;
    memcpy(c->idx + c->len, idx, (size_t)n * sizeof *idx);
    memcpy(c->sgn + c->len, sgn, (size_t)n);
    c->len += (size_t)n;
    c->start[++c->n] = c->len;
    return LG_OK;
}

int lg_bab_cuts_match(const lg_bab_cuts *c, const signed char *sign)
{
    for (int q = 0; q < c->n; q++) {
        size_t e = c->start[q];
        while (e < c->start[q + 1] && sign[c->idx[e]] == c->sgn[e]) e++;
        if (e == c->start[q + 1]) return 1;
    }
    return 0;
}

/* Layer of neuron i (lg_alpha_offset layout) into *k, its index in the layer into *j. */
static void lg_bab_cut_locate(const lg_net *net, int i, int *k, int *j)
{
    int kk = 0;
    while (kk + 1 < net->n_layers && lg_alpha_offset(net, kk + 1) <= i) kk++;
    *k = kk;
    *j = i - lg_alpha_offset(net, kk);
}

/* Verify S' (sign2): every term refuted on the root's region with S' fixed. *ok = 1 if so. */
static lg_status lg_bab_cut_verify(const lg_bab_ctx *cx, const double *root_pre, const lg_bab_node *n,
                                   const signed char *sign2, int m, const int *rows, const double *alpha,
                                   const double *beta, int *ok)
{
    const lg_net *net = cx->net;
    size_t sz = (size_t)cx->size, M = (size_t)cx->m;
    *ok = 0;
    lg_bounds b;
    lg_status st = lg_bab_bounds_start(cx, &b, root_pre);
    if (st != LG_OK && !b.lo) return st;
    int kmin = net->n_layers;
    for (size_t i = 0; i < sz && st == LG_OK; i++) {
        if (!sign2[i]) continue;
        int k, j;
        lg_bab_cut_locate(net, (int)i, &k, &j);
        if (sign2[i] < 0 && b.lo[k][j] < 0) b.lo[k][j] = 0; /* active: z ≥ 0 */
        if (sign2[i] > 0 && b.hi[k][j] > 0) b.hi[k][j] = 0; /* inactive: z ≤ 0 */
        if (k < kmin) kmin = k;
    }
    if (st == LG_OK && lg_bab_bounds_empty(&b)) { /* no input has these phases */
        *ok = 1;
        lg_bounds_free(&b);
        return LG_OK;
    }
    if (st == LG_OK && kmin + 1 < net->n_layers) st = lg_bounds_symbolic_unstable_from(&b, net, kmin + 1);
    double *al = NULL, *be = NULL, *lb = NULL;
    if (st == LG_OK) {
        al = malloc(M * sz * sizeof *al);
        be = calloc(M * sz, sizeof *be);
        lb = malloc(M * sizeof *lb);
        if (!al || !be || !lb) st = lg_fail(LG_ERR_NOMEM, "bab: out of memory for a cut");
    }
    if (st == LG_OK && lg_bab_bounds_empty(&b)) {
        *ok = 1;
    } else if (st == LG_OK) {
        lg_alpha_default(&b, net, (int)M, al);
        for (int r = 0; r < m; r++) { /* warm start: the node's slopes and multipliers on S' */
            size_t R = (size_t)rows[r];
            memcpy(al + R * sz, alpha + (size_t)r * sz, sz * sizeof *al);
            for (size_t i = 0; i < sz; i++) be[R * sz + i] = sign2[i] ? beta[(size_t)r * sz + i] : 0.0;
        }
        /* one bound with the node's slopes and multipliers (α steps here cost more than the cuts saved:
         * benchmarks/VERIFY.md "Cuts from refuted sub-problems") */
        st = lg_alpha_bound_beta(&b, net, (int)M, cx->C, cx->d, al, sign2, be, lb, NULL, NULL, NULL, NULL);
        if (st == LG_OK) {
            int all = 1;
            for (int t = 0; t < cx->n_terms && all; t++) {
                int refuted = 0;
                for (int r = cx->row0[t]; r < cx->row0[t + 1]; r++) refuted |= lb[r] > 0.0;
                all = refuted;
            }
            *ok = all;
        } else if (st == LG_ERR_TIMEOUT) {
            st = LG_OK; /* no cut; the driver sees the deadline */
        }
    }
    (void)n;
    free(al);
    free(be);
    free(lb);
    lg_bounds_free(&b);
    return st;
}

lg_status lg_bab_cut_try(const lg_bab_ctx *cx, const double *root_pre, const lg_bab_node *n, int m, const int *rows,
                         const double *alpha, const double *beta, int mutant, lg_bab_cut *cut)
{
    size_t sz = (size_t)cx->size;
    memset(cut, 0, sizeof *cut);
    int ns = 0, nk = 0;
    signed char *sign2 = calloc(sz, 1);
    if (!sign2) return lg_fail(LG_ERR_NOMEM, "bab: out of memory for a cut");
    for (size_t i = 0; i < sz; i++) {
        if (!n->sign[i]) continue;
        ns++;
        int used = 0;
        for (int r = 0; r < m && !used; r++) used = beta[(size_t)r * sz + i] > 0.0;
        if (used) {
            sign2[i] = n->sign[i];
            nk++;
        }
    }
    lg_status st = LG_OK;
    int ok = 0;
    if (nk > 0 && nk < ns) {
        if (mutant) ok = 1;
        else st = lg_bab_cut_verify(cx, root_pre, n, sign2, m, rows, alpha, beta, &ok);
    }
    if (st == LG_OK && ok) {
        cut->idx = malloc((size_t)nk * (sizeof *cut->idx + 1));
        if (!cut->idx) {
            free(sign2);
            return lg_fail(LG_ERR_NOMEM, "bab: out of memory for a cut");
        }
        cut->sgn = (signed char *)(cut->idx + nk);
        for (size_t i = 0; i < sz; i++)
            if (sign2[i]) {
                cut->idx[cut->n] = (int)i;
                cut->sgn[cut->n++] = sign2[i];
            }
    }
    free(sign2);
    return st;
}
