/* opstage.h — the verify stages' part of the node-kind table (core/op.h):
 * one entry per node kind (max-pool, product, softmax, layernorm) with the
 * kind's interval bound, its attack gradient and its branching smear, and,
 * for a kind that has them, its difference bounds and symbolic step, its
 * back-substitution planes with their α, and its own splits (DESIGN.md
 * "Adding an operator"). The complete back-ends take a node only in its
 * exact ReLU form (core/op.h lg_net_lower_nodes) and refuse the others
 * (lg_net_require_no_max). The entries point at each kind's own file:
 * verify/opstage_max.c and verify/backsub_max.c for max-pool,
 * verify/opstage_bilinear.c for the product, verify/opstage_softmax.c for
 * softmax, verify/opstage_layernorm.c and verify/opstage_ln.c for layernorm
 * (the Transformer nodes' back-substitution: the kinds' files and what they
 * share in backsub_tnode.c). The
 * table is static and constant; the entries' own allocations are said by
 * each.
 */
#ifndef LG_OPSTAGE_H
#define LG_OPSTAGE_H

#include "core/op.h"
#include "verify/bounds.h"
#include "verify/relax_layernorm.h"

struct lg_backsub; /* verify/backsub.h */
struct lg_trelax;  /* encode/problem.h */
struct lg_devgrad_src; /* verify/devgrad.h */

