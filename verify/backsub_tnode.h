/* backsub_tnode.h — the back-substitution's step through a Transformer node
 * (product, softmax, layernorm; core/net.h, DESIGN.md §3 "Back-substitution
 * through the Transformer nodes"). Internal to backsub.c.
 *
 * The node's planes in row r's group (relax_bilinear.h, relax_softmax.h,
 * relax_layernorm.h, each over its sources' post-activation bounds of that
 * group) turn the row's coefficients λ_o on the node's outputs into
 * coefficients on its source(s), constants and a rounding term:
 *
 *   λ_o·f_o(x) ≥ Σ_j fl(λ_o·w_oj)·x_j + fl(λ_o·c_o) − err      (the side of λ_o's sign),
 *
 * err = Σ (2^-51 + γ'_N)·|coef|·max|x_j| + 2^-1073·max|x_j| per coefficient,
 * 2^-51·|icpt| + 2^-1072 per intercept (rounded up): the products' rounding
 * (relax_plane.h's rule) and the summation of the coefficients into the
 * source's, N the most addends one source coefficient receives from every
 * reader (backsub.h's γ'). A plane that is not finite makes the row's bound
 * −∞.
 *
 * The planes live in s->tp[g·n_layers + l] (allocated on first use, freed by
 * lg_bs_tnode_free); s->tp_ok marks them current.
 */
#ifndef LG_BACKSUB_TNODE_H
#define LG_BACKSUB_TNODE_H

#include "verify/backsub.h"

/* The McCormick interpolation of every product (relax_bilinear.h α, both
 * sides): 0.5 gives the same slopes on both sides (the other factor's
 * midpoint) and halves the largest corner gap of α ∈ {0, 1}. */
#define LG_BS_BILINEAR_ALPHA 0.5

/* The tables of a net with Transformer nodes (no-op without), every
 * product's α at LG_BS_BILINEAR_ALPHA; LG_ERR_NOMEM. */
lg_status lg_bs_tnode_init(lg_backsub *s);
void lg_bs_tnode_free(lg_backsub *s);
/* Product layer l's McCormick α of its lower and upper planes (each in
 * [0, 1]; relax_bilinear.h): its planes are recomputed on next use. No-op
 * for another kind or a net without Transformer nodes. */
void lg_bs_tnode_set_alpha(lg_backsub *s, int l, double alpha_lo, double alpha_up);
/* Layer l's bounds (−1: the box) changed: the planes of its readers are stale. */
void lg_bs_tnode_changed(lg_backsub *s, int l);
/* Addends one coefficient of the source (second = 0) or of the second
 * source (second = 1, products) of node L receives from it. */
int lg_bs_tnode_addends(const lg_layer *L, int second);
/* Rows r < m of A ([m][n_out] over node l's outputs) through node l:
 * coefficients added to Ya ([m][n_in], the source's buffer) and Yb (the
 * second source's, products; may equal Ya), constants to c with their mass,
 * rounding to err. gam: γ'_N above. Returns the number of intercepts a row
 * adds to its constant at most (for the final margin). LG_ERR_NOMEM as a
 * negative value. */
double lg_bs_tnode_step(lg_backsub *s, int l, int m, const double *A, double *Ya, double *Yb, double gam);

/* What the kinds' own parts (their opstage.h entries: bs_tlen, bs_tplanes,
 * bs_tstep) share. */
/* One row's accumulators of the rounding term above. */
typedef struct lg_bt_acc {
    double S;   /* Σ |coef|·max|x| */
    double und; /* Σ max|x| of the coefficients */
    double I;   /* Σ |icpt| */
    double cnt; /* addends summed into S and und */
    double nic; /* intercepts */
    int bad;
} lg_bt_acc;
/* Post-activation interval of entry i of node src (−1: the input) in group g, ∓∞ where none. */
void lg_bs_tnode_post(const lg_backsub *s, int g, int src, int i, double *lo, double *hi);
/* max(|l|, |h|). */
double lg_bs_tnode_mag(double l, double h);
/* Node l's planes current in every group (its entry's bs_tplanes where stale); 0: out of memory. */
int lg_bs_tnode_ready(lg_backsub *s, int l);
/* Row r's end: err[r] += the rounding term of a (gam: γ'_N; esh: the softmax shifts' own
 * rounding; eic: Σ |λ_o|·E_o of the products' summed intercepts), c[r] = cr, mass[r] = ms. */
void lg_bs_tnode_row_end(lg_backsub *s, int r, const lg_bt_acc *a, double gam, double cr, double ms, double esh,
                         double eic);
/* The plane table, planes and step softmax and layernorm share (per group of the node's
 * outputs; their entries' bs_gplanes, bs_row_len, bs_shift, bs_row_icpt give their own parts). */
size_t lg_bs_group_len(const lg_layer *L);
int lg_bs_group_planes(lg_backsub *s, int g, int l, double *P);
double lg_bs_group_step(lg_backsub *s, int l, int m, const double *A, double *Ya, double *Yb, double gam);
/* The product's (opstage_bilinear.c). */
size_t lg_bs_product_len(const lg_layer *L);
int lg_bs_product_planes(lg_backsub *s, int g, int l, double *P);
double lg_bs_product_step(lg_backsub *s, int l, int m, const double *A, double *Ya, double *Yb, double gam);

#endif
