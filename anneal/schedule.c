/* schedule.c — linear λ annealing after a switch step (DESIGN.md §1). */
#include "anneal/schedule.h"

#include <math.h>
#include <string.h>

#define LG_SQRT_2PI 2.50662827463100050242
#define LG_LN2 0.69314718055994530942

double lg_anneal_lambda_target(double tolerance) { return 2.0 / (tolerance * LG_SQRT_2PI); }

double lg_anneal_beta_target(double tolerance) { return 2.0 * LG_LN2 / tolerance; }

double lg_anneal_target_for(lg_act a, double lambda_target)
{
    const lg_act_info *ai = lg_act_info_of(a);
    return ai && ai->anneal_target ? ai->anneal_target(lambda_target) : NAN;
}

lg_status lg_anneal_schedule_init(lg_anneal_schedule *s, double start, double lambda_target, int n_layers)
{
    memset(s, 0, sizeof *s);
    if (n_layers > LG_ANNEAL_MAX_LAYERS)
        return lg_fail(LG_ERR_UNSUPPORTED, "annealing supports up to %d layers, the network has %d",
                       LG_ANNEAL_MAX_LAYERS, n_layers);
    if (!(start >= 0.0 && start <= 1.0)) return lg_fail(LG_ERR_ARG, "anneal start must be in [0, 1], got %g", start);
    if (!(lambda_target >= 1.0) || !isfinite(lambda_target))
        return lg_fail(LG_ERR_ARG, "λ target must be a finite number ≥ 1, got %g", lambda_target);
    s->start = start;
    s->lambda_target = lambda_target;
    return LG_OK;
}

long lg_anneal_switch_step(double start, long total)
{
    long sw = (long)floor(start * (double)total);
    return sw < 0 ? 0 : sw > total ? total : sw;
}

double lg_anneal_lambda_at(double lambda0, double target, long sw, long total, long step)
{
    if (step < sw || total <= sw) return lambda0;
    if (step >= total - 1) return target;
    double frac = (double)(step - sw + 1) / (double)(total - sw);
    return lambda0 + (target - lambda0) * frac;
}

void lg_anneal_hook(void *ctx, lg_model *m, long step, long total)
{
    lg_anneal_schedule *s = ctx;
    s->switch_step = lg_anneal_switch_step(s->start, total);
    if (step < s->switch_step) return;
    if (!s->started) {
        for (int k = 0; k < m->n_layers && k < LG_ANNEAL_MAX_LAYERS; k++) {
            lg_mlayer *L = &m->layers[k];
            s->lambda0[k] = L->lambda;
            if (lg_act_has_param(L->act)) L->lambda_fixed = 1;
        }
        s->started = 1;
    }
    for (int k = 0; k < m->n_layers && k < LG_ANNEAL_MAX_LAYERS; k++) {
        lg_mlayer *L = &m->layers[k];
        if (lg_act_has_param(L->act))
            L->lambda = lg_anneal_lambda_at(s->lambda0[k], lg_anneal_target_for(L->act, s->lambda_target),
                                            s->switch_step, total, step);
    }
}

void lg_anneal_vit_hook(void *ctx, lg_vit *m, long step, long total)
{
    lg_anneal_schedule *s = ctx;
    if (!lg_act_has_param(m->act)) return;
    s->switch_step = lg_anneal_switch_step(s->start, total);
    if (step < s->switch_step) return;
    int L = m->spec.depth < LG_ANNEAL_MAX_LAYERS ? m->spec.depth : LG_ANNEAL_MAX_LAYERS;
    if (!s->started) {
        for (int l = 0; l < L; l++) s->lambda0[l] = lg_vit_act_param(m, l);
        m->act_frozen = 1;
        s->started = 1;
    }
    double target = lg_anneal_target_for(m->act, s->lambda_target);
    for (int l = 0; l < L; l++)
        m->params[m->blk[l][LG_VB_ACT]] = (float)lg_anneal_lambda_at(s->lambda0[l], target, s->switch_step, total, step);
}

lg_status lg_anneal_prepare_net(lg_net *net, const char *name)
{
    int smooth = 0;
    for (int k = 0; k < net->n_layers; k++) {
        lg_layer *L = &net->layers[k];
        lg_act as = lg_act_info_of(L->act)->anneal_as;
        if (as != L->act) { /* the same function with a learned parameter at p = 1 (gelu → lgelu) */
            L->act = as;
            L->lambda = 1.0;
            L->s = -50.0 * net->t; /* λ(s) rounds to 1; s stays frozen */
        }
        smooth += lg_act_relu_like(L->act);
    }
    if (!smooth)
        return lg_fail(LG_ERR_ARG, "%s has no gelu, lgelu, swish or prelu layer: nothing to anneal (annealing "
                                   "hardens λ-GELU and Swish gates and takes PReLU slopes to 0; relu is already "
                                   "piecewise linear, other activations such as sigmoid have no parameter)", name);
    return LG_OK;
}
