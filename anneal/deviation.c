/* deviation.c — the certified ReLU-substitution deviation bound; the
 * derivation and the floating-point margins are in deviation.h
 * (DESIGN.md §1 "Deviation bound"). */
#include "anneal/deviation.h"

#include "core/ball.h"
#include "core/linop.h"
#include "core/op.h"
#include "core/traverse.h"
#include "verify/devtf.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LG_DEV_GAP_REL 1e-12 /* relative margin on every gap value */
#define LG_DEV_ABS 1e-300    /* absolute margin for underflow in erfc */
#define LG_DEV_EPS DBL_EPSILON


/* The gap is the activation table's (core/act.h). */
double lg_dev_act_gap(lg_act act, double p, double l, double u, int *at_peak)
{
    int dummy;
    if (!at_peak) at_peak = &dummy;
    *at_peak = 0;
    const lg_act_info *i = lg_act_info_of(act);
    if (!i || !i->gap) return NAN;
    return i->gap(p, l, u, at_peak);
}

double lg_dev_gap(double lambda, double l, double u) { return lg_dev_act_gap(LG_ACT_LGELU, lambda, l, u, NULL); }

double lg_dev_act_gap_certified(lg_act act, double p, double l, double u, int *at_peak)
{
    /* b = max |x| on [l, u] scales the rounding of the computed f(x) (|f(x)| ≤ fs·|x|) */
    double b = -l > u ? -l : u;
    const lg_act_info *gi = lg_act_info_of(act);
    double fs = gi && gi->fmag ? gi->fmag(p) : 1.0;
    return lg_dev_act_gap(act, p, l, u, at_peak) * (1.0 + LG_DEV_GAP_REL) + 16.0 * LG_DEV_EPS * b * fs + LG_DEV_ABS;
}

static int lg_dev_is_smooth(lg_act a) { return lg_act_relu_like(a); }

static int lg_dev_same_vec(const double *a, const double *b, int n)
{
    if (!a || !b) return a == b;
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

lg_status lg_dev_check_pair(const lg_net *rn, const lg_net *ref)
{
    if (rn->n_in != ref->n_in)
        return lg_fail(LG_ERR_ARG, "the ReLU net takes %d inputs but the reference net %d", rn->n_in, ref->n_in);
    if (rn->n_layers != ref->n_layers)
        return lg_fail(LG_ERR_ARG, "the ReLU net has %d layers but the reference net %d", rn->n_layers, ref->n_layers);
    for (int k = 0; k < rn->n_layers; k++) {
        const lg_layer *A = &rn->layers[k], *B = &ref->layers[k];
        if (A->lin.kind != B->lin.kind || A->lin.n_in != B->lin.n_in || A->n_out != B->n_out ||
            memcmp(&A->lin.conv, &B->lin.conv, sizeof A->lin.conv) != 0)
            return lg_fail(LG_ERR_ARG, "layer %d: shapes differ (ReLU net %dx%d, reference net %dx%d)", k, A->n_out,
                           A->lin.n_in, B->n_out, B->lin.n_in);
        if (A->n_terms != B->n_terms)
            return lg_fail(LG_ERR_ARG, "layer %d: the ReLU net sums %d terms, the reference net %d", k,
                           lg_layer_n_lin(A), lg_layer_n_lin(B));
        for (int t = 0; t < lg_layer_n_lin(A); t++) {
            const lg_linear *P = lg_layer_lin(A, t), *Q = lg_layer_lin(B, t);
            if (P->kind != Q->kind || P->src != Q->src || P->n_in != Q->n_in || memcmp(&P->conv, &Q->conv, sizeof P->conv) ||
                (P->kind == LG_LAYER_INDEX && memcmp(P->map, Q->map, (size_t)P->n_out * sizeof *P->map) != 0))
                return lg_fail(LG_ERR_ARG, "layer %d, term %d: the operator or its source node differs between the nets",
                               k, t);
            if (lg_kind_is_tnode(P->kind) &&
                (memcmp(&P->op, &Q->op, sizeof P->op) != 0 ||
                 (lg_linear_n_map(P) && memcmp(P->map, Q->map, lg_linear_n_map(P) * sizeof *P->map) != 0)))
                return lg_fail(LG_ERR_ARG, "layer %d: the %s node's sources, groups or index tables differ between the nets",
                               k, lg_kind_name(P->kind));
        }
        if (A->act != LG_ACT_RELU && A->act != LG_ACT_IDENTITY)
            return lg_fail(LG_ERR_ARG,
                           "layer %d: the ReLU net has activation '%s', expected relu or identity (is the ReLU net "
                           "given first and the reference with --ref?)",
                           k, lg_act_name(A->act) ? lg_act_name(A->act) : "unknown");
        if (A->act != B->act && !(A->act == LG_ACT_RELU && lg_dev_is_smooth(B->act)))
            return lg_fail(LG_ERR_ARG,
                           "layer %d: activation '%s' in the ReLU net cannot stand for '%s' in the reference net "
                           "(expected the same activation, or relu for gelu/lgelu/swish/prelu)",
                           k, lg_act_name(A->act), lg_act_name(B->act) ? lg_act_name(B->act) : "unknown");
    }
    if (rn->n_params != ref->n_params || memcmp(rn->params, ref->params, rn->n_params * sizeof *rn->params) != 0) {
        size_t i = 0;
        while (i < rn->n_params && i < ref->n_params && memcmp(&rn->params[i], &ref->params[i], sizeof(double)) == 0)
            i++;
        return lg_fail(LG_ERR_ARG,
                       "the weights differ (first at parameter %zu); the bound assumes the ReLU net is the "
                       "substitution of the reference net with identical weights",
                       i);
    }
    if (!lg_dev_same_vec(rn->in_sub, ref->in_sub, rn->n_in) || !lg_dev_same_vec(rn->in_div, ref->in_div, rn->n_in))
        return lg_fail(LG_ERR_ARG, "the input normalisation (in_sub/in_div) differs between the two nets");
    return LG_OK;
}

lg_status lg_dev_init(lg_dev *d, const lg_net *rn, const lg_net *ref)
{
    memset(d, 0, sizeof *d);
    lg_status st;
    if ((st = lg_net_validate(rn)) != LG_OK || (st = lg_net_validate(ref)) != LG_OK) return st;
    if ((st = lg_dev_check_pair(rn, ref)) != LG_OK) return st;
    if (lg_net_has_max(rn) || lg_net_has_max(ref))
        return lg_fail(LG_ERR_UNSUPPORTED, "the certified deviation bound does not take max-pool nodes: bound the "
                                           "pair's exact ReLU form (lg_net_lower_max) instead");
    size_t w = (size_t)lg_net_max_width(rn), no = (size_t)lg_net_n_out(rn), tot = 0;
    size_t len = lg_net_nodes_len(rn), nl = (size_t)rn->n_layers;
    for (int k = 0; k < rn->n_layers; k++) tot += (size_t)rn->layers[k].n_out;
    int chain = lg_net_is_chain(rn);
    /* chunk: boxes per forward pass, so that the per-neuron records stay ≤ 2^22 entries (a
     * graph: every node's three interval arrays ≤ 3·2^20); group: boxes per backward pass
     * (rows no·group ≤ 2^18/w, a graph: ≤ 2^18/(Σ widths + w)) */
    size_t chunk = chain ? ((size_t)1 << 22) / tot : ((size_t)1 << 20) / len;
    size_t group = ((size_t)1 << 18) / (no * (chain ? w : tot + w));
    chunk = chunk < 1 ? 1 : chunk > LG_DEV_CHUNK ? LG_DEV_CHUNK : chunk;
    group = group < 1 ? 1 : group > chunk ? chunk : group;
    d->width = (int)w;
    d->chunk = (int)chunk;
    d->group = (int)group;
    d->n_neurons = tot;
    d->chain = chain;
    d->nodes_len = len;
    size_t n_fw = chain ? (size_t)9 * chunk * w : (size_t)3 * chunk * len + (size_t)2 * chunk * w + chunk * no;
    size_t n_bk = chain ? (size_t)5 * group * no * w : group * no * ((size_t)2 * tot + (size_t)2 * w + 1);
    d->absW = malloc(rn->n_params * sizeof *d->absW);
    d->buf = malloc(n_fw * sizeof *d->buf);
    d->slack = malloc(chunk * tot * sizeof *d->slack);
    d->efw = malloc(tot * sizeof *d->efw);
    d->slope = malloc(chunk * tot);
    d->back = malloc(n_bk * sizeof *d->back);
    d->err = malloc((chain ? (size_t)2 * w : len) * sizeof *d->err);
    d->node_off = malloc((nl + 1) * sizeof *d->node_off);
    d->n_sum = malloc(nl * sizeof *d->n_sum);
    d->n_back = calloc(nl, sizeof *d->n_back);
    d->flag = malloc(nl + 1);
    size_t nt = 0; /* Transformer nodes' scratch (lg_dev_tnode) */
    for (int k = 0; k < rn->n_layers; k++) {
        const lg_layer *L = &rn->layers[k];
        if (!lg_kind_is_tnode(L->lin.kind)) continue;
        const int two = lg_op_is(L->lin.kind, LG_OPF_TWO_SRC);
        size_t need = 3 * (size_t)L->lin.n_in + 3 * (size_t)(two ? L->lin.op.n_in_b : 0) + 8 * (size_t)L->n_out +
                      lg_devtf_node_work(&L->lin);
        if (need > nt) nt = need;
    }
    if (nt && !(d->tbuf = malloc(nt * sizeof *d->tbuf))) {
        lg_dev_free(d);
        return lg_fail(LG_ERR_NOMEM, "cannot allocate deviation-bound buffers for the Transformer nodes");
    }
    if (!d->absW || !d->buf || !d->slack || !d->efw || !d->slope || !d->back || !d->err || !d->node_off || !d->n_sum ||
        !d->n_back || !d->flag) {
        lg_dev_free(d);
        return lg_fail(LG_ERR_NOMEM, "cannot allocate deviation-bound buffers for width %zu", w);
    }
    for (size_t i = 0; i < rn->n_params; i++) d->absW[i] = fabs(rn->params[i]);
    for (int k = -1; k < rn->n_layers; k++) d->node_off[k + 1] = lg_net_node_offset(rn, k);
    for (int k = 0; k < rn->n_layers; k++) {
        const lg_layer *L = &rn->layers[k];
        int n = 0;
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            const lg_linear *A = lg_layer_lin(L, t);
            n += A->kind == LG_LAYER_INDEX ? 1 : A->n_in; /* an index map adds one term per output */
            if (A->src >= 0) d->n_back[A->src] += L->n_out;
        }
        d->n_sum[k] = n;
    }
    d->relu_net = rn;
    d->ref = ref;
    return LG_OK;
}

