/* cmd_train.c — `lgelu train`: train an MLP on Fashion-MNIST, optionally
 * annealing λ toward ReLU in the same run (DESIGN.md §1, annealing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/train_common.h"
#include "anneal/schedule.h"
#include "core/arch.h"
#include "core/arch_vit.h"
#include "core/netfile.h"
#include "train/init.h"
#include "train/vit.h"
#include "train/vit_train.h"
#include "train/vit_net.h"

static void lg_train_help(void)
{
    printf("usage: lgelu train [--data DIR] --arch 784,256,256,10 --act lgelu|gelu|relu|sigmoid|swish|prelu\n"
           "                   --epochs N\n"
           "                   [--batch B] [--lr η] [--momentum μ] [--opt sgd|adamw] [--wd W]\n"
           "                   [--t T] [--c C] [--s-update lambda|s] [--init he|xavier|torch]\n"
           "                   [--warmup N] [--lr-schedule constant|cosine] [--seed S] [--threads T] [--val N] [--subset N] [--progress]\n"
           "                   [--anneal-start F] [--lambda-target L | --tolerance E] [--rs W] [--rs-eps E]\n"
           "                   [--log FILE] -o NET\n\n"
           "Train a dense or conv network (softmax cross-entropy) on the training split of an IDX\n"
           "dataset and write it in the native format. One line per epoch on stdout: loss, training accuracy, test\n"
           "accuracy, λ per hidden layer, samples/s. Same seed and thread count give identical weights.\n\n"
           "options:\n"
           "  --data DIR          directory with the four IDX files (default %s); or NumPy files\n"
           "                      Xtrain.npy,ytrain.npy,Xtest.npy,ytest.npy (X: (n, n_in) in [0,1], y:\n"
           "                      integer labels (n,)); X.npy,y.npy alone is both train and test data\n"
           "  --arch A,B,...      layer sizes, input first (default 784,256,256,10); the first must equal\n"
           "                      the data's features, or (rows/k)*(cols/k) to train on k x k average-\n"
           "                      pooled images (196 = 14x14, 49 = 7x7); the last must cover every label.\n"
           "                      Conv layers: an image input CxHxW, then c<C>k<K>[s<S>][p<P>] tokens\n"
           "                      (C channels, K x K kernel, stride S, zero padding P; KxK2 etc. for\n"
           "                      non-square), e.g. 1x28x28,c8k3s2,c16k3s2,10. Residual blocks (R times):\n"
           "                      r<N>[x<R>] dense (identity shortcut, or a projection when the width\n"
           "                      changes), m<N>:<H>[x<R>] Transformer-style MLP x + W2 act(W1 x),\n"
           "                      rc<C>k<K>[s<S>][x<R>] conv (1x1 stride-S projection when the shape\n"
           "                      changes), e.g. 784,256,r256x4,10 (docs/USAGE.md \"Architectures\").\n"
           "                      A ViT: CxHxW,vit:p<P>,d<D>,h<NH>,L<L>,m<M>,cls|mean,<N> (patch, width,\n"
           "                      heads, blocks, MLP width, pooling, classes), e.g.\n"
           "                      1x28x28,vit:p7,d64,h4,L4,m128,cls,10; -o is then optional, --rs and\n"
           "                      --val are refused\n"
           "  --act KIND          hidden activation: lgelu (x·Φ(λx), λ = 1 + softplus(s/t) learned per layer),\n"
           "                      gelu (λ = 1), relu or sigmoid (default lgelu); the last layer is linear.\n"
           "                      Annealed baselines: swish (x·σ(βx), β = 1 + softplus(s/t) learned like λ,\n"
           "                      annealed to β_target = 2·ln2/E) and prelu (max(0,x) + a·min(0,x), slope a\n"
           "                      learned from 0.25 with rate η, annealed linearly to 0)\n"
           "  --epochs N          passes over the training data (required)\n",
           LG_DATA_DEFAULT_DIR);
    lg_cli_train_help_common(1);
    printf("  --s-update MODE     lambda: step λ itself by C·η·(∂L/∂λ through the optimiser), floor\n"
           "                      λ ≥ 1.001, s solved back (default; λ cannot be trapped at 1);\n"
           "                      s: the plain step on s (dλ/ds = σ(s/t)/t vanishes as λ → 1)\n"
           "  --init KIND         weight initialisation: torch (U(±1/√fan_in) for W and b, PyTorch's\n"
           "                      nn.Linear default; the default), he (N(0, 2/fan_in), b = 0) or\n"
           "                      xavier (N(0, 2/(fan_in+fan_out)), b = 0)\n"
           "  --anneal-start F    anneal: learn λ for the first fraction F in (0,1] of the steps, then\n"
           "                      freeze s and move each λ linearly to the target by the last step\n"
           "                      (F = 1: no annealing, the default without this option; 0.25 is usual)\n"
           "  --lambda-target L   λ reached at the end of annealing (default 2/(E√(2π)) ≈ %.4g); swish\n"
           "                      anneals to the β of the same E, β_target = ln2·√(2π)·L ≈ 277.3\n"
           "  --tolerance E       set λ_target = 2/(E√(2π)) (swish: β_target = 2·ln2/E) from the Heaviside\n"
           "                      tolerance E (default %g); prelu slopes always anneal to 0\n"
           "  --rs W              verification-aware training: add W times the RS loss of Xiao et al.\n"
           "                      (ICLR 2019), Σ over hidden neurons of −tanh(1 + l·u) with [l, u] the\n"
           "                      interval bounds of each pre-activation of the ReLU substitution over\n"
           "                      the training eps-ball (mean over the batch); it makes hidden ReLUs\n"
           "                      stable on that ball (default %g: off)\n"
           "  --rs-eps E          radius of that ball in [0,1] input units (default %g)\n"
           "  --log FILE          CSV per epoch: epoch,step,loss,train_acc,test_acc,lambda_0,...,\n"
           "                      samples_per_s (and val_acc with --val; rs_loss,rs_unstable with --rs)\n"
           "  -o, --output NET    output network file (required; checked before training starts)\n"
           "  -h, --help          show this help\n\n"
           "exit status: 0 trained and written, 1 a failure while running, 2 bad usage or a bad value\n"
           "(the message names the valid range).\n",
           lg_anneal_lambda_target(LG_ANNEAL_DEFAULT_TOLERANCE), LG_ANNEAL_DEFAULT_TOLERANCE,
           lg_train_opts_default().rs_weight, lg_train_opts_default().rs_eps);
}

/* Train a ViT (core/arch_vit.h) on the loaded data, optionally annealing,
 * and write it as a net with -o (DESIGN.md §1 "Training a Transformer"). */
