/* soundfuzz.c — every mode of the driver against the exact oracle (soundfuzz.h). */
#include "soundfuzz.h"
#include "core/clock.h"

#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <gmp.h>

#include "core/netfile.h"
#include "oracle.h"
#include "verify/recheck.h"
#include "verify/transfer.h"
#include "verify/verify.h"

const char *const lg_fuzz_solver_names[LG_FUZZ_N_SOLVERS] = {"auto", "glpk", "z3", "none", "glpk-only",
                                                                 "z3-lp"};
const char *const lg_fuzz_bab_names[LG_FUZZ_N_BABS] = {"none", "input", "relu", "auto"};
static const lg_bab_mode bab_modes[LG_FUZZ_N_BABS] = {LG_BAB_NONE, LG_BAB_INPUT, LG_BAB_RELU, LG_BAB_AUTO};


lg_fuzz_opts lg_fuzz_opts_default(void)
{
    lg_fuzz_opts o;
    memset(&o, 0, sizeof o);
    o.timeout_s = 2.0;
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

/* ---- smooth near ties (soundfuzz.h) ---- */
#define FZ_PREC 300

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
    default: /* gelu / lgelu: v·Φ(λv) = v·½·erfc(−λv/√2) */
        mpfr_set_ui(u, 2, MPFR_RNDN);
        mpfr_sqrt(u, u, MPFR_RNDN);
        mpfr_mul_d(t, v, a == LG_ACT_GELU ? -1.0 : -p, MPFR_RNDN);
        mpfr_div(t, t, u, MPFR_RNDN);
        mpfr_erfc(t, t, MPFR_RNDN);
        mpfr_mul(v, v, t, MPFR_RNDN);
        mpfr_div_2ui(v, v, 1, MPFR_RNDN);
        return;
    }
}

/* y[n_out] (initialised) = f(x) of net at FZ_PREC bits. */
static void fz_forward(const lg_net *net, const double *x, mpfr_t *y)
{
    int w = lg_net_max_width(net);
    mpfr_t *a = malloc(2 * (size_t)w * sizeof *a), *z = a + w, t, u, q;
    LG_ASSERT(a && !lg_net_has_conv(net)); /* the oracle's own dense form only */
    for (int i = 0; i < 2 * w; i++) mpfr_init2(a[i], FZ_PREC);
    mpfr_inits2(FZ_PREC, t, u, q, (mpfr_ptr)0);
    for (int i = 0; i < net->n_in; i++) {
        mpfr_set_d(a[i], x[i], MPFR_RNDN);
        if (net->in_sub) mpfr_sub_d(a[i], a[i], net->in_sub[i], MPFR_RNDN);
        if (net->in_div) mpfr_div_d(a[i], a[i], net->in_div[i], MPFR_RNDN);
    }
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        for (int o = 0; o < L->n_out; o++) {
            mpfr_set_d(z[o], L->b[o], MPFR_RNDN);
            for (int i = 0; i < L->n_in; i++) {
                mpfr_mul_d(q, a[i], L->W[(size_t)o * (size_t)L->n_in + (size_t)i], MPFR_RNDN);
                mpfr_add(z[o], z[o], q, MPFR_RNDN);
            }
            fz_act(z[o], L->act, L->lambda, t, u);
        }
        for (int o = 0; o < L->n_out; o++) mpfr_set(a[o], z[o], MPFR_RNDN);
    }
    for (int j = 0; j < lg_net_n_out(net); j++) mpfr_set(y[j], a[j], MPFR_RNDN);
    for (int i = 0; i < 2 * w; i++) mpfr_clear(a[i]);
    mpfr_clears(t, u, q, (mpfr_ptr)0);
    free(a);
}

/* Depth of x in case 0 of p on net: min over terms of max over constraints
 * of Σ coef·y + d (≤ 0: a counterexample), at FZ_PREC bits; +inf outside
 * the box. */
