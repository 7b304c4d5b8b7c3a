/* devgrad.h — the certified deviation of a substitution pair by the mean-value
 * theorem on an interval gradient (DESIGN.md §1 "Deviation bound", *the
 * interval gradient*).
 *
 * The pair (relu, ref) shares its weights (lg_dev_check_pair); they differ
 * only at the substituted activations. Let F(x, δ) be the ReLU net in which
 * each substituted neuron j outputs relu(z_j) − δ_j. Then f_relu(x) = F(x, 0)
 * and f_ref(x) = F(x, δ*) with δ*_j = relu(z̃_j) − act(z̃_j) at the reference
 * net's own pre-activation z̃_j, which lies in F's range of z_j over the
 * region R = {x in the box, δ in [Dlo, Dhi]} where [Dlo, Dhi] encloses
 * relu − act over that range. Along the segment t ↦ (x, t·δ*) ⊂ R the
 * function is Lipschitz and piecewise smooth, so (Clarke's mean-value
 * theorem, relu' at 0 taken as [0, 1])
 *     f_ref,i(x) − f_relu,i(x) ∈ { Σ_j g_ij·δ_j : g_i ∈ G_i, δ ∈ [Dlo, Dhi] },
 * G_i an enclosure of ∂F_i/∂δ_j = −∂F_i/∂(output j) over R. G_i is one
 * backward pass per output in centre/radius interval arithmetic with each
 * node's local Jacobian over R's node bounds: linear terms exact (centre
 * through Aᵀ, radius through |A|ᵀ, core/traverse.h), relu slope 0, 1 or
 * [0, 1], the Transformer kinds through their dev_vjp entries
 * (verify/opstage.h; each in its kind's opstage_*.c). Everything is rounded outward, so
 * [lo_i, hi_i] holds the exact-real difference; the double forward passes'
 * rounding is the caller's (it adds the envelope it already has).
 *
 * The region's node bounds are the caller's: bounds over R (e.g. the ReLU
 * net's bounds with every substituted neuron's output widened by its band,
 * lg_devgrad_region). Nothing is kept between calls; work memory is
 * allocated per call and freed.
 */
#ifndef LG_DEVGRAD_H
#define LG_DEVGRAD_H

#include "core/net.h"
#include "core/runctx.h"
#include "verify/bounds.h"
#include "verify/relax_iv.h"

/* One node's interval vector–Jacobian product (opstage.h dev_vjp): the sources' output
 * intervals (a; b: a product's second source), the node's output intervals o, a
 * layernorm's centred-input bounds c (or NULL), and the adjoints the step adds into
 * (centre m, radius r) of each source. */
typedef struct lg_devgrad_src {
    const double *alo, *ahi, *blo, *bhi, *olo, *ohi, *clo, *chi;
    double *am, *ar, *bm, *br;
} lg_devgrad_src;
#define LG_DEVGRAD_VJP_WORK(g) (3 * (size_t)(g) + 2)

/* [m − r, m + r] rounded outward. */
lg_dv lg_devgrad_iv(double m, double r);
/* *am += the centre of x, *ar += its radius, rounded so that [am − ar, am + ar] holds the old
 * interval plus x (ar = +∞ when x is not finite). */
void lg_devgrad_acc(lg_dv x, double *am, double *ar);

/* The kinds' entries (in each kind's own file: opstage_bilinear.c, opstage_softmax.c,
 * opstage_layernorm.c). */
void lg_devgrad_product(const lg_layer *L, const lg_devgrad_src *S, const double *vm, const double *vr, lg_dv *work);
void lg_devgrad_softmax(const lg_layer *L, const lg_devgrad_src *S, const double *vm, const double *vr, lg_dv *work);
void lg_devgrad_layernorm(const lg_layer *L, const lg_devgrad_src *S, const double *vm, const double *vr,
                          lg_dv *work);

/* The bands of the substituted neurons over the region: for every layer k where ref's
 * activation differs from relu's, band_lo[k][i] ≤ relu(z) − act(z) ≤ band_hi[k][i] for z in
 * [lo[k][i], hi[k][i]] and for the computed act (its rounding); NULL arrays elsewhere.
 * Returns 0 when not finite somewhere. */
