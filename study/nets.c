/* nets.c — train or reuse the study's networks (nets.h). */
#include "study/nets.h"

#include "core/arch.h"
#include "core/clock.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "anneal/deviation.h"
#include "train/init.h"
#include "anneal/relu.h"
#include "anneal/schedule.h"
#include "core/act.h"
#include "core/atomic_file.h"
#include "core/eval.h"
#include "core/netfile.h"
#include "core/version.h"
#include "study/results.h"
#include "train/loop.h"
#include "train/model.h"
#include "train/vit.h"
#include "train/vit_fit.h"
#include "train/vit_net.h"
#include "train/vit_train.h"
#include "core/arch_vit.h"


void lg_study_net_free(lg_study_net *n)
{
    lg_net_free(&n->net);
    lg_net_free(&n->relu);
    json_decref(n->lambda_log);
    memset(n, 0, sizeof *n);
}

/* Read a training log CSV: rows [epoch + offset, λ_0, ...] appended to arr. */
static void lg_nets_read_log(const char *path, json_t *arr, double offset)
{
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[4096];
    int lcol[LG_STUDY_MAX_DIMS], nl = 0;
    if (fgets(line, sizeof line, f)) {
        int col = 0;
        for (char *t = strtok(line, ",\n"); t; t = strtok(NULL, ",\n"), col++)
            if (strncmp(t, "lambda_", 7) == 0 && nl < LG_STUDY_MAX_DIMS) lcol[nl++] = col;
    }
    while (fgets(line, sizeof line, f)) {
        double v[64];
        int nv = 0;
        for (char *t = strtok(line, ",\n"); t && nv < 64; t = strtok(NULL, ",\n")) v[nv++] = strtod(t, NULL);
        json_t *row = json_array();
        json_array_append_new(row, json_real(v[0] + offset));
        for (int k = 0; k < nl; k++) json_array_append_new(row, json_real(lcol[k] < nv ? v[lcol[k]] : 0.0));
        json_array_append_new(arr, row);
    }
    fclose(f);
}

/* A ViT (train/vit_net.h) in place: read back (exact), trained as its graph by
 * train/vit_fit.h with o (anneal as lg_nets_train, the schedule over its blocks), written
 * back as a net. The RS loss is not available for a ViT. */
static lg_status lg_nets_train_vit(lg_net *net, const lg_study_train *tr, const lg_train_opts *o, int anneal,
                                   const lg_dataset *train, const lg_dataset *test)
{
    if (tr->rs > 0)
        return lg_fail(LG_ERR_ARG, "the RS loss is not available for a ViT (leave the regime out with "
                       "[arch NAME] regimes)");
    lg_vit m;
    lg_status st = lg_net_to_vit(net, &m, o->batch, "the study's ViT");
    if (st != LG_OK) return st;
    lg_anneal_schedule sched;
    if (anneal && (st = lg_anneal_schedule_init(&sched, anneal == 2 ? 0.0 : tr->anneal_start, tr->lambda_target,
                                                m.spec.depth)) != LG_OK)
        goto done;
    lg_train_opts vo = *o;
    vo.hook = anneal ? lg_anneal_hook : NULL;
    vo.hook_ctx = &sched;
    lg_train_result res;
    if ((st = lg_vit_fit(&m, train, test, &vo, &res)) != LG_OK) goto done;
    lg_net out;
    if ((st = lg_vit_to_net(&m, &out)) != LG_OK) goto done;
    lg_net_free(net);
    *net = out;
done:
    lg_vit_free(&m);
    return st;
}