void lg_dev_free(lg_dev *d)
{
    free(d->absW);
    free(d->buf);
    free(d->slack);
    free(d->efw);
    free(d->slope);
    free(d->back);
    free(d->err);
    free(d->node_off);
    free(d->n_sum);
    free(d->n_back);
    free(d->flag);
    free(d->tbuf);
    memset(d, 0, sizeof *d);
}

/* [lo, hi] → centre/radius with [c − r, c + r] ⊇ [lo, hi] exactly. */
static void lg_dev_recentre(double lo, double hi, double *c, double *r)
{
    *c = 0.5 * (lo + hi);
    *r = (0.5 * (hi - lo) + LG_DEV_EPS * (fabs(lo) + fabs(hi))) * (1.0 + LG_DEV_EPS);
}

/* Z[m][n_out] = X[m][n_in]·Aᵀ (+ Z if beta = 1), with |A| when absw: one
 * dgemm on the stored matrix (or its copy d->absW) for a dense term, the
 * structure otherwise (core/linop.h; at most n_in terms per sum for a conv,
 * one for an index map, so γ of the layer's n_sum covers it). */
static void lg_dev_gemm(const lg_dev *d, const lg_linear *A, int m, const double *X, int absw, double beta, double *Z)
{
    if (A->kind != LG_LAYER_DENSE) {
        lg_linear_mul(A, m, X, Z, absw, beta != 0.0);
        return;
    }
    const double *W = absw ? d->absW + (A->W - d->relu_net->params) : A->W;
    int no = A->n_out, ni = A->n_in;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, no, ni, 1.0, X, ni, W, ni, beta, Z, no);
}

/* Z[m][n_in] = X[m][n_out]·A, or (1 + g)·X·|A| when absw (as lg_dev_gemm). */
static void lg_dev_gemm_t(const lg_dev *d, const lg_linear *A, int m, const double *X, int absw, double g, double *Z)
{
    int no = A->n_out, ni = A->n_in;
    if (A->kind != LG_LAYER_DENSE) {
        lg_linear_mul_t(A, m, X, Z, absw);
        if (absw)
            for (size_t i = 0; i < (size_t)m * (size_t)ni; i++) Z[i] *= 1.0 + g;
        return;
    }
    const double *W = absw ? d->absW + (A->W - d->relu_net->params) : A->W;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, ni, no, absw ? 1.0 + g : 1.0, X, no, W, ni, 0.0, Z, ni);
}

/* Slope codes of relu(z_R) − relu(z_G) = s·(z_R − z_G). */
enum { LG_DEV_S0 = 0, LG_DEV_S1 = 1, LG_DEV_S01 = 2 };

/* Forward storage of node j (LG_NET_INPUT or a layer), [m][width of j]:
 * which = 0 centre C, 1 radius R, 2 deviation bound E of the ReLU-net
 * node's output. A chain needs two nodes at a time, in two sets of slots
 * of d->buf (slots 0, 1, 2 and 4, 5, 7, alternating from the input; 3, 6
 * and 8 are the scratch T, Mt and the output e_L); a graph keeps every
 * node, node-major after offset chunk·node_offset. */
static double *lg_dev_fw(const lg_dev *d, int which, int node)
{
    size_t slot = (size_t)d->chunk * (size_t)d->width;
    if (d->chain) {
        static const int set[2][3] = {{0, 1, 2}, {4, 5, 7}};
        return d->buf + (size_t)set[(node + 1) % 2][which] * slot;
    }
    return d->buf + (size_t)which * (size_t)d->chunk * d->nodes_len + (size_t)d->chunk * d->node_off[node + 1];
}

/* Scratch of the forward pass: 0 T = |C| + R of a term's source, 1 Mt, 2 the output e_L [m][n_out]. */
static double *lg_dev_fw_scratch(const lg_dev *d, int which)
{
    size_t slot = (size_t)d->chunk * (size_t)d->width;
    if (d->chain) return d->buf + (size_t)(which == 0 ? 3 : which == 1 ? 6 : 8) * slot;
    return d->buf + (size_t)3 * (size_t)d->chunk * d->nodes_len + (size_t)which * slot;
}

/* Rounding of the ReLU net's computed values of node j (external bounds, m = 1). */
static double *lg_dev_err(const lg_dev *d, int node)
{
    if (d->chain) return d->err + ((node + 1) % 2) * (size_t)d->width;
    return d->err + d->node_off[node + 1];
}

