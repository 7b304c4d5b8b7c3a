/* cmd_export.c — `lgelu export NET -o OUT.onnx`: write a network as ONNX. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "core/netfile.h"
#include "onnx/onnx.h"
#include "onnx/load.h"

static void lg_export_help(void)
{
    printf("usage: lgelu export NET -o OUT.onnx [--dtype auto|float32|float64]\n\n"
           "Write NET (native or ONNX) as an ONNX model (IR 7, opset 13; 17 with a LayerNormalization)\n"
           "that other verifiers and runtimes read: input 'input' [1, n_in], optional Sub/Div input\n"
           "normalisation; per layer a\n"
           "Gemm (dense), Conv (between Reshape and Flatten) or Gather (an index map), the terms of a\n"
           "layer with several sources (residual nets) summed by Add, max-pool layers as MaxPool,\n"
           "product nodes as Gather and a batched MatMul, softmax nodes as Softmax, layernorm nodes as\n"
           "LayerNormalization (or its ReduceMean/Sub/Pow/Sqrt/Div form for an eps that is not a float); then\n"
           "the activation: Relu, Sigmoid, PRelu, Swish as x*Sigmoid(beta*x), GELU / lambda-GELU as\n"
           "x*0.5*(1+Erf(lambda*x/sqrt(2))); output 'output' [1, n_out]. Prints one line naming the\n"
           "file written.\n\n"
           "options:\n"
           "  -o, --output FILE  the ONNX file to write (required)\n"
           "  --dtype T          tensor element type: auto (default: float32 when every value is exactly\n"
           "                     float-representable, else float64, so reading the file back gives the\n"
           "                     same network), float64, or float32 (every value rounded to the nearest\n"
           "                     float: the file is a slightly different network, which is what a float32\n"
           "                     runtime computes; verify the exported file, not NET)\n"
           "  -h, --help         show this help\n");
    printf("\n%s", lg_cli_import_help);
}

int lg_cmd_export(int argc, char **argv)
{
    enum { O_DTYPE = 256 };
    static const struct option lo[] = {{"output", required_argument, 0, 'o'},
                                       {"dtype", required_argument, 0, O_DTYPE},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    const char *out = NULL;
    lg_onnx_dtype dtype = LG_ONNX_DTYPE_AUTO;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", lo, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case O_DTYPE:
            if (strcmp(optarg, "auto") == 0) dtype = LG_ONNX_DTYPE_AUTO;
            else if (strcmp(optarg, "float32") == 0) dtype = LG_ONNX_DTYPE_FLOAT32;
            else if (strcmp(optarg, "float64") == 0) dtype = LG_ONNX_DTYPE_FLOAT64;
            else return lg_cli_usage("export", "--dtype: expected auto, float32 or float64, got '%s'", optarg);
            break;
        case 'h': lg_export_help(); return 0;
        default: return lg_cli_usage("export", "unknown option");
        }
    }
    if (optind != argc - 1) return lg_cli_usage("export", "expected exactly one network file");
    if (!out) return lg_cli_usage("export", "missing -o OUT.onnx");
    if (lg_cli_check_output(out) != LG_OK) return lg_cli_usage("export", "-o/--output: %s", lg_errmsg());
    lg_net net;
    lg_status st = lg_net_load(&net, argv[optind]);
    if (st != LG_OK) return lg_cli_fail("export", st);
    size_t rounded = 0;
    st = lg_onnx_write_dtype(&net, out, dtype, &rounded);
    int n_layers = net.n_layers;
    size_t n_params = net.n_params;
    lg_net_free(&net);
    if (st != LG_OK) return lg_cli_fail("export", st);
    printf("wrote %s (ONNX, %d layers, %zu parameters, element type %s)\n", out, n_layers, n_params,
           dtype == LG_ONNX_DTYPE_FLOAT32   ? "float32"
           : dtype == LG_ONNX_DTYPE_FLOAT64 ? "float64"
                                            : "auto: float32 when every value is a float, else float64");
    if (rounded)
        fprintf(stderr, "lgelu export: float32: %zu values rounded to the nearest float; %s is not bit-identical to the "
                        "input network\n",
                rounded, out);
    return 0;
}
