/* check_direct.c — verifying smooth networks directly (DESIGN.md §3
 * "Smooth activations"): interval and CROWN bounds through the certified
 * relaxations contain sampled pre-activations; lg_verify_run never answers
 * `robust` where dense sampling plus gradient search finds a
 * counterexample, and every `violated` passed the MPFR witness gate; the
 * z3/glpk back-ends refuse smooth nets with a clear message; ONNX GELU and
 * sigmoid exports (PyTorch's node patterns, tests/onnx_make.py) verify
 * directly. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/act.h"
#include "core/net.h"
#include "core/netfile.h"
#include "core/npy.h"
#include "core/rng.h"
#include "core/status.h"
#include "testutil.h"
#include "test_solver.h"
#include "verify/alpha.h"
#include "verify/bab_act.h"
#include "verify/bounds.h"
#include "verify/prop.h"
#include "verify/recheck.h"
#include "verify/verify.h"
#include "verify/vnnlib.h"
#include "onnx/load.h"

static const lg_act lg_smooth[] = {LG_ACT_GELU, LG_ACT_LGELU, LG_ACT_SWISH, LG_ACT_SIGMOID, LG_ACT_PRELU};

/* Pre-activations of every layer at x (double) into z (layer offsets) and y. */
static void lg_dir_forward(const lg_net *net, const double *x, double *z, double *y)
{
    double a[64], t[64];
    int n = net->n_in;
    for (int i = 0; i < n; i++) a[i] = x[i];
    size_t off = 0;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        for (int o = 0; o < L->n_out; o++) {
            double s = L->b[o];
            for (int i = 0; i < L->lin.n_in; i++) s += L->lin.W[(size_t)o * (size_t)L->lin.n_in + (size_t)i] * a[i];
            if (z) z[off + (size_t)o] = s;
            t[o] = lg_act_eval(L->act, s, L->lambda);
        }
        off += (size_t)L->n_out;
        n = L->n_out;
        memcpy(a, t, (size_t)n * sizeof *a);
    }
    memcpy(y, a, (size_t)n * sizeof *y);
}

static void lg_dir_net(lg_net *net, lg_act act, int n_in, int h, int n_out, lg_rng *r, double scale)
{
    int dims[4] = {n_in, h, h, n_out};
    ck_assert(lg_net_init(net, 3, dims, act) == LG_OK);
    lg_test_randomize(net, r, scale);
    for (int k = 0; k < 2; k++)
        if (act == LG_ACT_LGELU || act == LG_ACT_SWISH) net->layers[k].lambda = 1.0 + 3.0 * lg_rng_uniform(r);
}

START_TEST(test_direct_bounds_contain)
{
    lg_rng r;
    lg_rng_init(&r, 11, 0);
    for (int a = 0; a < 5; a++)
        for (int t = 0; t < 6; t++) {
            lg_net net;
            lg_dir_net(&net, lg_smooth[a], 3, 8, 3, &r, 0.8);
            double lo[3], hi[3];
            for (int i = 0; i < 3; i++) {
                double c = 2 * lg_rng_uniform(&r) - 1, e = 0.05 + 0.5 * lg_rng_uniform(&r);
                lo[i] = c - e;
                hi[i] = c + e;
            }
            lg_bounds bi, bs;
            ck_assert(lg_bounds_init(&bi, &net) == LG_OK && lg_bounds_init(&bs, &net) == LG_OK);
            ck_assert_msg(lg_bounds_interval(&bi, &net, lo, hi) == LG_OK, "%s", lg_errmsg());
            ck_assert_msg(lg_bounds_symbolic(&bs, &net, lo, hi) == LG_OK, "%s", lg_errmsg());
            double z[64], y[8], x[3];
            for (int s = 0; s < 3000; s++) {
                for (int i = 0; i < 3; i++)
                    x[i] = s < 8 ? ((s >> i) & 1 ? hi[i] : lo[i]) : lo[i] + (hi[i] - lo[i]) * lg_rng_uniform(&r);
                lg_dir_forward(&net, x, z, y);
                size_t off = 0;
                for (int k = 0; k < net.n_layers; k++) {
                    for (int o = 0; o < net.layers[k].n_out; o++) {
                        double v = z[off + (size_t)o], tol = 1e-12 * (1 + fabs(v));
                        ck_assert_msg(bs.lo[k][o] <= v + tol && v - tol <= bs.hi[k][o],
                                      "%s: CROWN layer %d neuron %d [%g, %g] misses %.17g", lg_act_name(lg_smooth[a]), k,
                                      o, bs.lo[k][o], bs.hi[k][o], v);
                        ck_assert_msg(bi.lo[k][o] <= v + tol && v - tol <= bi.hi[k][o], "interval misses");
                    }
                    off += (size_t)net.layers[k].n_out;
                }
            }
            /* CROWN is no looser than intervals, and strictly tighter somewhere on the output layer */
            double gi = 0, gs = 0;
            for (int o = 0; o < 3; o++) {
                gi += bi.hi[2][o] - bi.lo[2][o];
                gs += bs.hi[2][o] - bs.lo[2][o];
            }
            ck_assert_msg(gs <= gi * (1 + 1e-12), "%s: CROWN width %g > interval width %g", lg_act_name(lg_smooth[a]), gs, gi);
            lg_bounds_free(&bi);
            lg_bounds_free(&bs);
            lg_net_free(&net);
        }
}
END_TEST

