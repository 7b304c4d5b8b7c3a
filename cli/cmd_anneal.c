/* cmd_anneal.c — `lgelu anneal NET`: keep training a gelu/lgelu network
 * while every λ moves linearly from its current value to λ_target over all
 * steps (DESIGN.md §1, annealing). */
#include <stdio.h>

#include "cli/cmd.h"
#include "cli/train_common.h"
#include "anneal/schedule.h"
#include "core/netfile.h"
#include "onnx/load.h"
#include "train/vit_net.h"

static void lg_anneal_help(void)
{
    printf("usage: lgelu anneal NET [--data DIR] --epochs N [--lambda-target L | --tolerance E]\n"
           "                   [--batch B] [--lr η] [--momentum μ] [--opt sgd|adamw] [--wd W]\n"
           "                   [--warmup N] [--lr-schedule constant|cosine] [--seed S] [--threads T] [--val N] [--subset N] [--log FILE] [--progress]\n"
           "                   -o NET2\n\n"
           "Continue training NET (native or ONNX) on the training split while the λ of every hidden\n"
           "gelu/lgelu layer moves linearly, step by step, from its current value to λ_target, reaching\n"
           "it exactly at the last step (gelu layers become lgelu starting at λ = 1). The weights keep\n"
           "training. Swish layers move their β to the β of the same tolerance E (2·ln2/E ≈ 277.3) and\n"
           "prelu layers their slope to 0. A network without gelu, lgelu, swish or prelu layers is refused.\n"
           "A ViT written by `lgelu train --arch CxHxW,vit:...` is read back into the ViT trainer and anneals\n"
           "the λ of each block's MLP the same way (other Transformer graphs are refused).\n\n"
           "options:\n"
           "  --data DIR          directory with the four IDX files (default %s); or NumPy files\n"
           "                      Xtrain.npy,ytrain.npy,Xtest.npy,ytest.npy (X: (n, n_in) in [0,1], y:\n"
           "                      integer labels (n,)); X.npy,y.npy alone is both train and test data\n"
           "  --epochs N          passes over the training data (required)\n"
           "  --lambda-target L   final λ (default 2/(E√(2π)) ≈ %.4g for E = %g)\n"
           "  --tolerance E       set λ_target = 2/(E√(2π)) from the Heaviside tolerance E\n",
           LG_DATA_DEFAULT_DIR, lg_anneal_lambda_target(LG_ANNEAL_DEFAULT_TOLERANCE), LG_ANNEAL_DEFAULT_TOLERANCE);
    lg_cli_train_help_common(0);
    printf("  --log FILE          CSV per epoch: epoch,step,loss,train_acc,test_acc,lambda_0,...,samples_per_s\n"
           "  -o, --output NET2   output network file (required; checked before training starts)\n"
           "  -h, --help          show this help\n");
}

int lg_cmd_anneal(int argc, char **argv)
{
    static const struct option lo[] = {
        {"data", required_argument, 0, LG_OPT_DATA}, {"epochs", required_argument, 0, LG_OPT_EPOCHS},
        {"batch", required_argument, 0, LG_OPT_BATCH}, {"lr", required_argument, 0, LG_OPT_LR},
        {"momentum", required_argument, 0, LG_OPT_MOMENTUM}, {"opt", required_argument, 0, LG_OPT_OPT},
        {"wd", required_argument, 0, LG_OPT_WD}, {"warmup", required_argument, 0, LG_OPT_WARMUP},
        {"lr-schedule", required_argument, 0, LG_OPT_LR_SCHEDULE}, {"seed", required_argument, 0, LG_OPT_SEED},
        {"threads", required_argument, 0, LG_OPT_THREADS}, {"val", required_argument, 0, LG_OPT_VAL},
        {"subset", required_argument, 0, LG_OPT_SUBSET}, {"lambda-target", required_argument, 0, LG_OPT_LAMBDA_TARGET},
        {"tolerance", required_argument, 0, LG_OPT_TOLERANCE}, {"log", required_argument, 0, LG_OPT_LOG},
        {"output", required_argument, 0, 'o'}, {"progress", no_argument, 0, LG_OPT_PROGRESS},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    lg_cli_train ct;
    lg_cli_train_defaults(&ct);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", lo, NULL)) != -1) {
        int r = lg_cli_train_option("anneal", &ct, c, optarg);
        if (r < 0) return 2;
        if (r == 0) continue;
        if (c == 'h') {
            lg_anneal_help();
            return 0;
        }
        return lg_cli_usage("anneal", "unknown option");
    }
    if (optind != argc - 1) return lg_cli_usage("anneal", "expected exactly one network file");
    if (lg_cli_train_finish_args("anneal", &ct)) return 2;
    ct.anneal_start = 0.0;
    lg_net net = {0};
    int rc = 1;
    lg_status st = lg_net_load(&net, argv[optind]);
    if (st != LG_OK) goto fail;
    if ((st = lg_anneal_prepare_net(&net, argv[optind])) != LG_OK) goto fail;
    if (lg_net_has_tnode(&net)) { /* a Transformer: the ViT trainer, if the net is of the form it writes */
        lg_vit m;
        if ((st = lg_net_to_vit(&net, &m, ct.tr.batch, argv[optind])) != LG_OK) goto fail;
        if (ct.val) {
            lg_vit_free(&m);
            rc = lg_cli_usage("anneal", "%s: --val is not available for a ViT", argv[optind]);
            goto done;
        }
        if ((st = lg_cli_train_load(&ct, net.n_in, "the network")) != LG_OK) {
            lg_vit_free(&m);
            if (st != LG_ERR_ARG) goto fail;
            rc = lg_cli_usage("anneal", "%s", lg_errmsg());
            goto done;
        }
        st = lg_cli_train_vit_run("anneal", &ct, &m, 1);
        lg_vit_free(&m);
        if (st != LG_OK) goto fail;
        rc = 0;
        goto done;
    }
    if ((st = lg_cli_train_load(&ct, net.n_in, "the network")) != LG_OK) {
        if (st != LG_ERR_ARG) goto fail;
        rc = lg_cli_usage("anneal", "%s", lg_errmsg()); /* a bad --val or --data for this network */
        goto done;
    }
    if ((st = lg_cli_train_run("anneal", &ct, &net, 1)) != LG_OK) goto fail;
    rc = 0;
fail:
    if (rc) rc = lg_cli_fail("anneal", st);
done:
    lg_net_free(&net);
    lg_cli_train_free(&ct);
    return rc;
}
