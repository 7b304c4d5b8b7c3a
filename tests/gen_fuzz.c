/* gen_fuzz.c — adversarial instances with known truth (gen_fuzz.h). */
#include "gen_fuzz.h"

#include <float.h>
#include <gmp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/netfile.h"
#include "core/rng.h"
#include "oracle.h"

static double uni(lg_rng *r, double a, double b) { return a + (b - a) * lg_rng_uniform(r); }
static double pow10u(lg_rng *r, double a, double b) { return pow(10.0, uni(r, a, b)); }
static double sgn(lg_rng *r) { return lg_rng_below(r, 2) ? 1.0 : -1.0; }

/* v rounded to `bits` significant bits (exact products of such numbers). */
static double few_bits(double v, int bits)
{
    int e;
    double m = frexp(v, &e);
    return ldexp(round(ldexp(m, bits)), e - bits);
}

static void tag(lg_fuzz_case *fc, const char *t)
{
    size_t n = strlen(fc->cls);
    snprintf(fc->cls + n, sizeof fc->cls - n, "%s%s", n ? " " : "", t);
}

static void free_parts(lg_fuzz_case *fc)
{
    lg_net_free(&fc->net);
    lg_net_free(&fc->dnet);
    lg_prop_free(&fc->prop);
    lg_prop_free(&fc->dprop);
    fc->margin = 0;
    free(fc->witness);
    fc->witness = NULL;
    memset(&fc->prob, 0, sizeof fc->prob);
    fc->cls[0] = 0;
    fc->tie = 0;
}

void lg_fuzz_case_free(lg_fuzz_case *fc)
{
    free_parts(fc);
    memset(fc, 0, sizeof *fc);
}

/* Weights and biases of every layer by the class wc (0 unit, 1 layer, 2 wide).
 * A conv layer's fan-in is c_in·kh·kw; its bias is constant per output
 * channel unless pos_bias (one bias per position). */
static void fill_weights(lg_net *net, lg_rng *r, int wc, int dyadic, int pos_bias)
{
    for (int k = 0; k < net->n_layers; k++) {
        lg_layer *L = &net->layers[k];
        const lg_conv *g = &L->lin.conv;
        int conv = L->lin.kind == LG_LAYER_CONV2D;
        double ls = wc == 1 ? pow10u(r, -3, 3) : 1.0,
               fan = 1.0 / sqrt((double)(conv ? g->c_in * g->kh * g->kw : L->lin.n_in));
        size_t nw = lg_layer_n_weights(L);
        for (size_t i = 0; i < nw; i++) {
            double v = wc == 2 ? sgn(r) * pow10u(r, -6, 6) : ls * fan * lg_rng_normal(r);
            L->lin.W[i] = dyadic ? few_bits(v, 1 + (int)lg_rng_below(r, 6)) : v;
        }
        for (int i = 0; i < L->n_out; i++) {
            double v = wc == 2 ? sgn(r) * pow10u(r, -6, 6) * (double)lg_rng_below(r, 2) : 0.3 * ls * lg_rng_normal(r);
            L->b[i] = dyadic ? few_bits(v, 1 + (int)lg_rng_below(r, 6)) : v;
        }
        if (conv && !pos_bias)
            for (int i = 0; i < L->n_out; i++) L->b[i] = L->b[i - i % (g->h_out * g->w_out)];
    }
}

/* Hidden layer kc: neurons 0 and 1 compute proportional pre-activations;
 * layer kc+1 combines them so that they cancel (exactly for kind 1, up to
 * the rounding of 0.1 and 0.3 for kind 2); its other weights shrink. */
static void inject_cancel(lg_net *net, lg_rng *r, int kc, int kind)
{
    lg_layer *L = &net->layers[kc], *N = &net->layers[kc + 1];
    int ni = L->lin.n_in;
    double f = ldexp(1.0, (int)lg_rng_below(r, 21) - 10);
    for (int i = 0; i < ni; i++) {
        double v = L->lin.W[i];
        if (kind == 1) {
            L->lin.W[(size_t)ni + (size_t)i] = v * f;
        } else {
            L->lin.W[i] = 0.1 * v;
            L->lin.W[(size_t)ni + (size_t)i] = 0.3 * v;
        }
    }
    if (kind == 1) {
        L->b[1] = L->b[0] * f;
    } else {
        double beta = L->b[0];
        L->b[0] = 0.1 * beta;
        L->b[1] = 0.3 * beta;
    }
    double shrink = lg_rng_below(r, 2) ? pow10u(r, -8, 0) : 1.0;
    for (int o = 0; o < N->n_out; o++) {
        double *row = N->lin.W + (size_t)o * (size_t)N->lin.n_in;
        for (int i = 2; i < N->lin.n_in; i++) row[i] *= shrink;
        N->b[o] *= shrink;
        double c = ldexp(1.0, (int)lg_rng_below(r, 13) - 6) * sgn(r);
        if (kind == 1) {
            row[0] = c * f; /* a·h0 − c·h1 = c·f·h0 − c·f·h0 = 0 */
            row[1] = -c;
        } else {
            row[0] = 3.0 * c; /* 3·relu(0.1v·x) − relu(0.3v·x) */
            row[1] = -c;
        }
    }
}

