/* cmd_bench.c — `lgelu bench DIR`: run a VNN-COMP style benchmark folder.
 *
 * DIR/instances.csv lists one instance per line, `onnx,vnnlib,timeout`,
 * paths relative to DIR (absolute paths are kept; a missing `x.gz` falls
 * back to `x`). Each instance runs as `lgelu verify NET --vnnlib P
 * --timeout T·scale` would; one VNN-COMP result file per instance and a
 * summary results.csv go to the output folder, and a table to stdout.
 *
 * No lost results (issue 12): result files are replaced atomically and
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
#include "core/netfile.h"
#include "verify/verify.h"
#include "verify/vnnlib.h"

static void lg_bench_help(void)
{
    printf("usage: lgelu bench DIR [--timeout-scale F] [--solver auto|glpk|z3|none] [--bab auto|input|relu|none]\n"
           "                  [-j N] [--out RESULTS_DIR] [--seed S] [--timeout S] [--memory MB]\n\n"
           "Run every instance of a VNN-COMP style benchmark folder: DIR/instances.csv holds lines\n"
           "`onnx,vnnlib,timeout` (paths relative to DIR; lines starting with # are skipped). Each\n"
           "instance is verified as `lgelu verify NET --vnnlib P --timeout T` would (T times the scale).\n"
           "Writes RESULTS_DIR/<onnx>__<vnnlib>.txt (VNN-COMP result: unsat, sat + counterexample,\n"
           "unknown or timeout) and RESULTS_DIR/results.csv (instance, onnx, vnnlib, timeout, verdict,\n"
           "result, seconds, nodes, solver_nodes, method), and prints a table.\n\n"
           "options:\n"
           "  --timeout-scale F  multiply every instance timeout by F (default 1)\n"
           "  --solver NAME      back-end as for `lgelu verify` (default auto)\n"
           "  --bab MODE         branch and bound as for `lgelu verify` (default auto)\n"
           "  -j N               worker threads for branch and bound (default: the number of cores)\n"
           "  --out DIR          results folder, created if missing (default bench_results)\n"
           "  --seed S           attack seed (default 1)\n"
           "  --timeout S        cap every instance's (scaled) timeout at S seconds\n"
           "  --memory MB        memory cap of every back-end call (as for `lgelu verify`)\n"
           "  -h, --help         show this help\n\n"
           "Results are never half-written: each result file is written to a temporary file and renamed,\n"
           "and results.csv grows by whole rows, each synced to disk before the next instance starts.\n"
           "SIGINT/SIGTERM (Ctrl-C, kill, a batch system's time limit): the instance in flight finishes and\n"
           "is kept if decided (unsat/sat), dropped if not; then bench stops. A second signal stops at\n"
           "once. Either way every file holds only complete results.\n\n"
           "exit status: 0 when every instance ran (whatever its verdict), 1 if an instance or the\n"
           "list could not be read, 2 on bad usage, 128 + N when stopped by signal N (130 for SIGINT,\n"
           "143 for SIGTERM).\n");
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
    lg_status st = lg_net_load(&net, onnx);
    if (st != LG_OK) return st;
    if ((st = lg_vnnlib_read(&prop, vnnlib, net.n_in, lg_net_n_out(&net))) != LG_OK) goto fail;
    lg_verify_opts o = *base;
    o.timeout_s = timeout;
    if ((st = lg_verify_run(&net, &prop, &o, rep)) != LG_OK) goto fail;
    if (lg_bench_stop && rep->verdict != LG_VERDICT_ROBUST && rep->verdict != LG_VERDICT_VIOLATED) goto fail;
    st = lg_verify_write_result_path(rep, result_path);
fail:
    lg_prop_free(&prop);
    lg_net_free(&net);
    return st;
}

int lg_cmd_bench(int argc, char **argv)
{
    enum { O_MEMORY = 200, O_TIMEOUT, O_SCALE = 256, O_SOLVER, O_BAB, O_OUT, O_SEED };
    static const struct option lo[] = {{"timeout-scale", required_argument, 0, O_SCALE},
                                       {"solver", required_argument, 0, O_SOLVER},
                                       {"bab", required_argument, 0, O_BAB},
                                       {"out", required_argument, 0, O_OUT},
                                       {"seed", required_argument, 0, O_SEED},
                                       {"memory", required_argument, 0, O_MEMORY},
                                       {"timeout", required_argument, 0, O_TIMEOUT},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    lg_verify_opts o = lg_verify_opts_default();
    double scale = 1.0, max_timeout = 0; /* --timeout: cap on every instance's (scaled) timeout */
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
            if (lg_opt_int("bench", "j", optarg, 1, 1024, &v)) return 2;
            o.bab.threads = (int)v;
            break;
        case O_OUT: out_dir = optarg; break;
        case O_MEMORY:
            if (lg_opt_double("bench", "memory", optarg, 16, 1e9, &o.memory_mb)) return 2;
            break;
        case O_TIMEOUT:
            if (lg_opt_double("bench", "timeout", optarg, 0.01, 1e7, &max_timeout)) return 2;
            break;
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
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "lgelu bench: %s: cannot open: %s\n", path, strerror(errno));
        return 1;
    }
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "lgelu bench: %s: cannot create: %s\n", out_dir, strerror(errno));
        fclose(in);
        return 1;
    }
    snprintf(res, sizeof res, "%s/results.csv", out_dir);
    lg_line_log csv;
    lg_status cst = lg_line_log_open(&csv, res,
                                     "instance,onnx,vnnlib,timeout,verdict,result,seconds,nodes,solver_nodes,method\n");
    if (cst != LG_OK) {
        fprintf(stderr, "lgelu bench: %s\n", lg_errmsg());
        fclose(in);
        return 1;
    }
    lg_bench_stop = 0;
    lg_bench_signals(lg_bench_on_signal);
    printf("%-4s %-44s %-9s %9s %10s  %s\n", "#", "instance", "result", "seconds", "nodes", "method");
    int progress = lg_cli_progress_enabled(), n = 0, n_err = 0, n_run_err = 0, n_unsat = 0, n_sat = 0;
    double total = 0;
    char line[8192];
    size_t lineno = 0;
    int n_dropped = 0;
    while (!lg_bench_stop && fgets(line, sizeof line, in)) {
        lineno++;
        char *t = lg_bench_trim(line);
        if (*t == '\0' || *t == '#') continue;
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
        if (max_timeout > 0 && timeout * scale > max_timeout) timeout = max_timeout / scale;
        lg_bench_path(onnx, sizeof onnx, dir, f1);
        lg_bench_path(vnn, sizeof vnn, dir, f2);
        lg_bench_stem(s1, sizeof s1, onnx);
        lg_bench_stem(s2, sizeof s2, vnn);
        char inst[1100], rpath[5200];
        snprintf(inst, sizeof inst, "%s__%s", s1, s2);
        snprintf(rpath, sizeof rpath, "%s/%s.txt", out_dir, inst);
        n++;
        if (progress) fprintf(stderr, "[%d] %s (timeout %.1f s)...\n", n, inst, timeout * scale);
        lg_verify_report rep;
        lg_status st = lg_bench_one(onnx, vnn, timeout * scale, &o, rpath, &rep);
        if (st != LG_OK) {
            fprintf(stderr, "lgelu bench: %s:%zu: %s: %s\n", path, lineno, lg_status_str(st), lg_errmsg());
            if (lg_line_log_printf(&csv, "%s,%s,%s,%g,error,error,0,0,0,", inst, f1, f2, timeout * scale) != LG_OK)
                fprintf(stderr, "lgelu bench: %s\n", lg_errmsg());
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
            break;
        }
        const char *word = lg_bench_result_word(&rep);
        n_unsat += rep.verdict == LG_VERDICT_ROBUST;
        n_sat += rep.verdict == LG_VERDICT_VIOLATED;
        total += rep.seconds;
        if (lg_line_log_printf(&csv, "%s,%s,%s,%g,%s,%s,%.3f,%ld,%ld,%s", inst, f1, f2, timeout * scale,
                               lg_verdict_name(rep.verdict), word, rep.seconds, rep.bab_nodes, rep.nodes,
                               rep.method) != LG_OK) {
            fprintf(stderr, "lgelu bench: %s\n", lg_errmsg());
            n_err++;
        }
        printf("%-4d %-44.44s %-9s %9.3f %10ld  %s\n", n, inst, word, rep.seconds, rep.bab_nodes,
               rep.method[0] ? rep.method : "-");
        fflush(stdout);
        lg_verify_report_free(&rep);
    }
    int rc = n_err ? 1 : 0;
    if (ferror(in)) {
        fprintf(stderr, "lgelu bench: %s: read error\n", path);
        rc = 1;
    }
    fclose(in);
    if (lg_line_log_close(&csv) != LG_OK) {
        fprintf(stderr, "lgelu bench: %s\n", lg_errmsg());
        rc = 1;
    }
    int stop = lg_bench_stop;
    lg_bench_signals(SIG_DFL);
    printf("%d instances: %d unsat, %d sat, %d undecided, %d errors; %.2f s in all; results in %s\n", n, n_unsat,
           n_sat, n - n_unsat - n_sat - n_run_err, n_err, total, out_dir);
    if (stop) {
        printf("stopped by signal %d%s; every result above is complete\n", stop,
               n_dropped ? " (the undecided instance in flight was dropped)" : "");
        rc = 128 + stop;
    }
    return rc;
}
