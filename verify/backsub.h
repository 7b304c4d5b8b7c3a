/* backsub.h — the one CROWN/DeepPoly back-substitution of verify/, sound in
 * floating point (used by bounds_symbolic.c for pre-activation and
 * objective bounds and by alpha.c for α-CROWN; DESIGN.md §3 "Floating
 * point").
 *
 * A batch of m rows f_r = A[r]·a_level + c[r] over the post-activations of
 * layer `level` (level = −1: the normalised input x') is pushed back to the
 * input box: through each ReLU with relax.h (lower slope α per row, or the
 * area heuristic), then through z_ℓ = W_ℓ·a_{ℓ−1} + b_ℓ (one dgemm), and
 * minimised over the box at a corner. out[r] ≤ min_x f_r(x) holds for the
 * network whose weights are the doubles taken as exact reals, because the
 * whole chain's rounding is carried along:
 *
 *   E_r  += err of every relaxed coefficient (relax.h)
 *        +  γ'_n · Σ_j |A_r[j]|·M_ℓ[j] + U_ℓ       per product A·W_ℓ,
 *
 * where M_ℓ[j] ≥ Σ_i |W_ℓ[j][i]|·max|a_{ℓ−1}[i]| over the box (from the
 * pre-activation bounds of layer ℓ − 1, or the input box), γ'_n = (n + 2)·2^-51
 * ≥ 2γ_n for a dot product of length n (any order, with or without FMA) and
 * U_ℓ = n·2^-1074·Σ_i max|a_{ℓ−1}[i]| the products' underflow. The constant
 * c_r is summed with the mass Σ|terms| and the count N of its terms; then
 *
 *   out[r] = v − E_r − lg_bounds_margin(v, mass + E_r, N),
 *
 * v the computed corner value. Any non-finite intermediate (bounds at ±∞,
 * overflow, inf − inf, 0·∞) makes out[r] = −∞, never a finite or +∞ bound.
 *
 * A max-pool node (core/net.h LG_LAYER_MAX; DESIGN.md §1 "The max-pool
 * node"): per row and output j with coefficient a_j, in the row's group,
 * let i* be the window input with the largest lower bound. a_j ≥ 0, or the
 * window is decided (l_i* ≥ u_i for every other i, so h_j = x_i*): a_j
 * moves to x_i* (h_j ≥ x_i*). a_j < 0 otherwise: with p the input of the
 * largest upper bound, h_j ≤ x_p + Σ_{i≠p} relu(x_i − x_p), each relu by
 * its chord on [l_i − u_p, u_i − l_p] (rounded outward) applied through
 * relax.h (its coefficient, intercept and err), the coefficient going to
 * x_i and, negated, to x_p. Each output adds at most K + 1 addends (K =
 * kh·kw) to one source coefficient and its row has |·| ≤ (2K + 2)·|a_j|,
 * so the product rounding term above holds with N counting n_out·(K + 1)
 * for the node and M_ℓ[j] = (2K + 2)·(the largest max|x_i| of window j).
 *
 * α on a max-pool output (alpha at the row's slot of output j; NaN or 0:
 * the planes above exactly, bit for bit; a decided window ignores it): the
 * relaxation is a convex combination of two planes of the same side, sound
 * for any α ∈ [0, 1] because each plane is. a_j > 0: h_j ≥ (1 − α)·x_p1 +
 * α·x_p2 (max ≥ any convex combination of its inputs), p1 = i*, p2 the
 * input of the largest upper bound but p1. a_j < 0: h_j ≤ (1 − α)·U_p1 +
 * α·U_p2, U_p the upper plane above with reference p; p1 is the one above
 * (with the difference bounds when the bounds have them), p2 the input of
 * the largest lower bound but p1, its chords on the interval bounds only.
 * The coefficient is split a_j = a1 + a2 exactly (a2 ≈ α·a_j: the larger
 * part rounded, the other the difference, exact by Sterbenz and checked),
 * and each plane is applied with its part through relax.h as above, so
 * the rounding is carried the same way. Each output still adds at most
 * K + 1 addends to one source coefficient (p1 gets a1, K − 1 chords of U_p1
 * and one of U_p2) and |row| ≤ (2K − 1)·(|a1| + |a2|), so N and M_ℓ stand;
 * the constant's term count doubles the chords' intercepts for the layer
 * when a row read two upper planes.
 *
 * A product, softmax or layernorm node (core/net.h): each row's
 * coefficients on its outputs become coefficients on its source(s) through
 * the node's planes in the row's group, with their rounding
 * (backsub_tnode.h; DESIGN.md §3 "Back-substitution through the Transformer
 * nodes"); a product's second source counts as a term in the buffers.
 *
 * A graph (core/net.h, DESIGN.md §1 "The network as a graph"): the pass
 * visits the nodes in reverse order; node ℓ's coefficients are complete
 * when it is reached (every consumer k > ℓ has added Λ_k·A_t to them), it is
 * relaxed, and Λ_ℓ·A_t goes to the source of each of its terms. A
 * coefficient of node j is then a sum of N_j = Σ n_out over the terms reading
 * j of products, in some order; γ'_ℓ = (N + 2)·2^-51 with N the largest
 * N_src of layer ℓ's terms and M_ℓ[j] = Σ_t (|A_t|·max|h_src(t)|)[j], so
 * the rounding term above bounds the error of every summation order. A
 * chain is the case N = n_out, one term.
 *
 * Batches of sub-problems (batched bounds): the rows may belong
 * to ng groups, group g bounded on its own region (bounds gb[g], e.g. one
 * branch-and-bound node each, or the children an FSB estimate compares).
 * The relaxations and the final box are per group; the products with W_ℓ
 * are shared, one dgemm over the stacked rows of all groups. M_ℓ is taken
 * over the hull of the groups' bounds (max over g of max|a_{ℓ−1}|), which
 * is ≥ each group's own M_ℓ, so the rounding term above stays an upper
 * bound for every row. lg_backsub_init is the batch of one group.
 *
 * An lg_backsub owns its scratch (one allocation); the net and the bounds
 * are borrowed. M_ℓ (from the bounds of layer ℓ − 1) and the relaxations
 * of layer ℓ (from its bounds) are computed the first time a call goes
 * through layer ℓ — in a layer-by-layer pass those bounds are final by then
 * — and reused by later calls; after changing the bounds of a layer that a
 * call already went through, call lg_backsub_changed.
 */
