/* loop.c — mini-batch training with seeded shuffling, hook, logging and a
 * NaN/Inf guard. */
#include "train/loop.h"
#include "core/csv.h"
#include "core/clock.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/linalg.h"
#include "core/rng.h"
#include "train/rs.h"

lg_train_opts lg_train_opts_default(void)
{
    lg_train_opts o;
    memset(&o, 0, sizeof o);
    o.epochs = 10;
    o.batch = 128;
    o.optim = lg_optim_opts_default();
    o.seed = 1;
    o.threads = 1;
    o.rs_eps = 0.03;
    return o;
}


double lg_batched_accuracy(void *model, int max_batch, const lg_dataset *ds, lg_batch_hits_fn hits_of)
{
    if (ds->n == 0) return 0.0;
    uint32_t *idx = malloc((size_t)max_batch * sizeof *idx);
    if (!idx) return -1.0;
    size_t hits = 0;
    for (size_t s = 0; s < ds->n; s += (size_t)max_batch) {
        int B = (int)(ds->n - s < (size_t)max_batch ? ds->n - s : (size_t)max_batch);
        for (int r = 0; r < B; r++) idx[r] = (uint32_t)(s + (size_t)r);
        hits += (size_t)hits_of(model, ds->x, idx, B, ds->y + s);
    }
    free(idx);
    return (double)hits / (double)ds->n;
}

static int lg_model_batch_hits(void *model, const float *X, const uint32_t *idx, int B, const uint8_t *labels)
{
    lg_model *m = model;
    lg_model_gather(m, X, idx, B);
    int c = 0;
    lg_model_forward(m, B, labels, NULL, &c);
    return c;
}

double lg_model_accuracy(lg_model *m, const lg_dataset *ds)
{
    return lg_batched_accuracy(m, m->max_batch, ds, lg_model_batch_hits);
}

static lg_status lg_train_check_data(const lg_model *m, const lg_dataset *ds, const char *what)
{
    if (!ds) return LG_OK;
    int C = m->layers[m->n_layers - 1].n_out;
    if (ds->dim != m->n_in)
        return lg_fail(LG_ERR_ARG, "%s data has %d features but the network takes %d inputs", what, ds->dim, m->n_in);
    for (size_t i = 0; i < ds->n; i++)
        if (ds->y[i] >= C)
            return lg_fail(LG_ERR_ARG, "%s example %zu has label %d but the network has %d outputs", what, i,
                           (int)ds->y[i], C);
    return LG_OK;
}

/* Progress on stderr: a bar redrawn in place (mode 1, a terminal) or, for
 * logs (mode 2), one line at most every 10 s and at the end of each epoch;
 * both with the time elapsed since t_start and the ETA of the whole run. */
static void lg_train_progress(int mode, int epoch, int epochs, long done, long per_epoch, double t_start,
                              double *t_last)
{
    double now = lg_now(), el = now - t_start;
    double frac = ((double)(epoch - 1) * (double)per_epoch + (double)done) / ((double)epochs * (double)per_epoch);
    double eta = frac > 0 ? el * (1.0 - frac) / frac : 0.0;
    if (mode == 2) {
        if (done < per_epoch && now - *t_last < 10.0) return;
        *t_last = now;
        fprintf(stderr, "train: epoch %d/%d, step %ld/%ld (%3.0f%% of the run), %.0f s elapsed, ETA %.0f s\n", epoch,
                epochs, done, per_epoch, 100.0 * frac, el, eta);
        fflush(stderr);
        return;
    }
    int width = 30, fill = (int)((double)width * (double)done / (double)per_epoch);
    fprintf(stderr, "\r  epoch %d/%d [", epoch, epochs);
    for (int i = 0; i < width; i++) fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %3d%%  ETA %.0f s ", (int)(100.0 * (double)done / (double)per_epoch), eta);
    fflush(stderr);
}

