/* tf_widths.c — how tight the bounds of a Transformer net are, node by node:
 * for one Fashion-MNIST test image and radius ε, the back-substitution
 * bounds (lg_bounds_symbolic, DESIGN.md §3 "Back-substitution through the
 * Transformer nodes") against the node values of sampled points of the box
 * (its corners' signs drawn at random, half the points uniform). Prints per
 * node the mean bound width, the mean sampled width and their ratio, and the
 * worst margin lower bound of the image's label against the sampled minimum.
 * Run: build/lgelu_tf_widths NET INDEX EPS [N_SAMPLES] [DATA_DIR]
 * (the net's inputs clipped to [0, 1] as `lgelu verify` does). TFW_DUMP=FILE writes
 * every bound and the objective's lower bounds in hex to FILE (two builds compared bit for bit). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/idx.h"
#include "core/net.h"
#include "core/rng.h"
#include "onnx/load.h"
#include "verify/bounds.h"
#include "verify/relax_layernorm.h"
#include "verify/relax_softmax.h"
#include "verify/opstage.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s NET INDEX EPS [N_SAMPLES] [DATA_DIR]\n", argv[0]);
        return 2;
    }
    int idx = atoi(argv[2]), ns = argc > 4 ? atoi(argv[4]) : 300;
    double eps = atof(argv[3]);
    lg_net net;
    lg_dataset ds;
    if (lg_net_load(&net, argv[1]) != LG_OK) return 1;
    if (lg_data_load(&ds, argc > 5 ? argv[5] : LG_DATA_DEFAULT_DIR, "test") != LG_OK) return 1;
    int n = net.n_in, no = lg_net_n_out(&net), label = ds.y[idx];
    double *lo = malloc(4 * (size_t)n * sizeof *lo), *hi = lo + n, *x = hi + n, *c = x + n;
    for (int i = 0; i < n; i++) {
        c[i] = ds.x[(size_t)idx * (size_t)ds.dim + (size_t)i];
        lo[i] = fmax(0.0, c[i] - eps);
        hi[i] = fmin(1.0, c[i] + eps);
    }
    lg_bounds b;
    if (lg_bounds_init(&b, &net) != LG_OK) return 1;
    double t0 = now();
    lg_status st = lg_bounds_symbolic(&b, &net, lo, hi);
    double t1 = now();
    double *C = calloc((size_t)no * (size_t)no, sizeof *C), *d = calloc((size_t)no, sizeof *d),
           *ob = calloc((size_t)no, sizeof *ob);
    int m = 0;
    for (int j = 0; j < no; j++)
        if (j != label) {
            C[(size_t)m * (size_t)no + (size_t)label] = 1;
            C[(size_t)m * (size_t)no + (size_t)j] = -1;
            m++;
        }
    lg_bounds_objective_lower(&b, &net, m, C, d, ob);
    double t2 = now();
    if (getenv("TFW_DUMP")) { /* every bound and the objective in hex, to compare two builds bit for bit */
        FILE *f = fopen(getenv("TFW_DUMP"), "w");
        if (!f) return 1;
        for (int k = 0; k < net.n_layers; k++)
            for (int o = 0; o < net.layers[k].n_out; o++) fprintf(f, "%d %d %a %a\n", k, o, b.lo[k][o], b.hi[k][o]);
        for (int j = 0; j < m; j++) fprintf(f, "obj %d %a\n", j, ob[j]);
        fclose(f);
    }
    size_t nl = lg_net_nodes_len(&net);
    double *vals = malloc(4 * nl * sizeof *vals), *pre = vals + nl, *smin = pre + nl, *smax = smin + nl;
    for (size_t i = 0; i < nl; i++) {
        smin[i] = INFINITY;
        smax[i] = -INFINITY;
    }
    double mmin = INFINITY;
    lg_rng r;
    lg_rng_init(&r, 1, 7);
    for (int s = 0; s < ns; s++) {
        for (int i = 0; i < n; i++) {
            double u = lg_rng_uniform(&r);
            x[i] = s % 2 ? lo[i] + u * (hi[i] - lo[i]) : (u < 0.5 ? lo[i] : hi[i]);
        }
        lg_net_forward_nodes(&net, x, vals, pre);
        for (int k = 0; k < net.n_layers; k++) {
            const lg_layer *L = &net.layers[k];
            size_t off = lg_net_node_offset(&net, k);
            for (int o = 0; o < L->n_out; o++) {
                double z = lg_kind_is_tnode(L->lin.kind) ? vals[off + (size_t)o] : pre[off + (size_t)o];
                smin[off + (size_t)o] = fmin(smin[off + (size_t)o], z);
                smax[off + (size_t)o] = fmax(smax[off + (size_t)o], z);
            }
        }
        size_t off = lg_net_node_offset(&net, net.n_layers - 1);
        for (int j = 0; j < no; j++)
            if (j != label) mmin = fmin(mmin, vals[off + (size_t)label] - vals[off + (size_t)j]);
    }
    /* the linearisation at the box's centre: per node Σ_j |∂z/∂x_j|·(hi_j − lo_j) by
     * forward differences (the range of the first-order model; exact for affine nodes) */
    double *lin = calloc(nl, sizeof *lin), *v0 = malloc(2 * nl * sizeof *v0), *p0 = v0 + nl;
    for (int i = 0; i < n; i++) x[i] = 0.5 * lo[i] + 0.5 * hi[i];
    lg_net_forward_nodes(&net, x, v0, p0);
    for (int i = 0; i < n && eps > 0; i++) {
        if (!(hi[i] > lo[i])) continue;
        double h = 1e-6, keep = x[i];
        x[i] = keep + h;
        lg_net_forward_nodes(&net, x, vals, pre);
        x[i] = keep;
        for (int k = 0; k < net.n_layers; k++) {
            const lg_layer *L = &net.layers[k];
            size_t off = lg_net_node_offset(&net, k);
            const double *a = lg_kind_is_tnode(L->lin.kind) ? vals : pre, *a0 = lg_kind_is_tnode(L->lin.kind) ? v0 : p0;
            for (int o = 0; o < L->n_out; o++)
                lin[off + (size_t)o] += fabs(a[off + (size_t)o] - a0[off + (size_t)o]) / h * (hi[i] - lo[i]);
        }
    }
    printf("net %s image %d label %d eps %g: bounds %s in %.2f s, objective %.2f s\n", argv[1], idx, label, eps,
           st == LG_OK ? "ok" : "FAILED", t1 - t0, t2 - t1);
    printf("%-4s %-10s %-9s %6s %12s %12s %9s %12s %9s %8s\n", "node", "kind", "act", "n_out", "bound_width", "sampled",
           "ratio", "linearised", "ratio", "unstable");
    for (int k = 0; k < net.n_layers; k++) {
        const lg_layer *L = &net.layers[k];
        size_t off = lg_net_node_offset(&net, k);
        double bw = 0, sw = 0, lw = 0;
        for (int o = 0; o < L->n_out; o++) {
            bw += b.hi[k][o] - b.lo[k][o];
            sw += smax[off + (size_t)o] - smin[off + (size_t)o];
            lw += lin[off + (size_t)o];
        }
        bw /= L->n_out;
        sw /= L->n_out;
        lw /= L->n_out;
        printf("%-4d %-10s %-9s %6d %12.4g %12.4g %9.3g %12.4g %9.3g %8d\n", k, lg_kind_name(L->lin.kind),
               lg_act_name(L->act), L->n_out, bw, sw, sw > 0 ? bw / sw : 0.0, lw, lw > 0 ? bw / lw : 0.0,
               lg_bounds_unstable(&b, &net, k));
    }
    if (getenv("TFW_GROUPS")) {
        int k = atoi(getenv("TFW_GROUPS"));
        const lg_layer *L = &net.layers[k];
        int gs = L->lin.op.group > 0 ? L->lin.op.group : 1;
        size_t off = lg_net_node_offset(&net, k), soff = lg_net_node_offset(&net, L->lin.src);
        for (int i = 0; i < n; i++) x[i] = c[i];
        lg_net_forward_nodes(&net, x, vals, pre);
        for (int G = 0; G < L->n_out / gs; G++) {
            double bw = 0, sw = 0, iw = 0, mu = 0, v = 0;
            for (int j = 0; j < gs; j++) {
                int o = G * gs + j;
                bw += b.hi[k][o] - b.lo[k][o];
                sw += smax[off + (size_t)o] - smin[off + (size_t)o];
                iw += L->lin.src >= 0 ? b.hi[L->lin.src][o] - b.lo[L->lin.src][o] : 0;
                mu += vals[soff + (size_t)o];
            }
            mu /= gs;
            for (int j = 0; j < gs; j++) v += (vals[soff + (size_t)(G * gs + j)] - mu) * (vals[soff + (size_t)(G * gs + j)] - mu);
            if (L->lin.kind == LG_LAYER_LAYERNORM || L->lin.kind == LG_LAYER_SOFTMAX) {
                static double ll[64], uu[64], lw[4096], uw[4096], lc[64], uc[64];
                static lg_dv wk[LG_SOFTMAX_WORK(64) + LG_LAYERNORM_WORK(64)];
                for (int j = 0; j < gs; j++) {
                    lg_bounds_post(&net.layers[L->lin.src], b.lo[L->lin.src][G * gs + j], b.hi[L->lin.src][G * gs + j], &ll[j], &uu[j]);
                }
                if (L->lin.kind == LG_LAYER_LAYERNORM) {
                    lg_ln_region reg;
                    lg_ln_region_of(&b, &net, k, G, &reg);
                    const double *clo = reg.clo, *chi = reg.chi;
                    lg_relax_layernorm_ex((size_t)gs, ll, uu, &reg, L->lin.op.eps, L->lin.W, L->lin.W + gs, NULL, lw, lc, uw, uc,
                                          NULL, wk);
                    double cw = 0;
                    for (int j = 0; clo && j < gs; j++) cw += chi[j] - clo[j];
                    printf("  centred input width %.4g\n", cw / gs);
                }
                else
                    lg_relax_softmax((size_t)gs, ll, uu, NULL, lw, lc, uw, uc, wk);
                double gap = 0, fo = 0;
                for (int i = 0; i < gs; i++) {
                    double cl = lc[i], cu = uc[i], f = 0;
                    for (int j = 0; j < gs; j++) {
                        double mc = 0.5 * (ll[j] + uu[j]);
                        cl += lw[i * gs + j] * mc;
                        cu += uw[i * gs + j] * mc;
                        f += fabs(lw[i * gs + j]) * (uu[j] - ll[j]);
                    }
                    gap += cu - cl;
                    fo += f;
                }
                printf("  planes: gap at centre %.4g, first-order width %.4g\n", gap / gs, fo / gs);
            }
            printf("group %2d: bound %.4g sampled %.4g ratio %.3g  input width %.4g  sigma %.4g\n", G, bw / gs, sw / gs,
                   bw / sw, iw / gs, sqrt(v / gs));
        }
    }
    double wb = INFINITY;
    for (int j = 0; j < m; j++) wb = fmin(wb, ob[j]);
    printf("margin: worst lower bound %.6g, sampled minimum %.6g\n", wb, mmin);
    return 0;
}
