/* check_soundness_bounds.c — floating-point soundness of the bound
 * computations (DESIGN.md §3 "Floating point and overflow in the bounds") against exact rational
 * arithmetic (GMP): the ReLU relaxation, interval/symbolic/α/LP bounds on
 * hand-built cancelling networks and on random networks with weights over
 * 1e-6..1e6, near-ties and huge inputs, and the verdict of lg_verify_run
 * with the bounds as the only proof (never `robust` when an exact
 * evaluation shows a counterexample; never an error on extreme input).
 *
 * Truth: the network is the real-valued one whose weights are the file's
 * doubles read as exact rationals (DESIGN.md §3); every "true value" below is
 * computed with mpq_t from those doubles. */
#include <check.h>
#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/netfile.h"
#include "core/clock.h"
#include "testutil.h"
#include "test_solver.h"
#include "verify/alpha.h"
#include "verify/bounds.h"
#include "verify/relax.h"
#include "verify/verify.h"


/* Random-net count: LG_SOUNDNESS_BOUNDS_NETS=N overrides (long runs), with
 * LG_SOUNDNESS_BOUNDS_SEED=S for another sequence. */
static int lg_tsb_count(int quick, int full)
{
    const char *e = getenv("LG_SOUNDNESS_BOUNDS_NETS");
    if (e && atoi(e) > 0) return atoi(e);
    return lg_test_quick() ? quick : full;
}

static unsigned long lg_tsb_seed(unsigned long s)
{
    const char *e = getenv("LG_SOUNDNESS_BOUNDS_SEED");
    return e ? s + 1000003ul * strtoul(e, NULL, 10) : s;
}

/* ---- exact evaluation ---- */

#define LG_TSB_W 16 /* widest layer of the nets below */

/* Exact pre-activations z[k][i] (z: LG_TSB_W per layer, n_layers rows) and
 * outputs y[n_out] of net at x; every mpq_t is initialised by the caller. */
static void lg_tsb_exact(const lg_net *net, const double *x, mpq_t (*z)[LG_TSB_W], mpq_t *y)
{
    mpq_t a[LG_TSB_W], t, u;
    mpq_init(t);
    mpq_init(u);
    for (int i = 0; i < LG_TSB_W; i++) mpq_init(a[i]);
    for (int i = 0; i < net->n_in; i++) {
        mpq_set_d(a[i], x[i]);
        if (net->in_sub) {
            mpq_set_d(t, net->in_sub[i]);
            mpq_sub(a[i], a[i], t);
        }
        if (net->in_div) {
            mpq_set_d(t, net->in_div[i]);
            mpq_div(a[i], a[i], t);
        }
    }
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        ck_assert_int_le(L->n_out, LG_TSB_W);
        for (int o = 0; o < L->n_out; o++) {
            mpq_set_d(z[k][o], L->b[o]);
            for (int i = 0; i < L->lin.n_in; i++) {
                mpq_set_d(t, L->lin.W[(size_t)o * (size_t)L->lin.n_in + (size_t)i]);
                mpq_mul(u, t, a[i]);
                mpq_add(z[k][o], z[k][o], u);
            }
        }
        for (int o = 0; o < L->n_out; o++) {
            mpq_set(a[o], z[k][o]);
            if (L->act == LG_ACT_RELU && mpq_sgn(a[o]) < 0) mpq_set_ui(a[o], 0, 1);
        }
    }
    for (int o = 0; o < lg_net_n_out(net); o++) mpq_set(y[o], a[o]);
    for (int i = 0; i < LG_TSB_W; i++) mpq_clear(a[i]);
    mpq_clear(t);
    mpq_clear(u);
}

/* sign of (v − d) for a double d that may be ±∞; 0 for NaN (reported
 * separately; GMP must never see a non-finite double). */
static int lg_tsb_cmp_d(const mpq_t v, double d)
{
    if (isnan(d)) return 0;
    if (d == INFINITY) return -1;
    if (d == -INFINITY) return 1;
    mpq_t t;
    mpq_init(t);
    mpq_set_d(t, d);
    int c = mpq_cmp(v, t);
    mpq_clear(t);
    return c;
}

/* The smallest double ≥ v. */
static double lg_tsb_ceil_d(const mpq_t v)
{
    double d = mpq_get_d(v); /* truncates toward zero */
    return lg_tsb_cmp_d(v, d) > 0 ? nextafter(d, INFINITY) : d;
}

/* Exact outputs and pre-activations at x, in one allocation. */
typedef struct lg_tsb_eval {
    mpq_t z[8][LG_TSB_W];
    mpq_t y[LG_TSB_W];
} lg_tsb_eval;

static lg_tsb_eval *lg_tsb_eval_new(void)
{
    lg_tsb_eval *e = malloc(sizeof *e);
    ck_assert_ptr_nonnull(e);
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < LG_TSB_W; i++) mpq_init(e->z[k][i]);
    for (int i = 0; i < LG_TSB_W; i++) mpq_init(e->y[i]);
    return e;
}

