/* check_graph_onnx.c — graphs (core/net.h) in the file formats: the native
 * format's version 4 (round trip, every corrupt field refused), ONNX import
 * of third-party graph styles (tests/onnx_resnet_make.py: torchvision and
 * VNN-COMP ResNets, Keras NHWC, MSCN-like Slice/Split/Concat, 1-D MatMul,
 * Pad before Conv) against an independent numpy evaluation, and the
 * export → import round trip of each (the export passing onnx.checker). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/net.h"
#include "core/netfile.h"
#include "onnx/onnx.h"
#include "core/rng.h"
#include "gen_graph.h"
#include "testutil.h"
#include "onnx/load.h"

/* The fixed DAG of gen_graph.h (lg_test_dag_fixed). */
static void go_graph(lg_net *net, unsigned seed) { ck_assert_int_eq(lg_test_dag_fixed(net, seed), LG_OK); }

/* The two nets have the same structure, bit-identical parameters and maps. */
static void go_same(const lg_net *a, const lg_net *b, const char *what)
{
    ck_assert_msg(a->n_in == b->n_in && a->n_layers == b->n_layers, "%s: %d/%d inputs, %d/%d layers", what, a->n_in,
                  b->n_in, a->n_layers, b->n_layers);
    ck_assert_msg(a->n_params == b->n_params && a->n_maps == b->n_maps && a->n_terms == b->n_terms,
                  "%s: %zu/%zu params, %zu/%zu map entries, %d/%d terms", what, a->n_params, b->n_params, a->n_maps,
                  b->n_maps, a->n_terms, b->n_terms);
    ck_assert_msg(memcmp(a->params, b->params, a->n_params * sizeof *a->params) == 0, "%s: parameters differ", what);
    if (a->n_maps) ck_assert_msg(memcmp(a->maps, b->maps, a->n_maps * sizeof *a->maps) == 0, "%s: maps differ", what);
    for (int k = 0; k < a->n_layers; k++) {
        const lg_layer *A = &a->layers[k], *B = &b->layers[k];
        ck_assert_msg(A->act == B->act && A->lambda == B->lambda && A->n_terms == B->n_terms, "%s: layer %d", what, k);
        for (int t = 0; t < lg_layer_n_lin(A); t++) {
            const lg_linear *x = lg_layer_lin(A, t), *y = lg_layer_lin(B, t);
            ck_assert_msg(x->kind == y->kind && x->src == y->src && x->n_in == y->n_in &&
                              memcmp(&x->conv, &y->conv, sizeof x->conv) == 0,
                          "%s: layer %d term %d: kind %d/%d src %d/%d", what, k, t, x->kind, y->kind, x->src, y->src);
        }
    }
    ck_assert_msg((a->in_sub == NULL) == (b->in_sub == NULL) && (a->in_div == NULL) == (b->in_div == NULL),
                  "%s: normalisation", what);
}

/* Forward passes of a and b agree bit for bit on a few random inputs. */
static void go_same_forward(const lg_net *a, const lg_net *b, const char *what)
{
    lg_rng r;
    lg_rng_init(&r, 5u, 0);
    int n = a->n_in, m = lg_net_n_out(a);
    double *x = malloc((size_t)n * sizeof *x), *ya = malloc((size_t)m * sizeof *ya), *yb = malloc((size_t)m * sizeof *yb);
    double *scr = malloc(2 * (size_t)(lg_net_max_width(a) > lg_net_max_width(b) ? lg_net_max_width(a) : lg_net_max_width(b)) *
                         sizeof *scr);
    for (int t = 0; t < 3; t++) {
        for (int i = 0; i < n; i++) x[i] = lg_rng_uniform(&r) * 2.0 - 1.0;
        lg_net_forward(a, x, ya, scr);
        lg_net_forward(b, x, yb, scr);
        for (int j = 0; j < m; j++) ck_assert_msg(ya[j] == yb[j], "%s: output %d: %.17g vs %.17g", what, j, ya[j], yb[j]);
    }
    free(x);
    free(ya);
    free(yb);
    free(scr);
}

