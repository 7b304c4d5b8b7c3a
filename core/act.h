/* act.h — activation kinds and their scalar definitions in double precision.
 *
 * The formulas are DESIGN.md §1: λ-GELU f(x;λ) = x·Φ(λx), Φ the standard
 * normal CDF. GELU is λ = 1. Sigmoid σ(x) = 1/(1+e^{−x}) is also available
 * (for imported networks). The annealed baselines (issue 10) are Swish-β
 * x·σ(βx), β ≥ 1 learned like λ (β = 1 + softplus(s/t)), and PReLU
 * max(0,x) + a·min(0,x) with a learned slope a (DESIGN.md §1 "Annealed
 * baselines"). These double versions are the reference used by
 * evaluation, bounds and re-checks; train/ has batched float forward/backward
 * pairs of its own. Stateless; nothing to free.
 */
#ifndef LG_ACT_H
#define LG_ACT_H

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
