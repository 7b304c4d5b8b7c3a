/* devtf.h — the certified deviation through the Transformer node kinds
 * (DESIGN.md §3 "Relaxations of the Transformer node kinds", deviation):
 * two networks' values x (one net) and x' (the other) of a node's inputs
 * with x ∈ [l, u] and |x_j − x'_j| ≤ e_j give, per output,
 *
 *   |f_i(x) − f_i(x')| ≤ d_i
 *
 * for the exact real f, the doubles read as exact reals.
 * - product a·b: |ab − a'b'| ≤ |a|·|b − b'| + |b'|·|a − a'|, with |a| ≤
 *   max|[la, ua]| and |b'| ≤ max|[lb − eb, ub + eb]|, every step rounded up;
 * - softmax and layernorm: x and x' both lie in the widened box
 *   W = [l − e, u + e] (rounded outward), which is convex, so the mean-value
 *   theorem on the segment gives |f_i(x) − f_i(x')| ≤ Σ_j sup_W |∂_j f_i|·e_j,
 *   with the Jacobian enclosure of relax_softmax.h / relax_layernorm.h over
 *   W, rounded up.
 * A bound that is not finite gives d = +∞ (return 0). work: LG_DEVTF_WORK(g)
 * lg_dv, caller-owned; the caller owns every array; nothing is allocated.
 * Each kind's rules are in its own file (devtf_product.c, devtf_softmax.c,
 * devtf_layernorm.c), reached through the deviation table lg_devop below;
 * what they share is devtf.c (devtf_kind.h).
 */
#ifndef LG_DEVTF_H
#define LG_DEVTF_H

#include <stddef.h>

#include "core/net.h"
#include "verify/relax_iv.h"

#define LG_DEVTF_WORK(g) ((g) * (g) + 5 * (g) + 2)

/* The bound d of |a·b − a'·b'| (one product; a sum of K products adds the
 * K bounds, rounded up, by the caller). */
double lg_dev_bilinear(double la, double ua, double ea, double lb, double ub, double eb);

int lg_dev_softmax(size_t g, const double *l, const double *u, const double *e, double *d, lg_dv *work);

int lg_dev_layernorm(size_t g, const double *l, const double *u, const double *e, double eps, const double *gamma,
                     double *d, lg_dv *work);

/* Rounding of the double forward passes of core/op_bilinear.c,
 * op_softmax.c and op_layernorm.c (DESIGN.md §3 "Relaxations of the
 * Transformer node kinds", deviation): for inputs x̂ (any doubles; for
 * layernorm with |x̂_j| ≤ M over the group) the computed output differs from
 * the exact node of x̂ by at most
 * - product: γ_K·mass, mass ≥ Σ_k |a_k|·|b_k| (any summation order, FMA or
 *   not), plus an absolute 2^-1000·K for underflow;
 * - softmax: 4η + γ_g + (g + 4)·ε + (g + 1)·2^-1000, η = 2^-39 the trusted
 *   relative error of libm's exp (LG_LIBM_REL_ERR, core/act_relax.h);
 * - layernorm: |γ_i|·((1 + √g)·Δc·rmax + √g·γ_{g+8}) + ε·(|γ_i|·√g + |β_i|)
 *   (plus underflow), Δc = γ_{g+8}·M the error of a centred value.
 * Every result is rounded up (γ_n = 1e-12 + (n + 2)·ε as anneal/deviation.h).
 * Lipschitz constants in the ∞-norm of each output on all of R^g:
 * softmax ½ (Σ_j |∂_j s_i| = 2s_i(1 − s_i)), layernorm
 * |γ_i|·(2 + √(g − 1))/√eps. */
