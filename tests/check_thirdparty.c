/* check_thirdparty.c — smooth networks in the ONNX styles other tools publish
 * (tests/fixtures/sigmoid3p, written by its gen.py from PyTorch-trained
 * Fashion-MNIST MLPs and a conv net): ERAN-like Sub/Div normalisation with
 * MatMul+Add or Gemm layers, torch.onnx.export at opset 11 and 13,
 * x.view(x.size(0), -1) with a dynamic batch axis (Shape, Gather, Unsqueeze,
 * Concat, Reshape), weights as Constant nodes, tf2onnx-style GELU and
 * Keras-style SiLU, and a Tanh MLP (read as 2·σ(2x) − 1, exact in the
 * reals). Each imports with the activations it has, matches torch's
 * float64 forward pass, and verifies directly (DESIGN.md §3 "Smooth
 * activations"): `robust` at a tiny radius (cross-checked by sampling the
 * box), `violated` at the radius where torch's PGD found a counterexample,
 * its witness re-checked by the MPFR gate. Graphs lgelu cannot represent
 * (a Softmax output, a Gather of the network value, a Reshape that does not
 * fit) are refused with a message naming the file and node. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/act.h"
#include "core/act_relax.h"
#include "core/net.h"
#include "core/netfile.h"
#include "core/npy.h"
#include "core/rng.h"
#include "core/status.h"
#include "testutil.h"
#include "verify/prop.h"
#include "verify/recheck.h"
#include "verify/verify.h"
#include "verify/vnnlib.h"
#include "onnx/load.h"

#define TP_DIR LG_FIXTURES "/sigmoid3p"

typedef struct tp_case {
    char name[64];
    int image, label;
    double eps_robust, eps_attack;
} tp_case;

/* cases.txt: name image label robust_eps attack_eps, '#' comments. */
static int tp_cases(tp_case *c, int max)
{
    FILE *f = fopen(TP_DIR "/cases.txt", "r");
    ck_assert_msg(f, "%s/cases.txt missing", TP_DIR);
    char line[256];
    int n = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        ck_assert_msg(sscanf(line, "%63s %d %d %lf %lf", c[n].name, &c[n].image, &c[n].label, &c[n].eps_robust,
                             &c[n].eps_attack) == 5,
                      "cases.txt: bad line '%s'", line);
        n++;
    }
    fclose(f);
    return n;
}

static lg_act tp_expected_act(const char *name)
{
    if (strncmp(name, "gelu", 4) == 0) return LG_ACT_LGELU; /* the file's 0.70710677 is fl32(1/√2): λ ≈ 1 */
    if (strncmp(name, "silu", 4) == 0) return LG_ACT_SWISH;
    /* tanh: sigmoid layers, each followed by the identity layer of 2·a − 1 (its fold into the next layer's bias
     * is not exact in double) */
    return LG_ACT_SIGMOID;
}

/* Every third-party style imports with its activation on every hidden layer
 * and matches torch's float64 outputs on the 8 stored images. */