START_TEST(test_graph_onnx_netfile_roundtrip)
{
    lg_net a, b;
    go_graph(&a, 3u);
    a.in_sub = calloc(4, sizeof(double));
    for (int i = 0; i < 4; i++) a.in_sub[i] = 0.25 * i;
    const char *p = lg_test_tmpfile(".lgnet");
    ck_assert_int_eq(lg_netfile_write(&a, p), LG_OK);
    unsigned char head[12];
    FILE *f = fopen(p, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fread(head, 1, 12, f), 12);
    fclose(f);
    ck_assert_int_eq(head[8], 4); /* a graph is version 4 */
    ck_assert_msg(lg_net_load(&b, p) == LG_OK, "%s", lg_errmsg());
    go_same(&a, &b, "native v4");
    go_same_forward(&a, &b, "native v4");
    lg_net_free(&b);
    /* a chain keeps its version (1 here) */
    const int dims[] = {4, 3, 2};
    lg_net c;
    ck_assert_int_eq(lg_net_init(&c, 2, dims, LG_ACT_RELU), LG_OK);
    ck_assert_int_eq(lg_netfile_write(&c, p), LG_OK);
    f = fopen(p, "rb");
    ck_assert_uint_eq(fread(head, 1, 12, f), 12);
    fclose(f);
    ck_assert_int_eq(head[8], 1);
    lg_net_free(&c);
    /* and ONNX: export, import, the same graph and the same forward, bit for bit */
    const char *po = lg_test_tmpfile(".onnx");
    ck_assert_msg(lg_onnx_write(&a, po) == LG_OK, "%s", lg_errmsg());
    ck_assert_msg(lg_net_load(&b, po) == LG_OK, "%s", lg_errmsg());
    go_same(&a, &b, "onnx");
    go_same_forward(&a, &b, "onnx");
    lg_net_free(&b);
    remove(p);
    remove(po);
    lg_net_free(&a);
}
END_TEST

/* Random DAGs (tests/gen_graph.h: residual sums, Concat, Slice, conv terms,
 * skip terms) through the native format and through ONNX: the same graph and
 * the same forward pass, bit for bit. */
START_TEST(test_graph_onnx_random_dags)
{
    lg_rng r;
    lg_rng_init(&r, 2027u, 0);
    static const lg_act acts[] = {LG_ACT_RELU, LG_ACT_LGELU, LG_ACT_SIGMOID, LG_ACT_IDENTITY};
    int n = lg_test_quick() ? 30 : 150;
    const char *pn = lg_test_tmpfile(".lgnet"), *po = lg_test_tmpfile(".onnx");
    int made = 0, with_max = 0;
    for (int i = 0; i < n; i++) {
        lg_test_dag_opts o = {.max_nodes = 2 + i % 5, .max_width = 3 + i % 4, .conv = i % 3 == 0, .act = acts[i % 4],
                              .maxpool = i % 2};
        lg_net a, b;
        if (lg_test_dag_random(&a, &r, &o) != LG_OK) continue; /* the generator's own refusal: not under test */
        made++;
        with_max += lg_net_has_max(&a); /* max-pool nodes: netfile version 5, ONNX MaxPool */
        char what[64];
        snprintf(what, sizeof what, "dag %d (native)", i);
        ck_assert_msg(lg_netfile_write(&a, pn) == LG_OK, "%s: %s", what, lg_errmsg());
        ck_assert_msg(lg_net_load(&b, pn) == LG_OK, "%s: %s", what, lg_errmsg());
        go_same(&a, &b, what);
        go_same_forward(&a, &b, what);
        lg_net_free(&b);
        snprintf(what, sizeof what, "dag %d (onnx)", i);
        ck_assert_msg(lg_onnx_write(&a, po) == LG_OK, "%s: %s", what, lg_errmsg());
        ck_assert_msg(lg_net_load(&b, po) == LG_OK, "%s: %s", what, lg_errmsg());
        go_same(&a, &b, what);
        go_same_forward(&a, &b, what);
        lg_net_free(&b);
        lg_net_free(&a);
    }
    ck_assert_int_ge(made, n * 3 / 4);
    ck_assert_int_gt(with_max, 0);
    remove(pn);
    remove(po);
}
END_TEST

/* The version-4 image of go_graph's net, its length, and byte offsets of
 * fields: layer 1's src and its further term's n_in and src. */
