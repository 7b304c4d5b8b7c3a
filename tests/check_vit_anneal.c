/* check_vit_anneal.c — reading a ViT net back into the trainer
 * (lg_net_to_vit, train/vit_net.h), annealing a ViT (lg_anneal_vit_hook,
 * anneal/schedule.h) and substituting ReLU in its MLPs:
 *  - net → ViT → net is exact (every weight, bias and λ bit for bit) for
 *    class-token and mean pooling and several activations;
 *  - nets not of the form lg_vit_to_net writes are refused with LG_ERR_ARG
 *    (an MLP, a changed index map, a weight off the shared per-token form,
 *    a missing layer);
 *  - annealing from the first step and from a switch fraction reaches
 *    λ_target exactly in every block, λ learned before the switch;
 *  - at λ_target the lgelu ViT and its ReLU substitution (the lg_net from
 *    lg_anneal_to_relu, evaluated in double) have close logits and the same
 *    predictions on most of a Fashion-MNIST subset.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/relu.h"
#include "anneal/schedule.h"
#include "core/arch.h"
#include "core/arch_vit.h"
#include "core/idx.h"
#include "core/op.h"
#include "core/rng.h"
#include "train/vit.h"
#include "train/vit_net.h"
#include "train/vit_train.h"
#include "testutil.h"

static void vit_random(lg_vit *m, const char *arch, lg_act act, uint64_t seed)
{
    lg_vit_spec sp;
    ck_assert_int_eq(lg_arch_vit_parse(&sp, arch), LG_OK);
    ck_assert_int_eq(lg_vit_init(m, &sp, act, 4), LG_OK);
    lg_vit_init_weights(m, seed);
    lg_rng r;
    lg_rng_init(&r, seed, 9);
    for (size_t i = 0; i < m->n_params; i++) m->params[i] += (float)(0.1 * lg_rng_normal(&r));
    if (lg_act_info_of(act)->has_param)
        for (int l = 0; l < sp.depth; l++) m->params[m->blk[l][LG_VB_ACT]] = 1.3f + 0.37f * (float)l;
}

/* Every field the round trip must keep, bit for bit. */
static void nets_identical(const lg_net *a, const lg_net *b)
{
    ck_assert_int_eq(a->n_layers, b->n_layers);
    ck_assert_uint_eq(a->n_params, b->n_params);
    ck_assert_msg(memcmp(a->params, b->params, a->n_params * sizeof *a->params) == 0, "weights or biases differ");
    ck_assert_uint_eq(a->n_maps, b->n_maps);
    ck_assert(memcmp(a->maps, b->maps, a->n_maps * sizeof *a->maps) == 0);
    for (int k = 0; k < a->n_layers; k++) {
        ck_assert_int_eq(a->layers[k].act, b->layers[k].act);
        ck_assert_msg(a->layers[k].lambda == b->layers[k].lambda, "layer %d: λ %.17g vs %.17g", k,
                      a->layers[k].lambda, b->layers[k].lambda);
    }
}

static void round_trip(const char *arch, lg_act act, uint64_t seed)
{
    lg_vit m, m2;
    vit_random(&m, arch, act, seed);
    lg_net n1, n2;
    ck_assert_int_eq(lg_vit_to_net(&m, &n1), LG_OK);
    ck_assert_int_eq(lg_net_has_tnode(&n1), 1);
    ck_assert_int_eq(lg_net_to_vit(&n1, &m2, 3, "n1"), LG_OK);
    ck_assert_int_eq(m2.spec.C, m.spec.C);
    ck_assert_int_eq(m2.spec.patch, m.spec.patch);
    ck_assert_int_eq(m2.spec.dim, m.spec.dim);
    ck_assert_int_eq(m2.spec.heads, m.spec.heads);
    ck_assert_int_eq(m2.spec.depth, m.spec.depth);
    ck_assert_int_eq(m2.spec.mlp, m.spec.mlp);
    ck_assert_int_eq(m2.spec.cls, m.spec.cls);
    ck_assert_int_eq(m2.spec.n_out, m.spec.n_out);
    ck_assert_int_eq(m2.act, m.act);
    ck_assert_int_eq(m2.max_batch, 3);
    ck_assert_int_eq(lg_vit_to_net(&m2, &n2), LG_OK);
    nets_identical(&n1, &n2);
    lg_net_free(&n1);
    lg_net_free(&n2);
    lg_vit_free(&m);
    lg_vit_free(&m2);
}

