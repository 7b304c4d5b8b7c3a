/* check_crown_tf.c — back-substitution through the Transformer nodes
 * (DESIGN.md §3 "Back-substitution through the Transformer nodes"):
 * soundness against sampled and PGD points on random attention nets
 * (tests/gen_tnet.h), and that it tightens the interval bounds; the
 * α search of the products and ReLUs (verify/alpha_tnode.h) never lowers a bound, raises
 * some, and stays below every sampled and PGD point; ReLU splitting
 * (verify/bab_tnode.h) proves objectives the root bound leaves open and
 * none that a sampled or PGD point violates, and a mutant dropping one child
 * of each split is caught. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/net.h"
#include "core/rng.h"
#include "gen_tnet.h"
#include "testutil.h"
#include "verify/alpha_tnode.h"
#include "verify/attack.h"
#include "verify/bab_tnode.h"
#include "verify/bounds.h"
#include "verify/opstage.h"
#include "verify/prop.h"

static void ct_make(lg_net *net, unsigned seed)
{
    lg_rng r;
    lg_rng_init(&r, seed, 3);
    lg_test_tnet_opts o = {.post_norm = (int)(seed % 2)}; /* every other net a layernorm before its MLP */
    ck_assert_int_eq(lg_test_tnet_random(net, &r, &o), LG_OK);
}

/* Every node's value at x inside [lo, hi] of its (pre-activation) bounds. */
static void ct_inside(const lg_net *net, const lg_bounds *b, const double *x, double *vals, double *pre, unsigned seed,
                      double rad)
{
    lg_net_forward_nodes(net, x, vals, pre);
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        size_t off = lg_net_node_offset(net, k);
        for (int o = 0; o < L->n_out; o++) {
            double z = pre[off + (size_t)o], tol = 1e-12 * (1.0 + fabs(z));
            if (lg_kind_is_tnode(L->lin.kind)) z = vals[off + (size_t)o];
            ck_assert_msg(z >= b->lo[k][o] - tol && z <= b->hi[k][o] + tol,
                          "seed %u radius %g layer %d (%s) neuron %d: %.17g outside [%.17g, %.17g]", seed, rad, k,
                          lg_kind_name(L->lin.kind), o, z, b->lo[k][o], b->hi[k][o]);
        }
    }
}

/* A layernorm node's region (verify/opstage.h lg_ln_region_of) holds at the node values vals
 * of a point of the box: its centred inputs and its groups' forms within their bounds. */
static void ct_region_inside(const lg_net *net, const lg_bounds *b, const double *vals)
{
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->lin.kind != LG_LAYER_LAYERNORM || L->lin.src < 0) continue;
        const double *x = vals + lg_net_node_offset(net, L->lin.src);
        int g = L->lin.op.group;
        for (int G = 0; G < L->n_out / g; G++) {
            lg_ln_region reg;
            lg_ln_region_of(b, net, k, G, &reg);
            ck_assert_ptr_nonnull(reg.clo); /* the symbolic pass set it */
            double mu = 0.0, mag = 0.0, ax = 0.0;
            for (int j = 0; j < g; j++) mu += x[G * g + j] / g, mag = fmax(mag, fabs(x[G * g + j]));
            double tol = 1e-9 * (1.0 + mag);
            for (int j = 0; j < g; j++) {
                double c = x[G * g + j] - mu;
                ck_assert_msg(c >= reg.clo[j] - tol && c <= reg.chi[j] + tol, "layer %d: centred input %g outside [%g, %g]",
                              k, c, reg.clo[j], reg.chi[j]);
                if (reg.a) ax += reg.a[j] * x[G * g + j];
            }
            if (reg.a)
                ck_assert_msg(ax >= reg.plo - g * tol * 8 && ax <= reg.phi + g * tol * 8, "layer %d: form %g outside [%g, %g]",
                              k, ax, reg.plo, reg.phi);
        }
    }
}

/* Sampled points (corners, uniform) and PGD minimisers of random objectives
 * never leave the back-substitution bounds of any node, nor go below an
 * objective's lower bound; and on small boxes the bounds beat interval
 * arithmetic somewhere. */