#ifndef LG_BACKSUB_H
#define LG_BACKSUB_H

#include <stddef.h>

#include "core/net.h"
#include "verify/bounds.h"
#include "verify/relax.h"

typedef struct lg_backsub {
    const lg_bounds *b;      /* group 0's bounds (gb[0]) */
    const lg_bounds *const *gb; /* [ng] bounds of each group */
    int ng;                  /* groups */
    int *grp;                /* [m] group of each row; the caller fills it (all 0 after init) */
    const lg_net *net;
    int m;             /* row capacity */
    double *A, *tmp;   /* [m][max width] rows; the caller fills A before a call (the first two node buffers) */
    double **pool;     /* [npool] node buffers [m][max width] (lg_backsub_live), pool[0] = A */
    int npool;
    int *used;         /* [npool] 1 while a node holds the buffer */
    double **nb;       /* [n_layers + 1] buffer of node j at nb[j + 1] during a call, or NULL */
    double *acc;       /* [m][max width] a term's product before it is added, or NULL (no node read twice) */
    int *nsum;         /* [n_layers + 1] products summed into one coefficient of node j: Σ n_out of its readers */
    int *nsum2;        /* [n_layers + 1] scratch of the α gradient (alpha.c) */
    double *gam;       /* [n_layers] γ'_ℓ (lg_bs_mag) */
    double *am;        /* [max width] scratch of M_ℓ */
    double *c;         /* [m] constants; the caller fills c before a call */
    double *mass, *err; /* [m] */
    double **mag;      /* [n_layers][n_out(ℓ)] M_ℓ over the groups' hull, computed on first use */
    double *under;     /* [n_layers] U_ℓ */
    lg_relu_lines *lines; /* [ng][size] relaxations (relax.h) of group g, neuron off[ℓ] + j, on first use */
    size_t size;       /* neurons over all layers */
    unsigned char *mag_ok, *lines_ok; /* [n_layers], [ng][n_layers] computed yet */
    int *off;          /* [n_layers] lg_alpha_offset of each layer */
    double *fam;       /* NULL, or [ng][size][2][LG_BACKSUB_FAM][2]: the lower- then upper-line families
                        * of smooth neurons (α-CROWN, below), allocated and computed on first use */
    double *fam0;      /* [ng][size][2] α of the area-best lower / upper line in its family */
    unsigned char *fam_ok; /* [ng][n_layers] */
    const double *const *thr; /* NULL, or [ng] split points ([size] each, NULL entry: all 0) of the
                               * split constraints z ≤ t / z ≥ t (lg_backsub_lower_beta); the caller sets it */
    const lg_runctx *run;     /* deadline checked per layer of every call (borrowed; NULL none);
                               * init sets group 0's bounds' run, the caller may replace it */
    int *msel;         /* NULL (no max-pool node), or [ng][size]: the input of each max-pool output's window
                        * with the largest lower bound, in group g (recomputed at every call) */
    unsigned char *mdom; /* [ng][size] 1 when msel's lower bound is ≥ every other input's upper bound */
    double **tp;       /* NULL (no Transformer node), or [ng][n_layers]: the planes of each product, softmax or
                        * layernorm layer in group g (backsub_tnode.c), allocated and computed on first use */
    unsigned char *tp_ok; /* [ng][n_layers] */
    double *talpha;    /* NULL (no Transformer node), or [n_layers][2]: the McCormick α of each product's lower
                        * and upper planes (backsub_tnode.h; LG_BS_BILINEAR_ALPHA unless alpha_tnode.c sets it) */
    void *tscr;        /* NULL, or the Transformer nodes' step scratch (backsub_tnode.c), kept between calls */
    size_t tscr_len;   /* its bytes */
    const unsigned char *want; /* NULL, or [n_out] of the node whose symbolic step (opstage.h) runs: 0 where
                                * nothing reads an output's bounds (the step may skip what serves only those);
                                * the caller sets it around the call */
    void *store;
} lg_backsub;

