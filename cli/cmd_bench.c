/* cmd_bench.c — `lgelu bench DIR`: run a VNN-COMP style benchmark folder.
 *
 * DIR/instances.csv lists one instance per line, `onnx,vnnlib,timeout`,
 * paths relative to DIR (absolute paths are kept; a missing `x.gz` falls
 * back to `x`). Each instance runs as `lgelu verify NET --vnnlib P
 * --timeout T·scale` would; one VNN-COMP result file per instance and a
 * summary results.csv go to the output folder, and a table to stdout.
 *
 * No lost results: result files are replaced atomically and
 * results.csv grows by fsync'd whole rows (core/atomic_file.h). The first
 * SIGINT/SIGTERM says at once that it waits for the instance in flight, lets
 * it finish, keeps it only if it
 * was decided (robust/violated: its verdict does not depend on the
 * interruption; an unknown may be the interruption itself, so it is
 * dropped), and stops before the next one; a second signal ends the process
 * at once (every file is still whole). Exit status 128 + signal.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/csv.h"
#include "core/netfile.h"
#include "core/version.h"
#include "verify/verify.h"
#include "verify/vnnlib.h"
#include "onnx/load.h"
#include "onnx/onnx.h"

static void lg_bench_help(void)
{
    const lg_verify_opts d = lg_verify_opts_default();
    printf("usage: lgelu bench DIR [--timeout-scale F] [--solver auto|glpk|z3|none] [--bab auto|input|relu|none]\n"
           "                  [-j N] [--out RESULTS_DIR] [--seed S] [--timeout S] [--memory MB] [--force]\n"
           "                  [--retry RESULTS] [--redo-changed] [--witness-tol T] [--progress]\n\n"
           "Run every instance of a VNN-COMP style benchmark folder: DIR/instances.csv holds lines\n"
           "`onnx,vnnlib,timeout` (paths relative to DIR, .onnx.gz and .vnnlib.gz read as they are;\n"
           "lines starting with # are skipped). Each instance is verified as `lgelu verify NET --vnnlib P\n"
           "--timeout T` would (T: the line's timeout times the scale, or --timeout).\n"
           "Writes RESULTS_DIR/<onnx>__<vnnlib>.txt (VNN-COMP result: unsat, sat + counterexample,\n"
           "unknown or timeout) and RESULTS_DIR/results.csv (instance, onnx, vnnlib, timeout, verdict,\n"
           "result, seconds, nodes, solver_nodes, method, settings, build, reason), and prints a table\n"
           "(# is the instance's place in instances.csv; reason: why an unknown stayed unknown).\n"
           "A re-run resumes: an instance already in results.csv with the same settings (its timeout and\n"
           "every option that can change a verdict) and build (lgelu version and commit) is kept; one run\n"
           "with other settings or another build makes bench refuse, naming what changed (--redo-changed\n"
           "runs those again). The summary counts every instance by its latest row, kept or run now.\n\n"
           "options:\n"
           "  --timeout-scale F  multiply every instance timeout of instances.csv by F (default 1)\n"
           "  --solver NAME      back-end as for `lgelu verify` (default %s)\n"
           "  --bab MODE         branch and bound as for `lgelu verify` (default auto)\n"
           "  -j N               worker threads (default 0 = the number of cores)\n"
           "  --out DIR          results folder, created if missing (default bench_results)\n"
           "  --seed S           attack seed (default %lu)\n"
           "  --timeout S        wall-clock limit of every instance in seconds, as for `lgelu verify`\n"
           "                     (replaces the timeouts of instances.csv; default: those, scaled)\n"
           "  --memory MB        memory cap of every back-end call (as for `lgelu verify`)\n"
           "  --force            run every instance, also those already in results.csv (which is\n"
           "                     started afresh)\n"
           "  --retry RESULTS    run again the kept instances whose result is in this comma list of\n"
           "                     unsat, sat, unknown, timeout, error, sat-tol (e.g. unknown,timeout)\n"
           "  --redo-changed     run again the instances results.csv holds with other settings or from\n"
           "                     another build (their new rows are appended and count from then on)\n"
           "  --witness-tol T    as for `lgelu verify`: a witness within T of the property (VNN-COMP's check\n"
           "                     uses 1e-4) is the result sat-tol, never sat (default 0: off)\n"
           "  --progress         progress lines with an ETA on stderr even when it is not a terminal\n"
           "  -h, --help         show this help\n\n"
           "Results are never half-written: each result file is written to a temporary file and renamed,\n"
           "and results.csv grows by whole rows, each synced to disk before the next instance starts.\n"
           "SIGINT/SIGTERM (Ctrl-C, kill, a batch system's time limit): bench says at once that it waits for\n"
           "the instance in flight, which finishes and is kept if decided (unsat/sat), dropped if not; then\n"
           "bench stops. A second signal stops at once. Either way every file holds only complete results.\n\n"
           "exit status: 0 when every instance ran (whatever its verdict), 1 if an instance or the\n"
           "list could not be read, 2 on bad usage, 128 + N when stopped by signal N (130 for SIGINT,\n"
           "143 for SIGTERM).\n",
           lg_solver_pick_name(&d.solver), (unsigned long)d.seed);
    printf("\n%s", lg_cli_import_help);
}

/* The first SIGINT/SIGTERM asks the loop to stop after the instance in
 * flight; the handler is then reset so a second one ends the process. */
