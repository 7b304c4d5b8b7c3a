/* check_init.c — the weight initialisations of train/init.c: names, and the
 * moments and bounds of he / xavier / torch. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/act.h"
#include "core/idx.h"
#include "core/rng.h"
#include "train/act.h"
#include "core/act_simd.h"
#include "train/init.h"
#include "train/loop.h"
#include "train/model.h"
#include "train/optim.h"
#include "testutil.h"

/* ---- initialisation ------------------------------------------------------ */

START_TEST(test_init_parse)
{
    const char *names[] = {"he", "xavier", "torch"};
    for (int i = 0; i < 3; i++) {
        lg_init_kind k;
        ck_assert_int_eq(lg_init_parse(names[i], &k), 0);
        ck_assert_int_eq((int)k, i);
        ck_assert_str_eq(lg_init_name(k), names[i]);
    }
    lg_init_kind k = LG_INIT_HE;
    ck_assert_int_eq(lg_init_parse("kaiming", &k), -1);
    ck_assert_int_eq(lg_init_parse("", &k), -1);
    lg_s_update u;
    ck_assert_int_eq(lg_s_update_parse("lambda", &u), 0);
    ck_assert_int_eq(u, LG_S_UPDATE_LAMBDA);
    ck_assert_int_eq(lg_s_update_parse("s", &u), 0);
    ck_assert_int_eq(u, LG_S_UPDATE_S);
    ck_assert_int_eq(lg_s_update_parse("lam", &u), -1);
    ck_assert_int_eq(lg_optim_opts_default().s_update, LG_S_UPDATE_LAMBDA);
}
END_TEST

/* Moments of every layer of 784-256-256-10 against the scheme's law: mean
 * 0 and variance σ² within 5 standard errors (var of the sample variance
 * of n normals is 2σ⁴/n; of n uniforms U(±a), σ² = a²/3 and 4a⁴/(45n)),
 * the uniform's bound a respected and nearly reached, biases as stated. */
START_TEST(test_init_moments)
{
    const int dims[4] = {784, 256, 256, 10};
    for (int kind = 0; kind < 3; kind++) {
        lg_net net, again;
        ck_assert_int_eq(lg_net_init(&net, 3, dims, LG_ACT_LGELU), LG_OK);
        ck_assert_int_eq(lg_net_init(&again, 3, dims, LG_ACT_LGELU), LG_OK);
        lg_init_weights(&net, 11, (lg_init_kind)kind);
        lg_init_weights(&again, 11, (lg_init_kind)kind);
        ck_assert_msg(memcmp(net.params, again.params, net.n_params * sizeof(double)) == 0, "%s: not reproducible",
                      lg_init_name((lg_init_kind)kind));
        for (int k = 0; k < 3; k++) {
            const lg_layer *L = &net.layers[k];
            size_t nw = (size_t)L->lin.n_in * (size_t)L->n_out;
            double n = (double)nw, s1 = 0, s2 = 0, mx = 0;
            for (size_t i = 0; i < nw; i++) {
                double w = L->lin.W[i];
                ck_assert_msg(w == (double)(float)w, "weight not float-representable");
                s1 += w, s2 += w * w, mx = fmax(mx, fabs(w));
            }
            double mean = s1 / n, var = s2 / n - mean * mean, a = 1.0 / sqrt((double)L->lin.n_in), expect, se;
            if (kind == LG_INIT_TORCH) {
                expect = a * a / 3.0;
                se = sqrt(4.0 * pow(a, 4) / (45.0 * n));
                ck_assert_msg(mx <= a && mx > a * (1 - 20.0 / n), "torch layer %d: max |w| %g, bound %g", k, mx, a);
                double bmx = 0, bs = 0;
                for (int i = 0; i < L->n_out; i++) bmx = fmax(bmx, fabs(L->b[i])), bs += fabs(L->b[i]);
                ck_assert_msg(bmx <= a && bs / L->n_out > 0.3 * a, "torch layer %d: biases not U(±%g)", k, a);
            } else {
                int xav = kind == LG_INIT_XAVIER || L->act == LG_ACT_IDENTITY;
                expect = xav ? 2.0 / (L->lin.n_in + L->n_out) : 2.0 / L->lin.n_in;
                se = expect * sqrt(2.0 / n);
                for (int i = 0; i < L->n_out; i++) ck_assert_double_eq(L->b[i], 0.0);
            }
            ck_assert_msg(fabs(mean) < 5 * sqrt(expect / n), "%s layer %d: mean %g", lg_init_name((lg_init_kind)kind),
                          k, mean);
            ck_assert_msg(fabs(var - expect) < 5 * se, "%s layer %d: variance %g, expected %g ± %g",
                          lg_init_name((lg_init_kind)kind), k, var, expect, se);
            if (L->act == LG_ACT_LGELU) ck_assert_double_eq_tol(L->lambda, 1.0 + log(2.0), 1e-12);
        }
        lg_net_free(&net);
        lg_net_free(&again);
    }
    /* he keeps the original lgelu initialisation bit for bit */
    lg_net a, b;
    ck_assert_int_eq(lg_net_init(&a, 3, dims, LG_ACT_GELU), LG_OK);
    ck_assert_int_eq(lg_net_init(&b, 3, dims, LG_ACT_GELU), LG_OK);
    lg_model_init_weights(&a, 5);
    lg_init_weights(&b, 5, LG_INIT_HE);
    ck_assert(memcmp(a.params, b.params, a.n_params * sizeof(double)) == 0);
    lg_net_free(&a);
    lg_net_free(&b);
}
END_TEST

Suite *suite_init(void)
{
    Suite *s = suite_create("init");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_init_parse);
    tcase_add_test(tc, test_init_moments);
    suite_add_tcase(s, tc);
    return s;
}