START_TEST(test_thirdparty_import_matches_torch)
{
    tp_case c[16];
    int n = tp_cases(c, 16);
    ck_assert_int_ge(n, 10);
    lg_npy X;
    ck_assert_msg(lg_npy_load(&X, TP_DIR "/X.npy") == LG_OK, "%s", lg_errmsg());
    ck_assert(X.n == 8 && X.cols == 784);
    for (int k = 0; k < n; k++) {
        char path[4096];
        lg_net net;
        snprintf(path, sizeof path, "%s/%s.onnx", TP_DIR, c[k].name);
        ck_assert_msg(lg_net_load(&net, path) == LG_OK, "%s: %s", path, lg_errmsg());
        ck_assert_int_eq(net.n_in, 784);
        ck_assert_int_eq(lg_net_n_out(&net), 10);
        ck_assert_msg(net.in_sub && net.in_div, "%s: the Sub/Div normalisation did not become in_sub/in_div", c[k].name);
        int smooth = 0;
        for (int l = 0; l < net.n_layers - 1; l++) {
            lg_act a = net.layers[l].act;
            int tanh_id = strncmp(c[k].name, "tanh", 4) == 0 && a == LG_ACT_IDENTITY && l % 2 == 1;
            ck_assert_msg(a == tp_expected_act(c[k].name) || tanh_id ||
                              (a == LG_ACT_IDENTITY && net.layers[l].lin.conv.c_out > 0),
                          "%s: layer %d is %s", c[k].name, l, lg_act_name(a));
            smooth += a != LG_ACT_IDENTITY;
        }
        ck_assert_msg(smooth >= 2, "%s: %d smooth layers", c[k].name, smooth);
        lg_npy Y;
        snprintf(path, sizeof path, "%s/%s_y.npy", TP_DIR, c[k].name);
        ck_assert_msg(lg_npy_load(&Y, path) == LG_OK, "%s: %s", path, lg_errmsg());
        ck_assert(Y.n == 8 && Y.cols == 10);
        double *scr = malloc(2 * (size_t)lg_net_max_width(&net) * sizeof *scr), y[10];
        ck_assert(scr);
        for (size_t i = 0; i < 8; i++) {
            lg_net_forward(&net, X.data + 784 * i, y, scr);
            for (int j = 0; j < 10; j++) {
                double t = Y.data[10 * i + (size_t)j];
                ck_assert_msg(fabs(y[j] - t) <= 1e-5 * (1 + fabs(t)), "%s: image %zu output %d: lgelu %.9g, torch %.9g",
                              c[k].name, i, j, y[j], t);
            }
        }
        free(scr);
        lg_npy_free(&Y);
        lg_net_free(&net);
    }
    lg_npy_free(&X);
}
END_TEST

/* net's outputs on NAME_x.npy are NAME_y.npy's (numpy's float64) to 1e-12. */
static void tp_matches_numpy(const lg_net *net, const char *name)
{
    char xp[1024], yp[1024];
    snprintf(xp, sizeof xp, "%s/%s_x.npy", TP_DIR, name);
    snprintf(yp, sizeof yp, "%s/%s_y.npy", TP_DIR, name);
    lg_npy X, Y;
    ck_assert(lg_npy_load(&X, xp) == LG_OK && lg_npy_load(&Y, yp) == LG_OK);
    int n_in = net->n_in, n_out = lg_net_n_out(net);
    ck_assert(X.cols == (size_t)n_in && Y.cols == (size_t)n_out && X.n == Y.n && X.n > 0);
    double *y = malloc((size_t)n_out * sizeof *y), *scr = malloc(2 * (size_t)lg_net_max_width(net) * sizeof *scr);
    ck_assert(y && scr);
    for (size_t i = 0; i < X.n; i++) {
        lg_net_forward(net, X.data + (size_t)n_in * i, y, scr);
        for (int j = 0; j < n_out; j++)
            ck_assert_msg(fabs(y[j] - Y.data[(size_t)n_out * i + (size_t)j]) <= 1e-12, "%s input %zu output %d: %.17g vs %.17g",
                          name, i, j, y[j], Y.data[(size_t)n_out * i + (size_t)j]);
    }
    free(y);
    free(scr);
    lg_npy_free(&X);
    lg_npy_free(&Y);
}

/* A channels-last input transposed to NCHW and then normalised per channel:
 * the Sub/Div move through the permutation to in_sub/in_div exactly, so the
 * net is one sigmoid layer and the output layer, matching numpy. */
