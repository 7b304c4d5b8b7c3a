/* optim.h — optimisers over the model's flat parameter array: SGD with
 * momentum and AdamW (decoupled weight decay).
 *
 * Weights W get weight decay; biases and s do not. The raw hardness s of a
 * learned lgelu layer steps with its own learning rate c·lr (DESIGN.md §1),
 * in one of two ways (lg_s_update):
 *   LG_S_UPDATE_S       the plain step on s from ∂L/∂s (the original
 *                       behaviour; the step on λ vanishes as λ → 1);
 *   LG_S_UPDATE_LAMBDA  the step is taken in λ-space: the optimiser's moments
 *                       for that entry hold ∂L/∂λ, λ ← max(λ − c·lr·step,
 *                       LG_LAMBDA_FLOOR) and s = t·log(e^{λ−1} − 1) is solved
 *                       back (the default). A step clipped at the floor resets
 *                       the moments of that entry (no wind-up against it).
 * (only for kinds whose act.h entry has lambda_step: lgelu). After the step
 * λ = 1 + softplus(s/t) is recomputed. Swish's s steps
 * like lgelu's plain update (rate c·lr); a prelu slope a = s steps with
 * lr. Layers with
 * lambda_fixed keep s frozen. Moments live in the model (mom1, mom2).
 * Stateless apart from the model; nothing to free.
 */
#ifndef LG_TRAIN_OPTIM_H
#define LG_TRAIN_OPTIM_H

#include "train/model.h"

typedef enum lg_optim_kind { LG_OPTIM_SGD = 0, LG_OPTIM_ADAMW = 1 } lg_optim_kind;

typedef enum lg_s_update { LG_S_UPDATE_S = 0, LG_S_UPDATE_LAMBDA = 1 } lg_s_update;

/* Lowest λ the λ-space update steps to (λ = 1 itself needs s = −∞). */
#define LG_LAMBDA_FLOOR 1.001

typedef struct lg_optim_opts {
    lg_optim_kind kind;
    double lr;        /* η (default 0.05) */
    double momentum;  /* SGD momentum μ (default 0.9); v ← μv + g, w ← w − ηv */
    double wd;        /* weight decay on W: SGD adds wd·w to g; AdamW w ← w − η·wd·w (default 0) */
    double beta1, beta2, eps; /* AdamW (0.9, 0.999, 1e-8) */
    double c;         /* η_s = c·η for the hardness parameters s (default 9) */
    lg_s_update s_update; /* how s steps (default LG_S_UPDATE_LAMBDA) */
    long warmup;      /* linear learning-rate warm-up over the first `warmup` steps: η·min(1, step/warmup) (default 0: off) */
    int cosine;       /* 1: after the warm-up, η·½(1 + cos(π·(step − warmup)/(total − warmup))) (default 0: constant) */
    long total;       /* the run's number of updates, set by the training loop (cosine decay only) */
} lg_optim_opts;

lg_optim_opts lg_optim_opts_default(void);

/* Parse "sgd" / "adamw"; 0 on success, −1 if unknown. */
int lg_optim_parse(const char *name, lg_optim_kind *out);

/* Parse "s" / "lambda"; 0 on success, −1 if unknown. */
int lg_s_update_parse(const char *name, lg_s_update *out);

/* The learning rate of update `step` (1-based): η with the warm-up and, when
 * cosine and total > warmup, the cosine decay to 0 at step total applied. */
double lg_optim_lr_at(const lg_optim_opts *o, long step);

/* One SGD or AdamW update of a flat range p[0..n) from g with its moments
 * m1, m2 (m2 unused by SGD), learning rate lr, weight decay when decay;
 * step as lg_optim_step. For models outside lg_model (train/vit.h). */
void lg_optim_flat(const lg_optim_opts *o, float *p, const float *g, float *m1, float *m2, size_t n, double lr,
                   int decay, long step);

/* One update from m->grads. step is 1 for the first update (AdamW bias
 * correction). */
void lg_optim_step(lg_model *m, const lg_optim_opts *o, long step);

#endif
