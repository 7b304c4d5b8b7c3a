/* opts.c — the option readers every subcommand shares (numbers with ranges, usage and error exits, progress lines; cmd.h). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/config.h"
#include "core/netfile.h"
#include "core/op.h"
#include "core/clock.h"
#include "onnx/load.h"

int lg_opt_int(const char *cmd, const char *opt, const char *val, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = val ? strtol(val, &end, 10) : 0;
    if (!val || *val == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi) {
        char w[600];
        fprintf(stderr, "lgelu %s: %s%s: expected an integer in [%ld, %ld], got '%s'%s\n", cmd, opt[0] == '-' ? "" : "--",
                opt, lo, hi, val ? val : "", lg_cli_config_where(optind - 1, w, sizeof w));
        return -1;
    }
    *out = v;
    return 0;
}

int lg_opt_double(const char *cmd, const char *opt, const char *val, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = val ? strtod(val, &end) : 0;
    if (!val || *val == '\0' || *end != '\0' || errno != 0 || !isfinite(v) || v < lo || v > hi) {
        char w[600];
        fprintf(stderr, "lgelu %s: %s%s: expected a number in [%g, %g], got '%s'%s\n", cmd, opt[0] == '-' ? "" : "--", opt,
                lo, hi, val ? val : "", lg_cli_config_where(optind - 1, w, sizeof w));
        return -1;
    }
    *out = v;
    return 0;
}

int lg_opt_eps(const char *cmd, const char *val, double *out)
{
    return lg_opt_double(cmd, "eps", val, LG_EPS_MIN, LG_EPS_MAX, out);
}

int lg_cli_fail(const char *cmd, lg_status st)
{
    fprintf(stderr, "lgelu %s: %s: %s\n", cmd, lg_status_str(st), lg_errmsg());
    return st == LG_ERR_ARG || st == LG_ERR_UNSUPPORTED ? 2 : 1; /* a value, or a file, that does not fit */
}

int lg_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    char msg[2048], w[600];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* an option the config file set: name its file, line and key (only when the message is about that option) */
    lg_cli_config_where(optind - 1, w, sizeof w);
    const char *key = strstr(w, ", key ");
    if (key && !strstr(msg, "unknown option")) {
        char k[200];
        snprintf(k, sizeof k, "%s", key + 6);
        k[strcspn(k, ")")] = '\0';
        if (!strstr(msg, k)) w[0] = '\0';
    }
    fprintf(stderr, "lgelu %s: %s%s\ntry 'lgelu %s --help'\n", cmd, msg, w, cmd);
    return 2;
}

static int lg_cli_progress_forced;

void lg_cli_progress_force(void) { lg_cli_progress_forced = 1; }

int lg_cli_progress_enabled(void) { return lg_cli_progress_forced || isatty(fileno(stderr)); }

void lg_cli_progress(lg_cli_meter *m, const char *cmd, const char *what, size_t done, size_t total)
{
    if (!lg_cli_progress_enabled()) return;
    double now = lg_now();
    if (m->t0 == 0) m->t0 = now;
    int tty = isatty(fileno(stderr)), last = done >= total;
    /* a log gets a line at most every 10 s (and the last one); a terminal one line redrawn */
    if (!tty && !last && m->t_last != 0 && now - m->t_last < 10.0) return;
    if (tty && !last && m->t_last != 0 && now - m->t_last < 0.2) return;
    m->t_last = now;
    double el = now - m->t0;
    double eta = done > 0 ? el / (double)done * (double)(total - done) : 0.0;
    fprintf(stderr, "%slgelu %s: %s %zu/%zu (%.0f%%), %.0f s elapsed, ETA %.0f s%s", tty ? "\r" : "", cmd, what,
            done, total, total ? 100.0 * (double)done / (double)total : 100.0, el, eta, tty && !last ? "   " : "\n");
    fflush(stderr);
}

lg_status lg_cli_load_lowered(lg_net *net, const char *path, int any_sign)
{
    lg_status st = lg_net_load(net, path);
    if (st != LG_OK) return st;
    lg_net low;
    if ((st = lg_net_lower_nodes(&low, net, any_sign)) != LG_OK || low.n_layers) lg_net_free(net);
    if (low.n_layers) *net = low;
    return st;
}

lg_status lg_cli_check_output(const char *path)
{
    if (!path || strcmp(path, "-") == 0) return LG_OK;
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) return lg_fail(LG_ERR_IO, "%s: is a directory", path);
        if (access(path, W_OK) != 0) return lg_fail(LG_ERR_IO, "%s: not writable: %s", path, strerror(errno));
        return LG_OK;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    if (stat(dir, &sb) != 0) return lg_fail(LG_ERR_IO, "%s: folder %s does not exist", path, dir);
    if (!S_ISDIR(sb.st_mode)) return lg_fail(LG_ERR_IO, "%s: %s is not a folder", path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return lg_fail(LG_ERR_IO, "%s: cannot create a file in %s: %s", path, dir, strerror(errno));
    return LG_OK;
}

int lg_cli_threads_default(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

int lg_cli_in_out(const char *cmd, int argc, char **argv, void (*help)(void), const char *out_what, const char **in,
                  const char **out)
{
    static const struct option lo[] = {
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    *out = NULL;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", lo, NULL)) != -1) {
        switch (c) {
        case 'o': *out = optarg; break;
        case 'h': help(); return 1;
        default: return lg_cli_usage(cmd, "unknown option");
        }
    }
    if (optind != argc - 1) return lg_cli_usage(cmd, "expected exactly one network file");
    if (!*out) return lg_cli_usage(cmd, "missing -o %s", out_what);
    *in = argv[optind];
    return 0;
}