/* A box of radius rad around a uniform centre in [−1, 1]³. */
static void lg_dir_box(double lo[3], double hi[3], double rad, lg_rng *r)
{
    for (int i = 0; i < 3; i++) {
        double c = 2 * lg_rng_uniform(r) - 1;
        lo[i] = c - rad;
        hi[i] = c + rad;
    }
}

/* min over terms (max over the term's constraints) of coef·y + d: ≤ 0 means
 * the point is a counterexample of the case (double evaluation). */
static double lg_dir_worst(const lg_prop *p, const double *y)
{
    const lg_prop_case *C = &p->cases[0];
    double best = INFINITY;
    for (int t = 0; t < C->n_terms; t++) {
        double w = -INFINITY;
        for (int k = 0; k < C->terms[t].n_cons; k++) {
            double s = C->terms[t].cons[k].d;
            for (int j = 0; j < p->n_out; j++) s += C->terms[t].cons[k].coef[j] * y[j];
            if (s > w) w = s;
        }
        if (w < best) best = w;
    }
    return best;
}

/* The oracle: dense random sampling and corners; returns the smallest
 * worst-term value seen (< −1e-9: a clear counterexample). */
static double lg_dir_oracle(const lg_net *net, const lg_prop *p, lg_rng *r)
{
    const lg_prop_case *C = &p->cases[0];
    int n = net->n_in;
    double x[16], y[16], best = INFINITY;
    for (int s = 0; s < 20000; s++) {
        for (int i = 0; i < n; i++)
            x[i] = s < (1 << n) ? ((s >> i) & 1 ? C->hi[i] : C->lo[i]) : C->lo[i] + (C->hi[i] - C->lo[i]) * lg_rng_uniform(r);
        lg_dir_forward(net, x, NULL, y);
        double w = lg_dir_worst(p, y);
        if (w < best) best = w;
    }
    return best;
}

/* Case t of the oracle loops: a random 3-6-3 net of kind a, a random
 * centre, its top class, radius 0.02, 0.15 or 0.6 by t; returns the radius. */
static double lg_dir_case(lg_net *net, lg_prop *p, lg_act a, int t, lg_rng *r)
{
    lg_dir_net(net, a, 3, 6, 3, r, 1.0);
    double x0[3], y0[3];
    for (int i = 0; i < 3; i++) x0[i] = 2 * lg_rng_uniform(r) - 1;
    lg_dir_forward(net, x0, NULL, y0);
    int label = 0;
    for (int j = 1; j < 3; j++)
        if (y0[j] > y0[label]) label = j;
    double eps = t % 3 == 0 ? 0.02 : t % 3 == 1 ? 0.15 : 0.6;
    ck_assert(lg_prop_robustness(p, x0, 3, eps, -10, 10, label, 3, 0.0) == LG_OK);
    return eps;
}

/* _i = 0: input splitting (3 inputs); _i = 1: no input splitting, so what
 * CROWN cannot prove goes to activation splitting (verify/bab_act.h). */