/* Interval [l, u] ⊇ [c − r, c + r], rounded outward. */
static void lg_dev_ends(double c, double r, double *l, double *u)
{
    *l = (c - r) - LG_DEV_EPS * (fabs(c) + r);
    *u = (c + r) + LG_DEV_EPS * (fabs(c) + r);
}

/* Forward step of Transformer node k over m boxes (deviation.h
 * "Transformer nodes"): the ReLU net's output interval and the deviation
 * bound from verify/devtf.h (lg_devtf_node) on the sources' intervals and
 * bounds; both nets' rounding included. The node is written as δ_k = τ_k
 * with |τ_k| ≤ e_k (slope code 0, slack e_k), so the backward refinement
 * and the symbolic pass start afresh at it. *any_e: some bound is not 0. */
static void lg_dev_tnode(lg_dev *d, int k, int m, const lg_dev_ext *x, unsigned char *blown, size_t off, int *any_e)
{
    const lg_net *rn = d->relu_net;
    const lg_layer *L = &rn->layers[k];
    const int two = lg_op_is(L->lin.kind, LG_OPF_TWO_SRC), no = L->n_out;
    const int sa = L->lin.src, sb = two ? L->lin.op.src_b : sa;
    const int na = L->lin.n_in, nb = two ? L->lin.op.n_in_b : 0;
    const size_t tot = d->n_neurons;
    /* both nets computed every source bit for bit: they compute this node bit for bit too */
    const int ez = d->flag[sa + 1] && d->flag[sb + 1];
    const int use_pre = x && x->r_lo && x->r_hi;
    double *al = d->tbuf, *ah = al + na, *ea = ah + na, *bl = ea + na, *bh = bl + nb, *eb = bh + nb;
    double *lo = eb + nb, *hi = lo + no, *e = hi + no, *l2 = e + no, *h2 = l2 + no, *e2 = h2 + no, *cl = e2 + no,
           *ch = cl + no, *work = ch + no;
    double *Zc = lg_dev_fw(d, 0, k), *Zr = lg_dev_fw(d, 1, k), *P = lg_dev_fw(d, 2, k);
    /* the centred inputs of a layernorm (exact ReLU net), widened to hold the computed ones
     * (verify/devtf.h lg_devtf_centred; a kind that reads none gives 0) */
    const int use_c = use_pre && x->c_lo && x->c_hi && x->c_lo[k] && x->c_hi[k] &&
                      lg_devtf_centred(&L->lin, lg_dev_err(d, sa), x->c_lo[k], x->c_hi[k], cl, ch);
    *any_e = 0;
    for (int r = 0; r < m; r++) {
        for (int c = 0; c < 1 + two; c++) {
            const int s = c ? sb : sa, n = c ? nb : na;
            const double *C = lg_dev_fw(d, 0, s) + (size_t)r * (size_t)n, *R = lg_dev_fw(d, 1, s) + (size_t)r * (size_t)n;
            const double *E = lg_dev_fw(d, 2, s) + (size_t)r * (size_t)n;
            double *l = c ? bl : al, *u = c ? bh : ah, *ee = c ? eb : ea;
            for (int i = 0; i < n; i++) {
                lg_dev_ends(C[i], R[i], &l[i], &u[i]);
                ee[i] = E[i];
            }
        }
        int ok = lg_devtf_node(&L->lin, al, ah, ea, bl, bh, eb, use_c ? cl : NULL, use_c ? ch : NULL, lo, hi, e, work);
        if (ez)
            for (int o = 0; o < no; o++) e[o] = 0.0;
        if (use_pre) {
            double *errz = lg_dev_err(d, k);
            if (!x->computed) { /* the ReLU net's computed − exact outputs: the same rules on its sources' errors */
                lg_devtf_node(&L->lin, al, ah, lg_dev_err(d, sa), bl, bh, two ? lg_dev_err(d, sb) : NULL,
                              use_c ? cl : NULL, use_c ? ch : NULL, l2, h2, e2, work);
                for (int o = 0; o < no; o++) {
                    errz[o] = e2[o];
                    if (x->r_lo[k] && x->r_hi[k]) { /* bounds of the exact outputs, widened by err: intersect */
                        double w = e2[o], pl = x->r_lo[k][o], ph = x->r_hi[k][o];
                        pl = (pl - w) - LG_DEV_EPS * (fabs(pl) + w);
                        ph = (ph + w) + LG_DEV_EPS * (fabs(ph) + w);
                        if (pl > lo[o]) lo[o] = pl;
                        if (ph < hi[o]) hi[o] = ph;
                    }
                }
            } else {
                for (int o = 0; o < no; o++) errz[o] = 0.0;
                if (x->r_lo[k] && x->r_hi[k]) /* bounds of the exact and computed outputs: intersect */
                    for (int o = 0; o < no; o++) {
                        double pl = x->r_lo[k][o], ph = x->r_hi[k][o];
                        if (pl > lo[o]) lo[o] = pl;
                        if (ph < hi[o]) hi[o] = ph;
                    }
            }
            if (x->g_lo && x->g_hi && x->g_lo[k] && x->g_hi[k] && !ez)
                for (int o = 0; o < no; o++) {
                    /* the reference's own bounds: |out_R − out_G| ≤ the widest gap of the intervals */
                    double lg = (lo[o] - e[o]) - LG_DEV_EPS * (fabs(lo[o]) + e[o]);
                    double ug = (hi[o] + e[o]) + LG_DEV_EPS * (fabs(hi[o]) + e[o]);
                    if (x->g_lo[k][o] > lg) lg = x->g_lo[k][o];
                    if (x->g_hi[k][o] < ug) ug = x->g_hi[k][o];
                    double w = fmax(hi[o] - lg, ug - lo[o]) * (1.0 + LG_DEV_EPS);
                    if (w < e[o]) e[o] = w;
                }
        }
        for (int o = 0; o < no; o++) {
            size_t i = (size_t)r * (size_t)no + (size_t)o;
            if (!ok || !(lo[o] <= hi[o]) || !isfinite(e[o])) blown[r] = 1;
            lg_dev_recentre(lo[o], hi[o], &Zc[i], &Zr[i]);
            P[i] = e[o];
            if (m == 1) d->efw[off + (size_t)o] = e[o];
            *any_e |= e[o] != 0.0;
            d->slope[(size_t)r * tot + off + (size_t)o] = LG_DEV_S0;
            d->slack[(size_t)r * tot + off + (size_t)o] = e[o];
        }
    }
}

/* Forward pass over m boxes through the graph: interval arithmetic on the
 * ReLU net and the recursion e_k (deviation.h "Propagation"; at a sum node
 * every term's |A_t|·e_src(t) adds); writes e_L to E_out [m][n_out] and per
 * neuron the slope code and slack t (deviation.h "Backward refinement") to
 * d->slope / d->slack [m][n_neurons]. Sets *first_gap_out to the index of
 * the first substituted layer, or −1 if there is none. x (m = 1 only,
 * else NULL): external bounds to intersect. */
