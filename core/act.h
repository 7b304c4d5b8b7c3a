/* act.h — activation kinds and their scalar definitions in double precision:
 * ONE table (lg_act_info) holds, per activation, its name, its parameter's
 * role, valid range and annealing target, its forward value and
 * derivatives, its gap to ReLU (DESIGN.md §1 "Deviation bound"), what its
 * sound linear relaxation needs (act_relax.h), its outward MPFR interval
 * image for the witness gate (act_mpfr.h), its ONNX form (act_onnx.h) and
 * its batched float forward/backward for training (act_float.h). Adding an
 * activation is one entry there plus the functions it points to; the rest
 * of lgelu reads the entry (tests/check_act_table.c checks every entry).
 *
 * The formulas are DESIGN.md §1: λ-GELU f(x;λ) = x·Φ(λx), Φ the standard
 * normal CDF. GELU is λ = 1. Sigmoid σ(x) = 1/(1+e^{−x}) is also available
 * (for imported networks). The annealed baselines are Swish-β
 * x·σ(βx), β ≥ 1 learned like λ (β = 1 + softplus(s/t)), and PReLU
 * max(0,x) + a·min(0,x) with a learned slope a (DESIGN.md §1 "Annealed
 * baselines"). These double versions are the reference used by
 * evaluation, bounds and re-checks; the float kernels of the same entry are
 * what training runs (train/act.h). Stateless; nothing to free.
 */
#ifndef LG_ACT_H
#define LG_ACT_H

#include <stddef.h>

typedef enum lg_act {
    LG_ACT_IDENTITY = 0,
    LG_ACT_RELU = 1,
    LG_ACT_GELU = 2,  /* x·Φ(x): λ fixed at 1 */
    LG_ACT_LGELU = 3, /* x·Φ(λx): λ ≥ 1 learned per layer */
    LG_ACT_SIGMOID = 4, /* 1/(1+e^{−x}); smooth, no ReLU substitution, not verifiable */
    LG_ACT_SWISH = 5,   /* x·σ(βx): β ≥ 1 learned per layer (in lg_layer.lambda) */
    LG_ACT_PRELU = 6    /* x for x > 0, a·x below: slope a learned per layer (in lg_layer.lambda) */
} lg_act;

#define LG_ACT_COUNT 7

struct lg_iv;      /* act_mpfr.h */
struct lg_iv_work; /* act_mpfr.h */

/* The ONNX pattern (several nodes) an activation is read back from
 * (onnx_read.c); single-op kinds name their op in onnx_op instead. */
typedef enum lg_act_onnx_pattern {
    LG_ACT_ONNX_OP = 0, /* one node: onnx_op (or onnx_op_alias) */
    LG_ACT_ONNX_ERF,    /* x·½·(1 + erf(p·x/√2)) */
    LG_ACT_ONNX_GATE    /* x·Sigmoid(p·x) */
} lg_act_onnx_pattern;

/* One activation's entry. Every function takes the parameter p as stored in
 * lg_layer.lambda (ignored by kinds without one; gelu reads 1). */