typedef struct lg_vopdef {
    lg_layer_kind kind;
    /* Interval bound of node L: lo, hi [n_out] from the post-activation intervals al, ah of
     * every node (node j at noff[j + 1]); outward, ∓∞ where unknown. */
    void (*interval)(const lg_net *net, const lg_layer *L, const double *al, const double *ah, const size_t *noff,
                     double *lo, double *hi);
    /* The attack's backward step through node L: from its sources' values a (b: the second
     * source's, else a), its outputs out and ∂g/∂out = dz, add ∂g/∂a into da (∂g/∂b into db). */
    void (*attack_backward)(const lg_layer *L, const double *a, const double *b, const double *out,
                            const double *dz, double *da, double *db);
    /* Branching (the input-split smear, bab_input.c; a heuristic, not a bound): from node L's
     * centres cen and radii rad, add each output's weight into cn, rd at its sources' offsets
     * (seen: which nodes hold values already; tc, tr: scratch of the widest node). */
    void (*smear)(const lg_net *net, const lg_bounds *b, const lg_layer *L, const double *cen, const double *rad,
                  double *cn, double *rd, unsigned char *seen, double *tc, double *tr);
    /* The entries below are NULL for a kind that does not have them. */
    /* Difference bounds node L keeps per output in lg_bounds (dlo, dhi, dref; bounds.h), 0: none. */
    int (*n_diff)(const lg_layer *L);
    /* Forget node k's difference bounds in b (b's box changed: they hold on the box they
     * were computed on and its sub-boxes only; lg_bounds_diff_forget), or NULL: the node's
     * are recomputed by every pass. */
    void (*diff_forget)(lg_bounds *b, const lg_net *net, int k);
    /* The bounds of node k's centred inputs its deviation rule reads (verify/devtf.h
     * lg_devtf_centred) when b keeps them: *clo, *chi [n_out] point into b; 1, or 0: none
     * kept (NULL: the kind has none). */
    int (*diff_centred)(const lg_bounds *b, const lg_net *net, int k, double **clo, double **chi);
    /* The symbolic pass's step at node k (bounds_symbolic.c): its bounds from its sources'
     * (no rows of its own) and, with diff, its difference bounds through the caller's
     * back-substitution s (rows of up to s->m) with out [s->m] scratch. NULL: the pass's rows. */
    lg_status (*symbolic)(lg_bounds *b, const lg_net *net, int k, struct lg_backsub *s, double *out, int diff);
    /* Back-substitution (backsub.h): addends one source coefficient receives from node L
     * (γ'), the planes of layer l in every group before a pass reads them (prepare), M_l of
     * a term read through the node from its source's magnitudes am (mag), and the step that
     * turns the m rows' coefficients A [m][n_out] into Y [m][n_in] (alpha: the planes' α
     * at stride, or NULL), returning 1 when some row read two planes; terms: the rounding
     * terms the step adds (two: the step's return). */
    int (*bs_addends)(const lg_layer *L);
    void (*bs_prepare)(struct lg_backsub *s, int l);
    void (*bs_mag)(struct lg_backsub *s, int l, const double *am);
    int (*bs_step)(struct lg_backsub *s, int l, int m, const double *A, double *Y, const double *alpha, size_t stride);
    double (*bs_terms)(const lg_layer *L, int two);
    /* The relaxed value of output j of node l at the source's values x and its derivative in
     * α (the α gradient, alpha.c; lg_backsub_max_value). With this entry the node's α
     * defaults to 0 (its planes of α = 0). */
    double (*bs_value)(const struct lg_backsub *s, int g, int l, int j, double a, double alpha, const double *x,
                       double *dval);
    /* The McCormick α the node's planes take in lg_backsub.talpha (backsub.h: [l][0] of the
     * lower plane, [l][1] of the upper one, set by lg_bs_tnode_set_alpha) and the α search
     * tunes (alpha_tnode.h): 2 for the product, 0 for none. */
    int bs_n_alpha;
    /* The Transformer nodes' back-substitution (backsub_tnode.h; NULL for the others): the
     * length of node L's plane table in one group (bs_tlen), its planes in group g of layer l
     * into P (bs_tplanes, 0: out of memory) and the step through it (bs_tstep: the contract of
     * lg_bs_tnode_step), and the addends one coefficient of either source receives from it
     * (bs_taddends). */
    size_t (*bs_tlen)(const lg_layer *L);
    int (*bs_taddends)(const lg_layer *L);
    int (*bs_tplanes)(struct lg_backsub *s, int g, int l, double *P);
    double (*bs_tstep)(struct lg_backsub *s, int l, int m, const double *A, double *Ya, double *Yb, double gam);
    /* A group node's own part of the group step softmax and layernorm share (backsub_tnode.c):
     * group G's planes of layer l in group g from its inputs' bounds lu [2·gs] (lower ends,
     * then upper ones) with rd its bs_row_len(gs) doubles of row data (bs_gplanes; work:
     * max(LG_SOFTMAX_WORK, LG_LAYERNORM_WORK)(gs)); NULL for the ones a kind has not: the
     * shift of a group's coefficients by Σ = 1 (bs_shift, relax_softmax.h lg_softmax_shift)
     * and a group's own intercept of a weighted sum (bs_row_icpt, relax_layernorm.h
     * lg_layernorm_row_icpt). */
    void (*bs_gplanes)(struct lg_backsub *s, int g, int l, size_t G, size_t gs, const double *lu, double *lo_w,
                       double *lo_c, double *up_w, double *up_c, double *rd, lg_dv *work);
    size_t (*bs_row_len)(size_t gs);
    double (*bs_shift)(size_t g, const double *lam, const double *lo_c, const double *up_c, double *mu, double *err,
                       int *idx);
    double (*bs_row_icpt)(size_t g, const double *rd, const double *lam, const double *gamma);
    /* Which sources' entries output o of node L reads (lg_bounds_reach): sets them in rel
     * (rel[j] over node j's outputs). NULL: every entry of every source. */
    void (*reach)(const lg_layer *L, int o, unsigned char **rel);
    /* The node's rows in the complete back-ends' relaxation (tnode_planes.h) from the
     * query's bounds b into r: LG_OK, LG_ERR_NOMEM or LG_ERR_ARG (a bound not finite). */
    lg_status (*relax_rows)(const lg_net *net, const lg_bounds *b, int k, struct lg_trelax *r);
    /* Branching on the node's own splits (bab_relu.c): the number of split entries of layer k
     * (0: none now), entry e's score from the row's coefficients lam_k on the node's outputs
     * (> 0: a candidate), and the split itself on bounds b (active: the ≥ 0 side). */
    int (*n_split)(const lg_net *net, const lg_bounds *b, int k);
    double (*split_score)(const lg_net *net, const lg_bounds *b, int k, int e, const double *lam_k);
    void (*split)(lg_bounds *b, int k, int e, int active);
    /* The certified deviation's interval vector–Jacobian product (devgrad.h; in each kind's opstage_*.c):
     * from the node's output adjoint (centre vm, radius vr) add the enclosure of its sources'
     * adjoints over the region into S; work: LG_DEVGRAD_VJP_WORK(group) lg_dv. */
    void (*dev_vjp)(const lg_layer *L, const struct lg_devgrad_src *S, const double *vm, const double *vr,
                    lg_dv *work);
} lg_vopdef;

/* The entry of node kind k, or NULL for a linear term kind. */
const lg_vopdef *lg_vop(lg_layer_kind k);
/* The entry of layer L when it is a node (its only term; core/op.h lg_layer_op), else NULL. */
const lg_vopdef *lg_layer_vop(const lg_layer *L);

/* Max-pool's entries (verify/opstage_max.c). */
void lg_bounds_max_node(const lg_net *net, const lg_layer *L, const double *al, const double *ah, const size_t *noff,
                        double *lo, double *hi);
void lg_attack_max_backward(const lg_layer *L, const double *a, const double *b, const double *out, const double *dz,
                            double *da, double *db);
void lg_bab_smear_max(const lg_net *net, const lg_bounds *b, const lg_layer *L, const double *cen, const double *rad,
                      double *cn, double *rd, unsigned char *seen, double *tc, double *tr);