/* The conv form of inject_cancel: conv layer kc's channel 1 kernel (and
 * biases) is channel 0's times 2^e, or channels 0 and 1 are 0.1·v and 0.3·v;
 * the next layer (dense or conv) combines every position of the two
 * channels so that they cancel; its other weights shrink. */
static void inject_cancel_conv(lg_net *net, lg_rng *r, int kc, int kind)
{
    lg_layer *L = &net->layers[kc], *N = &net->layers[kc + 1];
    const lg_conv *g = &L->lin.conv;
    int ksz = g->c_in * g->kh * g->kw, P = g->h_out * g->w_out;
    double f = ldexp(1.0, (int)lg_rng_below(r, 21) - 10);
    for (int i = 0; i < ksz; i++) {
        double v = L->lin.W[i];
        if (kind == 1) {
            L->lin.W[ksz + i] = v * f;
        } else {
            L->lin.W[i] = 0.1 * v;
            L->lin.W[ksz + i] = 0.3 * v;
        }
    }
    for (int p = 0; p < P; p++) {
        double beta = L->b[p];
        L->b[p] = kind == 1 ? beta : 0.1 * beta;
        L->b[P + p] = kind == 1 ? beta * f : 0.3 * beta;
    }
    double shrink = lg_rng_below(r, 2) ? pow10u(r, -8, 0) : 1.0;
    for (int o = 0; o < N->n_out; o++) N->b[o] *= shrink;
    if (N->lin.kind == LG_LAYER_CONV2D) {
        const lg_conv *G = &N->lin.conv;
        int nk = G->kh * G->kw;
        for (int o = 0; o < G->c_out; o++) {
            double *blk = N->lin.W + (size_t)o * (size_t)G->c_in * (size_t)nk;
            for (int i = 2 * nk; i < G->c_in * nk; i++) blk[i] *= shrink;
            double c = ldexp(1.0, (int)lg_rng_below(r, 13) - 6) * sgn(r);
            for (int u = 0; u < nk; u++) {
                blk[u] = kind == 1 ? c * f : 3.0 * c;
                blk[nk + u] = -c;
            }
        }
        return;
    }
    for (int o = 0; o < N->n_out; o++) {
        double *row = N->lin.W + (size_t)o * (size_t)N->lin.n_in;
        for (int i = 2 * P; i < N->lin.n_in; i++) row[i] *= shrink;
        double c = ldexp(1.0, (int)lg_rng_below(r, 13) - 6) * sgn(r);
        for (int p = 0; p < P; p++) {
            row[p] = kind == 1 ? c * f : 3.0 * c;
            row[P + p] = -c;
        }
    }
}

/* A small conv net drawn from r3: a C×H×W image (C 1–2, H, W 2–4, at most
 * 9 values), 1–2
 * conv layers (1–3 channels, kernels 1–3 each way, strides 1–2, padding
 * 0–1, at most 8 outputs unless the cancellation needs a second
 * channel), 0–1 dense hidden layers of width 1–4, then n_out. Layer kc
 * (< *n_hid) gets a second channel or width 2 when cancel > 0. */