static lg_status lg_dev_forward(lg_dev *d, const double *lo, const double *hi, int m, const lg_dev_ext *x,
                                double *E_out, unsigned char *blown, lg_dev_stats *stats, int *first_gap_out)
{
    double *const *pre_lo = x ? x->r_lo : NULL, *const *pre_hi = x ? x->r_hi : NULL;
    double *const *g_lo = x ? x->g_lo : NULL, *const *g_hi = x ? x->g_hi : NULL;
    const lg_net *rn = d->relu_net, *ref = d->ref;
    size_t tot = d->n_neurons, off = 0;
    /* per node: C, R centre/radius of the ReLU-net output, E deviation bound (lg_dev_fw);
     * T: |C| + R of a term's source; Mt: |A|·T summed over the terms of z */
    double *T = lg_dev_fw_scratch(d, 0), *Mt = lg_dev_fw_scratch(d, 1);
    unsigned char *e_zero = d->flag; /* [n_layers + 1] node j's E is all zero (at j + 1) */
    int n = rn->n_in, first_gap = -1;
    /* With external bounds (m = 1): err bounds |computed − exact| of the
     * ReLU net's values, so that bounds on the exact z_R can be widened to
     * hold the computed ẑ_R too. */
    int use_pre = pre_lo && pre_hi;

    /* Input box through the shared normalisation x' = (x − sub)/div. Rounding
     * is monotone, so the computed x' of every x in the box lies between the
     * computed ends; widen by one ulp-ish for the exact x'. */
    {
        double *C = lg_dev_fw(d, 0, LG_NET_INPUT), *R = lg_dev_fw(d, 1, LG_NET_INPUT), *E = lg_dev_fw(d, 2, LG_NET_INPUT);
        double *err = lg_dev_err(d, LG_NET_INPUT);
        for (int r = 0; r < m; r++)
            for (int i = 0; i < n; i++) {
                size_t at = (size_t)r * (size_t)n + (size_t)i;
                double a = lo[at], b = hi[at];
                if (rn->in_sub) a -= rn->in_sub[i], b -= rn->in_sub[i];
                if (rn->in_div) {
                    a /= rn->in_div[i], b /= rn->in_div[i];
                    if (a > b) {
                        double t = a;
                        a = b;
                        b = t;
                    }
                }
                a -= LG_DEV_EPS * fabs(a);
                b += LG_DEV_EPS * fabs(b);
                lg_dev_recentre(a, b, &C[at], &R[at]);
                E[at] = 0.0;
                if (use_pre) err[i] = rn->in_sub || rn->in_div ? LG_DEV_EPS * fmax(fabs(a), fabs(b)) : 0.0;
            }
    }
    e_zero[0] = 1; /* skip |A|·E for a source whose E is all zero */

    for (int k = 0; k < rn->n_layers; k++) {
        const lg_layer *L = &rn->layers[k];
        if (lg_kind_is_tnode(L->lin.kind)) {
            int any_e;
            lg_dev_tnode(d, k, m, x, blown, off, &any_e);
            e_zero[k + 1] = !any_e;
            off += (size_t)L->n_out;
            continue;
        }
        const lg_act ga = ref->layers[k].act;
        const double lambda = lg_act_has_param(ga) ? ref->layers[k].lambda : 1.0; /* λ, β or slope a */
        const int no = L->n_out;
        const double g = lg_dev_gamma(d->n_sum[k]); /* every term's products and the bias: one sum */
        size_t nout = (size_t)m * (size_t)no;
        /* z of this node: centre Zc, radius Zr, |A|·E in P (each then becomes the node's C, R, E) */
        double *Zc = lg_dev_fw(d, 0, k), *Zr = lg_dev_fw(d, 1, k), *P = lg_dev_fw(d, 2, k);
        double *errz = lg_dev_err(d, k);
        int ez = 1; /* every source's E is zero: both nets computed the same z bit for bit */

        for (int r = 0; r < m; r++) memcpy(Zc + (size_t)r * (size_t)no, L->b, (size_t)no * sizeof *Zc);
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            const lg_linear *A = lg_layer_lin(L, t);
            const double *C = lg_dev_fw(d, 0, A->src), *R = lg_dev_fw(d, 1, A->src), *E = lg_dev_fw(d, 2, A->src);
            size_t nin = (size_t)m * (size_t)A->n_in;
            double beta = t > 0 ? 1.0 : 0.0;
            for (size_t i = 0; i < nin; i++) T[i] = fabs(C[i]) + R[i];
            lg_dev_gemm(d, A, m, C, 0, 1.0, Zc);  /* Σ A·c + b */
            lg_dev_gemm(d, A, m, R, 1, beta, Zr); /* Σ |A|·r */
            lg_dev_gemm(d, A, m, T, 1, beta, Mt); /* Σ |A|·(|c| + r) */
            if (!e_zero[A->src + 1]) {
                lg_dev_gemm(d, A, m, E, 1, ez ? 0.0 : 1.0, P); /* Σ |A|·e */
                ez = 0;
            }
            if (use_pre) lg_dev_gemm(d, A, 1, lg_dev_err(d, A->src), 1, beta, errz); /* Σ |A|·err */
        }
        if (ez) memset(P, 0, nout * sizeof *P);

        int gap_layer = L->act == LG_ACT_RELU && ga != LG_ACT_RELU;
        if (gap_layer && first_gap < 0) first_gap = k;
        int any_e = 0;
        for (size_t i = 0; i < nout; i++) {
            size_t r = i / (size_t)no;
            int o = (int)(i % (size_t)no);
            double M = (Mt[i] + fabs(L->b[o])) * (1.0 + g);
            double zc = Zc[i];
            double zr = (Zr[i] * (1.0 + g) + 3.0 * g * M) * (1.0 + g);
            double p = P[i] * (1.0 + g);
            /* rounding of both nets' dot products; 0 while both nets have
             * computed the same values bit for bit (no substituted layer yet) */
            double eta = ez ? 0.0 : 2.0 * g * (M + p) * (1.0 + g);
            double dk = ez ? 0.0 : (p + eta) * (1.0 + g); /* ≥ |z_R − z_G| */
            double e = dk, t = eta;
            unsigned char s = LG_DEV_S1;
            if (!isfinite(zc) || !isfinite(zr) || !isfinite(dk)) blown[r] = 1;
            double l = (zc - zr) - LG_DEV_EPS * (fabs(zc) + zr);
            double u = (zc + zr) + LG_DEV_EPS * (fabs(zc) + zr);
            if (use_pre) {
                /* computed ẑ_R is within w of the exact z_R (0: the bounds hold for both) */
                double w = x->computed ? 0.0 : (errz[o] * (1.0 + g) + g * M) * (1.0 + g);
                errz[o] = w; /* relu and identity are 1-Lipschitz: the node's output error */
                if (pre_lo[k] && pre_hi[k]) {
                    double pl = pre_lo[k][o], ph = pre_hi[k][o];
                    if (!(pl <= ph) || !isfinite(pl) || !isfinite(ph))
                        return lg_fail(LG_ERR_ARG, "pre-activation bounds of layer %d neuron %d: [%g, %g] is not a finite "
                                       "interval", k, o, pl, ph);
                    pl = (pl - w) - LG_DEV_EPS * (fabs(pl) + w);
                    ph = (ph + w) + LG_DEV_EPS * (fabs(ph) + w);
                    if (pl > u || ph < l)
                        return lg_fail(LG_ERR_ARG, "pre-activation bounds of layer %d neuron %d [%g, %g] miss the "
                                       "interval [%g, %g] of the box: they are not bounds for this box", k, o,
                                       pre_lo[k][o], pre_hi[k][o], l, u);
                    if (pl > l) l = pl;
                    if (ph < u) u = ph;
                }
            }
            /* z_G interval [lg, ug] ⊇ [l − d_k, u + d_k] holds z_R and z_G; with the
             * reference net's own bounds it is their intersection and holds z_G */
            double lg = (l - dk) - LG_DEV_EPS * (fabs(l) + dk);
            double ug = (u + dk) + LG_DEV_EPS * (fabs(u) + dk);
            int own = g_lo && g_hi && g_lo[k] && g_hi[k];
            if (own) {
                double pl = g_lo[k][o], ph = g_hi[k][o];
                if (!(pl <= ph) || !isfinite(pl) || !isfinite(ph) || pl > ug || ph < lg)
                    return lg_fail(LG_ERR_ARG, "reference-net bounds of layer %d neuron %d: [%g, %g] is not a finite "
                                   "interval meeting [%g, %g]: they are not bounds for this box", k, o, pl, ph, lg, ug);
                if (pl > lg) lg = pl;
                if (ph < ug) ug = ph;
                /* |z_R − z_G| ≤ the widest gap between the two intervals */
                double w = fmax(u - lg, ug - l) * (1.0 + LG_DEV_EPS);
                if (w < e) e = w;
            }
            if (L->act == LG_ACT_IDENTITY) {
                if (use_pre) lg_dev_recentre(l, u, &Zc[i], &Zr[i]);
                else Zc[i] = zc, Zr[i] = zr;
            } else {
                lg_dev_recentre(l > 0.0 ? l : 0.0, u > 0.0 ? u : 0.0, &Zc[i], &Zr[i]);
                if (!own) {
                    /* |relu(z_R) − relu(z_G)| ≤ min(d_k, max(0, ug)) */
                    e = ug > 0.0 ? (ug < dk ? ug : dk) : 0.0;
                    s = lg >= 0.0 ? LG_DEV_S1 : ug <= 0.0 ? LG_DEV_S0 : LG_DEV_S01;
                } else {
                    /* relu(z_R) ∈ [l⁺, u⁺], relu(z_G) ∈ [lg⁺, ug⁺]: their difference is at most
                     * the widest gap, and at most d_k (relu is 1-Lipschitz) */
                    double lp = l > 0.0 ? l : 0.0, up = u > 0.0 ? u : 0.0;
                    double gp = lg > 0.0 ? lg : 0.0, hp = ug > 0.0 ? ug : 0.0;
                    double w = fmax(up - gp, hp - lp) * (1.0 + LG_DEV_EPS);
                    e = w < dk ? w : dk;
                    /* s from the hull of both intervals */
                    s = fmin(l, lg) >= 0.0 ? LG_DEV_S1 : fmax(u, ug) <= 0.0 ? LG_DEV_S0 : LG_DEV_S01;
                }
                if (gap_layer) {
                    /* sup of |f(x) − relu(x)| over the z_G interval [lg, ug];
                     * b = max |x| there scales the rounding of computed f(x) */
                    int at_peak = 0;
                    double gap = lg_dev_act_gap_certified(ga, lambda, lg, ug, &at_peak);
                    e = (e + gap) * (1.0 + LG_DEV_EPS);
                    t = (eta + gap) * (1.0 + LG_DEV_EPS);
                    if (stats) {
                        stats->n_gap++;
                        stats->n_peak += at_peak;
                    }
                }
            }
            P[i] = e;
            if (m == 1) d->efw[off + (size_t)o] = e;
            any_e |= e != 0.0;
            d->slope[r * tot + off + (size_t)o] = s;
            d->slack[r * tot + off + (size_t)o] = t;
        }
        e_zero[k + 1] = !any_e;
        off += (size_t)no;
    }
    memcpy(E_out, lg_dev_fw(d, 2, rn->n_layers - 1), (size_t)m * (size_t)lg_net_n_out(rn) * sizeof *E_out);
    *first_gap_out = first_gap;
    return LG_OK;
}