START_TEST(test_direct_verdicts_vs_oracle)
{
    lg_rng r;
    lg_rng_init(&r, 2027, 0);
    int n_rob = 0, n_vio = 0, n_unk = 0, n_ce = 0, n_act = 0;
    for (int a = 0; a < 5; a++)
        for (int t = 0; t < 12; t++) {
            lg_net net;
            lg_prop p;
            double eps = lg_dir_case(&net, &p, lg_smooth[a], t, &r);
            lg_verify_opts o = lg_verify_opts_default();
            o.timeout_s = 5;
            o.bab.threads = 1;
            if (_i == 1) o.bab.mode = LG_BAB_NONE;
            lg_verify_report rep;
            ck_assert_msg(lg_verify_run(&net, &p, &o, &rep) == LG_OK, "%s: %s", lg_act_name(lg_smooth[a]), lg_errmsg());
            n_act += strcmp(rep.method, "bab-act") == 0;
            double w = lg_dir_oracle(&net, &p, &r);
            if (w < -1e-9) n_ce++;
            ck_assert_msg(!(rep.verdict == LG_VERDICT_ROBUST && w < -1e-9),
                          "%s t=%d eps %g: robust, but sampling finds worst-term value %g", lg_act_name(lg_smooth[a]), t,
                          eps, w);
            if (rep.verdict == LG_VERDICT_VIOLATED) {
                double y[3];
                ck_assert(lg_witness_accept(&net, &p, 0, rep.x, y) == 1);
            }
            n_rob += rep.verdict == LG_VERDICT_ROBUST;
            n_vio += rep.verdict == LG_VERDICT_VIOLATED;
            n_unk += rep.verdict == LG_VERDICT_UNKNOWN;
            lg_verify_report_free(&rep);
            lg_prop_free(&p);
            lg_net_free(&net);
        }
    /* the route decides: proofs and certified counterexamples both occur */
    ck_assert_msg(n_rob >= 10 && n_vio >= 5, "robust %d violated %d unknown %d (oracle counterexamples %d)", n_rob, n_vio,
                  n_unk, n_ce);
    ck_assert_msg(n_vio <= n_ce, "violated %d but the oracle saw only %d counterexamples", n_vio, n_ce);
    if (_i == 1)
        ck_assert_msg(n_act >= 1, "activation splitting proved only %d cases (robust %d violated %d unknown %d)", n_act,
                      n_rob, n_vio, n_unk);
}
END_TEST

/* α-CROWN with α as the tangent point: never below CROWN (its first
 * iterate is CROWN's lines), never above the sampled minimum (sound), and
 * above CROWN somewhere. */
START_TEST(test_direct_alpha_tangent)
{
    lg_rng r;
    lg_rng_init(&r, 31, 0);
    int better = 0;
    for (int a = 0; a < 5; a++)
        for (int t = 0; t < 4; t++) {
            lg_net net;
            lg_dir_net(&net, lg_smooth[a], 3, 8, 3, &r, 1.0);
            double lo[3], hi[3];
            lg_dir_box(lo, hi, 0.4, &r);
            lg_bounds b;
            ck_assert(lg_bounds_init(&b, &net) == LG_OK);
            ck_assert(lg_bounds_symbolic(&b, &net, lo, hi) == LG_OK);
            double C[9] = {1, -1, 0, 0, 1, -1, -1, 0, 1}, d[3] = {0.1, 0, -0.2}, crown[3], opt[3];
            double al[3 * 64];
            ck_assert(lg_alpha_size(&net) <= 64);
            ck_assert(lg_bounds_objective_lower(&b, &net, 3, C, d, crown) == LG_OK);
            lg_alpha_default(&b, &net, 3, al);
            lg_runctx run = lg_runctx_none();
            ck_assert_msg(lg_alpha_optimize(&b, &net, 3, C, d, 30, 0.1, &run, al, opt, NULL) == LG_OK, "%s", lg_errmsg());
            double smin[3] = {INFINITY, INFINITY, INFINITY}, x[3], y[3];
            for (int s = 0; s < 5000; s++) {
                for (int i = 0; i < 3; i++) x[i] = lo[i] + (hi[i] - lo[i]) * lg_rng_uniform(&r);
                lg_dir_forward(&net, x, NULL, y);
                for (int q = 0; q < 3; q++) {
                    double v = d[q] + C[3 * q] * y[0] + C[3 * q + 1] * y[1] + C[3 * q + 2] * y[2];
                    if (v < smin[q]) smin[q] = v;
                }
            }
            for (int q = 0; q < 3; q++) {
                ck_assert_msg(opt[q] >= crown[q] - 1e-12 * (1 + fabs(crown[q])), "%s: α-CROWN %g below CROWN %g",
                              lg_act_name(lg_smooth[a]), opt[q], crown[q]);
                ck_assert_msg(opt[q] <= smin[q] + 1e-12, "%s: α-CROWN %g above the sampled minimum %g",
                              lg_act_name(lg_smooth[a]), opt[q], smin[q]);
                better += opt[q] > crown[q] + 1e-9 * (1 + fabs(crown[q]));
            }
            lg_bounds_free(&b);
            lg_net_free(&net);
        }
    /* the lines of the family (verify/backsub.h) move every objective the lower lines enter;
     * tangents alone, jumping away from the area-best lines, improved 14 of 60 */
    ck_assert_msg(better >= 40, "α-CROWN improved on CROWN in only %d of 60 objectives", better);
}
END_TEST

