/* devgrad_net.c — the interval-gradient deviation bound on one box (devgrad_net.h). */
#include "verify/devgrad_net.h"
#include "verify/devnet.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/deviation.h"
#include "core/op.h"
#include "core/traverse.h"
#include "verify/devgrad.h"
#include "verify/devtf.h"
#include "verify/opstage.h"

/* Runs of CROWN on F' per box at most (the first with zero bands). */
#define LG_DEVGRAD_TRIES 5

static int dg_sub(const lg_devgrad_net *g, int k) { return g->ref->layers[k].act != g->relu->layers[k].act; }

void lg_devgrad_net_free(lg_devgrad_net *g)
{
    if (!g) return;
    lg_net_free(&g->F);
    lg_bounds_free(&g->b);
    free(g->at);
    free(g->dat);
    free(g->lo);
    free(g->hi);
    free(g->reach);
    memset(g, 0, sizeof *g);
}

static lg_status dg_extend(double **dst, const double *src, int n, int m, double fill)
{
    if (!src) return LG_OK;
    if (!(*dst = malloc(((size_t)n + (size_t)m) * sizeof **dst))) return lg_fail(LG_ERR_NOMEM, "devgrad: out of memory");
    memcpy(*dst, src, (size_t)n * sizeof **dst);
    for (int i = 0; i < m; i++) (*dst)[n + i] = fill;
    return LG_OK;
}

