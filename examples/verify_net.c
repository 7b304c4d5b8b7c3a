/* verify_net.c — a user of the installed liblgelu (docs/LIBRARY.md).
 *
 *   verify_net NET [VNNLIB]
 *
 * Loads NET, evaluates it at the centre of the input domain, verifies local
 * robustness of its prediction there (eps 0.001, box clipped to [0,1]) and,
 * given a VNN-LIB file, that property; prints one line per step. Exit 0
 * when every call succeeded (any verdict), 1 otherwise. Built against the
 * installed tree through pkg-config and through find_package(lgelu). */
#include <lgelu/lgelu.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, lgelu_status st)
{
    fprintf(stderr, "verify_net: %s: %s: %s\n", what, lgelu_status_str(st), lgelu_errmsg());
    return 1;
}

static void print_result(const char *what, const lgelu_result *r)
{
    int n = 0, nl = 0;
    const double *x = lgelu_result_counterexample(r, &n);
    lgelu_result_unstable(r, &nl);
    printf("%s: %s (%s%s%s) in %.3f s, %d unstable ReLUs over %d layers\n", what,
           lgelu_verdict_name(lgelu_result_verdict(r)), lgelu_result_method(r), *lgelu_result_reason(r) ? ", " : "",
           lgelu_result_reason(r), lgelu_result_seconds(r), lgelu_result_unstable_total(r), nl);
    if (x) printf("  counterexample x[0] = %.17g (%d values)\n", x[0], n);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: verify_net NET [VNNLIB]\n");
        return 2;
    }
    printf("liblgelu %s\n", lgelu_version());
    lgelu_net *bad = NULL;
    lgelu_status st = lgelu_net_load("/nonexistent.onnx", &bad);
    printf("loading a missing file: %s (%s)\n", lgelu_status_str(st), lgelu_errmsg());
    if (st == LGELU_OK) return 1;

    lgelu_net *net = NULL;
    if ((st = lgelu_net_load(argv[1], &net)) != LGELU_OK) return fail("load", st);
    int ni = lgelu_net_n_in(net), no = lgelu_net_n_out(net), rc = 1;
    double *x = malloc((size_t)ni * sizeof *x), *y = malloc((size_t)no * sizeof *y);
    lgelu_result *r = NULL;
    if (!x || !y) goto done;
    for (int i = 0; i < ni; i++) x[i] = 0.5;
    if ((st = lgelu_net_eval(net, x, 1, y)) != LGELU_OK) {
        fail("eval", st);
        goto done;
    }
    printf("%s: %d inputs, %d outputs, f(0.5, ...)[0] = %.17g\n", argv[1], ni, no, y[0]);

    lgelu_verify_opts o = lgelu_verify_opts_default();
    o.timeout_s = 20;
    if ((st = lgelu_verify_robust(net, x, 0.001, -1, &o, &r)) != LGELU_OK) {
        fail("verify_robust", st);
        goto done;
    }
    print_result("robustness at 0.5, eps 0.001", r);
    lgelu_result_free(r);
    r = NULL;
    if (argc == 3) {
        if ((st = lgelu_verify_vnnlib(net, argv[2], &o, &r)) != LGELU_OK) {
            fail("verify_vnnlib", st);
            goto done;
        }
        print_result(argv[2], r);
    }
    rc = 0;
done:
    lgelu_result_free(r);
    lgelu_net_free(net);
    free(x);
    free(y);
    return rc;
}