static lg_status draw_conv_net(lg_net *net, lg_rng *r3, int n_out, int cancel, int *kc, int *n_hid)
{
    int c = 1 + (int)lg_rng_below(r3, 2), h = 2 + (int)lg_rng_below(r3, 3), w = 2 + (int)lg_rng_below(r3, 3);
    int n_conv = 1 + (int)lg_rng_below(r3, 2), n_dense = (int)lg_rng_below(r3, 2);
    while (c * h * w > 9) { /* the exact oracle's LPs grow with the inputs */
        if (w > 2) w--;
        else h--;
    }
    *n_hid = n_conv + n_dense;
    *kc = (int)lg_rng_below(r3, (uint32_t)*n_hid);
    lg_conv cv[2];
    const lg_conv *cp[4] = {NULL, NULL, NULL, NULL};
    int dims[5];
    dims[0] = c * h * w;
    for (int k = 0; k < n_conv; k++) {
        lg_conv *g = &cv[k];
        memset(g, 0, sizeof *g);
        g->c_in = c, g->h_in = h, g->w_in = w;
        g->c_out = 1 + (int)lg_rng_below(r3, 3);
        g->kh = 1 + (int)lg_rng_below(r3, 3), g->kw = 1 + (int)lg_rng_below(r3, 3);
        g->sh = 1 + (int)lg_rng_below(r3, 2), g->sw = 1 + (int)lg_rng_below(r3, 2);
        g->ph = (int)lg_rng_below(r3, 2), g->pw = (int)lg_rng_below(r3, 2);
        if (g->kh > h + 2 * g->ph) g->kh = h + 2 * g->ph;
        if (g->kw > w + 2 * g->pw) g->kw = w + 2 * g->pw;
        g->h_out = lg_conv_out_size(h, g->kh, g->sh, g->ph);
        g->w_out = lg_conv_out_size(w, g->kw, g->sw, g->pw);
        while (g->c_out > 1 && g->c_out * g->h_out * g->w_out > 8) g->c_out--;
        if (cancel > 0 && k == *kc && g->c_out < 2) g->c_out = 2;
        c = g->c_out, h = g->h_out, w = g->w_out;
        dims[k + 1] = c * h * w;
        cp[k] = g;
    }
    for (int k = n_conv; k < *n_hid; k++) {
        dims[k + 1] = 1 + (int)lg_rng_below(r3, 4);
        if (cancel > 0 && k == *kc && dims[k + 1] < 2) dims[k + 1] = 2;
    }
    dims[*n_hid + 1] = n_out;
    return lg_net_init_conv(net, *n_hid + 1, dims, cp, LG_ACT_RELU);
}

static lg_status alloc_prop(lg_prop *p, int n_in, int n_out, int n_terms, const int *n_cons)
{
    lg_status st = lg_prop_alloc(p, n_in, n_out, n_terms, n_cons);
    return st == LG_OK ? LG_OK : lg_fail(st, "fuzz: out of memory");
}

