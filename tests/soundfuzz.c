/* soundfuzz.c — every mode of the driver against the exact oracle (soundfuzz.h). */
#include "soundfuzz.h"
#include "test_solver.h"

#include "core/linop.h"
#include "core/clock.h"

#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <gmp.h>

#include "anneal/deviation.h"
#include "core/act.h"
#include "core/linop.h"
#include "core/netfile.h"
#include "core/rng.h"
#include "oracle.h"
#include "verify/alpha.h"
#include "verify/bab_act.h"
#include "verify/bounds.h"
#include "verify/devnet.h"
#include "verify/recheck.h"
#include "verify/transfer.h"
#include "verify/verify.h"
#include "verify/vnnlib.h"
#include "onnx/load.h"

const char *const lg_fuzz_solver_names[LG_FUZZ_N_SOLVERS] = {"auto", "glpk", "z3", "none", "glpk-only",
                                                                 "z3-lp"};
const char *const lg_fuzz_bab_names[LG_FUZZ_N_BABS] = {"none", "input", "relu", "auto"};
static const lg_bab_mode bab_modes[LG_FUZZ_N_BABS] = {LG_BAB_NONE, LG_BAB_INPUT, LG_BAB_RELU, LG_BAB_AUTO};


lg_fuzz_opts lg_fuzz_opts_default(void)
{
    lg_fuzz_opts o;
    memset(&o, 0, sizeof o);
    o.timeout_s = 2.0;
    o.direct = 1;
    for (int i = 0; i < LG_FUZZ_N_SOLVERS; i++) o.solver_on[i] = 1;
    for (int i = 0; i < LG_FUZZ_N_BABS; i++) o.bab_on[i] = 1;
    return o;
}

lg_status lg_fuzz_opts_select(lg_fuzz_opts *o, int which, const char *list)
{
    int n = which ? LG_FUZZ_N_BABS : LG_FUZZ_N_SOLVERS, *on = which ? o->bab_on : o->solver_on;
    const char *const *names = which ? lg_fuzz_bab_names : lg_fuzz_solver_names;
    int sel[LG_FUZZ_N_SOLVERS > LG_FUZZ_N_BABS ? LG_FUZZ_N_SOLVERS : LG_FUZZ_N_BABS] = {0};
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        int hit = -1;
        for (int i = 0; i < n; i++)
            if (strlen(names[i]) == len && strncmp(names[i], p, len) == 0) hit = i;
        if (hit < 0) return lg_fail(LG_ERR_ARG, "soundfuzz: unknown %s '%.*s'", which ? "bab mode" : "solver", (int)len, p);
        sel[hit] = 1;
        p += len;
        if (*p == ',') p++;
    }
    for (int i = 0; i < n; i++) on[i] = sel[i];
    return LG_OK;
}

static void count_kind(lg_fuzz_stats *st, const char *what, int s, const lg_verify_report *r)
{
    char key[64];
    char method[32];
    snprintf(method, sizeof method, "%s", r && r->method[0] ? r->method : "-");
    if (!strncmp(method, "bab-input", 9) || !strncmp(method, "bab-relu", 8)) /* bab-input+glpk → bab+glpk */
        memmove(method + 3, method + (method[4] == 'i' ? 9 : 8), strlen(method + (method[4] == 'i' ? 9 : 8)) + 1);
    snprintf(key, sizeof key, "%s %s/%s", what, lg_fuzz_solver_names[s], method);
    for (int i = 0; i < st->n_kinds; i++)
        if (!strcmp(st->kind[i], key)) {
            st->kind_n[i]++;
            return;
        }
    if (st->n_kinds == LG_FUZZ_MAX_KINDS) return;
    snprintf(st->kind[st->n_kinds], sizeof st->kind[0], "%s", key);
    st->kind_n[st->n_kinds++] = 1;
}

static void report(const lg_fuzz_case *fc, const char *what, int s, int b, int attack, const lg_verify_report *r,
                   FILE *log)
{
    fprintf(log, "soundfuzz: %s seed=%lu case=%ld --solver %s --bab %s%s: oracle %s, driver %s (method %s%s%s)\n",
            what, (unsigned long)fc->seed, fc->index, lg_fuzz_solver_names[s], lg_fuzz_bab_names[b],
            attack ? "" : " --no-attack", fc->truth == LG_ANSWER_SAT ? "violated" : "robust",
            r ? lg_verdict_name(r->verdict) : "error", r && r->method[0] ? r->method : "-", r ? "" : ": ",
            r ? "" : lg_errmsg());
    if (r && r->x) {
        fprintf(log, "  driver witness:");
        for (int i = 0; i < r->n_in; i++) fprintf(log, " %.17g", r->x[i]);
        fprintf(log, "\n");
    }
    lg_fuzz_case_print(fc, log);
    fprintf(log, "  reproduce: build/lgelu_soundfuzz --seed %lu --case %ld --solver %s --bab %s --dump DIR\n",
            (unsigned long)fc->seed, fc->index, lg_fuzz_solver_names[s], lg_fuzz_bab_names[b]);
    fflush(log);
}


/* dst = src written out dense (the oracles' form): max-pool nodes as their exact ReLU form
 * (core/net.h lg_net_lower_max, any sign: a smooth net and its substitution alike), convs
 * as matrices; a plain copy when there is neither. */
static lg_status fz_dense_form(lg_net *dst, const lg_net *src)
{
    memset(dst, 0, sizeof *dst);
    if (!lg_net_has_conv(src) && !lg_net_has_max(src)) return lg_net_copy(dst, src);
    lg_net low = {0};
    lg_status st = lg_net_has_max(src) ? lg_net_lower_max(&low, src, 1) : LG_OK;
    if (st == LG_OK) st = lg_net_densify(dst, low.n_layers ? &low : src, 0);
    lg_net_free(&low);
    return st;
}

/* ---- smooth near ties (soundfuzz.h) ---- */
#define FZ_PREC 300
/* How far from 0 an MPFR depth must be to be judged (the pass's own error is far below). */
#define FZ_JUDGE 1e-40

