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
 */
#ifndef LG_DEVTF_H
#define LG_DEVTF_H

#include <stddef.h>

#include "verify/relax_iv.h"

#define LG_DEVTF_WORK(g) ((g) * (g) + 5 * (g) + 2)

/* The bound d of |a·b − a'·b'| (one product; a sum of K products adds the
 * K bounds, rounded up, by the caller). */
double lg_dev_bilinear(double la, double ua, double ea, double lb, double ub, double eb);

int lg_dev_softmax(size_t g, const double *l, const double *u, const double *e, double *d, lg_dv *work);

int lg_dev_layernorm(size_t g, const double *l, const double *u, const double *e, double eps, const double *gamma,
                     double *d, lg_dv *work);

#endif