/* α-CROWN on a smooth neuron (DESIGN.md §3 "Smooth activations"). Its
 * lower line is picked by α ∈ [0, 1] from a family of LG_BACKSUB_FAM lines,
 * each certified by core/act_relax.h on the neuron's [l, u]: the tangents at
 * l + i·(u − l)/(LG_BACKSUB_FAM − 2), i = 0 … LG_BACKSUB_FAM − 2 (moved down
 * by their certified minimum where f is not convex), and the area-best line,
 * sorted by slope. α = p/(F − 1) + θ/(F − 1) (F = LG_BACKSUB_FAM, 0 ≤ θ < 1)
 * is the convex combination (1 − θ)·line_p + θ·line_{p+1}, below f on [l, u]
 * because both are; the rounding of the combination (≤ 2^-51·(|s_p| +
 * |s_{p+1}|) in the slope, the same in the constant) times max(|l|, |u|) is
 * subtracted from the constant, outward. The upper line is picked the same
 * way from the upper family (the tangents at the same points, moved up by
 * their certified maximum where f is not concave, and the area-best upper
 * line, sorted by slope; the rounding added to the constant). A row uses one
 * line of a neuron, chosen by the sign of its coefficient there: the lower
 * line where it is positive, the upper where negative; so one α per row and
 * neuron places whichever line the row uses (as α-CROWN's tangent points of
 * an S-shaped activation). NaN α: the area-best lines, i.e. α =
 * lg_backsub_alpha0 of the side used. */
#define LG_BACKSUB_FAM 9

/* The lower (up = 0) or upper (up = 1) line of smooth neuron i
 * (lg_alpha_offset layout) of group g at α (clamped to [0, 1]; NaN: the
 * area-best one): f(z) ≥ *ls·z + *lc (up = 0) or f(z) ≤ *ls·z + *lc (up = 1)
 * on its interval; *ds, *dc (optional) their derivatives in α. Computes the
 * families on first use. Returns 0 (and leaves the outputs alone) when the
 * family is not available (out of memory, non-finite bounds). */
int lg_backsub_fam_line(lg_backsub *s, int g, int i, int up, double alpha, double *ls, double *lc, double *ds,
                        double *dc);
/* α of the area-best lower (up = 0) or upper (up = 1) line of smooth neuron i
 * of group g in its family (0.5 when no family; 0 for a max-pool output). */
double lg_backsub_alpha0(lg_backsub *s, int g, int i, int up);

/* Scratch for up to m rows over one region (bounds b). */
lg_status lg_backsub_init(lg_backsub *s, const lg_bounds *b, const lg_net *net, int m);
/* Scratch for up to m rows over ng regions (gb[ng], borrowed, each with the
 * net's shapes); rows are assigned to groups through s->grp. */
lg_status lg_backsub_init_batch(lg_backsub *s, int ng, const lg_bounds *const *gb, const lg_net *net, int m);
void lg_backsub_free(lg_backsub *s);