/* v ← f(v) for the smooth activation a with parameter p, RNDN at FZ_PREC bits. */
static void fz_act(mpfr_t v, lg_act a, double p, mpfr_t t, mpfr_t u)
{
    switch (a) {
    case LG_ACT_IDENTITY: return;
    case LG_ACT_RELU:
        if (mpfr_sgn(v) < 0) mpfr_set_ui(v, 0, MPFR_RNDN);
        return;
    case LG_ACT_PRELU:
        if (mpfr_sgn(v) < 0) mpfr_mul_d(v, v, p, MPFR_RNDN);
        return;
    case LG_ACT_SWISH: /* v·σ(βv) = v/(1 + e^{−βv}) */
        mpfr_mul_d(t, v, -p, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add_ui(t, t, 1, MPFR_RNDN);
        mpfr_div(v, v, t, MPFR_RNDN);
        return;
    case LG_ACT_SIGMOID: /* 1/(1 + e^{−v}) */
        mpfr_neg(t, v, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add_ui(t, t, 1, MPFR_RNDN);
        mpfr_ui_div(v, 1, t, MPFR_RNDN);
        return;
    case LG_ACT_GELU:
    case LG_ACT_LGELU: /* v·Φ(λv) = v·½·erfc(−λv/√2) */
        mpfr_set_ui(u, 2, MPFR_RNDN);
        mpfr_sqrt(u, u, MPFR_RNDN);
        mpfr_mul_d(t, v, a == LG_ACT_GELU ? -1.0 : -p, MPFR_RNDN);
        mpfr_div(t, t, u, MPFR_RNDN);
        mpfr_erfc(t, t, MPFR_RNDN);
        mpfr_mul(v, v, t, MPFR_RNDN);
        mpfr_div_2ui(v, v, 1, MPFR_RNDN);
        return;
    default: LG_ASSERT(0 && "soundfuzz: an activation the MPFR pass does not know");
    }
}

/* y[n_out] (initialised) = f(x) of net at FZ_PREC bits. */
static void fz_forward(const lg_net *net, const double *x, mpfr_t *y)
{
    /* every node's value (node layout, core/net.h): a layer sums its terms' rows over their sources */
    size_t nl = lg_net_nodes_len(net);
    mpfr_t *a = malloc(nl * sizeof *a), t, u, q;
    int *idx;
    double *wv;
    LG_ASSERT(a && !lg_net_has_conv(net)); /* the oracle's own dense form only */
    LG_ASSERT(lg_net_row_alloc(net, &idx, &wv) == 0);
    for (size_t i = 0; i < nl; i++) mpfr_init2(a[i], FZ_PREC);
    mpfr_inits2(FZ_PREC, t, u, q, (mpfr_ptr)0);
    for (int i = 0; i < net->n_in; i++) {
        mpfr_set_d(a[i], x[i], MPFR_RNDN);
        if (net->in_sub) mpfr_sub_d(a[i], a[i], net->in_sub[i], MPFR_RNDN);
        if (net->in_div) mpfr_div_d(a[i], a[i], net->in_div[i], MPFR_RNDN);
    }
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        mpfr_t *z = a + lg_net_node_offset(net, k);
        for (int o = 0; o < L->n_out; o++) {
            mpfr_set_d(z[o], L->b[o], MPFR_RNDN);
            for (int tm = 0; tm < lg_layer_n_lin(L); tm++) {
                const lg_linear *A = lg_layer_lin(L, tm);
                const mpfr_t *src = (const mpfr_t *)a + lg_net_node_offset(net, A->src);
                int nz = lg_linear_row_nz(A, o, idx, wv);
                for (int e = 0; e < nz; e++) {
                    mpfr_mul_d(q, src[idx[e]], wv[e], MPFR_RNDN);
                    mpfr_add(z[o], z[o], q, MPFR_RNDN);
                }
            }
            fz_act(z[o], L->act, L->lambda, t, u);
        }
    }
    const mpfr_t *out = (const mpfr_t *)a + lg_net_node_offset(net, net->n_layers - 1);
    for (int j = 0; j < lg_net_n_out(net); j++) mpfr_set(y[j], out[j], MPFR_RNDN);
    for (size_t i = 0; i < nl; i++) mpfr_clear(a[i]);
    mpfr_clears(t, u, q, (mpfr_ptr)0);
    free(a);
    free(idx);
    free(wv);
}

/* Depth of x in case ci of p on net: min over terms of max over constraints
 * of Σ coef·y + d (≤ 0: a counterexample), at FZ_PREC bits; +inf outside
 * the box. dstr (NULL: the doubles d) gives the case's constants, in term
 * and constraint order, as the decimal text of a VNN-LIB file. */
static double fz_depth_c(const lg_net *net, const lg_prop *p, int ci, const double *x, const char *const *dstr)
{
    const lg_prop_case *C = &p->cases[ci];
    for (int i = 0; i < p->n_in; i++)
        if (!(x[i] >= C->lo[i] && x[i] <= C->hi[i])) return INFINITY;
    int no = p->n_out;
    mpfr_t *y = malloc((size_t)no * sizeof *y), v, t;
    LG_ASSERT(y);
    for (int j = 0; j < no; j++) mpfr_init2(y[j], FZ_PREC);
    mpfr_inits2(FZ_PREC, v, t, (mpfr_ptr)0);
    fz_forward(net, x, y);
    double best = INFINITY;
    for (int k = 0; k < C->n_terms; k++) {
        double worst = -INFINITY;
        for (int c = 0; c < C->terms[k].n_cons; c++) {
            const lg_lincon *L = &C->terms[k].cons[c];
            if (dstr)
                mpfr_set_str(v, *dstr++, 10, MPFR_RNDN);
            else
                mpfr_set_d(v, L->d, MPFR_RNDN);
            for (int j = 0; j < no; j++) {
                mpfr_mul_d(t, y[j], L->coef[j], MPFR_RNDN);
                mpfr_add(v, v, t, MPFR_RNDN);
            }
            double dv = mpfr_get_d(v, MPFR_RNDN);
            if (dv > worst) worst = dv;
        }
        if (worst < best) best = worst;
    }
    for (int j = 0; j < no; j++) mpfr_clear(y[j]);
    mpfr_clears(v, t, (mpfr_ptr)0);
    free(y);
    return best;
}

static double fz_depth(const lg_net *net, const lg_prop *p, const double *x) { return fz_depth_c(net, p, 0, x, NULL); }

static long fz_smooth_wrong(const lg_fuzz_case *fc, lg_fuzz_stats *s, FILE *log, const char *what, lg_act act,
                            double lambda, const double *x, double depth)
{
    s->wrong_smooth++;
    fprintf(log, "soundfuzz: WRONG-SMOOTH %s seed=%lu case=%ld act %s param %.17g depth %.3g at", what,
            (unsigned long)fc->seed, fc->index, lg_act_name(act), lambda, depth);
    for (int i = 0; x && i < fc->net.n_in; i++) fprintf(log, " %.17g", x[i]);
    fprintf(log, "\n");
    lg_fuzz_case_print(fc, log);
    count_kind(s, "WRONG-SMOOTH", 0, NULL);
    return 1;
}

static long fz_direct_run(const lg_fuzz_case *fc, const lg_net *net, const lg_net *dnet, const lg_prop *p,
                          const lg_prop *ex, int n_ex, const char *const *dstr, double known, const char *cls,
                          int mode, const lg_fuzz_opts *o, lg_fuzz_stats *s, FILE *log);

/* The difference network's exact route (verify/devnet.h: CROWN over x alone, the rounding as a
 * forward envelope), refined as far as the leaf cap allows, on the box [lo, hi] of fc's net and
 * its substitution ref (dref: ref's dense form): the combined bound of `check` is never below the
 * exact (MPFR) or the computed |f_relu − f_ref| at the centre xc and the two corners. */
static long fz_exact_route(const lg_fuzz_case *fc, const lg_net *ref, const lg_net *dref, const double *lo,
                           const double *hi, const double *xc, lg_fuzz_stats *s, FILE *log, lg_act act, double param)
{
    const lg_net *rn = &fc->net;
    const int no = lg_net_n_out(rn);
    lg_net drelu;
    lg_dev dev;
    lg_devnet v;
    lg_bounds b;
    memset(&dev, 0, sizeof dev);
    memset(&v, 0, sizeof v);
    memset(&b, 0, sizeof b);
    long bad = 0;
    double D = INFINITY;
    if (fz_dense_form(&drelu, rn) != LG_OK) return 0;
    if (lg_dev_init(&dev, rn, ref) != LG_OK || lg_devnet_init(&v, rn, ref) != LG_OK || lg_devnet_use_exact(&v) != LG_OK ||
        lg_bounds_init(&b, rn) != LG_OK)
        goto done;
    v.want = 0.0;
    if (lg_transfer_box_delta(&dev, &v, rn, &b, lo, hi, &D) != LG_OK) goto done;
    s->exact_route++;
    mpfr_t *yr = malloc(2 * (size_t)no * sizeof *yr), *yg = yr + no, d;
    double *ar = malloc((4 * (size_t)no + 4 * (size_t)lg_net_max_width(rn) + 2) * sizeof *ar);
    LG_ASSERT(yr && ar);
    double *ag = ar + no, *scr = ag + no;
    for (int j = 0; j < 2 * no; j++) mpfr_init2(yr[j], FZ_PREC);
    mpfr_init2(d, FZ_PREC);
    for (int pt = 0; pt < 3; pt++) {
        const double *x = pt == 0 ? xc : pt == 1 ? lo : hi;
        fz_forward(&drelu, x, yr);
        fz_forward(dref, x, yg);
        lg_net_forward(rn, x, ar, scr);
        lg_net_forward(ref, x, ag, scr);
        for (int j = 0; j < no; j++) {
            mpfr_sub(d, yr[j], yg[j], MPFR_RNDN);
            double ex = fabs(mpfr_get_d(d, MPFR_RNDU)), cd = fabs(ar[j] - ag[j]);
            if (ex > D || cd > D || D != D) {
                fprintf(log, "soundfuzz: exact-route deviation bound %.17g below |f_relu - f_ref| (exact %.17g, computed "
                        "%.17g) at output %d\n", D, ex, cd, j);
                bad += fz_smooth_wrong(fc, s, log, "exact-route deviation", act, param, x, ex);
                break;
            }
        }
    }
    for (int j = 0; j < 2 * no; j++) mpfr_clear(yr[j]);
    mpfr_clear(d);
    free(yr);
    free(ar);
done:
    lg_bounds_free(&b);
    lg_devnet_free(&v);
    lg_dev_free(&dev);
    lg_net_free(&drelu);
    return bad;
}

long lg_fuzz_smooth(const lg_fuzz_case *fc, const lg_fuzz_opts *o, lg_fuzz_stats *s, FILE *log)
{
    if (strstr(fc->cls, "big") || strstr(fc->cls, "huge") || fc->prop.cases[0].n_terms < 1) return 0;
    for (int t = 0; t < fc->prop.cases[0].n_terms; t++)
        if (fc->prop.cases[0].terms[t].n_cons < 1) return 0;
    /* the last entry mixes: hidden layers alternate sigmoid and prelu 0.25 */
    static const lg_act acts[] = {LG_ACT_GELU,  LG_ACT_LGELU,   LG_ACT_SWISH,   LG_ACT_PRELU,
                                  LG_ACT_SIGMOID, LG_ACT_PRELU, LG_ACT_SIGMOID, LG_ACT_SIGMOID};
    static const double params[] = {1.0, 7.0, 3.0, 0.1, 1.0, -0.5, 1.0, 1.0};
    int which = (int)((fc->index / 3) % 8), relu_like = 1;
    lg_net ref, dref; /* the driver's smooth net (conv kept) and the MPFR pass's dense form */
    lg_prop p;
    long bad = 0;
    if (lg_net_copy(&ref, &fc->net) != LG_OK) return 0;
    for (int k = 0; k + 1 < ref.n_layers; k++) {
        if (ref.layers[k].lin.kind == LG_LAYER_MAX) continue; /* a max-pool node keeps the identity */
        int alt = which == 7 && k % 2 == 1;
        ref.layers[k].act = alt ? LG_ACT_PRELU : acts[which];
        ref.layers[k].lambda = alt ? 0.25 : params[which];
        relu_like &= lg_act_relu_like(ref.layers[k].act);
    }
    memset(&dref, 0, sizeof dref);
    if (fz_dense_form(&dref, &ref) != LG_OK) {
        lg_net_free(&ref);
        return 0;
    }
    int n_in = fc->net.n_in, no = fc->prop.n_out;
    const lg_prop_case *S = &fc->prop.cases[0];
    int n_cons[3] = {0, 0, 0};
    for (int t = 0; t < S->n_terms && t < 3; t++) n_cons[t] = S->terms[t].n_cons;
    if (lg_prop_alloc(&p, n_in, no, S->n_terms, n_cons) != LG_OK) {
        lg_net_free(&ref);
        lg_net_free(&dref);
        return 0;
    }
    lg_prop_case *C = &p.cases[0];
    double *xc = malloc((size_t)n_in * sizeof *xc);
    mpfr_t *y = malloc((size_t)no * sizeof *y), v, t;
    LG_ASSERT(xc && y);
    for (int i = 0; i < n_in; i++) {
        C->lo[i] = S->lo[i];
        C->hi[i] = S->hi[i];
        xc[i] = S->lo[i] + (S->hi[i] - S->lo[i]) / 2;
        if (!(xc[i] >= S->lo[i] && xc[i] <= S->hi[i])) xc[i] = S->lo[i];
    }
    for (int j = 0; j < no; j++) mpfr_init2(y[j], FZ_PREC);
    mpfr_inits2(FZ_PREC, v, t, (mpfr_ptr)0);
    fz_forward(&dref, xc, y);
    /* constants: the boundary through the centre, moved by 0, ±1 or ±2 ulps of the value */
    for (int k = 0; k < S->n_terms; k++)
        for (int c = 0; c < S->terms[k].n_cons; c++) {
            lg_lincon *L = &C->terms[k].cons[c];
            memcpy(L->coef, S->terms[k].cons[c].coef, (size_t)no * sizeof(double));
            mpfr_set_ui(v, 0, MPFR_RNDN);
            for (int j = 0; j < no; j++) {
                mpfr_mul_d(t, y[j], L->coef[j], MPFR_RNDN);
                mpfr_add(v, v, t, MPFR_RNDN);
            }
            double d = -mpfr_get_d(v, MPFR_RNDN);
            int m = (int)((fc->index / 24 + c + k) % 9), steps = m - 2;
            if (m >= 5) { /* ±1e-12 … ±1e-15 relative instead of ulps */
                d += (m % 2 ? 1.0 : -1.0) * pow(10.0, -7.0 - m) * (1.0 + fabs(d));
                steps = 0;
            }
            for (; steps > 0; steps--) d = nextafter(d, INFINITY);
            for (; steps < 0; steps++) d = nextafter(d, -INFINITY);
            L->d = isfinite(d) ? d : 0.0;
        }
    double depth = fz_depth(&dref, &p, xc);
    s->smooth_runs++;
    /* the gate at the centre itself */
    double *x = malloc((size_t)n_in * sizeof *x);
    LG_ASSERT(x);
    memcpy(x, xc, (size_t)n_in * sizeof *x);
    int gate = lg_witness_accept(&ref, &p, 0, x, NULL);
    s->smooth_gate_yes += gate == 1;
    if (gate == 1) {
        double dx = fz_depth(&dref, &p, x);
        if (dx > 1e-40) bad += fz_smooth_wrong(fc, s, log, "gate", acts[which], params[which], x, dx);
    }
    /* the direct route on the same net and property; the centre is the oracle's point */
    char cls[48];
    snprintf(cls, sizeof cls, "tie %s%s", which == 7 ? "mix" : lg_act_name(acts[which]),
             lg_net_has_conv(&ref) ? " conv" : "");
    s->direct_known += o->direct && depth <= -FZ_JUDGE;
    if (o->direct) bad += fz_direct_run(fc, &ref, &dref, &p, &p, 1, NULL, depth, cls, (int)(fc->index / 3 % 12), o, s, log);
    if (!relu_like) goto done; /* sigmoid: no ReLU substitute */
    /* the driver through the substitution */
    lg_verify_opts vo = lg_verify_opts_default();
    vo.timeout_s = o->timeout_s;
    vo.seed = (unsigned long)fc->index;
    vo.bab.threads = 1;
    vo.refine = (lg_refine_mode)o->refine;
    vo.bab.cuts = o->cuts;
    lg_verify_report r;
    double delta;
    double t0 = lg_now();
    lg_status st = lg_verify_transfer(&fc->net, &ref, &p, &vo, &r, &delta);
    s->t_verify += lg_now() - t0;
    if (st == LG_OK) {
        if (r.verdict == LG_VERDICT_VIOLATED) {
            double dx = r.x ? fz_depth(&dref, &p, r.x) : INFINITY;
            if (dx > 1e-40) bad += fz_smooth_wrong(fc, s, log, "violated", acts[which], params[which], r.x, dx);
        } else if (r.verdict == LG_VERDICT_ROBUST && depth < -1e-40) {
            bad += fz_smooth_wrong(fc, s, log, "robust", acts[which], params[which], xc, depth);
        }
        lg_verify_report_free(&r);
    }
    if (!lg_net_has_max(&fc->net) && lg_net_first_tnode(&fc->net) < 0)
        bad += fz_exact_route(fc, &ref, &dref, C->lo, C->hi, xc, s, log, acts[which], params[which]);
done:
    free(x);
    for (int j = 0; j < no; j++) mpfr_clear(y[j]);
    mpfr_clears(v, t, (mpfr_ptr)0);
    free(y);
    free(xc);
    lg_prop_free(&p);
    lg_net_free(&ref);
    lg_net_free(&dref);
    return bad;
}

/* ---- smooth nets verified directly (soundfuzz.h) ---- */

/* f(v) in double with libm (the search's own evaluator, not lgelu's). */
static double fzd_act(lg_act a, double v, double p)
{
    switch (a) {
    case LG_ACT_IDENTITY: return v;
    case LG_ACT_RELU: return v > 0 ? v : 0;
    case LG_ACT_PRELU: return v > 0 ? v : p * v;
    case LG_ACT_SIGMOID: return v >= 0 ? 1 / (1 + exp(-v)) : exp(v) / (1 + exp(v));
    case LG_ACT_SWISH: return v * (p * v >= 0 ? 1 / (1 + exp(-p * v)) : exp(p * v) / (1 + exp(p * v)));
    case LG_ACT_GELU: return v * 0.5 * erfc(-v / sqrt(2.0));
    case LG_ACT_LGELU: return v * 0.5 * erfc(-p * v / sqrt(2.0));
    default: LG_ASSERT(0 && "soundfuzz: an activation the search does not know"); return 0;
    }
}

/* Double depth of x in case ci (a dense net, chain or graph; +inf when not
 * finite), the search's objective. buf: lg_net_nodes_len doubles. */
static double fzd_depth(const lg_net *net, const lg_prop *p, int ci, const double *x, double *buf)
{
    double *v0 = buf;
    for (int i = 0; i < net->n_in; i++) {
        v0[i] = x[i];
        if (net->in_sub) v0[i] = (v0[i] - net->in_sub[i]) / net->in_div[i];
    }
    const double *a = v0;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        double *z = buf + lg_net_node_offset(net, k);
        for (int o = 0; o < L->n_out; o++) {
            double v = L->b[o];
            for (int tm = 0; tm < lg_layer_n_lin(L); tm++) {
                const lg_linear *A = lg_layer_lin(L, tm);
                const double *src = buf + lg_net_node_offset(net, A->src);
                if (A->kind == LG_LAYER_INDEX) {
                    v += A->map[o] >= 0 ? src[A->map[o]] : 0.0;
                    continue;
                }
                for (int i = 0; i < A->n_in; i++) v += A->W[(size_t)o * (size_t)A->n_in + (size_t)i] * src[i];
            }
            z[o] = fzd_act(L->act, v, L->lambda);
        }
        a = z;
    }
    const lg_prop_case *C = &p->cases[ci];
    double best = INFINITY;
    for (int k = 0; k < C->n_terms; k++) {
        double worst = -INFINITY;
        for (int c = 0; c < C->terms[k].n_cons; c++) {
            double v = C->terms[k].cons[c].d;
            for (int j = 0; j < p->n_out; j++) v += C->terms[k].cons[c].coef[j] * a[j];
            if (v > worst) worst = v;
        }
        if (worst < best) best = worst;
    }
    return isfinite(best) || best < 0 ? best : INFINITY;
}

