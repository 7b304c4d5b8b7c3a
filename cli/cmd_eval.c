/* cmd_eval.c — `lgelu eval NET`: test accuracy in double precision, or the
 * outputs for input vectors read from a text file (--input). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "core/eval.h"
#include "core/idx.h"
#include "core/netfile.h"

static void lg_eval_help(void)
{
    printf("usage: lgelu eval NET [--data DIR] [--json]\n"
           "       lgelu eval NET --input FILE\n\n"
           "Evaluate NET (native or ONNX) in double precision on the test split of an IDX dataset and\n"
           "print its accuracy; or, with --input, print the network outputs for given inputs.\n\n"
           "options:\n"
           "  --data DIR   directory with the four IDX files (default %s)\n"
           "  --json       print one line {\"accuracy\": A, \"n\": N} instead of text\n"
           "  --input FILE evaluate the vectors in FILE ('-' = stdin): one input per line, n_in numbers\n"
           "               separated by spaces, tabs or commas; '#' starts a comment; blank lines are\n"
           "               skipped. Prints one line per input: the outputs as %%.17g, space-separated.\n"
           "  -h, --help   show this help\n",
           LG_DATA_DEFAULT_DIR);
}

/* Parse one input line into x[n_in]; returns the count of values (0 for a
 * blank/comment line) or -1 with lg_fail set. */
static int lg_eval_parse_line(char *line, double *x, int n_in, const char *path, size_t lineno)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    int n = 0;
    for (char *tok = strtok(line, " \t\r\n,"); tok; tok = strtok(NULL, " \t\r\n,")) {
        char *end;
        double v = strtod(tok, &end); /* overflow gives ±inf; underflow is fine */
        if (end == tok || *end || !isfinite(v)) {
            lg_fail(LG_ERR_FORMAT, "%s:%zu: value %d: expected a finite number, got '%s'", path, lineno, n + 1, tok);
            return -1;
        }
        if (n == n_in) {
            lg_fail(LG_ERR_FORMAT, "%s:%zu: more than %d values (the network has %d inputs)", path, lineno, n_in, n_in);
            return -1;
        }
        x[n++] = v;
    }
    if (n != 0 && n != n_in) {
        lg_fail(LG_ERR_FORMAT, "%s:%zu: expected %d values, got %d", path, lineno, n_in, n);
        return -1;
    }
    return n;
}

/* Print the outputs of net for every vector in path. */
static lg_status lg_eval_inputs(const lg_net *net, const char *path)
{
    int ni = net->n_in, no = lg_net_n_out(net);
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!f) return lg_fail(LG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    double *x = malloc((size_t)ni * sizeof *x), *y = malloc((size_t)no * sizeof *y);
    double *scratch = malloc(2 * (size_t)lg_net_max_width(net) * sizeof *scratch);
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    lg_status st = LG_OK;
    if (!x || !y || !scratch) {
        st = lg_fail(LG_ERR_NOMEM, "out of memory");
        goto done;
    }
    while (getline(&line, &cap, f) != -1) {
        lineno++;
        int n = lg_eval_parse_line(line, x, ni, path, lineno);
        if (n < 0) {
            st = LG_ERR_FORMAT;
            goto done;
        }
        if (n == 0) continue;
        lg_net_forward(net, x, y, scratch);
        for (int j = 0; j < no; j++) printf(j ? " %.17g" : "%.17g", y[j]);
        printf("\n");
    }
    if (ferror(f)) st = lg_fail(LG_ERR_IO, "%s: read error", path);
done:
    free(line);
    free(x);
    free(y);
    free(scratch);
    if (f != stdin) fclose(f);
    return st;
}

int lg_cmd_eval(int argc, char **argv)
{
    static const struct option lo[] = {{"data", required_argument, 0, 'd'},
                                       {"json", no_argument, 0, 'j'},
                                       {"input", required_argument, 0, 'i'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    const char *dir = LG_DATA_DEFAULT_DIR, *input = NULL;
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'd': dir = optarg; break;
        case 'j': json = 1; break;
        case 'i': input = optarg; break;
        case 'h': lg_eval_help(); return 0;
        default: return lg_cli_usage("eval", "unknown option");
        }
    }
    if (optind != argc - 1) return lg_cli_usage("eval", "expected exactly one network file");
    if (input && json) return lg_cli_usage("eval", "--json applies to accuracy, not to --input");
    lg_net net;
    lg_dataset ds = {0};
    int rc = 1;
    lg_status st = lg_net_load(&net, argv[optind]);
    if (st != LG_OK) return lg_cli_fail("eval", st);
    if (input) {
        if ((st = lg_eval_inputs(&net, input)) != LG_OK) goto fail;
        rc = 0;
        goto fail;
    }
    if ((st = lg_data_load(&ds, dir, "test")) != LG_OK) goto fail;
    if (ds.dim != net.n_in) {
        st = lg_fail(LG_ERR_ARG, "network takes %d inputs but the data has %d features", net.n_in, ds.dim);
        goto fail;
    }
    double acc = 0.0;
    if ((st = lg_eval_accuracy(&net, &ds, &acc)) != LG_OK) goto fail;
    if (json) printf("{\"accuracy\": %.6f, \"n\": %zu}\n", acc, ds.n);
    else printf("test accuracy: %.2f%% (%zu examples)\n", 100.0 * acc, ds.n);
    rc = 0;
fail:
    if (rc) lg_cli_fail("eval", st);
    lg_dataset_free(&ds);
    lg_net_free(&net);
    return rc;
}