static volatile sig_atomic_t lg_bench_stop;

static void lg_bench_on_signal(int sig)
{
    static const char msg[] = "\nlgelu bench: stopping: waiting for the instance in flight to finish (kept if decided); "
                              "a second Ctrl-C stops now\n";
    lg_bench_stop = sig;
    signal(sig, SIG_DFL);
    ssize_t w = write(2, msg, sizeof msg - 1); /* async-signal-safe; nothing to do if stderr is gone */
    (void)w;
}

static void lg_bench_signals(void (*h)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* DIR/rel, or rel when absolute; a missing "x.gz" falls back to "x". */
static void lg_bench_path(char *out, size_t n, const char *dir, const char *rel)
{
    if (rel[0] == '/') snprintf(out, n, "%s", rel);
    else snprintf(out, n, "%s/%s", dir, rel);
    size_t l = strlen(out);
    if (l > 3 && strcmp(out + l - 3, ".gz") == 0 && access(out, R_OK) != 0) {
        out[l - 3] = '\0';
        if (access(out, R_OK) != 0) out[l - 3] = '.'; /* neither: keep the name for the error */
    }
}

/* File stem: basename without the extensions .gz, .onnx, .vnnlib. */
static void lg_bench_stem(char *out, size_t n, const char *path)
{
    const char *b = strrchr(path, '/');
    snprintf(out, n, "%s", b ? b + 1 : path);
    static const char *const ext[] = {".gz", ".onnx", ".vnnlib"};
    for (size_t i = 0; i < 3; i++) {
        size_t l = strlen(out), e = strlen(ext[i]);
        if (l > e && strcmp(out + l - e, ext[i]) == 0) out[l - e] = '\0';
    }
}

static char *lg_bench_trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t l = strlen(s);
    while (l > 0 && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\r' || s[l - 1] == '\n')) s[--l] = '\0';
    return s;
}

static const char *lg_bench_result_word(const lg_verify_report *r)
{
    if (r->verdict == LG_VERDICT_ROBUST) return "unsat";
    if (r->verdict == LG_VERDICT_VIOLATED) return "sat";
    if (r->how.why == LG_REASON_TOLERANCE) return "sat-tol"; /* --witness-tol: its result file says sat, with a note */
    return r->how.timed_out ? "timeout" : "unknown";
}

/* One instance: load, verify, write its result file. *rep is filled. */
static lg_status lg_bench_one(const char *onnx, const char *vnnlib, double timeout, const lg_verify_opts *base,
                              const char *result_path, lg_verify_report *rep)
{
    lg_net net;
    lg_prop prop;
    memset(&prop, 0, sizeof prop);
    memset(rep, 0, sizeof *rep);
    lg_verify_opts o = *base;
    o.timeout_s = timeout;
    /* the instance's deadline counts from before its files are read, as in `lgelu verify` */
    lg_runctx run = lg_runctx_start(o.timeout_s, o.seed, o.verbose, o.memory_mb);
    lg_status st = lg_net_load(&net, onnx);
    if (st != LG_OK) return st;
    if ((st = lg_vnnlib_read_net(&prop, vnnlib, &net)) != LG_OK) goto fail;
    if ((st = lg_verify_run_in(&net, &prop, &o, &run, rep)) != LG_OK) goto fail;
    if (lg_bench_stop && rep->verdict != LG_VERDICT_ROBUST && rep->verdict != LG_VERDICT_VIOLATED) goto fail;
    rep->net_note = lg_onnx_import_note(); /* what the import changed (--drop-final-softmax, --round-weights) */
    st = lg_verify_write_result_path(rep, result_path);
fail:
    lg_prop_free(&prop);
    lg_net_free(&net);
    return st;
}

/* Lines of a file (trimmed, without blanks and '#' comments) with their
 * line numbers; or, for the resume set, the instance names. Owned strings. */
typedef struct lg_bench_lines {
    char **s;
    size_t *lineno;
    size_t n, cap;
} lg_bench_lines;

static void lg_bench_lines_free(lg_bench_lines *L)
{
    for (size_t i = 0; i < L->n; i++) free(L->s[i]);
    free(L->s);
    free(L->lineno);
    memset(L, 0, sizeof *L);
}

static lg_status lg_bench_lines_add(lg_bench_lines *L, const char *s, size_t lineno)
{
    if (L->n == L->cap) {
        size_t cap = L->cap ? 2 * L->cap : 64;
        char **ns = realloc(L->s, cap * sizeof *ns);
        if (!ns) return lg_fail(LG_ERR_NOMEM, "out of memory");
        L->s = ns;
        size_t *nl = realloc(L->lineno, cap * sizeof *nl);
        if (!nl) return lg_fail(LG_ERR_NOMEM, "out of memory");
        L->lineno = nl;
        L->cap = cap;
    }
    if (!(L->s[L->n] = strdup(s))) return lg_fail(LG_ERR_NOMEM, "out of memory");
    L->lineno[L->n++] = lineno;
    return LG_OK;
}

static char *lg_bench_trim(char *s);

static lg_status lg_bench_lines_read(lg_bench_lines *L, const char *path)
{
    FILE *in = fopen(path, "r");
    if (!in) return lg_fail(LG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char line[8192];
    size_t lineno = 0;
    lg_status st = LG_OK;
    while (st == LG_OK && fgets(line, sizeof line, in)) {
        lineno++;
        char *t = lg_bench_trim(line);
        if (*t == '\0' || *t == '#') continue;
        st = lg_bench_lines_add(L, t, lineno);
    }
    if (st == LG_OK && ferror(in)) st = lg_fail(LG_ERR_IO, "%s: read error", path);
    fclose(in);
    if (st != LG_OK) lg_bench_lines_free(L);
    return st;
}

/* The rows of an existing results.csv, the latest row of each instance
 * (a later row replaces an earlier one: --retry and --redo-changed append). */
typedef struct lg_bench_row {
    char *inst, *result, *settings, *build;
} lg_bench_row;

typedef struct lg_bench_rows {
    lg_bench_row *r;
    size_t n, cap;
} lg_bench_rows;

static void lg_bench_rows_free(lg_bench_rows *R)
{
    for (size_t i = 0; i < R->n; i++) {
        free(R->r[i].inst);
        free(R->r[i].result);
        free(R->r[i].settings);
        free(R->r[i].build);
    }
    free(R->r);
    memset(R, 0, sizeof *R);
}

static lg_bench_row *lg_bench_rows_find(const lg_bench_rows *R, const char *inst)
{
    for (size_t i = 0; i < R->n; i++)
        if (strcmp(R->r[i].inst, inst) == 0) return &R->r[i];
    return NULL;
}

/* Set inst's latest row. 0, or −1 out of memory. */
static int lg_bench_rows_set(lg_bench_rows *R, const char *inst, const char *result, const char *settings,
                             const char *build)
{
    lg_bench_row *w = lg_bench_rows_find(R, inst);
    if (!w) {
        if (R->n == R->cap) {
            size_t cap = R->cap ? 2 * R->cap : 64;
            lg_bench_row *nr = realloc(R->r, cap * sizeof *nr);
            if (!nr) return -1;
            R->r = nr;
            R->cap = cap;
        }
        w = &R->r[R->n++];
        memset(w, 0, sizeof *w);
        if (!(w->inst = strdup(inst))) return -1;
    }
    free(w->result);
    free(w->settings);
    free(w->build);
    w->result = strdup(result);
    w->settings = strdup(settings);
    w->build = strdup(build);
    return w->result && w->settings && w->build ? 0 : -1;
}

/* Split one CSV line (RFC 4180, as core/csv.h writes it) in place into at
 * most max fields; returns the number of fields. */
static int lg_bench_fields(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max) return n;
        if (*p == '"') {
            char *w = ++p;
            f[n++] = w;
            for (; *p; p++) {
                if (*p == '"' && p[1] == '"') *w++ = *p++;
                else if (*p == '"') break;
                else *w++ = *p;
            }
            if (*p == '"') p++;
            *w = '\0';
            if (*p != ',') return n;
            p++;
        } else {
            f[n++] = p;
            p += strcspn(p, ",\r\n");
            if (*p != ',') {
                *p = '\0';
                return n;
            }
            *p++ = '\0';
        }
    }
}