START_TEST(test_thirdparty_nhwc_normalisation)
{
    lg_net net;
    ck_assert_msg(lg_net_load(&net, TP_DIR "/nhwc_perm.onnx") == LG_OK, "%s", lg_errmsg());
    ck_assert_int_eq(net.n_in, 48);
    ck_assert_int_eq(net.n_layers, 2);
    ck_assert(net.in_sub && net.in_div);
    /* input element (h, w, c) = 12h + 3w + c takes channel c's constants */
    for (int i = 0; i < 48; i++)
        ck_assert_msg(net.in_div[i] == (double)(float)(i % 3 == 0 ? 0.229 : i % 3 == 1 ? 0.224 : 0.225),
                      "in_div[%d] = %.17g", i, net.in_div[i]);
    tp_matches_numpy(&net, "nhwc_perm");
    lg_net_free(&net);
}
END_TEST

/* Squeeze and Unsqueeze of the network value are reshapes: [1, 12, 1] in,
 * [1, 3] out through a [1, 1, 6] hidden value, matching numpy. */
START_TEST(test_thirdparty_squeeze_value)
{
    lg_net net;
    ck_assert_msg(lg_net_load(&net, TP_DIR "/squeeze.onnx") == LG_OK, "%s", lg_errmsg());
    ck_assert_int_eq(net.n_in, 12);
    ck_assert_int_eq(lg_net_n_out(&net), 3);
    ck_assert_int_eq(net.n_layers, 2);
    ck_assert(net.layers[0].act == LG_ACT_SIGMOID);
    tp_matches_numpy(&net, "squeeze");
    lg_net_free(&net);
}
END_TEST

/* Smallest margin (label output minus the largest other) over the box's
 * centre, corners of random sign patterns and uniform samples. */
static double tp_sample_margin(const lg_net *net, const lg_prop *p, int label, lg_rng *r)
{
    int n = net->n_in;
    double *x = malloc((size_t)n * sizeof *x), *scr = malloc(2 * (size_t)lg_net_max_width(net) * sizeof *scr), y[10];
    ck_assert(x && scr);
    double worst = INFINITY;
    for (int s = 0; s < 300; s++) {
        for (int i = 0; i < n; i++) {
            double lo = p->cases[0].lo[i], hi = p->cases[0].hi[i], u = lg_rng_uniform(r);
            x[i] = s == 0 ? 0.5 * (lo + hi) : s < 150 ? (u < 0.5 ? lo : hi) : lo + (hi - lo) * u;
        }
        lg_net_forward(net, x, y, scr);
        for (int j = 0; j < 10; j++)
            if (j != label && y[label] - y[j] < worst) worst = y[label] - y[j];
    }
    free(x);
    free(scr);
    return worst;
}

/* Each net: `robust` at the tiny radius (never where sampling finds a
 * counterexample), `violated` at the radius where torch's PGD found one, the
 * witness inside the box, misclassified and accepted by the MPFR gate. */