lg_status lg_devgrad_net_init(lg_devgrad_net *g, const lg_net *relu, const lg_net *ref)
{
    memset(g, 0, sizeof *g);
    lg_status st = lg_dev_check_pair(relu, ref);
    if (st != LG_OK) return st;
    if ((st = lg_devgrad_check_net(relu)) != LG_OK) return st;
    g->relu = relu, g->ref = ref;
    g->K = LG_DEVGRAD_AFFINE_K;
    const int L = relu->n_layers, n0 = relu->n_in;
    int nl = 1 + L, nt = 1;
    long S = 0;
    for (int k = 0; k < L; k++) {
        nt += lg_layer_n_lin(&relu->layers[k]);
        if (dg_sub(g, k)) nl++, nt += 2, S += relu->layers[k].n_out;
    }
    if (S > LG_NET_MAX_DIM) return lg_fail(LG_ERR_UNSUPPORTED, "devgrad: too many substituted neurons");
    const int ni = n0 + (int)S;
    g->n_in = ni;
    g->at = malloc((size_t)L * sizeof *g->at);
    g->dat = malloc((size_t)L * sizeof *g->dat);
    int *out_of = malloc((size_t)L * sizeof *out_of);
    lg_layer_spec *specs = calloc((size_t)nl, sizeof *specs);
    lg_linear *terms = calloc((size_t)nt, sizeof *terms);
    g->lo = malloc((size_t)ni * sizeof *g->lo);
    g->hi = malloc((size_t)ni * sizeof *g->hi);
    if (!g->at || !g->dat || !out_of || !specs || !terms || !g->lo || !g->hi) {
        st = lg_fail(LG_ERR_NOMEM, "devgrad: out of memory");
        goto done;
    }
    lg_linear *tp = terms;
    *tp = (lg_linear){.kind = LG_LAYER_INDEX, .n_in = ni, .src = LG_NET_INPUT};
    specs[0] = (lg_layer_spec){.n_out = n0, .act = LG_ACT_IDENTITY, .n_terms = 1, .terms = tp++};
    int pos = 1, doff = n0;
#define DG_SRC(s) ((s) == LG_NET_INPUT ? 0 : out_of[(s)])
    for (int k = 0; k < L; k++) {
        const lg_layer *Sl = &relu->layers[k];
        g->at[k] = pos;
        specs[pos] = (lg_layer_spec){.n_out = Sl->n_out, .act = Sl->act, .n_terms = lg_layer_n_lin(Sl), .terms = tp};
        for (int t = 0; t < lg_layer_n_lin(Sl); t++, tp++) {
            *tp = *lg_layer_lin(Sl, t);
            tp->src = DG_SRC(tp->src);
            if (lg_op_is(tp->kind, LG_OPF_TWO_SRC)) tp->op.src_b = DG_SRC(tp->op.src_b);
        }
        out_of[k] = pos++;
        g->dat[k] = -1;
        if (!dg_sub(g, k)) continue;
        tp[0] = (lg_linear){.kind = LG_LAYER_INDEX, .n_in = Sl->n_out, .src = out_of[k]};
        tp[1] = (lg_linear){.kind = LG_LAYER_INDEX, .n_in = ni, .src = LG_NET_INPUT};
        specs[pos] = (lg_layer_spec){.n_out = Sl->n_out, .act = LG_ACT_IDENTITY, .n_terms = 2, .terms = tp};
        tp += 2;
        g->dat[k] = doff;
        doff += Sl->n_out;
        out_of[k] = pos++;
    }
#undef DG_SRC
    if ((st = lg_net_build(&g->F, ni, nl, specs)) != LG_OK) goto done;
    g->F.t = relu->t;
    for (int o = 0; o < n0; o++) g->F.layers[0].lin.map[o] = o;
    for (int k = 0; k < L; k++) {
        const lg_layer *Sl = &relu->layers[k];
        lg_layer *K = &g->F.layers[g->at[k]];
        for (int t = 0; t < lg_layer_n_lin(Sl); t++) {
            const lg_linear *A = lg_layer_lin(Sl, t);
            lg_linear *B = lg_layer_lin_mut(K, t);
            if (A->W) memcpy(B->W, A->W, lg_linear_n_weights(A) * sizeof *A->W);
            if (A->map) memcpy(B->map, A->map, lg_linear_n_map(A) * sizeof *A->map);
        }
        lg_layer_copy_act_bias(K, Sl);
        if (g->dat[k] < 0) continue;
        lg_layer *D = &g->F.layers[g->at[k] + 1]; /* out_k + δ'_k, bias 0 */
        for (int o = 0; o < Sl->n_out; o++) D->lin.map[o] = o, D->terms[0].map[o] = g->dat[k] + o;
    }
    if ((st = dg_extend(&g->F.in_sub, relu->in_sub, n0, (int)S, 0.0)) != LG_OK ||
        (st = dg_extend(&g->F.in_div, relu->in_div, n0, (int)S, 1.0)) != LG_OK)
        goto done;
    if ((st = lg_net_validate(&g->F)) != LG_OK) goto done;
    /* the neurons an output reads (lg_bounds_reach): the others' bands need no induction, as
     * no output depends on their δ (and F''s bounds of them are interval bounds only) */
    size_t N = 0;
    for (int k = 0; k < L; k++) N += (size_t)relu->layers[k].n_out;
    unsigned char **rp = malloc((size_t)L * sizeof *rp);
    if (!rp || !(g->reach = malloc(N))) {
        free(rp);
        st = lg_fail(LG_ERR_NOMEM, "devgrad: out of memory");
        goto done;
    }
    for (int k = 0, o = 0; k < L; o += relu->layers[k].n_out, k++) rp[k] = g->reach + o;
    int ok = lg_bounds_reach(relu, rp);
    free(rp);
    if (!ok) {
        st = lg_fail(LG_ERR_NOMEM, "devgrad: out of memory");
        goto done;
    }
    st = lg_bounds_init(&g->b, &g->F);
done:
    free(out_of);
    free(specs);
    free(terms);
    if (st != LG_OK) lg_devgrad_net_free(g);
    return st;
}

