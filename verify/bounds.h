/* bounds.h — sound pre-activation bounds of a piecewise-linear network over
 * an input box, and sound lower bounds of linear objectives of its outputs.
 *
 * For every layer k and neuron i: lo[k][i] ≤ z_k[i] ≤ hi[k][i] for all x in
 * the box, z_k = Σ_t A_t·a_src(t) + b_k before the activation (a chain:
 * W_k·a_{k−1} + b_k; a graph sums every term, core/net.h), a_{−1} the input
 * after the in-graph normalisation x' = (x − in_sub)/in_div. The rules at a
 * sum node, rounding included: DESIGN.md §3 "Floating point", *Sum nodes*.
 *
 *   lg_bounds_interval  interval arithmetic, layer by layer;
 *   lg_bounds_symbolic  DeepPoly/CROWN back-substitution to the input box
 *                       (backsub.h; the ReLU relaxation of relax.h: chord
 *                       upper line, lower slope 0 or 1 by the area
 *                       heuristic 1 iff u > −l), intersected with the
 *                       interval bounds;
 *   lg_bounds_lp        (bounds_lp.c) LP tightening of every
 *                       still-unstable neuron, layer by layer: bounds_lp.c
 *                       builds the triangle LP (chord of relax.h), the
 *                       solver (GLPK) and the sound dual bound live behind
 *                       encode/lp_relax.h; verify/ has no GLPK of its own.
 *
 * Floating-point soundness (DESIGN.md §3 "Floating point and overflow in
 * the bounds"): every bound holds for the real-valued network whose weights
 * are the doubles taken as exact values. Sums of N terms t_1..t_N are
 * widened outward by the margin rule
 *     (|v| + Σ|t_i|) · (N + 1) · 2^-50 + 2^-1000,
 * which dominates the rounding γ_N·Σ|t_i| by a factor ≥ 4; back-substitution
 * also carries the rounding of every coefficient product (backsub.h). The
 * normalised input box is rounded outward by one ulp per operation. A bound
 * that overflows is −∞ (lower) or +∞ (upper), never NaN, never finite by
 * accident; objective lower bounds that are not finite are −∞.
 *
 * Networks must be piecewise-linear (relu or identity); other activations
 * make every function here return LG_ERR_UNSUPPORTED.
 *
 * Deadline: b->run (NULL after lg_bounds_init; the caller sets it) is the
 * run context every computation on b checks (core/runctx.h): interval per
 * layer, back-substitution per layer of every batch of rows, LP per layer
 * and per LP. Past its deadline a function stops and returns
 * LG_ERR_TIMEOUT; the bounds it leaves are still sound (each neuron keeps
 * the tighter of its old bound and a finished new one) but unfinished —
 * later layers were not tightened — so the caller must not take them for
 * the result and answers timeout.
 *
 * An lg_bounds owns its arrays (one allocation); lg_bounds_free releases it.
 * The net and run are borrowed.
 */
#ifndef LG_BOUNDS_H
#define LG_BOUNDS_H

#include "core/net.h"
#include "core/runctx.h"

typedef struct lg_bounds {
    int n_layers;
    int *width;            /* [n_layers] neurons per layer */
    double **lo, **hi;     /* [n_layers][width[k]] pre-activation bounds */
    double *xlo, *xhi;     /* [n_in] normalised input box */
    int n_in;
    /* Max-pool layers (DESIGN.md §1 "The max-pool node"): for max-pool layer k whose source is a
     * layer, dref[k][o] is a reference position p of window o (in lg_max_window order; −1: none
     * yet) and dlo[k], dhi[k] [n_out·K] (K = kh·kw) bound x_q − x_p, the source's outputs at
     * window positions q and p (entry o·K + q; ∓∞: no bound); NULL for the other layers. */
    int **dref;
    double **dlo, **dhi;
    size_t n_diff;         /* Σ over max-pool layers of n_out·(2K + 1): what lg_bounds_diff_save copies */
    const lg_runctx *run;  /* deadline of the computations on b (borrowed; NULL none) */
    void *store;           /* single allocation behind every array above */
} lg_bounds;

/* Allocate for net's shapes (bounds set to ∓∞, run NULL). */
lg_status lg_bounds_init(lg_bounds *b, const lg_net *net);
void lg_bounds_free(lg_bounds *b);

/* LG_OK if every activation of net is relu or identity, else
 * LG_ERR_UNSUPPORTED with a message pointing to `lgelu relu`. */
lg_status lg_bounds_check_net(const lg_net *net);

/* LG_OK if every activation is relu, identity or smooth (gelu, lgelu,
 * swish, sigmoid, prelu: lg_act_info.smooth) on dense layers: what interval
 * bounds, CROWN back-substitution (bounds_symbolic.c, backsub.c) and the
 * direct route of lg_verify_run accept (DESIGN.md §3 "Smooth
 * activations"). */
lg_status lg_bounds_check_direct(const lg_net *net);

/* 1 if some layer of net has a smooth activation (verified directly). */
int lg_bounds_net_smooth(const lg_net *net);

/* Interval bounds over the raw input box [lo, hi] (n_in values). Takes
 * the Transformer nodes too (their opstage.h entries), as do lg_bounds_symbolic and
 * lg_bounds_objective_lower (DESIGN.md §3 "Back-substitution through the
 * Transformer nodes"); α-CROWN and lg_bounds_check_direct refuse them. */
lg_status lg_bounds_interval(lg_bounds *b, const lg_net *net, const double *lo, const double *hi);

/* Interval bounds of layers ≥ k0 recomputed from the current bounds of the
 * earlier layers and the input box, each intersected with the bound it had
 * (after tightening layer k0 − 1). LG_ERR_TIMEOUT past b->run's deadline
 * (the bounds stay sound). */