/* The oracle's counterexample search on case ci of p for the dense smooth
 * net: the centre, up to 64 corners, hint (may be NULL), 192 uniform points,
 * then a pattern search from the 3 best; the 4 best points are judged by
 * the MPFR pass. Returns the least MPFR depth (≤ −1e-40: a known
 * counterexample, written to xbest[n_in]). */
#define FZ_SEARCH_KEEP 4
static double fz_search(const lg_net *net, const lg_prop *p, int ci, const double *hint, lg_rng *r, double *xbest,
                        const char *const *dstr)
{
    int n = p->n_in;
    const lg_prop_case *C = &p->cases[ci];
    size_t nl = lg_net_nodes_len(net); /* fzd_depth's node values */
    double *buf = malloc((nl + (FZ_SEARCH_KEEP + 2) * (size_t)n) * sizeof *buf);
    LG_ASSERT(buf);
    double *keep = buf + nl, *x = keep + FZ_SEARCH_KEEP * n, *y = x + n;
    double kd[FZ_SEARCH_KEEP];
    for (int q = 0; q < FZ_SEARCH_KEEP; q++) kd[q] = INFINITY;
    for (int q = 0; q < FZ_SEARCH_KEEP; q++) memcpy(keep + (size_t)q * n, C->lo, (size_t)n * sizeof *x);
    int n_corner = n <= 6 ? 1 << n : 64;
    for (int it = 0; it < 1 + n_corner + 1 + 192; it++) {
        for (int i = 0; i < n; i++) {
            double lo = C->lo[i], hi = C->hi[i];
            if (it == 0) x[i] = lo + (hi - lo) / 2;
            else if (it <= n_corner) x[i] = (n <= 6 ? ((it - 1) >> i) & 1 : lg_rng_below(r, 2)) ? hi : lo;
            else if (it == n_corner + 1) x[i] = hint ? hint[i] : lo;
            else x[i] = lo + (hi - lo) * lg_rng_uniform(r);
            if (!(x[i] >= lo && x[i] <= hi)) x[i] = lo;
        }
        double d = fzd_depth(net, p, ci, x, buf);
        int worst = 0;
        for (int q = 1; q < FZ_SEARCH_KEEP; q++)
            if (kd[q] > kd[worst]) worst = q;
        if (d < kd[worst]) {
            kd[worst] = d;
            memcpy(keep + (size_t)worst * n, x, (size_t)n * sizeof *x);
        }
    }
    for (int q = 0; q < FZ_SEARCH_KEEP - 1; q++) { /* pattern search: ± a step per coordinate, halved when stuck */
        double *xq = keep + (size_t)q * n, step = 0.25, d = kd[q];
        for (int it = 0; it < 40 && step > 1e-9; it++) {
            int moved = 0;
            for (int i = 0; i < n; i++)
                for (int sg = -1; sg <= 1; sg += 2) {
                    memcpy(y, xq, (size_t)n * sizeof *y);
                    y[i] += sg * step * (C->hi[i] - C->lo[i]);
                    if (y[i] < C->lo[i]) y[i] = C->lo[i];
                    if (y[i] > C->hi[i]) y[i] = C->hi[i];
                    double dy = fzd_depth(net, p, ci, y, buf);
                    if (dy < d) {
                        d = dy;
                        memcpy(xq, y, (size_t)n * sizeof *y);
                        moved = 1;
                    }
                }
            if (!moved) step /= 2;
        }
        kd[q] = d;
    }
    double best = INFINITY;
    for (int q = 0; q < FZ_SEARCH_KEEP; q++) {
        double d = fz_depth_c(net, p, ci, keep + (size_t)q * n, dstr);
        if (d < best) {
            best = d;
            memcpy(xbest, keep + (size_t)q * n, (size_t)n * sizeof *xbest);
        }
    }
    free(buf);
    return best;
}