/* α-optimised bounds with both line families (verify/backsub.h): from
 * random starting α (a third at the ends 0 and 1, a third NaN), with rates
 * up to 2 and the hidden layers first tightened by intermediate α-CROWN
 * (lg_alpha_tighten), every objective's bound stays below its sampled
 * minimum over the box; rows with negative output weights move the upper
 * lines. The bound of each row is also never below the bound at its own
 * starting α (the optimiser keeps the best bound seen). */
START_TEST(test_direct_alpha_families_oracle)
{
    lg_rng r;
    lg_rng_init(&r, 4242, 0);
    for (int a = 0; a < 5; a++)
        for (int t = 0; t < 6; t++) {
            lg_net net;
            lg_dir_net(&net, lg_smooth[a], 3, 8, 3, &r, 1.0 + t % 3);
            double lo[3], hi[3];
            lg_dir_box(lo, hi, t % 2 ? 0.5 : 0.1, &r);
            lg_bounds b;
            ck_assert(lg_bounds_init(&b, &net) == LG_OK);
            ck_assert(lg_bounds_symbolic(&b, &net, lo, hi) == LG_OK);
            double lr = t < 3 ? 0.1 : 2.0;
            int nt;
            ck_assert(lg_alpha_tighten(&b, &net, 1, 8, lr, NULL, &nt) == LG_OK);
            ck_assert(lg_bounds_symbolic_unstable_from(&b, &net, 2) == LG_OK);
            double C[9], d[3], start[3], opt[3], al[3 * 64], al0[3 * 64];
            for (int q = 0; q < 9; q++) C[q] = 2 * lg_rng_uniform(&r) - 1;
            for (int q = 0; q < 3; q++) d[q] = lg_rng_uniform(&r) - 0.5;
            int size = lg_alpha_size(&net);
            ck_assert(size <= 64);
            lg_alpha_default(&b, &net, 3, al);
            for (int i = 0; i < 3 * size; i++) {
                unsigned k = (unsigned)lg_rng_below(&r, 6);
                al[i] = k == 0 ? 0.0 : k == 1 ? 1.0 : k < 4 ? NAN : lg_rng_uniform(&r);
            }
            memcpy(al0, al, sizeof al);
            ck_assert(lg_alpha_bound(&b, &net, 3, C, d, al0, start, NULL, NULL, NULL) == LG_OK);
            lg_runctx run = lg_runctx_none();
            ck_assert(lg_alpha_optimize(&b, &net, 3, C, d, 25, lr, &run, al, opt, NULL) == LG_OK);
            double smin[3] = {INFINITY, INFINITY, INFINITY}, x[3], y[3];
            for (int sm = 0; sm < 6000; sm++) {
                for (int i = 0; i < 3; i++)
                    x[i] = sm < 8 ? ((sm >> i) & 1 ? hi[i] : lo[i]) : lo[i] + (hi[i] - lo[i]) * lg_rng_uniform(&r);
                lg_dir_forward(&net, x, NULL, y);
                for (int q = 0; q < 3; q++) {
                    double v = d[q] + C[3 * q] * y[0] + C[3 * q + 1] * y[1] + C[3 * q + 2] * y[2];
                    if (v < smin[q]) smin[q] = v;
                }
            }
            for (int q = 0; q < 3; q++) {
                ck_assert_msg(opt[q] <= smin[q] + 1e-12, "%s t=%d: α-CROWN %.17g above the sampled minimum %.17g",
                              lg_act_name(lg_smooth[a]), t, opt[q], smin[q]);
                ck_assert_msg(start[q] <= smin[q] + 1e-12, "%s t=%d: the bound at random α %.17g above the sampled "
                              "minimum %.17g", lg_act_name(lg_smooth[a]), t, start[q], smin[q]);
                ck_assert_msg(opt[q] >= start[q], "%s t=%d: optimised %g below its start %g",
                              lg_act_name(lg_smooth[a]), t, opt[q], start[q]);
            }
            lg_bounds_free(&b);
            lg_net_free(&net);
        }
}
END_TEST

/* Activation branch and bound's order (verify/bab_act.h): a node's
 * children depend only on the node, so best first and depth first bound
 * the same tree — on cases that need splitting both prove with the same
 * number of nodes (≥ 5); cut short at half of them, depth first has gone deeper
 * (one level per node until a leaf closes), best first no deeper in total. */
