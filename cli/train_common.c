/* train_common.c — option handling and the run/report/write sequence shared
 * by `lgelu train` and `lgelu anneal`. */
#include "cli/train_common.h"
#include "core/eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "core/netfile.h"
#include "core/npy.h"

void lg_cli_train_defaults(lg_cli_train *ct)
{
    memset(ct, 0, sizeof *ct);
    ct->tr = lg_train_opts_default();
    ct->dir = LG_DATA_DEFAULT_DIR;
    ct->t = 0.1;
    ct->anneal_start = 1.0;
    ct->lambda_target = lg_anneal_lambda_target(LG_ANNEAL_DEFAULT_TOLERANCE);
}

void lg_cli_train_free(lg_cli_train *ct)
{
    lg_dataset_free(&ct->train);
    lg_dataset_free(&ct->val_ds);
    lg_dataset_free(&ct->test);
}

int lg_cli_train_option(const char *cmd, lg_cli_train *ct, int c, const char *arg)
{
    long v;
    double d;
    lg_train_opts *o = &ct->tr;
    switch (c) {
    case LG_OPT_DATA: ct->dir = arg; return 0;
    case 'o': ct->out = arg; return 0;
    case LG_OPT_LOG: o->log_path = arg; return 0;
    case LG_OPT_EPOCHS:
        if (lg_opt_int(cmd, "epochs", arg, 1, 100000, &v)) return -1;
        o->epochs = (int)v, ct->epochs_set = 1;
        return 0;
    case LG_OPT_BATCH:
        if (lg_opt_int(cmd, "batch", arg, 1, 65536, &v)) return -1;
        o->batch = (int)v;
        return 0;
    case LG_OPT_THREADS:
        if (lg_opt_int(cmd, "threads", arg, 1, 256, &v)) return -1;
        o->threads = (int)v;
        return 0;
    case LG_OPT_SEED:
        if (lg_opt_int(cmd, "seed", arg, 0, 2147483647L, &v)) return -1;
        o->seed = (uint64_t)v;
        return 0;
    case LG_OPT_VAL:
        if (lg_opt_int(cmd, "val", arg, 0, 100000000L, &ct->val)) return -1;
        return 0;
    case LG_OPT_SUBSET:
        if (lg_opt_int(cmd, "subset", arg, 1, 100000000L, &ct->subset)) return -1;
        return 0;
    case LG_OPT_LR:
        if (lg_opt_double(cmd, "lr", arg, 1e-12, 1e300, &o->optim.lr)) return -1;
        return 0;
    case LG_OPT_MOMENTUM:
        if (lg_opt_double(cmd, "momentum", arg, 0.0, 0.999999, &o->optim.momentum)) return -1;
        return 0;
    case LG_OPT_WD:
        if (lg_opt_double(cmd, "wd", arg, 0.0, 10.0, &o->optim.wd)) return -1;
        ct->wd_set = 1;
        return 0;
    case LG_OPT_C:
        if (lg_opt_double(cmd, "c", arg, 0.0, 1e6, &o->optim.c)) return -1;
        return 0;
    case LG_OPT_T:
        if (lg_opt_double(cmd, "t", arg, 1e-6, 1e6, &ct->t)) return -1;
        return 0;
    case LG_OPT_OPT:
        if (lg_optim_parse(arg, &o->optim.kind) != 0) {
            fprintf(stderr, "lgelu %s: --opt: expected 'sgd' or 'adamw', got '%s'\n", cmd, arg);
            return -1;
        }
        return 0;
    case LG_OPT_S_UPDATE:
        if (lg_s_update_parse(arg, &o->optim.s_update) != 0) {
            fprintf(stderr, "lgelu %s: --s-update: expected 's' or 'lambda', got '%s'\n", cmd, arg);
            return -1;
        }
        return 0;
    case LG_OPT_RS:
        if (lg_opt_double(cmd, "rs", arg, 0.0, 1e6, &o->rs_weight)) return -1;
        return 0;
    case LG_OPT_RS_EPS:
        if (lg_opt_double(cmd, "rs-eps", arg, 0.0, 1.0, &o->rs_eps)) return -1;
        return 0;
    case LG_OPT_ANNEAL_START:
        if (lg_opt_double(cmd, "anneal-start", arg, 1e-9, 1.0, &ct->anneal_start)) return -1;
        ct->anneal_set = 1;
        return 0;
    case LG_OPT_LAMBDA_TARGET:
        if (lg_opt_double(cmd, "lambda-target", arg, 1.0, 1e12, &ct->lambda_target)) return -1;
        ct->target_set = 1;
        return 0;
    case LG_OPT_TOLERANCE:
        if (lg_opt_double(cmd, "tolerance", arg, 1e-12, 0.7978845608, &d)) return -1;
        ct->lambda_target = lg_anneal_lambda_target(d);
        ct->tolerance_set = 1;
        return 0;
    }
    return 1;
}

