/* act.c — the activation table (act.h): one entry per lg_act. */
#include "core/act.h"
#include "core/act_float.h"
#include "core/act_mpfr.h"

#include <math.h>
#include <string.h>

double lg_Phi(double z) { return 0.5 * erfc(-z * 0.70710678118654752440); }

double lg_phi(double z) { return 0.39894228040143267794 * exp(-0.5 * z * z); }

/* σ(x): e^{−|x|} never overflows; the x < 0 branch keeps relative accuracy
 * in the lower tail (σ(−700) ≈ e^{−700}; σ(−800) underflows to 0). NaN stays NaN. */
double lg_sigmoid(double x)
{
    if (x >= 0) return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

/* σ'(x) = σ(x)σ(−x), evaluated without cancellation. */
static double lg_dsigmoid(double x) { return lg_sigmoid(x) * lg_sigmoid(-x); }

/* ---- identity and relu ------------------------------------------------ */

static double lg_id_f(double x, double p) { (void)p; return x; }
static double lg_id_df(double x, double p) { (void)x; (void)p; return 1.0; }
static double lg_relu_f(double x, double p) { (void)p; return x > 0 ? x : 0; }
static double lg_relu_df(double x, double p) { (void)p; return x > 0 ? 1.0 : 0.0; }

/* ---- λ-GELU (DESIGN.md §1): f = xΦ(λx), f' = Φ(λx) + λxφ(λx),
 * f'' = λφ(λx)(2 − λ²x²), ∂f/∂λ = x²φ(λx); inflections at ±√2/λ. -------- */

static double lg_lgelu_f(double x, double p) { return x * lg_Phi(p * x); }
static double lg_lgelu_df(double x, double p) { return lg_Phi(p * x) + p * x * lg_phi(p * x); }
static double lg_lgelu_dp(double x, double p) { return x * x * lg_phi(p * x); }
static double lg_gelu_f(double x, double p) { (void)p; return lg_lgelu_f(x, 1.0); }
static double lg_gelu_df(double x, double p) { (void)p; return lg_lgelu_df(x, 1.0); }

double lg_act_gap_mag_gelu(double lambda, double a, double b)
{
    double peak = LG_ACT_GELU_PEAK_S / lambda;
    if (a <= peak && peak <= b) return LG_ACT_GELU_PEAK_V / lambda;
    double t = b < peak ? b : a; /* the end closest to the peak (h_λ unimodal) */
    return t * lg_Phi(-lambda * t);
}

/* sup over t ∈ [a,b] of t·σ(−βt). σ(−βt) is e/(1+e) with e = e^{−βt}, so a
 * huge βt gives 0 rather than ∞/∞. */
double lg_act_gap_mag_swish(double beta, double a, double b)
{
    double peak = LG_ACT_SWISH_PEAK_S / beta;
    if (a <= peak && peak <= b) return LG_ACT_SWISH_PEAK_V / beta;
    double t = b < peak ? b : a; /* the end closest to the peak (unimodal) */
    double e = exp(-beta * t);
    return t * e / (1.0 + e);
}

/* |x| over [l, u] is [*a, *b]. */
static void lg_act_mag(double l, double u, double *a, double *b)
{
    *a = l > 0.0 ? l : u < 0.0 ? -u : 0.0;
    *b = -l > u ? -l : u;
}

static double lg_lgelu_gap(double p, double l, double u, int *at_peak)
{
    double a, b;
    lg_act_mag(l, u, &a, &b);
    double peak = LG_ACT_GELU_PEAK_S / p;
    if (at_peak) *at_peak = a <= peak && peak <= b;
    return lg_act_gap_mag_gelu(p, a, b);
}
static double lg_gelu_gap(double p, double l, double u, int *at_peak)
{
    (void)p;
    return lg_lgelu_gap(1.0, l, u, at_peak);
}

/* |f''| = λφ(λx)|2 − λ²x²| ≤ λ·φ(λ·min|x|)·max(2, λ²·max|x|² − 2); ×(1 + 2^-40) for rounding. */
static double lg_lgelu_d2max(double p, double l, double u)
{
    double a, b;
    lg_act_mag(l, u, &a, &b);
    double q = p * p * b * b - 2.0;
    return p * lg_phi(p * a) * (q > 2.0 ? q : 2.0) * (1.0 + 0x1p-40);
}
static double lg_gelu_d2max(double p, double l, double u)
{
    (void)p;
    return lg_lgelu_d2max(1.0, l, u);
}

static int lg_lgelu_curv(double p, double pts[2], int *left)
{
    pts[0] = -1.41421356237309504880 / p;
    pts[1] = 1.41421356237309504880 / p;
    *left = -1; /* concave, convex on |λx| < √2, concave */
    return 2;
}
static int lg_gelu_curv(double p, double pts[2], int *left)
{
    (void)p;
    return lg_lgelu_curv(1.0, pts, left);
}

/* ---- sigmoid: σ'' = σ'(1 − 2σ), |σ''| ≤ 1/(6√3) ≈ 0.0962; inflection 0. */

static double lg_sig_f(double x, double p) { (void)p; return lg_sigmoid(x); }
static double lg_sig_df(double x, double p) { (void)p; return lg_dsigmoid(x); }
static double lg_sig_d2max(double p, double l, double u)
{
    (void)p;
    double a, b;
    lg_act_mag(l, u, &a, &b);
    (void)b;
    /* |σ''(x)| = σ'(x)·|tanh(x/2)| ≤ min(0.0963, σ'(min|x|)) */
    double d = lg_dsigmoid(a) * (1.0 + 0x1p-40);
    return d < 0.0963 ? d : 0.0963;
}
static int lg_sig_curv(double p, double pts[2], int *left)
{
    (void)p;
    pts[0] = 0.0;
    *left = 1;
    return 1;
}

/* ---- Swish-β: f = xσ(βx), f' = σ(βx) + βxσ'(βx),
 * f'' = βσ'(βx)(2 + βx(1 − 2σ(βx))), ∂f/∂β = x²σ'(βx); inflections at
 * ±2.3993572805154676/β (root of 2 + w·tanh(−w/2)... = 0). ------------- */

static double lg_swish_f(double x, double p) { return x * lg_sigmoid(p * x); }
static double lg_swish_df(double x, double p) { return lg_sigmoid(p * x) + p * x * lg_dsigmoid(p * x); }
static double lg_swish_dp(double x, double p) { return x * x * lg_dsigmoid(p * x); }
static double lg_swish_gap(double p, double l, double u, int *at_peak)
{
    double a, b;
    lg_act_mag(l, u, &a, &b);
    double peak = LG_ACT_SWISH_PEAK_S / p;
    if (at_peak) *at_peak = a <= peak && peak <= b;
    return lg_act_gap_mag_swish(p, a, b);
}
/* |f''| = βσ'(w)|2 − w·tanh(w/2)| (w = βx) ≤ β·σ'(β·min|x|)·max(2, β·max|x| − 2). */
static double lg_swish_d2max(double p, double l, double u)
{
    double a, b;
    lg_act_mag(l, u, &a, &b);
    double q = p * b - 2.0;
    return p * lg_dsigmoid(p * a) * (q > 2.0 ? q : 2.0) * (1.0 + 0x1p-40);
}
static int lg_swish_curv(double p, double pts[2], int *left)
{
    pts[0] = -2.39935728051546750 / p;
    pts[1] = 2.39935728051546750 / p;
    *left = -1;
    return 2;
}

/* ---- PReLU: x for x > 0, a·x below; gap |a|·max(0, −x). --------------- */

static double lg_prelu_f(double x, double p) { return x > 0 ? x : p * x; }
static double lg_prelu_df(double x, double p) { return x >= 0 ? 1.0 : p; }
static double lg_prelu_dp(double x, double p) { (void)p; return x < 0 ? x : 0.0; }
static double lg_prelu_gap(double p, double l, double u, int *at_peak)
{
    (void)u;
    if (at_peak) *at_peak = 0;
    return l < 0.0 ? fabs(p) * -l : 0.0; /* |a·min(x,0)| grows with −x */
}
static double lg_prelu_fmag(double p) { return fabs(p) > 1.0 ? fabs(p) : 1.0; } /* |f(x)| ≤ max(1, |a|)·|x| */
static double lg_prelu_d2max(double p, double l, double u)
{
    (void)p;
    return l < 0.0 && u > 0.0 ? INFINITY : 0.0;
}
static int lg_prelu_curv(double p, double pts[2], int *left)
{
    pts[0] = 0.0;
    *left = p <= 1.0 ? 1 : -1; /* convex kink iff a ≤ 1 */
    return 1;
}

/* ---- parameters: valid ranges and annealing targets (DESIGN.md §1) ---- */

static int lg_p_ge1(double p) { return p >= 1.0 && isfinite(p); }
static int lg_p_pos(double p) { return p > 0.0 && isfinite(p); } /* an imported file's λ may lie just below 1 */
static int lg_p_finite(double p) { return isfinite(p); }

#define LG_SQRT_2PI 2.50662827463100050242
#define LG_LN2 0.69314718055994530942

/* λ-GELU anneals to λ_target itself. */
static double lg_lgelu_anneal(double lambda_target) { return lambda_target; }
/* Swish: the β of the same Heaviside tolerance E = 2/(λ_target·√(2π)), β = 2·ln2/E. */
static double lg_swish_anneal(double lambda_target)
{
    double tolerance = 2.0 / (lambda_target * LG_SQRT_2PI);
    return 2.0 * LG_LN2 / tolerance;
}
/* PReLU: the slope goes to 0 (relu itself). */
static double lg_prelu_anneal(double lambda_target)
{
    (void)lambda_target;
    return 0.0;
}

/* One entry per kind, one line per role: name and parameter; class;
 * double math; relaxation data; training kernels; annealing; witness-gate
 * interval image; ONNX form. */
static const lg_act_info lg_act_table[LG_ACT_COUNT] = {
    [LG_ACT_IDENTITY] = {
        .name = "identity",
        .f = lg_id_f, .df = lg_id_df,
        .fwd = lg_actf_identity_fwd, .bwd = lg_actf_identity_bwd,
        .anneal_as = LG_ACT_IDENTITY,
        .iv = lg_iv_identity,
        .onnx_op = "Identity"},
    [LG_ACT_RELU] = {
        .name = "relu",
        .f = lg_relu_f, .df = lg_relu_df,
        .fwd = lg_actf_relu_fwd, .bwd = lg_actf_relu_bwd,
        .anneal_as = LG_ACT_RELU,
        .iv = lg_iv_relu,
        .onnx_op = "Relu"},
    [LG_ACT_GELU] = {
        .name = "gelu", .param_sym = "λ", .param_range = "a finite value ≥ 1", .param_ok = lg_p_ge1,
        .relu_like = 1, .below_relu = 1, .smooth = 1,
        .f = lg_gelu_f, .df = lg_gelu_df, .gap = lg_gelu_gap,
        .d2max = lg_gelu_d2max, .curv = lg_gelu_curv,
        .keep = 2, .fwd = lg_actf_gelu_fwd, .bwd = lg_actf_gelu_bwd,
        .anneal_as = LG_ACT_LGELU,
        .iv = lg_iv_gelu,
        .onnx_pattern = LG_ACT_ONNX_ERF},
    [LG_ACT_LGELU] = {
        .name = "lgelu", .param_name = "lambda", .param_sym = "λ", .param_range = "a finite value > 0",
        .param_ok = lg_p_pos, .has_param = 1, .softplus = 1, .lambda_step = 1,
        .relu_like = 1, .below_relu = 1, .smooth = 1,
        .f = lg_lgelu_f, .df = lg_lgelu_df, .dp = lg_lgelu_dp, .gap = lg_lgelu_gap,
        .d2max = lg_lgelu_d2max, .curv = lg_lgelu_curv,
        .keep = 2, .fwd = lg_actf_lgelu_fwd, .bwd = lg_actf_lgelu_bwd,
        .anneal_target = lg_lgelu_anneal, .anneal_as = LG_ACT_LGELU,
        .iv = lg_iv_lgelu,
        .onnx_pattern = LG_ACT_ONNX_ERF},
    [LG_ACT_SIGMOID] = {
        .name = "sigmoid",
        .smooth = 1,
        .f = lg_sig_f, .df = lg_sig_df,
        .d2max = lg_sig_d2max, .curv = lg_sig_curv, .bounded = 1, .range_lo = 0.0, .range_hi = 1.0, .increasing = 1,
        .fwd = lg_actf_sigmoid_fwd, .bwd = lg_actf_sigmoid_bwd,
        .anneal_as = LG_ACT_SIGMOID,
        .iv = lg_iv_sigmoid,
        .onnx_op = "Sigmoid"},
    [LG_ACT_SWISH] = {
        .name = "swish", .param_name = "beta", .param_sym = "β", .param_range = "a finite β ≥ 1",
        .param_ok = lg_p_ge1, .has_param = 1, .softplus = 1,
        .relu_like = 1, .below_relu = 1, .smooth = 1,
        .f = lg_swish_f, .df = lg_swish_df, .dp = lg_swish_dp, .gap = lg_swish_gap,
        .d2max = lg_swish_d2max, .curv = lg_swish_curv,
        .fwd = lg_actf_swish_fwd, .bwd = lg_actf_swish_bwd,
        .anneal_target = lg_swish_anneal, .anneal_as = LG_ACT_SWISH,
        .iv = lg_iv_swish,
        .onnx_pattern = LG_ACT_ONNX_GATE},
    [LG_ACT_PRELU] = {
        .name = "prelu", .param_name = "slope", .param_sym = "slope", .param_range = "a finite slope",
        .param_ok = lg_p_finite, .has_param = 1,
        .relu_like = 1, .smooth = 1,
        .f = lg_prelu_f, .df = lg_prelu_df, .dp = lg_prelu_dp, .fmag = lg_prelu_fmag, .gap = lg_prelu_gap,
        .d2max = lg_prelu_d2max, .curv = lg_prelu_curv, .pwl = 1,
        .fwd = lg_actf_prelu_fwd, .bwd = lg_actf_prelu_bwd,
        .anneal_target = lg_prelu_anneal, .anneal_as = LG_ACT_PRELU,
        .iv = lg_iv_prelu,
        .onnx_op = "PRelu", .onnx_op_alias = "LeakyRelu"},
};

const lg_act_info *lg_act_info_of(lg_act a)
{
    if ((int)a < 0 || (int)a >= LG_ACT_COUNT) return NULL;
    return &lg_act_table[a];
}

const char *lg_act_name(lg_act a)
{
    const lg_act_info *i = lg_act_info_of(a);
    return i ? i->name : NULL;
}

int lg_act_parse(const char *name, lg_act *out)
{
    for (int i = 0; i < LG_ACT_COUNT; i++)
        if (strcmp(name, lg_act_table[i].name) == 0) {
            *out = (lg_act)i;
            return 0;
        }
    return -1;
}

double lg_act_eval(lg_act a, double x, double lambda)
{
    const lg_act_info *i = lg_act_info_of(a);
    return i ? i->f(x, lambda) : x;
}

int lg_act_has_param(lg_act a)
{
    const lg_act_info *i = lg_act_info_of(a);
    return i && i->has_param;
}

int lg_act_relu_like(lg_act a)
{
    const lg_act_info *i = lg_act_info_of(a);
    return i && i->relu_like;
}

int lg_act_param_ok(lg_act a, double p)
{
    const lg_act_info *i = lg_act_info_of(a);
    return !i || !i->param_ok || i->param_ok(p);
}

int lg_act_onnx_kind(lg_act_onnx_pattern pat, double p, const char *op, int *alias, lg_act *out)
{
    for (int k = 0; k < LG_ACT_COUNT; k++) {
        const lg_act_info *i = &lg_act_table[k];
        if (i->onnx_pattern != pat) continue;
        int is_alias = 0;
        if (pat == LG_ACT_ONNX_OP) {
            is_alias = op && i->onnx_op_alias && strcmp(op, i->onnx_op_alias) == 0;
            if (!op || !(is_alias || (i->onnx_op && strcmp(op, i->onnx_op) == 0))) continue;
        } else if (!i->has_param && p != 1.0) {
            continue;
        }
        if (alias) *alias = is_alias;
        *out = (lg_act)k;
        return 0;
    }
    return -1;
}

double lg_act_param_init(lg_act a, double t, double *s)
{
    const lg_act_info *i = lg_act_info_of(a);
    double p = 1.0, raw = 0.0;
    if (i && i->softplus) p = lg_lambda_from_s(0.0, t);
    else if (i && i->has_param) p = raw = LG_PRELU_INIT_SLOPE;
    if (s) *s = raw;
    return p;
}

/* softplus(z) = log(1 + e^z), stable for large |z|. */
static double lg_softplus(double z) { return z > 0 ? z + log1p(exp(-z)) : log1p(exp(z)); }

double lg_lambda_from_s(double s, double t) { return 1.0 + lg_softplus(s / t); }

double lg_s_from_lambda(double lambda, double t)
{
    double y = lambda - 1.0; /* softplus(z) = y  ⇒  z = y + log(1 − e^{−y}) */
    return t * (y + log(-expm1(-y)));
}