static unsigned char *go_image(size_t *len)
{
    lg_net a;
    go_graph(&a, 9u);
    const char *p = lg_test_tmpfile(".lgnet");
    ck_assert_int_eq(lg_netfile_write(&a, p), LG_OK);
    lg_net_free(&a);
    FILE *f = fopen(p, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    unsigned char *buf = malloc(*len);
    ck_assert_uint_eq(fread(buf, 1, *len, f), *len);
    fclose(f);
    remove(p);
    return buf;
}

static void go_put32(unsigned char *b, size_t off, uint32_t v)
{
    for (int i = 0; i < 4; i++) b[off + (size_t)i] = (unsigned char)(v >> (8 * i));
}

/* Patch a u32, fix the CRC, parse: must be refused with `says` in the message. */
static void go_refused(const unsigned char *img, size_t len, size_t off, uint32_t v, const char *says)
{
    unsigned char *b = malloc(len);
    memcpy(b, img, len);
    go_put32(b, off, v);
    go_put32(b, len - 4, (uint32_t)crc32_z(0L, b, len - 4));
    lg_net n;
    lg_status st = lg_netfile_parse(&n, b, len, "patched");
    ck_assert_msg(st == LG_ERR_FORMAT, "offset %zu = %u: accepted", off, v);
    ck_assert_msg(strstr(lg_errmsg(), says) != NULL, "offset %zu = %u: message '%s' lacks '%s'", off, v, lg_errmsg(),
                  says);
    free(b);
}

START_TEST(test_graph_onnx_netfile_corrupt)
{
    size_t len;
    unsigned char *img = go_image(&len);
    lg_net n;
    ck_assert_int_eq(lg_netfile_parse(&n, img, len, "ok"), LG_OK);
    lg_net_free(&n);
    /* header 32 bytes; layer 0: 32 + src + count = 40; layer 1 starts at 72 */
    const size_t l1 = 32 + 40, l1_src = l1 + 32, l1_t1 = l1 + 40;
    go_refused(img, len, l1_src, 1, "reads node");          /* layer 1 reads itself */
    go_refused(img, len, l1_src, (uint32_t)-2, "reads node"); /* below the input */
    go_refused(img, len, l1_t1 + 8, 3, "reads node");       /* its term reads a later layer */
    go_refused(img, len, l1_t1 + 4, 5, "takes 5 inputs");   /* n_in is not the source's width */
    go_refused(img, len, l1_t1, 7, "kind");                 /* unknown kind */
    go_refused(img, len, l1_src + 4, 100000, "further terms"); /* a huge term count */
    go_refused(img, len, len - 4 - 4, 99, "index map entry"); /* last map entry out of range */
    go_refused(img, len, len - 4 - 4, (uint32_t)-5, "index map entry");
    go_refused(img, len, 8, 3, "");                         /* a version-3 reader's layout: sizes differ */
    /* every truncation and every flipped byte is refused */
    for (size_t cut = 0; cut < len; cut++) {
        ck_assert_msg(lg_netfile_parse(&n, img, cut, "cut") != LG_OK, "cut at %zu accepted", cut);
    }
    for (size_t i = 0; i < len; i++) {
        img[i] ^= 0x5a;
        ck_assert_msg(lg_netfile_parse(&n, img, len, "flip") != LG_OK, "flip at %zu accepted", i);
        img[i] ^= 0x5a;
    }
    free(img);
}
END_TEST

/* ---- third-party styles ---- */

static char go_dir[512];
static int go_rc = -1;

static void go_make(void)
{
    if (go_rc >= 0) return;
    snprintf(go_dir, sizeof go_dir, "%s", lg_test_tmpfile("_graph_models"));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s/tests/onnx_resnet_make.py %s >/dev/null 2>&1", LG_PYTHON3, LG_SOURCE_DIR, go_dir);
    go_rc = lg_test_sh(cmd);
}

/* The imported net against the numpy rows of NAME.txt (relative 1e-12);
 * returns the number of rows. */
static int go_numpy(const lg_net *net, const char *name)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s.txt", go_dir, name);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s", path);
    int no = lg_net_n_out(net), rows = 0;
    double *x = malloc((size_t)net->n_in * sizeof *x), *y = malloc((size_t)no * sizeof *y);
    double *want = malloc((size_t)no * sizeof *want);
    double *scr = malloc(2 * (size_t)lg_net_max_width(net) * sizeof *scr);
    double worst = 0;
    for (;;) {
        int got = 0;
        for (int i = 0; i < net->n_in; i++) got += fscanf(f, "%lf", &x[i]);
        if (got != net->n_in) break;
        for (int j = 0; j < no; j++) ck_assert_int_eq(fscanf(f, "%lf", &want[j]), 1);
        lg_net_forward(net, x, y, scr);
        for (int j = 0; j < no; j++) {
            double e = fabs(y[j] - want[j]) / (fabs(want[j]) > 1 ? fabs(want[j]) : 1);
            if (e > worst) worst = e;
            ck_assert_msg(e <= 1e-12, "%s row %d output %d: %.17g vs numpy %.17g", name, rows, j, y[j], want[j]);
        }
        rows++;
    }
    fclose(f);
    free(x);
    free(y);
    free(want);
    free(scr);
    return rows;
}