START_TEST(test_direct_bab_act_order)
{
    lg_rng r;
    lg_rng_init(&r, 99, 0);
    int cases = 0, deep_depth = 0, deep_best = 0;
    for (int a = 0; a < 5 && cases < 4; a++)
        for (int t = 0; t < 30 && cases < 4; t++) {
            lg_net net;
            lg_prop p;
            lg_dir_case(&net, &p, lg_smooth[a], t, &r);
            lg_bounds b;
            ck_assert(lg_bounds_init(&b, &net) == LG_OK);
            const lg_prop_case *C = &p.cases[0];
            ck_assert(lg_bounds_symbolic(&b, &net, C->lo, C->hi) == LG_OK);
            lg_runctx run = lg_runctx_none();
            lg_bab_act_out ob, od;
            ck_assert(lg_bab_act_run(&net, &b, C->n_terms, C->terms, &run, 400, 5, 0.1, LG_BAB_ACT_BEST, &ob) == LG_OK);
            if (ob.proved && ob.nodes >= 5) {
                ck_assert(lg_bab_act_run(&net, &b, C->n_terms, C->terms, &run, 400, 5, 0.1, LG_BAB_ACT_DEPTH, &od) ==
                          LG_OK);
                ck_assert_msg(od.proved && od.nodes == ob.nodes, "%s t=%d: depth first %s in %ld nodes, best first "
                              "proved in %ld", lg_act_name(lg_smooth[a]), t, od.proved ? "proved" : "did not prove",
                              od.nodes, ob.nodes);
                long half = ob.nodes / 2;
                ck_assert(lg_bab_act_run(&net, &b, C->n_terms, C->terms, &run, half, 5, 0.1, LG_BAB_ACT_BEST, &ob) ==
                          LG_OK);
                ck_assert(lg_bab_act_run(&net, &b, C->n_terms, C->terms, &run, half, 5, 0.1, LG_BAB_ACT_DEPTH, &od) ==
                          LG_OK);
                ck_assert(!ob.proved && !od.proved && ob.nodes == half && od.nodes == half);
                deep_best += ob.max_depth;
                deep_depth += od.max_depth;
                cases++;
            }
            lg_bounds_free(&b);
            lg_prop_free(&p);
            lg_net_free(&net);
        }
    ck_assert_msg(cases >= 2, "only %d cases needed activation splitting", cases);
    ck_assert_msg(deep_depth > deep_best, "depth first reached total depth %d, best first %d", deep_depth, deep_best);
}
END_TEST

/* β multipliers of activation splits at t ≠ 0 (verify/alpha.h, thr): on
 * the region z ≤ t (or z ≥ t) of one hidden neuron, every β ≥ 0 — random
 * ones up to 20, and the optimised ones — gives a bound below the sampled
 * minimum over that region, the optimised bound is never below CROWN's on
 * the narrowed intervals (β = 0), and it is above it somewhere. */
