/* cmd_relu.c — `lgelu relu NET -o RELU_NET`: ReLU substitution (anneal/relu.h). */
#include <stdio.h>

#include "anneal/relu.h"
#include "cli/cmd.h"
#include "core/netfile.h"
#include "onnx/load.h"

static void lg_relu_help(void)
{
    printf("usage: lgelu relu NET -o RELU_NET\n\n"
           "Replace every gelu, lgelu, swish and prelu activation of NET (native .lgnet or ONNX) by relu and\n"
           "write the resulting piecewise-linear network in the native format. All weights, biases, the\n"
           "input normalisation and the layer shapes are copied bit for bit; relu and identity layers stay.\n"
           "Applied to a plain GELU network this is the \"direct swap\" baseline; applied to an annealed\n"
           "lambda-GELU network it is the final step of annealing. 'lgelu bound RELU_NET --ref NET' then\n"
           "certifies how far the two networks' outputs can differ. Activations without a ReLU\n"
           "substitution are refused.\n\n"
           "options:\n"
           "  -o, --output FILE   where to write the ReLU network (required)\n"
           "  -h, --help          show this help\n");
}

int lg_cmd_relu(int argc, char **argv)
{
    const char *in, *out;
    int pr = lg_cli_in_out("relu", argc, argv, lg_relu_help, "RELU_NET", &in, &out);
    if (pr) return pr == 1 ? 0 : pr;
    lg_net src, dst = {0};
    lg_status st = lg_net_load(&src, in);
    if (st != LG_OK) return lg_cli_fail("relu", st);
    int rc = 1;
    if ((st = lg_anneal_to_relu(&dst, &src)) != LG_OK) goto fail;
    if ((st = lg_netfile_write(&dst, out)) != LG_OK) goto fail;
    for (int k = 0; k < src.n_layers; k++) {
        const lg_layer *L = &src.layers[k];
        const lg_act_info *ai = lg_act_info_of(L->act);
        if (ai->relu_like && ai->param_name)
            printf("layer %d: %s (%s %.6g) -> relu\n", k, ai->name, ai->param_name, L->lambda);
        else if (ai->relu_like) printf("layer %d: %s -> relu\n", k, ai->name);
        else printf("layer %d: %s (kept)\n", k, lg_act_name(L->act));
    }
    printf("wrote %s (%d of %d layers substituted, %zu parameters unchanged)\n", out, lg_anneal_count_smooth(&src),
           src.n_layers, src.n_params);
    rc = 0;
fail:
    if (rc) rc = lg_cli_fail("relu", st);
    lg_net_free(&dst);
    lg_net_free(&src);
    return rc;
}