static void lg_train_report(const lg_train_opts *o, FILE *csv, const lg_model *m, int epoch, long step,
                            const lg_train_result *r)
{
    int nh = m->n_layers - 1;
    if (o->out) {
        fprintf(o->out, "epoch %d/%d  step %ld  loss %.4f  train %.2f%%", epoch, o->epochs, step, r->loss,
                100.0 * r->train_acc);
        if (r->val_acc >= 0) fprintf(o->out, "  val %.2f%%", 100.0 * r->val_acc);
        if (r->test_acc >= 0) fprintf(o->out, "  test %.2f%%", 100.0 * r->test_acc);
        fprintf(o->out, "  λ");
        for (int k = 0; k < nh; k++) {
            const lg_act_info *ai = lg_act_info_of(m->layers[k].act);
            if (ai && ai->param_sym) fprintf(o->out, " %.4g", m->layers[k].lambda);
            else fprintf(o->out, " -");
        }
        if (o->rs_weight > 0) fprintf(o->out, "  rs %.4g unstable %.1f", r->rs_loss, r->rs_unstable);
        fprintf(o->out, "  %.0f samples/s\n", r->samples_per_s);
        fflush(o->out);
    }
    if (csv) {
        lg_csv_row row = {0};
        lg_csv_int(&row, epoch);
        lg_csv_int(&row, step);
        lg_csv_num(&row, r->loss);
        lg_csv_num(&row, r->train_acc);
        lg_csv_num(&row, r->test_acc);
        for (int k = 0; k < nh; k++) lg_csv_num(&row, m->layers[k].lambda);
        lg_csv_num(&row, r->samples_per_s);
        if (r->val_acc >= 0) lg_csv_num(&row, r->val_acc);
        if (o->rs_weight > 0) {
            lg_csv_num(&row, r->rs_loss);
            lg_csv_num(&row, r->rs_unstable);
        }
        if (lg_csv_end(&row)) fputs(row.s, csv);
        lg_csv_row_free(&row);
        fflush(csv);
    }
}