int lg_devgrad_band(const lg_net *relu, const lg_net *ref, int k, const double *lo, const double *hi,
                    double *band_lo, double *band_hi);

/* The node bounds of the region: lo[k], hi[k] the pre-activation bounds of every layer of
 * F over R (the layout of lg_bounds), xlo, xhi the normalised input box; clo, chi (may be
 * NULL, or NULL per layer) the centred-input bounds of layernorm layers (opstage.h: the first
 * n_out entries of lg_bounds dlo, dhi). band_lo, band_hi: lg_devgrad_band's per layer. */
typedef struct lg_devgrad_region {
    double *const *lo, *const *hi;
    const double *xlo, *xhi;
    double *const *clo, *const *chi;
    double *const *band_lo, *const *band_hi;
    /* The post-activation intervals of every node (node layout), or NULL: from lo, hi and the
     * bands (lg_devgrad_region_post). */
    const double *alo, *ahi;
} lg_devgrad_region;

/* The gradient passes' work sizes: *N the node layout's length, *w the widest node (or the
 * input), *gmax the largest group of a grouped node (1 if none). */
void lg_devgrad_sizes(const lg_net *relu, size_t *N, size_t *w, size_t *gmax);

/* The post-activation intervals [alo, ahi] of every node of relu over the region (node
 * layout, off[j + 1] = lg_net_node_offset(relu, j)): the input box, then each layer's outputs
 * from R's pre-activation bounds, a substituted neuron's relu(z) − δ with δ in its band. */
void lg_devgrad_region_post(const lg_net *relu, const lg_net *ref, const lg_devgrad_region *R, const size_t *off,
                            double *alo, double *ahi);

/* LG_OK if every node kind of net has a dev_vjp entry (verify/opstage.h), else
 * LG_ERR_UNSUPPORTED naming the first that has none (max-pool). */
lg_status lg_devgrad_check_net(const lg_net *net);

/* [dlo[i], dhi[i]] ∋ f_ref,i(x) − f_relu,i(x) for every x of the region's box (exact reals),
 * for every output i. LG_ERR_UNSUPPORTED for a node kind without a dev_vjp entry (max-pool);
 * LG_ERR_NOMEM. Bounds that are not finite are ∓∞. */
lg_status lg_devgrad_bound(const lg_net *relu, const lg_net *ref, const lg_devgrad_region *R, double *dlo,
                           double *dhi);

/* The backward rounding bound of net's double forward pass (devgrad_net.h "Rounding"): the
 * computed output is the exact net of the computed node values plus each node's local rounding,
 * |ρ| ≤ ro at each node's output (node layout: the input's normalisation, a smooth activation's,
 * a Transformer node's) and ≤ rp at each layer's pre-activation (its dot product's); with the
 * adjoints a of lg_devgrad_bound's pass over R (whose intervals must hold the computed values
 * and every value between them and the exact ones; no substitution: R's bands are not read),
 * out[o] ≥ Σ_k |a_k|·ρ_k ≥ |ŷ_o − y_o|, rounded up (+∞ where not finite). A smooth activation's
 * slope is enclosed over R's pre-activation bounds. LG_ERR_NOMEM, LG_ERR_UNSUPPORTED as there. */
lg_status lg_devgrad_round_bound(const lg_net *net, const lg_devgrad_region *R, const double *ro, const double *rp,
                                 double *out);

/* lg_devgrad_bound with the adjoint carried as an affine form (devgrad_affine.c): the
 * Jacobians' uncertainty of every node as fresh noise symbols pushed through the later nodes'
 * centre Jacobians with their signs, at most K symbols (the smallest folded into a radius).
 * The same enclosure claim as lg_devgrad_bound; cost about K times its. run: the deadline
 * (checked per output; LG_ERR_TIMEOUT past it), or NULL. */
lg_status lg_devgrad_bound_affine(const lg_net *relu, const lg_net *ref, const lg_devgrad_region *R, size_t K,
                                  const lg_runctx *run, double *dlo, double *dhi);

#endif
