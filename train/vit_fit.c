/* vit_fit.c — a ViT trained as its graph (vit_fit.h). */
#include "train/vit_fit.h"

#include "train/vit_net.h"

typedef struct lg_vit_fit_ctx {
    const lg_net *net;
    lg_train_hook_fn hook; /* the caller's, or NULL */
    void *hook_ctx;
    lg_status st;
} lg_vit_fit_ctx;

/* The ViT's parameterisation from the first step, then the caller's hook. */
static void lg_vit_fit_hook(void *ctx, lg_model *mm, long step, long total)
{
    lg_vit_fit_ctx *c = ctx;
    if (!mm->p_scale && c->st == LG_OK) c->st = lg_vit_model_param(mm, c->net);
    if (c->hook) c->hook(c->hook_ctx, mm, step, total);
}

lg_status lg_vit_fit(lg_vit *m, const lg_dataset *train, const lg_dataset *test, const lg_train_opts *o,
                     lg_train_result *res)
{
    lg_net g;
    lg_status st = lg_vit_to_net(m, &g);
    if (st != LG_OK) return st;
    lg_vit_fit_ctx cx = {&g, o->hook, o->hook_ctx, LG_OK};
    lg_train_opts to = *o;
    to.hook = lg_vit_fit_hook, to.hook_ctx = &cx;
    st = lg_train_run(&g, train, NULL, test, &to, res);
    if (st == LG_OK) st = cx.st;
    if (st == LG_OK) {
        lg_vit t;
        if ((st = lg_net_to_vit(&g, &t, m->max_batch, "the trained ViT")) == LG_OK) {
            lg_vit_free(m);
            *m = t;
        }
    }
    lg_net_free(&g);
    return st;
}