lg_status lg_train_run(lg_net *net, const lg_dataset *train, const lg_dataset *val, const lg_dataset *test,
                       const lg_train_opts *o, lg_train_result *res)
{
    lg_model m = {0};
    lg_rs rs = {0};
    uint32_t *perm = NULL;
    uint8_t *lab = NULL;
    FILE *csv = NULL;
    lg_status st = LG_OK;
    lg_train_result r = {0, 0.0, 0.0, -1.0, -1.0, 0.0, 0.0, 0.0};
    if (o->epochs < 1 || o->batch < 1 || o->threads < 1 || !(o->optim.lr > 0) || !isfinite(o->optim.lr))
        return lg_fail(LG_ERR_ARG, "training needs epochs ≥ 1, batch ≥ 1, threads ≥ 1 and lr > 0");
    if (!(o->rs_weight >= 0) || !isfinite(o->rs_weight) || (o->rs_weight > 0 && !(o->rs_eps >= 0 && o->rs_eps <= 1)))
        return lg_fail(LG_ERR_ARG, "the RS loss needs a weight ≥ 0 and a radius in [0, 1]");
    if (train->n == 0 || train->n > UINT32_MAX) return lg_fail(LG_ERR_ARG, "training set has %zu examples", train->n);
    if ((st = lg_model_init(&m, net, o->batch)) != LG_OK) return st;
    if ((st = lg_train_check_data(&m, train, "training")) != LG_OK) goto fail;
    if ((st = lg_train_check_data(&m, val, "validation")) != LG_OK) goto fail;
    if ((st = lg_train_check_data(&m, test, "test")) != LG_OK) goto fail;
    if (o->rs_weight > 0 && (st = lg_rs_init(&rs, &m)) != LG_OK) goto fail;
    perm = malloc(train->n * sizeof *perm);
    lab = malloc((size_t)o->batch);
    if (!perm || !lab) {
        st = lg_fail(LG_ERR_NOMEM, "cannot allocate a permutation of %zu examples", train->n);
        goto fail;
    }
    if (o->log_path) {
        if (!(csv = fopen(o->log_path, "w"))) {
            st = lg_fail(LG_ERR_IO, "%s: cannot open the log file for writing", o->log_path);
            goto fail;
        }
        fprintf(csv, "epoch,step,loss,train_acc,test_acc");
        for (int k = 0; k + 1 < m.n_layers; k++) fprintf(csv, ",lambda_%d", k);
        fprintf(csv, ",samples_per_s%s%s\n", val ? ",val_acc" : "", o->rs_weight > 0 ? ",rs_loss,rs_unstable" : "");
    }
    lg_blas_set_threads(o->threads);
    lg_rng rng;
    lg_rng_init(&rng, o->seed, 2);
    for (size_t i = 0; i < train->n; i++) perm[i] = (uint32_t)i;
    long per_epoch = (long)((train->n + (size_t)o->batch - 1) / (size_t)o->batch);
    double t_run = lg_now(), t_last = 0.0;
    long total = per_epoch * o->epochs, step = 0;
    lg_optim_opts oo = o->optim; /* the run's length, for a cosine decay */
    oo.total = total;
    for (int e = 1; e <= o->epochs; e++) {
        lg_rng_shuffle(&rng, perm, train->n);
        double sum_loss = 0.0, sum_rs = 0.0, t0 = lg_now();
        long sum_unst = 0;
        size_t hits = 0;
        for (long b = 0; b < per_epoch; b++, step++) {
            size_t s0 = (size_t)b * (size_t)o->batch;
            int B = (int)(train->n - s0 < (size_t)o->batch ? train->n - s0 : (size_t)o->batch);
            for (int i = 0; i < B; i++) lab[i] = train->y[perm[s0 + (size_t)i]];
            if (o->hook) o->hook(o->hook_ctx, &m, step, total);
            lg_model_gather(&m, train->x, perm + s0, B);
            double loss = 0.0;
            int c = 0;
            lg_model_forward(&m, B, lab, &loss, &c);
            if (!isfinite(loss)) {
                st = lg_fail(LG_ERR_NUMERIC,
                             "training diverged: loss is %s at step %ld (epoch %d); try a smaller --lr; "
                             "nothing written",
                             isnan(loss) ? "NaN" : "infinite", step + 1, e);
                goto fail;
            }
            sum_loss += loss * B;
            hits += (size_t)c;
            lg_model_zero_grad(&m);
            lg_model_backward(&m, B, lab);
            if (o->rs_weight > 0) {
                long un = 0;
                double l = lg_rs_loss(&rs, &m, B, o->rs_eps, o->rs_weight, 1, &un);
                if (!isfinite(l)) {
                    st = lg_fail(LG_ERR_NUMERIC, "training diverged: RS loss is not finite at step %ld; nothing written",
                                 step + 1);
                    goto fail;
                }
                sum_rs += l * B;
                sum_unst += un;
            }
            lg_optim_step(&m, &oo, step + 1);
            if (o->progress && (b % 16 == 0 || b + 1 == per_epoch))
                lg_train_progress(o->progress, e, o->epochs, b + 1, per_epoch, t_run, &t_last);
        }
        double dt = lg_now() - t0;
        if (o->progress == 1) fprintf(stderr, "\r%72s\r", "");
        if (!lg_model_finite(&m)) {
            st = lg_fail(LG_ERR_NUMERIC, "training diverged: non-finite parameters after epoch %d; try a smaller --lr; "
                                         "nothing written", e);
            goto fail;
        }
        r.steps = step;
        r.loss = sum_loss / (double)train->n;
        r.train_acc = (double)hits / (double)train->n;
        r.samples_per_s = dt > 0 ? (double)train->n / dt : 0.0;
        r.rs_loss = sum_rs / (double)train->n;
        r.rs_unstable = (double)sum_unst / (double)train->n;
        if (val) r.val_acc = lg_model_accuracy(&m, val);
        if (test) r.test_acc = lg_model_accuracy(&m, test);
        lg_train_report(o, csv, &m, e, step, &r);
    }
    if (csv && fclose(csv) != 0) {
        csv = NULL;
        st = lg_fail(LG_ERR_IO, "%s: error while writing the log file", o->log_path);
        goto fail;
    }
    csv = NULL;
    if ((st = lg_model_to_net(&m, net)) != LG_OK) goto fail;
    if (res) *res = r;
fail:
    if (csv) fclose(csv);
    free(perm);
    free(lab);
    lg_rs_free(&rs);
    lg_model_free(&m);
    return st;
}