START_TEST(test_crown_tf_oracle)
{
    int nets = lg_test_quick() ? 10 : 30, tighter = 0, checked = 0;
    for (unsigned seed = 1; seed <= (unsigned)nets; seed++) {
        lg_net net;
        ct_make(&net, seed);
        lg_rng r;
        lg_rng_init(&r, seed, 77);
        size_t nl = lg_net_nodes_len(&net);
        double *vals = malloc(2 * nl * sizeof *vals), *pre = vals + nl;
        int no = lg_net_n_out(&net), n = net.n_in;
        const double radii[4] = {1e-6, 0.01, 0.1, 0.8};
        for (int ri = 0; ri < 4; ri++) {
            double c[64], lo[64], hi[64], x[64], grad[64];
            for (int i = 0; i < n; i++) {
                c[i] = 2.0 * lg_rng_uniform(&r) - 1.0;
                lo[i] = c[i] - radii[ri];
                hi[i] = c[i] + radii[ri];
            }
            lg_bounds bi, bs;
            ck_assert_int_eq(lg_bounds_init(&bi, &net), LG_OK);
            ck_assert_int_eq(lg_bounds_init(&bs, &net), LG_OK);
            ck_assert_int_eq(lg_bounds_interval(&bi, &net, lo, hi), LG_OK);
            ck_assert_int_eq(lg_bounds_symbolic(&bs, &net, lo, hi), LG_OK);
            for (int k = 0; k < net.n_layers; k++)
                for (int o = 0; o < net.layers[k].n_out; o++) {
                    /* never looser than interval; strictly tighter somewhere counts */
                    ck_assert(bs.lo[k][o] >= bi.lo[k][o] && bs.hi[k][o] <= bi.hi[k][o]);
                    if (bs.hi[k][o] - bs.lo[k][o] < 0.99 * (bi.hi[k][o] - bi.lo[k][o])) tighter++;
                }
            for (int sm = 0; sm < 100; sm++) {
                for (int i = 0; i < n; i++) {
                    double u = sm < 40 ? (double)lg_rng_below(&r, 2) : lg_rng_uniform(&r);
                    x[i] = lo[i] + u * (hi[i] - lo[i]);
                }
                ct_inside(&net, &bs, x, vals, pre, seed, radii[ri]);
                ct_region_inside(&net, &bs, vals);
                checked++;
            }
            /* objectives C·y + d: the back-substitution bound below every PGD iterate */
            for (int q = 0; q < 3; q++) {
                double C[4], d = lg_rng_normal(&r), lb, g;
                for (int j = 0; j < no; j++) C[j] = lg_rng_normal(&r);
                ck_assert_int_eq(lg_bounds_objective_lower(&bs, &net, 1, C, &d, &lb), LG_OK);
                /* (not compared with the bound on the interval bounds: the planes are not monotone
                 * in their boxes, so tighter intermediate bounds need not give a better objective) */
                lg_lincon Lc = {C, d};
                lg_term T = {1, &Lc};
                for (int i = 0; i < n; i++) x[i] = lo[i] + lg_rng_uniform(&r) * (hi[i] - lo[i]);
                for (int it = 0; it < 30; it++) {
                    ck_assert_int_eq(lg_attack_objective(&net, 1, &T, x, &g, grad), LG_OK);
                    ck_assert_msg(g >= lb - 1e-12 * (1.0 + fabs(g)), "seed %u radius %g: PGD value %.17g below %.17g",
                                  seed, radii[ri], g, lb);
                    for (int i = 0; i < n; i++) {
                        double v = x[i] - (hi[i] - lo[i]) * 0.25 * (grad[i] > 0 ? 1.0 : grad[i] < 0 ? -1.0 : 0.0);
                        x[i] = v < lo[i] ? lo[i] : v > hi[i] ? hi[i] : v;
                    }
                    ct_inside(&net, &bs, x, vals, pre, seed, radii[ri]);
                    ct_region_inside(&net, &bs, vals);
                }
            }
            /* a new box: the layernorm regions of the old one are forgotten */
            for (int i = 0; i < n; i++) lo[i] += 0.5, hi[i] += 0.5;
            ck_assert_int_eq(lg_bounds_interval(&bs, &net, lo, hi), LG_OK);
            for (int k = 0; k < net.n_layers; k++) {
                if (net.layers[k].lin.kind != LG_LAYER_LAYERNORM || !bs.dlo[k]) continue;
                lg_ln_region reg;
                lg_ln_region_of(&bs, &net, k, 0, &reg);
                ck_assert(reg.clo[0] == -INFINITY && reg.chi[0] == INFINITY && !reg.a);
            }
            lg_bounds_free(&bi);
            lg_bounds_free(&bs);
        }
        free(vals);
        lg_net_free(&net);
    }
    ck_assert_int_gt(checked, 1000);
    ck_assert_int_gt(tighter, 0);
}
END_TEST