/* [dlo, dhi] met with the affine adjoint's enclosure (both hold). */
static lg_status dg_affine(const lg_devgrad_net *g, const lg_devgrad_region *R, size_t K, const lg_runctx *run,
                           double *dlo, double *dhi)
{
    int no = lg_net_n_out(g->relu);
    double *t = malloc(2 * (size_t)no * sizeof *t);
    if (!t) return lg_fail(LG_ERR_NOMEM, "devgrad: out of memory");
    lg_status st = lg_devgrad_bound_affine(g->relu, g->ref, R, K, run, t, t + no);
    if (st == LG_OK)
        for (int i = 0; i < no; i++) {
            if (g->affine_only) dlo[i] = t[i], dhi[i] = t[no + i];
            else dlo[i] = fmax(dlo[i], t[i]), dhi[i] = fmin(dhi[i], t[no + i]);
        }
    free(t);
    return st;
}

/* A node's centred-input bounds in b (its verify entry's diff_centred), if it keeps any. */
static void dg_centred(const lg_bounds *b, const lg_net *net, int k, double **clo, double **chi)
{
    const lg_vopdef *vop = lg_layer_vop(&net->layers[k]);
    if (vop && vop->diff_centred && !vop->diff_centred(b, net, k, clo, chi)) *clo = *chi = NULL;
}

/* The rounding envelope of net's double forward pass over the region (devgrad_net.h): from the
 * region's post-activation intervals al, ah of every node (node layout; they hold net's exact
 * values) and pre-activation bounds zl, zh (per layer), out[n_out] ≥ |ŷ − y| of the output.
 * Node layout [len] each, written: ae ≥ |computed − exact| of every node's output, pe of every
 * layer's pre-activation (a Transformer node's: its output's), and each node's local rounding
 * radii ro (its output's: the input's normalisation, a smooth activation's, a Transformer
 * node's) and rp (its dot product's). */