/* Network, box and property shape; constants d relative to the centre. */
static lg_status draw(lg_fuzz_case *fc, lg_rng *r, lg_rng *r2, lg_rng *r3, lg_rng *r4, int conv, int dag)
{
    int n_in = 1 + (int)lg_rng_below(r, 4), n_hid = 1 + (int)lg_rng_below(r, 3), n_out = 1 + (int)lg_rng_below(r, 3);
    int dims[5];
    dims[0] = n_in;
    for (int k = 1; k <= n_hid; k++) dims[k] = 1 + (int)lg_rng_below(r, 4);
    dims[n_hid + 1] = n_out;
    int cancel = (int)lg_rng_below(r, 5) - 2, kc = (int)lg_rng_below(r, (uint32_t)n_hid); /* cancel ≤ 0: none */
    if (cancel > 0 && dims[kc + 1] < 2) dims[kc + 1] = 2;
    int pos_bias = conv && lg_rng_below(r3, 3) == 0;
    lg_test_dag_opts go = {.max_nodes = 3, .max_width = 4, .conv = dag && lg_rng_below(r4, 2) == 0,
                           .act = LG_ACT_RELU, .n_out = n_out, .maxpool = 1};
    lg_status st = dag    ? lg_test_dag_random(&fc->net, r4, &go)
                   : conv ? draw_conv_net(&fc->net, r3, n_out, cancel, &kc, &n_hid)
                          : lg_net_init(&fc->net, n_hid + 1, dims, LG_ACT_RELU);
    if (st) return st;
    lg_net *net = &fc->net;
    n_in = net->n_in;
    n_out = lg_net_n_out(net);
    if (conv) tag(fc, pos_bias ? "conv pos-bias" : "conv");
    if (dag) tag(fc, lg_net_has_conv(net) ? "dag dag-conv" : "dag");
    if (dag && lg_net_has_max(net)) tag(fc, "dag-max");
    int wc = (int)lg_rng_below(r, 3), dyadic = lg_rng_below(r, 4) == 0;
    if (dag) { /* gen_graph's weights, N(0, 1/fan_in) over every term; no weight class, no cancel */
        cancel = 0;
    } else {
        tag(fc, wc == 0 ? "w-unit" : wc == 1 ? "w-layer" : "w-wide");
        if (dyadic) tag(fc, "dyadic");
        fill_weights(net, r, wc, dyadic, pos_bias);
    }
    if (cancel > 0) {
        if (net->layers[kc].lin.kind == LG_LAYER_CONV2D)
            inject_cancel_conv(net, r, kc, cancel);
        else
            inject_cancel(net, r, kc, cancel);
        tag(fc, cancel == 1 ? "cancel2" : "cancel10");
    }
    /* box */
    int big = lg_rng_below(r, 4) == 0, huge = big && lg_rng_below(r, 4) == 0;
    if (big) tag(fc, huge ? "huge" : "big");
    double *x0 = calloc((size_t)n_in, sizeof *x0), *hw = calloc((size_t)n_in, sizeof *hw);
    LG_ASSERT(x0 && hw);
    for (int i = 0; i < n_in; i++) {
        x0[i] = big ? sgn(r) * pow10u(r, 0, huge ? 308 : 10) : uni(r, -1, 1);
        hw[i] = big ? fabs(x0[i]) * pow10u(r, -12, 0) : pow10u(r, -3, 0);
        if (lg_rng_below(r, 10) == 0 || (huge && lg_rng_below(r, 2))) hw[i] = 0; /* a pinned input */
    }
    int point = !big && lg_rng_below(r2, 10) == 0, xdiv = lg_rng_below(r2, 3) == 0;
    if (point) {
        tag(fc, "point");
        for (int i = 0; i < n_in; i++) hw[i] = 0;
    }
    if (lg_rng_below(r, 3) == 0) {
        tag(fc, "norm");
        net->in_sub = malloc((size_t)n_in * sizeof *net->in_sub);
        net->in_div = malloc((size_t)n_in * sizeof *net->in_div);
        LG_ASSERT(net->in_sub && net->in_div);
        for (int i = 0; i < n_in; i++) {
            net->in_sub[i] = x0[i] + hw[i] * lg_rng_normal(r);
            net->in_div[i] = (lg_rng_below(r, 8) == 0 ? -1.0 : 1.0) * pow10u(r, -3, 3) * (hw[i] > 0 ? hw[i] : 1.0);
            if (xdiv) /* an exact power of two far from the box's scale */
                net->in_div[i] = ldexp(lg_rng_below(r2, 2) ? 1.0 : -1.0,
                                       (lg_rng_below(r2, 2) ? 1 : -1) * (40 + (int)lg_rng_below(r2, 21)));
        }
        if (xdiv) tag(fc, "xdiv");
    }
    /* property */
    double *y0 = calloc((size_t)n_out, sizeof *y0), *scr = calloc(2 * (size_t)lg_net_max_width(net), sizeof *scr);
    LG_ASSERT(y0 && scr);
    lg_net_forward(net, x0, y0, scr);
    int robust = n_out >= 2 && lg_rng_below(r, 2), n_terms, n_cons[3] = {1, 1, 1}, conj = 0;
    int label = 0;
    if (robust) {
        for (int j = 1; j < n_out; j++)
            if (y0[j] > y0[label]) label = j;
        conj = n_out >= 3 && lg_rng_below(r, 3) == 0;
        n_terms = conj ? 1 : n_out - 1;
        if (conj) n_cons[0] = 2;
    } else {
        n_terms = 1 + (int)lg_rng_below(r, 3);
        for (int t = 0; t < n_terms; t++) {
            n_cons[t] = 1 + (int)lg_rng_below(r, 3);
            if (n_cons[t] > 1) conj = 1;
        }
    }
    tag(fc, robust ? "robust" : "lin");
    if (n_terms > 1) tag(fc, "disj");
    if (conj) tag(fc, "conj");
    st = alloc_prop(&fc->prop, n_in, n_out, n_terms, n_cons);
    if (st == LG_OK) {
        lg_prop_case *C = &fc->prop.cases[0];
        for (int i = 0; i < n_in; i++) {
            C->lo[i] = x0[i] - hw[i];
            C->hi[i] = x0[i] + hw[i];
        }
        for (int t = 0, j = 0; t < n_terms; t++) {
            for (int k = 0; k < n_cons[t]; k++) {
                lg_lincon *L = &C->terms[t].cons[k];
                if (robust) {
                    if (j == label) j++;
                    L->coef[label] = 1.0;
                    L->coef[j++] = -1.0;
                } else {
                    int kind = (int)lg_rng_below(r, 3), any = 0;
                    for (int q = 0; q < n_out; q++) {
                        double v = kind == 0 ? (double)lg_rng_below(r, 7) - 3.0
                                   : kind == 1 ? lg_rng_normal(r)
                                               : sgn(r) * pow10u(r, -3, 3);
                        L->coef[q] = v;
                        any |= v != 0;
                    }
                    if (!any) L->coef[0] = 1.0;
                }
                double v = 0;
                for (int q = 0; q < n_out; q++) v += L->coef[q] * y0[q];
                L->d = robust ? 0.0 : -v + 0.1 * (1.0 + fabs(v)) * lg_rng_normal(r);
            }
        }
        int dense = conv || lg_net_has_conv(net) || lg_net_has_max(net);
        if (dense) { /* the oracle's own dense form (of the max-pool nodes' exact ReLU form): structured-vs-dense
                        mistakes show as wrong verdicts */
            lg_net low = {0};
            st = lg_net_has_max(net) ? lg_net_lower_max(&low, net, 0) : LG_OK;
            if (st == LG_OK) st = lg_net_densify(&fc->dnet, low.n_layers ? &low : net, 0);
            lg_net_free(&low);
        }
        fc->prob.net = dense ? &fc->dnet : net;
        fc->prob.lo = C->lo;
        fc->prob.hi = C->hi;
        fc->prob.n_terms = C->n_terms;
        fc->prob.terms = C->terms;
    }
    free(x0);
    free(hw);
    free(y0);
    free(scr);
    return st;
}