/* Backward storage: the coefficients Λ_k on δ_k of layer k, centre (which
 * = 0) and radius (1), [rows][n_out(k)]. A chain needs two layers at a
 * time (slots 0, 1 and 2, 3 of d->back, alternating from the output; slot
 * 4 holds the sums B); a graph keeps every layer, layer-major, then two
 * scratch blocks and B. */
static double *lg_dev_bk(const lg_dev *d, int which, int k)
{
    const lg_net *rn = d->relu_net;
    size_t rows = (size_t)d->group * (size_t)lg_net_n_out(rn);
    if (d->chain) return d->back + (size_t)(2 * ((rn->n_layers - 1 - k) % 2) + which) * rows * (size_t)d->width;
    return d->back + (size_t)which * rows * d->n_neurons + rows * (d->node_off[k + 1] - (size_t)rn->n_in);
}

/* Graph scratch blocks 0, 1 [rows][width] and (which = 2) the sums B [rows]. */
static double *lg_dev_bk_scratch(const lg_dev *d, int which)
{
    size_t rows = (size_t)d->group * (size_t)lg_net_n_out(d->relu_net);
    if (d->chain) return d->back + (size_t)4 * rows * (size_t)d->width; /* B only */
    return d->back + (size_t)2 * rows * d->n_neurons + (size_t)which * rows * (size_t)d->width;
}

/* Backward refinement for boxes [b0, b0 + mb) of the chunk: B[mb][n_out]
 * gets Σ_k Σ_i |Λ_k[j,i]|·t_k,i (deviation.h). Layers are visited in
 * reverse; Λ_k·S_k·A_t is added to the coefficients of every term's source
 * node (one not below the first substituted layer: the values before it
 * agree bit for bit), so a node read by several layers has all of them
 * before it is itself visited. Each source's products form one sum of
 * n_back terms (every consumer's n_out), whose rounding γ covers. */
static void lg_dev_backward(lg_dev *d, int b0, int mb, int first_gap, double *B)
{
    const lg_net *rn = d->relu_net;
    const int no = lg_net_n_out(rn);
    const size_t tot = d->n_neurons, rows = (size_t)mb * (size_t)no;
    unsigned char *set = d->flag; /* [n_layers] Λ_k written (else 0) */
    memset(set, 0, (size_t)rn->n_layers);
    double *C = lg_dev_bk(d, 0, rn->n_layers - 1), *R = lg_dev_bk(d, 1, rn->n_layers - 1);
    memset(C, 0, rows * (size_t)no * sizeof *C);
    memset(R, 0, rows * (size_t)no * sizeof *R);
    for (size_t q = 0; q < rows; q++) C[q * (size_t)no + q % (size_t)no] = 1.0; /* δ_out = I·δ_out */
    set[rn->n_layers - 1] = 1;
    memset(B, 0, rows * sizeof *B);
    size_t off = tot;
    for (int k = rn->n_layers - 1; k >= first_gap; k--) {
        const lg_layer *L = &rn->layers[k];
        const size_t n = (size_t)L->n_out;
        const double g = lg_dev_gamma(L->n_out);
        off -= n;
        if (!set[k]) continue; /* no path to the output: Λ_k = 0 */
        C = lg_dev_bk(d, 0, k);
        R = lg_dev_bk(d, 1, k);
        /* one term: the radius takes its product's rounding in place (below) */
        const int one = lg_layer_n_lin(L) == 1;
        const double g1 = one && L->lin.src >= first_gap ? lg_dev_gamma(d->n_back[L->lin.src]) : 0.0;
        for (size_t q = 0; q < rows; q++) {
            const size_t b = (size_t)b0 + q / (size_t)no;
            const double *t = d->slack + b * tot + off;
            const unsigned char *s = d->slope + b * tot + off;
            double *c = C + q * n, *r = R + q * n, acc = 0.0;
            for (size_t i = 0; i < n; i++) acc += (fabs(c[i]) + r[i]) * t[i];
            B[q] += acc * (1.0 + g);
            if (k == first_gap) continue;
            /* Λ ← Λ·S_k: coefficient times s ∈ {0}, {1} or [0,1] */
            for (size_t i = 0; i < n; i++) {
                if (s[i] == LG_DEV_S0) c[i] = r[i] = 0.0;
                else if (s[i] == LG_DEV_S01) {
                    double a = c[i] - r[i], z = c[i] + r[i];
                    lg_dev_recentre(a < 0.0 ? a : 0.0, z > 0.0 ? z : 0.0, &c[i], &r[i]);
                }
                if (one) r[i] += g1 * fabs(c[i]); /* rounding of the product Λ·A below */
            }
        }
        if (k == first_gap) break;
        if (lg_kind_is_tnode(L->lin.kind)) continue; /* δ_k = τ_k: nothing passes to its sources */
        /* Λ_src ← Λ_src + Λ·A_t: [rows][n]·[n][n_in] for every term whose source may deviate */
        for (int tt = 0; tt < lg_layer_n_lin(L); tt++) {
            const lg_linear *A = lg_layer_lin(L, tt);
            const int sk = A->src;
            if (sk < first_gap) continue; /* the input, or a node before the first gap: δ = 0 */
            const double gs = lg_dev_gamma(d->n_back[sk]);
            const double *Rp = R;
            if (!one) { /* r + γ·|c|, the rounding of this term's product, in scratch */
                double *S = lg_dev_bk_scratch(d, 1);
                for (size_t i = 0; i < rows * n; i++) S[i] = R[i] + gs * fabs(C[i]);
                Rp = S;
            }
            double *Cs = lg_dev_bk(d, 0, sk), *Rs = lg_dev_bk(d, 1, sk);
            size_t ns = rows * (size_t)A->n_in;
            if (!set[sk]) {
                lg_dev_gemm_t(d, A, (int)rows, C, 0, gs, Cs);
                lg_dev_gemm_t(d, A, (int)rows, Rp, 1, gs, Rs);
                set[sk] = 1;
                continue;
            }
            double *P = lg_dev_bk_scratch(d, 0);
            lg_dev_gemm_t(d, A, (int)rows, C, 0, gs, P);
            for (size_t i = 0; i < ns; i++) Cs[i] += P[i];
            lg_dev_gemm_t(d, A, (int)rows, Rp, 1, gs, P);
            for (size_t i = 0; i < ns; i++) Rs[i] += P[i];
        }
    }
}

