/* deviation.h — certified bound on ‖f_ReLU(x) − f_ref(x)‖∞ over an input box
 * (DESIGN.md §1 "Deviation bound").
 *
 * f_ref is a network with gelu/lgelu/swish/prelu layers, f_ReLU its
 * substitution (anneal/relu.h): same shapes, bit-identical weights and
 * normalisation; layer k of f_ReLU is relu where f_ref has one of those
 * (lg_act_relu_like), and equal elsewhere.
 *
 * Per neuron gap. For x ∈ ℝ, |xΦ(λx) − max(0,x)| = |x|·Φ(−λ|x|) =: h_λ(|x|).
 * With s = λt, h_λ(t) = (1/λ)·sΦ(−s); d/ds sΦ(−s) = Φ(−s) − sφ(s) has one
 * zero s_p = 0.7517915…, so h_λ increases on [0, s_p/λ] and decreases after,
 * with maximum LG_DEV_PEAK_V/λ = 0.1699712…/λ. Over an interval [l,u] the
 * set of |x| is [a,b] (a = 0 if l ≤ 0 ≤ u); the sup of h_λ over it is
 * h_λ(s_p/λ) if a ≤ s_p/λ ≤ b, else h_λ at the end closest to s_p/λ
 * (lg_dev_gap). GELU is λ = 1.
 * Swish-β (DESIGN.md §1 "Annealed baselines"). |xσ(βx) − max(0,x)| =
 * |x|·σ(−β|x|) =: k_β(|x|) (for x > 0, x(σ(βx) − 1) = −xσ(−βx)). With
 * w = βt, k_β(t) = (1/β)·w/(1 + e^w); d/dw w/(1+e^w) ∝ 1 + e^w − w·e^w,
 * which decreases from 2 and has one zero w_p = 1 + W(1/e) = 1.2784645…
 * (W the Lambert function), where the value is w_p·e^{−w_p}/w_p =
 * e^{−w_p} = W(1/e) = 0.2784645…; so k_β rises on [0, w_p/β], falls after,
 * peaks at LG_DEV_SWISH_PEAK_V/β, and its sup over [a,b] is taken exactly as
 * for h_λ (lg_act_gap_mag_swish, core/act.h).
 * PReLU with slope a. |f(x) − max(0,x)| = |a|·max(0, −x), monotone in x, so
 * over [l,u] the sup is |a|·max(0, −l): exact, no peak.
 * lg_dev_act_gap dispatches on the activation; everything below is the same
 * for every activation because it only uses the per-neuron gap. The
 * rounding of a computed f(x) is ≤ 16·ε·|x| for lgelu and swish and
 * 16·ε·|x|·max(1, |a|) for prelu.
 *
 * Propagation (the ReLU net is the reference path). Let a_R^k, a_G^k be the
 * outputs of layer k of f_ReLU and f_ref, a^0 the (shared) normalised input,
 * z^k = W_k a^{k−1} + b_k, and e_k ≥ |a_R^k − a_G^k| (componentwise).
 *   e_0 = 0;   d_k := |W_k|·e_{k−1} ≥ |z_R^k − z_G^k|.
 *   gap layer (relu in f_ReLU, gelu/lgelu/swish/prelu in f_ref; written
 *   here for λ-GELU, the others only change g_k):
 *     a_R − a_G = [relu(z_R) − relu(z_G)] + [relu(z_G) − f_λ(z_G)],
 *     |first| ≤ |z_R − z_G| ≤ d_k  (relu is 1-Lipschitz; the λ-GELU slope
 *     range [−0.1289, 1.1289] is never needed), |second| ≤ g_k := sup of
 *     h_λ over an interval that contains z_G, namely the interval-arithmetic
 *     interval [l,u] of z_R widened by ±d_k. So e_k = d_k + g_k
 *     (with e_0 = 0 this is e_1 = g_1, e_{k+1} = |W_{k+1}|·e_k + g_{k+1}).
 *   equal layers: relu/relu: e_k = d_k (1-Lipschitz); identity: e_k = d_k.
 *   output: e_L = |W_out|·e_{L−1} and Δ = max_j e_L,j.
 *   A graph (core/net.h: z_k = Σ_t A_t·a^{src(t)} + b_k): d_k := Σ_t
 *   |A_t|·e_{src(t)} with e of the input 0, then the same rules; the
 *   backward refinement adds Λ_k·S_k·A_t to every source's coefficients
 *   (DESIGN.md §1 "The network as a graph").
 * Refinement (sound, never larger): relu(z_R) and relu(z_G) both lie in
 * [0, max(0, u_G)] with u_G = u + d_k the top of the z_G interval, so the
 * first term is ≤ min(d_k, max(0, u_G)); a neuron that is inactive in both
 * nets passes on only its gap, not d_k. This is what we use for relu
 * layers (gap or not); with every interval reaching above 0 it is exactly
 * the DESIGN recursion.
 * Backward refinement (sound, used as min with the above per output). With
 * δ_k = a_R^k − a_G^k, write relu(z_R) − relu(z_G) = s·(z_R − z_G) with
 * s ∈ [0,1] (s = 1 if the z_G interval is ≥ 0, s = 0 if ≤ 0). Then
 *   δ_k = S_k·W_k·δ_{k−1} + τ_k,  |τ_k| ≤ t_k := g_k (+ rounding),
 * so δ_out = Σ_k Λ_k·τ_k with Λ_k = W_L·S_{L−1}·W_{L−1}···S_{k+1}·W_{k+1},
 * and |δ_out,j| ≤ Σ_k Σ_i |Λ_k[j,i]|·t_k,i. Λ_k is computed backwards as an
 * interval matrix (centre/radius; an uncertain s maps a coefficient range
 * to its hull with 0). Keeping the signs of W lets errors of opposite sign
 * cancel, which |W|·e cannot; for deep nets this is often far smaller.
 * Both nets' bounds (lg_dev_bound_box_pair, sound, used as min with the
 * above). The z_G interval [l − d_k, u + d_k] saturates on deep nets: d_k
 * grows like |W|^depth, every gap reaches its peak and every slope s becomes
 * uncertain. Given the reference net's own pre-activation bounds [l_G, u_G]
 * (verify/devnet.h computes them with the ReLU net's, by the verified bound
 * engine, for exact and computed values), the z_G interval is the
 * intersection; |relu(z_R) − relu(z_G)| ≤ min(d_k, max(u⁺ − l_G⁺,
 * u_G⁺ − l⁺)) (x⁺ = max(0, x): the widest gap between the two relu
 * intervals), at an identity node min(d_k, max(u − l_G, u_G − l)); s = 1
 * (0) where both intervals are ≥ 0 (≤ 0). The gaps g_k are then taken over
 * the reference net's own interval.
 * Symbolic deviation (pair mode, one box). The backward refinement's
 * interval matrices lose the signs at every uncertain s, and so grow like
 * |W| through the layers after it. Instead δ_k is carried forward as a
 * linear form over one noise symbol per neuron, δ_k = C_k·ν + r with
 * |ν_i| ≤ ρ_i and |r| ≤ R_k: with X = Σ_t A_t·δ_src (coefficients
 * Σ_t C_src·A_tᵀ) and the neuron's slack t,
 *   s = 1:      δ = X + ν,    ρ = t;
 *   s = 0:      δ = ν,        ρ = t;
 *   s ∈ [0,1]:  δ = X/2 + ν,  ρ = |X|/2 + t   (s·X = X/2 + (s − ½)·X),
 * |X| ≤ Σ_i |C_i|·ρ_i + R; a neuron whose forward e_k is below its ρ
 * takes δ = ν with ρ = e_k. The output's Σ|C|·ρ + R bounds |δ_out|. This
 * is the zonotope of the linear system δ = S·(Σ A·δ) + τ, the McCormick
 * relaxation of s·X over s ∈ [0,1] with |X| bounded by the form itself:
 * signs survive uncertain neurons, and the relaxation's cost is |X|/2, small
 * while the deviation is small. Rounding: R_k = (1 + γ)(Σ|A|·R_src +
 * γ·Σ|A|·(Σ|C_src|ρ + R_src)) for the coefficient products (γ of the
 * layer's sum), Σ|C|ρ is ×(1 + γ) of the symbol count, halving is exact.
 * It is skipped (the other bounds stand) when its coefficient matrices
 * would exceed 2^24 doubles: one per (symbol, neuron) of every node after
 * the first substituted layer.
 * Difference network (verify/devnet.h). A second bound altogether: the
 * verified bound engine (CROWN) on one graph holding both nets and their
 * output difference. It is sound for the exact reals; the double forward
 * passes are reached by writing their rounding as noise on the exact
 * network (lg_dev_noise): ẑ_k = Σ_t A_t·f(ẑ_src) + b_k + ν_k with
 * |ν_k| ≤ γ·(|b| + Σ|A_t|·|â_src|) + Σ|A_t|·ξ_src, ξ the rounding of a
 * computed activation (16ε·fs·|ẑ| for a relu-like f, 0 for relu and
 * identity, ε·|x'| for the normalisation) — a bound that needs |ẑ|, which
 * the noisy network's own bounds give (an induction over the layers,
 * devnet.h). Injecting the noise rather than propagating |ẑ − z| forward
 * keeps its growth to the network's actual gain instead of |W|^depth.
 * The ReLU-net intervals come from interval arithmetic on the box in
 * centre/radius form (centre W·c + b, radius |W|·r), after the normalisation
 * x' = (x − in_sub)/in_div which both nets share (so it adds no deviation).
 *
 * Transformer nodes (product, softmax, layernorm; core/net.h). A node k
 * reads the ReLU net's source intervals [l, u] (they hold its exact and its
 * computed values) and the sources' bounds e; verify/devtf.h
 * (lg_devtf_node) gives the node's interval (the exact image, intersected
 * with the mean-value image of the relaxation planes, widened by the
 * rounding ρ of the node's double forward pass) and
 *   e_k = devtf rule(l, u, e) + ρ_ReLU + ρ_ref,
 * the rule being |ab − a'b'| ≤ |a|·e_b + |b'|·e_a for a product, and the
 * mean-value theorem on the widened box [l − e, u + e] with the certified
 * Jacobian enclosure for softmax and layernorm, capped by their global
 * bounds (softmax: ½·max e and 1; layernorm: its Lipschitz constant
 * |γ_i|(2 + √(g − 1))/√eps times max e, and 2|γ_i|√(g − 1)); a layernorm
 * also by the segment rule on the centred bounds of lg_dev_ext (devtf.h
 * lg_dev_layernorm_seg). With external bounds of the ReLU net's exact
 * values (computed = 0) the node's interval meets them widened by its
 * rounding (the same rules on the sources' rounding bounds). A node whose
 * sources all have e = 0 has e = 0 (both nets compute it bit for bit).
 * The node is then written δ_k = τ_k with |τ_k| ≤ e_k (slope code 0, slack
 * e_k): the backward refinement adds Σ|Λ_k|·e_k and stops there, the
 * symbolic pass gives it a fresh symbol of radius e_k. With both nets'
 * bounds (pair mode) the node's e_k is also at most the widest gap between
 * the two nets' intervals of its outputs, as at an identity node. In the
 * difference network a node has no noise input: the exact node of D's
 * source values differs from the computed one by ξ_k = (the node's change
 * under its sources' ξ: Σ |â|ξ_b + (|b̂| + ξ_b)ξ_a, ½·max ξ, Lipschitz·max ξ)
 * + ρ, which lg_dev_noise passes to its consumers' noise like an
 * activation's rounding. Nets without these nodes take none of these steps.
 *
 * Floating point. Every claim above is made both for the exact real-valued
 * networks and for their double forward passes (lg_net_forward and the BLAS
 * lg_net_forward_batch), so Δ is never below an observed deviation. With
 * u = 2^−53 and γ_n = (n+2)·DBL_EPSILON ≥ n·u/(1 − n·u) for a dot product
 * of length n (any summation order, with or without FMA; lg_dev_gamma):
 *   - n is the length of the whole sum: Σ_t n_in(t) over a layer's terms
 *     (an index map counts 1) forward, the consumers' output widths summed
 *     for a source's coefficients backward (a chain: n_in and n_out);
 *   - every nonnegative product |W|·v is multiplied by (1 + γ_n);
 *   - a computed dot product W·a + b differs from the exact one by at most
 *     γ_n·M with M = |b| + |W|·(|c| + r); z intervals get ±3γ_n·M and d_k
 *     gets +2γ_n·(M + |W|·e) (both nets' rounding);
 *   - the gap g is multiplied by (1 + 1e−12) (erfc is accurate to a few ulp;
 *     its argument's rounding moves it by < 3e−13 relatively before it
 *     underflows), plus 16·DBL_EPSILON·max|z_G| for the rounding of the
 *     computed x·Φ(λx), plus an absolute 1e−300 for underflow;
 *   - interval ends, re-centring and the normalisation are rounded outward by
 *     DBL_EPSILON times their magnitude;
 *   - backward pass: each coefficient product Λ·W_k adds γ_n·|Λ|·|W_k| to
 *     the radius, the radius product is ×(1 + γ_n), and each Σ|Λ|·t is
 *     ×(1 + γ_n); t_k includes the dot-product rounding of d_k;
 *   - up to the first substituted layer both nets perform the same operations
 *     on the same values, so d_k = 0 there (this assumes both nets are run
 *     by the same forward routine, as any comparison of them does).
 * These terms add about 10⁻¹⁴ × (magnitude of the pre-activations) per
 * layer, far below any gap of practical interest (0.17/λ at the peak); they
 * make the bound an honest upper bound for computed outputs too.
 *
 * Ownership: an lg_dev borrows the two networks (they must outlive it) and
 * owns |W| copies and scratch sized once at lg_dev_init for chunks of up to
 * LG_DEV_CHUNK boxes (fewer for very large nets; about 26 MB for a
 * 784-256-256-256-10 net); lg_dev_free releases them. The symbolic pass
 * (pair mode) allocates its coefficient matrices per call and frees them
 * (at most 2^24 doubles; about 24 MB for a net with nine hidden layers of
 * 256). Not thread-safe per object.
 */