START_TEST(test_thirdparty_verify_known_answers)
{
    tp_case c[16];
    int n = tp_cases(c, 16);
    lg_npy X;
    ck_assert_msg(lg_npy_load(&X, TP_DIR "/X.npy") == LG_OK, "%s", lg_errmsg());
    lg_rng r;
    lg_rng_init(&r, 21, 0);
    for (int k = 0; k < n; k++) {
        char path[4096];
        lg_net net;
        snprintf(path, sizeof path, "%s/%s.onnx", TP_DIR, c[k].name);
        ck_assert_msg(lg_net_load(&net, path) == LG_OK, "%s: %s", path, lg_errmsg());
        for (int q = 0; q < 2; q++) {
            double eps = q ? c[k].eps_attack : c[k].eps_robust;
            lg_prop p;
            ck_assert(lg_prop_robustness(&p, X.data + 784 * (size_t)c[k].image, 784, eps, 0.0, 1.0, c[k].label, 10,
                                         0.0) == LG_OK);
            lg_verify_opts o = lg_verify_opts_default();
            o.timeout_s = 20;
            o.bab.threads = 1;
            lg_verify_report rep;
            ck_assert_msg(lg_verify_run(&net, &p, &o, &rep) == LG_OK, "%s: %s", c[k].name, lg_errmsg());
            double w = tp_sample_margin(&net, &p, c[k].label, &r);
            ck_assert_msg(!(rep.verdict == LG_VERDICT_ROBUST && w <= 0), "%s eps %g: robust but sampling finds margin %g",
                          c[k].name, eps, w);
            if (q == 0) {
                ck_assert_msg(rep.verdict == LG_VERDICT_ROBUST, "%s eps %g: %s (%s)", c[k].name, eps,
                              lg_verdict_name(rep.verdict), rep.how.reason);
            } else {
                ck_assert_msg(rep.verdict == LG_VERDICT_VIOLATED, "%s eps %g: %s (%s), torch PGD found a counterexample",
                              c[k].name, eps, lg_verdict_name(rep.verdict), rep.how.reason);
                ck_assert(rep.x && rep.y);
                ck_assert_msg(lg_prop_case_contains(&p, 0, rep.x), "%s: witness outside the box", c[k].name);
                double y[10], *scr = malloc(2 * (size_t)lg_net_max_width(&net) * sizeof *scr);
                ck_assert(scr);
                lg_net_forward(&net, rep.x, y, scr);
                free(scr);
                int other = 0;
                for (int j = 0; j < 10; j++) other |= j != c[k].label && y[j] >= y[c[k].label];
                ck_assert_msg(other, "%s: the witness keeps the label", c[k].name);
                double xw[784], yw[10];
                memcpy(xw, rep.x, sizeof xw);
                ck_assert_msg(lg_witness_accept(&net, &p, 0, xw, yw) == 1, "%s: witness fails the gate", c[k].name);
            }
            lg_verify_report_free(&rep);
            lg_prop_free(&p);
        }
        lg_net_free(&net);
    }
    lg_npy_free(&X);
}
END_TEST

/* The two VNN-COMP 2021 eran-style property files (8-decimal bounds, the
 * (or (and (>= Y_j Y_t)) ...) disjunction) of the ERAN-like MatMul net. */
START_TEST(test_thirdparty_vnnlib_eran_style)
{
    lg_net net;
    ck_assert_msg(lg_net_load(&net, TP_DIR "/sig_eran_mm.onnx") == LG_OK, "%s", lg_errmsg());
    const char *names[] = {"small", "large"};
    const lg_verdict want[] = {LG_VERDICT_ROBUST, LG_VERDICT_VIOLATED};
    for (int q = 0; q < 2; q++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/sig_eran_mm_%s.vnnlib", TP_DIR, names[q]);
        lg_prop p;
        ck_assert_msg(lg_vnnlib_read(&p, path, 784, 10) == LG_OK, "%s: %s", path, lg_errmsg());
        ck_assert_int_eq(p.n_cases, 1);
        lg_verify_opts o = lg_verify_opts_default();
        o.timeout_s = 20;
        o.bab.threads = 1;
        lg_verify_report rep;
        ck_assert_msg(lg_verify_run(&net, &p, &o, &rep) == LG_OK, "%s: %s", path, lg_errmsg());
        ck_assert_msg(rep.verdict == want[q], "%s: %s (%s)", path, lg_verdict_name(rep.verdict), rep.how.reason);
        if (rep.verdict == LG_VERDICT_VIOLATED) {
            double xw[784], yw[10];
            memcpy(xw, rep.x, sizeof xw);
            ck_assert_msg(lg_witness_accept(&net, &p, 0, xw, yw) == 1, "%s: witness fails the gate", path);
        }
        lg_verify_report_free(&rep);
        lg_prop_free(&p);
    }
    lg_net_free(&net);
}
END_TEST

/* The VNN-COMP scripts on a smooth net: prepare_instance.sh accepts it (it
 * has no LP encoding; the direct route checks it), run_instance.sh writes
 * unsat / sat with the counterexample; a Softmax net is refused by prepare
 * and run writes unknown. */
