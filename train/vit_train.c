/* vit_train.c — mini-batch training of a ViT (vit_train.h). */
#include "train/vit_train.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "core/clock.h"
#include "core/linalg.h"
#include "core/rng.h"

static int lg_vit_batch_hits(void *model, const float *X, const uint32_t *idx, int B, const uint8_t *labels)
{
    lg_vit *m = model;
    lg_vit_gather(m, X, idx, B);
    int c = 0;
    lg_vit_forward(m, B, labels, NULL, &c);
    return c;
}

double lg_vit_accuracy(lg_vit *m, const lg_dataset *ds)
{
    return lg_batched_accuracy(m, m->max_batch, ds, lg_vit_batch_hits);
}

void lg_vit_step(lg_vit *m, const lg_optim_opts *o, long step)
{
    double lr = lg_optim_lr_at(o, step);
    const lg_act_info *ai = lg_act_info_of(m->act);
    for (int i = 0; i < m->n_ranges; i++) {
        const lg_vit_range *R = &m->ranges[i];
        if (R->n == 0) continue;
        if (R->act && (!ai || !ai->has_param || m->act_frozen)) continue;
        double r = R->act ? o->c * lr : lr;
        lg_optim_flat(o, m->params + R->off, m->grads + R->off, m->mom1 + R->off, m->mom2 + R->off, R->n, r, R->decay,
                      step);
        if (R->act && ai->softplus && !(m->params[R->off] >= LG_LAMBDA_FLOOR)) { /* clipped: no wind-up */
            m->params[R->off] = (float)LG_LAMBDA_FLOOR;
            m->mom1[R->off] = 0.0f;
        }
    }
}

static lg_status lg_vit_check_data(const lg_vit *m, const lg_dataset *ds, const char *what)
{
    if (!ds) return LG_OK;
    int n_in = m->spec.C * m->spec.H * m->spec.W;
    if (ds->dim != n_in)
        return lg_fail(LG_ERR_ARG, "%s data has %d features but the ViT takes %d inputs", what, ds->dim, n_in);
    for (size_t i = 0; i < ds->n; i++)
        if (ds->y[i] >= m->spec.n_out)
            return lg_fail(LG_ERR_ARG, "%s example %zu has label %d but the ViT has %d outputs", what, i,
                           (int)ds->y[i], m->spec.n_out);
    return LG_OK;
}