static lg_status dg_envelope(const lg_net *net, const double *al, const double *ah, double *const *zl,
                             double *const *zh, double *out, double *ae, double *pe, double *ro, double *rp)
{
    const double u = DBL_EPSILON;
    const size_t len = lg_net_nodes_len(net);
    size_t w = (size_t)lg_net_max_width(net), gm = 1;
    if (w < (size_t)net->n_in) w = (size_t)net->n_in;
    for (int k = 0; k < net->n_layers; k++)
        if ((size_t)net->layers[k].lin.op.group > gm) gm = (size_t)net->layers[k].lin.op.group;
    double *am = calloc(len + 10 * w, sizeof *am);
    lg_dv *work = malloc(LG_DEVTF_WORK(gm) * sizeof *work);
    if (!am || !work) {
        free(am), free(work);
        return lg_fail(LG_ERR_NOMEM, "devgrad: out of memory");
    }
    memset(ae, 0, len * sizeof *ae), memset(pe, 0, len * sizeof *pe);
    memset(ro, 0, len * sizeof *ro), memset(rp, 0, len * sizeof *rp);
    double *s1 = am + len, *s2 = s1 + w, *d = s2 + w, *bx = d + w, *z0 = bx + 2 * w;
    double *xl = z0 + w, *xh = xl + w, *yl = xh + w, *yh = yl + w;
    for (int i = 0; i < net->n_in; i++) { /* x' = (x − in_sub)/in_div: two roundings */
        double m = fmax(fabs(al[i]), fabs(ah[i]));
        ae[i] = ro[i] = nextafter(3.0 * u * m, INFINITY) + 1e-300;
        am[i] = nextafter(m + ae[i], INFINITY);
    }
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        const size_t ko = lg_net_node_offset(net, k);
        const int n = L->n_out;
        if (lg_layer_is_tnode(L)) {
            const size_t oa = lg_net_node_offset(net, lg_layer_src(L, 0));
            const double *la = al + oa, *ua = ah + oa, *ea = ae + oa, *ma = am + oa;
            const int sb = lg_layer_n_src(L) > 1 ? lg_layer_src(L, 1) : lg_layer_src(L, 0);
            const size_t ob = lg_net_node_offset(net, sb);
            lg_devtf_envelope(&L->lin, la, ua, ea, ma, al + ob, ah + ob, ae + ob, am + ob, s1, work, d, bx);
            /* its rounding alone: the rule with no source error, over intervals that hold the computed
             * sources */
            const int na = lg_net_node_width(net, lg_layer_src(L, 0)), nb = lg_net_node_width(net, sb);
            for (int i = 0; i < na; i++) xl[i] = lg_dn(la[i] - ea[i]), xh[i] = lg_up(ua[i] + ea[i]);
            for (int i = 0; i < nb; i++) yl[i] = lg_dn(al[ob + i] - ae[ob + i]), yh[i] = lg_up(ah[ob + i] + ae[ob + i]);
            lg_devtf_envelope(&L->lin, xl, xh, z0, ma, yl, yh, z0, am + ob, s2, work, d, bx);
            for (int o = 0; o < n; o++) {
                double x = s1[o] <= DBL_MAX ? s1[o] : INFINITY;
                ae[ko + (size_t)o] = pe[ko + (size_t)o] = x;
                ro[ko + (size_t)o] = s2[o] <= DBL_MAX ? s2[o] : INFINITY;
                am[ko + (size_t)o] = nextafter(fmax(fabs(al[ko + (size_t)o]), fabs(ah[ko + (size_t)o])) + x, INFINITY);
            }
            continue;
        }
        /* ẑ − z: Σ|A|·ae_src (the sources' errors) + γ_n·(|b| + Σ|A|·am_src) (this dot product's) */
        lg_node_buf be = {net, ae}, bm = {net, am};
        lg_layer_sum(L, 1, lg_node_buf_val, &be, s1, 1, 0);
        lg_layer_sum(L, 1, lg_node_buf_val, &bm, s2, 1, 0);
        const double gam = lg_dev_gamma(lg_layer_sum_len(L) + 1.0);
        const lg_act_info *ai = lg_act_info_of(L->act);
        const double lip = lg_devnet_lip(L), fs = ai && ai->fmag ? ai->fmag(L->lambda) : 1.0;
        const int smooth = L->act != LG_ACT_RELU && L->act != LG_ACT_IDENTITY;
        for (int o = 0; o < n; o++) {
            double rz = gam * (fabs(L->b[o]) + s2[o]) * (1.0 + 1e-9);
            double p = (s1[o] * (1.0 + 1e-9) + rz) * (1.0 + 2.0 * u) + 1e-300;
            double zm = nextafter(fmax(fabs(zl[k][o]), fabs(zh[k][o])) + p, INFINITY);
            double ra = smooth ? 16.0 * u * fs * zm * (1.0 + 1e-9) + 1e-300 : 0.0;
            double x = lip * p * (1.0 + u) + ra;
            if (!(x <= DBL_MAX)) x = INFINITY;
            pe[ko + (size_t)o] = p <= DBL_MAX ? p : INFINITY;
            rp[ko + (size_t)o] = rz * (1.0 + 2.0 * u) + 1e-300 <= DBL_MAX ? rz * (1.0 + 2.0 * u) + 1e-300 : INFINITY;
            ro[ko + (size_t)o] = ra <= DBL_MAX ? ra : INFINITY;
            ae[ko + (size_t)o] = x;
            am[ko + (size_t)o] = nextafter(fmax(fabs(al[ko + (size_t)o]), fabs(ah[ko + (size_t)o])) + x, INFINITY);
        }
    }
    const int L1 = net->n_layers - 1;
    memcpy(out, ae + lg_net_node_offset(net, L1), (size_t)net->layers[L1].n_out * sizeof *out);
    free(am), free(work);
    return LG_OK;
}