/* A box of radius 1e-9: the output bounds of back-substitution are within
 * 1e-6 (the planes are finite and tight on small boxes, every rounding term
 * small), and at a point box the objective bound is within 1e-6 of the value. */
START_TEST(test_crown_tf_tight_small)
{
    for (unsigned seed = 1; seed <= 10; seed++) {
        lg_net net;
        ct_make(&net, seed);
        lg_rng r;
        lg_rng_init(&r, seed, 88);
        double c[64], lo[64], hi[64], y[4], scratch[512];
        for (int i = 0; i < net.n_in; i++) {
            c[i] = 2.0 * lg_rng_uniform(&r) - 1.0;
            lo[i] = c[i] - 1e-9;
            hi[i] = c[i] + 1e-9;
        }
        lg_bounds b;
        ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_OK);
        int ko = net.n_layers - 1, no = lg_net_n_out(&net);
        for (int o = 0; o < net.layers[ko].n_out; o++)
            ck_assert_msg(b.hi[ko][o] - b.lo[ko][o] < 1e-6, "seed %u: width %g", seed, b.hi[ko][o] - b.lo[ko][o]);
        lg_net_forward(&net, c, y, scratch);
        double C[4] = {0, 0, 0, 0}, d = 0.0, lb;
        C[0] = 1.0;
        C[no - 1] -= 1.0;
        ck_assert_int_eq(lg_bounds_objective_lower(&b, &net, 1, C, &d, &lb), LG_OK);
        double v = y[0] - y[no - 1];
        ck_assert_msg(lb <= v + 1e-12 && lb >= v - 1e-6, "seed %u: %g vs %g", seed, lb, v);
        lg_bounds_free(&b);
        lg_net_free(&net);
    }
}
END_TEST

/* The α search of the products: its bounds are ≥ the α = 0.5 ones, strictly
 * higher on some objective, and below every sampled and PGD value. */