/* The rows of path (header must be exactly header); a missing or empty
 * file gives none. Another header: LG_ERR_ARG naming it (the rows of an
 * older lgelu, without their settings). */
static lg_status lg_bench_rows_read(lg_bench_rows *R, const char *path, const char *header)
{
    FILE *in = fopen(path, "r");
    if (!in) return LG_OK;
    char line[16384];
    size_t lineno = 0;
    lg_status st = LG_OK;
    while (st == LG_OK && fgets(line, sizeof line, in)) {
        if (++lineno == 1) {
            if (strcmp(line, header) != 0)
                st = lg_fail(LG_ERR_ARG, "%s has other columns than this lgelu writes (an older lgelu's rows, without "
                                         "the settings they were run with or the reasons of their unknowns); use --force to start it afresh, or another --out",
                             path);
            continue;
        }
        char *f[13];
        if (lg_bench_fields(line, f, 13) != 13 || !f[0][0]) continue; /* not a row this lgelu wrote */
        if (lg_bench_rows_set(R, f[0], f[5], f[10], f[11])) st = lg_fail(LG_ERR_NOMEM, "out of memory");
    }
    fclose(in);
    if (st != LG_OK) lg_bench_rows_free(R);
    return st;
}

/* --retry LIST: a bit per result word of results.csv. 0, or −1 for a bad word. */
static const char *const lg_bench_results[] = {"unsat", "sat", "unknown", "timeout", "error", "sat-tol"};
enum { LG_BENCH_N_RESULTS = 6 };

