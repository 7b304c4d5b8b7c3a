/* alpha.h — CROWN back-substitution of output objectives with explicit
 * lower ReLU slopes α, and their optimisation (α-CROWN).
 *
 * For an unstable ReLU (l < 0 < u) every α ∈ [0, 1] gives a sound lower
 * relaxation a ≥ α·z, so the bound below is sound for ANY α in [0, 1]; the
 * upper relaxation stays the chord a ≤ s(z − l), s ≥ u/(u − l) (relax.h).
 * A smooth neuron's α ∈ [0, 1] picks, in each row, the line that row uses
 * (lower where its coefficient is positive, upper where negative) from the
 * certified lower or upper family of backsub.h (NaN: the area-best line);
 * any α gives a sound bound there too. A max-pool output's α ∈ [0, 1]
 * weighs two planes of the side its row's coefficient uses (backsub.h: the
 * lower plane (1 − α)·x_p1 + α·x_p2, the upper (1 − α)·U_p1 + α·U_p2), sound
 * for any α since each plane is; α = 0 (the default) is the fixed choice.
 * Pre-activation bounds of the hidden layers come from the caller's
 * lg_bounds (they are not re-optimised). The bound is computed by the one
 * back-substitution of backsub.h, rounding of the whole chain included, as
 * lg_bounds_objective_lower (with α = NULL both compute the same bound up
 * to the summation order of dgemv versus dgemm).
 *
 * Slopes are indexed per objective row r and neuron (k, j) at
 * r·lg_alpha_size(net) + lg_alpha_offset(net, k) + j. Everything is
 * borrowed; results go to caller arrays. Scratch is allocated per call.
 */
#ifndef LG_ALPHA_H
#define LG_ALPHA_H

#include "core/net.h"
#include "verify/bounds.h"

/* Neurons over all layers (the slope vector length of one objective). */
int lg_alpha_size(const lg_net *net);
/* Index of neuron 0 of layer k in that vector. */
int lg_alpha_offset(const lg_net *net, int k);

/* Default slopes (the area heuristic of bounds.h: 1 iff u > −l; NaN for a
 * smooth neuron, 0 for a max-pool output) for all m rows:
 * alpha[m][lg_alpha_size]. */
void lg_alpha_default(const lg_bounds *b, const lg_net *net, int m, double *alpha);

/* out[r] ≤ min over the box of C[r]·y + d[r] (C [m][n_out] row-major).
 * All m rows go through one back-substitution (dgemm over the rows).
 * alpha [m][size] or NULL (area heuristic). Optional outputs (NULL to skip):
 *   Ain  [m][n_in]  coefficients of the final linear function over the
 *                   normalised input x' (its minimiser is a corner);
 *   lam  [m][size]  coefficient of the post-activation a_k[j] in row r
 *                   before layer k is relaxed (a BaBSR-style sensitivity);
 *   grad [m][size]  ∂out[r]/∂alpha (zero where the slope is not used). */
lg_status lg_alpha_bound(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                         const double *alpha, double *out, double *Ain, double *lam, double *grad);

/* `steps` projected (to [0, 1]) Adam ascent steps of rate lr on alpha
 * [m][size] (initialised by the caller, e.g. lg_alpha_default), each row
 * separately. out[r] = best bound seen (never below the starting one); alpha
 * is left at the slopes that gave it, and Ain (optional) is their
 * coefficient vector. Stops early at run's deadline (run NULL: b's,
 * bounds.h): LG_OK with the best finished bound of every row once each row
 * has one (the later steps are an improvement only), else LG_ERR_TIMEOUT
 * and out = −∞ where no bound was finished. */
lg_status lg_alpha_optimize(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d, int steps,
                            double lr, const lg_runctx *run, double *alpha, double *out, double *Ain);