int lg_cli_train_finish_args(const char *cmd, lg_cli_train *ct)
{
    if (!ct->epochs_set) return lg_cli_usage(cmd, "--epochs N is required");
    if (!ct->out) return lg_cli_usage(cmd, "-o NET (output file) is required");
    if (ct->target_set && ct->tolerance_set) return lg_cli_usage(cmd, "give --lambda-target or --tolerance, not both");
    if (ct->tr.optim.kind == LG_OPTIM_ADAMW && !ct->wd_set) ct->tr.optim.wd = 0.01;
    return 0;
}

lg_status lg_cli_train_load(lg_cli_train *ct, int n_in, const char *what)
{
    lg_status st;
    if ((st = lg_data_load_spec(&ct->train, ct->dir, "train")) != LG_OK) return st;
    if ((st = lg_dataset_fit(&ct->train, n_in, what, ct->dir)) != LG_OK) return st;
    if (ct->subset > 0) lg_dataset_truncate(&ct->train, (size_t)ct->subset);
    if (ct->val > 0) {
        if ((size_t)ct->val >= ct->train.n)
            return lg_fail(LG_ERR_ARG, "--val %ld leaves no training examples (%zu available)", ct->val, ct->train.n);
        if ((st = lg_dataset_split(&ct->train, &ct->val_ds, (size_t)ct->val)) != LG_OK) return st;
    }
    if ((st = lg_data_load_spec(&ct->test, ct->dir, "test")) != LG_OK) return st; /* X.npy,y.npy: the same pair */
    return lg_dataset_fit(&ct->test, n_in, what, ct->dir);
}

lg_status lg_cli_train_run(const char *cmd, lg_cli_train *ct, lg_net *net, int anneal)
{
    lg_status st;
    ct->tr.out = stdout;
    ct->tr.progress = lg_cli_progress_enabled();
    if (anneal) {
        if ((st = lg_anneal_schedule_init(&ct->sched, ct->anneal_start, ct->lambda_target, net->n_layers)) != LG_OK)
            return st;
        ct->tr.hook = lg_anneal_hook;
        ct->tr.hook_ctx = &ct->sched;
        if (ct->anneal_start > 0)
            printf("annealing: λ learned for the first %.3g of the steps, then linear to λ_target = %.6g\n",
                   ct->anneal_start, ct->lambda_target);
        for (int k = 0; k < net->n_layers; k++)
            if (net->layers[k].act == LG_ACT_SWISH || net->layers[k].act == LG_ACT_PRELU) {
                lg_act a = net->layers[k].act;
                printf("annealing: %s layers move to %s = %.6g\n", lg_act_name(a), a == LG_ACT_SWISH ? "β" : "slope",
                       lg_anneal_target_for(a, ct->lambda_target));
                break;
            }
        else
            printf("annealing: every λ moves linearly from its current value to λ_target = %.6g\n", ct->lambda_target);
    }
    const lg_optim_opts *op = &ct->tr.optim;
    printf("%s: %zu training examples%s, batch %d, %s lr %g", cmd, ct->train.n, ct->val_ds.n ? " (+ validation)" : "",
           ct->tr.batch, op->kind == LG_OPTIM_SGD ? "sgd" : "adamw", op->lr);
    if (op->kind == LG_OPTIM_SGD) printf(" momentum %g", op->momentum);
    printf(" wd %g, t %g, c %g, s-update %s, seed %llu, threads %d", op->wd, net->t, op->c,
           op->s_update == LG_S_UPDATE_LAMBDA ? "lambda" : "s", (unsigned long long)ct->tr.seed, ct->tr.threads);
    if (ct->init_name) printf(", init %s", ct->init_name);
    if (ct->tr.rs_weight > 0) printf(", RS loss weight %g on the eps-ball %g", ct->tr.rs_weight, ct->tr.rs_eps);
    printf("\n");
    fflush(stdout);
    lg_train_result res;
    if ((st = lg_train_run(net, &ct->train, ct->val_ds.n ? &ct->val_ds : NULL, &ct->test, &ct->tr, &res)) != LG_OK)
        return st;
    double acc = 0.0;
    if ((st = lg_eval_accuracy(net, &ct->test, &acc)) != LG_OK) return st;
    printf("final test accuracy: %.2f%% (%zu examples, double precision)\n", 100.0 * acc, ct->test.n);
    if (res.val_acc >= 0) printf("final validation accuracy: %.2f%%\n", 100.0 * res.val_acc);
    printf("λ per hidden layer:");
    for (int k = 0; k + 1 < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->act == LG_ACT_RELU || L->act == LG_ACT_SIGMOID) printf(" %s", lg_act_name(L->act));
        else printf(" %s %.6g", lg_act_name(L->act), L->lambda);
    }
    printf("\n");
    if ((st = lg_netfile_write(net, ct->out)) != LG_OK) return st;
    printf("wrote %s\n", ct->out);
    return LG_OK;
}