START_TEST(test_round_trip_cls_lgelu) { round_trip("1x6x6,vit:p3,d6,h2,L2,m8,cls,4", LG_ACT_LGELU, 1); }
END_TEST
START_TEST(test_round_trip_mean_gelu) { round_trip("2x4x4,vit:mean,p2,d4,h2,L1,m5,3", LG_ACT_GELU, 2); }
END_TEST
START_TEST(test_round_trip_mean_swish) { round_trip("1x8x8,vit:p4,d8,h4,L3,m12,mean,5", LG_ACT_SWISH, 3); }
END_TEST
START_TEST(test_round_trip_cls_relu) { round_trip("1x6x6,vit:p2,d6,h3,L1,m4,cls,2", LG_ACT_RELU, 4); }
END_TEST

START_TEST(test_gelu_vit_reads_as_lgelu)
{
    /* `lgelu anneal` on a gelu ViT: the net's MLPs become lgelu at λ = 1, the
     * ViT read back has λ = 1 in every block and writes a valid net */
    lg_vit m, m2;
    vit_random(&m, "2x4x4,vit:mean,p2,d4,h2,L2,m5,3", LG_ACT_GELU, 9);
    lg_net n1, n2;
    ck_assert_int_eq(lg_vit_to_net(&m, &n1), LG_OK);
    ck_assert_int_eq(lg_anneal_prepare_net(&n1, "n1"), LG_OK);
    ck_assert_int_eq(lg_net_to_vit(&n1, &m2, 2, "n1"), LG_OK);
    ck_assert_int_eq(m2.act, LG_ACT_LGELU);
    for (int l = 0; l < 2; l++) ck_assert_float_eq(lg_vit_act_param(&m2, l), 1.0f);
    ck_assert_int_eq(lg_vit_to_net(&m2, &n2), LG_OK);
    ck_assert_int_eq(lg_net_validate(&n2), LG_OK);
    lg_net_free(&n1);
    lg_net_free(&n2);
    lg_vit_free(&m);
    lg_vit_free(&m2);
}
END_TEST

/* dst = src with layer k's own term (a per-token map) written as its dense kron(I_T, A). */
static void dense_layer(lg_net *dst, const lg_net *src, int k)
{
    lg_layer_spec *sp = calloc((size_t)src->n_layers, sizeof *sp);
    lg_linear *tm = calloc((size_t)(src->n_layers + src->n_terms), sizeof *tm), *tp = tm;
    for (int j = 0; j < src->n_layers; j++) {
        const lg_layer *S = &src->layers[j];
        sp[j] = (lg_layer_spec){S->n_out, S->act, lg_layer_n_lin(S), tp};
        for (int t = 0; t < lg_layer_n_lin(S); t++, tp++) {
            *tp = *lg_layer_lin(S, t);
            if (j == k && t == 0) tp->kind = LG_LAYER_DENSE;
        }
    }
    ck_assert_int_eq(lg_net_build(dst, src->n_in, src->n_layers, sp), LG_OK);
    for (int j = 0; j < src->n_layers; j++) {
        lg_layer_copy_act_bias(&dst->layers[j], &src->layers[j]);
        for (int t = 0; t < lg_layer_n_lin(&src->layers[j]); t++) {
            const lg_linear *A = lg_layer_lin(&src->layers[j], t);
            lg_linear *B = lg_layer_lin_mut(&dst->layers[j], t);
            if (j == k && t == 0) lg_tokmap_dense(A, B->W);
            else if (lg_linear_n_weights(A)) memcpy(B->W, A->W, lg_linear_n_weights(A) * sizeof *A->W);
            if (lg_op(A->kind)->n_map) memcpy(B->map, A->map, lg_op(A->kind)->n_map(A) * sizeof *A->map);
        }
    }
    free(sp);
    free(tm);
}

static void refused(const lg_net *net)
{
    lg_vit m;
    ck_assert_int_eq(lg_net_to_vit(net, &m, 2, "bad"), LG_ERR_ARG);
    ck_assert_ptr_null(m.params); /* zeroed on failure */
    ck_assert_msg(strstr(lg_errmsg(), "bad") != NULL, "the message names the file: %s", lg_errmsg());
}