#ifndef LG_ANNEAL_DEVIATION_H
#define LG_ANNEAL_DEVIATION_H

#include <float.h>
#include <stddef.h>

#include "core/net.h"

/* γ_n for a dot product (or any sum) of n terms computed in double, in any order, with or
 * without FMA: the computed sum differs from the exact one by at most γ_n·Σ|terms|, since
 * (n + 2)·DBL_EPSILON = 2(n + 2)·u ≥ n·u/(1 − n·u) for n·u ≤ 1/2 (Higham, Accuracy and
 * Stability, Lemma 3.1; u = 2^−53). The one definition every rounding rule uses ("Floating
 * point" above). */
static inline double lg_dev_gamma(double n) { return (n + 2.0) * DBL_EPSILON; }

/* s_p = argmax_s sΦ(−s) and the maximum s_p·Φ(−s_p) (40-digit mpmath, rounded). */
#define LG_DEV_PEAK_S LG_ACT_GELU_PEAK_S
#define LG_DEV_PEAK_V LG_ACT_GELU_PEAK_V

/* Most boxes processed per BLAS call. */
#define LG_DEV_CHUNK 256

/* w_p = 1 + W(1/e) = argmax_w w/(1+e^w) and the maximum W(1/e) (mpmath, 40
 * digits, rounded): the Swish-β gap peaks at |x| = w_p/β with value W(1/e)/β. */