static void fz_count_class(lg_fuzz_stats *s, const char *name)
{
    for (int i = 0; i < s->n_dclass; i++)
        if (!strcmp(s->dclass[i], name)) {
            s->dclass_n[i]++;
            return;
        }
    if (s->n_dclass == LG_FUZZ_MAX_DCLASS) return;
    snprintf(s->dclass[s->n_dclass], sizeof s->dclass[0], "%s", name);
    s->dclass_n[s->n_dclass++] = 1;
}

static void fz_direct_wrong(const lg_fuzz_case *fc, lg_fuzz_stats *s, FILE *log, const char *what, const char *cls,
                            const lg_net *net, const char *mode, const double *x, double depth)
{
    s->wrong_direct++;
    fprintf(log, "soundfuzz: WRONG-DIRECT %s seed=%lu case=%ld [%s] %s depth %.3g at", what, (unsigned long)fc->seed,
            fc->index, cls, mode, depth);
    for (int i = 0; x && i < net->n_in; i++) fprintf(log, " %.17g", x[i]);
    fprintf(log, "\n  smooth layers:");
    for (int k = 0; k < net->n_layers; k++) fprintf(log, " %s(%.17g)", lg_act_name(net->layers[k].act), net->layers[k].lambda);
    fprintf(log, "\n");
    lg_fuzz_case_print(fc, log);
    fprintf(log, "  reproduce: build/lgelu_soundfuzz --seed %lu --case %ld\n", (unsigned long)fc->seed, fc->index);
    count_kind(s, "WRONG-DIRECT", 0, NULL);
}

/* One direct run of the smooth net (the driver gets net and p, the MPFR
 * pass dnet and the oracle's own property: the one-case properties
 * ex[0..n_ex) with constants dstr, NULL: their doubles), judged: `robust` is
 * wrong when known ≤ −FZ_JUDGE (the oracle's search holds a counterexample),
 * `violated` when its witness lies in no box of ex or its MPFR depth there
 * is > FZ_JUDGE. mode picks solver (auto / none), B&B mode and attack.
 * Returns wrong answers. */