static double fz_depth(const lg_net *net, const lg_prop *p, const double *x)
{
    const lg_prop_case *C = &p->cases[0];
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

long lg_fuzz_smooth(const lg_fuzz_case *fc, const lg_fuzz_opts *o, lg_fuzz_stats *s, FILE *log)
{
    if (strstr(fc->cls, "big") || strstr(fc->cls, "huge") || fc->prop.cases[0].n_terms < 1) return 0;
    for (int t = 0; t < fc->prop.cases[0].n_terms; t++)
        if (fc->prop.cases[0].terms[t].n_cons < 1) return 0;
    static const lg_act acts[] = {LG_ACT_GELU, LG_ACT_LGELU, LG_ACT_SWISH, LG_ACT_PRELU};
    static const double params[] = {1.0, 7.0, 3.0, 0.1};
    int which = (int)((fc->index / 3) % 4);
    lg_net ref, dref; /* the driver's smooth net (conv kept) and the MPFR pass's dense form */
    lg_prop p;
    long bad = 0;
    if (lg_net_copy(&ref, &fc->net) != LG_OK) return 0;
    for (int k = 0; k + 1 < ref.n_layers; k++) {
        ref.layers[k].act = acts[which];
        ref.layers[k].lambda = params[which];
    }
    memset(&dref, 0, sizeof dref);
    if ((lg_net_has_conv(&ref) ? lg_net_densify(&dref, &ref, 0) : lg_net_copy(&dref, &ref)) != LG_OK) {
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
            int steps = (int)((fc->index / 12 + c + k) % 5) - 2;
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
    /* the driver through the substitution */
    lg_verify_opts vo = lg_verify_opts_default();
    vo.timeout_s = o->timeout_s;
    vo.seed = (unsigned long)fc->index;
    vo.bab.threads = 1;
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
    s->convs += fc->dnet.n_layers > 0;
    for (int si = 0; si < LG_FUZZ_N_SOLVERS; si++) {
        if (!o->solver_on[si]) continue;
        for (int bi = 0; bi < LG_FUZZ_N_BABS; bi++) {
            if (!o->bab_on[bi]) continue;
            int only = strcmp(lg_fuzz_solver_names[si], "glpk-only") == 0;
            if (only && bi != 0) continue; /* back-end only: no branch and bound to vary */
            lg_verify_opts vo = lg_verify_opts_default();
            vo.solver = only ? "glpk" : lg_fuzz_solver_names[si];
            vo.backend_only = only;
            vo.timeout_s = o->timeout_s;
            vo.attack = attack;
            vo.seed = (unsigned long)fc->index;
            vo.bab.mode = bab_modes[bi];
            vo.bab.threads = 1;
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
                s->timeouts += r.timed_out != 0;
            }
            if (o->verbose)
                fprintf(log, "soundfuzz: case %ld %s/%s: %s (%s, %.3f s)\n", fc->index, vo.solver,
                        lg_fuzz_bab_names[bi], lg_verdict_name(r.verdict), r.method[0] ? r.method : r.reason,
                        lg_now() - t0);
            lg_verify_report_free(&r);
        }
    }
    if (fc->index % 3 == 0) bad += lg_fuzz_smooth(fc, o, s, log);
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
            "smooth near-tie runs: %ld (gate accepted %ld centres), WRONG smooth: %ld; "
            "ONNX graphs: %ld (%ld imported, the rest refused), WRONG imports: %ld\n",
            s->cases, s->truth_sat, s->truth_unsat, s->ties, s->convs, s->runs, seconds, h > 0 ? (double)s->cases / h : 0.0,
            s->t_oracle, s->t_verify, s->robust, s->violated, s->unknown, s->timeouts, s->wrong_robust, s->wrong_witness,
            s->errors, s->bad_cases, s->smooth_runs, s->smooth_gate_yes, s->wrong_smooth, s->onnx_graphs,
            s->onnx_imported, s->onnx_wrong);
    for (int i = 0; i < s->n_kinds; i++) fprintf(f, "soundfuzz:   %6ld  %s\n", s->kind_n[i], s->kind[i]);
}