START_TEST(test_crown_tf_alpha_search)
{
    int nets = lg_test_quick() ? 8 : 20, raised = 0, rows = 0;
    for (unsigned seed = 1; seed <= (unsigned)nets; seed++) {
        lg_net net;
        ct_make(&net, seed);
        lg_rng r;
        lg_rng_init(&r, seed, 99);
        int no = lg_net_n_out(&net), n = net.n_in;
        const double radii[2] = {0.05, 0.3};
        for (int ri = 0; ri < 2; ri++) {
            double c[64], lo[64], hi[64], x[64], grad[64];
            for (int i = 0; i < n; i++) {
                c[i] = 2.0 * lg_rng_uniform(&r) - 1.0;
                lo[i] = c[i] - radii[ri];
                hi[i] = c[i] + radii[ri];
            }
            lg_bounds b;
            ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
            ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_OK);
            enum { M = 3 };
            double C[M * 4], d[M], lb0[M], lb[M];
            for (int q = 0; q < M; q++) {
                for (int j = 0; j < no; j++) C[q * no + j] = lg_rng_normal(&r);
                d[q] = -1e6; /* every row open: the search runs */
            }
            ck_assert_int_eq(lg_bounds_objective_lower(&b, &net, M, C, d, lb0), LG_OK);
            memcpy(lb, lb0, sizeof lb);
            ck_assert_int_eq(lg_alpha_tnode_objective(&b, &net, M, C, d, lb), LG_OK);
            for (int q = 0; q < M; q++) {
                ck_assert(lb[q] >= lb0[q]);
                raised += lb[q] > lb0[q] + 1e-9 * (1.0 + fabs(lb0[q]));
                rows++;
                lg_lincon Lc = {C + q * no, d[q]};
                lg_term T = {1, &Lc};
                for (int sm = 0; sm < 20; sm++) {
                    for (int i = 0; i < n; i++) x[i] = lo[i] + lg_rng_uniform(&r) * (hi[i] - lo[i]);
                    for (int it = 0; it < (sm < 2 ? 30 : 1); it++) {
                        double g;
                        ck_assert_int_eq(lg_attack_objective(&net, 1, &T, x, &g, grad), LG_OK);
                        ck_assert_msg(g >= lb[q] - 1e-12 * (1.0 + fabs(g)), "seed %u radius %g: %.17g below %.17g",
                                      seed, radii[ri], g, lb[q]);
                        for (int i = 0; i < n; i++) {
                            double v = x[i] - (hi[i] - lo[i]) * 0.25 * (grad[i] > 0 ? 1.0 : grad[i] < 0 ? -1.0 : 0.0);
                            x[i] = v < lo[i] ? lo[i] : v > hi[i] ? hi[i] : v;
                        }
                    }
                }
            }
            lg_bounds_free(&b);
        }
        lg_net_free(&net);
    }
    ck_assert_int_gt(rows, 0);
    ck_assert_int_gt(raised, 0);
}
END_TEST

/* The PGD minimum of C·y + d over the box from a few starts (an upper bound
 * of the true minimum). */
static double ct_pgd_min(const lg_net *net, const lg_term *T, const double *lo, const double *hi, lg_rng *r)
{
    double x[64], grad[64], best = INFINITY, g;
    int n = net->n_in;
    for (int st = 0; st < 4; st++) {
        for (int i = 0; i < n; i++) x[i] = lo[i] + lg_rng_uniform(r) * (hi[i] - lo[i]);
        for (int it = 0; it < 40; it++) {
            ck_assert_int_eq(lg_attack_objective(net, 1, T, x, &g, grad), LG_OK);
            if (g < best) best = g;
            double step = (hi[0] - lo[0]) * (it < 20 ? 0.25 : 0.05);
            for (int i = 0; i < n; i++) {
                double v = x[i] - step * (grad[i] > 0 ? 1.0 : grad[i] < 0 ? -1.0 : 0.0);
                x[i] = v < lo[i] ? lo[i] : v > hi[i] ? hi[i] : v;
            }
        }
    }
    return best;
}

/* One ReLU-splitting run on seed's net over a box of radius 0.1: the
 * objective a random C·y shifted to d = −(lb + frac·(g − lb)), lb the root
 * bound and g the PGD minimum (frac 0.5: open at the root, not refuted by
 * PGD; frac > 1: violated at the PGD point). Returns −1 when the seed gives
 * no case, else the answer; *wrong = 1 when a proof is contradicted by the
 * PGD point or one of 200 sampled points. */