static long fz_direct_run(const lg_fuzz_case *fc, const lg_net *net, const lg_net *dnet, const lg_prop *p,
                          const lg_prop *ex, int n_ex, const char *const *dstr, double known, const char *cls,
                          int mode, const lg_fuzz_opts *o, lg_fuzz_stats *s, FILE *log)
{
    static const lg_bab_mode bm[3] = {LG_BAB_NONE, LG_BAB_INPUT, LG_BAB_AUTO};
    lg_verify_opts vo = lg_verify_opts_default();
    vo.solver = lg_test_solver(mode % 2 ? "none" : "auto");
    vo.bab.mode = bm[(mode / 2) % 3];
    vo.attack = (mode / 6) % 2 == 0;
    vo.timeout_s = o->direct_timeout_s > 0 ? o->direct_timeout_s : o->timeout_s;
    vo.seed = (unsigned long)fc->index;
    vo.bab.threads = 1;
    /* the smooth pipeline's options, from the case index: root intermediate α-CROWN (default,
     * off, few steps), the activation-splitting order, α steps */
    static const int ras[3] = {-1, 0, 4};
    unsigned long ix = (unsigned long)fc->index / 3;
    vo.bab.root_alpha_steps = ras[ix % 3];
    vo.bab.act_order = (int)((ix / 3) % 2 ? LG_BAB_ACT_DEPTH : LG_BAB_ACT_BEST);
    if ((ix / 6) % 2) vo.bab.alpha_steps = 25;
    char mstr[160];
    snprintf(mstr, sizeof mstr, "--solver %s --bab %s%s --bab-root-alpha %d --bab-order %s --alpha-steps %d",
             lg_solver_pick_name(&vo.solver), lg_bab_mode_name(vo.bab.mode), vo.attack ? "" : " --no-attack",
             vo.bab.root_alpha_steps < 0 ? LG_BAB_SMOOTH_ROOT_ALPHA : vo.bab.root_alpha_steps,
             lg_bab_act_order_name((lg_bab_act_order)vo.bab.act_order), vo.bab.alpha_steps);
    lg_verify_report r;
    double t0 = lg_now();
    lg_status st = lg_verify_run(net, p, &vo, &r);
    s->t_verify += lg_now() - t0;
    s->t_direct += lg_now() - t0;
    s->direct_runs++;
    fz_count_class(s, cls);
    if (st != LG_OK) {
        s->errors++;
        fprintf(log, "soundfuzz: ERROR direct seed=%lu case=%ld [%s] %s: %s\n", (unsigned long)fc->seed, fc->index, cls,
                mstr, lg_errmsg());
        count_kind(s, "ERROR-DIRECT", 0, NULL);
        return 1;
    }
    long bad = 0;
    if (r.verdict == LG_VERDICT_ROBUST) {
        s->direct_robust++;
        if (known <= -FZ_JUDGE) {
            fz_direct_wrong(fc, s, log, "robust", cls, net, mstr, NULL, known);
            bad++;
        }
    } else if (r.verdict == LG_VERDICT_VIOLATED) {
        s->direct_violated++;
        double dx = INFINITY;
        for (int c = 0; r.x && c < n_ex; c++) {
            double d = fz_depth_c(dnet, &ex[c], 0, r.x, dstr);
            if (d < dx) dx = d;
        }
        if (!(dx <= FZ_JUDGE)) {
            fz_direct_wrong(fc, s, log, "violated", cls, net, mstr, r.x, dx);
            bad++;
        }
    } else {
        s->direct_unknown++;
    }
    if (o->verbose)
        fprintf(log, "soundfuzz: case %ld direct [%s] %s: %s (%s, %.3f s; oracle depth %.3g)\n", fc->index, cls, mstr,
                lg_verdict_name(r.verdict), r.method[0] ? r.method : r.how.reason, lg_now() - t0, known);
    lg_verify_report_free(&r);
    /* the back-ends refuse a smooth net with a message, never a wrong answer (a dag whose only
     * hidden node is a max-pool node keeps no smooth layer: nothing to refuse) */
    if (!lg_bounds_net_smooth(net)) return bad;
    vo.solver = lg_test_solver(mode % 4 < 2 ? "z3" : "glpk");
    vo.timeout_s = 0.5;
    st = lg_verify_run(net, p, &vo, &r);
    if (st != LG_ERR_UNSUPPORTED) {
        s->errors++;
        fprintf(log, "soundfuzz: ERROR direct seed=%lu case=%ld [%s]: --solver %s on a smooth net returned %s, not a "
                     "refusal\n", (unsigned long)fc->seed, fc->index, cls, lg_solver_pick_name(&vo.solver), lg_status_str(st));
        count_kind(s, "ERROR-DIRECT-REFUSAL", 0, NULL);
        if (st == LG_OK) lg_verify_report_free(&r);
        bad++;
    }
    return bad;
}

/* The smooth form of fc's net: hidden layer k gets acts[k] with params[k]. */
static lg_status fz_smooth_net(lg_net *net, lg_net *dnet, const lg_fuzz_case *fc, const lg_act *acts,
                               const double *params)
{
    memset(dnet, 0, sizeof *dnet);
    lg_status st = lg_net_copy(net, &fc->net);
    if (st) return st;
    for (int k = 0; k + 1 < net->n_layers; k++) {
        if (net->layers[k].lin.kind == LG_LAYER_MAX) continue; /* a max-pool node keeps the identity */
        net->layers[k].act = acts[k];
        net->layers[k].lambda = params[k];
    }
    st = fz_dense_form(dnet, net);
    if (st) lg_net_free(net);
    return st;
}

/* A random smooth activation and its parameter. */
static lg_act fz_pick_act(lg_rng *r, double *param)
{
    static const lg_act acts[] = {LG_ACT_SIGMOID, LG_ACT_PRELU, LG_ACT_SWISH, LG_ACT_GELU, LG_ACT_LGELU};
    static const double prelu[] = {0.1, 0.25, -0.5, 2.0, 0.0, 1e-3};
    lg_act a = acts[lg_rng_below(r, 5)];
    *param = a == LG_ACT_PRELU ? prelu[lg_rng_below(r, 6)]
             : a == LG_ACT_SWISH ? (lg_rng_below(r, 2) ? 1.0 : 1.0 + 4.0 * lg_rng_uniform(r))
             : a == LG_ACT_LGELU ? (lg_rng_below(r, 4) ? 1.0 + 8.0 * lg_rng_uniform(r) : 0.25 + 0.75 * lg_rng_uniform(r))
                                 : 1.0;
    if ((a == LG_ACT_SWISH || a == LG_ACT_LGELU) && lg_rng_below(r, 8) == 0)
        *param = pow(10.0, 1.0 + 2.0 * lg_rng_uniform(r)); /* steep: 10 … 1000, nearly relu */
    return a;
}

/* v (finite) as VNN-LIB text that denotes exactly the double: an integer,
 * or M / 2^k as nested divisions by powers of two ≤ 2^1000. */
static void fz_exact_text(char *out, size_t cap, double v)
{
    int e;
    double m = frexp(v, &e), M = ldexp(m, 53);
    int k = 53 - e; /* v = M / 2^k */
    while (k > 0 && M == 2 * trunc(M / 2)) M /= 2, k--;
    if (k <= 0) {
        snprintf(out, cap, "%.0f", v);
        return;
    }
    size_t n = 0;
    for (int r = k; r > 1000; r -= 1000) n += (size_t)snprintf(out + n, cap - n, "(/ ");
    n += (size_t)snprintf(out + n, cap - n, "(/ %.0f %.0f)", M, ldexp(1.0, k % 1000 ? k % 1000 : 1000));
    for (int r = k; r > 1000; r -= 1000) n += (size_t)snprintf(out + n, cap - n, " %.0f)", ldexp(1.0, 1000));
    LG_ASSERT(n < cap);
}

/* Write p's case 0 as VNN-LIB text with k boxes (case 0's box and k − 1
 * others inside the same outer box) in one disjunction, box bounds and
 * coefficients exactly (fz_exact_text), and output constants as decimals of 3–17 significant digits (often not doubles);
 * dstr[i] receives each constant's text. */
static char *fz_vnnlib_text(const lg_prop *p, int k, lg_rng *r, double *boxes, char dstr[][40], int *n_d)
{
    const lg_prop_case *C = &p->cases[0];
    int n = p->n_in;
    size_t cap = 1 << 16, len = 0;
    char *t = malloc(cap), a[1200], bb[1200];
    LG_ASSERT(t);
#define FZ_PUT(...)                                                                                                    \
    do {                                                                                                               \
        len += (size_t)snprintf(t + len, cap - len, __VA_ARGS__);                                                      \
        LG_ASSERT(len < cap);                                                                                          \
    } while (0)
    for (int i = 0; i < n; i++) FZ_PUT("(declare-const X_%d Real)\n", i);
    for (int j = 0; j < p->n_out; j++) FZ_PUT("(declare-const Y_%d Real)\n", j);
    FZ_PUT("(assert (or");
    for (int b = 0; b < k; b++) {
        double *lo = boxes + (size_t)b * 2 * n, *hi = lo + n;
        for (int i = 0; i < n; i++) {
            if (b == 0) {
                lo[i] = C->lo[i], hi[i] = C->hi[i];
            } else { /* a sub-box of case 0's box, sometimes a point */
                double u = lg_rng_uniform(r), v = lg_rng_uniform(r);
                if (u > v) { double w = u; u = v; v = w; }
                if (lg_rng_below(r, 4) == 0) v = u;
                lo[i] = C->lo[i] + (C->hi[i] - C->lo[i]) * u;
                hi[i] = C->lo[i] + (C->hi[i] - C->lo[i]) * v;
                if (!(lo[i] >= C->lo[i] && lo[i] <= C->hi[i])) lo[i] = C->lo[i];
                if (!(hi[i] >= lo[i] && hi[i] <= C->hi[i])) hi[i] = lo[i];
            }
        }
        FZ_PUT("\n  (and");
        for (int i = 0; i < n; i++) {
            fz_exact_text(a, sizeof a, lo[i]);
            fz_exact_text(bb, sizeof bb, hi[i]);
            FZ_PUT(" (>= X_%d %s) (<= X_%d %s)", i, a, i, bb);
        }
        FZ_PUT(")");
    }
    FZ_PUT("))\n(assert (or");
    *n_d = 0;
    for (int q = 0; q < C->n_terms; q++) {
        FZ_PUT("\n  (and");
        for (int c = 0; c < C->terms[q].n_cons; c++) {
            const lg_lincon *L = &C->terms[q].cons[c];
            FZ_PUT(" (<= (+");
            for (int j = 0; j < p->n_out; j++)
                if (L->coef[j] != 0) {
                    fz_exact_text(a, sizeof a, L->coef[j]);
                    FZ_PUT(" (* %s Y_%d)", a, j);
                }
            snprintf(dstr[*n_d], sizeof dstr[0], "%.*g", 3 + (int)lg_rng_below(r, 15), L->d);
            FZ_PUT(" 0) %s%s)", dstr[*n_d][0] == '-' ? "" : "-", dstr[*n_d][0] == '-' ? dstr[*n_d] + 1 : dstr[*n_d]);
            (*n_d)++;
        }
        FZ_PUT(")");
    }
    FZ_PUT("))\n");
#undef FZ_PUT
    return t;
}