static void lg_tsb_eval_free(lg_tsb_eval *e)
{
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < LG_TSB_W; i++) mpq_clear(e->z[k][i]);
    for (int i = 0; i < LG_TSB_W; i++) mpq_clear(e->y[i]);
    free(e);
}

/* ---- the ReLU relaxation ---- */

/* λ·relu(z) ≥ coef·z + icpt − err at z (exact). */
static int lg_tsb_relax_holds(double lam, double z, double coef, double icpt, double err)
{
    if (err == INFINITY) return 1; /* no claim: the chain's bound becomes −∞ */
    if (!isfinite(coef) || !isfinite(icpt) || isnan(err)) return 0;
    mpq_t lhs, rhs, t;
    mpq_inits(lhs, rhs, t, NULL);
    mpq_set_d(lhs, z > 0 ? z : 0.0);
    mpq_set_d(t, lam);
    mpq_mul(lhs, lhs, t);
    mpq_set_d(rhs, coef);
    mpq_set_d(t, z);
    mpq_mul(rhs, rhs, t);
    mpq_set_d(t, icpt);
    mpq_add(rhs, rhs, t);
    mpq_set_d(t, err);
    mpq_sub(rhs, rhs, t);
    int ok = mpq_cmp(lhs, rhs) >= 0;
    mpq_clears(lhs, rhs, t, NULL);
    return ok;
}

static double lg_tsb_logu(lg_rng *r, double lo_exp, double hi_exp)
{
    return pow(10.0, lo_exp + (hi_exp - lo_exp) * lg_rng_uniform(r));
}

/* The chord is above the ReLU at both ends for the exact reals, ≤ 1; the
 * applied relaxation holds at l, 0 and u (it is piecewise linear in z with
 * its kink at 0, so these three points decide it) for random λ, α and
 * bounds from 1e-300 to 1e300, including subnormal and lopsided ones. */
START_TEST(test_soundness_bounds_relax_exact)
{
    lg_rng r;
    lg_rng_init(&r, 1101, 1);
    int n = lg_test_quick() ? 3000 : 20000, bad = 0;
    for (int t = 0; t < n; t++) {
        double l = -lg_tsb_logu(&r, -300, 300), u = lg_tsb_logu(&r, -300, 300);
        if (t % 7 == 0) u = 0x1p-1060 * (1 + lg_rng_below(&r, 100)); /* subnormal */
        if (t % 11 == 0) l = -u * (1 + 1e-15 * lg_rng_below(&r, 5));  /* near-equal ends */
        if (t % 13 == 0) l = -0.1 * (1 + lg_rng_below(&r, 9)), u = 0.3 * (1 + lg_rng_below(&r, 9));
        double s = lg_relax_chord(l, u);
        ck_assert_msg(s > 0 && s <= 1.0, "chord(%a, %a) = %a", l, u, s);
        /* s·(u − l) ≥ u exactly */
        mpq_t a, b;
        mpq_inits(a, b, NULL);
        mpq_set_d(a, u);
        mpq_set_d(b, l);
        mpq_sub(a, a, b);
        mpq_set_d(b, s);
        mpq_mul(a, a, b);
        mpq_set_d(b, u);
        ck_assert_msg(mpq_cmp(a, b) >= 0, "chord(%a, %a) = %a below u/(u - l)", l, u, s);
        mpq_clears(a, b, NULL);
        double alpha = t % 3 == 0 ? lg_rng_uniform(&r) : (double)(t % 2);
        double lam = (lg_rng_uniform(&r) < 0.5 ? -1 : 1) * lg_tsb_logu(&r, -20, 20);
        double ls[3] = {l, u, -u}, us[3] = {u, l > 0 ? l : -l, -l}; /* unstable, active, inactive */
        for (int c = 0; c < 3; c++) {
            double cl = c == 0 ? l : c == 1 ? fmin(ls[1], us[1]) : -fmax(fabs(l), u),
                   cu = c == 0 ? u : c == 1 ? fmax(ls[1], us[1]) : -fmin(fabs(l), u);
            lg_relu_lines ln;
            lg_relax_relu_lines(cl, cu, alpha, &ln);
            double coef, icpt, err;
            lg_relax_relu_apply(&ln, lam, &coef, &icpt, &err);
            ck_assert(err >= 0);
            double zs[3] = {cl, cl <= 0 && cu >= 0 ? 0.0 : cl, cu};
            for (int q = 0; q < 3; q++)
                if (!lg_tsb_relax_holds(lam, zs[q], coef, icpt, err)) {
                    if (bad++ < 5)
                        fprintf(stderr, "relax: lam %a on [%a, %a] alpha %g: fails at z = %a\n", lam, cl, cu, alpha,
                                zs[q]);
                }
        }
    }
    ck_assert_int_eq(bad, 0);
}
END_TEST

/* ---- bounds against exact evaluation ---- */

/* Sample points of the box: every corner (n_in ≤ 4), the centre, random
 * points and points of pts_extra (n_extra of them). Returns the count. */