static int ct_split_case(unsigned seed, double frac, int mutant, int *wrong)
{
    lg_net net;
    ct_make(&net, seed);
    lg_rng r;
    lg_rng_init(&r, seed, 111);
    int no = lg_net_n_out(&net), n = net.n_in, ans = -1;
    double c[64], lo[64], hi[64], x[64], y[4], scratch[4096];
    *wrong = 0;
    for (int i = 0; i < n; i++) {
        c[i] = 2.0 * lg_rng_uniform(&r) - 1.0;
        lo[i] = c[i] - 0.1;
        hi[i] = c[i] + 0.1;
    }
    lg_bounds b;
    ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
    ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_OK);
    double C[4], d = 0.0, lb;
    for (int j = 0; j < no; j++) C[j] = lg_rng_normal(&r);
    lg_lincon Lc = {C, 0.0};
    lg_term T = {1, &Lc};
    ck_assert_int_eq(lg_bounds_objective_lower(&b, &net, 1, C, &d, &lb), LG_OK);
    double g = ct_pgd_min(&net, &T, lo, hi, &r);
    if (lg_bab_tnode_has_unstable(&net, &b) && g > lb) {
        Lc.d = -(lb + frac * (g - lb));
        /* the depth limit ends the search; the deadline is only a guard against a hang, far
         * above what any net here needs, so the count of proofs does not depend on the
         * machine's speed */
        lg_runctx run = lg_runctx_start(120.0, 1, 0, 0);
        lg_bab_out out;
        if (mutant)
            ck_assert_int_eq(lg_bab_tnode_relu_mutant(&net, 1, &T, &b, &run, &out, mutant - 1), LG_OK);
        else
            ck_assert_int_eq(lg_bab_tnode_relu(&net, 1, &T, &b, &run, &out), LG_OK);
        ans = (int)out.answer;
        if (out.answer == LG_BAB_PROVED) {
            *wrong = g + Lc.d < -1e-12;
            for (int sm = 0; sm < 200 && !*wrong; sm++) {
                for (int i = 0; i < n; i++) {
                    double u = sm < 50 ? (double)lg_rng_below(&r, 2) : lg_rng_uniform(&r);
                    x[i] = lo[i] + u * (hi[i] - lo[i]);
                }
                lg_net_forward(&net, x, y, scratch);
                double f = Lc.d;
                for (int j = 0; j < no; j++) f += C[j] * y[j];
                *wrong = f < -1e-12;
            }
        } else {
            ck_assert_int_eq(out.answer, LG_BAB_OPEN);
        }
    }
    lg_bounds_free(&b);
    lg_net_free(&net);
    return ans;
}

/* ReLU splitting on objectives shifted halfway between the root bound and
 * the PGD minimum (open at the root, not refuted by PGD): a proof is never
 * contradicted by 200 sampled points, and some proofs happen; an objective
 * a little past the PGD minimum (violated there) is never proved. */
START_TEST(test_crown_tf_relu_split)
{
    /* seeds 1..24; the quick run takes 9..18, which holds provable objectives (11, 14, 17) */
    unsigned first = lg_test_quick() ? 9 : 1, last = lg_test_quick() ? 18 : 24;
    int proved = 0, tried = 0, wrong;
    for (unsigned seed = first; seed <= last; seed++) {
        int a = ct_split_case(seed, 0.5, 0, &wrong);
        ck_assert_msg(!wrong, "seed %u: proved, but a sampled point violates it", seed);
        tried += a >= 0;
        proved += a == LG_BAB_PROVED;
        a = ct_split_case(seed, 1.05, 0, &wrong);
        ck_assert_msg(a != LG_BAB_PROVED, "seed %u: a violated objective proved", seed);
    }
    ck_assert_int_gt(tried, 0);
    ck_assert_int_gt(proved, 0);
}
END_TEST

/* A mutant that drops one child of every split (z ≥ 0 or z ≤ 0) proves
 * some objective past the PGD minimum that the PGD point or a sampled point
 * violates: the checks above catch a child that misses part of its
 * parent's domain. */
START_TEST(test_crown_tf_relu_split_mutant)
{
    int caught = 0, wrong;
    const double fr[] = {1.05, 1.5, 2.0, 4.0};
    for (unsigned seed = 1; seed <= 24 && !caught; seed++)
        for (int i = 0; i < 4 && !caught; i++) {
            for (int side = 1; side <= 2 && !caught; side++) {
                ct_split_case(seed, fr[i], side, &wrong);
                caught |= wrong;
            }
        }
    ck_assert_int_gt(caught, 0);
}
END_TEST

Suite *suite_crown_tf(void)
{
    Suite *s = suite_create("crown_tf");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_crown_tf_oracle);
    tcase_add_test(tc, test_crown_tf_tight_small);
    tcase_add_test(tc, test_crown_tf_alpha_search);
    tcase_add_test(tc, test_crown_tf_relu_split);
    tcase_add_test(tc, test_crown_tf_relu_split_mutant);
    suite_add_tcase(s, tc);
    return s;
}