/* Shift every constant by −gap + δ (in rationals, then rounded to double).
 * LG_ERR_ARG (draw again) if a constant leaves the doubles. */
static lg_status shift_constants(lg_fuzz_case *fc, const mpq_t gap, double delta)
{
    lg_status st = LG_OK;
    mpq_t v, t, dmax;
    mpq_inits(v, t, dmax, NULL);
    mpq_set_d(dmax, DBL_MAX);
    lg_prop_case *C = &fc->prop.cases[0];
    for (int k = 0; k < C->n_terms; k++)
        for (int c = 0; c < C->terms[k].n_cons; c++) {
            lg_lincon *L = &C->terms[k].cons[c];
            mpq_set_d(v, L->d);
            mpq_sub(v, v, gap);
            mpq_set_d(t, delta);
            mpq_add(v, v, t);
            mpq_abs(t, v);
            if (mpq_cmp(t, dmax) > 0) st = LG_ERR_ARG;
            L->d = st ? 0.0 : mpq_get_d(v);
        }
    mpq_clears(v, t, dmax, NULL);
    return st;
}

lg_status lg_fuzz_prop_copy(lg_prop *dst, const lg_prop *src)
{
    const lg_prop_case *S = &src->cases[0];
    int n_cons[3] = {0, 0, 0};
    for (int t = 0; t < S->n_terms && t < 3; t++) n_cons[t] = S->terms[t].n_cons;
    lg_status st = alloc_prop(dst, src->n_in, src->n_out, S->n_terms, n_cons);
    if (st) return st;
    lg_prop_case *D = &dst->cases[0];
    memcpy(D->lo, S->lo, (size_t)src->n_in * sizeof *D->lo);
    memcpy(D->hi, S->hi, (size_t)src->n_in * sizeof *D->hi);
    for (int t = 0; t < S->n_terms; t++)
        for (int k = 0; k < S->terms[t].n_cons; k++) {
            memcpy(D->terms[t].cons[k].coef, S->terms[t].cons[k].coef, (size_t)src->n_out * sizeof(double));
            D->terms[t].cons[k].d = S->terms[t].cons[k].d;
        }
    return LG_OK;
}

/* d − K rounded down, in rationals. */
static double sub_down(double d, double K)
{
    mpq_t e, t;
    mpq_inits(e, t, NULL);
    mpq_set_d(e, d);
    mpq_set_d(t, K);
    mpq_sub(e, e, t);
    double v = mpq_get_d(e); /* truncated toward zero */
    mpq_set_d(t, v);
    if (mpq_cmp(t, e) > 0) v = nextafter(v, -INFINITY);
    mpq_clears(e, t, NULL);
    return v;
}

