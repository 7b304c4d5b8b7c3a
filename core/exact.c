/* exact.c — exact rational evaluation (exact.h). */
#include "core/exact.h"
#include "core/linop.h"
#include "core/op.h"

#include <gmp.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

/* A finite double as M·2^k with M an integer (|M| < 2^53); k = LONG_MAX for 0. */
static long lg_dy_split(double v, double *M)
{
    if (v == 0) {
        *M = 0;
        return LONG_MAX;
    }
    int e;
    double m = frexp(v, &e);
    *M = ldexp(m, 53); /* exact */
    return (long)e - 53;
}

/* z = M·2^(k − base) (k ≥ base), M from lg_dy_split. */
static void lg_dy_set(mpz_t z, double M, long k, long base)
{
    mpz_set_d(z, M);
    if (M != 0) mpz_mul_2exp(z, z, (mp_bitcnt_t)(k - base));
}

/* A weight of term A as M·2^k (lg_dy_split); an index map's 1 is M = 1, k = 0. */
static long lg_dy_weight(const lg_linear *A, double w, double *M)
{
    if (A->kind == LG_LAYER_INDEX) {
        *M = 1.0;
        return 0;
    }
    return lg_dy_split(w, M);
}

/* Forward pass through the graph without input normalisation, in dyadic
 * fixed point: the values of node j share one exponent (v_i = V_i·2^E_j), so
 * every step is an exact integer multiply-add. Layer k's sums take the
 * smallest exponent any of its products or biases has (E_src + a weight's
 * exponent), so every product is shifted left, never rounded. y (mpq,
 * [n_out], initialised) gets the outputs. 0 ok, −2 unsupported / not
 * finite, −3 no memory. */
/* A row of the term sum as integers at exponent Ez (lg_layer_row_visit): z += w·a_i. */
typedef struct lg_dy_row {
    mpz_ptr z;
    mpz_t *v;          /* every node's values, node j's at off[j + 1] with exponent E[j + 1] */
    const size_t *off;
    const long *E;
    long Ez;
    mpz_ptr t, c;      /* scratch */
} lg_dy_row;

static void lg_dy_row_add(void *ctx, const lg_linear *A, int i, double w)
{
    lg_dy_row *r = ctx;
    const mpz_t *a = (const mpz_t *)(r->v + r->off[A->src + 1]);
    if (mpz_sgn(a[i]) == 0) return;
    double M;
    long kk = lg_dy_weight(A, w, &M), Es = r->E[A->src + 1];
    mpz_set_d(r->c, M);
    mpz_mul(r->t, r->c, a[i]); /* value t·2^(kk + Es) */
    mpz_mul_2exp(r->t, r->t, (mp_bitcnt_t)(kk + Es - r->Ez));
    mpz_add(r->z, r->z, r->t);
}

/* A row of the term sum in the rationals (lg_layer_row_visit): z += w·a_i. */
typedef struct lg_q_row {
    mpq_ptr z;
    mpq_t *v;          /* every node's values, node j's at off[j + 1] */
    const size_t *off;
    mpq_ptr t, c;      /* scratch */
} lg_q_row;

static void lg_q_row_add(void *ctx, const lg_linear *A, int i, double w)
{
    lg_q_row *r = ctx;
    const mpq_t *a = (const mpq_t *)(r->v + r->off[A->src + 1]);
    if (mpq_sgn(a[i]) == 0) return;
    if (A->kind == LG_LAYER_INDEX) { /* a 1: the value itself */
        mpq_add(r->z, r->z, a[i]);
        return;
    }
    mpq_set_d(r->c, w);
    mpq_mul(r->t, r->c, a[i]);
    mpq_add(r->z, r->z, r->t);
}