START_TEST(test_graph_onnx_thirdparty_match_numpy)
{
    go_make();
    ck_assert_msg(go_rc == 0, "tests/onnx_resnet_make.py failed (needs python3-onnx, python3-numpy)");
    static const char *models[] = {"resnet_torch", "resnet_torch_flat", "resnet_vnn", "resnet_keras", "mscn",
                                   "mm_tiny",      "mm_small",          "pad_conv",   "gemm_conv",    "gelu_res",
                                   "sub_nodes",    "gelu_fork",         "norm_fork",
                                   "twice",        "sig_fork",          "const_fork", "chunk_neg",
                                   "clips"};
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s.onnx", go_dir, models[m]);
        lg_net net, back;
        ck_assert_msg(lg_net_load(&net, path) == LG_OK, "%s: %s", models[m], lg_errmsg());
        ck_assert_msg(lg_net_validate(&net) == LG_OK, "%s: %s", models[m], lg_errmsg());
        ck_assert_msg(go_numpy(&net, models[m]) >= 2, "%s: no rows", models[m]);
        /* export → import: the same graph, bit for bit */
        const char *po = lg_test_tmpfile(".onnx");
        ck_assert_msg(lg_onnx_write(&net, po) == LG_OK, "%s: export: %s", models[m], lg_errmsg());
        char cmd[1600];
        snprintf(cmd, sizeof cmd, "%s %s/tests/onnx_eval.py check %s >/dev/null 2>&1", LG_PYTHON3, LG_SOURCE_DIR, po);
        ck_assert_msg(lg_test_sh(cmd) == 0, "%s: the export fails onnx.checker (full_check)", models[m]);
        ck_assert_msg(lg_net_load(&back, po) == LG_OK, "%s: re-import: %s", models[m], lg_errmsg());
        go_same(&net, &back, models[m]);
        go_same_forward(&net, &back, models[m]);
        lg_net_free(&back);
        /* native → native */
        const char *pn = lg_test_tmpfile(".lgnet");
        ck_assert_msg(lg_netfile_write(&net, pn) == LG_OK, "%s: %s", models[m], lg_errmsg());
        ck_assert_msg(lg_net_load(&back, pn) == LG_OK, "%s: %s", models[m], lg_errmsg());
        go_same(&net, &back, models[m]);
        go_same_forward(&net, &back, models[m]);
        lg_net_free(&back);
        remove(po);
        remove(pn);
        lg_net_free(&net);
    }
}
END_TEST

/* Count the terms of kind `kind` over the whole net. */
static int go_count(const lg_net *net, lg_layer_kind kind)
{
    int n = 0;
    for (int k = 0; k < net->n_layers; k++)
        for (int t = 0; t < lg_layer_n_lin(&net->layers[k]); t++) n += lg_layer_lin(&net->layers[k], t)->kind == kind;
    return n;
}