#define LG_DEV_SWISH_PEAK_S LG_ACT_SWISH_PEAK_S
#define LG_DEV_SWISH_PEAK_V LG_ACT_SWISH_PEAK_V

/* sup over x ∈ [l,u] of |f(x) − max(0,x)| for a relu-like activation act
 * (lg_act_relu_like) with parameter p (λ for lgelu, β for swish, slope a
 * for prelu; ignored for gelu), l ≤ u; *at_peak (may be NULL) is set to 1
 * when the interval reaches the activation's largest gap (never for prelu,
 * whose gap is unbounded). Evaluated in double with no safety margin (the
 * bound adds it); NAN for any other activation. */
double lg_dev_act_gap(lg_act act, double p, double l, double u, int *at_peak);

/* lg_dev_act_gap with its safety margins (relative, the rounding of the
 * computed f(x) on [l, u], underflow): the certified gap every deviation
 * bound adds at a substituted neuron. */
double lg_dev_act_gap_certified(lg_act act, double p, double l, double u, int *at_peak);

/* sup over x ∈ [l,u] of |xΦ(λx) − max(0,x)| (l ≤ u, λ > 0), evaluated with
 * erfc in double, no safety margin (the bound adds it). */
double lg_dev_gap(double lambda, double l, double u);

/* Check that relu_net and ref may be compared: same n_in, layer count,
 * layer kinds and sizes, bit-identical params, in_sub, in_div; relu_net only
 * relu/identity; per layer ref's activation equals relu_net's or is
 * gelu/lgelu/swish/prelu where relu_net has relu. LG_ERR_ARG naming the
 * difference. */