static int lg_exact_forward_dyadic(const lg_net *net, const double *x, mpq_t *y)
{
    size_t len = lg_net_nodes_len(net);
    int *idx;
    double *wv;
    if (lg_net_row_alloc(net, &idx, &wv)) return -3;
    mpz_t *v = malloc(len * sizeof *v);         /* [nodes_len] every node's values */
    long *E = malloc(((size_t)net->n_layers + 1) * sizeof *E); /* exponent of node j at E[j + 1] */
    size_t *off = malloc(((size_t)net->n_layers + 1) * sizeof *off);
    if (!v || !E || !off) {
        free(v);
        free(E);
        free(off);
        free(idx);
        free(wv);
        return -3;
    }
    for (size_t i = 0; i < len; i++) mpz_init(v[i]);
    for (int k = -1; k < net->n_layers; k++) off[k + 1] = lg_net_node_offset(net, k);
    mpz_t t, c;
    mpz_init(t);
    mpz_init(c);
    int rc = 0;
    long E0 = LONG_MAX;
    double M;
    for (int i = 0; i < net->n_in; i++) {
        if (!isfinite(x[i])) rc = -2;
        else {
            long k = lg_dy_split(x[i], &M);
            if (k < E0) E0 = k;
        }
    }
    if (E0 == LONG_MAX) E0 = 0;
    E[0] = E0;
    for (int i = 0; i < net->n_in && !rc; i++) {
        long k = lg_dy_split(x[i], &M);
        lg_dy_set(v[i], M, k, E0);
    }
    for (int k = 0; k < net->n_layers && !rc; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->act != LG_ACT_IDENTITY && L->act != LG_ACT_RELU) {
            rc = -2;
            break;
        }
        const lg_opdef *op = lg_layer_op(L);
        if (op->flags & LG_OPF_NODE) { /* max-pool, product: the kind's integer form (core/op.h) */
            if (!op->exact_z) { /* softmax, layernorm: not rational (the enclosure decides) */
                rc = -2;
                break;
            }
            int sa = lg_layer_src(L, 0), sb = lg_layer_src(L, lg_layer_n_src(L) - 1); /* a second source, else the first */
            E[k + 1] = op->exact_z(&L->lin, (const mpz_t *)(v + off[sa + 1]), E[sa + 1],
                                   (const mpz_t *)(v + off[sb + 1]), E[sb + 1], v + off[k + 1]);
            continue;
        }
        long Ez = LONG_MAX; /* exponent of this layer's sums */
        for (int tt = 0; tt < lg_layer_n_lin(L); tt++) {
            const lg_linear *A = lg_layer_lin(L, tt);
            long kw = A->kind == LG_LAYER_INDEX ? 0 : LONG_MAX; /* smallest weight exponent of the term */
            size_t nw = lg_linear_n_weights(A); /* the stored weights (a conv's kernel) */
            for (size_t j = 0; j < nw; j++) {
                long kk = lg_dy_split(A->W[j], &M);
                if (kk < kw) kw = kk;
            }
            if (kw != LONG_MAX && E[A->src + 1] + kw < Ez) Ez = E[A->src + 1] + kw;
        }
        if (Ez == LONG_MAX) Ez = E[lg_layer_lin(L, 0)->src + 1]; /* every weight 0: any exponent, term 0's source's */
        for (int o = 0; o < L->n_out; o++) {
            long kb = lg_dy_split(L->b[o], &M);
            if (kb < Ez) Ez = kb;
        }
        mpz_t *z = v + off[k + 1];
        for (int o = 0; o < L->n_out; o++) {
            long kb = lg_dy_split(L->b[o], &M);
            lg_dy_set(z[o], M, kb, Ez);
            lg_dy_row row = {z[o], v, off, E, Ez, t, c};
            lg_layer_row_visit(L, o, idx, wv, lg_dy_row_add, &row); /* the term sum (core/op.h) */
            if (L->act == LG_ACT_RELU && mpz_sgn(z[o]) < 0) mpz_set_ui(z[o], 0);
        }
        E[k + 1] = Ez;
    }
    const mpz_t *out = (const mpz_t *)(v + off[net->n_layers]);
    long Eo = E[net->n_layers];
    for (int j = 0; j < lg_net_n_out(net) && !rc; j++) {
        mpq_set_z(y[j], out[j]);
        if (Eo >= 0) mpq_mul_2exp(y[j], y[j], (mp_bitcnt_t)Eo);
        else mpq_div_2exp(y[j], y[j], (mp_bitcnt_t)(-Eo));
    }
    mpz_clear(t);
    mpz_clear(c);
    for (size_t i = 0; i < len; i++) mpz_clear(v[i]);
    free(v);
    free(E);
    free(off);
    free(idx);
    free(wv);
    return rc;
}

