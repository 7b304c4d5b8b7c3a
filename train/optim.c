/* optim.c — SGD with momentum and AdamW over the flat parameter array; the
 * hardness s steps in s-space or in λ-space (DESIGN.md §1). */
#include "train/optim.h"

#include <math.h>
#include <string.h>

#include "core/act.h"

lg_optim_opts lg_optim_opts_default(void)
{
    lg_optim_opts o = {LG_OPTIM_SGD, 0.05, 0.9, 0.0, 0.9, 0.999, 1e-8, 9.0, LG_S_UPDATE_LAMBDA, 0, 0, 0};
    return o;
}

int lg_optim_parse(const char *name, lg_optim_kind *out)
{
    if (strcmp(name, "sgd") == 0) *out = LG_OPTIM_SGD;
    else if (strcmp(name, "adamw") == 0) *out = LG_OPTIM_ADAMW;
    else return -1;
    return 0;
}

int lg_s_update_parse(const char *name, lg_s_update *out)
{
    if (strcmp(name, "s") == 0) *out = LG_S_UPDATE_S;
    else if (strcmp(name, "lambda") == 0) *out = LG_S_UPDATE_LAMBDA;
    else return -1;
    return 0;
}

/* SGD with momentum on p[0..n): v ← μv + (g + wd·p), p ← p − lr·v */
static void lg_sgd_update(float *p, const float *g, float *v, size_t n, float lr, float mu, float wd)
{
    for (size_t i = 0; i < n; i++) {
        float gi = g[i] + wd * p[i];
        v[i] = mu * v[i] + gi;
        p[i] -= lr * v[i];
    }
}

/* AdamW on p[0..n): m ← β1m + (1−β1)g, v ← β2v + (1−β2)g²,
 * p ← p − lr·(m̂/(√v̂ + ε) + wd·p) with bias-corrected m̂ = m/bc1, v̂ = v/bc2.
 * The moments and p are stored in float; every update is computed in double
 * from the options' own β, ε, lr and wd (bc1 = 1 − β1^t, bc2 = 1 − β2^t in
 * double), so each stored value is the double step rounded once. */
static void lg_adamw_update(float *p, const float *g, float *m, float *v, size_t n, double lr, double wd,
                            const lg_optim_opts *o, double bc1, double bc2)
{
    double b1 = o->beta1, b2 = o->beta2, eps = o->eps;
    for (size_t i = 0; i < n; i++) {
        double gi = g[i];
        double mi = b1 * (double)m[i] + (1.0 - b1) * gi, vi = b2 * (double)v[i] + (1.0 - b2) * gi * gi;
        m[i] = (float)mi, v[i] = (float)vi;
        double mh = mi / bc1, vh = vi / bc2, pi = p[i];
        p[i] = (float)(pi - lr * (mh / (sqrt(vh) + eps) + wd * pi));
    }
}

static void lg_optim_range(lg_model *m, const lg_optim_opts *o, float *p, size_t n, double lr, double wd,
                           double bc1, double bc2)
{
    if (n == 0) return; /* an index map has no weights (p is NULL) */
    size_t off = (size_t)(p - m->params);
    if (m->p_scale) { /* a reference parameterisation (model.h): per parameter */
        for (size_t i = off; i < off + n; i++) {
            double a = m->p_scale[i], k = m->p_count[i] * (o->kind == LG_OPTIM_SGD ? a * a : a);
            if (k == 0.0) continue;
            if (o->kind == LG_OPTIM_SGD)
                lg_sgd_update(m->params + i, m->grads + i, m->mom1 + i, 1, (float)(lr * k), (float)o->momentum,
                              (float)(wd / k));
            else
                lg_adamw_update(m->params + i, m->grads + i, m->mom1 + i, m->mom2 + i, 1, lr * k, wd / k, o, bc1, bc2);
        }
        return;
    }
    if (o->kind == LG_OPTIM_SGD)
        lg_sgd_update(p, m->grads + off, m->mom1 + off, n, (float)lr, (float)o->momentum, (float)wd);
    else
        lg_adamw_update(p, m->grads + off, m->mom1 + off, m->mom2 + off, n, lr, wd, o, bc1, bc2);
}

