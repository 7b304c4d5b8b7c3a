/* check_crown_tf_rows.c — how the back-substitution's rows through the
 * Transformer nodes are computed (DESIGN.md §3 "Back-substitution through
 * the Transformer nodes", *Speed*): the softmax and layernorm step as one
 * dgemm per group (verify/backsub_tgemm.h) against the element-wise sums,
 * a group with non-finite slopes left alone; and the intermediate rows only
 * for neurons whose bounds something reads (a class-token ViT's last
 * residual sum: the class token): those bounds are sound at sampled points,
 * tighter than interval arithmetic somewhere, and the others are exactly
 * the interval bounds of the final earlier bounds (no row was spent on
 * them). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/net.h"
#include "core/rng.h"
#include "testutil.h"
#include "train/vit.h"
#include "train/vit_net.h"
#include "verify/backsub_plain.h"
#include "verify/backsub_tbil.h"
#include "verify/backsub_tgemm.h"
#include "verify/bounds.h"

/* Random slopes equal on both sides for one group of rows (zero_row: row 2 all zero, so the rows
 * are gathered; else every row reads every group and the product runs in place): apply equals the
 * element-wise sums. */
static void crown_tf_rows_tgemm_same(int zero_row)
{
    enum { GS = 4, NG = 2, N = GS * NG, M = 6 };
    size_t len = 2 * N * GS + 3 * N + LG_BS_TGEMM_LEN(N, GS);
    lg_rng r;
    lg_rng_init(&r, 41, (uint64_t)zero_row);
    double *tab = malloc(len * sizeof(double)), *lo_w = tab, *up_w = lo_w + N * GS + N, *xm = up_w + N * GS + N;
    for (int i = 0; i < N * GS; i++) lo_w[i] = up_w[i] = lg_rng_normal(&r);
    for (int i = 0; i < N; i++) xm[i] = 0.5 + lg_rng_uniform(&r);
    lg_bs_tgemm_sums(N, GS, lo_w, up_w, xm, xm + N);
    for (int G = 0; G < NG; G++) ck_assert(lg_bs_tgemm_same(xm + N, N, G));
    double Lm[M * N], Y[M * N], Y0[M * N];
    int grp[M] = {0};
    for (int i = 0; i < M * N; i++) {
        Lm[i] = zero_row && i / N == 2 ? 0.0 : lg_rng_normal(&r);
        Y[i] = Y0[i] = lg_rng_normal(&r);
    }
    const double *pl[1] = {tab}, *xs[1] = {xm + N};
    ck_assert(lg_bs_tgemm_apply(M, N, GS, 1, grp, pl, xs, Lm, NULL, Y));
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = Y0[i * N + j], mass = fabs(want);
            for (int o = j / GS * GS; o < j / GS * GS + GS; o++) {
                want += Lm[i * N + o] * lo_w[o * GS + j % GS];
                mass += fabs(Lm[i * N + o] * lo_w[o * GS + j % GS]);
            }
            ck_assert(fabs(Y[i * N + j] - want) <= 1e-14 * mass);
        }
    free(tab);
}

/* The softmax and layernorm step when a group's lower and upper slopes agree: one product for
 * both signs, in place when every row reads the group, gathered when one does not. */
START_TEST(test_crown_tf_rows_tgemm_same)
{
    crown_tf_rows_tgemm_same(0);
    crown_tf_rows_tgemm_same(1);
}
END_TEST

/* The product step over blocks of rows (backsub_tbil.h) against the pair-wise sums: two
 * groups' random pairs (the second with equal lower and upper slopes), rows of both signs
 * with zeros (a whole zero row too), more rows than one block, both sources one buffer; the
 * sums equal their definitions and E bounds the summed intercepts' rounding. */
