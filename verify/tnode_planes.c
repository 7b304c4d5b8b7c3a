/* tnode_planes.c — the Transformer nodes' relaxation rows for the
 * back-ends (tnode_planes.h), from the planes of relax_bilinear.h,
 * relax_softmax.h and relax_layernorm.h. */
#include "verify/tnode_planes.h"

#include <math.h>
#include <stdlib.h>

#include "verify/relax_bilinear.h"
#include "verify/relax_layernorm.h"
#include "verify/relax_softmax.h"
#include "verify/opstage.h"

lg_status lg_tnode_relax_check(const lg_net *net)
{
    for (int k = 0; k < net->n_layers; k++) {
        lg_act a = net->layers[k].act;
        if (a != LG_ACT_RELU && a != LG_ACT_IDENTITY)
            return lg_fail(LG_ERR_UNSUPPORTED, "layer %d has activation %s: a network with Transformer nodes is "
                           "verified with relu and identity activations only (substitute ReLU first)", k,
                           lg_act_name(a) ? lg_act_name(a) : "?");
    }
    if (lg_net_has_max(net))
        return lg_fail(LG_ERR_UNSUPPORTED, "verification does not take max-pool and Transformer nodes in one network yet");
    return LG_OK;
}

/* Post-activation bounds of entry i of node src (the normalised input for LG_NET_INPUT). */
static void tp_post(const lg_net *net, const lg_bounds *b, int src, int i, double *lo, double *hi)
{
    if (src < 0) {
        *lo = b->xlo[i], *hi = b->xhi[i];
        return;
    }
    lg_bounds_post(&net->layers[src], b->lo[src][i], b->hi[src][i], lo, hi);
}

/* One product pair's planes on v(pa)·v(pb) into rows on target t. */
static lg_status tp_pair(lg_trelax *r, int t, int pa, int pb, double la, double ua, double lb, double ub)
{
    lg_status st = LG_OK;
    for (int side = 0; side < 2 && st == LG_OK; side++) {
        lg_bilinear_planes P;
        double al = side == 0 ? 1.0 : 0.0;
        if (!lg_relax_bilinear(la, ua, lb, ub, al, al, &P)) continue; /* vacuous */
        /* t − a·x − b·y ≥ lo_c ; t − a·x − b·y ≤ up_c */
        for (int up = 0; up < 2 && st == LG_OK; up++) {
            double a = up ? P.up_a : P.lo_a, bb = up ? P.up_b : P.lo_b, c = up ? P.up_c : P.lo_c;
            int var[3] = {t, pa, pb};
            double coef[3] = {1.0, -a, -bb};
            int n = 3;
            if (pa == pb) { /* x·x: one coefficient, kept only when the sum is exact */
                double s = a + bb;
                if (!isfinite(s) || s - a != bb || s - bb != a) continue;
                coef[1] = -s;
                n = 2;
            }
            if (!isfinite(c)) continue;
            st = lg_trelax_add_row(r, up ? 'L' : 'G', c, n, var, coef);
        }
    }
    return st;
}

static lg_status tp_product(const lg_net *net, const lg_bounds *b, int k, lg_trelax *r)
{
    const lg_layer *L = &net->layers[k];
    int K = L->lin.op.K, n = L->n_out;
    const int *ia = L->lin.map, *ib = L->lin.map + (size_t)n * (size_t)K;
    int oa = (int)lg_net_node_offset(net, L->lin.src), ob = (int)lg_net_node_offset(net, L->lin.op.src_b);
    int oz = (int)lg_net_node_offset(net, k);
    int *var = malloc(((size_t)K + 1) * sizeof *var);
    double *coef = malloc(((size_t)K + 1) * sizeof *coef);
    lg_status st = LG_OK;
    if (!var || !coef) {
        st = lg_fail(LG_ERR_NOMEM, "relaxation: out of memory");
        goto done;
    }
    for (int o = 0; o < n && st == LG_OK; o++) {
        var[0] = oz + o;
        coef[0] = 1.0;
        for (int q = 0; q < K && st == LG_OK; q++) {
            size_t e = (size_t)o * (size_t)K + (size_t)q;
            double la, ua, lb, ub;
            tp_post(net, b, L->lin.src, ia[e], &la, &ua);
            tp_post(net, b, L->lin.op.src_b, ib[e], &lb, &ub);
            int t = oz + o;
            if (K > 1) { /* the pair's own value, within its image */
                double pl, ph;
                lg_bilinear_image(la, ua, lb, ub, &pl, &ph);
                if (!isfinite(pl) || !isfinite(ph)) {
                    st = lg_fail(LG_ERR_ARG, "relaxation: layer %d: a product's bounds are not finite", k);
                    break;
                }
                if ((st = lg_trelax_add_aux(r, pl, ph, &t))) break;
                var[q + 1] = t;
                coef[q + 1] = -1.0;
            }
            st = tp_pair(r, t, oa + ia[e], ob + ib[e], la, ua, lb, ub);
        }
        if (st == LG_OK && K > 1) st = lg_trelax_add_row(r, 'E', 0.0, K + 1, var, coef); /* z − Σ t = 0 */
    }
    r->n_product++;
done:
    free(var);
    free(coef);
    return st;
}