static int lg_tsb_points(const double *lo, const double *hi, int n_in, lg_rng *r, int n_rand, double *pts, int cap)
{
    int n = 0;
    for (int c = 0; c < (1 << n_in) && n < cap; c++, n++)
        for (int i = 0; i < n_in; i++) pts[n * n_in + i] = (c >> i) & 1 ? hi[i] : lo[i];
    for (int q = 0; q < n_rand + 1 && n < cap; q++, n++)
        for (int i = 0; i < n_in; i++) {
            double v = q == 0 ? 0.5 * lo[i] + 0.5 * hi[i] : lo[i] + lg_rng_uniform(r) * (hi[i] - lo[i]);
            if (!(v >= lo[i])) v = lo[i];
            if (!(v <= hi[i])) v = hi[i];
            pts[n * n_in + i] = v;
        }
    return n;
}

/* Count the bounds of b (pre-activations) and of the objective rows
 * lb[m] (rows C[m][n_out], d[m]: lb[r] ≤ C[r]·y + d[r]) that an exact
 * evaluation at one of the n points contradicts; report a few. Also NaN
 * bounds and +∞ lower bounds count as failures. */
static int lg_tsb_check(const char *what, const lg_net *net, const lg_bounds *b, int m, const double *C,
                        const double *d, const double *lb, const double *pts, int n)
{
    int bad = 0, no = lg_net_n_out(net);
    lg_tsb_eval *e = lg_tsb_eval_new();
    mpq_t v, t;
    mpq_inits(v, t, NULL);
    for (int k = 0; b && k < net->n_layers; k++)
        for (int i = 0; i < b->width[k]; i++)
            if (isnan(b->lo[k][i]) || isnan(b->hi[k][i]) || b->lo[k][i] == INFINITY || b->hi[k][i] == -INFINITY) {
                if (bad++ < 3) fprintf(stderr, "%s: layer %d neuron %d: bounds [%g, %g]\n", what, k, i, b->lo[k][i], b->hi[k][i]);
            }
    for (int r = 0; r < m; r++)
        if (isnan(lb[r]) || lb[r] == INFINITY) {
            if (bad++ < 3) fprintf(stderr, "%s: row %d: lower bound %g\n", what, r, lb[r]);
        }
    for (int p = 0; p < n; p++) {
        const double *x = pts + (size_t)p * (size_t)net->n_in;
        lg_tsb_exact(net, x, e->z, e->y);
        for (int k = 0; b && k < net->n_layers; k++)
            for (int i = 0; i < b->width[k]; i++)
                if (lg_tsb_cmp_d(e->z[k][i], b->lo[k][i]) < 0 || lg_tsb_cmp_d(e->z[k][i], b->hi[k][i]) > 0) {
                    if (bad++ < 3)
                        fprintf(stderr, "%s: point %d layer %d neuron %d: z = %.17g outside [%.17g, %.17g]\n", what,
                                p, k, i, mpq_get_d(e->z[k][i]), b->lo[k][i], b->hi[k][i]);
                }
        for (int r = 0; r < m; r++) {
            mpq_set_d(v, d[r]);
            for (int j = 0; j < no; j++) {
                mpq_set_d(t, C[(size_t)r * (size_t)no + (size_t)j]);
                mpq_mul(t, t, e->y[j]);
                mpq_add(v, v, t);
            }
            if (lg_tsb_cmp_d(v, lb[r]) < 0) {
                if (bad++ < 3)
                    fprintf(stderr, "%s: point %d row %d: value %.17g below its lower bound %.17g\n", what, p, r,
                            mpq_get_d(v), lb[r]);
            }
        }
    }
    mpq_clears(v, t, NULL);
    lg_tsb_eval_free(e);
    return bad;
}

/* Set layer k's W (row-major) and b. */
static void lg_tsb_set(lg_net *net, int k, const double *W, const double *b)
{
    lg_layer *L = &net->layers[k];
    memcpy(L->lin.W, W, (size_t)L->n_out * (size_t)L->lin.n_in * sizeof *W);
    memcpy(L->b, b, (size_t)L->n_out * sizeof *b);
}

/* Symbolic bounds, objective bounds of ±y_j, α-bounds with random slopes
 * and LP-tightened bounds of net on [lo, hi], all checked exactly at sample
 * points. Returns the number of contradictions. */