/* The classes that act after the truth is known: trivial / empty terms and margins. */
static lg_status late_classes(lg_fuzz_case *fc, lg_rng *r2)
{
    lg_prop_case *C = &fc->prop.cases[0];
    int n_in = fc->net.n_in;
    if (lg_rng_below(r2, 10) == 0) { /* a term true everywhere: truth violated, any point a witness */
        int t = (int)lg_rng_below(r2, (uint32_t)C->n_terms), empty = lg_rng_below(r2, 2);
        lg_term *T = &C->terms[t];
        for (int k = 0; k < T->n_cons; k++) {
            memset(T->cons[k].coef, 0, (size_t)fc->prop.n_out * sizeof(double));
            T->cons[k].d = lg_rng_below(r2, 2) ? 0.0 : -pow10u(r2, -300, 0);
        }
        if (empty) {
            for (int k = 0; k < T->n_cons; k++) free(T->cons[k].coef);
            T->n_cons = 0;
        }
        tag(fc, empty ? "empty" : "trivial");
        fc->truth = LG_ANSWER_SAT;
        free(fc->witness);
        fc->witness = malloc((size_t)n_in * sizeof *fc->witness);
        LG_ASSERT(fc->witness);
        memcpy(fc->witness, C->lo, (size_t)n_in * sizeof *fc->witness);
        return LG_OK;
    }
    if (lg_rng_below(r2, 6) != 0) return LG_OK;
    double dmax = 0;
    for (int t = 0; t < C->n_terms; t++)
        for (int k = 0; k < C->terms[t].n_cons; k++)
            if (fabs(C->terms[t].cons[k].d) > dmax) dmax = fabs(C->terms[t].cons[k].d);
    static const double f[] = {0.25, 0.5, 0.75, 1.0, 1.5, 3.0};
    int kind = (int)lg_rng_below(r2, 8);
    double K = kind == 0 ? 1e-17 : kind == 1 ? 3 * 0x1p-54 : ldexp(f[kind - 2], -53) * (dmax > 0 ? dmax : 1.0);
    if (!(K > 0) || !isfinite(K)) return LG_OK;
    tag(fc, "margin");
    fc->margin = K;
    lg_status st = lg_fuzz_prop_copy(&fc->dprop, &fc->prop);
    if (st == LG_OK) st = lg_prop_margin(&fc->dprop, K);
    if (st != LG_OK) return lg_fail(LG_ERR_NOMEM, "fuzz: out of memory");
    if (fc->truth == LG_ANSWER_SAT) return LG_OK; /* the region only grew */
    /* robust on d; robust on d − K too unless the oracle finds a point on d − K rounded down */
    int m = 0;
    for (int t = 0; t < C->n_terms; t++) m += C->terms[t].n_cons;
    double *save = malloc(((size_t)m + 1) * sizeof *save);
    LG_ASSERT(save);
    for (int t = 0, i = 0; t < C->n_terms; t++)
        for (int k = 0; k < C->terms[t].n_cons; k++, i++) {
            save[i] = C->terms[t].cons[k].d;
            C->terms[t].cons[k].d = sub_down(save[i], K);
        }
    lg_answer a;
    long n = 0;
    st = lg_oracle_decide(&fc->prob, &a, NULL, &n);
    fc->n_lp += n;
    for (int t = 0, i = 0; t < C->n_terms; t++)
        for (int k = 0; k < C->terms[t].n_cons; k++, i++) C->terms[t].cons[k].d = save[i];
    free(save);
    if (st == LG_OK && a == LG_ANSWER_SAT) fc->truth = LG_ANSWER_UNKNOWN;
    return st;
}

static lg_status try_make(lg_fuzz_case *fc, lg_rng *r, lg_rng *r2, lg_rng *r3, lg_rng *r4, int conv, int dag)
{
    lg_status st = draw(fc, r, r2, r3, r4, conv, dag);
    if (st) return st;
    mpq_t gap;
    mpq_init(gap);
    long n1 = 0, n2 = 0;
    st = lg_oracle_gap(&fc->prob, gap, NULL, &n1);
    if (st == LG_OK) {
        double g = fabs(mpq_get_d(gap)), scale = 1.0;
        const lg_prop_case *C = &fc->prop.cases[0];
        for (int k = 0; k < C->n_terms; k++)
            for (int c = 0; c < C->terms[k].n_cons; c++)
                if (fabs(C->terms[k].cons[c].d) > scale) scale = fabs(C->terms[k].cons[c].d);
        if (g > scale) scale = g;
        int mode = (int)lg_rng_below(r, 8);
        double delta;
        if (!isfinite(g) || !isfinite(scale)) { /* the exact depth is beyond the doubles: draw again */
            mpq_clear(gap);
            return LG_ERR_ARG;
        }
        if (mode < 3) { /* spread: either verdict, clear margin */
            delta = lg_rng_normal(r) * (1e-3 + 0.5 * g);
        } else if (mode < 7) {
            int e = -14 + (int)lg_rng_below(r, 12);
            delta = sgn(r) * pow(10.0, e) * scale;
            fc->tie = fabs(delta);
            char s[16];
            snprintf(s, sizeof s, "tie%d", e);
            tag(fc, s);
        } else {
            delta = 0;
            tag(fc, "tie-0");
        }
        st = isfinite(delta) ? shift_constants(fc, gap, delta) : LG_ERR_ARG;
    }
    if (st == LG_OK) {
        int n = fc->net.n_in;
        mpq_t *x = malloc((size_t)n * sizeof *x);
        LG_ASSERT(x);
        for (int i = 0; i < n; i++) mpq_init(x[i]);
        st = lg_oracle_decide(&fc->prob, &fc->truth, x, &n2);
        if (st == LG_OK && fc->truth == LG_ANSWER_SAT) {
            fc->witness = malloc((size_t)n * sizeof *fc->witness);
            LG_ASSERT(fc->witness);
            for (int i = 0; i < n; i++) fc->witness[i] = mpq_get_d(x[i]);
        }
        for (int i = 0; i < n; i++) mpq_clear(x[i]);
        free(x);
    }
    fc->n_lp = n1 + n2;
    mpq_clear(gap);
    if (st == LG_OK) st = late_classes(fc, r2);
    return st;
}

