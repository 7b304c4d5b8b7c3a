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
 * SIGINT/SIGTERM lets the instance in flight finish, keeps it only if it
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
#include "verify/verify.h"
#include "verify/vnnlib.h"

static void lg_bench_help(void)
{
    const lg_verify_opts d = lg_verify_opts_default();
    printf("usage: lgelu bench DIR [--timeout-scale F] [--solver auto|glpk|z3|none] [--bab auto|input|relu|none]\n"
           "                  [-j N] [--out RESULTS_DIR] [--seed S] [--timeout S] [--memory MB] [--force]\n"
           "                  [--progress]\n\n"
           "Run every instance of a VNN-COMP style benchmark folder: DIR/instances.csv holds lines\n"
           "`onnx,vnnlib,timeout` (paths relative to DIR, .onnx.gz and .vnnlib.gz read as they are;\n"
           "lines starting with # are skipped). Each instance is verified as `lgelu verify NET --vnnlib P\n"
           "--timeout T` would (T: the line's timeout times the scale, or --timeout).\n"
           "Writes RESULTS_DIR/<onnx>__<vnnlib>.txt (VNN-COMP result: unsat, sat + counterexample,\n"
           "unknown or timeout) and RESULTS_DIR/results.csv (instance, onnx, vnnlib, timeout, verdict,\n"
           "result, seconds, nodes, solver_nodes, method), and prints a table. A re-run resumes: instances\n"
           "already in RESULTS_DIR/results.csv are skipped (--force runs them all again).\n\n"
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
           "  --progress         progress lines with an ETA on stderr even when it is not a terminal\n"
           "  -h, --help         show this help\n\n"
           "Results are never half-written: each result file is written to a temporary file and renamed,\n"
           "and results.csv grows by whole rows, each synced to disk before the next instance starts.\n"
           "SIGINT/SIGTERM (Ctrl-C, kill, a batch system's time limit): the instance in flight finishes and\n"
           "is kept if decided (unsat/sat), dropped if not; then bench stops. A second signal stops at\n"
           "once. Either way every file holds only complete results.\n\n"
           "exit status: 0 when every instance ran (whatever its verdict), 1 if an instance or the\n"
           "list could not be read, 2 on bad usage, 128 + N when stopped by signal N (130 for SIGINT,\n"
           "143 for SIGTERM).\n",
           d.solver, (unsigned long)d.seed);
}

/* The first SIGINT/SIGTERM asks the loop to stop after the instance in
 * flight; the handler is then reset so a second one ends the process. */
static volatile sig_atomic_t lg_bench_stop;