START_TEST(test_crown_tf_rows_tbil)
{
    enum { N = 7, K = 3, NA = 5, NB = 4, M = 37, NGRP = 2, PW = LG_BS_TBIL_PAIR };
    lg_rng r;
    lg_rng_init(&r, 42, 1);
    int map[2 * N * K];
    for (int q = 0; q < N * K; q++) {
        map[q] = (int)lg_rng_below(&r, NA);
        map[N * K + q] = (int)lg_rng_below(&r, NB);
    }
    double *tab[NGRP], *X[NGRP];
    for (int g = 0; g < NGRP; g++) {
        tab[g] = malloc((N * K * PW + LG_BS_TBIL_LEN(N)) * sizeof(double));
        for (int q = 0; q < N * K; q++) {
            double *e = tab[g] + q * PW;
            for (int f = 0; f < 6; f++) e[f] = lg_rng_below(&r, 5) == 0 ? 0.0 : lg_rng_normal(&r);
            if (g == 1) e[3] = e[0], e[4] = e[1];
            e[6] = 0.5 + lg_rng_uniform(&r);
            e[7] = 0.5 + lg_rng_uniform(&r);
        }
        X[g] = tab[g] + N * K * PW;
        lg_bs_tbil_sums(N, K, tab[g], X[g]);
        ck_assert(lg_bs_tbil_finite(X[g], N));
        ck_assert_int_eq(X[g][10 * N + 1] != 0.0, g == 1);
        for (int up = 0; up < 2; up++)
            for (int o = 0; o < N; o++) {
                double P = 0, U = 0, c = 0, C = 0;
                for (int k = 0; k < K; k++) {
                    const double *e = tab[g] + (o * K + k) * PW, *w = e + 3 * up;
                    for (int f = 0; f < 2; f++)
                        if (w[f] != 0.0) P += fabs(w[f]) * e[6 + f], U += e[6 + f], c += 1;
                    C += w[2];
                }
                ck_assert(fabs(lg_bs_tbil_P(X[g], N, up)[o] - P) <= 1e-13 * P);
                ck_assert(fabs(lg_bs_tbil_U(X[g], N, up)[o] - U) <= 1e-13 * U);
                ck_assert(lg_bs_tbil_nnz(X[g], N, up)[o] == c);
                ck_assert(lg_bs_tbil_C(X[g], N, up)[o] == C);
                ck_assert(lg_bs_tbil_E(X[g], N, up)[o] > 0.0 || C == 0.0);
            }
    }
    double A[M * N], Y[M * NA], Y0[M * NA];
    int grp[M];
    for (int i = 0; i < M; i++) {
        grp[i] = (i / 3) % NGRP;
        for (int o = 0; o < N; o++) A[i * N + o] = i == 5 || lg_rng_below(&r, 3) == 0 ? 0.0 : lg_rng_normal(&r);
        for (int x = 0; x < NA; x++) Y[i * NA + x] = Y0[i * NA + x] = lg_rng_normal(&r);
    }
    const double *pl[NGRP] = {tab[0], tab[1]}, *xs[NGRP] = {X[0], X[1]};
    /* both sources in one buffer (a product of a value with itself): ib < NB ≤ NA */
    ck_assert(lg_bs_tbil_apply(M, N, K, map, map + N * K, NA, NA, NGRP, grp, pl, xs, A, Y, Y));
    for (int i = 0; i < M; i++)
        for (int x = 0; x < NA; x++) {
            double want = Y0[i * NA + x], mass = fabs(want);
            for (int o = 0; o < N; o++) {
                double a = A[i * N + o];
                if (a == 0.0) continue;
                for (int k = 0; k < K; k++) {
                    const double *w = tab[grp[i]] + (o * K + k) * PW + (a > 0 ? 0 : 3);
                    if (map[o * K + k] == x) want += a * w[0], mass += fabs(a * w[0]);
                    if (map[N * K + o * K + k] == x) want += a * w[1], mass += fabs(a * w[1]);
                }
            }
            double got = Y[i * NA + x];
            ck_assert_msg(fabs(got - want) <= 1e-14 * mass, "row %d input %d: %.17g vs %.17g", i, x, got, want);
            if (i == 5) ck_assert(got == Y0[i * NA + x]);
        }
    for (int g = 0; g < NGRP; g++) free(tab[g]);
}
END_TEST

/* Random planes of ng groups in backsub_tnode.c's layout, rows Lm with zeros, one group of
 * group 1 with a NaN slope: apply equals the element-wise sums (within their rounding) where
 * the slopes are finite and leaves the rows unchanged in the other group; the sums equal
 * their definitions. */
