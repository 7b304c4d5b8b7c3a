#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cmd.h"

int lg_opt_int(const char *cmd, const char *opt, const char *val, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = val ? strtol(val, &end, 10) : 0;
    if (!val || *val == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi) {
        fprintf(stderr, "lgelu %s: --%s: expected an integer in [%ld, %ld], got '%s'\n", cmd, opt, lo, hi,
                val ? val : "");
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
        fprintf(stderr, "lgelu %s: --%s: expected a number in [%g, %g], got '%s'\n", cmd, opt, lo, hi,
                val ? val : "");
        return -1;
    }
    *out = v;
    return 0;
}

int lg_cli_fail(const char *cmd, lg_status st)
{
    fprintf(stderr, "lgelu %s: %s: %s\n", cmd, lg_status_str(st), lg_errmsg());
    return 1;
}

int lg_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "lgelu %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\ntry 'lgelu %s --help'\n", cmd);
    return 2;
}

int lg_cli_progress_enabled(void) { return isatty(fileno(stderr)); }

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