lg_status lg_bounds_interval_from(lg_bounds *b, const lg_net *net, int k0);

/* Interval bounds of the network's outputs (after the last layer's
 * activation) over the raw input box [lo, hi]: ylo/yhi [n_out]. LG_OK, or
 * the error of lg_bounds_interval; bounds that overflow are ±∞. */
lg_status lg_bounds_output_box(const lg_net *net, const double *lo, const double *hi, double *ylo, double *yhi);

/* The post-activation interval [*al, *ah] of a neuron of layer L from its
 * pre-activation bounds [l, h] (relu, identity, or a smooth activation's
 * certified image). */
void lg_bounds_post(const lg_layer *L, double l, double h, double *al, double *ah);

/* The bounds of max-pool layer k (core/net.h LG_LAYER_MAX) from its
 * source's bounds: [max of the window's lower ends, max of its upper ends]
 * of the source's outputs, exact; each kept where tighter. */
lg_status lg_bounds_max_layer(lg_bounds *b, const lg_net *net, int k);
/* The difference bounds of max-pool layers: their node entry's symbolic step (verify/opstage.h). */
/* Flat copies of the difference bounds (n_diff doubles, dref as exact
 * small integers) for a branch-and-bound node's inherited bounds. */
size_t lg_bounds_diff_len(const lg_net *net); /* n_diff of net's bounds */
void lg_bounds_diff_save(const lg_bounds *b, double *v);
void lg_bounds_diff_load(lg_bounds *b, const double *v);
/* Symbolic back-substitution bounds (also runs interval and keeps the
 * tighter of the two per neuron). */
lg_status lg_bounds_symbolic(lg_bounds *b, const lg_net *net, const double *lo, const double *hi);

/* Re-run back-substitution for layers ≥ k0 from the current bounds of the
 * earlier layers, keeping the tighter bound per neuron (after an update of
 * layer k0 − 1, e.g. by LP tightening). The input box must be set. */
lg_status lg_bounds_symbolic_from(lg_bounds *b, const lg_net *net, int k0);

/* The neurons an output's bound reads (bounds_symbolic.c): reach[k][o] = 1
 * for the outputs and, backwards, every input a row of such a neuron reads
 * (its terms' non-zero weights, a product's pairs, a softmax's or
 * layernorm's group); 0 for the others (e.g. a class-token ViT's last block
 * but for the class token), whose bounds and relaxations no objective row
 * reads. reach: [n_layers] arrays of n_out each, owned by the caller.
 * Returns 0 when out of memory. */
int lg_bounds_reach(const lg_net *net, unsigned char **reach);
/* lg_bounds_reach into one allocation: [n_layers] pointers, each layer's into one buffer
 * of every layer's n_out (plus one byte). NULL when out of memory or when lg_bounds_reach
 * fails (then every neuron is to count as reaching). The caller frees it with free(). */
unsigned char **lg_bounds_reach_alloc(const lg_net *net);

/* As lg_bounds_symbolic_from, but only for the neurons of relu layers ≥ k0
 * that are unstable (lo < 0 < hi) under the bounds at hand when their layer
 * is reached; stable neurons and identity layers keep their bounds (a
 * stable neuron's relaxation does not depend on them). The cheap re-bound of
 * a sub-problem whose bounds were intersected with its parent's (bab.h). */
lg_status lg_bounds_symbolic_unstable_from(lg_bounds *b, const lg_net *net, int k0);

/* LP tightening of b (already symbolic or interval bounds for the same box):
 * for each layer k ≥ 1, for each unstable neuron, min and max z_k[i] over
 * the triangle LP relaxation of layers < k (GLPK simplex). Each LP optimum is
 * turned into a sound bound through its dual (Lagrangian over the variable
 * boxes) and the margin rule above. Stops at run's deadline (run NULL or
 * without one: none) leaving remaining bounds as they were (still sound).
 * Sets *n_lp to the number of LPs solved. */
lg_status lg_bounds_lp(lg_bounds *b, const lg_net *net, const lg_runctx *run, long *n_lp);

/* Sound lower bounds of m objectives over the box of b:
 * out[r] ≤ min_x  C[r]·y(x) + d[r],  C is [m][n_out] row-major, by
 * back-substitution through the output layer (CROWN-style, not interval on
 * y). Uses the bounds in b for the relaxations. LG_ERR_TIMEOUT past
 * b->run's deadline (out then −∞: sound, and no proof). */
lg_status lg_bounds_objective_lower(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                                    double *out);

/* 1 if every pre-activation bound of b is finite. Bounds are ±∞ where the
 * doubles overflow (extreme inputs or weights): sound, but no back-end can
 * encode them, so the driver answers unknown (DESIGN.md §3). */
int lg_bounds_finite(const lg_bounds *b);

/* Unstable neurons (lo < 0 < hi) of relu layer k; identity layers count 0. */
int lg_bounds_unstable(const lg_bounds *b, const lg_net *net, int k);
/* The same among the neurons whose mask entry is nonzero ([width of k], borrowed; NULL: all). */
int lg_bounds_unstable_in(const lg_bounds *b, const lg_net *net, int k, const unsigned char *mask);


/* out[r] ≤ min over the box of C[r]·y + d[r] from the output layer's
 * interval bounds in b (bounds_interval.c) (the Transformer nodes' objective until the
 * back-substitution takes them; margin rule, −∞ where none holds). */
lg_status lg_bounds_tnode_objective(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                                    double *out);

/* The margin rule for a sum v of N terms whose absolute values sum to
 * `mass` (subtract from a lower bound, add to an upper one). Exposed for
 * tests, backsub.c and bounds_lp.c (passed to encode/lp_relax.h). */
double lg_bounds_margin(double v, double mass, double n_terms);

#endif
