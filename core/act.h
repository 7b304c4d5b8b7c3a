/* act.h — activation kinds and their scalar definitions in double precision.
 *
 * The formulas are DESIGN.md §1: λ-GELU f(x;λ) = x·Φ(λx), Φ the standard
 * normal CDF. GELU is λ = 1. Sigmoid σ(x) = 1/(1+e^{−x}) is also available
 * (for imported networks). These double versions are the reference used by
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
    LG_ACT_SIGMOID = 4 /* 1/(1+e^{−x}); smooth, no ReLU substitution, not verifiable */
} lg_act;

#define LG_ACT_COUNT 5

/* "identity", "relu", "gelu", "lgelu", "sigmoid"; NULL for an out-of-range value. */
const char *lg_act_name(lg_act a);
/* Parse a name as above; returns 0 and sets *out, or -1 if unknown. */
int lg_act_parse(const char *name, lg_act *out);

/* Φ(z) = ½ erfc(−z/√2) (accurate in both tails); φ(z) = exp(−z²/2)/√(2π). */
double lg_Phi(double z);
double lg_phi(double z);

/* f(x) for kind a with hardness lambda (ignored unless LG_ACT_LGELU; GELU
 * uses 1). Sigmoid is evaluated without overflow for any |x|. */
double lg_act_eval(lg_act a, double x, double lambda);

/* λ = 1 + softplus(s/t) and its inverse s = t·log(exp(λ−1) − 1), λ > 1. */
double lg_lambda_from_s(double s, double t);
double lg_s_from_lambda(double lambda, double t);

#endif
