/* cmd_eval.c — `lgelu eval NET`: test accuracy in double precision, or the
 * outputs for input vectors read from a text file (--input). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "core/json.h"
#include "cli/inputs.h"
#include "core/eval.h"
#include "core/npy.h"
#include "core/netfile.h"
#include "onnx/load.h"

static void lg_eval_help(void)
{
    printf("usage: lgelu eval NET [--data DIR | --data X.npy,y.npy] [--json]\n"
           "       lgelu eval NET --input FILE\n\n"
           "Evaluate NET (native or ONNX) in double precision on the test split of an IDX dataset (or\n"
           "on a pair of NumPy files) and print its accuracy; or, with --input, print the network\n"
           "outputs for given inputs.\n\n"
           "options:\n"
           "  --data DIR   directory with the four IDX files (default %s); or X.npy,y.npy: inputs of\n"
           "               shape (n, n_in) in [0,1] (float32/float64) and integer labels of shape (n,);\n"
           "               or Xtrain.npy,ytrain.npy,Xtest.npy,ytest.npy (the test pair is used)\n"
           "  --json       print one line {\"accuracy\": A, \"n\": N} instead of text\n"
           "  --input FILE evaluate the vectors in FILE: a .npy array of shape (n, n_in) or (n_in,) (one\n"
           "               input; np.save('x0.npy', X[0])), or text ('-' =\n"
           "               stdin) with one input per line, n_in numbers separated by spaces, tabs or\n"
           "               commas; '#' starts a comment; blank lines are skipped. Prints one line per\n"
           "               input: the outputs (shortest round-trip decimals), space-separated.\n"
           "  -h, --help   show this help\n",
           LG_DATA_DEFAULT_DIR);
    printf("\n%s", lg_cli_import_help);
}

/* Print the outputs of net for every vector in path (.npy or text). */
static lg_status lg_eval_inputs(const lg_net *net, const char *path)
{
    int ni = net->n_in, no = lg_net_n_out(net);
    double *X = NULL, *y = malloc((size_t)no * sizeof *y);
    double *scratch = malloc(2 * (size_t)lg_net_max_width(net) * sizeof *scratch);
    size_t n = 0;
    lg_status st = !y || !scratch ? lg_fail(LG_ERR_NOMEM, "out of memory") : lg_cli_inputs_read(path, ni, &X, &n);
    for (size_t i = 0; st == LG_OK && i < n; i++) {
        lg_net_forward(net, X + i * (size_t)ni, y, scratch);
        char v[LG_NUM_BUFSIZE];
        for (int j = 0; j < no; j++) printf(j ? " %s" : "%s", lg_num_shortest(v, y[j]));
        printf("\n");
    }
    free(X);
    free(y);
    free(scratch);
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
    if ((st = lg_data_load_spec(&ds, dir, "test")) != LG_OK) goto fail;
    if ((st = lg_dataset_fit(&ds, net.n_in, "the network", dir)) != LG_OK) goto fail;
    double acc = 0.0;
    if ((st = lg_eval_accuracy(&net, &ds, &acc)) != LG_OK) goto fail;
    if (json) lg_json_print_line(stdout, json_pack("{s:o, s:I}", "accuracy", lg_json_num(acc), "n", (json_int_t)ds.n));
    else printf("test accuracy: %.2f%% (%zu examples)\n", 100.0 * acc, ds.n);
    rc = 0;
fail:
    if (rc) rc = lg_cli_fail("eval", st);
    lg_dataset_free(&ds);
    lg_net_free(&net);
    return rc;
}
