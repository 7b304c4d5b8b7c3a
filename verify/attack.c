/* attack.c — random sampling and PGD with restarts (attack.h). */
#include "verify/attack.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/linop.h"
#include "core/rng.h"
#include "verify/bounds.h"
#include "verify/opstage.h"
#include "verify/recheck.h"

lg_attack_opts lg_attack_opts_default(void)
{
    lg_attack_opts o;
    memset(&o, 0, sizeof o);
    o.samples = 256;
    o.restarts = 8;
    o.steps = 100;
    o.step0 = 0.25;
    return o;
}

/* Scratch sized once from the shapes. */
typedef struct lg_atk_ws {
    double *act;   /* x' [n_in], then z_k [n_k], a_k [n_k] for every layer */
    double *da;    /* [nodes_len] ∂g/∂(node value), node layout (core/net.h lg_net_node_offset) */
    double *dz;    /* [maxw] */
    double *tmp;   /* [maxw] a term's transpose product before it is added */
    double *grad;  /* [n_in] = da of the input */
    double *y;     /* [n_out] recheck output */
    size_t *zoff;  /* [n_layers] offset of z_k in act */
    size_t *doff;  /* [n_layers + 1] offset of node j's da at doff[j + 1] */
    unsigned char *touched; /* [n_layers + 1] da of node j written */
    double *buf;
    const signed char *sign; /* NULL or [Σ n_out] split signs steering the search (attack.h) */
    double mu;     /* weight of the split penalty */
} lg_atk_ws;

static lg_status lg_atk_ws_init(lg_atk_ws *w, const lg_net *net)
{
    size_t n = (size_t)net->n_in, nl = lg_net_nodes_len(net), L = (size_t)net->n_layers;
    for (int k = 0; k < net->n_layers; k++) n += 2 * (size_t)net->layers[k].n_out;
    size_t mw = (size_t)lg_net_max_width(net);
    size_t total = n + nl + 2 * mw + (size_t)lg_net_n_out(net) + (2 * L + 1);
    memset(w, 0, sizeof *w);
    w->buf = malloc(total * sizeof(double) + L + 1);
    if (!w->buf) return lg_fail(LG_ERR_NOMEM, "attack: cannot allocate %zu doubles", total);
    w->act = w->buf;
    w->da = w->act + n;
    w->dz = w->da + nl;
    w->tmp = w->dz + mw;
    w->y = w->tmp + mw;
    w->zoff = (size_t *)(w->y + lg_net_n_out(net));
    w->doff = w->zoff + L;
    w->touched = (unsigned char *)(w->doff + L + 1);
    w->grad = w->da;
    size_t zo = (size_t)net->n_in;
    w->doff[0] = 0;
    for (int k = 0; k < net->n_layers; k++) {
        w->zoff[k] = zo;
        zo += 2 * (size_t)net->layers[k].n_out;
        w->doff[k + 1] = lg_net_node_offset(net, k);
    }
    return LG_OK;
}

/* The value of node j (after its activation) in the forward store. */
/* ∂g/∂(node j) in w's layout (lg_node_slot_fn). */
static double *lg_atk_slot(void *ctx, int j)
{
    lg_atk_ws *w = ctx;
    return w->da + w->doff[j + 1];
}

static const double *lg_atk_node(const lg_net *net, const lg_atk_ws *w, int j)
{
    return j < 0 ? w->act : w->act + w->zoff[j] + (size_t)net->layers[j].n_out;
}
typedef struct lg_atk_at {
    const lg_net *net;
    const lg_atk_ws *w;
} lg_atk_at;
static const double *lg_atk_val(const void *ctx, int node) /* lg_layer_pre's lg_node_val_fn */
{
    const lg_atk_at *at = ctx;
    return lg_atk_node(at->net, at->w, node);
}