lg_status lg_dev_check_pair(const lg_net *relu_net, const lg_net *ref);

/* Counters summed over all boxes of a call (may be NULL). */
typedef struct lg_dev_stats {
    size_t n_gap;  /* substituted neurons (each counted once per box) */
    size_t n_peak; /* of those, neurons whose z_G interval reaches |x| = s_p/λ,
                      i.e. whose gap is the full LG_DEV_PEAK_V/λ (swish: the
                      full LG_DEV_SWISH_PEAK_V/β; prelu: never) */
    size_t n_refined; /* outputs whose bound came from the backward
                         refinement (strictly below the forward recursion) */
} lg_dev_stats;

typedef struct lg_dev {
    const lg_net *relu_net, *ref; /* borrowed */
    double *absW;   /* |W_k| for every layer, carved like params */
    double *buf;    /* forward scratch: 9 arrays of [chunk][width] */
    double *slack;  /* [chunk][n_neurons] slack t per neuron */
    double *efw;    /* [n_neurons] forward bound e per neuron of a one-box call */
    unsigned char *slope; /* [chunk][n_neurons] relu slope code per neuron */
    double *back;   /* backward scratch: 5 arrays of [group·n_out][width] */
    double *err;    /* [2][width]: rounding of the ReLU net (external bounds) */
    int width;      /* max width of the nets */
    int chunk;      /* boxes per forward pass (≤ LG_DEV_CHUNK) */
    int group;      /* boxes per backward pass (≤ chunk) */
    size_t n_neurons; /* Σ n_out over the layers */
    int chain;        /* lg_net_is_chain: two nodes' intervals live at a time (else every node's) */
    size_t nodes_len; /* lg_net_nodes_len */
    size_t *node_off; /* [n_layers + 1] lg_net_node_offset of node k − 1 */
    int *n_sum;       /* [n_layers] terms of one pre-activation sum: Σ_t n_in (1 for an index map) */
    int *n_back;      /* [n_layers] terms of one coefficient sum of the backward pass: Σ n_out of
                         the layers that read the node, once per term */
    unsigned char *flag; /* [n_layers + 1] per-node flags of one pass */
    double *tbuf;        /* Transformer nodes' scratch (NULL without them) */
} lg_dev;