/* Most doubles the symbolic pass may hold (its coefficient matrices); above
 * it the pass is skipped (the other bounds stand). */
#define LG_DEV_SYM_CAP ((size_t)1 << 24)

/* Symbolic pass for one box (deviation.h "Symbolic deviation"): δ_k of every
 * node as a linear form C_k·ν over one noise symbol per neuron at or after
 * the first substituted layer, |ν_i| ≤ ρ_i, plus a radius R_k for the
 * rounding of the coefficients. With X = Σ_t A_t·δ_src (coefficients
 * Σ_t C_src·A_tᵀ) and the forward's slope code s and slack t of each
 * neuron: s = 1: δ = X + ν, ρ = t; s = 0: δ = ν, ρ = t; s ∈ [0,1]: δ =
 * X/2 + ν, ρ = |X|/2 + t, |X| ≤ Σ|C|ρ + R. E[n_out] is lowered to the
 * output's Σ|C|ρ + R where that is smaller. */
static lg_status lg_dev_symbolic(lg_dev *d, int first_gap, double *E)
{
    const lg_net *rn = d->relu_net;
    const int nl = rn->n_layers;
    size_t *sym0 = malloc(((size_t)nl + 1) * sizeof *sym0); /* symbols before node k; [nl]: all */
    size_t *coff = malloc(((size_t)nl + 1) * sizeof *coff); /* offset of C_k in the store */
    double *store = NULL;
    lg_status st = LG_OK;
    if (!sym0 || !coff) {
        st = lg_fail(LG_ERR_NOMEM, "deviation: out of memory");
        goto done;
    }
    size_t ns = 0, nc = 0, nv = 0; /* symbols, coefficient doubles, per-neuron doubles */
    for (int k = 0; k < nl; k++) {
        sym0[k] = ns;
        coff[k] = nc;
        if (k < first_gap) continue;
        size_t no = (size_t)rn->layers[k].n_out;
        ns += no;
        if (ns > LG_DEV_SYM_CAP / no) goto done; /* too large: skip */
        nc += ns * no;
        nv += no;
        if (nc > LG_DEV_SYM_CAP) goto done;
    }
    sym0[nl] = ns;
    /* store: every C_k, then ρ [ns], then R and Mg per neuron [nv] each, then |A|·v scratch [2][width] */
    store = malloc((nc + ns + 2 * nv + 2 * (size_t)d->width) * sizeof *store);
    if (!store) goto done; /* no memory for the refinement: skip it */
    double *rho = store + nc, *Rall = rho + ns, *Mall = Rall + nv, *s1 = Mall + nv, *s2 = s1 + d->width;
    size_t voff = 0, noff = 0;
    for (int k = 0; k < first_gap; k++) noff += (size_t)rn->layers[k].n_out;
    for (int k = first_gap; k < nl; k++) {
        const lg_layer *L = &rn->layers[k];
        const size_t no = (size_t)L->n_out, m0 = sym0[k];
        const double g = lg_dev_gamma(d->n_sum[k]), gs = lg_dev_gamma((int)(m0 < INT32_MAX ? m0 : INT32_MAX));
        double *C = store + coff[k], *R = Rall + voff, *Mg = Mall + voff;
        memset(C, 0, (m0 + no) * no * sizeof *C);
        int any = 0; /* some source may deviate */
        for (int t = 0; t < lg_layer_n_lin(L) && !lg_kind_is_tnode(L->lin.kind); t++) { /* a node: δ = ν (below) */
            const lg_linear *A = lg_layer_lin(L, t);
            if (A->src < first_gap) continue; /* the input or a node before the first gap: δ = 0 */
            size_t ms = sym0[A->src] + (size_t)rn->layers[A->src].n_out;
            size_t vs = (size_t)(lg_net_node_offset(rn, A->src) - lg_net_node_offset(rn, first_gap));
            lg_dev_gemm(d, A, (int)ms, store + coff[A->src], 0, 1.0, C); /* X = Σ_t C_src·A_tᵀ, rows < ms */
            lg_dev_gemm(d, A, 1, Rall + vs, 1, any ? 1.0 : 0.0, s1);     /* Σ |A|·R_src */
            lg_dev_gemm(d, A, 1, Mall + vs, 1, any ? 1.0 : 0.0, s2);     /* Σ |A|·Mg_src */
            any = 1;
        }
        for (size_t o = 0; o < no; o++) {
            const unsigned char sc = d->slope[noff + o];
            const double tt = d->slack[noff + o];
            double rx = 0.0, mx = 0.0;
            if (any) {
                /* |X̃ − X| weighted by ρ: the products' rounding and the sources' radii */
                rx = (s1[o] * (1.0 + g) + g * s2[o] * (1.0 + g)) * (1.0 + g);
                for (size_t q = 0; q < m0; q++) mx += fabs(C[q * no + o]) * rho[q];
                mx = mx * (1.0 + gs) + rx;
                mx *= 1.0 + LG_DEV_EPS;
            }
            double r;
            if (sc == LG_DEV_S1) {
                R[o] = rx;
                r = tt;
            } else if (sc == LG_DEV_S0) {
                for (size_t q = 0; q < m0; q++) C[q * no + o] = 0.0;
                R[o] = 0.0;
                r = tt;
            } else {
                for (size_t q = 0; q < m0; q++) C[q * no + o] *= 0.5; /* exact */
                R[o] = 0.5 * rx;
                r = (0.5 * mx + tt) * (1.0 + LG_DEV_EPS);
            }
            C[(m0 + o) * no + o] = 1.0;
            rho[m0 + o] = r;
            Mg[o] = ((sc == LG_DEV_S0 ? 0.0 : mx) + r) * (1.0 + LG_DEV_EPS); /* ≥ |δ| */
            const double ef = d->efw[noff + o];
            if (ef < r) { /* the forward bound is below the new symbol's own radius: δ = ν, |ν| ≤ e_k */
                for (size_t q = 0; q < m0; q++) C[q * no + o] = 0.0;
                R[o] = 0.0;
                rho[m0 + o] = Mg[o] = ef;
            }
            if (isnan(Mg[o])) Mg[o] = INFINITY;
        }
        voff += no;
        noff += no;
    }
    {
        const int out = nl - 1;
        const double *Mg = Mall + voff - (size_t)rn->layers[out].n_out;
        for (int j = 0; j < rn->layers[out].n_out; j++)
            if (Mg[j] < E[j]) E[j] = Mg[j];
    }
done:
    free(sym0);
    free(coff);
    free(store);
    return st;
}