static int lg_tsb_all_bounds(const char *what, const lg_net *net, const double *lo, const double *hi, lg_rng *r,
                             int lp)
{
    int no = lg_net_n_out(net), m = 2 * no, bad = 0;
    double pts[64 * 4], C[2 * LG_TSB_W * LG_TSB_W], d[2 * LG_TSB_W], lb[2 * LG_TSB_W];
    int n = lg_tsb_points(lo, hi, net->n_in, r, 24, pts, 64);
    memset(C, 0, sizeof C);
    for (int j = 0; j < no; j++) {
        C[(size_t)(2 * j) * (size_t)no + (size_t)j] = 1.0;
        C[(size_t)(2 * j + 1) * (size_t)no + (size_t)j] = -1.0;
        d[2 * j] = d[2 * j + 1] = 0.0;
    }
    lg_bounds b;
    char buf[96];
    ck_assert_int_eq(lg_bounds_init(&b, net), LG_OK);
    ck_assert_int_eq(lg_bounds_interval(&b, net, lo, hi), LG_OK);
    snprintf(buf, sizeof buf, "%s/interval", what);
    bad += lg_tsb_check(buf, net, &b, 0, C, d, lb, pts, n);
    ck_assert_int_eq(lg_bounds_symbolic(&b, net, lo, hi), LG_OK);
    ck_assert_int_eq(lg_bounds_objective_lower(&b, net, m, C, d, lb), LG_OK);
    snprintf(buf, sizeof buf, "%s/symbolic", what);
    bad += lg_tsb_check(buf, net, &b, m, C, d, lb, pts, n);
    int size = lg_alpha_size(net);
    double *al = malloc((size_t)m * (size_t)size * sizeof *al);
    ck_assert_ptr_nonnull(al);
    for (int j = 0; j < m * size; j++) al[j] = lg_rng_uniform(r);
    ck_assert_int_eq(lg_alpha_bound(&b, net, m, C, d, al, lb, NULL, NULL, NULL), LG_OK);
    snprintf(buf, sizeof buf, "%s/alpha", what);
    bad += lg_tsb_check(buf, net, NULL, m, C, d, lb, pts, n);
    lg_alpha_default(&b, net, m, al);
    ck_assert_int_eq(lg_alpha_optimize(&b, net, m, C, d, 5, 0.2, NULL, al, lb, NULL), LG_OK);
    snprintf(buf, sizeof buf, "%s/alpha-opt", what);
    bad += lg_tsb_check(buf, net, NULL, m, C, d, lb, pts, n);
    free(al);
    if (lp) {
        long n_lp = 0;
        /* a deadline: GLPK's simplex can stall on these ill-conditioned LPs */
        lg_runctx run = lg_runctx_start(1.0, 1, 0, 0);
        lg_status st = lg_bounds_lp(&b, net, &run, &n_lp);
        ck_assert_msg(st == LG_OK || st == LG_ERR_NUMERIC, "%s: lp status %d", what, (int)st);
        if (st == LG_OK) {
            ck_assert_int_eq(lg_bounds_objective_lower(&b, net, m, C, d, lb), LG_OK);
            snprintf(buf, sizeof buf, "%s/lp", what);
            bad += lg_tsb_check(buf, net, &b, m, C, d, lb, pts, n);
        }
    }
    lg_bounds_free(&b);
    return bad;
}

/* y = 3·relu(0.1x) − relu(0.3x), 1 → 2 → 1: exactly 0 for x ≥ 0, but
 * fl(3·fl(0.1x)) − fl(0.3x) is not (cancellation in the back-substitution). */
static void lg_tsb_net_a1(lg_net *net)
{
    int dims[3] = {1, 2, 1};
    ck_assert_int_eq(lg_net_init(net, 2, dims, LG_ACT_RELU), LG_OK);
    const double W0[2] = {0.1, 0.3}, b0[2] = {0, 0}, W1[2] = {3, -1}, b1[1] = {0};
    lg_tsb_set(net, 0, W0, b0);
    lg_tsb_set(net, 1, W1, b1);
}

/* 3 layers, output ~8e-9 at x = 1e8 after cancellation:
 * y = relu(7·relu(0.1x) − relu(0.7x) + 1e8) − 1e8. */
static void lg_tsb_net_a2(lg_net *net)
{
    int dims[4] = {1, 2, 1, 1};
    ck_assert_int_eq(lg_net_init(net, 3, dims, LG_ACT_RELU), LG_OK);
    const double W0[2] = {0.1, 0.7}, b0[2] = {0, 0}, W1[2] = {7, -1}, b1[1] = {1e8}, W2[1] = {1}, b2[1] = {-1e8};
    lg_tsb_set(net, 0, W0, b0);
    lg_tsb_set(net, 1, W1, b1);
    lg_tsb_set(net, 2, W2, b2);
}

/* Exact y_0 of net at the single point x. */
static double lg_tsb_exact_y0(const lg_net *net, const double *x, mpq_t out)
{
    lg_tsb_eval *e = lg_tsb_eval_new();
    lg_tsb_exact(net, x, e->z, e->y);
    mpq_set(out, e->y[0]);
    lg_tsb_eval_free(e);
    return mpq_get_d(out);
}

START_TEST(test_soundness_bounds_cancel_direct)
{
    lg_rng r;
    lg_rng_init(&r, 1102, 1);
    lg_net net;
    double x[1] = {1e10};
    lg_tsb_net_a1(&net);
    ck_assert_int_eq(lg_tsb_all_bounds("3relu(0.1x)-relu(0.3x) at 1e10", &net, x, x, &r, 1), 0);
    double lo[1] = {1e10 - 1e3}, hi[1] = {1e10 + 1e3};
    ck_assert_int_eq(lg_tsb_all_bounds("3relu(0.1x)-relu(0.3x) near 1e10", &net, lo, hi, &r, 1), 0);
    lg_net_free(&net);
    lg_tsb_net_a2(&net);
    x[0] = 1e8;
    ck_assert_int_eq(lg_tsb_all_bounds("3-layer cancel at 1e8", &net, x, x, &r, 1), 0);
    lo[0] = 1e8 - 1e-4, hi[0] = 1e8 + 1e-4;
    ck_assert_int_eq(lg_tsb_all_bounds("3-layer cancel near 1e8", &net, lo, hi, &r, 1), 0);
    lg_net_free(&net);
}
END_TEST