/* g(x) (attack.h); gradient into w->grad when want_grad. */
static double lg_atk_eval(const lg_net *net, int n_terms, const lg_term *terms, const double *x, lg_atk_ws *w,
                          int want_grad)
{
    double *a = w->act; /* x' */
    for (int i = 0; i < net->n_in; i++) {
        double v = x[i];
        if (net->in_sub) v -= net->in_sub[i];
        if (net->in_div) v /= net->in_div[i];
        a[i] = v;
    }
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        double *z = w->act + w->zoff[k], *an = z + L->n_out;
        /* z[n_out] = a node's forward, or b + Σ_t A_t·a_src(t) (dgemv per term: the attack is a
         * heuristic, every hit is re-checked) */
        lg_atk_at at = {net, w};
        lg_layer_pre(L, lg_atk_val, &at, z, 1);
        if (L->act == LG_ACT_RELU || L->act == LG_ACT_IDENTITY)
            for (int o = 0; o < L->n_out; o++) an[o] = L->act == LG_ACT_RELU ? (z[o] > 0 ? z[o] : 0) : z[o];
        else /* a smooth activation: the table's forward (core/act.h) */
            for (int o = 0; o < L->n_out; o++) an[o] = lg_act_eval(L->act, z[o], L->lambda);
        a = an;
    }
    int no = lg_net_n_out(net);
    const double *y = a;
    double best = INFINITY;
    const lg_lincon *arg = NULL;
    for (int t = 0; t < n_terms; t++) {
        double worst = -INFINITY;
        const lg_lincon *wc = NULL;
        for (int k = 0; k < terms[t].n_cons; k++) {
            const lg_lincon *C = &terms[t].cons[k];
            double s = C->d;
            for (int j = 0; j < no; j++) s += C->coef[j] * y[j];
            if (s > worst) {
                worst = s;
                wc = C;
            }
        }
        if (terms[t].n_cons == 0) worst = -INFINITY; /* empty conjunction: always true */
        if (worst < best) {
            best = worst;
            arg = wc;
        }
    }
    if (!want_grad) return best;
    /* backward: dy = coef of the active constraint; every node's da collects
     * Λ·A_t from each term reading it (the first written, the others added) */
    double *dz = w->dz;
    memset(w->touched, 0, (size_t)net->n_layers + 1);
    double *dout = w->da + w->doff[net->n_layers];
    for (int j = 0; j < no; j++) dout[j] = arg ? arg->coef[j] : 0.0;
    w->touched[net->n_layers] = 1;
    size_t soff = 0;
    for (int k = 0; k < net->n_layers; k++) soff += (size_t)net->layers[k].n_out;
    for (int k = net->n_layers - 1; k >= 0; k--) {
        const lg_layer *L = &net->layers[k];
        soff -= (size_t)L->n_out;
        const double *z = w->act + w->zoff[k];
        double *da = w->da + w->doff[k + 1];
        if (!w->touched[k + 1]) memset(da, 0, (size_t)L->n_out * sizeof *da); /* no reader reached it */
        if (L->act == LG_ACT_RELU || L->act == LG_ACT_IDENTITY) {
            for (int o = 0; o < L->n_out; o++) dz[o] = L->act == LG_ACT_RELU ? (z[o] > 0 ? da[o] : 0.0) : da[o];
        } else {
            const lg_act_info *info = lg_act_info_of(L->act);
            double pp = L->lambda; /* the table reads its own parameter (gelu: 1) */
            for (int o = 0; o < L->n_out; o++) dz[o] = info->df(z[o], pp) * da[o];
        }
        if (w->sign) /* + μ·max(0, σ·z): σ = +1 wants z ≤ 0, σ = −1 wants z ≥ 0 */
            for (int o = 0; o < L->n_out; o++) {
                signed char sg = w->sign[soff + (size_t)o];
                if ((sg > 0 && z[o] > 0) || (sg < 0 && z[o] < 0)) dz[o] += sg * w->mu;
            }
        const lg_vopdef *vop = lg_layer_vop(L);
        if (vop) { /* a node (opstage.h): identity activation, dz is ∂g/∂out */
            int sa = lg_layer_src(L, 0), sb = lg_layer_src(L, lg_layer_n_src(L) - 1); /* a second source, else the first */
            double *dsa = w->da + w->doff[sa + 1], *dsb = w->da + w->doff[sb + 1];
            if (!w->touched[sa + 1]) memset(dsa, 0, (size_t)lg_net_node_width(net, sa) * sizeof *dsa);
            w->touched[sa + 1] = 1;
            if (!w->touched[sb + 1]) memset(dsb, 0, (size_t)lg_net_node_width(net, sb) * sizeof *dsb);
            w->touched[sb + 1] = 1;
            vop->attack_backward(L, lg_atk_node(net, w, sa), lg_atk_node(net, w, sb), z + L->n_out, dz, dsa, dsb);
            continue;
        }
        lg_layer_pre_t(L, dz, 0, lg_atk_slot, w, w->touched, w->tmp); /* da_src += A_tᵀ·dz (core/op.h) */
    }
    if (!w->touched[0]) memset(w->grad, 0, (size_t)net->n_in * sizeof *w->grad);
    if (net->in_div)
        for (int i = 0; i < net->n_in; i++) w->grad[i] /= net->in_div[i];
    return best;
}