double lg_devtf_round_product(int K, double mass);
double lg_devtf_round_softmax(int g);
double lg_devtf_round_layernorm(int g, double M, double rmax, double gamma, double beta);
/* rmax ≥ 1/√(v + eps) along the segment from the exact centred values of
 * any x̂ in the box [l, u] to the computed ones (v ≥ (σ_lo − Δc)², σ_lo² the
 * box's variance lower bound); l, u NULL: 1/√eps, for any inputs. */
double lg_devtf_ln_rmax(int g, const double *l, const double *u, double eps, double M);
double lg_devtf_lip_layernorm(int g, double eps, double gamma);
/* v_lo ≤ v = Σ_i c_i²/g (c = x − mean) over the box [l, u] (NULL: no box) and the
 * centred bounds clo ≤ c ≤ chi (NULL: none; an empty entry is ignored), rounded down;
 * 0 when nothing is known. */
double lg_devtf_ln_vlo(int g, const double *l, const double *u, const double *clo, const double *chi);

/* The layernorm's segment rule: for x in the box [l, u] (either may be NULL) whose
 * centred values lie in [clo, chi] (NULL: no such bounds) and any x' with
 * |x'_j − x_j| ≤ e_j, the standard deviation along the segment from x to x' is at least
 * s = σ_lo − |e|₂/√g (σ_lo² = lg_devtf_ln_vlo; σ is |Pz|₂/√g, P the centring, a norm),
 * so r = 1/√(v + eps) ≤ R = 1/√(max(s, 0)² + eps), and with δc = P(x' − x),
 * |δc_i| ≤ e_i + Σ_j e_j/g, |δc|₂ ≤ |e|₂, |ĉ|₂ ≤ √g and h_i ≥ |ĉ_i| = |c_i|·r on the
 * segment (≤ √(g − 1)):
 *   |y_i(x) − y_i(x')| ≤ |γ_i|·R·(e_i + Σ_j e_j/g + h_i·|e|₂/√g)
 * (dy_i/dt = γ_i·r·(δc_i − ĉ_i·(ĉ·δc)/g)), every step rounded up. d[g] gets the bounds
 * (+∞ where not finite; returns 0 then). A bound that follows the centred bounds of
 * `verify` (opstage_ln.c) rather than the box widened by e. */
int lg_dev_layernorm_seg(int g, const double *l, const double *u, const double *clo, const double *chi,
                         const double *e, double eps, const double *gamma, double *d);

/* One Transformer node L (core/net.h) of a substitution pair on one box,
 * for the certified deviation (anneal/deviation.h "Transformer nodes"):
 * from the ReLU net's source intervals [al, ah] (and [bl, bh] of a
 * product's second source; NULL otherwise), which hold its exact and its
 * computed values, and the sources' deviation bounds ea (eb), gives
 * [lo, hi] ∋ the ReLU net's node output, exact and computed (the exact
 * image widened by the rounding above), and e ≥ |out_ReLU − out_ref| for
 * the exact nets and for the computed ones (devtf rules plus both nets'
 * rounding). clo, chi (or NULL; layernorm only, the node's n_out entries): bounds of the
 * centred inputs c_o = x_o − mean of its group, for the exact and the computed values of
 * the ReLU net; the layernorm's bound is then also the segment rule's (lg_dev_layernorm_seg).
 * A bound that is not finite is ∓∞ / +∞; returns 0 then.
 * work: LG_DEVTF_NODE_WORK(L) doubles, caller-owned. */
#define LG_DEVTF_NODE_WORK(g) (4 * (g) * (g) + 32 * (g) + 8)
int lg_devtf_node(const lg_linear *L, const double *al, const double *ah, const double *ea, const double *bl,
                  const double *bh, const double *eb, const double *clo, const double *chi, double *lo, double *hi,
                  double *e, double *work);

/* The deviation's part of the node-kind table (core/op.h; lg_op is core's, this one is the
 * deviation's own because core does not link these rules): one entry per Transformer kind,
 * each pointing at its kind's file (devtf_product.c, devtf_softmax.c, devtf_layernorm.c).
 * The certified deviation (anneal/deviation.c) and the difference network's checks reach a
 * node's rules only through it, by the three calls below and lg_devtf_node. */
