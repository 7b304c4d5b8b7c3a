/* optim.c — SGD with momentum and AdamW over the flat parameter array. */
#include "train/optim.h"

#include <math.h>
#include <string.h>

lg_optim_opts lg_optim_opts_default(void)
{
    lg_optim_opts o = {LG_OPTIM_SGD, 0.05, 0.9, 0.0, 0.9, 0.999, 1e-8, 9.0};
    return o;
}

int lg_optim_parse(const char *name, lg_optim_kind *out)
{
    if (strcmp(name, "sgd") == 0) *out = LG_OPTIM_SGD;
    else if (strcmp(name, "adamw") == 0) *out = LG_OPTIM_ADAMW;
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
 * p ← p − lr·(m̂/(√v̂ + ε) + wd·p) with bias-corrected m̂, v̂ */
static void lg_adamw_update(float *p, const float *g, float *m, float *v, size_t n, float lr, float wd,
                            const lg_optim_opts *o, float bc1, float bc2)
{
    float b1 = (float)o->beta1, b2 = (float)o->beta2, eps = (float)o->eps;
    for (size_t i = 0; i < n; i++) {
        m[i] = b1 * m[i] + (1.0f - b1) * g[i];
        v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
        float mh = m[i] / bc1, vh = v[i] / bc2;
        p[i] -= lr * (mh / (sqrtf(vh) + eps) + wd * p[i]);
    }
}

static void lg_optim_range(lg_model *m, const lg_optim_opts *o, float *p, size_t n, float lr, float wd,
                           float bc1, float bc2)
{
    size_t off = (size_t)(p - m->params);
    if (o->kind == LG_OPTIM_SGD)
        lg_sgd_update(p, m->grads + off, m->mom1 + off, n, lr, (float)o->momentum, wd);
    else
        lg_adamw_update(p, m->grads + off, m->mom1 + off, m->mom2 + off, n, lr, wd, o, bc1, bc2);
}

void lg_optim_step(lg_model *m, const lg_optim_opts *o, long step)
{
    float lr = (float)o->lr, wd = (float)o->wd;
    float bc1 = 1.0f, bc2 = 1.0f;
    if (o->kind == LG_OPTIM_ADAMW) {
        bc1 = (float)(1.0 - pow(o->beta1, (double)step));
        bc2 = (float)(1.0 - pow(o->beta2, (double)step));
    }
    for (int k = 0; k < m->n_layers; k++) {
        lg_mlayer *L = &m->layers[k];
        lg_optim_range(m, o, L->W, (size_t)L->n_out * (size_t)L->n_in, lr, wd, bc1, bc2);
        lg_optim_range(m, o, L->b, (size_t)L->n_out, lr, 0.0f, bc1, bc2);
        if (L->act == LG_ACT_LGELU && !L->lambda_fixed)
            lg_optim_range(m, o, L->s, 1, (float)(o->c * o->lr), 0.0f, bc1, bc2);
    }

    /* the annealed baselines (issue 10): swish's s steps like lgelu's (rate
     * c·lr), a prelu slope a = s with lr */
    for (int k = 0; k < m->n_layers; k++) {
        lg_mlayer *L = &m->layers[k];
        if ((L->act == LG_ACT_SWISH || L->act == LG_ACT_PRELU) && !L->lambda_fixed)
            lg_optim_range(m, o, L->s, 1, (float)((L->act == LG_ACT_SWISH ? o->c : 1.0) * o->lr), 0.0f, bc1, bc2);
    }
    lg_model_sync_lambda(m);
}