START_TEST(test_crown_tf_rows_tgemm)
{
    enum { GS = 5, NG = 3, N = GS * NG, M = 9, NGRP = 2 };
    size_t len = 2 * N * GS + 3 * N + LG_BS_TGEMM_LEN(N, GS);
    lg_rng r;
    lg_rng_init(&r, 40, 1);
    double *tab[NGRP], *X[NGRP];
    for (int g = 0; g < NGRP; g++) {
        tab[g] = malloc(len * sizeof(double));
        double *lo_w = tab[g], *up_w = lo_w + N * GS + N, *xm = up_w + N * GS + N;
        for (int i = 0; i < N * GS; i++) {
            lo_w[i] = lg_rng_below(&r, 4) == 0 ? 0.0 : lg_rng_normal(&r);
            up_w[i] = lg_rng_below(&r, 4) == 0 ? 0.0 : lg_rng_normal(&r);
        }
        for (int i = 0; i < N; i++) xm[i] = 0.5 + lg_rng_uniform(&r);
        if (g == 1) lo_w[1 * GS * GS + 3] = NAN; /* output 5 (group 1), input 3 */
        X[g] = xm + N;
        lg_bs_tgemm_sums(N, GS, lo_w, up_w, xm, X[g]);
        for (int up = 0; up < 2; up++)
            for (int o = 0; o < N; o++) {
                const double *w = (up ? up_w : lo_w) + o * GS;
                double P = 0, U = 0, c = 0;
                for (int j = 0; j < GS; j++)
                    if (w[j] != 0.0) {
                        P += fabs(w[j]) * xm[o / GS * GS + j];
                        U += xm[o / GS * GS + j];
                        c += 1;
                    }
                if (!(g == 1 && o / GS == 1)) ck_assert(fabs(lg_bs_tgemm_P(X[g], N, up)[o] - P) <= 1e-13 * P);
                ck_assert(fabs(lg_bs_tgemm_U(X[g], N, up)[o] - U) <= 1e-13 * U);
                ck_assert(lg_bs_tgemm_nnz(X[g], N, up)[o] == c);
            }
        for (int G = 0; G < NG; G++) ck_assert_int_eq(lg_bs_tgemm_finite(X[g], N, G), !(g == 1 && G == 1));
    }
    double Lm[M * N], Y[M * N], Y0[M * N];
    int grp[M];
    for (int i = 0; i < M; i++) {
        grp[i] = i % NGRP;
        for (int o = 0; o < N; o++) {
            int z = lg_rng_below(&r, 3) == 0 || (i == 4 && o / GS == 2); /* row 4 has a zero group */
            Lm[i * N + o] = z ? 0.0 : lg_rng_normal(&r);
            Y[i * N + o] = Y0[i * N + o] = lg_rng_normal(&r);
        }
    }
    const double *pl[NGRP] = {tab[0], tab[1]}, *xs[NGRP] = {X[0], X[1]};
    ck_assert(lg_bs_tgemm_apply(M, N, GS, NGRP, grp, pl, xs, Lm, NULL, Y));
    for (int i = 0; i < M; i++)
        for (int G = 0; G < NG; G++)
            for (int j = 0; j < GS; j++) {
                double want = Y0[i * N + G * GS + j], mass = fabs(want);
                if (lg_bs_tgemm_finite(X[grp[i]], N, G))
                    for (int o = G * GS; o < G * GS + GS; o++) {
                        double a = Lm[i * N + o];
                        if (a == 0.0) continue;
                        const double *w = a > 0 ? tab[grp[i]] : tab[grp[i]] + N * GS + N;
                        want += a * w[o * GS + j];
                        mass += fabs(a * w[o * GS + j]);
                    }
                double got = Y[i * N + G * GS + j];
                ck_assert_msg(fabs(got - want) <= 1e-14 * mass, "row %d group %d input %d: %.17g vs %.17g", i, G, j,
                              got, want);
                if (!lg_bs_tgemm_finite(X[grp[i]], N, G)) ck_assert(got == Y0[i * N + G * GS + j]);
            }
    /* the rows' groups flagged instead of scanned: Lm read only where flagged (anything
     * elsewhere), the same result bit for bit */
    double Lg[M * N], Yu[M * N];
    unsigned char use[M * NG];
    for (int i = 0; i < M; i++)
        for (int G = 0; G < NG; G++) {
            int any = 0;
            for (int o = G * GS; o < G * GS + GS; o++) any |= Lm[i * N + o] != 0.0;
            use[i * NG + G] = (unsigned char)any;
            for (int o = G * GS; o < G * GS + GS; o++) Lg[i * N + o] = any ? Lm[i * N + o] : 1e3; /* garbage where not flagged */
        }
    memcpy(Yu, Y0, sizeof Yu);
    ck_assert(lg_bs_tgemm_apply(M, N, GS, NGRP, grp, pl, xs, Lg, use, Yu));
    for (int i = 0; i < M * N; i++) ck_assert_msg(Yu[i] == Y[i], "entry %d: %.17g vs %.17g", i, Yu[i], Y[i]);
    for (int g = 0; g < NGRP; g++) free(tab[g]);
}
END_TEST

/* A row's step through a layer that relaxes nothing (backsub_plain.h) against the
 * element-wise loop it replaces (zeros skipped, terms in order): random rows with zeros,
 * widths around the lanes, an all-zero row (nothing changes, no rounding term). */