/* Train net in place with tr (anneal: 0 none, 1 during training from anneal_start, 2 post-hoc from the start). */
static lg_status lg_nets_train(lg_net *net, const lg_study_train *tr, int epochs, int anneal, uint64_t seed,
                               const char *log_path, const lg_dataset *train, const lg_dataset *test)
{
    lg_train_opts o = lg_train_opts_default();
    o.epochs = epochs;
    o.batch = tr->batch;
    o.threads = tr->threads;
    o.seed = seed;
    o.log_path = log_path;
    o.rs_weight = tr->rs;
    o.rs_eps = tr->rs_eps;
    if (lg_optim_parse(tr->opt, &o.optim.kind) != 0) return lg_fail(LG_ERR_ARG, "unknown optimiser '%s'", tr->opt);
    o.optim.lr = tr->lr;
    o.optim.momentum = tr->momentum;
    o.optim.wd = tr->wd;
    o.optim.c = tr->c;
    lg_anneal_schedule sched;
    if (anneal) {
        lg_status st = lg_anneal_schedule_init(&sched, anneal == 2 ? 0.0 : tr->anneal_start, tr->lambda_target,
                                               net->n_layers);
        if (st != LG_OK) return st;
        o.hook = lg_anneal_hook;
        o.hook_ctx = &sched;
    }
    lg_dataset view = *train; /* a borrowed view: --subset without a copy */
    if (tr->subset > 0 && (size_t)tr->subset < view.n) view.n = (size_t)tr->subset;
    if (lg_net_has_tnode(net)) return lg_nets_train_vit(net, tr, &o, anneal, &view, test);
    return lg_train_run(net, &view, NULL, test, &o, NULL);
}

/* Train (or load) the smooth network for options tr into n->net; log rows into n->lambda_log. */
static lg_status lg_nets_obtain(lg_study_net *n, const char *cache, const lg_study_train *tr, const lg_study_arch *a,
                                long seed, const lg_dataset *train, const lg_dataset *test)
{
    char path[4096], tmp[4200], log[4096], logtmp[4200];
    uint64_t h = lg_study_train_hash(tr, a, seed);
    snprintf(path, sizeof path, "%s/%016" PRIx64 ".lgnet", cache, h);
    snprintf(log, sizeof log, "%s/%016" PRIx64 ".csv", cache, h);
    static atomic_long seq; /* unique temporary names across threads and processes */
    long q = atomic_fetch_add(&seq, 1);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%ld", path, (long)getpid(), q);
    snprintf(logtmp, sizeof logtmp, "%s.tmp.%ld.%ld", log, (long)getpid(), q);
    if (access(path, R_OK) == 0) {
        n->cached = 1;
        lg_status st = lg_netfile_read(&n->net, path);
        if (st != LG_OK) return st;
        if (tr->anneal_epochs > 0) { /* the base network's log first */
            lg_study_train base = *tr;
            base.anneal_epochs = 0;
            char blog[4096];
            snprintf(blog, sizeof blog, "%s/%016" PRIx64 ".csv", cache, lg_study_train_hash(&base, a, seed));
            lg_nets_read_log(blog, n->lambda_log, 0.0);
        }
        lg_nets_read_log(log, n->lambda_log, tr->anneal_epochs > 0 ? tr->epochs : 0.0);
        return LG_OK;
    }
    lg_status st;
    double t0 = lg_now();
    double offset = 0.0;
    if (tr->anneal_epochs > 0) {
        /* the post-hoc route: the base network (normally the plain regime's cached net), then `lgelu anneal` */
        lg_study_train base = *tr;
        base.anneal_epochs = 0;
        if ((st = lg_nets_obtain(n, cache, &base, a, seed, train, test)) != LG_OK) return st;
        if ((st = lg_anneal_prepare_net(&n->net, "base network")) != LG_OK) return st;
        offset = tr->epochs;
        n->cached = 0;
        st = lg_nets_train(&n->net, tr, tr->anneal_epochs, 2, (uint64_t)seed, logtmp, train, test);
    } else {
        lg_act act;
        if (lg_act_parse(tr->act, &act) != 0) return lg_fail(LG_ERR_ARG, "unknown activation '%s'", tr->act);
        if (lg_arch_is_vit(a->name)) { /* a ViT: its own initialisation (train/vit.h), as a net */
            lg_vit_spec sp;
            lg_vit m;
            if ((st = lg_arch_vit_parse(&sp, a->name)) != LG_OK) return st;
            if ((st = lg_vit_init(&m, &sp, act, tr->batch)) != LG_OK) return st;
            lg_vit_init_weights(&m, (uint64_t)seed);
            st = lg_vit_to_net(&m, &n->net);
            lg_vit_free(&m);
            if (st != LG_OK) return st;
        } else {
            if ((st = lg_arch_net(&n->net, a->name, act)) != LG_OK) return st;
            n->net.t = tr->t;
            lg_init_kind kind = LG_INIT_HE;
            if (lg_init_parse(tr->init, &kind) != 0)
                return lg_fail(LG_ERR_ARG, "unknown initialisation '%s'", tr->init);
            lg_init_weights(&n->net, (uint64_t)seed, kind);
        }
        st = lg_nets_train(&n->net, tr, tr->epochs, tr->anneal_start < 1.0, (uint64_t)seed, logtmp, train, test);
    }
    if (st != LG_OK) goto fail;
    n->train_seconds += lg_now() - t0;
    if ((st = lg_netfile_write(&n->net, tmp)) != LG_OK) goto fail;
    if ((st = lg_atomic_publish(logtmp, log)) != LG_OK) goto fail;
    if ((st = lg_atomic_publish(tmp, path)) != LG_OK) goto fail;
    lg_nets_read_log(log, n->lambda_log, offset);
    return LG_OK;
fail:
    unlink(tmp);
    unlink(logtmp);
    return st;
}

