/* import_opts.c — the ONNX import options every command takes (cmd.h lg_cli_import_opts):
 * --drop-final-softmax and --round-weights, taken out of the argument vector before the
 * command parses its own options and set once for every network read (onnx.h). */
#include <string.h>

#include "cli/cmd.h"
#include "onnx/onnx.h"

const char lg_cli_import_help[] =
    "ONNX import options (every command that reads a network; docs/USAGE.md \"ONNX import options\"):\n"
    "  --drop-final-softmax  remove the Softmax node that produces the graph output: the network's\n"
    "                  outputs are its input, the logits (properties over the logits, as VNN-COMP and\n"
    "                  alpha-beta-CROWN read them); a graph output made by another op is refused\n"
    "  --round-weights an AveragePool weight 1/k (k not a power of two: a 3x3 window), a linear\n"
    "                  Resize weight, the reciprocal 1/c of a Div by a constant c (attention's\n"
    "                  1/sqrt(d_head), d_head 8 or 32) or a ReduceMean's 1/n that is not a double is rounded to the\n"
    "                  nearest double; the\n"
    "                  network verified is then that rounded one, not the file's exact function, and\n"
    "                  every verdict and result file says so (without it such a node is refused)\n";

int lg_cli_import_opts(int *argc, char **argv)
{
    lg_onnx_import_opts o = *lg_onnx_get_import_opts();
    int n = 1;
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--") == 0) { /* the rest are operands */
            while (i < *argc) argv[n++] = argv[i++];
            break;
        }
        if (strcmp(argv[i], "--drop-final-softmax") == 0) o.drop_final_softmax = 1;
        else if (strcmp(argv[i], "--round-weights") == 0) o.round_weights = 1;
        else argv[n++] = argv[i];
    }
    *argc = n;
    argv[n] = NULL;
    lg_onnx_set_import_opts(&o);
    return 0;
}