/* ---- verdicts ---- */

/* A property of one case [lo, hi] and one term of one constraint
 * coef·y + d ≤ 0 (the counterexample region). */
static void lg_tsb_prop(lg_prop *p, int n_in, int n_out, const double *lo, const double *hi, const double *coef, double d)
{
    memset(p, 0, sizeof *p);
    p->n_in = n_in;
    p->n_out = n_out;
    p->n_cases = 1;
    p->cases = calloc(1, sizeof *p->cases);
    lg_prop_case *C = p->cases;
    C->lo = malloc((size_t)n_in * sizeof *C->lo);
    C->hi = malloc((size_t)n_in * sizeof *C->hi);
    C->n_terms = 1;
    C->terms = calloc(1, sizeof *C->terms);
    C->terms[0].n_cons = 1;
    C->terms[0].cons = calloc(1, sizeof *C->terms[0].cons);
    C->terms[0].cons[0].coef = malloc((size_t)n_out * sizeof(double));
    ck_assert(C->lo && C->hi && C->terms[0].cons[0].coef);
    memcpy(C->lo, lo, (size_t)n_in * sizeof *lo);
    memcpy(C->hi, hi, (size_t)n_in * sizeof *hi);
    memcpy(C->terms[0].cons[0].coef, coef, (size_t)n_out * sizeof *coef);
    C->terms[0].cons[0].d = d;
}

/* Bounds-only configurations (no complete back-end): the answer can only
 * be robust through the bounds. */
typedef struct lg_tsb_mode {
    const char *solver;
    lg_bab_mode bab;
    int attack;
} lg_tsb_mode;

static const lg_tsb_mode lg_tsb_modes[] = {
    {"none", LG_BAB_NONE, 0}, {"none", LG_BAB_INPUT, 0}, {"none", LG_BAB_RELU, 0}, {"none", LG_BAB_NONE, 1},
};
#define LG_TSB_N_MODES (int)(sizeof lg_tsb_modes / sizeof lg_tsb_modes[0])

static lg_verdict lg_tsb_verify(const lg_net *net, const lg_prop *p, const lg_tsb_mode *md, const char *what)
{
    lg_verify_opts o = lg_verify_opts_default();
    o.solver = lg_test_solver(md->solver);
    o.attack = md->attack;
    o.bab.mode = md->bab;
    o.bab.threads = 1;
    o.bab.max_nodes = 200;
    o.timeout_s = 5;
    lg_verify_report rep;
    lg_status st = lg_verify_run(net, p, &o, &rep);
    ck_assert_msg(st == LG_OK, "%s (solver %s, bab %s, attack %d): status %s: %s", what, md->solver,
                  lg_bab_mode_name(md->bab), md->attack, lg_status_str(st), lg_errmsg());
    lg_verdict v = rep.verdict;
    lg_verify_report_free(&rep);
    return v;
}

/* Every mode on a property whose counterexample region is non-empty
 * (exactly): never robust. */
static void lg_tsb_never_robust(const lg_net *net, const lg_prop *p, const char *what)
{
    for (int k = 0; k < LG_TSB_N_MODES; k++) {
        lg_verdict v = lg_tsb_verify(net, p, &lg_tsb_modes[k], what);
        ck_assert_msg(v != LG_VERDICT_ROBUST, "%s: robust with solver %s, bab %s, attack %d, but a counterexample exists",
                      what, lg_tsb_modes[k].solver, lg_bab_mode_name(lg_tsb_modes[k].bab), lg_tsb_modes[k].attack);
    }
}

/* Cancellation end to end: "y ≤ κ" with κ between the true value and the
 * value float back-substitution computes; every verdict must match the
 * exact one. */
