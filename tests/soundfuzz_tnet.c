/* soundfuzz_tnet.c — the attention-block class of the differential
 * soundness fuzzer (soundfuzz.h lg_fuzz_tnet). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/rng.h"
#include "gen_tnet.h"
#include "soundfuzz.h"
#include "test_solver.h"
#include "verify/attack.h"
#include "verify/bounds.h"
#include "verify/prop.h"
#include "verify/verify.h"

#define FT_MAXIN 64

/* The property's margin at x: min over j ≠ lab of y_lab − y_j (≤ 0: violated). */
static double ft_margin(const lg_net *net, const double *x, int lab, double *y, double *scratch)
{
    lg_net_forward(net, x, y, scratch);
    double m = INFINITY;
    for (int j = 0; j < lg_net_n_out(net); j++)
        if (j != lab && y[lab] - y[j] < m) m = y[lab] - y[j];
    return m;
}

/* Every node's value at x within the bounds b; 0 if one is outside. */
static int ft_inside(const lg_net *net, const lg_bounds *b, const double *x, double *vals, double *pre)
{
    lg_net_forward_nodes(net, x, vals, pre);
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        size_t off = lg_net_node_offset(net, k);
        for (int o = 0; o < L->n_out; o++) {
            double z = lg_kind_is_tnode(L->lin.kind) ? vals[off + (size_t)o] : pre[off + (size_t)o];
            double tol = 1e-12 * (1.0 + fabs(z));
            if (!(z >= b->lo[k][o] - tol && z <= b->hi[k][o] + tol)) return 0;
        }
    }
    return 1;
}

