/* cmd.h — the lgelu subcommands and the option helpers they share.
 *
 * Each subcommand lives in cli/cmd_<name>.c and is a function
 * int lg_cmd_<name>(int argc, char **argv) returning the process exit code
 * (0 ok, 1 runtime failure, 2 usage error). Only cli/ calls exit().
 */
#ifndef LG_CLI_CMD_H
#define LG_CLI_CMD_H

#include <stdio.h>

#include "core/net.h"
#include "core/status.h"
#include "onnx/load.h"

typedef int (*lg_cmd_fn)(int argc, char **argv);

typedef struct lg_cmd {
    const char *name;
    lg_cmd_fn run;
    const char *summary;
} lg_cmd;

int lg_cmd_info(int argc, char **argv);
int lg_cmd_eval(int argc, char **argv);
int lg_cmd_export(int argc, char **argv);
int lg_cmd_train(int argc, char **argv);
int lg_cmd_anneal(int argc, char **argv);
int lg_cmd_relu(int argc, char **argv);
int lg_cmd_bound(int argc, char **argv);
int lg_cmd_verify(int argc, char **argv);
int lg_cmd_encode(int argc, char **argv);
int lg_cmd_cex(int argc, char **argv);
int lg_cmd_bench(int argc, char **argv);
int lg_cmd_check(int argc, char **argv);
int lg_cmd_study(int argc, char **argv);
int lg_cmd_study_report(int argc, char **argv);
int lg_cmd_study_merge(int argc, char **argv);

/* Strict number parsing for option values. On failure print
 * "lgelu <cmd>: --<opt>: expected ..., got '<val>'" and return -1. */
int lg_opt_int(const char *cmd, const char *opt, const char *val, long lo, long hi, long *out);
int lg_opt_double(const char *cmd, const char *opt, const char *val, double lo, double hi, double *out);
/* --eps E of every command with an L-inf ball (verify, encode, check, bound):
 * one range, [LG_EPS_MIN, LG_EPS_MAX] (the input domain is [0,1], so a
 * larger radius would be the whole domain); lg_opt_double's return. */
#define LG_EPS_MIN 0.0
#define LG_EPS_MAX 1.0
int lg_opt_eps(const char *cmd, const char *val, double *out);

/* The one exit-code rule of every command (docs/USAGE.md "Exit status"):
 * print "lgelu <cmd>: <status>: <message>" for a failed call and return 2
 * for a usage or value error (LG_ERR_ARG: an option value out of range, or
 * a file named on the command line of the wrong shape or kind, such as a
 * property or input vector whose size does not fit the network; and
 * LG_ERR_UNSUPPORTED: a network or file of a kind the stage does not take,
 * an unsupported ONNX operator, a smooth net for a piecewise-linear
 * back-end), 1 for a
 * failure while running (missing, unreadable or corrupt file, numerical
 * failure, out of memory). */
int lg_cli_fail(const char *cmd, lg_status st);

/* Usage error: print message and "try 'lgelu <cmd> --help'"; returns 2. */
int lg_cli_usage(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Parse the common form `lgelu CMD NET -o OUT [--help]`: 0 with *in and
 * *out set; 1 after printing help (exit 0); 2 after a usage message. */
int lg_cli_in_out(const char *cmd, int argc, char **argv, void (*help)(void), const char *out_what, const char **in,
                  const char **out);

/* 1 when progress output should be shown: stderr is a terminal, or
 * --progress forced it (lg_cli_progress_force) for logs (CI, Slurm). */
int lg_cli_progress_enabled(void);
void lg_cli_progress_force(void);

/* One progress line "lgelu CMD: WHAT done/total (p%), E s elapsed, ETA s"
 * on stderr when progress is enabled: redrawn in place on a terminal, one
 * line at most every 10 s (and the last) in a log. Zero-initialise m. */
typedef struct lg_cli_meter {
    double t0, t_last;
} lg_cli_meter;
void lg_cli_progress(lg_cli_meter *m, const char *cmd, const char *what, size_t done, size_t total);

/* Check, before any long work, that path can be written: an existing file
 * must be writable and not a folder, a new file's folder must exist and be
 * writable. Nothing is created. "-" (stdout) and NULL pass. LG_ERR_IO with
 * the reason otherwise. */
lg_status lg_cli_check_output(const char *path);

/* Load a network (lg_net_load) with every max-pool node written as its exact
 * ReLU form (lg_net_lower_max): for the commands whose stages do not take
 * the node (encode, cex, bound, check; any_sign as lg_net_lower_max: 1 for
 * the two nets of a deviation bound). */
lg_status lg_cli_load_lowered(lg_net *net, const char *path, int any_sign);

/* The ONNX import options of every command (import_opts.c): --drop-final-softmax and
 * --round-weights are taken out of argv[1..argc) (argv[0] is the command; argc updated,
 * argv[argc] = NULL) and set for every later network read (onnx.h lg_onnx_set_import_opts).
 * lg_cli_import_help is their --help text. Returns 0. */
int lg_cli_import_opts(int *argc, char **argv);
extern const char lg_cli_import_help[];

/* The default of every -j option: the number of online cores. */
int lg_cli_threads_default(void);

#endif