START_TEST(test_crown_tf_rows_plain)
{
    enum { NMAX = 70 };
    lg_rng r;
    lg_rng_init(&r, 43, 1);
    const int widths[] = {1, 7, 8, 9, 17, 64, 70};
    for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++)
        for (int rep = 0; rep < 20; rep++) {
            int n = widths[wi], zero = rep == 0;
            double a[NMAX], b[NMAX], M[NMAX];
            for (int j = 0; j < n; j++) {
                a[j] = zero || lg_rng_below(&r, 3) == 0 ? 0.0 : lg_rng_normal(&r);
                b[j] = lg_rng_below(&r, 4) == 0 ? 0.0 : lg_rng_normal(&r);
                M[j] = 0.5 + 4.0 * lg_rng_uniform(&r);
            }
            double c0 = lg_rng_normal(&r), m0 = fabs(c0), e0 = lg_rng_uniform(&r), gam = 0x1p-40, und = 0x1p-1000;
            double c = c0, ms = m0, er = e0, cw = c0, mw = m0, gw = 0.0, mg = 0.0;
            int any = 0;
            for (int j = 0; j < n; j++) { /* backsub.c's element-wise loop */
                if (a[j] == 0.0) continue;
                double t = a[j] * b[j];
                cw += t;
                mw += fabs(t);
                gw += fabs(a[j]) * M[j];
                mg += fabs(a[j]) * M[j];
                any = 1;
            }
            double ew = any ? e0 + gam * gw + und : e0;
            lg_bs_plain_row(a, b, M, n, gam, und, &c, &ms, &er);
            if (!any) {
                ck_assert(c == c0 && ms == m0 && er == e0);
                continue;
            }
            ck_assert_msg(fabs(c - cw) <= 1e-14 * mw, "n %d: constant %.17g vs %.17g", n, c, cw);
            ck_assert_msg(fabs(ms - mw) <= 1e-14 * mw, "n %d: mass %.17g vs %.17g", n, ms, mw);
            ck_assert_msg(fabs(er - ew) <= 1e-14 * (e0 + gam * mg) + und, "n %d: err %.17g vs %.17g", n, er, ew);
        }
}
END_TEST

/* A class-token ViT with one block: its last residual sum (MLP out + residual) reaches the
 * logits only through the class token, and nothing else reads it. Its other tokens' bounds
 * are the interval bounds of the final earlier bounds; the class token's are at least as
 * tight and tighter somewhere; likewise the MLP's ReLUs: the class token's back-substituted
 * (tighter than interval somewhere), the other tokens' (which reach no output) left at their
 * interval bounds; every node's bounds hold at sampled points. */
/* b: the interval bounds of layer k from the bounds of the layers before it (and the input
 * box) in s; b is initialised here and the caller frees it. */
static void crown_tf_rows_interval_at(lg_bounds *b, const lg_bounds *s, const lg_net *net, int k)
{
    ck_assert_int_eq(lg_bounds_init(b, net), LG_OK);
    for (int q = 0; q < k; q++) {
        memcpy(b->lo[q], s->lo[q], (size_t)net->layers[q].n_out * sizeof(double));
        memcpy(b->hi[q], s->hi[q], (size_t)net->layers[q].n_out * sizeof(double));
    }
    memcpy(b->xlo, s->xlo, (size_t)net->n_in * sizeof(double));
    memcpy(b->xhi, s->xhi, (size_t)net->n_in * sizeof(double));
    ck_assert_int_eq(lg_bounds_interval_from(b, net, k), LG_OK);
}

