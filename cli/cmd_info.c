/* cmd_info.c — `lgelu info NET`: architecture, activations, λ per layer. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "core/json.h"
#include "core/netfile.h"
#include "core/op.h"
#include "onnx/load.h"
#include "onnx/onnx.h"

/* text in lines of at most 100 characters, broken at spaces, indented by 2 */
static void lg_cli_wrap(const char *t)
{
    while (*t) {
        size_t n = strlen(t);
        if (n > 98) {
            n = 98;
            while (n > 0 && t[n] != ' ') n--;
            if (n == 0) n = 98;
        }
        printf("  %.*s\n", (int)n, t);
        t += n;
        while (*t == ' ') t++;
    }
}

static void lg_info_help(void)
{
    printf("usage: lgelu info NET\n\n"
           "Print the architecture of NET (native .lgnet or ONNX): input size, one line per layer with its\n"
           "shape, activation and hardness λ (for lgelu layers also the raw parameter s and temperature t),\n"
           "for a conv layer its geometry, for a layer of a graph (a sum, a skip connection, an index map) each\n"
           "linear term: its kind (dense, conv, index map), the node it reads (input or layer) and its shape,\n"
           "input normalisation if any, and the parameter count.\n\n"
           "options:\n"
           "  -h, --help   show this help\n\n"
           "ONNX ops read (docs/FORMATS.md has the details):\n");
    lg_cli_wrap(lg_onnx_supported_ops());
    printf("\n%s", lg_cli_import_help);
}

int lg_cmd_info(int argc, char **argv)
{
    static const struct option lo[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (c == 'h') {
            lg_info_help();
            return 0;
        }
        return lg_cli_usage("info", "unknown option");
    }
    if (optind != argc - 1) return lg_cli_usage("info", "expected exactly one network file");
    lg_net net;
    lg_status st = lg_net_load(&net, argv[optind]);
    if (st != LG_OK) return lg_cli_fail("info", st);
    printf("network: %s\ninputs: %d\nlayers: %d\nparameters: %zu\ntemperature t: %g\n", argv[optind], net.n_in,
           net.n_layers, net.n_params, net.t);
    if (net.in_sub || net.in_div) printf("input normalisation: x' = (x - sub) / div\n");
    printf("%-6s %-8s %-8s %-9s %-20s %-20s\n", "layer", "in", "out", "act", "lambda", "s");
    for (int k = 0; k < net.n_layers; k++) {
        const lg_layer *L = &net.layers[k];
        /* "in" is term 0's width; a layer with more terms also prints every term with its own (below) */
        printf("%-6d %-8d %-8d %-9s ", k, lg_layer_lin(L, 0)->n_in, L->n_out, lg_act_name(L->act));
        const lg_act_info *ai = lg_act_info_of(L->act);
        char lam[LG_NUM_BUFSIZE], sv[LG_NUM_BUFSIZE]; /* every digit: an imported 1.0000000084 is not 1 */
        if (ai->softplus) printf("%-20s %-20s\n", lg_num_shortest(lam, L->lambda), lg_num_shortest(sv, L->s));
        else if (ai->has_param) printf("%-20s %-20s\n", lg_num_shortest(lam, L->lambda), "-");
        else if (ai->param_sym) printf("%-20s %-20s\n", "1", "-"); /* a fixed parameter (gelu's λ = 1) */
        else printf("%-20s %-20s\n", "-", "-");
        /* the terms are listed unless the layer is one chain term (dense or conv reading layer k − 1)
         * or a node (its own line below); with one term, term 0 is the whole layer */
        int graph = !lg_layer_single(L) || L->lin.src != k - 1 || L->lin.kind == LG_LAYER_INDEX;
        if (lg_layer_is(L, LG_OPF_NODE)) graph = 0;
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            const lg_linear *A = lg_layer_lin(L, t);
            char from[32];
            if (A->src < 0) snprintf(from, sizeof from, "input");
            else snprintf(from, sizeof from, "layer %d", A->src);
            if (graph)
                printf("       term %d: %s from %s, %d -> %d\n", t,
                       lg_kind_name(A->kind), from,
                       A->n_in, A->n_out);
            char line[256];
            if (lg_op(A->kind)->describe && lg_op(A->kind)->describe(A, from, line, sizeof line) > 0)
                printf("       %s\n", line); /* the kind's own line (core/op.h) */
        }
    }
    lg_net_free(&net);
    return 0;
}