typedef struct lg_act_info {
    const char *name;       /* "identity", "relu", ... (lg_act_name) */
    const char *param_name; /* "lambda", "beta", "slope"; NULL without a parameter */
    const char *param_sym;  /* in messages: "λ", "β", "slope"; NULL when no p is shown (gelu shows its λ = 1) */
    const char *param_range; /* what param_ok accepts, in words ("a finite β ≥ 1"); NULL without param_ok */
    int (*param_ok)(double p); /* 1 if p is a valid stored parameter (lg_act_param_ok); NULL: any p */
    int has_param;          /* a per-layer parameter lives in lg_layer.lambda */
    int softplus;           /* learned as 1 + softplus(s/t) (lgelu, swish); else p = s (prelu) */
    int lambda_step;        /* `--s-update lambda` applies: the step may be taken on p itself (lgelu) */
    int relu_like;          /* ReLU substitution replaces it; gap() is its certified deviation */
    int below_relu;         /* relu-like with f(x) ≤ max(0, x) for every x: max(0, x) − f(x) ∈ [0, gap] */
    int smooth;             /* verified directly through its relaxation (not relu/identity) */
    double (*f)(double x, double p);   /* forward value */
    double (*df)(double x, double p);  /* ∂f/∂x (prelu: the right derivative at 0) */
    double (*dp)(double x, double p);  /* ∂f/∂p; NULL without a parameter */
    /* ≥ sup over x ≠ 0 of |f(x)|/|x| (relu-like kinds: scales the rounding
     * of a computed gap, anneal/deviation.c); NULL: 1. */
    double (*fmag)(double p);
    /* sup over x ∈ [l, u] of |f(x) − max(0, x)| (relu-like kinds; else NULL),
     * in double with no safety margin; *at_peak = 1 when [l, u] reaches the
     * largest gap. */
    double (*gap)(double p, double l, double u, int *at_peak);
    /* ≥ sup over x ∈ [l, u] of |f''(x)|, rounded up (smooth kinds; prelu 0
     * away from its kink, +∞ across it — act_relax.c handles the kink). */
    double (*d2max)(double p, double l, double u);
    /* The inflection points of f in increasing order (at most 2) and the
     * sign of f'' left of the first: used only to choose lines, never for
     * their soundness. Returns how many. */
    int (*curv)(double p, double pts[2], int *left_sign);
    /* Shape facts the relaxation (act_relax.c) uses instead of naming kinds:
     * bounded: range_lo ≤ f ≤ range_hi for every x (sigmoid: 0, 1), the
     * vacuous lines otherwise −∞ / +∞; increasing: f is non-decreasing in x
     * (sigmoid), so f(l) ≤ f ≤ f(u) on [l, u] — only for kinds whose p is
     * not rounded (not softplus); with one inflection, convex left of it,
     * the tangents through the far ends are candidates too (CROWN's S-shape
     * lines); pwl: piecewise linear with its one kink at 0 (prelu), so
     * lines fitted to samples are exact and no gap preset is needed. */
    int bounded, increasing, pwl;
    double range_lo, range_hi;
    /* Training (act_float.h): floats per element the forward keeps for the
     * backward (0: none), and the batched float forward and backward. */
    int keep;
    void (*fwd)(float *out, float *keep, const float *inp, float p, size_t n);
    void (*bwd)(float *dinp, float *dp, const float *dout, const float *keep, const float *inp, float p, size_t n);
    /* Annealing (anneal/schedule.h, DESIGN.md §1): the parameter a layer
     * reaches at the end for a λ_target (the same Heaviside tolerance E);
     * NULL when the kind is not annealed as it is. anneal_as: the kind a
     * layer becomes before annealing, computing the same function at p = 1
     * (gelu → lgelu); the kind itself otherwise. */
    double (*anneal_target)(double lambda_target);
    lg_act anneal_as;
    /* Witness gate (act_mpfr.h): z ← an outward interval holding f(x; q)
     * for every x ∈ z and q ∈ [p, next(p)]; 0, or −1 when p is outside what
     * it handles. */
    int (*iv)(struct lg_iv *z, double p, struct lg_iv_work *w);
    /* ONNX reading (onnx/onnx_read.c): onnx_pattern, and for LG_ACT_ONNX_OP
     * the op (and an alias with an "alpha" attribute as the parameter,
     * LeakyRelu) that closes a layer of this kind; a pattern closes the
     * first entry whose pattern it is and that has a parameter or whose
     * fixed p = 1 it matches. Writing: onnx/act_onnx.h, one writer per kind. */
    lg_act_onnx_pattern onnx_pattern;
    const char *onnx_op;
    const char *onnx_op_alias;
} lg_act_info;

/* The entry of kind a; NULL for an out-of-range value. */
const lg_act_info *lg_act_info_of(lg_act a);