/* One chunk of m ≤ d->chunk boxes. */
static lg_status lg_dev_chunk(lg_dev *d, const double *lo, const double *hi, int m, const lg_dev_ext *x,
                              double *delta, double *e_out, lg_dev_stats *stats)
{
    const lg_net *rn = d->relu_net;
    const int no = lg_net_n_out(rn);
    unsigned char blown[LG_DEV_CHUNK] = {0}; /* row overflowed: its bound is +∞ */
    /* forward e_L [m][no]; backward sums */
    double *E = lg_dev_fw_scratch(d, 2);
    double *B = lg_dev_bk_scratch(d, 2);
    int first_gap = -1;
    lg_status st = lg_dev_forward(d, lo, hi, m, x, E, blown, stats, &first_gap);
    if (st != LG_OK) return st;
    if (first_gap >= 0)
        for (int b0 = 0; b0 < m; b0 += d->group) {
            int mb = m - b0 < d->group ? m - b0 : d->group;
            lg_dev_backward(d, b0, mb, first_gap, B);
            for (size_t q = 0; q < (size_t)mb * (size_t)no; q++) {
                double *e = &E[(size_t)b0 * (size_t)no + q];
                if (B[q] < *e) { /* both are sound: keep the smaller */
                    *e = B[q];
                    if (stats) stats->n_refined++;
                }
            }
        }
    /* both nets' bounds (pair mode, one box): the symbolic pass as a third bound */
    if (first_gap >= 0 && m == 1 && x && x->g_lo && x->g_hi && (st = lg_dev_symbolic(d, first_gap, E)) != LG_OK)
        return st;
    for (int r = 0; r < m; r++) {
        double mx = 0.0;
        for (int o = 0; o < no; o++) {
            double e = E[(size_t)r * (size_t)no + (size_t)o];
            if (!(e <= DBL_MAX)) blown[r] = 1; /* +∞ or NaN */
            if (e > mx) mx = e;
            if (e_out) e_out[(size_t)r * (size_t)no + (size_t)o] = e;
        }
        delta[r] = blown[r] ? INFINITY : mx;
        if (e_out && delta[r] == INFINITY)
            for (int o = 0; o < no; o++) e_out[(size_t)r * (size_t)no + (size_t)o] = INFINITY;
    }
    return LG_OK;
}

lg_status lg_dev_bound_boxes(lg_dev *d, const double *lo, const double *hi, size_t n, double *delta, double *e_out,
                             lg_dev_stats *stats)
{
    if (!d->relu_net) return lg_fail(LG_ERR_ARG, "deviation bound used before lg_dev_init");
    size_t ni = (size_t)d->relu_net->n_in, no = (size_t)lg_net_n_out(d->relu_net);
    for (size_t i = 0; i < n * ni; i++)
        if (!isfinite(lo[i]) || !isfinite(hi[i]) || lo[i] > hi[i])
            return lg_fail(LG_ERR_ARG, "box %zu, input %zu: [%g, %g] is not a finite interval with lo <= hi", i / ni,
                           i % ni, lo[i], hi[i]);
    for (size_t s = 0; s < n; s += (size_t)d->chunk) {
        int m = (int)(n - s < (size_t)d->chunk ? n - s : (size_t)d->chunk);
        lg_status st = lg_dev_chunk(d, lo + s * ni, hi + s * ni, m, NULL, delta + s, e_out ? e_out + s * no : NULL,
                                    stats);
        if (st != LG_OK) return st;
    }
    return LG_OK;
}

lg_status lg_dev_bound_box_pre(lg_dev *d, const double *lo, const double *hi, double *const *pre_lo,
                               double *const *pre_hi, double *delta, double *e_out, lg_dev_stats *stats)
{
    if (!d->relu_net) return lg_fail(LG_ERR_ARG, "deviation bound used before lg_dev_init");
    if (!pre_lo || !pre_hi) return lg_dev_bound_boxes(d, lo, hi, 1, delta, e_out, stats);
    size_t ni = (size_t)d->relu_net->n_in;
    for (size_t i = 0; i < ni; i++)
        if (!isfinite(lo[i]) || !isfinite(hi[i]) || lo[i] > hi[i])
            return lg_fail(LG_ERR_ARG, "input %zu: [%g, %g] is not a finite interval with lo <= hi", i, lo[i], hi[i]);
    lg_dev_ext x = {pre_lo, pre_hi, NULL, NULL, 0, NULL, NULL};
    return lg_dev_chunk(d, lo, hi, 1, &x, delta, e_out, stats);
}

lg_status lg_dev_bound_box_pair(lg_dev *d, const double *lo, const double *hi, const lg_dev_ext *x, double *delta,
                                double *e_out, lg_dev_stats *stats)
{
    if (!d->relu_net) return lg_fail(LG_ERR_ARG, "deviation bound used before lg_dev_init");
    if (!x || !x->r_lo || !x->r_hi) return lg_fail(LG_ERR_ARG, "deviation bound: no bounds of the ReLU net given");
    size_t ni = (size_t)d->relu_net->n_in;
    for (size_t i = 0; i < ni; i++)
        if (!isfinite(lo[i]) || !isfinite(hi[i]) || lo[i] > hi[i])
            return lg_fail(LG_ERR_ARG, "input %zu: [%g, %g] is not a finite interval with lo <= hi", i, lo[i], hi[i]);
    return lg_dev_chunk(d, lo, hi, 1, x, delta, e_out, stats);
}

lg_status lg_dev_bound_balls(lg_dev *d, const double *X, size_t n, double eps, double clip_lo, double clip_hi,
                             double *delta, double *e_out, lg_dev_stats *stats)
{
    if (!d->relu_net) return lg_fail(LG_ERR_ARG, "deviation bound used before lg_dev_init");
    if (!(eps >= 0.0) || !isfinite(eps)) return lg_fail(LG_ERR_ARG, "radius eps = %g, expected a finite value >= 0", eps);
    if (!(clip_lo <= clip_hi)) return lg_fail(LG_ERR_ARG, "clip range [%g, %g] is empty", clip_lo, clip_hi);
    size_t ni = (size_t)d->relu_net->n_in, no = (size_t)lg_net_n_out(d->relu_net);
    size_t chunk = (size_t)LG_DEV_CHUNK * ni;
    double *lo = malloc(chunk * sizeof *lo), *hi = malloc(chunk * sizeof *hi);
    lg_status st = LG_OK;
    if (!lo || !hi) {
        st = lg_fail(LG_ERR_NOMEM, "cannot allocate %zu input boxes", (size_t)LG_DEV_CHUNK);
        goto fail;
    }
    for (size_t s = 0; s < n; s += LG_DEV_CHUNK) {
        size_t m = n - s < LG_DEV_CHUNK ? n - s : LG_DEV_CHUNK;
        for (size_t i = 0; i < m * ni; i++) {
            double x = X[s * ni + i];
            if (!isfinite(x)) {
                st = lg_fail(LG_ERR_ARG, "input %zu, feature %zu is not finite", s + i / ni, i % ni);
                goto fail;
            }
            lg_ball_boxes(&x, 1, eps, clip_lo, clip_hi, &lo[i], &hi[i], NULL, NULL);
        }
        if ((st = lg_dev_bound_boxes(d, lo, hi, m, delta + s, e_out ? e_out + s * no : NULL, stats)) != LG_OK)
            goto fail;
    }
fail:
    free(lo);
    free(hi);
    return st;
}