lg_status lg_devgrad_rounding(const lg_net *net, const lg_devgrad_region *R, double *out, double *fwd)
{
    const int L = net->n_layers, no = lg_net_n_out(net);
    const size_t len = lg_net_nodes_len(net);
    size_t N = 0;
    for (int k = 0; k < L; k++) N += (size_t)net->layers[k].n_out;
    double *mem = malloc((6 * len + 4 * N + (size_t)no) * sizeof *mem);
    double **wp = malloc(4 * (size_t)L * sizeof *wp);
    if (!mem || !wp) {
        free(mem), free(wp);
        return lg_fail(LG_ERR_NOMEM, "devgrad: out of memory");
    }
    double *ae = mem, *pe = ae + len, *ro = pe + len, *rp = ro + len, *bl = rp + len, *bh = bl + len, *zw = bh + len;
    double **zl = wp, **zh = wp + L, **cl = wp + 2 * L, **ch = wp + 3 * L;
    lg_status st = dg_envelope(net, R->alo, R->ahi, R->lo, R->hi, out, ae, pe, ro, rp);
    if (st != LG_OK) goto done;
    if (fwd) memcpy(fwd, out, (size_t)no * sizeof *fwd);
    /* the region widened by the envelope: every node's intervals by ae (pre-activations by pe, a
     * layernorm's centred bounds as lg_devtf_centred widens them) hold the computed values and
     * every value of the segment between them and the exact ones */
    for (size_t i = 0; i < len; i++) bl[i] = lg_dn(R->alo[i] - ae[i]), bh[i] = lg_up(R->ahi[i] + ae[i]);
    for (int k = 0; k < L; k++) {
        const lg_layer *Lk = &net->layers[k];
        const size_t ko = lg_net_node_offset(net, k);
        const int n = Lk->n_out;
        zl[k] = zw, zh[k] = zw + n, cl[k] = ch[k] = NULL;
        zw += 2 * (size_t)n;
        for (int i = 0; i < n; i++)
            zl[k][i] = lg_dn(R->lo[k][i] - pe[ko + (size_t)i]), zh[k][i] = lg_up(R->hi[k][i] + pe[ko + (size_t)i]);
        if (R->clo && R->chi && R->clo[k] && R->chi[k]) {
            cl[k] = zw, ch[k] = zw + n;
            zw += 2 * (size_t)n;
            const double *es = ae + lg_net_node_offset(net, lg_layer_src(Lk, 0));
            if (!lg_devtf_centred(&Lk->lin, es, R->clo[k], R->chi[k], cl[k], ch[k])) cl[k] = ch[k] = NULL;
        }
    }
    lg_devgrad_region W = {zl, zh, bl, bh, cl, ch, NULL, NULL, bl, bh};
    double *rb = zw;
    if ((st = lg_devgrad_round_bound(net, &W, ro, rp, rb)) != LG_OK) goto done;
    for (int i = 0; i < no; i++)
        if (rb[i] < out[i]) out[i] = rb[i];
done:
    free(mem), free(wp);
    return st;
}

