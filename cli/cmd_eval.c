/* cmd_eval.c — `lgelu eval NET`: test accuracy in double precision. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cmd.h"
#include "core/idx.h"
#include "core/netfile.h"

static void lg_eval_help(void)
{
    printf("usage: lgelu eval NET [--data DIR] [--json]\n\n"
           "Evaluate NET (native or ONNX) in double precision on the test split of an IDX dataset and\n"
           "print its accuracy.\n\n"
           "options:\n"
           "  --data DIR   directory with the four IDX files (default %s)\n"
           "  --json       print one line {\"accuracy\": A, \"n\": N} instead of text\n"
           "  -h, --help   show this help\n",
           LG_DATA_DEFAULT_DIR);
}

/* Fraction of ds classified correctly by net (argmax of the outputs). */
static lg_status lg_eval_accuracy(const lg_net *net, const lg_dataset *ds, double *acc)
{
    const size_t chunk = 1000;
    int no = lg_net_n_out(net);
    double *X = malloc(chunk * (size_t)ds->dim * sizeof *X), *Y = malloc(chunk * (size_t)no * sizeof *Y);
    lg_status st = LG_OK;
    size_t correct = 0;
    if (!X || !Y) {
        st = lg_fail(LG_ERR_NOMEM, "cannot allocate evaluation buffers");
        goto done;
    }
    for (size_t s = 0; s < ds->n; s += chunk) {
        size_t m = ds->n - s < chunk ? ds->n - s : chunk;
        for (size_t i = 0; i < m * (size_t)ds->dim; i++) X[i] = ds->x[s * (size_t)ds->dim + i];
        if ((st = lg_net_forward_batch(net, X, Y, m)) != LG_OK) goto done;
        for (size_t r = 0; r < m; r++) {
            int best = 0;
            for (int j = 1; j < no; j++)
                if (Y[r * (size_t)no + (size_t)j] > Y[r * (size_t)no + (size_t)best]) best = j;
            correct += best == ds->y[s + r];
        }
    }
    *acc = ds->n ? (double)correct / (double)ds->n : 0.0;
done:
    free(X);
    free(Y);
    return st;
}

int lg_cmd_eval(int argc, char **argv)
{
    static const struct option lo[] = {
        {"data", required_argument, 0, 'd'}, {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *dir = LG_DATA_DEFAULT_DIR;
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'd': dir = optarg; break;
        case 'j': json = 1; break;
        case 'h': lg_eval_help(); return 0;
        default: return lg_cli_usage("eval", "unknown option");
        }
    }
    if (optind != argc - 1) return lg_cli_usage("eval", "expected exactly one network file");
    lg_net net;
    lg_dataset ds = {0};
    int rc = 1;
    lg_status st = lg_net_load(&net, argv[optind]);
    if (st != LG_OK) return lg_cli_fail("eval", st);
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