/* y[n_out] = f(x) exactly through the graph (each node's value from its
 * terms); 0 ok, −2 unsupported / not finite, −3 no memory. *out: n_out
 * entries, released by lg_exact_release. */
static int lg_exact_forward(const lg_net *net, const double *x, mpq_t **out)
{
    int no = lg_net_n_out(net);
    mpq_t *y = malloc((size_t)no * sizeof *y);
    if (!y) return -3;
    for (int j = 0; j < no; j++) mpq_init(y[j]);
    int rc;
    if (!net->in_sub && !net->in_div) { /* all dyadic: integer fixed point, no gcds */
        rc = lg_exact_forward_dyadic(net, x, y);
        goto done;
    }
    size_t len = lg_net_nodes_len(net);
    int *idx;
    double *wv;
    if (lg_net_row_alloc(net, &idx, &wv)) {
        rc = -3;
        goto done;
    }
    mpq_t *v = malloc(len * sizeof *v); /* [nodes_len] every node's values */
    size_t *off = malloc(((size_t)net->n_layers + 1) * sizeof *off);
    if (!v || !off) {
        free(v);
        free(off);
        free(idx);
        free(wv);
        rc = -3;
        goto done;
    }
    for (size_t i = 0; i < len; i++) mpq_init(v[i]);
    for (int k = -1; k < net->n_layers; k++) off[k + 1] = lg_net_node_offset(net, k);
    mpq_t t, c;
    mpq_init(t);
    mpq_init(c);
    rc = 0;
    for (int i = 0; i < net->n_in && !rc; i++) {
        if (!isfinite(x[i])) rc = -2;
        else mpq_set_d(v[i], x[i]);
        if (!rc && net->in_sub) {
            mpq_set_d(c, net->in_sub[i]);
            mpq_sub(v[i], v[i], c);
        }
        if (!rc && net->in_div) {
            mpq_set_d(c, net->in_div[i]);
            mpq_div(v[i], v[i], c);
        }
    }
    for (int k = 0; k < net->n_layers && !rc; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->act != LG_ACT_IDENTITY && L->act != LG_ACT_RELU) {
            rc = -2;
            break;
        }
        mpq_t *z = v + off[k + 1];
        const lg_opdef *op = lg_layer_op(L);
        if (op->flags & LG_OPF_NODE) { /* max-pool, product: the kind's rational form (core/op.h) */
            if (!op->exact_q) { /* softmax, layernorm: not rational (the enclosure decides) */
                rc = -2;
                break;
            }
            int sa = lg_layer_src(L, 0), sb = lg_layer_src(L, lg_layer_n_src(L) - 1); /* a second source, else the first */
            op->exact_q(&L->lin, (const mpq_t *)(v + off[sa + 1]), (const mpq_t *)(v + off[sb + 1]), z, t);
            continue;
        }
        for (int o = 0; o < L->n_out; o++) {
            mpq_set_d(z[o], L->b[o]);
            lg_q_row row = {z[o], v, off, t, c};
            lg_layer_row_visit(L, o, idx, wv, lg_q_row_add, &row); /* the term sum (core/op.h) */
            if (L->act == LG_ACT_RELU && mpq_sgn(z[o]) < 0) mpq_set_ui(z[o], 0, 1);
        }
    }
    const mpq_t *yo = (const mpq_t *)(v + off[net->n_layers]);
    for (int j = 0; j < no && !rc; j++) mpq_set(y[j], yo[j]);
    mpq_clear(t);
    mpq_clear(c);
    for (size_t i = 0; i < len; i++) mpq_clear(v[i]);
    free(v);
    free(off);
    free(idx);
    free(wv);