START_TEST(test_soundness_bounds_cancel_verdict)
{
    lg_net net;
    mpq_t y, k;
    mpq_inits(y, k, NULL);
    const double one = 1.0;
    lg_prop p;
    /* a1 at x = 1e10: exact y = (3·0.1 − 0.3 as doubles)·1e10 ≈ 2.78e-7 */
    lg_tsb_net_a1(&net);
    double x[1] = {1e10}, lo[1] = {1e10 - 1e3};
    double yv = lg_tsb_exact_y0(&net, x, y);
    ck_assert(yv > 2e-7 && yv < 3e-7);
    mpq_set_d(k, 4e-7);
    ck_assert(mpq_cmp(y, k) <= 0); /* truly violated at x */
    lg_tsb_prop(&p, 1, 1, x, x, &one, -4e-7);
    lg_tsb_never_robust(&net, &p, "3relu(0.1x)-relu(0.3x) <= 4e-7 at x = 1e10");
    lg_prop_free(&p);
    lg_tsb_prop(&p, 1, 1, lo, x, &one, -4e-7);
    lg_tsb_never_robust(&net, &p, "3relu(0.1x)-relu(0.3x) <= 4e-7 on [1e10 - 1e3, 1e10]");
    lg_prop_free(&p);
    lg_net_free(&net);
    /* a2 at x = 1e8: exact y = (7·0.1 − 0.7 as doubles)·1e8 ≈ 8.3e-9 */
    lg_tsb_net_a2(&net);
    x[0] = 1e8;
    yv = lg_tsb_exact_y0(&net, x, y);
    ck_assert(yv > 1e-9 && yv < 1e-8);
    mpq_set_d(k, 1e-8);
    ck_assert(mpq_cmp(y, k) <= 0);
    lg_tsb_prop(&p, 1, 1, x, x, &one, -1e-8);
    lg_tsb_never_robust(&net, &p, "3-layer cancel <= 1e-8 at x = 1e8");
    lg_prop_free(&p);
    lg_net_free(&net);
    mpq_clears(y, k, NULL);
}
END_TEST

/* ---- random nets: wide magnitudes, cancellation, near-ties ---- */

static double lg_tsb_sign(lg_rng *r) { return lg_rng_uniform(r) < 0.5 ? -1.0 : 1.0; }

/* A random relu net (1–3 inputs, 1–3 hidden layers of 2–5, 1–2 outputs)
 * with weights ±10^U(−6, 6), rows made to cancel at the box centre (the
 * last weight solves Σ w·a ≈ 0, the bias −W·a: pre-activations that are
 * tiny differences of huge terms, near-ties), optional normalisation, and
 * a box around a centre of magnitude up to 1e10. */
static void lg_tsb_random(lg_net *net, lg_rng *r, double *lo, double *hi)
{
    int n_in = 1 + (int)lg_rng_below(r, 3), depth = 2 + (int)lg_rng_below(r, 3), dims[6];
    dims[0] = n_in;
    for (int k = 1; k < depth; k++) dims[k] = 2 + (int)lg_rng_below(r, 4);
    dims[depth] = 1 + (int)lg_rng_below(r, 2);
    ck_assert_int_eq(lg_net_init(net, depth, dims, LG_ACT_RELU), LG_OK);
    if (lg_rng_uniform(r) < 0.3) {
        net->in_sub = malloc((size_t)n_in * sizeof(double));
        net->in_div = malloc((size_t)n_in * sizeof(double));
        for (int i = 0; i < n_in; i++) {
            net->in_sub[i] = lg_tsb_sign(r) * lg_tsb_logu(r, -3, 3);
            net->in_div[i] = lg_tsb_sign(r) * lg_tsb_logu(r, -3, 3);
        }
    }
    double cmag = lg_tsb_logu(r, -3, 10), rel = lg_tsb_logu(r, -12, -1);
    double a[LG_TSB_W], t[LG_TSB_W];
    for (int i = 0; i < n_in; i++) {
        double c = lg_tsb_sign(r) * cmag * (0.5 + lg_rng_uniform(r));
        double h = lg_rng_uniform(r) < 0.2 ? 0.0 : fabs(c) * rel;
        lo[i] = c - h;
        hi[i] = c + h;
        a[i] = c;
        if (net->in_sub) a[i] -= net->in_sub[i];
        if (net->in_div) a[i] /= net->in_div[i];
    }
    for (int k = 0; k < depth; k++) {
        lg_layer *L = &net->layers[k];
        for (int o = 0; o < L->n_out; o++) {
            double *Wr = L->lin.W + (size_t)o * (size_t)L->lin.n_in, s = 0;
            for (int i = 0; i < L->lin.n_in; i++) Wr[i] = lg_tsb_sign(r) * lg_tsb_logu(r, -6, 6);
            double u = lg_rng_uniform(r);
            if (u < 0.4 && L->lin.n_in > 1 && a[L->lin.n_in - 1] != 0) {
                for (int i = 0; i + 1 < L->lin.n_in; i++) s += Wr[i] * a[i];
                Wr[L->lin.n_in - 1] = -s / a[L->lin.n_in - 1];
            }
            s = 0;
            for (int i = 0; i < L->lin.n_in; i++) s += Wr[i] * a[i];
            if (u > 0.7) L->b[o] = -s * (1 + 1e-9 * lg_tsb_sign(r)); /* near-tie at the centre */
            else if (u > 0.5) L->b[o] = lg_tsb_sign(r) * lg_tsb_logu(r, -6, 6);
            else L->b[o] = fabs(s) * lg_rng_uniform(r);
            t[o] = s + L->b[o];
            if (L->act == LG_ACT_RELU && t[o] < 0) t[o] = 0;
        }
        memcpy(a, t, (size_t)L->n_out * sizeof *a);
    }
}