static int lg_bench_result_index(const char *w)
{
    for (int i = 0; i < LG_BENCH_N_RESULTS; i++)
        if (strcmp(w, lg_bench_results[i]) == 0) return i;
    return -1;
}

static int lg_bench_retry_parse(const char *s, unsigned *mask)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    *mask = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = lg_bench_result_index(t);
        if (k < 0) return -1;
        *mask |= 1u << k;
    }
    return *mask ? 0 : -1;
}

/* Each line of instances.csv: its name, limit and settings; run, keep, or changed (refused). */
typedef struct lg_bench_plan {
    char inst[1100], settings[600];
    double limit;
    int ok, run;
} lg_bench_plan;

/* One run of `lgelu bench`: its options, files and counts. */
typedef struct lg_bench {
    lg_verify_opts o;
    double scale, fixed_timeout; /* --timeout: every instance's limit (0: the CSV's, scaled) */
    int force, redo_changed;
    unsigned retry; /* --retry: bits of lg_bench_results */
    const char *out_dir, *dir;
    char path[4096], res[4096]; /* instances.csv, results.csv */
    char tail[512], build[160]; /* the options' settings text (verify.h) and the build */
    lg_bench_lines L;
    lg_bench_rows rows; /* results.csv: the latest row of each instance */
    lg_bench_plan *plan; /* [L.n] */
    lg_line_log csv;
    int n, n_err, n_skip, n_dropped;
    int width; /* the table's instance column: the longest name, so that every name is whole */
    double total;
    lg_cli_meter meter;
} lg_bench;

