/* devnet.h — the deviation of a substitution pair bounded by the verified
 * bound engine on their difference network (DESIGN.md §1 "Deviation bound",
 * anneal/deviation.h "Difference network").
 *
 * For the pair (relu, ref) of anneal/deviation.h (same shapes and weights,
 * L layers, N = Σ_k n_out(k) neurons each) the difference network D is one
 * graph over the input (x, ν_relu, ν_ref) of n_in + 2N values:
 *   layer 0          P = x' (identity; an index map of the normalised x),
 *   layers 1..L      relu's layers (a source x' reads P),
 *   layers L+1..2L   ref's layers (likewise),
 *   layer 2L+1       y_relu − y_ref (identity; a dense I term on node L and
 *                    a dense −I term on node 2L, bias 0);
 * every copied layer k also adds its neurons' noise coordinates of ν (an
 * index map of the input), except a Transformer node, which must be its
 * layer's only term: its rounding is pushed into its consumers' noise
 * (anneal/deviation.h "Transformer nodes"; its ν coordinates stay 0), and
 * its bounds are widened by that rounding ξ after the run, so that they
 * hold its computed outputs too. A net with those nodes takes the interval
 * route (CROWN does not pass them yet), and a guess that a noisy bound
 * leaves is made again from the noisy bounds, at most twice.
 * With ν = 0, D is the exact difference; with ν in
 * the box [−τ, τ] of lg_dev_noise, it also reaches the double forward passes
 * of both nets (anneal/deviation.h), provided every computed pre-activation
 * stays within the magnitudes τ was computed for. So one run of the bound
 * engine (lg_bounds_symbolic: CROWN through both copies, sound for the exact
 * reals under rounding) bounds the exact and the computed deviation, and
 * its per-neuron bounds hold for exact and computed pre-activations alike.
 *
 * The magnitudes are an induction: they are guessed (twice the interval
 * bounds of the noise-free D, plus 1), τ is computed from them, and after
 * the run every neuron's bound must lie within its guess; then, layer by
 * layer, each computed pre-activation is a value of the noisy D and so
 * within its bound, hence within the guess the next layers' τ assumed. If
 * the check fails the result is +∞ (no claim; callers keep their other
 * bounds).
 *
 * The exact route. When D is too large for CROWN (v->off: its 2N noise
 * inputs make every coefficient row long) but the exact difference network
 * D0 fits (D without the noise inputs: n_in values, the same layers; v->off0
 * when it does not), CROWN runs on D0 over x alone, which bounds the exact
 * difference and both exact nets' pre-activations, and the rounding of the
 * two double forward passes is carried as a separate forward envelope: with
 * τ of lg_dev_noise (the noise of the computed pass on the exact network,
 * for magnitudes guessed as twice D0's bounds plus 1),
 *   err_k = (1 + 1e−9)·Σ_t |A_t|·(Lip_src·err_src) + τ_k + 1e−300,  err_x = 0,
 * bounds |ẑ_k − z_k| at every x of the box, Lip the activation's Lipschitz
 * constant (1 for relu and identity, 1.2·fs for a relu-like smooth one:
 * sup|f'| is 1.1290 for gelu and λ-GELU, 1.0999 for Swish-β and max(1, |a|)
 * for PReLU). The induction of the magnitudes closes when every
 * max(|l|, |u|) + err_k lies within its guess; D0's bounds widened by err_k
 * then hold the computed pre-activations, and the output bound adds both
 * nets' Lip·err + ξ. The rounding is ~1e−16 relative, so its growth through
 * the layers (|W|·Lip per layer) stays far below any deviation of interest.
 * Nets with max-pool or Transformer nodes keep the interval route. The
 * exact route also runs the interval route (cheap) and keeps per output the
 * smaller bound and per neuron the intersection: on small boxes (a point)
 * the interval route is the tighter, the envelope's growth dominating.
 *
 * It is a second sound bound beside anneal/deviation.c's propagation;
 * callers keep the smaller per output. At a point (ε = 0) it is the exact
 * difference up to the relaxation of the smooth activation over tiny
 * intervals and the rounding noise; it does not grow with depth the way the
 * propagated bound does. It loses the correlation of the two copies at
 * every neuron the relaxation does not fix, which the propagation keeps:
 * lg_dev_bound_box_pair gets both from these bounds.
 *
 * lg_devnet owns D, D's bounds workspace and the box; it borrows relu and
 * ref, which must outlive it. lg_devnet_free of a zeroed lg_devnet is a
 * no-op. Not thread-safe per object.
 */
#ifndef LG_DEVNET_H
#define LG_DEVNET_H

#include "core/net.h"
#include "verify/bounds.h"