START_TEST(test_thirdparty_vnncomp_scripts)
{
    static const struct {
        const char *onnx, *vnnlib, *first;
        int prepare_ok;
    } cases[] = {{"sig_eran_mm.onnx", "sig_eran_mm_small.vnnlib", "unsat", 1},
                 {"sig_eran_mm.onnx", "sig_eran_mm_large.vnnlib", "sat", 1},
                 {"bad_softmax_out.onnx", "sig_eran_mm_small.vnnlib", "unknown", 0}};
    char cmd[8192];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *res = lg_test_tmpfile(".res");
        snprintf(cmd, sizeof cmd,
                 "LGELU='%s/lgelu' bash '%s/vnncomp_scripts/prepare_instance.sh' v1 eran %s/%s %s/%s >/dev/null 2>&1",
                 LG_BINARY_DIR, LG_SOURCE_DIR, TP_DIR, cases[i].onnx, TP_DIR, cases[i].vnnlib);
        ck_assert_msg((lg_test_sh(cmd) == 0) == cases[i].prepare_ok, "prepare %s %s", cases[i].onnx, cases[i].vnnlib);
        snprintf(cmd, sizeof cmd,
                 "LGELU='%s/lgelu' bash '%s/vnncomp_scripts/run_instance.sh' v1 eran %s/%s %s/%s %s 30 >/dev/null 2>&1",
                 LG_BINARY_DIR, LG_SOURCE_DIR, TP_DIR, cases[i].onnx, TP_DIR, cases[i].vnnlib, res);
        ck_assert_int_eq(lg_test_sh(cmd), 0);
        const char *r = lg_test_slurp(res);
        size_t n = strlen(cases[i].first);
        ck_assert_msg(strncmp(r, cases[i].first, n) == 0 && r[n] == '\n', "%s %s: %s", cases[i].onnx, cases[i].vnnlib,
                      r);
        if (strcmp(cases[i].first, "sat") == 0) ck_assert_msg(strstr(r, "(X_783 ") && strstr(r, "(Y_9 "), "%s", r);
    }
}
END_TEST

/* σ on [l, u] with l < 0 < u: the lines are at least as tight at the middle
 * as the tangents through the far ends (CROWN's S-shape lines: below, the
 * tangent at d ≤ 0 through (u, σ(u)); above, at d ≥ 0 through (l, σ(l))),
 * located here by long-double bisection (up to the certification's
 * lowering), and still contain σ on dense samples. */
static long double tp_sig(long double x) { return 1.0L / (1.0L + expl(-x)); }

static int tp_through(long double a, long double b, long double e, long double *d)
{
    long double fe = tp_sig(e);
#define TP_G(t) (tp_sig(t) + tp_sig(t) * (1 - tp_sig(t)) * (e - (t)) - fe)
    long double ga = TP_G(a);
    if (!(ga * TP_G(b) < 0)) return 0;
    for (int it = 0; it < 100; it++) {
        long double m = a + (b - a) / 2, gm = TP_G(m);
        if ((gm < 0) == (ga < 0)) a = m, ga = gm;
        else b = m;
    }
#undef TP_G
    *d = a;
    return 1;
}