static void lg_bench_on_signal(int sig)
{
    lg_bench_stop = sig;
    signal(sig, SIG_DFL);
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
    return r->timed_out ? "timeout" : "unknown";
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
    if ((st = lg_vnnlib_read(&prop, vnnlib, net.n_in, lg_net_n_out(&net))) != LG_OK) goto fail;
    if ((st = lg_verify_run_in(&net, &prop, &o, &run, rep)) != LG_OK) goto fail;
    if (lg_bench_stop && rep->verdict != LG_VERDICT_ROBUST && rep->verdict != LG_VERDICT_VIOLATED) goto fail;
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

static int lg_bench_lines_has(const lg_bench_lines *L, const char *s)
{
    for (size_t i = 0; i < L->n; i++)
        if (strcmp(L->s[i], s) == 0) return 1;
    return 0;
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

/* The instance (first field, CSV-quoted or not) of every row of an existing
 * results.csv with this header; nothing when the file is missing or has
 * another header (it is then started afresh). */
static lg_status lg_bench_done_read(lg_bench_lines *done, const char *path, const char *header)
{
    FILE *in = fopen(path, "r");
    if (!in) return LG_OK;
    char line[8192];
    size_t lineno = 0;
    lg_status st = LG_OK;
    while (st == LG_OK && fgets(line, sizeof line, in)) {
        if (++lineno == 1) {
            if (strcmp(line, header) != 0) break;
            continue;
        }
        char name[4096];
        size_t k = 0;
        const char *p = line;
        if (*p == '"') {
            for (p++; *p && k + 1 < sizeof name; p++) {
                if (*p == '"' && p[1] == '"') name[k++] = *p++;
                else if (*p == '"') break;
                else name[k++] = *p;
            }
        } else {
            for (; *p && *p != ',' && *p != '\n' && k + 1 < sizeof name; p++) name[k++] = *p;
        }
        name[k] = '\0';
        if (k) st = lg_bench_lines_add(done, name, lineno);
    }
    fclose(in);
    if (st != LG_OK) lg_bench_lines_free(done);
    return st;
}

int lg_cmd_bench(int argc, char **argv)
{
    enum { O_MEMORY = 200, O_TIMEOUT, O_FORCE, O_PROGRESS, O_SCALE = 256, O_SOLVER, O_BAB, O_OUT, O_SEED };
    static const struct option lo[] = {{"timeout-scale", required_argument, 0, O_SCALE},
                                       {"solver", required_argument, 0, O_SOLVER},
                                       {"bab", required_argument, 0, O_BAB},
                                       {"out", required_argument, 0, O_OUT},
                                       {"seed", required_argument, 0, O_SEED},
                                       {"memory", required_argument, 0, O_MEMORY},
                                       {"timeout", required_argument, 0, O_TIMEOUT},
                                       {"force", no_argument, 0, O_FORCE},
                                       {"progress", no_argument, 0, O_PROGRESS},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    lg_verify_opts o = lg_verify_opts_default();
    double scale = 1.0, fixed_timeout = 0; /* --timeout: every instance's limit (0: the CSV's, scaled) */
    int force = 0;
    const char *out_dir = "bench_results";
    long v;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hj:", lo, NULL)) != -1) {
        switch (c) {
        case O_SCALE:
            if (lg_opt_double("bench", "timeout-scale", optarg, 1e-6, 1e6, &scale)) return 2;
            break;
        case O_SOLVER:
            if (!lg_solver_for_verify(optarg)) {
                char names[64];
                return lg_cli_usage("bench", "--solver: expected %s, got '%s'", lg_solver_verify_names(names, sizeof names),
                                    optarg);
            }
            o.solver = optarg;
            break;
        case O_BAB:
            if (lg_bab_mode_parse(optarg, &o.bab.mode) != LG_OK)
                return lg_cli_usage("bench", "--bab: expected auto, input, relu or none, got '%s'", optarg);
            break;
        case 'j':
            if (lg_opt_int("bench", "-j", optarg, 0, 1024, &v)) return 2;
            o.bab.threads = (int)v;
            break;
        case O_OUT: out_dir = optarg; break;
        case O_MEMORY:
            if (lg_opt_double("bench", "memory", optarg, 16, 1e9, &o.memory_mb)) return 2;
            break;
        case O_TIMEOUT:
            if (lg_opt_double("bench", "timeout", optarg, 0.01, 1e7, &fixed_timeout)) return 2;
            break;
        case O_FORCE: force = 1; break;
        case O_PROGRESS: lg_cli_progress_force(); break;
        case O_SEED:
            if (lg_opt_int("bench", "seed", optarg, 0, 2147483647L, &v)) return 2;
            o.seed = (unsigned long)v;
            break;
        case 'h': lg_bench_help(); return 0;
        default: return lg_cli_usage("bench", "unknown option");
        }
    }
    if (optind != argc - 1) return lg_cli_usage("bench", "expected exactly one benchmark folder");
    const char *dir = argv[optind];
    char path[4096], onnx[4096], vnn[4096], res[4096], s1[512], s2[512];
    snprintf(path, sizeof path, "%s/instances.csv", dir);
    lg_bench_lines L = {0};
    if (lg_bench_lines_read(&L, path) != LG_OK) {
        fprintf(stderr, "lgelu bench: %s\n", lg_errmsg());
        return 1;
    }
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "lgelu bench: %s: cannot create: %s\n", out_dir, strerror(errno));
        lg_bench_lines_free(&L);
        return 1;
    }
    snprintf(res, sizeof res, "%s/results.csv", out_dir);
    static const char header[] = "instance,onnx,vnnlib,timeout,verdict,result,seconds,nodes,solver_nodes,method\n";
    lg_bench_lines done = {0}; /* instances already in results.csv */
    if (!force && lg_bench_done_read(&done, res, header) != LG_OK) {
        fprintf(stderr, "lgelu bench: %s\n", lg_errmsg());
        lg_bench_lines_free(&L);
        return 1;
    }
    lg_line_log csv;
    int resumed = 0;
    lg_status cst = force ? lg_line_log_open(&csv, res, header) : lg_line_log_resume(&csv, res, header, &resumed);
    if (cst != LG_OK) {
        fprintf(stderr, "lgelu bench: %s\n", lg_errmsg());
        lg_bench_lines_free(&L);
        lg_bench_lines_free(&done);
        return 1;
    }
    if (!resumed) lg_bench_lines_free(&done);
    lg_bench_stop = 0;
    lg_bench_signals(lg_bench_on_signal);
    printf("%-4s %-44s %-9s %9s %10s  %s\n", "#", "instance", "result", "seconds", "nodes", "method");
    int n = 0, n_err = 0, n_run_err = 0, n_unsat = 0, n_sat = 0, n_skip = 0;
    double total = 0;
    int n_dropped = 0;
    lg_cli_meter meter = {lg_now(), 0};
    for (size_t li = 0; li < L.n && !lg_bench_stop; li++) {
        size_t lineno = L.lineno[li];
        char *t = L.s[li];
        char *f1 = t, *f2 = strchr(f1, ','), *f3 = f2 ? strchr(f2 + 1, ',') : NULL;
        double timeout;
        char *end;
        if (!f2 || !f3) {
            fprintf(stderr, "lgelu bench: %s:%zu: expected onnx,vnnlib,timeout\n", path, lineno);
            n_err++;
            continue;
        }
        *f2++ = '\0';
        *f3++ = '\0';
        f1 = lg_bench_trim(f1);
        f2 = lg_bench_trim(f2);
        f3 = lg_bench_trim(f3);
        errno = 0;
        timeout = strtod(f3, &end);
        if (*f3 == '\0' || *end != '\0' || errno || !(timeout > 0) || timeout > 1e7) {
            fprintf(stderr, "lgelu bench: %s:%zu: timeout: expected a positive number of seconds, got '%s'\n", path,
                    lineno, f3);
            n_err++;
            continue;
        }
        double limit = fixed_timeout > 0 ? fixed_timeout : timeout * scale;
        lg_bench_path(onnx, sizeof onnx, dir, f1);
        lg_bench_path(vnn, sizeof vnn, dir, f2);
        lg_bench_stem(s1, sizeof s1, onnx);
        lg_bench_stem(s2, sizeof s2, vnn);
        char inst[1100], rpath[5200];
        snprintf(inst, sizeof inst, "%s__%s", s1, s2);
        snprintf(rpath, sizeof rpath, "%s/%s.txt", out_dir, inst);
        if (lg_bench_lines_has(&done, inst)) {
            n_skip++;
            continue;
        }
        n++;
        if (lg_cli_progress_enabled()) fprintf(stderr, "[%d] %s (timeout %.1f s)...\n", n, inst, limit);
        lg_verify_report rep;
        lg_status st = lg_bench_one(onnx, vnn, limit, &o, rpath, &rep);
        lg_cli_progress(&meter, "bench", "lines of instances.csv", li + 1, L.n);
        lg_csv_row row = {0};
        lg_csv_str(&row, inst);
        lg_csv_str(&row, f1);
        lg_csv_str(&row, f2);
        lg_csv_num(&row, limit);
        if (st != LG_OK) {
            fprintf(stderr, "lgelu bench: %s:%zu: %s: %s\n", path, lineno, lg_status_str(st), lg_errmsg());
            lg_csv_str(&row, "error");
            lg_csv_str(&row, "error");
            lg_csv_int(&row, 0);
            lg_csv_int(&row, 0);
            lg_csv_int(&row, 0);
            lg_csv_str(&row, "");
            if (!lg_csv_end(&row) || lg_line_log_printf(&csv, "%s", row.s) != LG_OK)
                fprintf(stderr, "lgelu bench: %s\n", lg_errmsg());
            lg_csv_row_free(&row);
            printf("%-4d %-44.44s %-9s %9s %10s  %s\n", n, inst, "error", "-", "-", lg_status_str(st));
            n_err++;
            n_run_err++;
            lg_verify_report_free(&rep);
            continue;
        }
        if (lg_bench_stop && rep.verdict != LG_VERDICT_ROBUST && rep.verdict != LG_VERDICT_VIOLATED) {
            n_dropped++; /* undecided while interrupted: not a result */
            n--;
            lg_verify_report_free(&rep);
            lg_csv_row_free(&row);
            break;
        }
        const char *word = lg_bench_result_word(&rep);
        n_unsat += rep.verdict == LG_VERDICT_ROBUST;
        n_sat += rep.verdict == LG_VERDICT_VIOLATED;
        total += rep.seconds;
        lg_csv_str(&row, lg_verdict_name(rep.verdict));
        lg_csv_str(&row, word);
        lg_csv_num(&row, rep.seconds);
        lg_csv_int(&row, rep.bab_nodes);
        lg_csv_int(&row, rep.nodes);
        lg_csv_str(&row, rep.method);
        if (!lg_csv_end(&row) || lg_line_log_printf(&csv, "%s", row.s) != LG_OK) {
            fprintf(stderr, "lgelu bench: %s\n", lg_errmsg());
            n_err++;
        }
        lg_csv_row_free(&row);
        printf("%-4d %-44.44s %-9s %9.3f %10ld  %s\n", n, inst, word, rep.seconds, rep.bab_nodes,
               rep.method[0] ? rep.method : "-");
        fflush(stdout);
        lg_verify_report_free(&rep);
    }
    int rc = n_err ? 1 : 0;
    lg_bench_lines_free(&L);
    lg_bench_lines_free(&done);
    if (lg_line_log_close(&csv) != LG_OK) {
        fprintf(stderr, "lgelu bench: %s\n", lg_errmsg());
        rc = 1;
    }
    int stop = lg_bench_stop;
    lg_bench_signals(SIG_DFL);
    printf("%d instances: %d unsat, %d sat, %d undecided, %d errors; %.2f s in all; results in %s\n", n, n_unsat,
           n_sat, n - n_unsat - n_sat - n_run_err, n_err, total, out_dir);
    if (n_skip) printf("%d instances already in %s were skipped (--force runs them again)\n", n_skip, res);
    if (stop) {
        printf("stopped by signal %d%s; every result above is complete\n", stop,
               n_dropped ? " (the undecided instance in flight was dropped)" : "");
        rc = 128 + stop;
    }
    return rc;
}