int lg_max_n_diff(const lg_layer *L);
/* Layernorm's entries (verify/opstage_ln.c): difference bounds of its input from
 * back-substitution rows — each output's centred input x_o − μ and one linear form per
 * group (dlo, dhi; dref unused) — and their view as the region of group G's planes
 * (relax_layernorm.h; the parts not set are NULL / infinite). */
int lg_ln_n_diff(const lg_layer *L);
lg_status lg_ln_symbolic(lg_bounds *b, const lg_net *net, int k, struct lg_backsub *s, double *out, int diff);
void lg_ln_region_of(const lg_bounds *b, const lg_net *net, int k, int G, lg_ln_region *reg);
void lg_ln_forget(lg_bounds *b, const lg_net *net, int k);
int lg_ln_centred(const lg_bounds *b, const lg_net *net, int k, double **clo, double **chi);
/* Every node's difference bounds that hold on b's box only forgotten (its diff_forget):
 * b's box changed (opstage.c). */
void lg_bounds_diff_forget(lg_bounds *b, const lg_net *net);
lg_status lg_max_symbolic(lg_bounds *b, const lg_net *net, int k, struct lg_backsub *s, double *out, int diff);
int lg_bs_max_addends(const lg_layer *L);
void lg_bs_max_planes(struct lg_backsub *s, int l);
void lg_bs_max_mag(struct lg_backsub *s, int l, const double *am);
int lg_bs_max_step(struct lg_backsub *s, int l, int m, const double *A, double *Y, const double *alpha, size_t stride);
double lg_bs_max_terms(const lg_layer *L, int two);
int lg_bab_max_n_split(const lg_net *net, const lg_bounds *b, int k);
double lg_bab_max_split_score(const lg_net *net, const lg_bounds *b, int k, int e, const double *lam_k);
void lg_bab_window_split(lg_bounds *b, int k, int e, int active);
/* The product's entries (verify/opstage_bilinear.c). */
void lg_bounds_product(const lg_net *net, const lg_layer *L, const double *al, const double *ah, const size_t *noff,
                       double *lo, double *hi);
void lg_attack_product_backward(const lg_layer *L, const double *a, const double *b, const double *out,
                                const double *dz, double *da, double *db);
lg_status lg_product_relax_rows(const lg_net *net, const lg_bounds *b, int k, struct lg_trelax *r);
int lg_bs_product_addends(const lg_layer *L);
void lg_reach_product(const lg_layer *L, int o, unsigned char **rel);
/* Softmax's entries (verify/opstage_softmax.c). */
void lg_bounds_softmax(const lg_net *net, const lg_layer *L, const double *al, const double *ah, const size_t *noff,
                       double *lo, double *hi);
void lg_attack_softmax_backward(const lg_layer *L, const double *a, const double *b, const double *out,
                                const double *dz, double *da, double *db);
lg_status lg_softmax_relax_rows(const lg_net *net, const lg_bounds *b, int k, struct lg_trelax *r);
void lg_bs_softmax_planes(struct lg_backsub *s, int g, int l, size_t G, size_t gs, const double *lu, double *lo_w,
                          double *lo_c, double *up_w, double *up_c, double *rd, lg_dv *work);
/* Layernorm's interval bound, attack step and rows (verify/opstage_layernorm.c). */
void lg_bounds_layernorm(const lg_net *net, const lg_layer *L, const double *al, const double *ah, const size_t *noff,
                         double *lo, double *hi);
void lg_attack_layernorm_backward(const lg_layer *L, const double *a, const double *b, const double *out,
                                  const double *dz, double *da, double *db);
lg_status lg_layernorm_relax_rows(const lg_net *net, const lg_bounds *b, int k, struct lg_trelax *r);
void lg_bs_layernorm_planes(struct lg_backsub *s, int g, int l, size_t G, size_t gs, const double *lu, double *lo_w,
                            double *lo_c, double *up_w, double *up_c, double *rd, lg_dv *work);
size_t lg_bs_layernorm_row_len(size_t gs);
/* What softmax and layernorm share: each output reads its group's inputs (lg_bounds_reach),
 * the addends of a coefficient (one per output of its group) (opstage.c). */
void lg_reach_group(const lg_layer *L, int o, unsigned char **rel);
int lg_bs_group_addends(const lg_layer *L);
/* The Transformer nodes' smears (bab_input.c): the product's, and the one softmax and
 * layernorm share (over each group). */
void lg_bab_smear_product(const lg_net *net, const lg_bounds *b, const lg_layer *L, const double *cen, const double *rad,
                          double *cn, double *rd, unsigned char *seen, double *tc, double *tr);
void lg_bab_smear_group(const lg_net *net, const lg_bounds *b, const lg_layer *L, const double *cen, const double *rad,
                        double *cn, double *rd, unsigned char *seen, double *tc, double *tr);

#endif