static const char lg_bench_header[] =
    "instance,onnx,vnnlib,timeout,verdict,result,seconds,nodes,solver_nodes,method,settings,build,reason\n";

/* The options into B; −1 to go on, else the exit status. */
static int lg_bench_args(int argc, char **argv, lg_bench *B)
{
    enum { O_MEMORY = 200, O_TIMEOUT, O_FORCE, O_PROGRESS, O_RETRY, O_REDO, O_WTOL, O_SCALE = 256, O_SOLVER, O_BAB, O_OUT,
           O_SEED };
    lg_verify_opts *o = &B->o;
    static const struct option lo[] = {{"timeout-scale", required_argument, 0, O_SCALE},
                                       {"solver", required_argument, 0, O_SOLVER},
                                       {"bab", required_argument, 0, O_BAB},
                                       {"out", required_argument, 0, O_OUT},
                                       {"seed", required_argument, 0, O_SEED},
                                       {"memory", required_argument, 0, O_MEMORY},
                                       {"witness-tol", required_argument, 0, O_WTOL},
                                       {"timeout", required_argument, 0, O_TIMEOUT},
                                       {"force", no_argument, 0, O_FORCE},
                                       {"retry", required_argument, 0, O_RETRY},
                                       {"redo-changed", no_argument, 0, O_REDO},
                                       {"progress", no_argument, 0, O_PROGRESS},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    long v;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hj:", lo, NULL)) != -1) {
        switch (c) {
        case O_SCALE:
            if (lg_opt_double("bench", "timeout-scale", optarg, 1e-6, 1e6, &B->scale)) return 2;
            break;
        case O_SOLVER:
            if (lg_solver_parse(optarg, &o->solver) != LG_OK) return lg_cli_usage("bench", "--solver: %s", lg_errmsg());
            break;
        case O_BAB:
            if (lg_bab_mode_parse(optarg, &o->bab.mode) != LG_OK)
                return lg_cli_usage("bench", "--bab: expected auto, input, relu or none, got '%s'", optarg);
            break;
        case 'j':
            if (lg_opt_int("bench", "-j", optarg, 0, 1024, &v)) return 2;
            o->bab.threads = (int)v;
            break;
        case O_OUT: B->out_dir = optarg; break;
        case O_MEMORY:
            if (lg_opt_double("bench", "memory", optarg, 16, 1e9, &o->memory_mb)) return 2;
            break;
        case O_WTOL:
            if (lg_opt_double("bench", "witness-tol", optarg, 0, 1, &o->witness_tol)) return 2;
            break;
        case O_TIMEOUT:
            if (lg_opt_double("bench", "timeout", optarg, 0.01, 1e7, &B->fixed_timeout)) return 2;
            break;
        case O_FORCE: B->force = 1; break;
        case O_REDO: B->redo_changed = 1; break;
        case O_RETRY:
            if (lg_bench_retry_parse(optarg, &B->retry))
                return lg_cli_usage("bench", "--retry: expected a comma list of unsat, sat, unknown, timeout, error, sat-tol, "
                                    "got '%s'", optarg);
            break;
        case O_PROGRESS: lg_cli_progress_force(); break;
        case O_SEED:
            if (lg_opt_int("bench", "seed", optarg, 0, 2147483647L, &v)) return 2;
            o->seed = (unsigned long)v;
            break;
        case 'h': lg_bench_help(); return 0;
        default: return lg_cli_usage("bench", "unknown option");
        }
    }
    if (optind != argc - 1) return lg_cli_usage("bench", "expected exactly one benchmark folder");
    B->dir = argv[optind];
    return -1;
}

/* What each line of instances.csv will do (run, keep its row) from the rows
 * results.csv holds; LG_ERR_ARG when a row was made with other settings or
 * another build (unless --redo-changed). */