/* α-optimised bounds of case 0's constraint rows on net (the smooth net, or
 * the ReLU net with a max-pool node; soundfuzz.h): the hidden layers tightened by lg_alpha_tighten (random steps and rate),
 * then lg_alpha_optimize from random α; every row's bound must be ≤ the
 * row's exact value at 24 random points of the box (corners among them) and
 * at xbest (NULL: none). dnet: the dense form for the MPFR pass. Returns
 * wrong bounds. */
static long fz_alpha_check(const lg_fuzz_case *fc, const lg_net *net, const lg_net *dnet, const lg_prop *p,
                           const double *xbest, lg_rng *r, lg_fuzz_stats *s, FILE *log)
{
    const lg_prop_case *C = &p->cases[0];
    int m = 0, no = lg_net_n_out(net), n_in = net->n_in;
    for (int t = 0; t < C->n_terms; t++) m += C->terms[t].n_cons;
    if (m == 0) return 0;
    lg_bounds b;
    if (lg_bounds_init(&b, net) != LG_OK) return 0;
    long bad = 0;
    size_t size = (size_t)lg_alpha_size(net);
    double *Cm = malloc((size_t)m * ((size_t)no + 2 + size) * sizeof *Cm), *x = malloc((size_t)n_in * sizeof *x);
    LG_ASSERT(Cm && x);
    double *d = Cm + (size_t)m * (size_t)no, *out = d + m, *al = out + m;
    lg_status st = lg_bounds_symbolic(&b, net, C->lo, C->hi);
    int steps = 1 + (int)lg_rng_below(r, 30), tsteps = (int)lg_rng_below(r, 8);
    double lr = 0.05 * pow(40.0, lg_rng_uniform(r)); /* 0.05 … 2 */
    for (int k = 1; st == LG_OK && tsteps > 0 && k + 1 < net->n_layers; k++) {
        int nt;
        st = lg_alpha_tighten(&b, net, k, tsteps, lr, NULL, &nt);
        if (st == LG_OK) st = lg_bounds_symbolic_unstable_from(&b, net, k + 1);
    }
    if (st != LG_OK || !lg_bounds_finite(&b)) goto done;
    for (int t = 0, q = 0; t < C->n_terms; t++)
        for (int c = 0; c < C->terms[t].n_cons; c++, q++) {
            memcpy(Cm + (size_t)q * (size_t)no, C->terms[t].cons[c].coef, (size_t)no * sizeof *Cm);
            d[q] = C->terms[t].cons[c].d;
        }
    lg_alpha_default(&b, net, m, al);
    for (size_t i = 0; i < (size_t)m * size; i++) /* random starting lines, some left at the area-best */
        if (lg_rng_below(r, 2)) al[i] = lg_rng_below(r, 4) == 0 ? (double)lg_rng_below(r, 2) : lg_rng_uniform(r);
    if (lg_alpha_optimize(&b, net, m, Cm, d, steps, lr, NULL, al, out, NULL) != LG_OK) goto done;
    s->alpha_checks++;
    s->alpha_max += lg_net_has_max(net);
    mpfr_t *y = malloc((size_t)no * sizeof *y), v, t;
    LG_ASSERT(y);
    for (int j = 0; j < no; j++) mpfr_init2(y[j], FZ_PREC);
    mpfr_inits2(FZ_PREC, v, t, (mpfr_ptr)0);
    for (int pt = 0; pt <= 24 && !bad; pt++) {
        if (pt == 24) {
            if (!xbest) break;
            memcpy(x, xbest, (size_t)n_in * sizeof *x);
        } else {
            for (int i = 0; i < n_in; i++) {
                double u = pt < 4 ? (double)lg_rng_below(r, 2) : lg_rng_uniform(r);
                x[i] = C->lo[i] + u * (C->hi[i] - C->lo[i]);
                if (!(x[i] >= C->lo[i])) x[i] = C->lo[i];
                if (!(x[i] <= C->hi[i])) x[i] = C->hi[i];
            }
        }
        int inside = 1;
        for (int i = 0; i < n_in; i++) inside &= x[i] >= C->lo[i] && x[i] <= C->hi[i];
        if (!inside) continue;
        s->alpha_points++;
        fz_forward(dnet, x, y);
        for (int q = 0; q < m && !bad; q++) {
            mpfr_set_d(v, d[q], MPFR_RNDN);
            for (int j = 0; j < no; j++) {
                mpfr_mul_d(t, y[j], Cm[(size_t)q * (size_t)no + (size_t)j], MPFR_RNDN);
                mpfr_add(v, v, t, MPFR_RNDN);
            }
            mpfr_sub_d(v, v, out[q], MPFR_RNDN); /* value − bound: must be ≥ 0 */
            if (mpfr_cmp_d(v, -FZ_JUDGE) < 0) {
                s->wrong_alpha++;
                bad++;
                fprintf(log, "soundfuzz: WRONG-ALPHA seed=%lu case=%ld row %d: bound %.17g above the row's value by %.3g "
                             "(steps %d, rate %g, tighten %d) at",
                        (unsigned long)fc->seed, fc->index, q, out[q], -mpfr_get_d(v, MPFR_RNDN), steps, lr, tsteps);
                for (int i = 0; i < n_in; i++) fprintf(log, " %.17g", x[i]);
                fprintf(log, "\n");
                lg_fuzz_case_print(fc, log);
                count_kind(s, "WRONG-ALPHA", 0, NULL);
            }
        }
    }
    for (int j = 0; j < no; j++) mpfr_clear(y[j]);
    mpfr_clears(v, t, (mpfr_ptr)0);
    free(y);
done:
    free(Cm);
    free(x);
    lg_bounds_free(&b);
    return bad;
}

/* fz_alpha_check on the ReLU net of a case with max-pool nodes: random α on its planes (backsub.h). */
static long fz_alpha_check_max(const lg_fuzz_case *fc, lg_fuzz_stats *s, FILE *log)
{
    lg_net rd;
    if (fz_dense_form(&rd, &fc->net) != LG_OK) return 0;
    lg_rng r;
    lg_rng_init(&r, fc->seed ^ 0xa1fa3a1fa3ULL, (uint64_t)fc->index);
    long bad = fz_alpha_check(fc, &fc->net, &rd, &fc->prop, NULL, &r, s, log);
    lg_net_free(&rd);
    return bad;
}