lg_status lg_fuzz_case_make(lg_fuzz_case *fc, uint64_t seed, long index)
{
    memset(fc, 0, sizeof *fc);
    fc->seed = seed;
    fc->index = index;
    lg_rng r, r2, r3, r4;
    lg_rng_init(&r, seed, (uint64_t)index);
    lg_rng_init(&r2, seed ^ 0x5eed5eed5eedULL, (uint64_t)index); /* the newer classes' own stream */
    lg_rng_init(&r3, seed ^ 0xc0c0c0c0c0c0ULL, (uint64_t)index); /* the conv class's own stream */
    lg_rng_init(&r4, seed ^ 0xda9da9da9da9ULL, (uint64_t)index); /* the dag class's own stream */
    int conv = lg_rng_below(&r3, 5) == 0, dag = !conv && lg_rng_below(&r4, 4) == 0;
    for (int attempt = 0; attempt < 200; attempt++) {
        /* conv, dag: a dense chain after 150 draws */
        lg_status st = try_make(fc, &r, &r2, &r3, &r4, conv && attempt < 150, dag && attempt < 150);
        if (st == LG_OK) return LG_OK;
        free_parts(fc);
        if (st != LG_ERR_ARG) return st; /* LG_ERR_ARG: too many unstable ReLUs, draw again */
    }
    return lg_fail(LG_ERR_SOLVER, "fuzz: case %lu/%ld: no instance with ≤ %d unstable ReLUs in 200 draws",
                   (unsigned long)seed, index, LG_ORACLE_MAX_UNSTABLE);
}

static void write_lin(FILE *f, const lg_lincon *L, int n_out)
{
    /* coef·y + d ≤ 0 written as (<= (+ (* c Y_j) ...) −d) */
    fprintf(f, "(<= (+");
    for (int j = 0; j < n_out; j++)
        if (L->coef[j] != 0) fprintf(f, " (* %.17g Y_%d)", L->coef[j], j);
    fprintf(f, " 0) %.17g)", -L->d);
}

lg_status lg_fuzz_case_dump(const lg_fuzz_case *fc, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/net.lgnet", dir);
    lg_status st = lg_netfile_write(&fc->net, path);
    if (st) return st;
    snprintf(path, sizeof path, "%s/prop.vnnlib", dir);
    FILE *f = fopen(path, "w");
    if (!f) return lg_fail(LG_ERR_IO, "%s: cannot write", path);
    const lg_prop *p = &fc->prop;
    const lg_prop_case *C = &p->cases[0];
    fprintf(f, "; soundfuzz seed %lu case %ld: %s; oracle: %s\n", (unsigned long)fc->seed, fc->index, fc->cls,
            fc->truth == LG_ANSWER_SAT ? "violated" : "robust");
    for (int i = 0; i < p->n_in; i++) fprintf(f, "(declare-const X_%d Real)\n", i);
    for (int j = 0; j < p->n_out; j++) fprintf(f, "(declare-const Y_%d Real)\n", j);
    for (int i = 0; i < p->n_in; i++) fprintf(f, "(assert (>= X_%d %.17g))\n(assert (<= X_%d %.17g))\n", i, C->lo[i], i, C->hi[i]);
    fprintf(f, "(assert (or");
    for (int t = 0; t < C->n_terms; t++) {
        fprintf(f, "\n  (and");
        for (int c = 0; c < C->terms[t].n_cons; c++) {
            fprintf(f, " ");
            write_lin(f, &C->terms[t].cons[c], p->n_out);
        }
        fprintf(f, ")");
    }
    fprintf(f, "))\n");
    if (fclose(f) != 0) return lg_fail(LG_ERR_IO, "%s: write failed", path);
    return LG_OK;
}