/* The kind an ONNX reader closes for pattern pat with parameter p (see
 * onnx_pattern above), or for the single op named op (pat ==
 * LG_ACT_ONNX_OP; *alias = 1 when op is the entry's onnx_op_alias, may be
 * NULL). Returns 0 and sets *out, or −1 when no entry matches. */
int lg_act_onnx_kind(lg_act_onnx_pattern pat, double p, const char *op, int *alias, lg_act *out);

/* Initial negative slope of a prelu layer (PyTorch's nn.PReLU default). */
#define LG_PRELU_INIT_SLOPE 0.25

/* The parameter of a fresh layer of kind a with temperature t, and its raw
 * s (may be NULL): 1 + softplus(0) = 1 + log 2 with s = 0 for softplus
 * kinds, LG_PRELU_INIT_SLOPE with s = the slope for prelu, else 1, s = 0. */
double lg_act_param_init(lg_act a, double t, double *s);

/* Largest gaps (DESIGN.md §1, 40-digit mpmath, rounded): λ-GELU's
 * |x|Φ(−λ|x|) peaks at |x| = GELU_PEAK_S/λ with GELU_PEAK_V/λ, Swish-β's
 * |x|σ(−β|x|) at SWISH_PEAK_S/β with SWISH_PEAK_V/β. */
#define LG_ACT_GELU_PEAK_S 0.75179152469356445746
#define LG_ACT_GELU_PEAK_V 0.16997120747990366169
#define LG_ACT_SWISH_PEAK_S 1.27846454276107379511
#define LG_ACT_SWISH_PEAK_V 0.27846454276107379511

/* Gap by magnitude: sup over t ∈ [a,b] (0 ≤ a ≤ b) of tΦ(−λt), of tσ(−βt). */
double lg_act_gap_mag_gelu(double lambda, double a, double b);
double lg_act_gap_mag_swish(double beta, double a, double b);

/* σ(x) without overflow for any |x|. */
double lg_sigmoid(double x);

/* "identity", "relu", "gelu", "lgelu", "sigmoid", "swish", "prelu"; NULL for
 * an out-of-range value. */
const char *lg_act_name(lg_act a);
/* Parse a name as above; returns 0 and sets *out, or -1 if unknown. */
int lg_act_parse(const char *name, lg_act *out);

/* Φ(z) = ½ erfc(−z/√2) (accurate in both tails); φ(z) = exp(−z²/2)/√(2π). */
double lg_Phi(double z);
double lg_phi(double z);

/* f(x) for kind a with parameter lambda: the hardness λ for LG_ACT_LGELU,
 * β for LG_ACT_SWISH, the negative slope a for LG_ACT_PRELU; ignored
 * otherwise (GELU uses 1). Sigmoid and swish are evaluated without overflow
 * for any |x|. */
double lg_act_eval(lg_act a, double x, double lambda);

/* 1 for the activations that carry a per-layer parameter in lg_layer.lambda
 * (lgelu, swish, prelu), 0 otherwise. */
int lg_act_has_param(lg_act a);

/* 1 for the activations that ReLU substitution replaces by relu and whose
 * gap to relu the deviation bound certifies (gelu, lgelu, swish, prelu);
 * this is the one place that list lives. */
int lg_act_relu_like(lg_act a);

/* 1 if p is a valid parameter for kind a: λ > 0 finite for lgelu (training
 * keeps it ≥ 1; an imported file's own constant may give a λ just below 1,
 * DESIGN.md §3), β ≥ 1 finite for swish, ≥ 1 for gelu, any finite slope for
 * prelu; 1 for kinds without a parameter. */
int lg_act_param_ok(lg_act a, double p);

/* λ = 1 + softplus(s/t) and its inverse s = t·log(exp(λ−1) − 1), λ > 1. */
double lg_lambda_from_s(double s, double t);
double lg_s_from_lambda(double lambda, double t);

#endif
