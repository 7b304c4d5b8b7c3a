/* train_common.c — option handling and the run/report/write sequence shared
 * by `lgelu train` and `lgelu anneal`. */
#include "cli/train_common.h"
#include "core/eval.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "anneal/relu.h"
#include "cli/cmd.h"
#include "core/netfile.h"
#include "core/npy.h"
#include "train/options.h"
#include "train/vit_fit.h"
#include "train/vit_net.h"
#include "train/vit_train.h"

void lg_cli_train_defaults(lg_cli_train *ct)
{
    memset(ct, 0, sizeof *ct);
    ct->tr = lg_train_opts_default();
    ct->dir = LG_DATA_DEFAULT_DIR;
    ct->t = 0.1;
    ct->anneal_start = 1.0;
    ct->lambda_target = lg_anneal_lambda_target(LG_ANNEAL_DEFAULT_TOLERANCE);
}

void lg_cli_train_help_common(int with_t_c)
{
    lg_cli_train d;
    lg_cli_train_defaults(&d);
    const lg_optim_opts *op = &d.tr.optim;
    printf("  --batch B           mini-batch size (default %d)\n"
           "  --lr η              learning rate (default %g)\n"
           "  --momentum μ        SGD momentum (default %g)\n"
           "  --opt sgd|adamw     optimiser (default sgd); adamw uses β=(%g,%g), ε=%g\n"
           "  --wd W              weight decay on weights, not biases or s (default %g for sgd, where it\n"
           "                      is added to the gradient; 0.01 for adamw, where it is decoupled)\n"
           "  --warmup N          linear learning-rate warm-up over the first N steps (default 0: none)\n"
           "  --lr-schedule KIND  constant (the default) or cosine: after the warm-up the learning rate\n"
           "                      decays as η·(1 + cos(π·f))/2 to 0 at the last step (f: fraction done)\n",
           d.tr.batch, op->lr, op->momentum, op->beta1, op->beta2, op->eps, op->wd);
    if (with_t_c)
        printf("  --t T               temperature of λ = 1 + softplus(s/t) (default %g)\n"
               "  --c C               s learns with rate C·η (default %g)\n",
               d.t, op->c);
    printf("  --seed S            seed of initialisation and shuffling (default %llu)\n"
           "  --threads T         OpenBLAS threads (default %d)\n"
           "  --val N             hold out the last N training examples as a validation set\n"
           "  --subset N          train on the first N training examples only (0 = all, the default)\n"
           "  --progress          progress lines on stderr even when it is not a terminal (logs)\n",
           (unsigned long long)d.tr.seed, d.tr.threads);
}

void lg_cli_train_free(lg_cli_train *ct)
{
    lg_dataset_free(&ct->train);
    lg_dataset_free(&ct->val_ds);
    lg_dataset_free(&ct->test);
}

/* Parse a number and check it against the library's range (train/options.h). */
static int lg_cli_train_num(const char *cmd, const char *opt, const char *arg, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    const char *why = *arg == '\0' || *end != '\0' || errno ? "expected a number" : lg_train_opt_check(opt, v);
    if (why) {
        fprintf(stderr, "lgelu %s: --%s: %s, got '%s'\n", cmd, opt, why, arg);
        return -1;
    }
    *out = v;
    return 0;
}