lg_status lg_attack_objective(const lg_net *net, int n_terms, const lg_term *terms, const double *x, double *g,
                              double *grad)
{
    lg_atk_ws w;
    lg_status st = lg_atk_ws_init(&w, net);
    if (st != LG_OK) return st;
    *g = lg_atk_eval(net, n_terms, terms, x, &w, grad != NULL);
    if (grad) memcpy(grad, w.grad, (size_t)net->n_in * sizeof *grad);
    free(w.buf);
    return LG_OK;
}

#define LG_ATK_MAX_ORDER 64 /* terms ranked for the aimed restarts */

/* PGD from x (in place). Returns 1 (found, re-checked), 0, or −1 (OOM). */
static int lg_atk_pgd(const lg_net *net, const double *lo, const double *hi, int n_terms, const lg_term *terms,
                      int steps, double step0, const lg_runctx *run, double *x, lg_atk_ws *w)
{
    for (int s = 0; s <= steps; s++) {
        if (run && lg_runctx_expired(run)) return 0;
        double g = lg_atk_eval(net, n_terms, terms, x, w, 1);
        if (g <= 0) {
            int r = lg_recheck(net, lo, hi, n_terms, terms, x, w->y);
            if (r != 0) return r;
        }
        if (s == steps) break;
        double alpha = step0 * (1.0 - 0.95 * (double)s / (double)steps);
        for (int i = 0; i < net->n_in; i++) {
            double gi = w->grad[i], v = x[i];
            if (gi > 0) v -= alpha * (hi[i] - lo[i]);
            else if (gi < 0) v += alpha * (hi[i] - lo[i]);
            x[i] = v < lo[i] ? lo[i] : (v > hi[i] ? hi[i] : v);
        }
    }
    return 0;
}

