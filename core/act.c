#include "core/act.h"

#include <math.h>
#include <string.h>

static const char *const lg_act_names[LG_ACT_COUNT] = {"identity", "relu", "gelu", "lgelu", "sigmoid",
                                                               "swish", "prelu"};

const char *lg_act_name(lg_act a)
{
    if ((int)a < 0 || (int)a >= LG_ACT_COUNT) return NULL;
    return lg_act_names[a];
}

int lg_act_parse(const char *name, lg_act *out)
{
    for (int i = 0; i < LG_ACT_COUNT; i++)
        if (strcmp(name, lg_act_names[i]) == 0) {
            *out = (lg_act)i;
            return 0;
        }
    return -1;
}

double lg_Phi(double z) { return 0.5 * erfc(-z * 0.70710678118654752440); }

double lg_phi(double z) { return 0.39894228040143267794 * exp(-0.5 * z * z); }

/* σ(x): e^{−|x|} never overflows; the x < 0 branch keeps relative accuracy
 * in the lower tail (σ(−700) ≈ e^{−700}; σ(−800) underflows to 0). NaN stays NaN. */
static double lg_sigmoid(double x)
{
    if (x >= 0) return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

double lg_act_eval(lg_act a, double x, double lambda)
{
    switch (a) {
    case LG_ACT_IDENTITY: return x;
    case LG_ACT_RELU: return x > 0 ? x : 0;
    case LG_ACT_GELU: return x * lg_Phi(x);
    case LG_ACT_LGELU: return x * lg_Phi(lambda * x);
    case LG_ACT_SIGMOID: return lg_sigmoid(x);
    case LG_ACT_SWISH: return x * lg_sigmoid(lambda * x);
    case LG_ACT_PRELU: return x > 0 ? x : lambda * x;
    }
    return x;
}

int lg_act_has_param(lg_act a) { return a == LG_ACT_LGELU || a == LG_ACT_SWISH || a == LG_ACT_PRELU; }

int lg_act_relu_like(lg_act a)
{
    return a == LG_ACT_GELU || a == LG_ACT_LGELU || a == LG_ACT_SWISH || a == LG_ACT_PRELU;
}

int lg_act_param_ok(lg_act a, double p)
{
    switch (a) {
    case LG_ACT_GELU:
    case LG_ACT_SWISH: return p >= 1.0 && isfinite(p);
    case LG_ACT_LGELU: return p > 0.0 && isfinite(p); /* an imported file's λ may lie just below 1 */
    case LG_ACT_PRELU: return isfinite(p);
    default: return 1;
    }
}

/* softplus(z) = log(1 + e^z), stable for large |z|. */
static double lg_softplus(double z) { return z > 0 ? z + log1p(exp(-z)) : log1p(exp(z)); }

double lg_lambda_from_s(double s, double t) { return 1.0 + lg_softplus(s / t); }

double lg_s_from_lambda(double lambda, double t)
{
    double y = lambda - 1.0; /* softplus(z) = y  ⇒  z = y + log(1 − e^{−y}) */
    return t * (y + log(-expm1(-y)));
}