int lg_cli_train_option(const char *cmd, lg_cli_train *ct, int c, const char *arg)
{
    double d;
    lg_train_opts *o = &ct->tr;
    switch (c) {
    case LG_OPT_DATA: ct->dir = arg; return 0;
    case LG_OPT_PROGRESS: lg_cli_progress_force(); return 0;
    case 'o': ct->out = arg; return 0;
    case LG_OPT_LOG: o->log_path = arg; return 0;
    case LG_OPT_EPOCHS:
        if (lg_cli_train_num(cmd, "epochs", arg, &d)) return -1;
        o->epochs = (int)d, ct->epochs_set = 1;
        return 0;
    case LG_OPT_BATCH:
        if (lg_cli_train_num(cmd, "batch", arg, &d)) return -1;
        o->batch = (int)d;
        return 0;
    case LG_OPT_THREADS:
        if (lg_cli_train_num(cmd, "threads", arg, &d)) return -1;
        o->threads = (int)d;
        return 0;
    case LG_OPT_SEED:
        if (lg_cli_train_num(cmd, "seed", arg, &d)) return -1;
        o->seed = (uint64_t)d;
        return 0;
    case LG_OPT_VAL:
        if (lg_cli_train_num(cmd, "val", arg, &d)) return -1;
        ct->val = (long)d;
        return 0;
    case LG_OPT_SUBSET:
        if (lg_cli_train_num(cmd, "subset", arg, &d)) return -1;
        ct->subset = (long)d;
        return 0;
    case LG_OPT_LR: return lg_cli_train_num(cmd, "lr", arg, &o->optim.lr);
    case LG_OPT_MOMENTUM: return lg_cli_train_num(cmd, "momentum", arg, &o->optim.momentum);
    case LG_OPT_WD:
        ct->wd_set = 1;
        return lg_cli_train_num(cmd, "wd", arg, &o->optim.wd);
    case LG_OPT_WARMUP:
        if (lg_cli_train_num(cmd, "warmup", arg, &d)) return -1;
        o->optim.warmup = (long)d;
        return 0;
    case LG_OPT_LR_SCHEDULE:
        if (strcmp(arg, "constant") != 0 && strcmp(arg, "cosine") != 0) {
            fprintf(stderr, "lgelu %s: --lr-schedule: expected 'constant' or 'cosine', got '%s'\n", cmd, arg);
            return -1;
        }
        o->optim.cosine = strcmp(arg, "cosine") == 0;
        return 0;
    case LG_OPT_C: return lg_cli_train_num(cmd, "c", arg, &o->optim.c);
    case LG_OPT_T: return lg_cli_train_num(cmd, "t", arg, &ct->t);
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
    case LG_OPT_RS: return lg_cli_train_num(cmd, "rs", arg, &o->rs_weight);
    case LG_OPT_RS_EPS: return lg_cli_train_num(cmd, "rs-eps", arg, &o->rs_eps);
    case LG_OPT_ANNEAL_START:
        if (lg_cli_train_num(cmd, "anneal-start", arg, &ct->anneal_start)) return -1;
        if (ct->anneal_start == 0) {
            fprintf(stderr, "lgelu %s: --anneal-start: expected a number in (0, 1], got '%s'\n", cmd, arg);
            return -1;
        }
        ct->anneal_set = 1;
        return 0;
    case LG_OPT_LAMBDA_TARGET:
        if (lg_cli_train_num(cmd, "lambda-target", arg, &ct->lambda_target)) return -1;
        ct->target_set = 1;
        return 0;
    case LG_OPT_TOLERANCE:
        if (lg_cli_train_num(cmd, "tolerance", arg, &d)) return -1;
        ct->lambda_target = lg_anneal_lambda_target(d);
        ct->tolerance_set = 1;
        return 0;
    }
    return 1;
}

int lg_cli_train_finish_args(const char *cmd, lg_cli_train *ct)
{
    if (!ct->epochs_set) return lg_cli_usage(cmd, "--epochs N is required");
    if (!ct->out && !ct->no_output) return lg_cli_usage(cmd, "-o/--output NET (output file) is required");
    /* fail now, not after hours of training */
    if (ct->out && lg_cli_check_output(ct->out) != LG_OK) return lg_cli_usage(cmd, "-o/--output: %s", lg_errmsg());
    if (ct->tr.log_path && lg_cli_check_output(ct->tr.log_path) != LG_OK)
        return lg_cli_usage(cmd, "--log: %s", lg_errmsg());
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
            return lg_fail(LG_ERR_ARG, "--val: expected an integer in [0, %zu] (%zu training examples), got %ld",
                           ct->train.n ? ct->train.n - 1 : 0, ct->train.n, ct->val);
        if ((st = lg_dataset_split(&ct->train, &ct->val_ds, (size_t)ct->val)) != LG_OK) return st;
    }
    if ((st = lg_data_load_spec(&ct->test, ct->dir, "test")) != LG_OK) return st; /* X.npy,y.npy: the same pair */
    return lg_dataset_fit(&ct->test, n_in, what, ct->dir);
}