START_TEST(test_graph_onnx_structure)
{
    go_make();
    ck_assert_msg(go_rc == 0, "tests/onnx_resnet_make.py failed");
    char path[700];
    lg_net net;
    /* torchvision blocks: each residual sum is one layer of two terms (conv + identity map, or
     * conv + the 1x1 strided shortcut conv); BN folded into the convs; every conv stays a conv */
    snprintf(path, sizeof path, "%s/resnet_torch.onnx", go_dir);
    ck_assert_int_eq(lg_net_load(&net, path), LG_OK);
    ck_assert_int_eq(net.n_layers, 7);
    ck_assert_int_eq(net.layers[2].n_terms, 1);
    ck_assert_int_eq(net.layers[2].terms[0].kind, LG_LAYER_INDEX);
    ck_assert_int_eq(net.layers[2].terms[0].src, 0);
    ck_assert_int_eq(net.layers[4].n_terms, 1);
    ck_assert_int_eq(net.layers[4].lin.kind, LG_LAYER_CONV2D);
    ck_assert_int_eq(net.layers[4].terms[0].kind, LG_LAYER_CONV2D);
    ck_assert_int_eq(net.layers[4].terms[0].conv.sh, 2);
    ck_assert_int_eq(go_count(&net, LG_LAYER_CONV2D), 6);
    lg_net_free(&net);
    /* VNN-COMP style: the shortcut first in node order, the same two-term sum layers */
    snprintf(path, sizeof path, "%s/resnet_vnn.onnx", go_dir);
    ck_assert_int_eq(lg_net_load(&net, path), LG_OK);
    ck_assert_int_eq(net.n_layers, 7);
    ck_assert_int_eq(go_count(&net, LG_LAYER_CONV2D), 6);
    ck_assert_int_eq(net.layers[4].n_terms, 1);
    lg_net_free(&net);
    /* MSCN: the Gemm after the Concat takes its three parts as dense terms of one layer */
    snprintf(path, sizeof path, "%s/mscn.onnx", go_dir);
    ck_assert_int_eq(lg_net_load(&net, path), LG_OK);
    ck_assert_int_eq(net.n_layers, 6);
    ck_assert_int_eq(net.layers[4].n_terms, 2);
    ck_assert_int_eq(go_count(&net, LG_LAYER_INDEX), 1);
    ck_assert(net.layers[4].lin.src != net.layers[4].terms[0].src && net.layers[4].terms[0].src != net.layers[4].terms[1].src);
    lg_net_free(&net);
    /* a Concat followed by a Relu (twice.onnx) is one layer of index-map terms */
    snprintf(path, sizeof path, "%s/twice.onnx", go_dir);
    ck_assert_int_eq(lg_net_load(&net, path), LG_OK);
    ck_assert_int_ge(go_count(&net, LG_LAYER_INDEX), 2);
    lg_net_free(&net);
    /* Pad before Conv on 3x32x32: the conv's own padding, no dense matrix */
    snprintf(path, sizeof path, "%s/pad_conv.onnx", go_dir);
    ck_assert_int_eq(lg_net_load(&net, path), LG_OK);
    ck_assert_int_eq(net.n_layers, 2);
    ck_assert_int_eq(net.layers[0].lin.kind, LG_LAYER_CONV2D);
    ck_assert_int_eq(net.layers[0].lin.conv.ph, 1);
    ck_assert_int_eq(net.layers[0].lin.conv.h_in, 32);
    lg_net_free(&net);
    /* Gemm → Reshape → Conv: the conv stays a conv */
    snprintf(path, sizeof path, "%s/gemm_conv.onnx", go_dir);
    ck_assert_int_eq(lg_net_load(&net, path), LG_OK);
    ck_assert_int_eq(go_count(&net, LG_LAYER_CONV2D), 1);
    ck_assert(lg_net_dense_bytes(&net) < (size_t)1 << 22 || go_count(&net, LG_LAYER_CONV2D) == 1);
    lg_net_free(&net);
    /* `lgelu info` lists the conv and each term */
    const char *out = lg_test_tmpfile(".txt");
    char args[800];
    snprintf(args, sizeof args, "info %s/pad_conv.onnx", go_dir);
    ck_assert_int_eq(lg_test_cli(args, out), 0);
    ck_assert_msg(strstr(lg_test_slurp(out), "conv 3x32x32 -> 8x32x32") != NULL, "%s", lg_test_slurp(out));
    snprintf(args, sizeof args, "info %s/resnet_torch.onnx", go_dir);
    ck_assert_int_eq(lg_test_cli(args, out), 0);
    ck_assert_msg(strstr(lg_test_slurp(out), "term 1: conv from layer 2, 256 -> 128") != NULL, "%s",
                  lg_test_slurp(out));
    ck_assert_msg(strstr(lg_test_slurp(out), "term 1: index map from layer 0, 256 -> 256") != NULL, "%s",
                  lg_test_slurp(out));
}
END_TEST