START_TEST(test_direct_beta_split)
{
    lg_rng r;
    lg_rng_init(&r, 77, 0);
    int better = 0, checked = 0;
    for (int a = 0; a < 5; a++)
        for (int t = 0; t < 6; t++) {
            lg_net net;
            lg_dir_net(&net, lg_smooth[a], 3, 8, 3, &r, 1.0);
            int sz = lg_alpha_size(&net);
            ck_assert(sz <= 64);
            double lo[3], hi[3];
            lg_dir_box(lo, hi, 0.5, &r);
            lg_bounds b;
            ck_assert(lg_bounds_init(&b, &net) == LG_OK);
            ck_assert(lg_bounds_symbolic(&b, &net, lo, hi) == LG_OK);
            /* split neuron j of layer k at a point strictly inside its interval, away from 0 */
            int k = t % 2, j = (int)(lg_rng_uniform(&r) * 8) % 8, side = (t / 2) % 2;
            double l0 = b.lo[k][j], h0 = b.hi[k][j], th = l0 + (0.3 + 0.4 * lg_rng_uniform(&r)) * (h0 - l0);
            if (!(th > l0 && th < h0) || th == 0.0) {
                lg_bounds_free(&b);
                lg_net_free(&net);
                continue;
            }
            if (side) b.lo[k][j] = th;
            else b.hi[k][j] = th;
            if (k + 1 < net.n_layers) ck_assert(lg_bounds_symbolic_unstable_from(&b, &net, k + 1) == LG_OK);
            signed char sign[64] = {0};
            double thr[64] = {0}, al[3 * 64], be[3 * 64] = {0}, crown[3], opt[3], rnd[3];
            int si = lg_alpha_offset(&net, k) + j;
            sign[si] = side ? -1 : +1;
            thr[si] = th;
            const lg_bounds *bp = &b;
            const signed char *sg = sign;
            const double *tp = thr;
            lg_alpha_batch bt = {1, &bp, &sg, NULL, &tp, 1};
            double C[9] = {1, -1, 0, 0, 1, -1, -1, 0, 1}, d[3] = {0.1, 0, -0.2};
            for (int q = 0; q < 3 * sz; q++) al[q] = NAN;
            ck_assert(lg_alpha_bound_batch(&bt, &net, 3, C, d, al, be, crown, NULL, NULL, NULL, NULL) == LG_OK);
            /* the sampled minimum over the region */
            double smin[3] = {INFINITY, INFINITY, INFINITY}, x[3], z[64], y[3];
            int in = 0;
            for (int s = 0; s < 20000; s++) {
                for (int i = 0; i < 3; i++) x[i] = lo[i] + (hi[i] - lo[i]) * lg_rng_uniform(&r);
                lg_dir_forward(&net, x, z, y);
                if (side ? z[si] < th : z[si] > th) continue;
                in++;
                for (int q = 0; q < 3; q++) {
                    double v = d[q] + C[3 * q] * y[0] + C[3 * q + 1] * y[1] + C[3 * q + 2] * y[2];
                    if (v < smin[q]) smin[q] = v;
                }
            }
            if (in < 50) {
                lg_bounds_free(&b);
                lg_net_free(&net);
                continue;
            }
            for (int rep = 0; rep < 20; rep++) {
                for (int q = 0; q < 3 * sz; q++) be[q] = 20.0 * lg_rng_uniform(&r) * lg_rng_uniform(&r);
                ck_assert(lg_alpha_bound_batch(&bt, &net, 3, C, d, al, be, rnd, NULL, NULL, NULL, NULL) == LG_OK);
                for (int q = 0; q < 3; q++)
                    ck_assert_msg(rnd[q] <= smin[q] + 1e-12, "%s: bound %g with β %g above the region's sampled minimum %g",
                                  lg_act_name(lg_smooth[a]), rnd[q], be[q * sz + si], smin[q]);
            }
            memset(be, 0, sizeof be);
            lg_runctx run = lg_runctx_none();
            ck_assert(lg_alpha_optimize_batch(&bt, &net, 3, C, d, 40, 0.1, &run, al, be, opt, NULL) == LG_OK);
            for (int q = 0; q < 3; q++) {
                ck_assert_msg(al[q * sz + si] != al[q * sz + si], "β-only optimisation moved α");
                ck_assert_msg(opt[q] >= crown[q] - 1e-12 * (1 + fabs(crown[q])), "%s: β bound %g below CROWN %g",
                              lg_act_name(lg_smooth[a]), opt[q], crown[q]);
                ck_assert_msg(opt[q] <= smin[q] + 1e-12, "%s: β bound %g above the region's sampled minimum %g",
                              lg_act_name(lg_smooth[a]), opt[q], smin[q]);
                better += opt[q] > crown[q] + 1e-6 * (1 + fabs(crown[q]));
            }
            checked++;
            lg_bounds_free(&b);
            lg_net_free(&net);
        }
    ck_assert_msg(checked >= 10, "only %d splits checked", checked);
    ck_assert_msg(better >= 3, "β improved on CROWN in only %d of %d objectives", better, 3 * checked);
}
END_TEST

/* The PyTorch exports of tests/fixtures/torch_smooth (gen.py: torch.nn.GELU,
 * Sigmoid and SiLU MLPs from torch.onnx.export) import as smooth nets whose
 * double forward pass matches the outputs torch recorded (float32, so to
 * ~1e-5), and verify directly: the small-radius property is decided and
 * agrees with dense sampling; the large-radius one, where torch's own
 * sampling found a counterexample, is `violated` with a witness that passes
 * the MPFR gate — never `robust`. */