lg_status lg_dev_bound_global(lg_dev *d, double clip_lo, double clip_hi, double *delta, double *e_out,
                              lg_dev_stats *stats)
{
    if (!d->relu_net) return lg_fail(LG_ERR_ARG, "deviation bound used before lg_dev_init");
    if (!(clip_lo <= clip_hi) || !isfinite(clip_lo) || !isfinite(clip_hi))
        return lg_fail(LG_ERR_ARG, "domain [%g, %g] is not a finite nonempty interval", clip_lo, clip_hi);
    size_t ni = (size_t)d->relu_net->n_in;
    double *lo = malloc(ni * sizeof *lo), *hi = malloc(ni * sizeof *hi);
    lg_status st;
    if (!lo || !hi) {
        st = lg_fail(LG_ERR_NOMEM, "cannot allocate the input domain box");
    } else {
        for (size_t i = 0; i < ni; i++) lo[i] = clip_lo, hi[i] = clip_hi;
        st = lg_dev_bound_boxes(d, lo, hi, 1, delta, e_out, stats);
    }
    free(lo);
    free(hi);
    return st;
}

/* lg_dev_noise at Transformer node k: the difference network computes the
 * exact node of its sources' values f(ẑ_src), which lie within ξ_src of the
 * computed ones, while the double forward pass computes the node of the
 * computed values with rounding. So the computed output is D's value plus
 * ξ_k (verify/devtf.h lg_devtf_noise), pushed like an activation's rounding
 * into every consumer's noise. zm: D's |value| guess of the node's outputs;
 * xi, amag as lg_dev_noise. */
static void lg_dev_noise_tnode(const lg_net *net, int k, const double *zm, double *xi, double *amag)
{
    const lg_layer *L = &net->layers[k];
    const size_t sa = lg_net_node_offset(net, L->lin.src), ko = lg_net_node_offset(net, k);
    double *xo = xi + ko, *mo = amag + ko;
    const double *xa = xi + sa, *ma = amag + sa, *xb = NULL, *mb = NULL;
    if (lg_op_is(L->lin.kind, LG_OPF_TWO_SRC)) {
        const size_t sb = lg_net_node_offset(net, L->lin.op.src_b);
        xb = xi + sb, mb = amag + sb;
    }
    lg_devtf_noise(&L->lin, xa, ma, xb, mb, xo);
    for (int o = 0; o < L->n_out; o++) {
        mo[o] = (zm[o] + xo[o]) * (1.0 + 2.0 * LG_DEV_EPS);
        if (!(zm[o] >= 0.0) || xo[o] != xo[o]) mo[o] = xo[o] = INFINITY; /* NaN guess: no claim */
    }
}

lg_status lg_dev_noise(const lg_net *net, const double *lo, const double *hi, double *const *zmag, double *tau,
                       double *xi_out)
{
    const size_t len = lg_net_nodes_len(net), ni = (size_t)net->n_in;
    const int w = lg_net_max_width(net);
    /* per node: xi ≥ |computed − f(computed pre-activation)| of its output, amag ≥ |computed output| */
    double *xi = malloc((2 * len + 2 * (size_t)w) * sizeof *xi);
    if (!xi) return lg_fail(LG_ERR_NOMEM, "cannot allocate rounding bounds of %zu values", len);
    double *amag = xi + len, *sx = amag + len, *sm = sx + w;
    for (size_t i = 0; i < ni; i++) {
        double a = lo[i], b = hi[i];
        if (net->in_sub) a -= net->in_sub[i], b -= net->in_sub[i];
        if (net->in_div) a /= net->in_div[i], b /= net->in_div[i];
        double m = fmax(fabs(a), fabs(b)) * (1.0 + 4.0 * LG_DEV_EPS); /* ≥ |exact x'| */
        /* x' = (x − sub)/div: two roundings, |x̂' − x'| ≤ ε·|x'| */
        xi[i] = net->in_sub || net->in_div ? LG_DEV_EPS * m * (1.0 + LG_DEV_EPS) : 0.0;
        amag[i] = (m + xi[i]) * (1.0 + LG_DEV_EPS);
    }
    size_t at = 0; /* tau index */
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (lg_kind_is_tnode(L->lin.kind)) {
            lg_dev_noise_tnode(net, k, zmag[k], xi, amag);
            /* no noise input: tau holds ξ, |computed − D's value| of the node's outputs */
            const double *xk = xi + lg_net_node_offset(net, k);
            for (int o = 0; o < L->n_out; o++) tau[at++] = xk[o];
            continue;
        }
        int n = lg_layer_sum_len(L); /* the term sum through core/traverse.h */
        lg_node_buf bx = {net, xi}, bm = {net, amag};
        lg_layer_sum(L, 1, lg_node_buf_val, &bx, sx, 1, 0); /* Σ |A|·ξ */
        lg_layer_sum(L, 1, lg_node_buf_val, &bm, sm, 1, 0); /* Σ |A|·|â| */
        const double g = lg_dev_gamma(n);
        const int smooth = lg_act_relu_like(L->act);
        const lg_act_info *ai = lg_act_info_of(L->act);
        const double fs = ai && ai->fmag ? ai->fmag(L->lambda) : 1.0; /* |f(x)| ≤ fs·|x| */
        double *xo = xi + lg_net_node_offset(net, k), *mo = amag + lg_net_node_offset(net, k);
        for (int o = 0; o < L->n_out; o++, at++) {
            /* ẑ = fl(Σ A·â + b) = Σ A·f(ẑ_src) + b + η + Σ A·ξ_src, |η| ≤ γ·(|b| + Σ|A|·|â|) */
            double M = (sm[o] * (1.0 + g) + fabs(L->b[o])) * (1.0 + g);
            tau[at] = (g * M + sx[o] * (1.0 + g)) * (1.0 + g);
            double zm = zmag[k][o]; /* ≥ |ẑ| */
            /* relu and identity are computed exactly; f̂(ẑ) is within 16ε·fs·|ẑ| of f(ẑ) */
            xo[o] = smooth ? (16.0 * LG_DEV_EPS * fs * zm + LG_DEV_ABS) * (1.0 + LG_DEV_EPS) : 0.0;
            mo[o] = ((smooth ? fs * zm : zm) + xo[o]) * (1.0 + 2.0 * LG_DEV_EPS);
            if (!(zm >= 0.0)) tau[at] = mo[o] = xo[o] = INFINITY; /* NaN guess: no claim */
        }
    }
    if (xi_out) memcpy(xi_out, xi + lg_net_node_offset(net, net->n_layers - 1),
                       (size_t)net->layers[net->n_layers - 1].n_out * sizeof *xi_out);
    free(xi);
    return LG_OK;
}