static lg_status lg_bench_plan_make(lg_bench *B)
{
    char onnx[4096], vnn[4096], s1[512], s2[512];
    if (!(B->plan = calloc(B->L.n ? B->L.n : 1, sizeof *B->plan))) return lg_fail(LG_ERR_NOMEM, "out of memory");
    int n_changed = 0;
    char changes[1024] = "", first_changed[3][1100];
    for (size_t li = 0; li < B->L.n; li++) {
        char t[8192], *f2, *f3, *end;
        snprintf(t, sizeof t, "%s", B->L.s[li]);
        if (!(f2 = strchr(t, ',')) || !(f3 = strchr(f2 + 1, ','))) continue;
        *f2++ = '\0';
        *f3++ = '\0';
        errno = 0;
        double timeout = strtod(lg_bench_trim(f3), &end);
        if (*end != '\0' || errno || !(timeout > 0) || timeout > 1e7) continue; /* reported when its turn comes */
        lg_bench_plan *P = &B->plan[li];
        P->limit = B->fixed_timeout > 0 ? B->fixed_timeout : timeout * B->scale;
        lg_bench_path(onnx, sizeof onnx, B->dir, lg_bench_trim(t));
        lg_bench_path(vnn, sizeof vnn, B->dir, lg_bench_trim(f2));
        lg_bench_stem(s1, sizeof s1, onnx);
        lg_bench_stem(s2, sizeof s2, vnn);
        snprintf(P->inst, sizeof P->inst, "%s__%s", s1, s2);
        snprintf(P->settings, sizeof P->settings, "timeout=%g%s", P->limit, B->tail);
        P->ok = P->run = 1;
        const lg_bench_row *w = lg_bench_rows_find(&B->rows, P->inst);
        if (!w) continue;
        if (strcmp(w->settings, P->settings) != 0 || strcmp(w->build, B->build) != 0) {
            if (B->redo_changed) continue;
            char d[600] = "";
            lg_verify_settings_diff(w->settings, P->settings, d, sizeof d);
            if (strcmp(w->build, B->build) != 0) {
                size_t l = strlen(d);
                snprintf(d + l, sizeof d - l, "%sbuild: %s -> %s", l ? "; " : "", w->build, B->build);
            }
            if (n_changed < 3) snprintf(first_changed[n_changed], sizeof first_changed[0], "%s", P->inst);
            if (!strstr(changes, d) && strlen(changes) + strlen(d) + 3 < sizeof changes) {
                size_t l = strlen(changes);
                snprintf(changes + l, sizeof changes - l, "%s%s", l ? "; " : "", d);
            }
            n_changed++;
            continue;
        }
        int k = lg_bench_result_index(w->result);
        P->run = k >= 0 && (B->retry >> k & 1u);
    }
    if (n_changed)
        return lg_fail(LG_ERR_ARG,
                       "%s holds %d instance%s run with other settings (%s%s%s%s): %s; use --redo-changed to run %s "
                       "again with these, --force to start afresh, or another --out",
                       B->res, n_changed, n_changed == 1 ? "" : "s", first_changed[0], n_changed > 1 ? ", " : "",
                       n_changed > 1 ? first_changed[1] : "", n_changed > 2 ? ", ..." : "", changes,
                       n_changed == 1 ? "it" : "them");
    return LG_OK;
}

/* Line li of instances.csv: verify it (or skip it as planned), print its
 * table line, append its row. 1 when an interruption dropped it (stop). */