START_TEST(test_direct_torch_fixtures)
{
    const char *names[] = {"gelu", "sigmoid", "silu"};
    const lg_act kinds[] = {LG_ACT_LGELU, LG_ACT_SIGMOID, LG_ACT_SWISH}; /* the file's √2 is fl32(√2): an lgelu λ ≈ 1 */
    lg_rng r;
    lg_rng_init(&r, 13, 0);
    char path[1024];
    lg_npy X, Y;
    snprintf(path, sizeof path, "%s/torch_smooth/X.npy", LG_FIXTURES);
    ck_assert_msg(lg_npy_load(&X, path) == LG_OK, "%s: %s", path, lg_errmsg());
    ck_assert(X.n == 8 && X.cols == 4);
    for (int v = 0; v < 3; v++) {
        lg_net net;
        snprintf(path, sizeof path, "%s/torch_smooth/%s.onnx", LG_FIXTURES, names[v]);
        ck_assert_msg(lg_net_load(&net, path) == LG_OK, "%s: %s", path, lg_errmsg());
        ck_assert(lg_bounds_net_smooth(&net));
        ck_assert_int_eq(net.n_in, 4);
        ck_assert_int_eq(lg_net_n_out(&net), 3);
        for (int k = 0; k < net.n_layers - 1; k++)
            ck_assert_msg(net.layers[k].act == kinds[v], "%s: layer %d is %s", names[v], k,
                          lg_act_name(net.layers[k].act));
        snprintf(path, sizeof path, "%s/torch_smooth/%s_y.npy", LG_FIXTURES, names[v]);
        ck_assert_msg(lg_npy_load(&Y, path) == LG_OK, "%s: %s", path, lg_errmsg());
        ck_assert(Y.n == 8 && Y.cols == 3);
        double *scr = malloc(2 * (size_t)lg_net_max_width(&net) * sizeof *scr), y[3];
        ck_assert(scr);
        for (size_t i = 0; i < 8; i++) {
            lg_net_forward(&net, X.data + 4 * i, y, scr);
            for (int j = 0; j < 3; j++) {
                double t = Y.data[3 * i + (size_t)j];
                ck_assert_msg(fabs(y[j] - t) <= 1e-5 * (1 + fabs(t)), "%s: input %zu output %d: lgelu %.9g, torch %.9g",
                              names[v], i, j, y[j], t);
            }
        }
        free(scr);
        lg_npy_free(&Y);
        for (int q = 0; q < 2; q++) {
            snprintf(path, sizeof path, "%s/torch_smooth/%s_%s.vnnlib", LG_FIXTURES, names[v], q ? "large" : "small");
            lg_prop p;
            ck_assert_msg(lg_vnnlib_read(&p, path, 4, 3) == LG_OK, "%s: %s", path, lg_errmsg());
            lg_verify_opts o = lg_verify_opts_default();
            o.timeout_s = 30;
            o.bab.threads = 1;
            lg_verify_report rep;
            ck_assert_msg(lg_verify_run(&net, &p, &o, &rep) == LG_OK, "%s: %s", path, lg_errmsg());
            double w = lg_dir_oracle(&net, &p, &r);
            ck_assert_msg(!(rep.verdict == LG_VERDICT_ROBUST && w < -1e-9), "%s: robust but sampling finds %g", path, w);
            ck_assert_msg(rep.verdict != LG_VERDICT_UNKNOWN, "%s: unknown (%s)", path, rep.how.reason);
            if (rep.verdict == LG_VERDICT_VIOLATED) {
                double yw[3];
                ck_assert_msg(lg_witness_accept(&net, &p, 0, rep.x, yw) == 1, "%s: witness fails the gate", path);
            }
            if (q == 1) {
                ck_assert_msg(w < 0.0, "%s: torch found a counterexample, the sampling here none (%g)", path, w);
                ck_assert_msg(rep.verdict == LG_VERDICT_VIOLATED, "%s: %s", path, lg_verdict_name(rep.verdict));
            }
            lg_verify_report_free(&rep);
            lg_prop_free(&p);
        }
        lg_net_free(&net);
    }
    lg_npy_free(&X);
}
END_TEST

/* The complete back-ends encode piecewise-linear nets only: a clear refusal. */
START_TEST(test_direct_backend_refused)
{
    lg_rng r;
    lg_rng_init(&r, 5, 0);
    lg_net net;
    lg_dir_net(&net, LG_ACT_GELU, 3, 4, 2, &r, 1.0);
    double x0[3] = {0, 0, 0};
    lg_prop p;
    ck_assert(lg_prop_robustness(&p, x0, 3, 0.1, -1, 1, 0, 2, 0.0) == LG_OK);
    const char *solvers[] = {"z3", "glpk"};
    for (int s = 0; s < 2; s++) {
        lg_verify_opts o = lg_verify_opts_default();
        o.solver = lg_test_solver(solvers[s]);
        lg_verify_report rep;
        ck_assert(lg_verify_run(&net, &p, &o, &rep) == LG_ERR_UNSUPPORTED);
        ck_assert_msg(strstr(lg_errmsg(), "piecewise-linear") && strstr(lg_errmsg(), solvers[s]), "%s", lg_errmsg());
        lg_verify_report_free(&rep);
    }
    lg_prop_free(&p);
    lg_net_free(&net);
}
END_TEST

/* PyTorch-pattern ONNX exports (nn.GELU: Div √2, Erf, Add 1, Mul, Mul 0.5;
 * nn.Sigmoid) load as smooth nets and verify directly, the verdicts checked
 * against the sampling oracle. */