lg_status lg_study_net_get(lg_study_net *n, const char *cache_dir, const lg_study_regime *r,
                           const lg_study_arch *a, long seed, const lg_dataset *train, const lg_dataset *test)
{
    memset(n, 0, sizeof *n);
    if (test->dim != a->dims[0])
        return lg_fail(LG_ERR_ARG, "architecture %s has %d inputs but the data has %d features", a->name, a->dims[0],
                       test->dim);
    n->hash = lg_study_train_hash(&r->tr, a, seed);
    n->lambda_log = json_array();
    if (!n->lambda_log) return lg_fail(LG_ERR_NOMEM, "out of memory");
    lg_status st = lg_nets_obtain(n, cache_dir, &r->tr, a, seed, train, test);
    if (st != LG_OK) goto fail;
    n->smooth = lg_anneal_count_smooth(&n->net) > 0;
    if ((st = n->smooth ? lg_anneal_to_relu(&n->relu, &n->net) : lg_net_copy(&n->relu, &n->net)) != LG_OK) goto fail;
    if ((st = lg_eval_accuracy(&n->net, test, &n->acc_before)) != LG_OK) goto fail;
    if ((st = lg_eval_accuracy(&n->relu, test, &n->acc_after)) != LG_OK) goto fail;
    if (n->smooth) {
        lg_dev d;
        if ((st = lg_dev_init(&d, &n->relu, &n->net)) != LG_OK) goto fail;
        st = lg_dev_bound_global(&d, 0.0, 1.0, &n->delta_global, NULL, NULL);
        lg_dev_free(&d);
        if (st != LG_OK) goto fail;
    }
    return LG_OK;
fail:
    lg_study_net_free(n);
    return st;
}

json_t *lg_study_net_json(const lg_study_net *n, const lg_study_regime *r, const lg_study_arch *a, long seed)
{
    char key[256], hex[17];
    lg_study_key_net(key, sizeof key, r->name, a->name, seed, n->hash);
    snprintf(hex, sizeof hex, "%016" PRIx64, n->hash);
    json_t *lam = json_array();
    for (int k = 0; k + 1 < n->net.n_layers; k++) {
        lg_act act = n->net.layers[k].act;
        json_array_append_new(lam, lg_act_relu_like(act)
                                       ? json_real(n->net.layers[k].lambda)
                                                                              : json_null());
    }
    const lg_study_train *t = &r->tr;
    json_t *tr = json_pack("{s:s, s:f, s:f, s:i, s:i, s:i, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:I, s:i, s:f, s:f}", "act",
                           t->act, "anneal_start", t->anneal_start, "lambda_target", t->lambda_target,
                           "anneal_epochs", t->anneal_epochs, "epochs", t->epochs, "batch", t->batch, "opt", t->opt,
                           "init", t->init,
                           "lr", t->lr, "momentum", t->momentum, "wd", t->wd, "t", t->t, "c", t->c, "subset",
                           (json_int_t)t->subset, "threads", t->threads, "rs", t->rs, "rs_eps", t->rs_eps);
    return json_pack("{s:s, s:s, s:s, s:I, s:s, s:f, s:f, s:f, s:b, s:o, s:O, s:o, s:f, s:s, s:s}", "key", key,
                     "regime", r->name, "arch", a->name, "seed", (json_int_t)seed, "hash", hex, "acc_before",
                     n->acc_before, "acc_after", n->acc_after, "delta_global", n->delta_global, "smooth", n->smooth,
                     "lambda_final", lam, "lambda_log", n->lambda_log, "train", tr, "train_seconds",
                     n->train_seconds, "version", lg_version(), "commit", lg_commit());
}