START_TEST(test_refuses_other_nets)
{
    /* an MLP */
    lg_arch a = {0};
    lg_net mlp;
    ck_assert_int_eq(lg_arch_parse(&a, "36,8,8,4"), LG_OK);
    ck_assert_int_eq(lg_arch_build(&mlp, &a, LG_ACT_LGELU), LG_OK);
    ck_assert_int_eq(lg_net_has_tnode(&mlp), 0);
    refused(&mlp);
    lg_net_free(&mlp);
    lg_arch_free(&a);

    lg_vit m;
    vit_random(&m, "1x6x6,vit:p3,d6,h2,L2,m8,cls,4", LG_ACT_LGELU, 5);
    lg_net n;
    /* a changed index map of the product Q·Kᵀ */
    ck_assert_int_eq(lg_vit_to_net(&m, &n), LG_OK);
    n.layers[6].lin.map[0] = n.layers[6].lin.map[1];
    refused(&n);
    ck_assert_msg(strstr(lg_errmsg(), "layer 6") != NULL, "%s", lg_errmsg());
    lg_net_free(&n);
    /* Q written as a dense map with a weight from token 1 into token 0: not a per-token map */
    ck_assert_int_eq(lg_vit_to_net(&m, &n), LG_OK);
    lg_net nd;
    dense_layer(&nd, &n, 3);
    int TD = nd.layers[3].lin.n_in;
    nd.layers[3].lin.W[(size_t)0 * TD + 6] = 0.5;
    refused(&nd);
    ck_assert_msg(strstr(lg_errmsg(), "layer 3") != NULL && strstr(lg_errmsg(), "operator kind") != NULL, "%s",
                  lg_errmsg());
    lg_net_free(&nd);
    lg_net_free(&n);
    /* a per-token bias that differs between tokens */
    ck_assert_int_eq(lg_vit_to_net(&m, &n), LG_OK);
    n.layers[4].b[6] += 0.25;
    refused(&n);
    lg_net_free(&n);
    /* one layer fewer: not 4 + 11 per block */
    ck_assert_int_eq(lg_vit_to_net(&m, &n), LG_OK);
    n.n_layers--;
    refused(&n);
    n.n_layers++;
    lg_net_free(&n);
    lg_vit_free(&m);
}
END_TEST

/* A small synthetic task: the class is the brightest of n_out image bands. */
static void synth(lg_dataset *d, int n, int side, int n_out, uint64_t seed)
{
    lg_rng r;
    lg_rng_init(&r, seed, 4);
    int dim = side * side;
    d->n = (size_t)n, d->dim = dim;
    d->x = malloc((size_t)n * dim * sizeof *d->x);
    d->y = malloc((size_t)n);
    for (int i = 0; i < n; i++) {
        int c = (int)(lg_rng_uniform(&r) * n_out) % n_out;
        d->y[i] = (uint8_t)c;
        for (int p = 0; p < dim; p++) {
            int band = (p / side) * n_out / side;
            d->x[(size_t)i * dim + p] = (float)(0.3 * lg_rng_uniform(&r) + (band == c ? 0.6 : 0.0));
        }
    }
}

static void anneal_run(double start)
{
    lg_vit m;
    vit_random(&m, "1x8x8,vit:p4,d8,h2,L3,m12,cls,4", LG_ACT_LGELU, 6);
    lg_dataset tr = {0};
    synth(&tr, 96, 8, 4, 7);
    lg_train_opts o = lg_train_opts_default();
    o.epochs = 2, o.batch = 4;
    o.optim.kind = LG_OPTIM_ADAMW, o.optim.lr = 1e-3, o.optim.c = 1;
    double target = lg_anneal_lambda_target(LG_ANNEAL_DEFAULT_TOLERANCE);
    lg_anneal_schedule s;
    ck_assert_int_eq(lg_anneal_schedule_init(&s, start, target, m.spec.depth), LG_OK);
    float before[3];
    for (int l = 0; l < 3; l++) before[l] = lg_vit_act_param(&m, l);
    lg_train_result res;
    ck_assert_int_eq(lg_vit_train(&m, &tr, NULL, &o, lg_anneal_vit_hook, &s, &res), LG_OK);
    ck_assert_int_eq(m.act_frozen, 1);
    ck_assert_int_eq(s.started, 1);
    ck_assert_int_eq(s.switch_step, lg_anneal_switch_step(start, res.steps));
    for (int l = 0; l < 3; l++) {
        ck_assert_msg(lg_vit_act_param(&m, l) == (float)target, "block %d: λ %.9g, target %.9g", l,
                      lg_vit_act_param(&m, l), target);
        /* λ at the switch: the initial one when annealing from the start, learned (moved) otherwise */
        if (start == 0) ck_assert_float_eq(s.lambda0[l], before[l]);
        else ck_assert_msg(s.lambda0[l] != before[l], "block %d: λ was not learned before the switch", l);
    }
    lg_dataset_free(&tr);
    lg_vit_free(&m);
}

START_TEST(test_anneal_from_start) { anneal_run(0.0); }
END_TEST
START_TEST(test_anneal_from_switch) { anneal_run(0.5); }
END_TEST