void lg_fuzz_case_print(const lg_fuzz_case *fc, FILE *f)
{
    const lg_net *net = &fc->net;
    fprintf(f, "  case seed=%lu index=%ld [%s] oracle=%s\n", (unsigned long)fc->seed, fc->index, fc->cls,
            fc->truth == LG_ANSWER_SAT ? "violated" : "robust");
    fprintf(f, "  dims %d", net->n_in);
    for (int k = 0; k < net->n_layers; k++) fprintf(f, "-%d", net->layers[k].n_out);
    fprintf(f, "\n");
    for (int i = 0; i < net->n_in; i++) {
        fprintf(f, "  x%d in [%a, %a]", i, fc->prob.lo[i], fc->prob.hi[i]);
        if (net->in_sub) fprintf(f, "  norm (x - %a) / %a", net->in_sub[i], net->in_div[i]);
        fprintf(f, "\n");
    }
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        const char *act = L->act == LG_ACT_RELU ? "relu" : "id";
        if (L->lin.kind == LG_LAYER_MAX || L->lin.kind == LG_LAYER_INDEX || L->n_terms > 0) { /* graph nodes: the shape */
            const lg_conv *g = &L->lin.conv;
            if (L->lin.kind == LG_LAYER_MAX)
                fprintf(f, "  L%d max-pool from %d: %dx%dx%d -> %dx%dx%d window %dx%d stride %dx%d pad %dx%d\n", k, L->lin.src,
                        g->c_in, g->h_in, g->w_in, g->c_out, g->h_out, g->w_out, g->kh, g->kw, g->sh, g->sw, g->ph, g->pw);
            else
                fprintf(f, "  L%d graph node: %d terms, %d -> %d %s\n", k, lg_layer_n_lin(L), L->lin.n_in, L->n_out, act);
            continue;
        }
        if (L->lin.kind == LG_LAYER_CONV2D) {
            const lg_conv *g = &L->lin.conv;
            fprintf(f, "  L%d conv %dx%dx%d -> %dx%dx%d kernel %dx%d stride %dx%d pad %dx%d %s\n", k, g->c_in, g->h_in,
                    g->w_in, g->c_out, g->h_out, g->w_out, g->kh, g->kw, g->sh, g->sw, g->ph, g->pw, act);
            size_t nk = (size_t)g->c_in * (size_t)g->kh * (size_t)g->kw;
            for (int o = 0; o < g->c_out; o++) {
                fprintf(f, "  L%d ch%d: K=", k, o);
                for (size_t i = 0; i < nk; i++) fprintf(f, "%s%a", i ? "," : "", L->lin.W[(size_t)o * nk + i]);
                fprintf(f, " b=");
                for (int p = 0; p < g->h_out * g->w_out; p++)
                    fprintf(f, "%s%a", p ? "," : "", L->b[o * g->h_out * g->w_out + p]);
                fprintf(f, "\n");
            }
            continue;
        }
        for (int o = 0; o < L->n_out; o++) {
            fprintf(f, "  L%d n%d %s: b=%a W=", k, o, act, L->b[o]);
            for (int i = 0; i < L->lin.n_in; i++) fprintf(f, "%s%a", i ? "," : "", L->lin.W[(size_t)o * (size_t)L->lin.n_in + (size_t)i]);
            fprintf(f, "\n");
        }
    }
    for (int t = 0; t < fc->prob.n_terms; t++) {
        fprintf(f, "  term %d:", t);
        for (int c = 0; c < fc->prob.terms[t].n_cons; c++) {
            const lg_lincon *L = &fc->prob.terms[t].cons[c];
            fprintf(f, "%s", c ? " AND" : "");
            for (int j = 0; j < lg_net_n_out(net); j++)
                if (L->coef[j] != 0) fprintf(f, " %+a*y%d", L->coef[j], j);
            fprintf(f, " %+a <= 0", L->d);
        }
        fprintf(f, "\n");
    }
    if (fc->witness) {
        fprintf(f, "  oracle witness (rounded):");
        for (int i = 0; i < net->n_in; i++) fprintf(f, " %.17g", fc->witness[i]);
        fprintf(f, "\n");
    }
}