/* Graphs lgelu cannot hold are refused naming the file, the node and the op. */
START_TEST(test_graph_onnx_refusals)
{
    go_make();
    ck_assert_msg(go_rc == 0, "tests/onnx_resnet_make.py failed");
    static const struct {
        const char *name, *says;
    } bad[] = {{"bad_div2", "(Div): uses 2 network values"},
               {"bad_add_bcast", "(Add): the two network values have different shapes (3 and 1 values)"},
               {"bad_const_div", "(Div): Div of the constants 1 and 3 is not exact in double"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s.onnx", go_dir, bad[i].name);
        lg_net net;
        lg_status st = lg_net_load(&net, path);
        ck_assert_msg(st == LG_ERR_UNSUPPORTED, "%s: status %d", bad[i].name, (int)st);
        ck_assert_msg(strstr(lg_errmsg(), bad[i].says) && strstr(lg_errmsg(), path), "%s: message '%s'", bad[i].name,
                      lg_errmsg());
        ck_assert(net.layers == NULL);
    }
}
END_TEST

/* Mutated graph models (flipped bytes, truncations) never crash the importer,
 * and whatever it accepts is a valid net. */
START_TEST(test_graph_onnx_fuzz)
{
    go_make();
    ck_assert_msg(go_rc == 0, "tests/onnx_resnet_make.py failed");
    static const char *models[] = {"resnet_torch", "resnet_keras", "mscn", "twice", "mm_small"};
    lg_rng r;
    lg_rng_init(&r, 31u, 0);
    int accepted = 0, tries = 0;
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s.onnx", go_dir, models[m]);
        FILE *f = fopen(path, "rb");
        ck_assert_ptr_nonnull(f);
        fseek(f, 0, SEEK_END);
        size_t len = (size_t)ftell(f);
        rewind(f);
        unsigned char *img = malloc(len), *buf = malloc(len);
        ck_assert_uint_eq(fread(img, 1, len, f), len);
        fclose(f);
        for (int t = 0; t < (lg_test_quick() ? 100 : 800); t++) {
            memcpy(buf, img, len);
            size_t n = len;
            int flips = 1 + (int)(lg_rng_uniform(&r) * 4);
            for (int k = 0; k < flips; k++) buf[(size_t)(lg_rng_uniform(&r) * (double)len) % len] ^= (unsigned char)(1u << (t % 8));
            if (t % 5 == 0) n = (size_t)(lg_rng_uniform(&r) * (double)len);
            lg_net net;
            tries++;
            if (lg_onnx_parse(&net, buf, n, "fuzz") == LG_OK) {
                ck_assert_msg(lg_net_validate(&net) == LG_OK, "%s try %d: accepted an invalid net: %s", models[m], t,
                              lg_errmsg());
                accepted++;
                lg_net_free(&net);
            }
        }
        free(img);
        free(buf);
    }
    ck_assert_int_gt(tries, 0);
    (void)accepted;
}
END_TEST

Suite *suite_graph_onnx(void)
{
    Suite *s = suite_create("graph_onnx");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_graph_onnx_netfile_roundtrip);
    tcase_add_test(tc, test_graph_onnx_random_dags);
    tcase_add_test(tc, test_graph_onnx_thirdparty_match_numpy);
    tcase_add_test(tc, test_graph_onnx_structure);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 300);
    tcase_add_test(tl, test_graph_onnx_netfile_corrupt);
    tcase_add_test(tl, test_graph_onnx_refusals);
    tcase_add_test(tl, test_graph_onnx_fuzz);
    suite_add_tcase(s, tl);
    return s;
}
