/* devtf_kind.h — what the Transformer kinds' deviation rules share
 * (devtf.c) and each kind's entries of the deviation table (devtf.h
 * lg_devop: devtf_product.c, devtf_softmax.c, devtf_layernorm.c). Internal
 * to those files. Every bound is rounded up (lg_up, lg_dn of relax_iv.h);
 * the caller owns every array, nothing is allocated.
 */
#ifndef LG_DEVTF_KIND_H
#define LG_DEVTF_KIND_H

#include <stddef.h>

#include "anneal/deviation.h"
#include "core/act_relax.h"
#include "verify/devtf.h"

#define LG_DEVTF_ETA LG_LIBM_REL_ERR /* trusted relative error of libm's exp, erfc (core/act_relax.h) */
#define LG_DEVTF_TINY 0x1p-1000 /* absolute margin for underflow */
#define LG_DEVTF_EPS 0x1p-52    /* DBL_EPSILON */

/* a + b rounded up, ∞ on NaN */
double lg_devtf_addu(double a, double b);
/* The widened box [l − e, u + e] into wl, wu (rounded outward); 0 if not finite. */
int lg_dev_widen(size_t g, const double *l, const double *u, const double *e, double *wl, double *wu);
/* d_i = Σ_j mag(J_ij)·e_j rounded up; 0 when some d_i is not finite (then ∞). */
int lg_dev_apply(size_t g, const lg_dv *J, const double *e, double *d);
/* Intersect [lo, hi] with the planes' image over the box [l, u] (the lower plane pw, pc's
 * smallest value and the upper plane qw, qc's largest). */
void lg_devtf_plane_image(int g, const double *l, const double *u, const double *pw, const double *pc,
                          const double *qw, const double *qc, double *lo, double *hi);

/* One group of a grouped node (softmax, layernorm) in lg_devtf_node: the group starting at
 * output s, its inputs' box [l, u] and deviations es, the centred bounds clo, chi of the
 * node's outputs (NULL: none; the group's start at s), its outputs' [lo, hi] and e; scratch
 * w (LG_DEVTF_WORK(g) lg_dv), d [g], pw, qw [g·g], pc, qc [g]. */
typedef struct lg_devtf_gscr {
    lg_dv *w;
    double *d, *pw, *qw, *pc, *qc;
} lg_devtf_gscr;
typedef void (*lg_devtf_group_fn)(const lg_linear *L, int s, const double *l, const double *u, const double *es,
                                  const double *clo, const double *chi, double *lo, double *hi, double *e,
                                  const lg_devtf_gscr *c);
/* lg_devtf_node's step of a grouped node: fn on each group of L->op.group outputs. */
void lg_devtf_groups(const lg_linear *L, const double *al, const double *ah, const double *ea, const double *clo,
                     const double *chi, double *lo, double *hi, double *e, double *work, lg_devtf_group_fn fn);
/* The largest ξ and |value| over one group of g (NaN propagates; either NaN: both ∞), for the
 * grouped nodes' noise entries. */
void lg_devtf_group_max(int g, const double *xa, const double *ma, double *mx, double *mm);

/* The kinds' entries (devtf.h lg_devop). */
size_t lg_devtf_product_work(const lg_linear *L);
void lg_devtf_product_node(const lg_linear *L, const double *al, const double *ah, const double *ea,
                           const double *bl, const double *bh, const double *eb, const double *clo, const double *chi,
                           double *lo, double *hi, double *e, double *work);
void lg_devtf_product_noise(const lg_linear *L, const double *xa, const double *ma, const double *xb,
                            const double *mb, double *xo);
size_t lg_devtf_group_work(const lg_linear *L);
void lg_devtf_softmax_node(const lg_linear *L, const double *al, const double *ah, const double *ea,
                           const double *bl, const double *bh, const double *eb, const double *clo, const double *chi,
                           double *lo, double *hi, double *e, double *work);
void lg_devtf_softmax_noise(const lg_linear *L, const double *xa, const double *ma, const double *xb,
                            const double *mb, double *xo);
void lg_devtf_layernorm_node(const lg_linear *L, const double *al, const double *ah, const double *ea,
                             const double *bl, const double *bh, const double *eb, const double *clo,
                             const double *chi, double *lo, double *hi, double *e, double *work);
void lg_devtf_layernorm_noise(const lg_linear *L, const double *xa, const double *ma, const double *xb,
                              const double *mb, double *xo);
int lg_devtf_layernorm_centred(const lg_linear *L, const double *err, const double *clo_in, const double *chi_in,
                               double *clo, double *chi);

void lg_devtf_product_envelope(const lg_linear *L, const double *la, const double *ua, const double *ea, const double *ma,
                               const double *lb, const double *ub, const double *eb, const double *mb, double *s, lg_dv *work,
                               double *d, double *bx);
void lg_devtf_softmax_envelope(const lg_linear *L, const double *la, const double *ua, const double *ea, const double *ma,
                               const double *lb, const double *ub, const double *eb, const double *mb, double *s, lg_dv *work,
                               double *d, double *bx);
void lg_devtf_layernorm_envelope(const lg_linear *L, const double *la, const double *ua, const double *ea, const double *ma,
                                 const double *lb, const double *ub, const double *eb, const double *mb, double *s, lg_dv *work,
                                 double *d, double *bx);

#endif