typedef struct lg_devnet {
    const lg_net *relu, *ref; /* borrowed */
    lg_net diff;              /* D, owned */
    lg_bounds b;              /* D's bounds over the last box, owned */
    lg_net diff0;             /* D0: D without the noise inputs (the exact route), owned; empty if off0 */
    lg_bounds b0;             /* D0's bounds over the last box (widened by err), owned */
    int off0;                 /* D0 is too large for CROWN, or the pair has max-pool or Transformer nodes */
    int exact;                /* the last lg_devnet_bound took the exact route (bounds in b0) */
    double *err;              /* [2][N] rounding envelope of each neuron, relu then ref (the exact route) */
    double *env;              /* [n_out] rounding envelope of the output difference (the exact route) */
    int n_noise;              /* N: neurons of one net */
    int valid;                /* the last lg_devnet_bound proved its claim (else e = +∞): 1 from
                                 CROWN (on D, or on D0 when v->exact), 2 from interval arithmetic
                                 (v->off and v->off0, no memory for CROWN, or a net with Transformer
                                 nodes) */
    int off;                  /* the pair is too large for CROWN (widest layer × D's input > 2^25) */
    double *lo, *hi;          /* [n_in + 2N] D's input box */
    double *tau;              /* [2][N] noise radius per neuron, relu then ref */
    double *zmag;             /* [2][N] guessed |ẑ| per neuron */
    double **zp;              /* [2][L] zmag per layer */
    unsigned char *node;      /* [2][N] 1 for a Transformer node's neuron (no noise input) */
    double *xi;               /* [2][n_out] rounding of each net's output activation */
    double *e;                /* [5][n_out] per-output bounds, scratch of the callers (transfer.c) */
    double want;              /* the callers' threshold: a box whose bound exceeds it is refined
                                 (devnet_refine.h, in lg_transfer_box_delta); +∞ (the default of
                                 lg_devnet_init): never */
    double refine_share;      /* the fraction of the run's remaining time the refinement may use
                                 (lg_devnet_init: 1) */
    double unrefined;         /* lg_transfer_box_delta's bound of the last box before any refinement
                                 (max over the outputs) */
    struct lg_devgrad_net *grad; /* the interval-gradient route (devgrad_net.h), built by its first
                                    use in lg_transfer_box_delta, owned; NULL before */
    int grad_off;             /* the pair does not take that route (max-pool nodes) */
    int stage;                /* lg_transfer_box_delta's last box: the step of its cascade that gave
                                 the final bound (max over the outputs), an lg_devnet_stage */
} lg_devnet;

/* The steps of lg_transfer_box_delta's cascade (verify/transfer.h), in its order. */
typedef enum lg_devnet_stage {
    LG_DEVNET_STAGE_PROPAGATED, /* the gap propagated with relu's own bounds (anneal/deviation.h) */
    LG_DEVNET_STAGE_DIFFNET,    /* the difference network's bound (this file) */
    LG_DEVNET_STAGE_PAIR,       /* the propagation with both nets' bounds from it */
    LG_DEVNET_STAGE_JOINT,      /* the joint relaxation (devnet_joint.h) */
    LG_DEVNET_STAGE_GRADIENT,   /* the interval gradient (devgrad_net.h) */
    LG_DEVNET_STAGE_REFINED,    /* α-CROWN or branch and bound (devnet_refine.h) */
    LG_DEVNET_STAGE_POINT,      /* a point's MPFR enclosures (verify/transfer.h) */
    LG_DEVNET_N_STAGES
} lg_devnet_stage;

/* The stage's name in reports ("propagated", "difference_network", "pair", "joint", "gradient",
 * "refinement", "point"); "?" outside the range. */
const char *lg_devnet_stage_name(int stage);

/* Build D for a pair (lg_dev_check_pair must accept it; checked here). */
lg_status lg_devnet_init(lg_devnet *v, const lg_net *relu, const lg_net *ref);
void lg_devnet_free(lg_devnet *v);

/* Take the exact route (devnet.h) on every later lg_devnet_bound, whatever
 * the pair's size: builds D0 if needed. LG_ERR_ARG if the pair has max-pool
 * or Transformer nodes (v is then unchanged). */
lg_status lg_devnet_use_exact(lg_devnet *v);

/* e[n_out] ≥ sup over x in the raw box [lo, hi] of |y_relu,j(x) − y_ref,j(x)|
 * for the exact and for the computed outputs. run (may be NULL) is the
 * deadline of the bound engine (LG_ERR_TIMEOUT past it; e is then
 * unusable). A pair too large for CROWN on D (v->off) takes the exact
 * route (CROWN on D0 and the rounding envelope) unless v->off0; otherwise,
 * or with no memory for the rows, interval arithmetic through the noisy D (the same
 * induction; tight on small boxes, at a point the observed difference up
 * to the amplified rounding). Overflow or a failed magnitude check give +∞
 * (never NaN).
 * When v->valid after LG_OK, lg_devnet_pre gives the bounds of this box. */
lg_status lg_devnet_bound(lg_devnet *v, const double *lo, const double *hi, const lg_runctx *run, double *e);

/* Pre-activation bounds of layer k of net `which` (0 relu, 1 ref) from the
 * last lg_devnet_bound (only when v->valid): lo[k][i] ≤ z_k[i] ≤ hi[k][i]
 * for the exact and the computed z over the box. Arrays of L pointers into
 * v->b, in the layout of lg_problem. */
double *const *lg_devnet_pre_lo(const lg_devnet *v, int which);
double *const *lg_devnet_pre_hi(const lg_devnet *v, int which);

/* The Lipschitz constant of layer L's activation ("The exact route" above: 1 for relu and
 * identity, 1.2·fs for a relu-like smooth one); +∞ if unknown. */
double lg_devnet_lip(const lg_layer *L);

#endif