lg_status lg_devgrad_net_bound(lg_devgrad_net *g, const double *lo, const double *hi, const lg_runctx *run,
                               double *e)
{
    const lg_net *relu = g->relu, *ref = g->ref;
    const int L = relu->n_layers, n0 = relu->n_in, no = lg_net_n_out(relu);
    size_t N = 0, len = lg_net_nodes_len(relu);
    for (int k = 0; k < L; k++) N += (size_t)relu->layers[k].n_out;
    for (int i = 0; i < no; i++) e[i] = INFINITY;
    lg_status st = LG_OK;
    /* per layer: the guess I (il, ih), the bands, region pointers; the envelope's arrays */
    double *mem = malloc((4 * N + 2 * len + 4 * (size_t)no) * sizeof *mem);
    double **pp = malloc(6 * (size_t)L * sizeof *pp);
    if (!mem || !pp) {
        free(mem), free(pp);
        return lg_fail(LG_ERR_NOMEM, "devgrad: out of memory");
    }
    double *il = mem, *ih = il + N, *bl = ih + N, *bh = bl + N, *al = bh + N, *ah = al + len;
    double *dlo = ah + len, *dhi = dlo + no, *oe = dhi + no;
    double **Rlo = pp, **Rhi = pp + L, **Rcl = pp + 2 * L, **Rch = pp + 3 * L, **Bl = pp + 4 * L, **Bh = pp + 5 * L;
    memcpy(g->lo, lo, (size_t)n0 * sizeof *lo);
    memcpy(g->hi, hi, (size_t)n0 * sizeof *hi);
    for (int i = n0; i < g->n_in; i++) g->lo[i] = g->hi[i] = 0.0;
    g->b.run = run;
    g->tries = 0;
    int closed = 0;
    for (int tries = 0; tries < LG_DEVGRAD_TRIES && !closed; tries++) {
        if ((st = lg_bounds_symbolic(&g->b, &g->F, g->lo, g->hi)) != LG_OK) goto done;
        g->tries++;
        size_t off = 0;
        int fits = tries > 0;
        for (int k = 0; k < L; k++) {
            int n = relu->layers[k].n_out;
            if (g->dat[k] >= 0) {
                const double *l = g->b.lo[g->at[k]], *u = g->b.hi[g->at[k]];
                for (int i = 0; i < n; i++) {
                    size_t q = off + (size_t)i;
                    if (tries > 0 && g->reach[q] && !(l[i] >= il[q] && u[i] <= ih[q])) fits = 0;
                }
                if (!fits || tries == 0) /* (re)guess: F''s bounds joined with the last guess, widened */
                    for (int i = 0; i < n; i++) {
                        size_t q = off + (size_t)i;
                        double a = l[i], b = u[i];
                        if (tries > 0) a = fmin(a, il[q]), b = fmax(b, ih[q]);
                        double wdt = (tries > 0 ? 0.25 : 0.0) * (b - a) + 1e-9 * (1.0 + fabs(a) + fabs(b));
                        il[q] = nextafter(a - wdt, -INFINITY), ih[q] = nextafter(b + wdt, INFINITY);
                    }
            }
            off += (size_t)n;
        }
        if (fits) {
            closed = 1;
            break;
        }
        if (tries == LG_DEVGRAD_TRIES - 1) break;
        /* bands over the guess into F''s box: δ' = −δ ∈ [−Dhi, −Dlo] */
        off = 0;
        for (int k = 0; k < L; k++) {
            int n = relu->layers[k].n_out;
            if (g->dat[k] >= 0) {
                if (!lg_devgrad_band(relu, ref, k, il + off, ih + off, bl + off, bh + off)) goto done; /* no claim */
                for (int i = 0; i < n; i++)
                    g->lo[g->dat[k] + i] = -bh[off + (size_t)i], g->hi[g->dat[k] + i] = -bl[off + (size_t)i];
            }
            off += (size_t)n;
        }
    }
    if (!closed) goto done;
    /* the region */
    size_t off = 0;
    for (int k = 0; k < L; k++) {
        const lg_layer *Lk = &relu->layers[k];
        int fk = g->at[k];
        Rlo[k] = g->b.lo[fk], Rhi[k] = g->b.hi[fk];
        Rcl[k] = Rch[k] = NULL;
        dg_centred(&g->b, &g->F, fk, &Rcl[k], &Rch[k]);
        Bl[k] = g->dat[k] >= 0 ? bl + off : NULL;
        Bh[k] = g->dat[k] >= 0 ? bh + off : NULL;
        off += (size_t)Lk->n_out;
    }
    lg_devgrad_region R = {Rlo, Rhi, g->b.lo[0], g->b.hi[0], Rcl, Rch, Bl, Bh, NULL, NULL};
    if ((st = lg_devgrad_bound(relu, ref, &R, dlo, dhi)) != LG_OK) goto done;
    if (g->K > 0 && (st = dg_affine(g, &R, g->K, run, dlo, dhi)) != LG_OK) goto done;
    /* the region's post-activation intervals of the ReLU net's nodes (the reference's values
     * at a substituted layer are relu(z) − δ, in the δ layer's bounds) */
    memcpy(al, g->b.lo[0], (size_t)n0 * sizeof *al);
    memcpy(ah, g->b.hi[0], (size_t)n0 * sizeof *ah);
    for (int k = 0; k < L; k++) {
        const lg_layer *Lk = &relu->layers[k];
        size_t ko = lg_net_node_offset(relu, k);
        int fo = g->dat[k] >= 0 ? g->at[k] + 1 : g->at[k];
        for (int i = 0; i < Lk->n_out; i++) {
            double a, b, c, d;
            lg_bounds_post(Lk, Rlo[k][i], Rhi[k][i], &a, &b);
            if (g->dat[k] >= 0) { /* both nets' outputs: relu(z) (δ = 0) and relu(z̃) − δ* */
                c = g->b.lo[fo][i], d = g->b.hi[fo][i];
                a = a < c ? a : c, b = b > d ? b : d;
            }
            al[ko + (size_t)i] = a, ah[ko + (size_t)i] = b;
        }
    }
    /* the rounding of both double forward passes over the region; the reference's
     * pre-activations at a substituted layer are F''s too (its z̃ lies there): the forward
     * envelope, met with the backward bound over the region it widens */
    R.alo = al, R.ahi = ah;
    if ((st = lg_devgrad_rounding(relu, &R, oe, NULL)) != LG_OK ||
        (st = lg_devgrad_rounding(ref, &R, oe + no, NULL)) != LG_OK)
        goto done;
    for (int i = 0; i < no; i++) {
        double x = fmax(fabs(dlo[i]), fabs(dhi[i]));
        x = nextafter(x + oe[i], INFINITY);
        x = nextafter(x + oe[no + i], INFINITY);
        e[i] = x <= DBL_MAX ? x : INFINITY;
    }
done:
    free(mem), free(pp);
    return st;
}