START_TEST(test_soundness_bounds_random_exact)
{
    lg_rng r;
    lg_rng_init(&r, lg_tsb_seed(1103), 1);
    int n = lg_tsb_count(150, 600), bad_nets = 0;
    for (int t = 0; t < n; t++) {
        lg_net net;
        double lo[4], hi[4];
        lg_tsb_random(&net, &r, lo, hi);
        char what[48];
        snprintf(what, sizeof what, "random net %d", t);
        int bad = lg_tsb_all_bounds(what, &net, lo, hi, &r, t % 4 == 0);
        bad_nets += bad > 0;
        lg_net_free(&net);
    }
    ck_assert_msg(bad_nets == 0, "%d of %d random nets have a bound contradicted by exact evaluation", bad_nets, n);
}
END_TEST

/* The same random nets through lg_verify_run: κ = the smallest exact y_0
 * over the sample points (rounded up), so "y_0 ≤ κ" has a counterexample and
 * robust would be wrong in every mode. */
START_TEST(test_soundness_bounds_random_verdict)
{
    lg_rng r;
    lg_rng_init(&r, lg_tsb_seed(1104), 1);
    int n = lg_tsb_count(30, 120);
    lg_tsb_eval *e = lg_tsb_eval_new();
    mpq_t mn;
    mpq_init(mn);
    for (int t = 0; t < n; t++) {
        lg_net net;
        double lo[4], hi[4], pts[64 * 4];
        lg_tsb_random(&net, &r, lo, hi);
        int np = lg_tsb_points(lo, hi, net.n_in, &r, 24, pts, 64);
        for (int q = 0; q < np; q++) {
            lg_tsb_exact(&net, pts + (size_t)q * (size_t)net.n_in, e->z, e->y);
            if (q == 0 || mpq_cmp(e->y[0], mn) < 0) mpq_set(mn, e->y[0]);
        }
        double kappa = lg_tsb_ceil_d(mn), coef[2] = {1.0, 0.0};
        if (!isfinite(kappa)) {
            lg_net_free(&net);
            continue;
        }
        lg_prop p;
        lg_tsb_prop(&p, net.n_in, lg_net_n_out(&net), lo, hi, coef, -kappa);
        char what[64];
        snprintf(what, sizeof what, "random net %d: y0 <= %.17g", t, kappa);
        lg_tsb_never_robust(&net, &p, what);
        lg_prop_free(&p);
        lg_net_free(&net);
    }
    mpq_clear(mn);
    lg_tsb_eval_free(e);
}
END_TEST

/* ---- extreme valid input: intermediate values overflow a double ---- */

/* y = 0.5·relu(2x) − 1e308 at x = 1e308: z = 2e308 overflows a double, the
 * exact y is 0. "y ≤ 0" has a counterexample (never robust); "y ≤ −1" has
 * none (never violated); no configuration may fail with an error. */
START_TEST(test_soundness_bounds_extreme_input)
{
    lg_net net;
    int dims[3] = {1, 1, 1};
    ck_assert_int_eq(lg_net_init(&net, 2, dims, LG_ACT_RELU), LG_OK);
    const double W0[1] = {2}, b0[1] = {0}, W1[1] = {0.5}, b1[1] = {-1e308};
    lg_tsb_set(&net, 0, W0, b0);
    lg_tsb_set(&net, 1, W1, b1);
    double x[1] = {1e308}, one = 1.0;
    mpq_t y;
    mpq_init(y);
    lg_tsb_exact_y0(&net, x, y);
    ck_assert_int_eq(mpq_sgn(y), 0);
    mpq_clear(y);
    lg_prop p;
    lg_tsb_prop(&p, 1, 1, x, x, &one, 0.0);
    lg_tsb_never_robust(&net, &p, "0.5relu(2x)-1e308 <= 0 at 1e308");
    static const char *solvers[] = {"auto", "glpk", "z3"};
    for (int s = 0; s < 3; s++) {
        lg_tsb_mode md = {solvers[s], LG_BAB_NONE, 0};
        lg_verdict v = lg_tsb_verify(&net, &p, &md, "0.5relu(2x)-1e308 <= 0 at 1e308");
        ck_assert_msg(v != LG_VERDICT_ROBUST, "solver %s: robust", solvers[s]);
        md.bab = LG_BAB_AUTO;
        md.attack = 1;
        v = lg_tsb_verify(&net, &p, &md, "0.5relu(2x)-1e308 <= 0 at 1e308");
        ck_assert_msg(v != LG_VERDICT_ROBUST, "solver %s (bab auto): robust", solvers[s]);
    }
    lg_prop_free(&p);
    lg_tsb_prop(&p, 1, 1, x, x, &one, 1.0);
    for (int k = 0; k < LG_TSB_N_MODES; k++) {
        lg_verdict v = lg_tsb_verify(&net, &p, &lg_tsb_modes[k], "0.5relu(2x)-1e308 <= -1 at 1e308");
        ck_assert_msg(v != LG_VERDICT_VIOLATED, "0.5relu(2x)-1e308 <= -1: violated in mode %d", k);
    }
    lg_prop_free(&p);
    /* bounds directly: sound (±∞ allowed), never NaN */
    lg_rng r;
    lg_rng_init(&r, 1105, 1);
    ck_assert_int_eq(lg_tsb_all_bounds("0.5relu(2x)-1e308 at 1e308", &net, x, x, &r, 0), 0);
    lg_net_free(&net);
}
END_TEST

