/* check_vit_net.c — a ViT as an lg_net (train/vit_net.h): on random inputs
 * the net's double forward equals the float model's logits within float
 * tolerance, for class-token and mean pooling, 1–3 blocks, 1–4 heads, and
 * λ-GELU, GELU, ReLU and Swish MLPs; the net validates. A net of the
 * earlier form (the head one dense term over every token's values:
 * tests/fixtures/vit/tiny_vit.lgnet) reads back as a ViT whose net, of the
 * current form, computes the same logits, and reads back again. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "core/netfile.h"
#include "core/rng.h"
#include "train/vit.h"
#include "train/vit_net.h"
#include "testutil.h"

static void vit_net_agrees(const char *arch, lg_act act, uint64_t seed)
{
    lg_vit_spec sp;
    ck_assert_int_eq(lg_arch_vit_parse(&sp, arch), LG_OK);
    lg_vit m;
    enum { B = 4 };
    ck_assert_int_eq(lg_vit_init(&m, &sp, act, B), LG_OK);
    lg_vit_init_weights(&m, seed);
    lg_rng r;
    lg_rng_init(&r, seed, 9);
    for (size_t i = 0; i < m.n_params; i++) m.params[i] += (float)(0.1 * lg_rng_normal(&r));
    if (lg_act_info_of(act)->has_param)
        for (int l = 0; l < sp.depth; l++) m.params[m.blk[l][LG_VB_ACT]] = 1.4f + 0.3f * (float)l;
    int n = sp.C * sp.H * sp.W;
    float *X = malloc((size_t)B * n * sizeof *X);
    for (int i = 0; i < B * n; i++) X[i] = (float)lg_rng_uniform(&r);
    uint32_t idx[B] = {0, 1, 2, 3};
    lg_vit_gather(&m, X, idx, B);
    lg_vit_forward(&m, B, NULL, NULL, NULL);
    lg_net net;
    ck_assert_int_eq(lg_vit_to_net(&m, &net), LG_OK);
    ck_assert_int_eq(lg_net_validate(&net), LG_OK);
    ck_assert_int_eq(net.n_layers, LG_VIT_NET_LAYERS(sp.depth));
    double *x = malloc((size_t)n * sizeof *x), y[16];
    double *scr = malloc(2 * (size_t)lg_net_max_width(&net) * sizeof *scr);
    for (int b = 0; b < B; b++) {
        for (int i = 0; i < n; i++) x[i] = X[b * n + i];
        lg_net_forward(&net, x, y, scr);
        for (int j = 0; j < sp.n_out; j++) {
            double f = m.logits[b * sp.n_out + j];
            ck_assert_msg(fabs(y[j] - f) <= 1e-4 * (1 + fabs(y[j])), "%s: example %d logit %d: net %.9g, float %.9g",
                          arch, b, j, y[j], f);
        }
    }
    lg_net_free(&net);
    lg_vit_free(&m);
    free(X);
    free(x);
    free(scr);
}

START_TEST(test_vit_net_cls_lgelu) { vit_net_agrees("1x6x6,vit:p3,d6,h2,L2,m8,cls,4", LG_ACT_LGELU, 1); }
END_TEST
START_TEST(test_vit_net_mean_gelu) { vit_net_agrees("2x4x4,vit:mean,p2,d4,h2,L1,m5,3", LG_ACT_GELU, 2); }
END_TEST
START_TEST(test_vit_net_fashion_shape_relu) { vit_net_agrees("1x28x28,vit:p7,d16,h2,L2,m32,cls,10", LG_ACT_RELU, 3); }
END_TEST
START_TEST(test_vit_net_mean_swish) { vit_net_agrees("1x8x8,vit:p4,d8,h4,L3,m12,mean,5", LG_ACT_SWISH, 4); }
END_TEST

START_TEST(test_vit_net_earlier_head_form)
{
    lg_net old, cur, again;
    ck_assert_int_eq(lg_netfile_read(&old, lg_test_fixture("vit/tiny_vit.lgnet")), LG_OK);
    lg_vit m, m2;
    ck_assert_int_eq(lg_net_to_vit(&old, &m, 2, "tiny_vit"), LG_OK);
    ck_assert_int_eq(lg_vit_to_net(&m, &cur), LG_OK);
    ck_assert_int_eq(cur.n_layers, old.n_layers + 1);
    ck_assert_int_eq(cur.n_layers, LG_VIT_NET_LAYERS(m.spec.depth));
    ck_assert_int_eq(lg_net_to_vit(&cur, &m2, 2, "cur"), LG_OK);
    ck_assert_int_eq(lg_vit_to_net(&m2, &again), LG_OK);
    int n = old.n_in, no = old.layers[old.n_layers - 1].n_out;
    size_t w = (size_t)lg_net_max_width(&old) + (size_t)lg_net_max_width(&cur);
    double *x = malloc((size_t)n * sizeof *x), *scr = malloc(2 * w * sizeof *scr), ya[64], yb[64], yc[64];
    lg_rng r;
    lg_rng_init(&r, 5, 0);
    for (int e = 0; e < 3; e++) {
        for (int i = 0; i < n; i++) x[i] = lg_rng_uniform(&r);
        lg_net_forward(&old, x, ya, scr);
        lg_net_forward(&cur, x, yb, scr);
        lg_net_forward(&again, x, yc, scr);
        for (int j = 0; j < no; j++) {
            ck_assert_msg(fabs(ya[j] - yb[j]) <= 1e-9 * (1 + fabs(ya[j])),
                          "logit %d: earlier form %.17g, current %.17g", j, ya[j], yb[j]);
            ck_assert_msg(yb[j] == yc[j], "logit %d: %.17g read back as %.17g", j, yb[j], yc[j]);
        }
    }
    free(x), free(scr);
    lg_net_free(&old), lg_net_free(&cur), lg_net_free(&again);
    lg_vit_free(&m), lg_vit_free(&m2);
}
END_TEST

Suite *suite_vit_net(void)
{
    Suite *s = suite_create("vit_net");
    TCase *tc = tcase_create("vit_net");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_vit_net_cls_lgelu);
    tcase_add_test(tc, test_vit_net_mean_gelu);
    tcase_add_test(tc, test_vit_net_fashion_shape_relu);
    tcase_add_test(tc, test_vit_net_mean_swish);
    tcase_add_test(tc, test_vit_net_earlier_head_form);
    suite_add_tcase(s, tc);
    return s;
}