static int lg_bench_line(lg_bench *B, size_t li)
{
    char onnx[4096], vnn[4096], settings[600];
    size_t lineno = B->L.lineno[li];
    char *t = B->L.s[li];
    char *f1 = t, *f2 = strchr(f1, ','), *f3 = f2 ? strchr(f2 + 1, ',') : NULL;
    if (!f2 || !f3) {
        fprintf(stderr, "lgelu bench: %s:%zu: expected onnx,vnnlib,timeout\n", B->path, lineno);
        B->n_err++;
        return 0;
    }
    *f2++ = '\0';
    *f3++ = '\0';
    f1 = lg_bench_trim(f1);
    f2 = lg_bench_trim(f2);
    f3 = lg_bench_trim(f3);
    const lg_bench_plan *P = &B->plan[li];
    if (!P->ok) {
        fprintf(stderr, "lgelu bench: %s:%zu: timeout: expected a positive number of seconds, got '%s'\n", B->path,
                lineno, f3);
        B->n_err++;
        return 0;
    }
    double limit = P->limit;
    const char *inst = P->inst;
    char rpath[5200];
    snprintf(rpath, sizeof rpath, "%s/%s.txt", B->out_dir, inst);
    if (!P->run) {
        B->n_skip++;
        return 0;
    }
    lg_bench_path(onnx, sizeof onnx, B->dir, f1);
    lg_bench_path(vnn, sizeof vnn, B->dir, f2);
    snprintf(settings, sizeof settings, "%s", P->settings);
    ++B->n;
    /* the row's number is its instance's place in instances.csv: a resumed run goes on counting */
    int n = (int)li + 1;
    if (lg_cli_progress_enabled()) fprintf(stderr, "[%d] %s (timeout %.1f s)...\n", n, inst, limit);
    lg_verify_report rep;
    lg_status st = lg_bench_one(onnx, vnn, limit, &B->o, rpath, &rep);
    lg_cli_progress(&B->meter, "bench", "lines of instances.csv", li + 1, B->L.n);
    lg_csv_row row = {0};
    lg_csv_str(&row, inst);
    lg_csv_str(&row, f1);
    lg_csv_str(&row, f2);
    lg_csv_num(&row, limit);
    const char *word;
    char reason[300] = ""; /* why an unknown stayed unknown (as `lgelu verify` prints it), or the error */
    if (st != LG_OK) {
        fprintf(stderr, "lgelu bench: %s:%zu: %s: %s\n", B->path, lineno, lg_status_str(st), lg_errmsg());
        word = "error";
        lg_csv_str(&row, "error");
        lg_csv_str(&row, "error");
        lg_csv_int(&row, 0);
        lg_csv_int(&row, 0);
        lg_csv_int(&row, 0);
        lg_csv_str(&row, "");
        snprintf(reason, sizeof reason, "%s", lg_errmsg());
        printf("%-4d %-*s %-9s %9s %10s  %-14s %s\n", n, B->width, inst, "error", "-", "-", "-", lg_status_str(st));
        B->n_err++;
    } else if (lg_bench_stop && rep.verdict != LG_VERDICT_ROBUST && rep.verdict != LG_VERDICT_VIOLATED) {
        B->n_dropped++; /* undecided while interrupted: not a result */
        B->n--;
        lg_verify_report_free(&rep);
        lg_csv_row_free(&row);
        return 1;
    } else {
        word = lg_bench_result_word(&rep);
        B->total += rep.seconds;
        lg_csv_str(&row, lg_verify_kind(&rep));
        lg_csv_str(&row, word);
        lg_csv_num(&row, rep.seconds);
        lg_csv_int(&row, rep.bab_nodes);
        lg_csv_int(&row, rep.nodes);
        lg_csv_str(&row, rep.method);
        if (rep.verdict == LG_VERDICT_UNKNOWN) /* an unknown's reason; a within-tolerance witness's note */
            snprintf(reason, sizeof reason, "%s", rep.how.reason[0] ? rep.how.reason : "undecided");
        printf("%-4d %-*s %-9s %9.3f %10ld  %-14s %s\n", n, B->width, inst, word, rep.seconds, rep.bab_nodes,
               rep.method[0] ? rep.method : "-", reason);
    }
    lg_csv_str(&row, settings);
    lg_csv_str(&row, B->build);
    lg_csv_str(&row, reason);
    if (!lg_csv_end(&row) || lg_line_log_printf(&B->csv, "%s", row.s) != LG_OK) {
        fprintf(stderr, "lgelu bench: %s\n", lg_errmsg());
        B->n_err++;
    }
    if (lg_bench_rows_set(&B->rows, inst, word, settings, B->build)) {
        fprintf(stderr, "lgelu bench: out of memory\n");
        B->n_err++;
    }
    lg_csv_row_free(&row);
    fflush(stdout);
    lg_verify_report_free(&rep);
    return 0;
}