/* The bounds of layer l (l = −1: the input box) changed, in any group:
 * recompute what depends on them at the next use. */
void lg_backsub_changed(lg_backsub *s, int l);

/* out[r] ≤ min over the box (of row r's group) of s->A[r]·a_level + s->c[r], r < m ≤ s->m
 * (A: [m][width(level)] row-major, overwritten; c overwritten).
 * alpha: NULL (area heuristic) or the lower slopes of row r at
 *        alpha[r·stride + off[ℓ] + j] (a smooth neuron: its line's α; a
 *        max-pool output: its planes' α, above);
 * lam:   NULL or, at lam[r·stride + off[ℓ] + j], the coefficient of a_ℓ[j]
 *        before layer ℓ is relaxed;
 * Ain:   NULL or [m][n_in]: the final coefficients over x'.
 * LG_OK, or LG_ERR_TIMEOUT when s->run's deadline passed before a layer: the
 * call stops there and sets every out[r] = −∞ (sound, and proves nothing;
 * A, lam and Ain are then unfinished). */
lg_status lg_backsub_lower(lg_backsub *s, int level, int m, const double *alpha, double *lam, size_t stride,
                           double *Ain, double *out);

/* out[r] ≤ min over the box of s->A[r]·z_k + s->c[r]: rows over the
 * pre-activation of layer k (A: [m][n_out(k)]), whose activation is not
 * relaxed (the bounds of a graph layer with several terms, bounds_symbolic.c). */
lg_status lg_backsub_lower_pre(lg_backsub *s, int k, int m, double *out); /* LG_ERR_TIMEOUT as lg_backsub_lower */

/* (backsub_max.c; the max-pool entry's bs_value, verify/opstage.h.)
 * The relaxed value of output j of max-pool layer l in group g, at the
 * source's values x, for a row whose coefficient on it is a and whose α
 * there is alpha (NaN: 0): the lower plane (1 − α)·x_p1 + α·x_p2 (a > 0),
 * x_i* on a decided window, or the upper plane (1 − α)·U_p1 + α·U_p2
 * (a < 0), with the choices of the last call through layer l (a = 0: the
 * window's max, read by no plane). dval (optional): its derivative in α,
 * plane2(x) − plane1(x) (0 on a decided window or a = 0). The forward pass
 * of α-CROWN's gradient (alpha.c); a heuristic value: no rounding is
 * carried. */
double lg_backsub_max_value(const lg_backsub *s, int g, int l, int j, double a, double alpha, const double *x,
                            double *dval);

/* Buffers of [m][max width] a pass over net's nodes holds at once (2 for a
 * chain): while node ℓ is processed, its own and those of the earlier
 * nodes (input included) that some layer ≥ ℓ reads. */
int lg_backsub_live(const lg_net *net);
/* 1 if some node (or the input) is read by more than one term. */
int lg_backsub_shared(const lg_net *net);

/* The same with split multipliers (β-CROWN). zadd: NULL or, at
 * zadd[r·stride + off[ℓ] + j], a term added to the coefficient of the
 * pre-activation z_ℓ[j] after layer ℓ's activation is relaxed, for the
 * split constraint z_ℓ[j] ≤ t (zadd ≥ 0) or z_ℓ[j] ≥ t (zadd ≤ 0), t the
 * split point of s->thr (0 for ReLU splits and when s->thr is NULL). The
 * constraint must hold on the region the bounds describe; then the added
 * term zadd·(z − t) is ≤ 0 on the region and out[r] bounds min of the row
 * over the region (not the whole box). The coefficient needs no rounding
 * mass: fl is monotone, so δ = fl(coef + zadd) − coef is a real multiplier
 * of the sign of zadd, i.e. the bound computed is exactly the one for
 * β' = |δ| ≥ 0, and the new coefficient then enters the bias mass and the
 * γ'·Σ|A_j|·M_j term of the product with W_ℓ like any other. The constant
 * −δ·t (t ≠ 0) is k = fl(−fl(fl(coef + zadd) − coef)·t), within
 * 2u(1 + 2u)·|δ·t| + 2^-1074 of the real −δ·t; E gets |k|·2^-50 + 2^-1070
 * for that, and k enters c with its mass like the other terms. */
lg_status lg_backsub_lower_beta(lg_backsub *s, int level, int m, const double *alpha, const double *zadd,
                                double *lam, size_t stride, double *Ain, double *out);

#endif