START_TEST(test_relu_on_annealed_vit)
{
    /* train briefly, anneal to λ_target, then compare the float lgelu ViT with
     * the ReLU net `lgelu relu` makes (lg_anneal_to_relu of lg_vit_to_net,
     * in double) on Fashion-MNIST test images */
    ck_assert_msg(lg_test_have_data(), "Fashion-MNIST not installed at %s", LG_DATA_DEFAULT_DIR);
    lg_dataset tr = {0}, te = {0};
    ck_assert_int_eq(lg_data_load(&tr, LG_DATA_DEFAULT_DIR, "train"), LG_OK);
    ck_assert_int_eq(lg_data_load(&te, LG_DATA_DEFAULT_DIR, "test"), LG_OK);
    lg_dataset_truncate(&tr, lg_test_quick() ? 600 : 1500);
    int n_te = lg_test_quick() ? 100 : 300;
    lg_vit_spec sp;
    ck_assert_int_eq(lg_arch_vit_parse(&sp, "1x28x28,vit:p7,d16,h2,L2,m32,cls,10"), LG_OK);
    lg_vit m;
    ck_assert_int_eq(lg_vit_init(&m, &sp, LG_ACT_LGELU, 50), LG_OK);
    lg_vit_init_weights(&m, 8);
    lg_train_opts o = lg_train_opts_default();
    o.epochs = 2, o.batch = 50;
    o.optim.kind = LG_OPTIM_ADAMW, o.optim.lr = 3e-3, o.optim.wd = 0.05, o.optim.warmup = 10, o.optim.c = 1;
    lg_anneal_schedule s;
    double target = lg_anneal_lambda_target(LG_ANNEAL_DEFAULT_TOLERANCE);
    ck_assert_int_eq(lg_anneal_schedule_init(&s, 0.5, target, sp.depth), LG_OK);
    lg_train_result res;
    ck_assert_int_eq(lg_vit_train(&m, &tr, NULL, &o, lg_anneal_vit_hook, &s, &res), LG_OK);
    lg_net net, rn;
    ck_assert_int_eq(lg_vit_to_net(&m, &net), LG_OK);
    ck_assert_int_eq(lg_anneal_to_relu(&rn, &net), LG_OK);
    ck_assert_int_eq(lg_anneal_count_smooth(&net), sp.depth);
    int n = te.dim, agree = 0;
    double *x = malloc((size_t)n * sizeof *x), y[10], maxdev = 0, maxlogit = 0;
    double *scr = malloc(2 * (size_t)lg_net_max_width(&rn) * sizeof *scr);
    uint32_t idx[50];
    for (int s0 = 0; s0 < n_te; s0 += 50) {
        for (int r = 0; r < 50; r++) idx[r] = (uint32_t)(s0 + r);
        lg_vit_gather(&m, te.x, idx, 50);
        lg_vit_forward(&m, 50, NULL, NULL, NULL);
        for (int r = 0; r < 50; r++) {
            for (int i = 0; i < n; i++) x[i] = te.x[(size_t)(s0 + r) * n + i];
            lg_net_forward(&rn, x, y, scr);
            const float *f = m.logits + r * 10;
            int af = 0, ar = 0;
            for (int j = 0; j < 10; j++) {
                maxdev = fmax(maxdev, fabs(y[j] - f[j]));
                maxlogit = fmax(maxlogit, fabs(f[j]));
                if (f[j] > f[af]) af = j;
                if (y[j] > y[ar]) ar = j;
            }
            agree += af == ar;
        }
    }
    printf("vit_anneal: ReLU vs λ = %.4g ViT on %d images: max |Δlogit| %.3g (max |logit| %.3g), %d agree\n",
           target, n_te, maxdev, maxlogit, agree);
    /* |x·Φ(λx) − relu(x)| ≤ 0.17/λ ≈ 1e-3 per hidden unit: the logits move by about 10⁻³ (measured 1.5·10⁻³ at max |logit| 5.2) */
    ck_assert_msg(maxdev <= 0.01 * (1.0 + maxlogit), "max |Δlogit| %.3g", maxdev);
    ck_assert_msg(agree >= n_te * 98 / 100, "%d of %d predictions agree", agree, n_te);
    free(x);
    free(scr);
    lg_net_free(&net);
    lg_net_free(&rn);
    lg_vit_free(&m);
    lg_dataset_free(&tr);
    lg_dataset_free(&te);
}
END_TEST

Suite *suite_vit_anneal(void)
{
    Suite *s = suite_create("vit_anneal");
    TCase *tc = tcase_create("vit_anneal");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_round_trip_cls_lgelu);
    tcase_add_test(tc, test_round_trip_mean_gelu);
    tcase_add_test(tc, test_round_trip_mean_swish);
    tcase_add_test(tc, test_round_trip_cls_relu);
    tcase_add_test(tc, test_gelu_vit_reads_as_lgelu);
    tcase_add_test(tc, test_refuses_other_nets);
    tcase_add_test(tc, test_anneal_from_start);
    tcase_add_test(tc, test_anneal_from_switch);
    tcase_add_test(tc, test_relu_on_annealed_vit);
    suite_add_tcase(s, tc);
    return s;
}