long lg_fuzz_direct(const lg_fuzz_case *fc, const lg_fuzz_opts *o, lg_fuzz_stats *s, FILE *log)
{
    const lg_prop_case *S = &fc->prop.cases[0];
    if (S->n_terms < 1 || S->n_terms > 3) return 0;
    lg_rng r;
    lg_rng_init(&r, fc->seed ^ 0xd1ec7d1ec7ULL, (uint64_t)fc->index); /* the direct class's own stream */
    int nh = fc->net.n_layers - 1, mix = nh >= 2 && lg_rng_below(&r, 3) == 0;
    lg_act acts[4];
    double params[4];
    acts[0] = fz_pick_act(&r, &params[0]);
    for (int k = 1; k < nh; k++) {
        if (mix) {
            acts[k] = lg_rng_below(&r, 5) == 0 ? LG_ACT_RELU : fz_pick_act(&r, &params[k]);
            if (acts[k] == LG_ACT_RELU) params[k] = 1.0;
        } else {
            acts[k] = acts[0], params[k] = params[0];
        }
    }
    if (mix && acts[0] == acts[1]) acts[1] = acts[0] == LG_ACT_SIGMOID ? LG_ACT_GELU : LG_ACT_SIGMOID, params[1] = 1.0;
    lg_net net, dnet;
    if (fz_smooth_net(&net, &dnet, fc, acts, params) != LG_OK) return 0;
    char cls[64];
    snprintf(cls, sizeof cls, "%s%s", mix ? "mix" : lg_act_name(acts[0]), lg_net_has_conv(&net) ? " conv" : "");
    int n_in = net.n_in;
    double *xb = malloc((size_t)n_in * sizeof *xb);
    LG_ASSERT(xb);
    long bad = 0;
    int vnn = fc->index % 2 == 1; /* every other direct case: a VNN-LIB text with several boxes */
    for (int t = 0; t < S->n_terms; t++) vnn &= S->terms[t].n_cons > 0;
    if (!vnn && fc->margin > 0) {
        /* the margin class: the driver gets dprop (K kept both ways, lg_prop_margin), the oracle
         * the region Σ coef·y + d − K ≤ 0 with d − K at 300 bits */
        char *ks[16];
        const char *kp[16] = {0};
        int m = 0;
        mpfr_t v;
        mpfr_init2(v, FZ_PREC);
        for (int t = 0; t < S->n_terms; t++)
            for (int c = 0; c < S->terms[t].n_cons && m < 16; c++, m++) {
                mpfr_set_d(v, S->terms[t].cons[c].d, MPFR_RNDN);
                mpfr_sub_d(v, v, fc->margin, MPFR_RNDN);
                LG_ASSERT(mpfr_asprintf(&ks[m], "%.95Re", v) > 0);
                kp[m] = ks[m];
            }
        mpfr_clear(v);
        double known = fz_search(&dnet, &fc->prop, 0, fc->witness, &r, xb, kp);
        s->direct_known += known <= -FZ_JUDGE;
        strncat(cls, " margin", sizeof cls - strlen(cls) - 1);
        bad += fz_direct_run(fc, &net, &dnet, &fc->dprop, &fc->prop, 1, kp, known, cls, (int)lg_rng_below(&r, 12), o,
                             s, log);
        for (int i = 0; i < m; i++) mpfr_free_str(ks[i]);
    } else if (!vnn) {
        double known = fz_search(&dnet, &fc->prop, 0, fc->witness, &r, xb, NULL);
        lg_prop tp;
        const lg_prop *p = &fc->prop;
        if (fc->index % 2 == 0 && isfinite(known) && lg_fuzz_prop_copy(&tp, &fc->prop) == LG_OK) {
            /* tight: every constant moved by −known ± 10^[−15,−9] relative, so the search's best point
             * lies just inside or just outside the region; searched again on the moved property.
             * point (half of them): the box shrunk to that point first, offsets ± 10^[−16,−10] */
            int point = fc->index % 4 == 2;
            if (point) {
                memcpy(tp.cases[0].lo, xb, (size_t)n_in * sizeof *xb);
                memcpy(tp.cases[0].hi, xb, (size_t)n_in * sizeof *xb);
            }
            double delta = (lg_rng_below(&r, 2) ? 1.0 : -1.0) *
                           pow(10.0, (point ? -16.0 : -15.0) + 6.0 * lg_rng_uniform(&r)) * (1.0 + fabs(known));
            for (int t = 0; t < tp.cases[0].n_terms; t++)
                for (int c = 0; c < tp.cases[0].terms[t].n_cons; c++) tp.cases[0].terms[t].cons[c].d += delta - known;
            p = &tp;
            known = point ? fz_depth_c(&dnet, p, 0, xb, NULL) : fz_search(&dnet, p, 0, xb, &r, xb, NULL);
            strncat(cls, point ? " point" : " tight", sizeof cls - strlen(cls) - 1);
        }
        s->direct_known += known <= -FZ_JUDGE;
        bad += fz_direct_run(fc, &net, &dnet, p, p, 1, NULL, known, cls, (int)lg_rng_below(&r, 12), o, s, log);
        bad += fz_alpha_check(fc, &net, &dnet, p, isfinite(known) ? xb : NULL, &r, s, log);
        if (lg_net_has_max(&fc->net)) bad += fz_alpha_check_max(fc, s, log); /* the ReLU net too */
        if (p == &tp) lg_prop_free(&tp);
    } else {
        int k = 2 + (int)lg_rng_below(&r, 2), n_d = 0;
        double *boxes = malloc((size_t)k * 2 * (size_t)n_in * sizeof *boxes);
        char(*dstr)[40] = malloc(16 * sizeof *dstr);
        lg_prop ex[3];
        LG_ASSERT(boxes && dstr);
        char *text = fz_vnnlib_text(&fc->prop, k, &r, boxes, dstr, &n_d);
        const char *dptr[16];
        for (int i = 0; i < n_d; i++) dptr[i] = dstr[i];
        lg_prop p;
        lg_status st = lg_vnnlib_parse(&p, text, strlen(text), "soundfuzz.vnnlib", n_in, fc->prop.n_out);
        int n_ex = 0;
        for (; st == LG_OK && n_ex < k; n_ex++) { /* the oracle's own property: box b with case 0's terms */
            if (lg_fuzz_prop_copy(&ex[n_ex], &fc->prop) != LG_OK) break;
            memcpy(ex[n_ex].cases[0].lo, boxes + (size_t)n_ex * 2 * n_in, (size_t)n_in * sizeof(double));
            memcpy(ex[n_ex].cases[0].hi, boxes + ((size_t)n_ex * 2 + 1) * n_in, (size_t)n_in * sizeof(double));
        }
        if (st != LG_OK) {
            s->errors++;
            bad++;
            fprintf(log, "soundfuzz: ERROR direct seed=%lu case=%ld: the VNN-LIB text does not parse: %s\n%s",
                    (unsigned long)fc->seed, fc->index, lg_errmsg(), text);
        } else if (n_ex == k) {
            double known = INFINITY;
            for (int b = 0; b < k; b++) {
                double kb = fz_search(&dnet, &ex[b], 0, b ? NULL : fc->witness, &r, xb, dptr);
                if (kb < known) known = kb;
            }
            s->direct_known += known <= -FZ_JUDGE;
            char vcls[80];
            snprintf(vcls, sizeof vcls, "%s vnnlib", cls);
            bad += fz_direct_run(fc, &net, &dnet, &p, ex, k, dptr, known, vcls, (int)lg_rng_below(&r, 12), o, s, log);
        }
        for (int b = 0; b < n_ex; b++) lg_prop_free(&ex[b]);
        if (st == LG_OK) lg_prop_free(&p);
        free(text);
        free(boxes);
        free(dstr);
    }
    free(xb);
    lg_net_free(&net);
    lg_net_free(&dnet);
    return bad;
}