lg_status lg_cli_train_run(const char *cmd, lg_cli_train *ct, lg_net *net, int anneal)
{
    lg_status st;
    ct->tr.out = stdout;
    ct->tr.progress = !lg_cli_progress_enabled() ? 0 : isatty(fileno(stderr)) ? 1 : 2;
    if (anneal) {
        if ((st = lg_anneal_schedule_init(&ct->sched, ct->anneal_start, ct->lambda_target, net->n_layers)) != LG_OK)
            return st;
        ct->tr.hook = lg_anneal_hook;
        ct->tr.hook_ctx = &ct->sched;
        if (ct->anneal_start > 0)
            printf("annealing: λ learned for the first %.3g of the steps, then linear to λ_target = %.6g\n",
                   ct->anneal_start, ct->lambda_target);
        int other = 0; /* the first kind annealed to a target other than λ_target itself says where it goes */
        for (int k = 0; k < net->n_layers && !other; k++) {
            lg_act a = net->layers[k].act;
            const lg_act_info *ai = lg_act_info_of(a);
            double target = lg_anneal_target_for(a, ct->lambda_target);
            if (ai->anneal_target && target != ct->lambda_target) {
                printf("annealing: %s layers move to %s = %.6g\n", ai->name, ai->param_sym, target);
                other = 1;
            }
        }
        if (!other && ct->anneal_start == 0)
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
    if (anneal) { /* what annealing is for: the accuracy of the ReLU net `lgelu relu` will make */
        lg_net rn;
        double racc = 0.0;
        if (lg_anneal_to_relu(&rn, net) == LG_OK && lg_eval_accuracy(&rn, &ct->test, &racc) == LG_OK)
            printf("ReLU substitution test accuracy: %.2f%% (%+.2f points)\n", 100.0 * racc, 100.0 * (racc - acc));
        lg_net_free(&rn);
    }
    if (res.val_acc >= 0) printf("final validation accuracy: %.2f%%\n", 100.0 * res.val_acc);
    printf("λ per hidden layer:");
    for (int k = 0; k + 1 < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (!lg_act_info_of(L->act)->param_sym) printf(" %s", lg_act_name(L->act));
        else printf(" %s %.6g", lg_act_name(L->act), L->lambda);
    }
    printf("\n");
    if ((st = lg_netfile_write(net, ct->out)) != LG_OK) return st;
    printf("wrote %s\n", ct->out);
    return LG_OK;
}

lg_status lg_cli_train_vit_run(const char *cmd, lg_cli_train *ct, lg_vit *m, int anneal)
{
    lg_status st;
    const lg_vit_spec *sp = &m->spec;
    const lg_act_info *ai = lg_act_info_of(m->act);
    printf("ViT: %d tokens of width %d, %d heads, %d blocks, MLP width %d (%s), %s pooling, %zu parameters\n",
           lg_vit_n_tokens(sp), sp->dim, sp->heads, sp->depth, sp->mlp, lg_act_name(m->act),
           sp->cls ? "class-token" : "mean", m->n_params);
    ct->tr.out = stdout;
    if (anneal) {
        if ((st = lg_anneal_schedule_init(&ct->sched, ct->anneal_start, ct->lambda_target, sp->depth)) != LG_OK)
            return st;
        double target = lg_anneal_target_for(m->act, ct->lambda_target);
        if (ct->anneal_start > 0)
            printf("annealing: %s learned for the first %.3g of the steps, then linear to %s = %.6g\n",
                   ai->param_sym, ct->anneal_start, ai->param_sym, target);
        else
            printf("annealing: every %s moves linearly from its current value to %.6g\n", ai->param_sym, target);
    }
    const lg_optim_opts *op = &ct->tr.optim;
    printf("%s: %zu training examples, batch %d, %s lr %g", cmd, ct->train.n, ct->tr.batch,
           op->kind == LG_OPTIM_SGD ? "sgd" : "adamw", op->lr);
    if (op->kind == LG_OPTIM_SGD) printf(" momentum %g", op->momentum);
    printf(" wd %g, c %g, warmup %ld, %s schedule, seed %llu, threads %d\n", op->wd, op->c, op->warmup,
           op->cosine ? "cosine" : "constant", (unsigned long long)ct->tr.seed, ct->tr.threads);
    fflush(stdout);
    lg_train_result r;
    const lg_dataset *test = ct->test.n ? &ct->test : NULL;
    lg_train_opts tr = ct->tr; /* as its graph, stepping as the ViT (train/vit_fit.h) */
    tr.hook = anneal ? lg_anneal_hook : NULL, tr.hook_ctx = &ct->sched;
    if ((st = lg_vit_fit(m, &ct->train, test, &tr, &r)) != LG_OK) return st;
    if (test) {
        printf("final test accuracy: %.2f%% (%zu examples, float)\n", 100.0 * r.test_acc, test->n);
        if (anneal) { /* what annealing is for: the accuracy of the ReLU net `lgelu relu` will make */
            lg_act a = m->act;
            m->act = LG_ACT_RELU;
            double racc = lg_vit_accuracy(m, test);
            m->act = a;
            printf("ReLU substitution test accuracy: %.2f%% (%+.2f points)\n", 100.0 * racc,
                   100.0 * (racc - r.test_acc));
        }
    }
    if (ai && ai->param_sym) {
        printf("%s per block:", ai->param_sym);
        for (int l = 0; l < sp->depth; l++) printf(" %.6g", lg_vit_act_param(m, l));
        printf("\n");
    }
    if (!ct->out) return LG_OK;
    lg_net net; /* the net of sum, product, softmax and layernorm nodes (train/vit_net.h) */
    if ((st = lg_vit_to_net(m, &net)) != LG_OK) return st;
    if ((st = lg_netfile_write(&net, ct->out)) == LG_OK) printf("wrote %s (%d nodes)\n", ct->out, net.n_layers);
    lg_net_free(&net);
    return st;
}