/* The summary: every instance of instances.csv by its latest row, run now or already there. */
static void lg_bench_summary(const lg_bench *B, int stop)
{
    int count[LG_BENCH_N_RESULTS] = {0}, n_listed = 0;
    for (size_t li = 0; li < B->L.n; li++) {
        const lg_bench_row *w = B->plan[li].ok ? lg_bench_rows_find(&B->rows, B->plan[li].inst) : NULL;
        int k = w ? lg_bench_result_index(w->result) : -1;
        if (k < 0) continue;
        count[k]++;
        n_listed++;
    }
    printf("%d instances in %s: %d unsat, %d sat, %d undecided (%d timeouts), %d errors; %d run now (%.2f s), %d "
           "already there\n",
           n_listed, B->res, count[0], count[1], count[2] + count[3] + count[5], count[3], count[4], B->n, B->total,
           B->n_skip);
    if (count[5])
        printf("%d of the undecided have a witness within --witness-tol (result sat-tol: their result files say sat, "
               "with a note; not exact counterexamples)\n", count[5]);
    if (B->n_skip)
        printf("%d instances already in %s were kept (--retry RESULTS, --redo-changed or --force run them again)\n",
               B->n_skip, B->res);
    if (stop)
        printf("stopped by signal %d%s; every result above is complete\n", stop,
               B->n_dropped ? " (the undecided instance in flight was dropped)" : "");
}

static void lg_bench_free(lg_bench *B)
{
    free(B->plan);
    lg_bench_lines_free(&B->L);
    lg_bench_rows_free(&B->rows);
}

int lg_cmd_bench(int argc, char **argv)
{
    lg_bench B = {.o = lg_verify_opts_default(), .scale = 1.0, .out_dir = "bench_results"};
    int rc = lg_bench_args(argc, argv, &B);
    if (rc >= 0) return rc;
    snprintf(B.path, sizeof B.path, "%s/instances.csv", B.dir);
    if (lg_bench_lines_read(&B.L, B.path) != LG_OK) {
        fprintf(stderr, "lgelu bench: %s\n", lg_errmsg());
        return 1;
    }
    if (mkdir(B.out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "lgelu bench: %s: cannot create: %s\n", B.out_dir, strerror(errno));
        lg_bench_free(&B);
        return 1;
    }
    snprintf(B.res, sizeof B.res, "%s/results.csv", B.out_dir);
    /* what a row's verdict depends on besides its instance: the options (verify.h, the same text as the
     * study's row keys) with this timeout, and the build */
    lg_verify_opts_settings(&B.o, B.tail, sizeof B.tail);
    snprintf(B.build, sizeof B.build, "lgelu %s %s", lg_version(), lg_commit());
    lg_status st = B.force ? LG_OK : lg_bench_rows_read(&B.rows, B.res, lg_bench_header);
    if (st == LG_OK) st = lg_bench_plan_make(&B);
    if (st != LG_OK) {
        lg_bench_free(&B);
        lg_cli_fail("bench", st);
        return st == LG_ERR_ARG ? 2 : 1;
    }
    int resumed = 0;
    st = B.force ? lg_line_log_open(&B.csv, B.res, lg_bench_header)
                 : lg_line_log_resume(&B.csv, B.res, lg_bench_header, &resumed);
    if (st != LG_OK) {
        fprintf(stderr, "lgelu bench: %s\n", lg_errmsg());
        lg_bench_free(&B);
        return 1;
    }
    lg_bench_stop = 0;
    lg_bench_signals(lg_bench_on_signal);
    B.width = 8;
    for (size_t li = 0; li < B.L.n; li++)
        if (B.plan[li].ok && (int)strlen(B.plan[li].inst) > B.width) B.width = (int)strlen(B.plan[li].inst);
    printf("%-4s %-*s %-9s %9s %10s  %-14s %s\n", "#", B.width, "instance", "result", "seconds", "nodes", "method",
           "reason");
    B.meter = (lg_cli_meter){lg_now(), 0};
    for (size_t li = 0; li < B.L.n && !lg_bench_stop; li++)
        if (lg_bench_line(&B, li)) break;
    rc = B.n_err ? 1 : 0;
    if (lg_line_log_close(&B.csv) != LG_OK) {
        fprintf(stderr, "lgelu bench: %s\n", lg_errmsg());
        rc = 1;
    }
    int stop = lg_bench_stop;
    lg_bench_signals(SIG_DFL);
    lg_bench_summary(&B, stop);
    lg_bench_free(&B);
    return stop ? 128 + stop : rc;
}