done:
    if (rc) {
        for (int j = 0; j < no; j++) mpq_clear(y[j]);
        free(y);
        return rc;
    }
    *out = y;
    return 0;
}

static void lg_exact_release(const lg_net *net, mpq_t *y)
{
    for (int j = 0; j < lg_net_n_out(net); j++) mpq_clear(y[j]);
    free(y);
}

/* s = Σ coef·y + d + slack exactly. */
static void lg_exact_lhs(mpq_t s, int n_out, const lg_lincon *L, double slack, mpq_t *y)
{
    mpq_t c, t;
    mpq_init(c);
    mpq_init(t);
    mpq_set_d(s, L->d);
    mpq_set_d(c, slack);
    mpq_add(s, s, c);
    for (int j = 0; j < n_out; j++) {
        if (L->coef[j] == 0) continue;
        mpq_set_d(c, L->coef[j]);
        mpq_mul(t, c, y[j]);
        mpq_add(s, s, t);
    }
    mpq_clear(c);
    mpq_clear(t);
}

static int lg_exact_finite_terms(int n_out, int n_terms, const lg_term *terms, const double *slack)
{
    for (int t = 0, r = 0; t < n_terms; t++)
        for (int k = 0; k < terms[t].n_cons; k++, r++) {
            const lg_lincon *L = &terms[t].cons[k];
            if (!isfinite(L->d) || (slack && !isfinite(slack[r]))) return 0;
            for (int j = 0; j < n_out; j++)
                if (!isfinite(L->coef[j])) return 0;
        }
    return 1;
}

int lg_exact_first_holding(const lg_net *net, const double *x, int n_terms, const lg_term *terms,
                           const double *slack)
{
    int n_out = lg_net_n_out(net);
    for (int k = 0; k < net->n_layers; k++)
        if ((net->layers[k].act != LG_ACT_IDENTITY && net->layers[k].act != LG_ACT_RELU) ||
            !lg_layer_is(&net->layers[k], LG_OPF_RATIONAL))
            return lg_enclose_first_holding(net, x, n_terms, terms, slack);
    if (!lg_exact_finite_terms(n_out, n_terms, terms, slack)) return -2;
    mpq_t *y = NULL;
    int rc = lg_exact_forward(net, x, &y);
    if (rc) return rc;
    mpq_t s;
    mpq_init(s);
    int found = -1;
    for (int t = 0, r = 0; t < n_terms && found < 0; r += terms[t].n_cons, t++) {
        int all = 1;
        for (int k = 0; k < terms[t].n_cons && all; k++) {
            lg_exact_lhs(s, n_out, &terms[t].cons[k], slack ? slack[r + k] : 0.0, y);
            all = mpq_sgn(s) <= 0;
        }
        if (all) found = t;
    }
    mpq_clear(s);
    lg_exact_release(net, y);
    return found;
}

double lg_exact_constraint_value(const lg_net *net, const double *x, const lg_lincon *L)
{
    int n_out = lg_net_n_out(net);
    lg_term T = {1, (lg_lincon *)L};
    if (!lg_exact_finite_terms(n_out, 1, &T, NULL)) return NAN;
    mpq_t *y = NULL;
    if (lg_exact_forward(net, x, &y)) return NAN;
    mpq_t s;
    mpq_init(s);
    lg_exact_lhs(s, n_out, L, 0.0, y);
    double v = mpq_get_d(s);
    mpq_clear(s);
    lg_exact_release(net, y);
    return v;
}