long lg_fuzz_onnx_fold(unsigned long seed, long batch, long n, lg_fuzz_stats *s, FILE *log)
{
    char dir[256], cmd[1024], path[512];
    snprintf(dir, sizeof dir, "/tmp/lgelu_foldfuzz_%ld_%lu_%ld", (long)getpid(), seed, batch);
    snprintf(cmd, sizeof cmd, "%s %s/tests/onnx_foldfuzz.py %lu %ld %s >/dev/null", LG_PYTHON3, LG_SOURCE_DIR,
             seed * 100003UL + (unsigned long)batch, n, dir);
    if (system(cmd) != 0) {
        fprintf(log, "soundfuzz: ERROR onnx: %s failed (needs python3-onnx, python3-numpy)\n", cmd);
        s->errors++;
        return 1;
    }
    long bad = 0;
    for (long i = 0; i < n; i++) {
        s->onnx_graphs++;
        snprintf(path, sizeof path, "%s/g%ld.onnx", dir, i);
        lg_net net;
        lg_status st = lg_net_load(&net, path);
        if (st == LG_ERR_UNSUPPORTED) continue; /* refused with a message: allowed */
        if (st != LG_OK) {
            fprintf(log, "soundfuzz: ERROR onnx seed=%lu batch=%ld graph %ld: %s\n", seed, batch, i, lg_errmsg());
            s->errors++;
            bad++;
            continue;
        }
        s->onnx_imported++;
        snprintf(path, sizeof path, "%s/g%ld.txt", dir, i);
        FILE *f = fopen(path, "r");
        char line[8192];
        int no = lg_net_n_out(&net), ok = f != NULL;
        mpq_t *x = malloc((size_t)net.n_in * sizeof *x), *y = malloc((size_t)lg_net_max_width(&net) * sizeof *y), e;
        LG_ASSERT(x && y);
        for (int k = 0; k < net.n_in; k++) mpq_init(x[k]);
        for (int k = 0; k < lg_net_max_width(&net); k++) mpq_init(y[k]);
        mpq_init(e);
        while (ok && fgets(line, sizeof line, f)) {
            char *p = line, *end;
            for (int k = 0; k < net.n_in; k++, p = end) mpq_set_d(x[k], strtod(p, &end));
            p = strchr(p, ':');
            if (!p) break;
            p++;
            lg_oracle_forward(&net, x, y);
            for (int j = 0; j < no && ok; j++) {
                while (*p == ' ') p++;
                end = strpbrk(p, " \n");
                char tok[4096];
                size_t len = end ? (size_t)(end - p) : strlen(p);
                if (len >= sizeof tok) len = sizeof tok - 1;
                memcpy(tok, p, len);
                tok[len] = 0;
                p += len;
                ok = mpq_set_str(e, tok, 10) == 0;
                if (ok) {
                    mpq_canonicalize(e);
                    ok = mpq_equal(e, y[j]);
                }
            }
            if (!ok) break;
        }
        if (f) fclose(f);
        if (!ok) {
            s->onnx_wrong++;
            bad++;
            fprintf(log, "soundfuzz: WRONG-ONNX seed=%lu batch=%ld graph %ld: the imported net is not the file's "
                         "function (reproduce: %s %s/tests/onnx_foldfuzz.py %lu %ld DIR)\n",
                    seed, batch, i, LG_PYTHON3, LG_SOURCE_DIR, seed * 100003UL + (unsigned long)batch, n);
        }
        for (int k = 0; k < net.n_in; k++) mpq_clear(x[k]);
        for (int k = 0; k < lg_net_max_width(&net); k++) mpq_clear(y[k]);
        mpq_clear(e);
        free(x);
        free(y);
        lg_net_free(&net);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(log, "soundfuzz: could not remove %s\n", dir);
    return bad;
}

long lg_fuzz_run_case(const lg_fuzz_case *fc, const lg_fuzz_opts *o, lg_fuzz_stats *s, FILE *log)
{
    long bad = 0;
    int attack = fc->index % 2 == 0;
    s->cases++;
    s->truth_sat += fc->truth == LG_ANSWER_SAT;
    s->truth_unsat += fc->truth == LG_ANSWER_UNSAT;
    s->ties += fc->tie > 0 || strstr(fc->cls, "tie") != NULL;
    s->convs += fc->dnet.n_layers > 0 && lg_net_is_chain(&fc->net);
    s->dags += !lg_net_is_chain(&fc->net);
    s->dag_max += lg_net_has_max(&fc->net);
    for (int si = 0; si < LG_FUZZ_N_SOLVERS; si++) {
        if (!o->solver_on[si]) continue;
        for (int bi = 0; bi < LG_FUZZ_N_BABS; bi++) {
            if (!o->bab_on[bi]) continue;
            int only = strcmp(lg_fuzz_solver_names[si], "glpk-only") == 0;
            if (only && bi != 0) continue; /* back-end only: no branch and bound to vary */
            lg_verify_opts vo = lg_verify_opts_default();
            vo.solver = lg_test_solver(only ? "glpk" : lg_fuzz_solver_names[si]);
            vo.backend_only = only;
            vo.timeout_s = o->timeout_s;
            vo.attack = attack;
            vo.seed = (unsigned long)fc->index;
            vo.bab.mode = bab_modes[bi];
            vo.bab.threads = 1;
            vo.refine = (lg_refine_mode)o->refine;
            vo.bab.cuts = o->cuts;
            lg_verify_report r;
            double t0 = lg_now();
            lg_status st = lg_verify_run(&fc->net, fc->margin > 0 ? &fc->dprop : &fc->prop, &vo, &r);
            s->t_verify += lg_now() - t0;
            s->runs++;
            if (st != LG_OK) {
                s->errors++;
                bad++;
                report(fc, "ERROR", si, bi, attack, NULL, log);
                count_kind(s, "ERROR", si, NULL);
                continue;
            }
            int dag = !lg_net_is_chain(&fc->net);
            s->dag_runs += dag;
            s->dag_robust += dag && r.verdict == LG_VERDICT_ROBUST;
            s->dag_violated += dag && r.verdict == LG_VERDICT_VIOLATED;
            if (r.verdict == LG_VERDICT_ROBUST) {
                s->robust++;
                if (fc->truth == LG_ANSWER_SAT) { /* UNKNOWN (an undecided margin case) is not judged */
                    s->wrong_robust++;
                    bad++;
                    report(fc, "WRONG-ROBUST", si, bi, attack, &r, log);
                    count_kind(s, "WRONG-ROBUST", si, &r);
                }
            } else if (r.verdict == LG_VERDICT_VIOLATED) {
                s->violated++;
                if (!r.x || r.violated_case != 0 || !lg_oracle_is_counterexample_k(&fc->prob, r.x, fc->margin)) {
                    s->wrong_witness++;
                    bad++;
                    report(fc, "WRONG-WITNESS", si, bi, attack, &r, log);
                    count_kind(s, fc->truth == LG_ANSWER_SAT ? "WRONG-WITNESS(truth violated)" : "WRONG-WITNESS(truth robust)",
                               si, &r);
                }
            } else {
                s->unknown++;
                s->timeouts += r.how.timed_out != 0;
            }
            if (o->verbose)
                fprintf(log, "soundfuzz: case %ld %s/%s: %s (%s, %.3f s)\n", fc->index, lg_solver_pick_name(&vo.solver),
                        lg_fuzz_bab_names[bi], lg_verdict_name(r.verdict), r.method[0] ? r.method : r.how.reason,
                        lg_now() - t0);
            lg_verify_report_free(&r);
        }
    }
    if (fc->index % 3 == 0) bad += lg_fuzz_smooth(fc, o, s, log);
    if (fc->index % 3 == 1 && o->direct) bad += lg_fuzz_direct(fc, o, s, log);
    else if (lg_net_has_max(&fc->net)) bad += fz_alpha_check_max(fc, s, log); /* (lg_fuzz_direct calls it too) */
    s->bad_cases += bad > 0;
    return bad;
}

void lg_fuzz_stats_print(const lg_fuzz_stats *s, double seconds, FILE *f)
{
    double h = seconds / 3600.0;
    fprintf(f,
            "soundfuzz: %ld cases (%ld violated, %ld robust by the oracle; %ld near-tie; %ld conv), %ld runs in %.1f s "
            "(%.0f cases/hour; oracle %.1f s, driver %.1f s); driver verdicts: %ld robust, %ld violated, %ld unknown (%ld timeouts); "
            "WRONG: %ld robust, %ld witness; errors: %ld; cases with a wrong verdict or error: %ld; "
            "smooth near-tie runs: %ld (gate accepted %ld centres; exact-route deviation checked on %ld), WRONG smooth: %ld; "
            "ONNX graphs: %ld (%ld imported, the rest refused), WRONG imports: %ld; "
            "direct smooth runs: %ld in %.1f s (%ld robust, %ld violated, %ld unknown; oracle counterexample in %ld), WRONG direct: %ld; "
            "alpha-optimised bounds: %ld checks (%ld with max-pool planes) at %ld points, WRONG alpha: %ld\n",
            s->cases, s->truth_sat, s->truth_unsat, s->ties, s->convs, s->runs, seconds, h > 0 ? (double)s->cases / h : 0.0,
            s->t_oracle, s->t_verify, s->robust, s->violated, s->unknown, s->timeouts, s->wrong_robust, s->wrong_witness,
            s->errors, s->bad_cases, s->smooth_runs, s->smooth_gate_yes, s->exact_route, s->wrong_smooth, s->onnx_graphs,
            s->onnx_imported, s->onnx_wrong, s->direct_runs, s->t_direct, s->direct_robust, s->direct_violated, s->direct_unknown,
            s->direct_known, s->wrong_direct, s->alpha_checks, s->alpha_max, s->alpha_points, s->wrong_alpha);
    if (s->tnet_nets)
        fprintf(f, "soundfuzz: attention blocks: %ld nets (%ld with a counterexample found by the search), %ld runs "
                   "(%ld robust, %ld violated), %ld points checked against the back-substitution bounds, WRONG tnet: %ld\n",
                s->tnet_nets, s->tnet_known, s->tnet_runs, s->tnet_robust, s->tnet_violated, s->tnet_bound_checks,
                s->tnet_wrong);
    if (s->pool_graphs)
        fprintf(f, "soundfuzz: MaxPool graphs: %ld (%ld decided by the exact oracle, %ld with a known counterexample), "
                   "%ld runs (%ld robust, %ld violated), WRONG pool: %ld\n",
                s->pool_graphs, s->pool_decided, s->pool_known, s->pool_runs, s->pool_robust, s->pool_violated,
                s->pool_wrong);
    fprintf(f,
            "soundfuzz: DAG cases (residual sums, Concat, Slice, conv terms, max-pool nodes in %ld): %ld, %ld driver runs "
            "(%ld robust, %ld violated)\n",
            s->dag_max, s->dags, s->dag_runs, s->dag_robust, s->dag_violated);
    for (int i = 0; i < s->n_dclass; i++) fprintf(f, "soundfuzz:   direct %6ld  %s\n", s->dclass_n[i], s->dclass[i]);
    for (int i = 0; i < s->n_kinds; i++) fprintf(f, "soundfuzz:   %6ld  %s\n", s->kind_n[i], s->kind[i]);
}