/* Check the pair (lg_dev_check_pair, lg_net_validate on both) and allocate.
 * On failure d is zeroed. */
lg_status lg_dev_init(lg_dev *d, const lg_net *relu_net, const lg_net *ref);
/* Free; a zeroed lg_dev is a no-op. */
void lg_dev_free(lg_dev *d);

/* For n input boxes lo[i], hi[i] ([n][n_in], raw input space before the
 * normalisation, lo ≤ hi, finite): delta[i] ≥ sup over the box of
 * ‖f_ReLU(x) − f_ref(x)‖∞. e_out ([n][n_out], may be NULL) gets the
 * per-output bounds (delta[i] is their max). stats (may be NULL) is
 * incremented. LG_ERR_ARG for a non-finite or reversed box. If the
 * arithmetic overflows (huge weights) the box's bounds are +∞ (still an
 * upper bound; never NaN). */
lg_status lg_dev_bound_boxes(lg_dev *d, const double *lo, const double *hi, size_t n, double *delta, double *e_out,
                             lg_dev_stats *stats);

/* Boxes [x − eps, x + eps] ∩ [clip_lo, clip_hi] around each row of X
 * ([n][n_in]); eps ≥ 0, clip_lo ≤ clip_hi. Otherwise as lg_dev_bound_boxes. */
lg_status lg_dev_bound_balls(lg_dev *d, const double *X, size_t n, double eps, double clip_lo, double clip_hi,
                             double *delta, double *e_out, lg_dev_stats *stats);

