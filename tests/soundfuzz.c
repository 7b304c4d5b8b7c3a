/* soundfuzz.c — every mode of the driver against the exact oracle (soundfuzz.h). */
#include "soundfuzz.h"
#include "core/clock.h"

#include <string.h>
#include <time.h>

#include "oracle.h"
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

long lg_fuzz_run_case(const lg_fuzz_case *fc, const lg_fuzz_opts *o, lg_fuzz_stats *s, FILE *log)
{
    long bad = 0;
    int attack = fc->index % 2 == 0;
    s->cases++;
    s->truth_sat += fc->truth == LG_ANSWER_SAT;
    s->truth_unsat += fc->truth == LG_ANSWER_UNSAT;
    s->ties += fc->tie > 0 || strstr(fc->cls, "tie") != NULL;
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
            lg_status st = lg_verify_run(&fc->net, &fc->prop, &vo, &r);
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
                if (fc->truth == LG_ANSWER_SAT) {
                    s->wrong_robust++;
                    bad++;
                    report(fc, "WRONG-ROBUST", si, bi, attack, &r, log);
                    count_kind(s, "WRONG-ROBUST", si, &r);
                }
            } else if (r.verdict == LG_VERDICT_VIOLATED) {
                s->violated++;
                if (!r.x || r.violated_case != 0 || !lg_oracle_is_counterexample(&fc->prob, r.x)) {
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
    s->bad_cases += bad > 0;
    return bad;
}

void lg_fuzz_stats_print(const lg_fuzz_stats *s, double seconds, FILE *f)
{
    double h = seconds / 3600.0;
    fprintf(f,
            "soundfuzz: %ld cases (%ld violated, %ld robust by the oracle; %ld near-tie), %ld runs in %.1f s "
            "(%.0f cases/hour; oracle %.1f s, driver %.1f s); driver verdicts: %ld robust, %ld violated, %ld unknown (%ld timeouts); "
            "WRONG: %ld robust, %ld witness; errors: %ld; cases with a wrong verdict or error: %ld\n",
            s->cases, s->truth_sat, s->truth_unsat, s->ties, s->runs, seconds, h > 0 ? (double)s->cases / h : 0.0,
            s->t_oracle, s->t_verify, s->robust, s->violated, s->unknown, s->timeouts, s->wrong_robust, s->wrong_witness,
            s->errors, s->bad_cases);
    for (int i = 0; i < s->n_kinds; i++) fprintf(f, "soundfuzz:   %6ld  %s\n", s->kind_n[i], s->kind[i]);
}