lg_status lg_attack_run(const lg_net *net, const double *lo, const double *hi, int n_terms, const lg_term *terms,
                        const lg_attack_opts *o, const lg_runctx *run, double *x, int *found)
{
    *found = 0;
    if (n_terms < 1) return LG_OK;
    lg_atk_ws w;
    lg_status st = lg_atk_ws_init(&w, net);
    if (st != LG_OK) return st;
    lg_rng rng;
    lg_rng_init(&rng, run->seed, 0x6c67656c75ULL);
    int order[LG_ATK_MAX_ORDER];
    double gt[LG_ATK_MAX_ORDER];
    int n = net->n_in, r = 0;
    for (int s = 0; s < o->samples && !r; s++) {
        if (lg_runctx_expired(run)) goto done;
        for (int i = 0; i < n; i++) {
            double u = lg_rng_uniform(&rng);
            if (s == 0) u = 0.5;
            else if (s == 1) u = 0.0;
            else if (s == 2) u = 1.0;
            else if (s % 2) u = u < 0.5 ? 0.0 : 1.0;
            double v = lo[i] + u * (hi[i] - lo[i]);
            x[i] = u >= 1.0 ? hi[i] : (v > hi[i] ? hi[i] : v);
        }
        if (lg_atk_eval(net, n_terms, terms, x, &w, 0) <= 0) r = lg_recheck(net, lo, hi, n_terms, terms, x, w.y);
    }
    /* restarts (a stronger attack): the centre, then in turn a uniform
     * random start, a random corner, and a random start aimed at one term alone,
     * the terms taken in the order of their value at the centre (closest first) */
    for (int t = 0; t < n_terms && t < LG_ATK_MAX_ORDER; t++) order[t] = t;
    if (n_terms > 1 && !r) { /* x is free: no hit from the sampling */
        for (int i = 0; i < n; i++) x[i] = lo[i] + 0.5 * (hi[i] - lo[i]);
        int k = n_terms < LG_ATK_MAX_ORDER ? n_terms : LG_ATK_MAX_ORDER;
        for (int t = 0; t < k; t++) gt[t] = lg_atk_eval(net, 1, terms + t, x, &w, 0);
        for (int a = 1; a < k; a++) /* insertion sort by g_t at the centre, stable */
            for (int b = a; b > 0 && gt[order[b]] < gt[order[b - 1]]; b--) {
                int tmp = order[b];
                order[b] = order[b - 1];
                order[b - 1] = tmp;
            }
    }
    for (int s = 0; s < o->restarts && !r; s++) {
        int kind = s == 0 ? 0 : 1 + (s - 1) % 3; /* 0 centre, 1 uniform, 2 corner, 3 one term */
        if (kind == 3 && n_terms < 2) kind = 1;
        for (int i = 0; i < n; i++) {
            double u = kind == 0 ? 0.5 : lg_rng_uniform(&rng);
            if (kind == 2) u = u < 0.5 ? 0.0 : 1.0;
            double v = lo[i] + u * (hi[i] - lo[i]);
            x[i] = u >= 1.0 ? hi[i] : (v > hi[i] ? hi[i] : v);
        }
        if (kind == 3) {
            int k = n_terms < LG_ATK_MAX_ORDER ? n_terms : LG_ATK_MAX_ORDER;
            int t = order[((s - 1) / 3) % k];
            r = lg_atk_pgd(net, lo, hi, 1, terms + t, o->steps, o->step0, run, x, &w);
        } else {
            r = lg_atk_pgd(net, lo, hi, n_terms, terms, o->steps, o->step0, run, x, &w);
        }
        if (lg_runctx_expired(run)) break;
    }
done:
    free(w.buf);
    if (r < 0) return lg_fail(LG_ERR_NOMEM, "attack: out of memory in the re-check");
    *found = r == 1;
    return LG_OK;
}

lg_status lg_attack_repair(const lg_net *net, const double *lo, const double *hi, int n_terms, const lg_term *terms,
                           int steps, double step0, double *x, int *found)
{
    return lg_attack_subdomain(net, lo, hi, n_terms, terms, NULL, steps, step0, NULL, x, found);
}

lg_status lg_attack_subdomain(const lg_net *net, const double *lo, const double *hi, int n_terms, const lg_term *terms,
                              const signed char *sign, int steps, double step0, const lg_runctx *run, double *x,
                              int *found)
{
    *found = 0;
    for (int i = 0; i < net->n_in; i++) {
        if (!isfinite(x[i])) x[i] = 0.5 * (lo[i] + hi[i]);
        x[i] = x[i] < lo[i] ? lo[i] : (x[i] > hi[i] ? hi[i] : x[i]);
    }
    lg_atk_ws w;
    lg_status st = lg_atk_ws_init(&w, net);
    if (st != LG_OK) return st;
    w.sign = sign;
    w.mu = 1.0;
    int r = lg_atk_pgd(net, lo, hi, n_terms, terms, steps, step0, run, x, &w);
    free(w.buf);
    if (r < 0) return lg_fail(LG_ERR_NOMEM, "attack: out of memory in the re-check");
    *found = r == 1;
    return LG_OK;
}