/* The λ-space step of one learned lgelu layer (DESIGN.md §1): the entry's
 * moments hold ∂L/∂λ (not ∂L/∂s), λ' = max(λ − c·lr·step, LG_LAMBDA_FLOOR)
 * with the optimiser's own step rule, s = t·log(e^{λ'−1} − 1). */
static void lg_optim_lambda(lg_model *m, lg_mlayer *L, const lg_optim_opts *o, double bc1, double bc2)
{
    size_t off = (size_t)(L->s - m->params);
    float lam = (float)L->lambda, g = L->dlambda;
    float *m1 = m->mom1 + off, *m2 = m->mom2 + off;
    double lr = o->c * o->lr;
    if (o->kind == LG_OPTIM_SGD) lg_sgd_update(&lam, &g, m1, 1, (float)lr, (float)o->momentum, 0.0f);
    else lg_adamw_update(&lam, &g, m1, m2, 1, lr, 0.0, o, bc1, bc2);
    double nl = (double)lam;
    if (!(nl >= LG_LAMBDA_FLOOR)) { /* clipped (or NaN): no momentum against the floor */
        nl = nl != nl ? nl : LG_LAMBDA_FLOOR;
        *m1 = 0.0f;
    }
    *L->s = (float)lg_s_from_lambda(nl, m->t);
}

double lg_optim_lr_at(const lg_optim_opts *o, long step)
{
    if (o->warmup > 0 && step < o->warmup) return o->lr * (double)step / (double)o->warmup;
    if (o->cosine && o->total > o->warmup) {
        long w = o->warmup > 0 ? o->warmup : 0;
        double f = (double)(step - w) / (double)(o->total - w);
        f = f < 0 ? 0 : f > 1 ? 1 : f;
        return o->lr * 0.5 * (1.0 + cos(3.14159265358979323846 * f));
    }
    return o->lr;
}

void lg_optim_flat(const lg_optim_opts *o, float *p, const float *g, float *m1, float *m2, size_t n, double lr,
                   int decay, long step)
{
    double wd = decay ? o->wd : 0.0;
    if (o->kind == LG_OPTIM_SGD) {
        lg_sgd_update(p, g, m1, n, (float)lr, (float)o->momentum, (float)wd);
        return;
    }
    lg_adamw_update(p, g, m1, m2, n, lr, wd, o, 1.0 - pow(o->beta1, (double)step), 1.0 - pow(o->beta2, (double)step));
}

void lg_optim_step(lg_model *m, const lg_optim_opts *o0, long step)
{
    lg_optim_opts ow = *o0; /* the warm-up scales every rate, the hardness parameters' too */
    ow.lr = lg_optim_lr_at(o0, step);
    const lg_optim_opts *o = &ow;
    double lr = o->lr, wd = o->wd;
    double bc1 = 1.0, bc2 = 1.0;
    if (o->kind == LG_OPTIM_ADAMW) { /* in double from the same β as the moments (lg_adamw_update) */
        bc1 = 1.0 - pow(o->beta1, (double)step);
        bc2 = 1.0 - pow(o->beta2, (double)step);
    }
    for (int k = 0; k < m->n_layers; k++) {
        lg_mlayer *L = &m->layers[k];
        lg_optim_range(m, o, L->W, L->n_w, lr, L->op ? 0.0 : wd, bc1, bc2); /* a node's (layernorm γ, β): no decay */
        lg_optim_range(m, o, L->b, L->n_b, lr, 0.0, bc1, bc2);
        for (int t = 0; t < L->n_terms; t++) /* a graph's further terms: shortcut projections, skips */
            lg_optim_range(m, o, L->terms[t].W, L->terms[t].n_w, lr, wd, bc1, bc2);
        /* the learned parameter (the table's has_param): in λ-space where the entry allows it
         * and asked, else a softplus s (lgelu λ, swish β) with rate c·lr, a parameter learned
         * as itself (prelu a = s) with lr */
        const lg_act_info *ai = lg_act_info_of(L->act);
        if (!ai || !ai->has_param || L->lambda_fixed) continue;
        if (ai->lambda_step && o->s_update == LG_S_UPDATE_LAMBDA) lg_optim_lambda(m, L, o, bc1, bc2);
        else lg_optim_range(m, o, L->s, 1, (ai->softplus ? o->c : 1.0) * o->lr, 0.0, bc1, bc2);
    }
    lg_model_sync_lambda(m);
}