typedef struct lg_devop {
    lg_layer_kind kind;
    /* Doubles of work lg_devtf_node takes for node L. */
    size_t (*work)(const lg_linear *L);
    /* lg_devtf_node's rule for the kind (its contract; lg_devtf_node then marks what is not
     * finite). */
    void (*node)(const lg_linear *L, const double *al, const double *ah, const double *ea, const double *bl,
                 const double *bh, const double *eb, const double *clo, const double *chi, double *lo, double *hi,
                 double *e, double *work);
    /* lg_devtf_noise's rule for the kind. */
    void (*noise)(const lg_linear *L, const double *xa, const double *ma, const double *xb, const double *mb,
                  double *xo);
    /* lg_devtf_centred's rule, or NULL: the kind reads no centred bounds. */
    int (*centred)(const lg_linear *L, const double *err, const double *clo_in, const double *chi_in, double *clo,
                   double *chi);
    /* lg_devtf_envelope's rule for the kind. */
    void (*envelope)(const lg_linear *L, const double *la, const double *ua, const double *ea, const double *ma,
                     const double *lb, const double *ub, const double *eb, const double *mb, double *s,
                     lg_dv *work, double *d, double *bx);
} lg_devop;

/* The entry of kind k, or NULL for a kind that is not a Transformer node. */
const lg_devop *lg_devop_of(lg_layer_kind k);
/* The rounding envelope's step at Transformer node L (verify/devgrad_net.c): s[n_out] ≥
 * |computed − exact| of each output, from its sources' exact-value intervals [la, ua] (and
 * [lb, ub]: a product's second source; else ignored), their computed values' errors ea, eb
 * and magnitudes ma, mb: the kind's deviation rule with e = the sources' errors plus its
 * rounding (lg_devtf_round_*), rounded up; +∞ where not finite. Scratch: work
 * LG_DEVTF_WORK(group) lg_dv, d [group], bx [2·group]. */
void lg_devtf_envelope(const lg_linear *L, const double *la, const double *ua, const double *ea, const double *ma,
                       const double *lb, const double *ub, const double *eb, const double *mb, double *s,
                       lg_dv *work, double *d, double *bx);
/* The doubles of work lg_devtf_node takes for Transformer node L. */
size_t lg_devtf_node_work(const lg_linear *L);
/* The double forward pass's noise at Transformer node L (anneal/deviation.h lg_dev_noise):
 * the computed output is the exact node of the computed sources plus ξ, and from the sources'
 * ξ xa (xb: the second source's, else NULL) and |value| bounds ma (mb) this gives ξ of its
 * n_out outputs into xo — the node's change under input changes ≤ ξ plus its rounding above:
 * a product Σ (|â|·ξ_b + (|b̂| + ξ_b)·ξ_a) + γ_K·Σ |â|·|b̂|; softmax ½·max ξ (Σ_j |∂_j s_i|
 * ≤ ½) plus its rounding; layernorm its Lipschitz constant times max ξ plus its rounding. */
void lg_devtf_noise(const lg_linear *L, const double *xa, const double *ma, const double *xb, const double *mb,
                    double *xo);
/* The centred bounds node L's rule reads (lg_devtf_node's clo, chi: a layernorm's), from
 * bounds clo_in, chi_in [n_out] of the exact ReLU net's centred inputs c_o = x_o − mean,
 * widened to hold the computed ones: |ĉ_o − c_o| ≤ err_o + Σ_{group} err/g, err [n_in] the
 * bound of |computed − exact| of its source's values (∓∞ where not finite). Returns 1, or 0
 * with nothing written for a kind that reads none. */
int lg_devtf_centred(const lg_linear *L, const double *err, const double *clo_in, const double *chi_in,
                     double *clo, double *chi);

#endif