/* Random nets whose inputs sit at ±1e308 (or whose normalisation or
 * weights push the pre-activations past DBL_MAX): every bound routine
 * stays sound (±∞ where it must, never NaN), and lg_verify_run answers
 * without an error and never robust against a point's exact value. */
START_TEST(test_soundness_bounds_extreme_random)
{
    lg_rng r;
    lg_rng_init(&r, lg_tsb_seed(1106), 1);
    int n = lg_tsb_count(20, 60);
    lg_tsb_eval *e = lg_tsb_eval_new();
    for (int t = 0; t < n; t++) {
        lg_net net;
        double lo[4], hi[4];
        lg_tsb_random(&net, &r, lo, hi);
        for (int i = 0; i < net.n_in; i++) {
            int kind = (int)lg_rng_below(&r, 4);
            if (kind == 0) lo[i] = hi[i] = lg_tsb_sign(&r) * 1e308;
            else if (kind == 1) lo[i] = -1e308, hi[i] = 1e308;
            else if (kind == 2) lo[i] = hi[i] = lg_tsb_sign(&r) * 1.7976931348623157e308;
        }
        if (t % 3 == 0) net.layers[0].lin.W[0] = 1e300;
        char what[64];
        snprintf(what, sizeof what, "extreme random net %d", t);
        ck_assert_int_eq(lg_tsb_all_bounds(what, &net, lo, hi, &r, 0), 0);
        double x[4], coef[2] = {1.0, 0.0};
        for (int i = 0; i < net.n_in; i++) x[i] = lo[i];
        lg_tsb_exact(&net, x, e->z, e->y);
        double kappa = lg_tsb_ceil_d(e->y[0]);
        if (isfinite(kappa)) {
            lg_prop p;
            lg_tsb_prop(&p, net.n_in, lg_net_n_out(&net), lo, hi, coef, -kappa);
            lg_tsb_never_robust(&net, &p, what);
            lg_prop_free(&p);
        }
        lg_net_free(&net);
    }
    lg_tsb_eval_free(e);
}
END_TEST

/* The CLI on the same network and a VNN-LIB property pinning X_0 at 1e308:
 * exit 0 (a verdict, not an error) and not robust, for every solver. */
START_TEST(test_soundness_bounds_extreme_cli)
{
    lg_net net;
    int dims[3] = {1, 1, 1};
    ck_assert_int_eq(lg_net_init(&net, 2, dims, LG_ACT_RELU), LG_OK);
    const double W0[1] = {2}, b0[1] = {0}, W1[1] = {0.5}, b1[1] = {-1e308};
    lg_tsb_set(&net, 0, W0, b0);
    lg_tsb_set(&net, 1, W1, b1);
    char np[256], pp[256], op[256];
    snprintf(np, sizeof np, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(pp, sizeof pp, "%s", lg_test_tmpfile(".vnnlib"));
    snprintf(op, sizeof op, "%s", lg_test_tmpfile(".txt"));
    ck_assert_int_eq(lg_netfile_write(&net, np), LG_OK);
    lg_net_free(&net);
    FILE *f = fopen(pp, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "(declare-const X_0 Real)\n(declare-const Y_0 Real)\n(assert (>= X_0 1e308))\n"
               "(assert (<= X_0 1e308))\n(assert (<= Y_0 0.0))\n");
    fclose(f);
    static const char *const solvers[] = {"auto", "glpk", "z3", "none"};
    for (int s = 0; s < 4; s++)
        for (int lp = 0; lp < 2; lp++) {
            char args[1024], line[256] = "";
            snprintf(args, sizeof args, "verify '%s' --vnnlib '%s' --solver %s --timeout 10 --no-attack%s", np, pp,
                     solvers[s], lp ? " --tighten lp" : "");
            ck_assert_msg(lg_test_cli(args, op) == 0, "lgelu %s: not exit 0", args);
            f = fopen(op, "r");
            ck_assert_ptr_nonnull(f);
            ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
            fclose(f);
            ck_assert_msg(strncmp(line, "robust", 6) != 0, "lgelu %s: %s", args, line);
        }
    remove(np);
    remove(pp);
    remove(op);
}
END_TEST

Suite *suite_soundness_bounds(void)
{
    Suite *s = suite_create("soundness_bounds");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 600);
    tcase_add_test(tc, test_soundness_bounds_relax_exact);
    tcase_add_test(tc, test_soundness_bounds_cancel_direct);
    tcase_add_test(tc, test_soundness_bounds_cancel_verdict);
    tcase_add_test(tc, test_soundness_bounds_random_exact);
    tcase_add_test(tc, test_soundness_bounds_random_verdict);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 600);
    tcase_add_test(tl, test_soundness_bounds_extreme_input);
    tcase_add_test(tl, test_soundness_bounds_extreme_random);
    tcase_add_test(tl, test_soundness_bounds_extreme_cli);
    suite_add_tcase(s, tl);
    return s;
}