static lg_status lg_train_vit(lg_cli_train *ct, const lg_vit_spec *sp, lg_act act, int anneal)
{
    lg_vit m;
    lg_status st = lg_vit_init(&m, sp, act, ct->tr.batch);
    if (st != LG_OK) return st;
    lg_vit_init_weights(&m, ct->tr.seed);
    st = lg_cli_train_vit_run("train", ct, &m, anneal);
    lg_vit_free(&m);
    return st;
}

/* The annealing options' consistency (usage errors, printed): 0 when they fit act. */
static int lg_cmd_train_anneal_args(const lg_cli_train *ct, lg_act act)
{
    if (ct->anneal_start < 1.0 && !lg_act_has_param(act)) {
        lg_cli_usage("train", "--anneal-start needs --act lgelu, swish or prelu");
        return 1;
    }
    if (!ct->anneal_set && (ct->target_set || ct->tolerance_set)) {
        lg_cli_usage("train", "--lambda-target/--tolerance need --anneal-start F (F = 1: no annealing)");
        return 1;
    }
    return 0;
}

int lg_cmd_train(int argc, char **argv)
{
    static const struct option lo[] = {
        {"data", required_argument, 0, LG_OPT_DATA}, {"arch", required_argument, 0, LG_OPT_ARCH},
        {"act", required_argument, 0, LG_OPT_ACT}, {"epochs", required_argument, 0, LG_OPT_EPOCHS},
        {"batch", required_argument, 0, LG_OPT_BATCH}, {"lr", required_argument, 0, LG_OPT_LR},
        {"momentum", required_argument, 0, LG_OPT_MOMENTUM}, {"opt", required_argument, 0, LG_OPT_OPT},
        {"wd", required_argument, 0, LG_OPT_WD}, {"t", required_argument, 0, LG_OPT_T},
        {"c", required_argument, 0, LG_OPT_C}, {"seed", required_argument, 0, LG_OPT_SEED},
        {"threads", required_argument, 0, LG_OPT_THREADS}, {"val", required_argument, 0, LG_OPT_VAL},
        {"subset", required_argument, 0, LG_OPT_SUBSET}, {"anneal-start", required_argument, 0, LG_OPT_ANNEAL_START},
        {"lambda-target", required_argument, 0, LG_OPT_LAMBDA_TARGET},
        {"tolerance", required_argument, 0, LG_OPT_TOLERANCE}, {"log", required_argument, 0, LG_OPT_LOG},
        {"init", required_argument, 0, LG_OPT_INIT}, {"s-update", required_argument, 0, LG_OPT_S_UPDATE},
        {"output", required_argument, 0, 'o'}, {"progress", no_argument, 0, LG_OPT_PROGRESS},
        {"rs", required_argument, 0, LG_OPT_RS}, {"rs-eps", required_argument, 0, LG_OPT_RS_EPS},
        {"warmup", required_argument, 0, LG_OPT_WARMUP}, {"lr-schedule", required_argument, 0, LG_OPT_LR_SCHEDULE},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    lg_cli_train ct;
    lg_cli_train_defaults(&ct);
    const char *arch_text = "784,256,256,10";
    lg_arch arch = {0};
    lg_vit_spec vit;
    int is_vit = 0;
    lg_net net = {0};
    lg_status st = LG_OK;
    int c, rc = 2;
    lg_act act = LG_ACT_LGELU;
    lg_init_kind init = LG_INIT_TORCH;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", lo, NULL)) != -1) {
        int r = lg_cli_train_option("train", &ct, c, optarg);
        if (r < 0) goto done;
        if (r == 0) continue;
        switch (c) {
        case LG_OPT_ARCH:
            lg_arch_free(&arch);
            if ((is_vit = lg_arch_is_vit(optarg)) != 0) {
                if (lg_arch_vit_parse(&vit, optarg) != LG_OK) {
                    lg_cli_usage("train", "--arch: %s", lg_errmsg());
                    goto done;
                }
                arch_text = optarg;
                break;
            }
            if (lg_arch_parse(&arch, optarg) != LG_OK) {
                lg_cli_usage("train", "--arch: %s", lg_errmsg());
                goto done;
            }
            arch_text = optarg;
            break;
        case LG_OPT_ACT:
            if (lg_act_parse(optarg, &act) != 0 || act == LG_ACT_IDENTITY) {
                lg_cli_usage("train", "--act: expected lgelu, gelu, relu, sigmoid, swish or prelu, got '%s'", optarg);
                goto done;
            }
            break;
        case LG_OPT_INIT:
            if (lg_init_parse(optarg, &init) != 0) {
                lg_cli_usage("train", "--init: expected he, xavier or torch, got '%s'", optarg);
                goto done;
            }
            break;
        case 'h':
            lg_train_help();
            rc = 0;
            goto done;
        default:
            lg_cli_usage("train", "unknown option");
            goto done;
        }
    }
    if (!is_vit && !arch.specs && lg_arch_parse(&arch, arch_text) != LG_OK) {
        lg_cli_usage("train", "--arch: %s", lg_errmsg());
        goto done;
    }
    int n_out = is_vit ? vit.n_out : arch.specs[arch.n_layers - 1].n_out;
    if (optind != argc) {
        lg_cli_usage("train", "unexpected argument '%s'", argv[optind]);
        goto done;
    }
    if (is_vit) {
        /* a ViT trains, reports and (with -o) is written as a net of product, softmax and layernorm nodes */
        if (ct.tr.rs_weight > 0 || ct.val) {
            lg_cli_usage("train", "--arch %s: --rs and --val are not available for a ViT", arch_text);
            goto done;
        }
        ct.no_output = 1;
        if (lg_cli_train_finish_args("train", &ct)) goto done;
        if (lg_cmd_train_anneal_args(&ct, act)) goto done;
        rc = 1;
        if ((st = lg_cli_train_load(&ct, vit.C * vit.H * vit.W, "--arch")) != LG_OK) {
            if (st != LG_ERR_ARG) goto fail;
            rc = lg_cli_usage("train", "%s", lg_errmsg());
            goto done;
        }
        for (size_t i = 0; i < ct.train.n; i++)
            if (ct.train.y[i] >= n_out) {
                rc = lg_cli_usage("train", "--arch: the output width must be at least %d, got %d", ct.train.y[i] + 1,
                                  n_out);
                goto done;
            }
        if ((st = lg_train_vit(&ct, &vit, act, ct.anneal_start < 1.0)) != LG_OK) goto fail;
        rc = 0;
        goto done;
    }
    if (lg_cli_train_finish_args("train", &ct)) goto done;
    int anneal = ct.anneal_start < 1.0;
    if (lg_cmd_train_anneal_args(&ct, act)) goto done;
    rc = 1;
    if ((st = lg_cli_train_load(&ct, arch.n_in, "--arch")) != LG_OK) {
        if (st != LG_ERR_ARG) goto fail;
        /* the data does not fit the sizes: a bad --arch value, exit 2 */
        rc = lg_cli_usage("train", "%s", lg_errmsg());
        goto done;
    }
    int max_label = 0;
    for (size_t i = 0; i < ct.train.n; i++)
        if (ct.train.y[i] > max_label) max_label = ct.train.y[i];
    if (n_out <= max_label) {
        rc = lg_cli_usage("train", "--arch: the last size must be at least %d (the data has labels 0..%d), got %d",
                          max_label + 1, max_label, n_out);
        goto done;
    }
    if ((st = lg_arch_build(&net, &arch, act)) != LG_OK) goto fail;
    net.t = ct.t;
    lg_init_weights(&net, ct.tr.seed, init);
    ct.init_name = lg_init_name(init);
    if ((st = lg_cli_train_run("train", &ct, &net, anneal)) != LG_OK) goto fail;
    rc = 0;
fail:
    if (rc) rc = lg_cli_fail("train", st);
done:
    lg_net_free(&net);
    lg_arch_free(&arch);
    lg_cli_train_free(&ct);
    return rc;
}