/* β-CROWN: the same with ReLU split constraints carried into
 * the bound by Lagrange multipliers. sign [size] describes the region:
 * sign[i] = +1 where z_i ≤ 0 holds on it (an inactive split), −1 where
 * z_i ≥ 0 holds (active), 0 elsewhere; b must be sound on that region.
 * beta [m][size] (β < 0 or NaN read as 0; ignored where sign is 0): the row
 * gets + Σ_i β_i·sign_i·z_i, which is ≤ 0 on the region, so out[r] ≤ min
 * over the region of C[r]·y + d[r] for ANY α ∈ [0, 1] and β ≥ 0
 * (backsub.h: lg_backsub_lower_beta, rounding included). sign or beta NULL:
 * lg_alpha_bound. gbeta [m][size] (optional): ∂out[r]/∂β (0 off the splits). */
lg_status lg_alpha_bound_beta(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                              const double *alpha, const signed char *sign, const double *beta, double *out,
                              double *Ain, double *lam, double *grad, double *gbeta);

/* Joint projected Adam on α ∈ [0, 1] and β ≥ 0 (β [m][size], warm start
 * from the caller, e.g. the parent node's; left at the best values seen).
 * sign or beta NULL: lg_alpha_optimize. */
lg_status lg_alpha_optimize_beta(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                                 const signed char *sign, int steps, double lr, const lg_runctx *run, double *alpha,
                                 double *beta, double *out, double *Ain);

/* Batches (batched bounds): rows of several sub-problems in one
 * call, so that the back-substitution and the gradient run as dgemm over
 * the stacked rows (backsub.h). Group g is bounded on its own region: b[g]
 * sound there and, with β, its split signs sign[g] (NULL entry: no split);
 * row r belongs to group grp[r] (grp NULL: every row to group 0). The
 * single-problem functions above are the batch of one group. */
typedef struct lg_alpha_batch {
    int ng;
    const lg_bounds *const *b;          /* [ng] */
    const signed char *const *sign;     /* [ng] or NULL (no splits in any group) */
    const int *grp;                     /* [m] or NULL */
    const double *const *thr;           /* [ng] or NULL: split points t ([size] each, NULL entry: all 0);
                                         * sign +1 then means z ≤ t holds on the region, −1 z ≥ t, and
                                         * the row gets + β·sign·(z − t) (activation splits, bab_act.h) */
    int beta_only;                      /* 1: the optimisers keep α as given and move β only */
} lg_alpha_batch;

/* Rows are processed in chunks of at most LG_ALPHA_BATCH_MB megabytes of
 * scratch (lg_alpha_row_bytes per row; in lg_alpha_optimize_batch at most an
 * eighth of the run's --memory cap when that is smaller); within a chunk the optimisation
 * runs in lockstep (one back-substitution of all its rows per step). */
#define LG_ALPHA_BATCH_MB 64
size_t lg_alpha_row_bytes(const lg_net *net);

/* lg_alpha_bound_beta over a batch: alpha, beta, lam, grad, gbeta [m][size], Ain [m][n_in].
 * The bound functions stop at the deadline of group 0's bounds (bounds.h:
 * LG_ERR_TIMEOUT, out −∞ where unfinished). */
lg_status lg_alpha_bound_batch(const lg_alpha_batch *bt, const lg_net *net, int m, const double *C, const double *d,
                               const double *alpha, const double *beta, double *out, double *Ain, double *lam,
                               double *grad, double *gbeta);
/* lg_alpha_optimize_beta over a batch (each row its own Adam; β ignored
 * where its group has no split). beta NULL: α only. */
lg_status lg_alpha_optimize_batch(const lg_alpha_batch *bt, const lg_net *net, int m, const double *C, const double *d,
                                  int steps, double lr, const lg_runctx *run, double *alpha, double *beta, double *out,
                                  double *Ain);

/* Intermediate-layer α-CROWN: tighten the
 * bounds of the unstable neurons of relu layer k, or of every neuron of a
 * smooth layer k (1 ≤ k < n_layers), in b by
 * optimising the slopes of layers < k for each bound (rows ±e_j of z_k,
 * `steps` Adam steps, one batch). Sound: every bound is an α-CROWN bound
 * (any α ∈ [0, 1]) of z_k over the box described by b; b's own values are
 * kept where they are tighter. *n_tight: neurons that became stable. Later
 * layers are not updated (lg_bounds_symbolic_unstable_from does that). */
lg_status lg_alpha_tighten(lg_bounds *b, const lg_net *net, int k, int steps, double lr, const lg_runctx *run,
                           int *n_tight);

#endif