START_TEST(test_thirdparty_sigmoid_s_lines)
{
    const double L[] = {-1, -2, -4, -8, -0.5, -6, -3}, U[] = {1, 2, 4, 8, 3, 2, 0.25};
    int tighter = 0;
    for (int k = 0; k < 7; k++) {
        lg_act_lines r;
        lg_act_relax(LG_ACT_SIGMOID, 1.0, L[k], U[k], NAN, NAN, &r);
        /* certification lowers a line by up to sup|σ''|·h²/8 between its (u − l)/48-spaced samples */
        long double mid = (L[k] + U[k]) / 2.0L, d, tol = 1e-5L * (U[k] - L[k]) * (U[k] - L[k]);
        if (tp_through(L[k], 0, U[k], &d)) {
            long double s = tp_sig(d) * (1 - tp_sig(d)), ref = tp_sig(d) + s * (mid - d);
            ck_assert_msg(r.lo_s * mid + r.lo_c >= ref - tol, "[%g, %g]: lower line %.12Lg at the middle, S-line %.12Lg",
                          L[k], U[k], r.lo_s * mid + r.lo_c, ref);
            tighter++;
        }
        if (tp_through(U[k], 0, L[k], &d)) {
            long double s = tp_sig(d) * (1 - tp_sig(d)), ref = tp_sig(d) + s * (mid - d);
            ck_assert_msg(r.up_s * mid + r.up_c <= ref + tol, "[%g, %g]: upper line %.12Lg at the middle, S-line %.12Lg",
                          L[k], U[k], r.up_s * mid + r.up_c, ref);
            tighter++;
        }
        for (int i = 0; i <= 4000; i++) {
            long double x = L[k] + (U[k] - L[k]) * (long double)i / 4000, f = tp_sig(x);
            ck_assert_msg(r.lo_s * x + r.lo_c <= f && f <= r.up_s * x + r.up_c, "[%g, %g]: lines miss σ(%Lg)", L[k], U[k],
                          x);
        }
    }
    ck_assert_int_ge(tighter, 8);
}
END_TEST

/* Refusals name the file and the node and say why; nothing is loaded. */
START_TEST(test_thirdparty_refusals)
{
    struct {
        const char *file, *expect[3];
    } bad[] = {
        {"bad_reshape_mismatch.onnx", {"bad_reshape_mismatch.onnx", "reshape_bad", "does not fit"}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", TP_DIR, bad[i].file);
        lg_net net;
        lg_status st = lg_net_load(&net, path);
        ck_assert_msg(st == LG_ERR_UNSUPPORTED || st == LG_ERR_FORMAT, "%s: status %d", path, (int)st);
        for (int e = 0; e < 3; e++)
            ck_assert_msg(strstr(lg_errmsg(), bad[i].expect[e]), "%s: message '%s' lacks '%s'", path, lg_errmsg(),
                          bad[i].expect[e]);
        ck_assert(net.n_layers == 0 && net.layers == NULL);
    }
    /* a final Softmax is a softmax node (once refused) */
    {
        char path[4096];
        snprintf(path, sizeof path, "%s/bad_softmax_out.onnx", TP_DIR);
        lg_net net;
        ck_assert_msg(lg_net_load(&net, path) == LG_OK, "%s: %s", path, lg_errmsg());
        ck_assert_int_eq(net.layers[net.n_layers - 1].lin.kind, LG_LAYER_SOFTMAX);
        lg_net_free(&net);
    }
    /* a Gather of the network value with constant indices is an index map (once refused) */
    char path[4096];
    snprintf(path, sizeof path, "%s/bad_gather_value.onnx", TP_DIR);
    lg_net net;
    ck_assert_msg(lg_net_load(&net, path) == LG_OK, "%s", lg_errmsg());
    ck_assert(net.n_layers >= 1);
    lg_net_free(&net);
}
END_TEST

Suite *suite_thirdparty(void)
{
    Suite *s = suite_create("thirdparty");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_thirdparty_import_matches_torch);
    tcase_add_test(tc, test_thirdparty_nhwc_normalisation);
    tcase_add_test(tc, test_thirdparty_squeeze_value);
    tcase_add_test(tc, test_thirdparty_verify_known_answers);
    tcase_add_test(tc, test_thirdparty_vnnlib_eran_style);
    tcase_add_test(tc, test_thirdparty_vnncomp_scripts);
    tcase_add_test(tc, test_thirdparty_sigmoid_s_lines);
    suite_add_tcase(s, tc);
    TCase *lim = tcase_create("limits");
    lg_tcase_timeout(lim, 120);
    tcase_add_test(lim, test_thirdparty_refusals);
    suite_add_tcase(s, lim);
    return s;
}