/* Softmax or layernorm: per group, each output between its two planes. */
static lg_status tp_group(const lg_net *net, const lg_bounds *b, int k, lg_trelax *r)
{
    const lg_layer *L = &net->layers[k];
    size_t g = (size_t)L->lin.op.group, n = (size_t)L->n_out;
    int os = (int)lg_net_node_offset(net, L->lin.src), oz = (int)lg_net_node_offset(net, k);
    int soft = L->lin.kind == LG_LAYER_SOFTMAX;
    double *lu = malloc(2 * g * sizeof *lu), *lo_w = malloc(g * g * sizeof *lo_w), *up_w = malloc(g * g * sizeof *up_w);
    double *lo_c = malloc(g * sizeof *lo_c), *up_c = malloc(g * sizeof *up_c), *coef = malloc((g + 1) * sizeof *coef);
    int *var = malloc((g + 1) * sizeof *var);
    lg_dv *work = malloc((LG_LAYERNORM_WORK(g) > LG_SOFTMAX_WORK(g) ? LG_LAYERNORM_WORK(g) : LG_SOFTMAX_WORK(g)) *
                         sizeof *work);
    lg_status st = LG_OK;
    if (!lu || !lo_w || !up_w || !lo_c || !up_c || !coef || !var || !work) {
        st = lg_fail(LG_ERR_NOMEM, "relaxation: out of memory");
        goto done;
    }
    for (size_t G = 0; G < n / g && st == LG_OK; G++) {
        size_t o0 = G * g;
        for (size_t j = 0; j < g; j++) tp_post(net, b, L->lin.src, (int)(o0 + j), &lu[j], &lu[g + j]);
        if (soft) lg_relax_softmax(g, lu, lu + g, NULL, lo_w, lo_c, up_w, up_c, work);
        else {
            lg_ln_region reg;
            lg_ln_region_of(b, net, k, (int)G, &reg);
            lg_relax_layernorm_ex(g, lu, lu + g, &reg, L->lin.op.eps, L->lin.W, L->lin.W + g, NULL, lo_w, lo_c, up_w, up_c, NULL,
                                  work);
        }
        for (size_t i = 0; i < g && st == LG_OK; i++) {
            for (int up = 0; up < 2 && st == LG_OK; up++) {
                const double *w = (up ? up_w : lo_w) + i * g;
                double c = up ? up_c[i] : lo_c[i];
                int ok = isfinite(c);
                var[0] = oz + (int)(o0 + i);
                coef[0] = 1.0;
                for (size_t j = 0; j < g; j++) {
                    var[j + 1] = os + (int)(o0 + j);
                    coef[j + 1] = -w[j];
                    ok = ok && isfinite(w[j]);
                }
                if (ok) st = lg_trelax_add_row(r, up ? 'L' : 'G', c, (int)g + 1, var, coef); /* y − w·x ≷ c */
            }
        }
        if (st == LG_OK && soft) { /* Σ_i s_i = 1 over the group, exactly */
            for (size_t i = 0; i < g; i++) var[i] = oz + (int)(o0 + i), coef[i] = 1.0;
            st = lg_trelax_add_row(r, 'E', 1.0, (int)g, var, coef);
        }
    }
    if (soft) r->n_softmax++;
    else r->n_layernorm++;
done:
    free(lu);
    free(lo_w);
    free(up_w);
    free(lo_c);
    free(up_c);
    free(coef);
    free(var);
    free(work);
    return st;
}

lg_status lg_tnode_relax_build(const lg_net *net, const lg_bounds *b, lg_trelax *r)
{
    lg_trelax_init(r, lg_net_nodes_len(net));
    if (!lg_bounds_finite(b)) return lg_fail(LG_ERR_ARG, "relaxation: the bounds are not finite");
    for (int i = 0; i < net->n_in; i++)
        if (!isfinite(b->xlo[i]) || !isfinite(b->xhi[i]))
            return lg_fail(LG_ERR_ARG, "relaxation: the normalised input box is not finite");
    lg_status st = LG_OK;
    for (int k = 0; k < net->n_layers && st == LG_OK; k++) {
        lg_layer_kind kind = net->layers[k].lin.kind;
        if (kind == LG_LAYER_BILINEAR) st = tp_product(net, b, k, r);
        else if (kind == LG_LAYER_SOFTMAX || kind == LG_LAYER_LAYERNORM) st = tp_group(net, b, k, r);
    }
    if (st != LG_OK) lg_trelax_free(r);
    return st;
}