START_TEST(test_direct_onnx_exports)
{
    char dir[256], cmd[1024];
    snprintf(dir, sizeof dir, "%s", lg_test_tmpfile("_onnx"));
    snprintf(cmd, sizeof cmd, "%s %s/tests/onnx_make.py %s >/dev/null 2>&1", LG_PYTHON3, LG_SOURCE_DIR, dir);
    ck_assert_msg(system(cmd) == 0, "tests/onnx_make.py failed (python3-onnx, python3-numpy)");
    const char *names[] = {"ok_gelu_torch", "ok_sigmoid", "ok_silu_torch"};
    lg_rng r;
    lg_rng_init(&r, 9, 0);
    for (int v = 0; v < 3; v++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s.onnx", dir, names[v]);
        lg_net net;
        ck_assert_msg(lg_net_load(&net, path) == LG_OK, "%s: %s", names[v], lg_errmsg());
        ck_assert(lg_bounds_net_smooth(&net));
        int decided = 0;
        for (int t = 0; t < 6; t++) {
            double x0[4], y0[8];
            for (int i = 0; i < 4; i++) x0[i] = 2 * lg_rng_uniform(&r) - 1;
            lg_dir_forward(&net, x0, NULL, y0);
            int no = lg_net_n_out(&net), label = 0;
            for (int j = 1; j < no; j++)
                if (y0[j] > y0[label]) label = j;
            lg_prop p;
            ck_assert(lg_prop_robustness(&p, x0, 4, t < 3 ? 0.01 : 0.5, -10, 10, label, no, 0.0) == LG_OK);
            lg_verify_opts o = lg_verify_opts_default();
            o.timeout_s = 5;
            o.bab.threads = 1;
            lg_verify_report rep;
            ck_assert_msg(lg_verify_run(&net, &p, &o, &rep) == LG_OK, "%s: %s", names[v], lg_errmsg());
            double w = lg_dir_oracle(&net, &p, &r);
            ck_assert_msg(!(rep.verdict == LG_VERDICT_ROBUST && w < -1e-9), "%s: robust but sampling finds %g", names[v], w);
            decided += rep.verdict != LG_VERDICT_UNKNOWN;
            lg_verify_report_free(&rep);
            lg_prop_free(&p);
        }
        ck_assert_msg(decided >= 4, "%s: only %d of 6 decided", names[v], decided);
        lg_net_free(&net);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert(system(cmd) == 0);
}
END_TEST


/* Activation splitting under a memory cap (verify --memory): cases it
 * proves with several nodes become unknown, reason memory, when the cap
 * cannot hold its open nodes; never a different verdict. */
START_TEST(test_direct_bab_act_memory)
{
    lg_rng r;
    lg_rng_init(&r, 2027, 0);
    int hit = 0;
    for (int a = 0; a < 5; a++)
        for (int t = 0; t < 12; t++) {
            lg_net net;
            lg_prop p;
            lg_dir_case(&net, &p, lg_smooth[a], t, &r);
            lg_verify_opts o = lg_verify_opts_default();
            o.timeout_s = 5;
            o.bab.threads = 1;
            o.bab.mode = LG_BAB_NONE;
            lg_verify_report rep;
            ck_assert(lg_verify_run(&net, &p, &o, &rep) == LG_OK);
            if (strcmp(rep.method, "bab-act") == 0 && rep.bab_nodes > 2) {
                lg_verify_report cap;
                o.memory_mb = 1e-6; /* not even two nodes */
                ck_assert(lg_verify_run(&net, &p, &o, &cap) == LG_OK);
                ck_assert_msg(cap.verdict == LG_VERDICT_UNKNOWN && strstr(cap.how.reason, "memory"),
                              "%s t=%d: %s (%s) under a 1-byte cap", lg_act_name(lg_smooth[a]), t,
                              lg_verdict_name(cap.verdict), cap.how.reason);
                hit++;
                lg_verify_report_free(&cap);
            }
            lg_verify_report_free(&rep);
            lg_prop_free(&p);
            lg_net_free(&net);
        }
    ck_assert_msg(hit >= 1, "no case needed activation splitting");
}
END_TEST

Suite *suite_direct(void)
{
    Suite *s = suite_create("direct");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 600);
    tcase_add_test(tc, test_direct_bounds_contain);
    tcase_add_test(tc, test_direct_alpha_tangent);
    tcase_add_test(tc, test_direct_beta_split);
    tcase_add_loop_test(tc, test_direct_verdicts_vs_oracle, 0, 2);
    tcase_add_test(tc, test_direct_bab_act_memory);
    tcase_add_test(tc, test_direct_alpha_families_oracle);
    tcase_add_test(tc, test_direct_bab_act_order);
    tcase_add_test(tc, test_direct_onnx_exports);
    tcase_add_test(tc, test_direct_torch_fixtures);
    suite_add_tcase(s, tc);
    TCase *lim = tcase_create("limits");
    lg_tcase_timeout(lim, 120);
    tcase_add_test(lim, test_direct_backend_refused);
    suite_add_tcase(s, lim);
    return s;
}
