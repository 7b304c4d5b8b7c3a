/* cmd_export.c — `lgelu export NET -o OUT.onnx`: write a network as ONNX. */
#include <stdio.h>

#include "cli/cmd.h"
#include "core/netfile.h"
#include "core/onnx.h"

static void lg_export_help(void)
{
    printf("usage: lgelu export NET -o OUT.onnx\n\n"
           "Write NET (native or ONNX) as an ONNX model (IR 7, opset 13) that other verifiers and\n"
           "runtimes read: input 'input' [1, n_in], optional Sub/Div input normalisation, one Gemm per\n"
           "layer, Relu, and GELU / lambda-GELU as x*0.5*(1+Erf(lambda*x/sqrt(2))) with Mul, Div, Erf,\n"
           "Add; output 'output' [1, n_out]. Tensors are float32 when every value is exactly\n"
           "float-representable, else double, so reading the file back gives the same network.\n\n"
           "options:\n"
           "  -o, --output FILE  the ONNX file to write (required)\n"
           "  -h, --help         show this help\n");
}

int lg_cmd_export(int argc, char **argv)
{
    const char *in, *out;
    int pr = lg_cli_in_out("export", argc, argv, lg_export_help, "OUT.onnx", &in, &out);
    if (pr) return pr == 1 ? 0 : pr;
    lg_net net;
    lg_status st = lg_net_load(&net, in);
    if (st != LG_OK) return lg_cli_fail("export", st);
    st = lg_onnx_write(&net, out);
    lg_net_free(&net);
    if (st != LG_OK) return lg_cli_fail("export", st);
    return 0;
}