/* One box with external pre-activation bounds for the ReLU net (e.g. the
 * symbolic bounds verify/ computes for the same box, in the layout of
 * lg_problem: pre_lo[k][i] ≤ z_k[i] ≤ pre_hi[k][i] for the exact ReLU net,
 * k over all layers; a NULL pre_lo[k] or pre_hi[k] skips layer k). They are
 * intersected with this module's own intervals, after widening by a bound on
 * the ReLU net's accumulated rounding, so tighter bounds give a tighter Δ.
 * Bounds that are not finite intervals or miss the box's own intervals are
 * refused with LG_ERR_ARG (they cannot be bounds for this box). NULL pre_lo
 * or pre_hi: same as lg_dev_bound_boxes with n = 1. */
lg_status lg_dev_bound_box_pre(lg_dev *d, const double *lo, const double *hi, double *const *pre_lo,
                               double *const *pre_hi, double *delta, double *e_out, lg_dev_stats *stats);

/* External pre-activation bounds of one box, in the layout of lg_problem
 * (per layer k, NULL pointers skip a layer): r_lo/r_hi the ReLU net's, g_lo/
 * g_hi (may be NULL) the reference net's. computed = 0: r_lo/r_hi bound the
 * exact z_R only (this module widens them by the ReLU net's rounding, as
 * lg_dev_bound_box_pre); computed = 1: both pairs hold for the exact and
 * the computed pre-activations (verify/devnet.h gives such bounds). */
typedef struct lg_dev_ext {
    double *const *r_lo, *const *r_hi;
    double *const *g_lo, *const *g_hi;
    int computed;
    /* c_lo/c_hi (may be NULL, read at layernorm layers only): per layer k, bounds
     * c_lo[k][o] ≤ x_o − mean(x over o's group) ≤ c_hi[k][o] of the layernorm's exact
     * input x in the ReLU net (verify's centred bounds, opstage.h); widened here by the
     * ReLU net's rounding, they give the layernorm the segment rule (verify/devtf.h). */
    double *const *c_lo, *const *c_hi;
} lg_dev_ext;

/* lg_dev_bound_box_pre with the reference net's own bounds as well
 * ("Both nets' bounds" above): the z_G interval is [l − d_k, u + d_k] ∩
 * [g_lo, g_hi], relu(z_R) − relu(z_G) is at most the widest gap between
 * the two nets' relu intervals (and at most d_k), and the slope s is
 * certain wherever both intervals have one sign. Bounds that miss the
 * box's own intervals are refused with LG_ERR_ARG. g_lo/g_hi NULL (and
 * computed = 0): lg_dev_bound_box_pre with x's centred bounds. */
lg_status lg_dev_bound_box_pair(lg_dev *d, const double *lo, const double *hi, const lg_dev_ext *x, double *delta,
                                double *e_out, lg_dev_stats *stats);

/* The rounding of net's double forward pass (lg_net_forward,
 * lg_net_forward_batch) written as noise on the exact network (deviation.h
 * "Difference network"): for every x in the raw box [lo, hi], if every
 * computed pre-activation obeys |ẑ_k[i]| ≤ zmag[k][i] (zmag: per layer, the
 * layout of lg_problem), then
 *     ẑ_k = Σ_t A_t·f_src(ẑ_src) + b_k + ν_k,   |ν_k[i]| ≤ tau[i + Σ_{j<k} n_out(j)],
 * with f_src(ẑ_src) the exact activation of the computed pre-activation (the
 * input: the exact normalised x'), and the computed output is
 * f_out(ẑ_out) + ξ, |ξ_j| ≤ xi_out[j] (0 for relu and identity; xi_out may
 * be NULL). tau has Σ n_out entries. A Transformer node k has no noise
 * input: its entries of tau hold ξ_k instead, |computed output − the exact
 * node of f_src(ẑ_src)| ("Transformer nodes" above). The rules of "Floating point" above:
 * ν_k = η_k + Σ_t A_t·ξ_src, |η_k| ≤ γ·(|b| + Σ_t |A_t|·|â_src|), |ξ| ≤
 * 16ε·fs·|ẑ| for a relu-like f, ε·|x'| for the normalisation. */
lg_status lg_dev_noise(const lg_net *net, const double *lo, const double *hi, double *const *zmag, double *tau,
                       double *xi_out);

/* The whole domain [clip_lo, clip_hi]^n_in (DESIGN: [0,1]^n for images). */
lg_status lg_dev_bound_global(lg_dev *d, double clip_lo, double clip_hi, double *delta, double *e_out,
                              lg_dev_stats *stats);

#endif