long lg_fuzz_tnet(unsigned long seed, long batch, long n, const lg_fuzz_opts *o, lg_fuzz_stats *s, FILE *log)
{
    long bad = 0;
    for (long q = 0; q < n; q++) {
        lg_rng r;
        lg_rng_init(&r, (uint64_t)seed ^ 0x7a77e47104ULL, (uint64_t)(batch * n + q));
        /* per-token maps, every 4th net their dense form; every other net a layernorm before its MLP */
        lg_test_tnet_opts to = {.dense_maps = (int)(q % 4 == 3), .post_norm = (int)(q % 2 == 0)};
        lg_net net;
        if (lg_test_tnet_random(&net, &r, &to) != LG_OK) {
            fprintf(log, "soundfuzz: tnet %ld/%ld: %s\n", batch, q, lg_errmsg());
            s->errors++;
            bad++;
            continue;
        }
        s->tnet_nets++;
        int ni = net.n_in, no = lg_net_n_out(&net);
        size_t nl = lg_net_nodes_len(&net);
        double *vals = malloc(2 * nl * sizeof *vals), *pre = vals + nl;
        double x0[FT_MAXIN], x[FT_MAXIN], xb[FT_MAXIN], y[8], scratch[1024];
        for (int i = 0; i < ni; i++) x0[i] = 2.0 * lg_rng_uniform(&r) - 1.0;
        lg_net_forward(&net, x0, y, scratch);
        int lab = 0;
        for (int j = 1; j < no; j++)
            if (y[j] > y[lab]) lab = j;
        static const double eps_list[5] = {1e-4, 3e-3, 0.03, 0.15, 0.5};
        double eps = eps_list[lg_rng_below(&r, 5)];
        lg_prop p;
        if (lg_prop_robustness(&p, x0, ni, eps, -10.0, 10.0, lab, no, 0.0) != LG_OK) {
            s->errors++;
            bad++;
            free(vals);
            lg_net_free(&net);
            continue;
        }
        const double *lo = p.cases[0].lo, *hi = p.cases[0].hi;
        /* bounds under test: every node and one objective, judged at every searched point */
        lg_bounds b;
        memset(&b, 0, sizeof b);
        int bok = lg_bounds_init(&b, &net) == LG_OK && lg_bounds_symbolic(&b, &net, lo, hi) == LG_OK;
        double C[8] = {0}, d = 0.0, lb = -INFINITY;
        int oj = (lab + 1) % no;
        C[lab] = 1.0, C[oj] = -1.0;
        if (bok && lg_bounds_objective_lower(&b, &net, 1, C, &d, &lb) != LG_OK) bok = 0;
        if (!bok) {
            fprintf(log, "soundfuzz: tnet %ld/%ld: bounds failed: %s\n", batch, q, lg_errmsg());
            s->errors++;
            bad++;
        }
        /* the oracle's search: centre, corners, uniform points, then a pattern search from the best */
        double best = INFINITY;
        int wrong_bound = 0;
        for (int sm = 0; sm < 400; sm++) {
            for (int i = 0; i < ni; i++) {
                double u = sm == 0 ? 0.5 : sm < 150 ? (double)lg_rng_below(&r, 2) : lg_rng_uniform(&r);
                x[i] = lo[i] + u * (hi[i] - lo[i]);
            }
            double m = ft_margin(&net, x, lab, y, scratch);
            if (bok && (!ft_inside(&net, &b, x, vals, pre) || y[lab] - y[oj] < lb - 1e-12 * (1.0 + fabs(lb))))
                wrong_bound = 1;
            s->tnet_bound_checks++;
            if (m < best) best = m, memcpy(xb, x, (size_t)ni * sizeof *x);
        }
        for (double step = 0.25; step > 1e-3; step *= 0.5)
            for (int it = 0; it < 3 * ni; it++) {
                int i = it % ni;
                for (int sg = -1; sg <= 1; sg += 2) {
                    memcpy(x, xb, (size_t)ni * sizeof *x);
                    x[i] += sg * step * (hi[i] - lo[i]);
                    x[i] = x[i] < lo[i] ? lo[i] : x[i] > hi[i] ? hi[i] : x[i];
                    double m = ft_margin(&net, x, lab, y, scratch);
                    if (bok && (!ft_inside(&net, &b, x, vals, pre) || y[lab] - y[oj] < lb - 1e-12 * (1.0 + fabs(lb))))
                        wrong_bound = 1;
                    s->tnet_bound_checks++;
                    if (m < best) best = m, memcpy(xb, x, (size_t)ni * sizeof *x);
                }
            }
        if (wrong_bound) {
            fprintf(log, "soundfuzz: tnet %ld/%ld eps %g: WRONG-BOUND (a searched point outside the "
                         "back-substitution bounds)\n", batch, q, eps);
            s->tnet_wrong++;
            bad++;
        }
        int known = best < -1e-9;
        s->tnet_known += known;
        for (int mode = 0; mode < 12; mode++) {
            lg_verify_opts vo = lg_verify_opts_default();
            vo.timeout_s = o->timeout_s;
            vo.solver = lg_test_solver(mode % 2 ? "none" : "auto");
            vo.bab.mode = (mode / 2) % 3 == 0 ? LG_BAB_NONE : (mode / 2) % 3 == 1 ? LG_BAB_INPUT : LG_BAB_AUTO;
            vo.attack = mode < 6;
            vo.seed = seed + (unsigned long)q;
            lg_verify_report rep;
            double t = lg_now();
            lg_status st = lg_verify_run(&net, &p, &vo, &rep);
            s->t_verify += lg_now() - t;
            s->tnet_runs++;
            if (st != LG_OK) {
                fprintf(log, "soundfuzz: tnet %ld/%ld mode %d: error %s\n", batch, q, mode, lg_errmsg());
                s->errors++;
                bad++;
                continue;
            }
            if (rep.verdict == LG_VERDICT_ROBUST) {
                s->tnet_robust++;
                if (known) {
                    fprintf(log, "soundfuzz: tnet %ld/%ld eps %g mode %d: WRONG-ROBUST (search margin %.3g)\n", batch,
                            q, eps, mode, best);
                    s->tnet_wrong++;
                    bad++;
                }
            } else if (rep.verdict == LG_VERDICT_VIOLATED) {
                s->tnet_violated++;
                int in = rep.x != NULL;
                for (int i = 0; in && i < ni; i++) in = rep.x[i] >= lo[i] && rep.x[i] <= hi[i];
                if (!in || ft_margin(&net, rep.x, lab, y, scratch) > 1e-9) {
                    fprintf(log, "soundfuzz: tnet %ld/%ld eps %g mode %d: WRONG-WITNESS\n", batch, q, eps, mode);
                    s->tnet_wrong++;
                    bad++;
                }
            }
            lg_verify_report_free(&rep);
        }
        lg_bounds_free(&b);
        lg_prop_free(&p);
        free(vals);
        lg_net_free(&net);
    }
    return bad;
}