lg_status lg_vit_train(lg_vit *m, const lg_dataset *train, const lg_dataset *test, const lg_train_opts *o,
                       lg_vit_hook_fn hook, void *ctx, lg_train_result *res)
{
    lg_train_result r = {0, 0.0, 0.0, -1.0, -1.0, 0.0, 0.0, 0.0};
    if (o->epochs < 1 || o->batch < 1 || o->batch > m->max_batch || o->threads < 1 || !(o->optim.lr > 0))
        return lg_fail(LG_ERR_ARG, "ViT training needs epochs ≥ 1, 1 ≤ batch ≤ %d, threads ≥ 1 and lr > 0",
                       m->max_batch);
    if (train->n == 0 || train->n > UINT32_MAX) return lg_fail(LG_ERR_ARG, "training set has %zu examples", train->n);
    lg_status st;
    if ((st = lg_vit_check_data(m, train, "training")) != LG_OK) return st;
    if ((st = lg_vit_check_data(m, test, "test")) != LG_OK) return st;
    uint32_t *perm = malloc(train->n * sizeof *perm);
    uint8_t *lab = malloc((size_t)o->batch);
    if (!perm || !lab) {
        free(perm);
        free(lab);
        return lg_fail(LG_ERR_NOMEM, "cannot allocate a permutation of %zu examples", train->n);
    }
    FILE *csv = NULL;
    if (o->log_path) {
        if (!(csv = fopen(o->log_path, "w"))) {
            free(perm);
            free(lab);
            return lg_fail(LG_ERR_IO, "cannot open the log file '%s' for writing", o->log_path);
        }
        fprintf(csv, "epoch,step,loss,train_acc,test_acc");
        for (int l = 0; l < m->spec.depth; l++) fprintf(csv, ",lambda_%d", l);
        fprintf(csv, ",samples_per_s\n");
    }
    lg_blas_set_threads(o->threads);
    lg_rng rng;
    lg_rng_init(&rng, o->seed, 2);
    for (size_t i = 0; i < train->n; i++) perm[i] = (uint32_t)i;
    long per_epoch = (long)((train->n + (size_t)o->batch - 1) / (size_t)o->batch), step = 0;
    lg_optim_opts oo = o->optim; /* the run's length, for a cosine decay */
    oo.total = per_epoch * o->epochs;
    for (int e = 1; e <= o->epochs; e++) {
        lg_rng_shuffle(&rng, perm, train->n);
        double sum_loss = 0.0, t0 = lg_now();
        clock_t c0 = clock();
        size_t hits = 0;
        for (long b = 0; b < per_epoch; b++, step++) {
            size_t s0 = (size_t)b * (size_t)o->batch;
            int B = (int)(train->n - s0 < (size_t)o->batch ? train->n - s0 : (size_t)o->batch);
            for (int i = 0; i < B; i++) lab[i] = train->y[perm[s0 + (size_t)i]];
            if (hook) hook(ctx, m, step, oo.total);
            lg_vit_gather(m, train->x, perm + s0, B);
            double loss = 0.0;
            int c = 0;
            lg_vit_forward(m, B, lab, &loss, &c);
            if (!isfinite(loss)) {
                st = lg_fail(LG_ERR_NUMERIC, "training diverged: loss is not finite at step %ld (epoch %d); try a "
                                             "smaller --lr or a longer --warmup", step + 1, e);
                goto done;
            }
            sum_loss += loss * B;
            hits += (size_t)c;
            lg_vit_zero_grad(m);
            lg_vit_backward(m, B, lab);
            lg_vit_step(m, &oo, step + 1);
        }
        double dt = lg_now() - t0, dc = (double)(clock() - c0) / CLOCKS_PER_SEC;
        if (!lg_vit_finite(m)) {
            st = lg_fail(LG_ERR_NUMERIC, "training diverged: non-finite parameters after epoch %d", e);
            goto done;
        }
        r.steps = step;
        r.loss = sum_loss / (double)train->n;
        r.train_acc = (double)hits / (double)train->n;
        r.samples_per_s = dt > 0 ? (double)train->n / dt : 0.0;
        if (test) r.test_acc = lg_vit_accuracy(m, test);
        if (o->out) {
            fprintf(o->out, "epoch %d/%d  step %ld  loss %.4f  train %.2f%%", e, o->epochs, step, r.loss,
                    100.0 * r.train_acc);
            if (r.test_acc >= 0) fprintf(o->out, "  test %.2f%%", 100.0 * r.test_acc);
            const lg_act_info *ai = lg_act_info_of(m->act);
            if (ai && ai->param_sym) {
                fprintf(o->out, "  %s", ai->param_sym);
                for (int l = 0; l < m->spec.depth; l++) fprintf(o->out, " %.4g", lg_vit_act_param(m, l));
            }
            fprintf(o->out, "  %.0f samples/s (%.0f per CPU second)\n", r.samples_per_s,
                    dc > 0 ? (double)train->n / dc : 0.0);
            fflush(o->out);
        }
        if (csv) {
            fprintf(csv, "%d,%ld,%.6f,%.6f,%.6f", e, step, r.loss, r.train_acc, r.test_acc);
            for (int l = 0; l < m->spec.depth; l++) fprintf(csv, ",%.9g", lg_vit_act_param(m, l));
            fprintf(csv, ",%.1f\n", r.samples_per_s);
            fflush(csv);
        }
    }
    st = LG_OK;
    if (res) *res = r;
done:
    if (csv && fclose(csv) != 0 && st == LG_OK) st = lg_fail(LG_ERR_IO, "cannot write the log file '%s'", o->log_path);
    free(perm);
    free(lab);
    return st;
}