lg_status lg_devgrad_net_estimate(const lg_devgrad_net *g, const lg_bounds *b, double *est)
{
    const lg_net *relu = g->relu;
    const int L = relu->n_layers, no = lg_net_n_out(relu);
    size_t N = 0;
    for (int k = 0; k < L; k++) N += (size_t)relu->layers[k].n_out;
    *est = INFINITY;
    double *mem = malloc((2 * N + 2 * (size_t)no) * sizeof *mem);
    double **pp = malloc(6 * (size_t)L * sizeof *pp);
    if (!mem || !pp) {
        free(mem), free(pp);
        return lg_fail(LG_ERR_NOMEM, "devgrad: out of memory");
    }
    double *bl = mem, *bh = bl + N, *dlo = bh + N, *dhi = dlo + no;
    double **Bl = pp, **Bh = pp + L, **Rcl = pp + 2 * L, **Rch = pp + 3 * L;
    size_t off = 0;
    int ok = 1;
    for (int k = 0; k < L; k++) {
        const lg_layer *Lk = &relu->layers[k];
        Bl[k] = Bh[k] = Rcl[k] = Rch[k] = NULL;
        if (g->dat[k] >= 0) {
            Bl[k] = bl + off, Bh[k] = bh + off;
            lg_devgrad_band(relu, g->ref, k, b->lo[k], b->hi[k], Bl[k], Bh[k]);
            for (int i = 0; i < Lk->n_out; i++)
                if (g->reach[off + (size_t)i] && !(Bh[k][i] < INFINITY)) ok = 0;
        }
        dg_centred(b, relu, k, &Rcl[k], &Rch[k]);
        off += (size_t)Lk->n_out;
    }
    lg_status st = LG_OK;
    if (ok) {
        lg_devgrad_region R = {b->lo, b->hi, b->xlo, b->xhi, Rcl, Rch, Bl, Bh, NULL, NULL};
        st = lg_devgrad_bound(relu, g->ref, &R, dlo, dhi);
        size_t K = g->K < LG_DEVGRAD_AFFINE_K_EST ? g->K : LG_DEVGRAD_AFFINE_K_EST;
        if (st == LG_OK && K > 0) st = dg_affine(g, &R, K, NULL, dlo, dhi);
        if (st == LG_OK) {
            double m = 0.0;
            for (int i = 0; i < no; i++) m = fmax(m, fmax(fabs(dlo[i]), fabs(dhi[i])));
            *est = m == m ? m : INFINITY;
        }
    }
    free(mem), free(pp);
    return st;
}