START_TEST(test_crown_tf_rows_cls)
{
    int tighter = 0, tighter_relu = 0, nets = lg_test_quick() ? 2 : 4;
    for (int seed = 1; seed <= nets; seed++) {
        lg_vit_spec sp;
        ck_assert_int_eq(lg_arch_vit_parse(&sp, "1x6x6,vit:p3,d6,h2,L1,m8,cls,3"), LG_OK);
        lg_vit v;
        ck_assert_int_eq(lg_vit_init(&v, &sp, LG_ACT_RELU, 1), LG_OK);
        lg_vit_init_weights(&v, (uint64_t)seed);
        lg_rng r;
        lg_rng_init(&r, (uint64_t)seed, 5);
        for (size_t i = 0; i < v.n_params; i++) v.params[i] += (float)(0.2 * lg_rng_normal(&r));
        lg_net net;
        ck_assert_int_eq(lg_vit_to_net(&v, &net), LG_OK);
        lg_vit_free(&v);
        int n = net.n_in, ku = -1;
        for (int k = 0; k < net.n_layers; k++)
            if (net.layers[k].act == LG_ACT_RELU) ku = k;
        ck_assert_int_ge(ku, 0);
        int kr = ku + 1; /* the MLP's output plus the residual */
        ck_assert_int_eq(net.layers[kr].n_terms, 1);
        int per = net.layers[kr].n_out / 5; /* 5 tokens: the class token first */
        double lo[36], hi[36], x[36];
        for (int i = 0; i < n; i++) {
            double c = lg_rng_uniform(&r);
            lo[i] = c - 0.02;
            hi[i] = c + 0.02;
        }
        lg_bounds bs, bi;
        ck_assert_int_eq(lg_bounds_init(&bs, &net), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&bs, &net, lo, hi), LG_OK);
        /* the interval bounds of layer kr from the final bounds of the layers before it */
        crown_tf_rows_interval_at(&bi, &bs, &net, kr);
        lg_bounds bu; /* the ReLU layer's interval bounds from the bounds before it */
        crown_tf_rows_interval_at(&bu, &bs, &net, ku);
        int pu = net.layers[ku].n_out / 5;
        for (int o = 0; o < net.layers[ku].n_out; o++) {
            if (o >= pu) { /* no output reads the other tokens' ReLUs: their interval bounds stand */
                ck_assert(bs.lo[ku][o] == bu.lo[ku][o] && bs.hi[ku][o] == bu.hi[ku][o]);
                continue;
            }
            ck_assert(bs.lo[ku][o] >= bu.lo[ku][o] && bs.hi[ku][o] <= bu.hi[ku][o]);
            if (bs.hi[ku][o] - bs.lo[ku][o] < 0.99 * (bu.hi[ku][o] - bu.lo[ku][o])) tighter_relu++;
        }
        lg_bounds_free(&bu);
        { /* the verify report's count: only the ReLUs that reach an output (the class token's) */
            unsigned char **reach = lg_bounds_reach_alloc(&net);
            ck_assert_ptr_nonnull(reach);
            int want = 0;
            for (int o = 0; o < pu; o++) want += bs.lo[ku][o] < 0.0 && bs.hi[ku][o] > 0.0;
            ck_assert_int_eq(lg_bounds_unstable_in(&bs, &net, ku, reach[ku]), want);
            ck_assert_int_ge(lg_bounds_unstable(&bs, &net, ku), want);
            free(reach);
        }
        for (int o = 0; o < net.layers[kr].n_out; o++) {
            if (o >= per) {
                ck_assert(bs.lo[kr][o] == bi.lo[kr][o] && bs.hi[kr][o] == bi.hi[kr][o]);
                continue;
            }
            ck_assert(bs.lo[kr][o] >= bi.lo[kr][o] && bs.hi[kr][o] <= bi.hi[kr][o]);
            if (bs.hi[kr][o] - bs.lo[kr][o] < 0.99 * (bi.hi[kr][o] - bi.lo[kr][o])) tighter++;
        }
        size_t nl = lg_net_nodes_len(&net);
        double *vals = malloc(2 * nl * sizeof *vals), *pre = vals + nl;
        for (int s = 0; s < 200; s++) {
            for (int i = 0; i < n; i++) {
                double u = s < 60 ? (double)lg_rng_below(&r, 2) : lg_rng_uniform(&r);
                x[i] = lo[i] + u * (hi[i] - lo[i]);
            }
            lg_net_forward_nodes(&net, x, vals, pre);
            for (int k = 0; k < net.n_layers; k++) {
                size_t off = lg_net_node_offset(&net, k);
                for (int o = 0; o < net.layers[k].n_out; o++) {
                    double z = lg_kind_is_tnode(net.layers[k].lin.kind) ? vals[off + (size_t)o] : pre[off + (size_t)o];
                    double tol = 1e-12 * (1.0 + fabs(z));
                    ck_assert_msg(z >= bs.lo[k][o] - tol && z <= bs.hi[k][o] + tol, "seed %d layer %d neuron %d", seed,
                                  k, o);
                }
            }
        }
        free(vals);
        lg_bounds_free(&bs);
        lg_bounds_free(&bi);
        lg_net_free(&net);
    }
    ck_assert_int_gt(tighter, 0);
    ck_assert_int_gt(tighter_relu, 0);
}
END_TEST

Suite *suite_crown_tf_rows(void)
{
    Suite *s = suite_create("crown_tf_rows");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 60);
    tcase_add_test(tc, test_crown_tf_rows_tgemm);
    tcase_add_test(tc, test_crown_tf_rows_tgemm_same);
    tcase_add_test(tc, test_crown_tf_rows_tbil);
    tcase_add_test(tc, test_crown_tf_rows_plain);
    tcase_add_test(tc, test_crown_tf_rows_cls);
    suite_add_tcase(s, tc);
    return s;
}
