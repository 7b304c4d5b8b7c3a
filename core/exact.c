/* exact.c — exact rational evaluation (exact.h). */
#include "core/exact.h"
#include "core/linop.h"

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

/* Forward pass without input normalisation in dyadic fixed point: layer
 * values share one exponent (a_i = A_i·2^E), so every step is an exact
 * integer multiply-add. y (mpq, [w] entries, initialised) gets the outputs.
 * 0 ok, −2 unsupported / not finite, −3 no memory. */
static int lg_exact_forward_dyadic(const lg_net *net, const double *x, mpq_t *y)
{
    int w = lg_net_max_width(net);
    int *idx;
    double *wv;
    if (lg_net_row_alloc(net, &idx, &wv)) return -3;
    mpz_t *a = malloc((size_t)w * sizeof *a), *z = malloc((size_t)w * sizeof *z);
    if (!a || !z) {
        free(a);
        free(z);
        free(idx);
        free(wv);
        return -3;
    }
    for (int i = 0; i < w; i++) {
        mpz_init(a[i]);
        mpz_init(z[i]);
    }
    mpz_t t, c;
    mpz_init(t);
    mpz_init(c);
    int rc = 0;
    long E = LONG_MAX;
    double M;
    for (int i = 0; i < net->n_in; i++) {
        if (!isfinite(x[i])) rc = -2;
        else {
            long k = lg_dy_split(x[i], &M);
            if (k < E) E = k;
        }
    }
    if (E == LONG_MAX) E = 0;
    for (int i = 0; i < net->n_in && !rc; i++) {
        long k = lg_dy_split(x[i], &M);
        lg_dy_set(a[i], M, k, E);
    }
    for (int k = 0; k < net->n_layers && !rc; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->act != LG_ACT_IDENTITY && L->act != LG_ACT_RELU) {
            rc = -2;
            break;
        }
        long kw = LONG_MAX; /* smallest weight / bias exponent of the layer */
        size_t nw = lg_layer_n_weights(L); /* the stored weights (a conv's kernel) */
        for (size_t j = 0; j < nw; j++) {
            long kk = lg_dy_split(L->W[j], &M);
            if (kk < kw) kw = kk;
        }
        long Ez = kw == LONG_MAX ? E : E + kw; /* exponent of this layer's sums */
        for (int o = 0; o < L->n_out; o++) {
            long kb = lg_dy_split(L->b[o], &M);
            if (kb < Ez) Ez = kb;
        }
        for (int o = 0; o < L->n_out; o++) {
            int nz = lg_layer_row_nz(L, o, idx, wv);
            long kb = lg_dy_split(L->b[o], &M);
            lg_dy_set(z[o], M, kb, Ez);
            for (int t2 = 0; t2 < nz; t2++) {
                int i = idx[t2];
                if (wv[t2] == 0 || mpz_sgn(a[i]) == 0) continue;
                long kk = lg_dy_split(wv[t2], &M);
                mpz_set_d(c, M);
                mpz_mul(t, c, a[i]); /* value t·2^(kk + E) */
                mpz_mul_2exp(t, t, (mp_bitcnt_t)(kk + E - Ez));
                mpz_add(z[o], z[o], t);
            }
            if (L->act == LG_ACT_RELU && mpz_sgn(z[o]) < 0) mpz_set_ui(z[o], 0);
        }
        mpz_t *s = a;
        a = z;
        z = s;
        E = Ez;
    }
    for (int j = 0; j < lg_net_n_out(net) && !rc; j++) {
        mpq_set_z(y[j], a[j]);
        if (E >= 0) mpq_mul_2exp(y[j], y[j], (mp_bitcnt_t)E);
        else mpq_div_2exp(y[j], y[j], (mp_bitcnt_t)(-E));
    }
    mpz_clear(t);
    mpz_clear(c);
    for (int i = 0; i < w; i++) {
        mpz_clear(a[i]);
        mpz_clear(z[i]);
    }
    free(a);
    free(z);
    free(idx);
    free(wv);
    return rc;
}

/* y[n_out] = f(x) exactly; 0 ok, −2 unsupported / not finite, −3 no memory. */
static int lg_exact_forward(const lg_net *net, const double *x, mpq_t **out)
{
    int w = lg_net_max_width(net);
    mpq_t *a = malloc((size_t)w * sizeof *a), *z = malloc((size_t)w * sizeof *z);
    if (!a || !z) {
        free(a);
        free(z);
        return -3;
    }
    for (int i = 0; i < w; i++) {
        mpq_init(a[i]);
        mpq_init(z[i]);
    }
    if (!net->in_sub && !net->in_div) { /* all dyadic: integer fixed point, no gcds */
        int rc = lg_exact_forward_dyadic(net, x, a);
        for (int i = 0; i < w; i++) mpq_clear(z[i]);
        free(z);
        if (rc) {
            for (int i = 0; i < w; i++) mpq_clear(a[i]);
            free(a);
            return rc;
        }
        *out = a;
        return 0;
    }
    int *idx;
    double *wv;
    if (lg_net_row_alloc(net, &idx, &wv)) {
        for (int i = 0; i < w; i++) {
            mpq_clear(a[i]);
            mpq_clear(z[i]);
        }
        free(a);
        free(z);
        return -3;
    }
    mpq_t t, c;
    mpq_init(t);
    mpq_init(c);
    int rc = 0;
    for (int i = 0; i < net->n_in && !rc; i++) {
        if (!isfinite(x[i])) rc = -2;
        else mpq_set_d(a[i], x[i]);
        if (!rc && net->in_sub) {
            mpq_set_d(c, net->in_sub[i]);
            mpq_sub(a[i], a[i], c);
        }
        if (!rc && net->in_div) {
            mpq_set_d(c, net->in_div[i]);
            mpq_div(a[i], a[i], c);
        }
    }
    for (int k = 0; k < net->n_layers && !rc; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->act != LG_ACT_IDENTITY && L->act != LG_ACT_RELU) {
            rc = -2;
            break;
        }
        for (int o = 0; o < L->n_out; o++) {
            int nz = lg_layer_row_nz(L, o, idx, wv);
            mpq_set_d(z[o], L->b[o]);
            for (int t2 = 0; t2 < nz; t2++) {
                int i = idx[t2];
                if (wv[t2] == 0 || mpq_sgn(a[i]) == 0) continue;
                mpq_set_d(c, wv[t2]);
                mpq_mul(t, c, a[i]);
                mpq_add(z[o], z[o], t);
            }
            if (L->act == LG_ACT_RELU && mpq_sgn(z[o]) < 0) mpq_set_ui(z[o], 0, 1);
        }
        mpq_t *s = a;
        a = z;
        z = s;
    }
    mpq_clear(t);
    mpq_clear(c);
    free(idx);
    free(wv);
    for (int i = 0; i < w; i++) mpq_clear(z[i]);
    free(z);
    if (rc) {
        for (int i = 0; i < w; i++) mpq_clear(a[i]);
        free(a);
        return rc;
    }
    *out = a; /* first n_out entries are y; caller clears all w */
    return 0;
}

static void lg_exact_release(const lg_net *net, mpq_t *y)
{
    int w = lg_net_max_width(net);
    for (int i = 0; i < w; i++) mpq_clear(y[i]);
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
    if (!lg_net_is_chain(net)) return -1; /* graphs: no witness accepted until the exact pass takes them */
    int n_out = lg_net_n_out(net);
    for (int k = 0; k < net->n_layers; k++)
        if (net->layers[k].act != LG_ACT_IDENTITY && net->layers[k].act != LG_ACT_RELU)
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
