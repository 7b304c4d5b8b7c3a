/* lgelu.c — the public API (lgelu.h): opaque handles over the internal
 * types, each call a thin wrapper of the function the CLI calls for the
 * same job (cli/cmd_eval.c, cmd_relu.c, cmd_check.c, cmd_verify.c,
 * verify_args.c). No verification, bound or training logic lives here. */
#include "lib/lgelu.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/relu.h"
#include "core/ball.h"
#include "core/netfile.h"
#include "onnx/onnx.h"
#include "core/status.h"
#include "core/version.h"
#include "encode/problem.h"
#include "train/model.h"
#include "train/optim.h"
#include "verify/transfer.h"
#include "verify/verify.h"
#include "verify/vnnlib.h"
#include "onnx/load.h"

_Static_assert((int)LGELU_ERR_UNSUPPORTED == (int)LG_ERR_UNSUPPORTED, "status codes follow lg_status");
_Static_assert((int)LGELU_VIOLATED == (int)LG_VERDICT_VIOLATED && (int)LGELU_ROBUST == (int)LG_VERDICT_ROBUST,
               "verdicts follow lg_verdict");

struct lgelu_net {
    lg_net net; /* owned */
};

struct lgelu_cancel {
    _Atomic int flag; /* read by the run context of every call that has the token (core/runctx.h) */
};

struct lgelu_result {
    lg_verify_report rep; /* owned: x, y, unstable */
    int label;
};

static lgelu_status lgelu_st(lg_status s) { return (lgelu_status)s; }

static char lgelu_version_buf[128];
static void lgelu_version_init(void)
{
    snprintf(lgelu_version_buf, sizeof lgelu_version_buf, "%s (%s)", lg_version(), lg_commit());
}

const char *lgelu_version(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, lgelu_version_init);
    return lgelu_version_buf;
}

const char *lgelu_status_str(lgelu_status s) { return lg_status_str((lg_status)s); }
const char *lgelu_errmsg(void) { return lg_errmsg(); }
const char *lgelu_verdict_name(lgelu_verdict v) { return lg_verdict_name((lg_verdict)v); }

/* ---- networks ---- */

static lgelu_status lgelu_net_wrap(lg_net *n, lgelu_net **out)
{
    lgelu_net *h = malloc(sizeof *h);
    if (!h) {
        lg_net_free(n);
        return lgelu_st(lg_fail(LG_ERR_NOMEM, "out of memory"));
    }
    h->net = *n;
    *out = h;
    return LGELU_OK;
}

lgelu_status lgelu_net_load(const char *path, lgelu_net **out)
{
    if (!path || !out) return lgelu_st(lg_fail(LG_ERR_ARG, "lgelu_net_load: NULL argument"));
    *out = NULL;
    lg_net n;
    lg_status st = lg_net_load(&n, path);
    if (st != LG_OK) return lgelu_st(st);
    return lgelu_net_wrap(&n, out);
}

lgelu_status lgelu_net_save(const lgelu_net *net, const char *path)
{
    if (!net || !path) return lgelu_st(lg_fail(LG_ERR_ARG, "lgelu_net_save: NULL argument"));
    size_t l = strlen(path);
    if (l >= 5 && strcmp(path + l - 5, ".onnx") == 0) return lgelu_st(lg_onnx_write(&net->net, path));
    return lgelu_st(lg_netfile_write(&net->net, path));
}

void lgelu_net_free(lgelu_net *net)
{
    if (!net) return;
    lg_net_free(&net->net);
    free(net);
}

int lgelu_net_n_in(const lgelu_net *net) { return net ? net->net.n_in : 0; }
int lgelu_net_n_out(const lgelu_net *net) { return net ? lg_net_n_out(&net->net) : 0; }

int lgelu_net_n_layers(const lgelu_net *net) { return net ? net->net.n_layers : 0; }

lgelu_status lgelu_net_layer(const lgelu_net *net, int k, const char **act, int *n_out, double *param)
{
    if (!net || k < 0 || k >= net->net.n_layers)
        return lgelu_st(lg_fail(LG_ERR_ARG, "layer: expected an index in [0, %d], got %d",
                                net ? net->net.n_layers - 1 : -1, k));
    const lg_layer *L = &net->net.layers[k];
    const lg_act_info *ai = lg_act_info_of(L->act); /* as cli/cmd_info.c prints them */
    if (act) *act = lg_act_name(L->act);
    if (n_out) *n_out = L->n_out;
    if (param) *param = ai->has_param ? L->lambda : ai->param_sym ? 1.0 : NAN;
    return LGELU_OK;
}

lgelu_status lgelu_net_eval(const lgelu_net *net, const double *X, size_t n, double *Y)
{
    if (!net || (n && (!X || !Y))) return lgelu_st(lg_fail(LG_ERR_ARG, "lgelu_net_eval: NULL argument"));
    const lg_net *g = &net->net;
    size_t ni = (size_t)g->n_in, no = (size_t)lg_net_n_out(g);
    double *scratch = malloc(2 * (size_t)lg_net_max_width(g) * sizeof *scratch);
    if (!scratch) return lgelu_st(lg_fail(LG_ERR_NOMEM, "out of memory"));
    for (size_t i = 0; i < n; i++) lg_net_forward(g, X + i * ni, Y + i * no, scratch);
    free(scratch);
    return LGELU_OK;
}

lgelu_status lgelu_net_relu(const lgelu_net *net, lgelu_net **out)
{
    if (!net || !out) return lgelu_st(lg_fail(LG_ERR_ARG, "lgelu_net_relu: NULL argument"));
    *out = NULL;
    lg_net d;
    lg_status st = lg_anneal_to_relu(&d, &net->net);
    if (st != LG_OK) return lgelu_st(st);
    return lgelu_net_wrap(&d, out);
}

/* ---- deviation: the routine of `lgelu check` per input ---- */

lgelu_status lgelu_deviation(const lgelu_net *relu, const lgelu_net *ref, const double *X, size_t n, double eps,
                             double clip_lo, double clip_hi, double *delta)
{
    if (!relu || !ref || (n && (!X || !delta)))
        return lgelu_st(lg_fail(LG_ERR_ARG, "lgelu_deviation: NULL argument"));
    if (!(eps >= 0) || !isfinite(eps) || !(clip_lo <= clip_hi))
        return lgelu_st(lg_fail(LG_ERR_ARG, "lgelu_deviation: expected eps >= 0 and clip_lo <= clip_hi, got eps %g, "
                                            "clip [%g, %g]", eps, clip_lo, clip_hi));
    const lg_net *rn = &relu->net, *gn = &ref->net;
    size_t dim = (size_t)rn->n_in;
    lg_dev dev = {0};
    lg_devnet v = {0};
    lg_bounds b = {0};
    double *lo = malloc(2 * (dim ? dim : 1) * sizeof *lo), *hi = lo ? lo + dim : NULL; /* [dim] each */
    lg_status st;
    if (!lo) return lgelu_st(lg_fail(LG_ERR_NOMEM, "out of memory"));
    if ((st = lg_dev_init(&dev, rn, gn)) != LG_OK) goto fail;
    if ((st = lg_devnet_init(&v, rn, gn)) != LG_OK) goto fail;
    if ((st = lg_bounds_init(&b, rn)) != LG_OK) goto fail;
    for (size_t r = 0; r < n; r++) {
        const double *x = X + r * dim;
        for (size_t i = 0; i < dim; i++)
            if (!isfinite(x[i])) {
                st = lg_fail(LG_ERR_ARG, "lgelu_deviation: input %zu, value %zu is not finite", r, i);
                goto fail;
            }
        lg_ball_boxes(x, dim, eps, clip_lo, clip_hi, lo, hi, NULL, NULL);
        if ((st = lg_transfer_box_delta(&dev, &v, rn, &b, lo, hi, &delta[r])) != LG_OK) goto fail;
    }
fail:
    lg_bounds_free(&b);
    lg_devnet_free(&v);
    lg_dev_free(&dev);
    free(lo);
    return lgelu_st(st);
}

/* ---- verification ---- */

lgelu_verify_opts lgelu_verify_opts_default(void)
{
    lg_verify_opts d = lg_verify_opts_default();
    lgelu_verify_opts o;
    memset(&o, 0, sizeof o);
    o.solver = "auto";
    o.timeout_s = d.timeout_s;
    o.seed = d.seed;
    o.margin = 0.0;
    o.clip_lo = 0.0;
    o.clip_hi = 1.0;
    o.attack = d.attack;
    o.threads = d.bab.threads;
    o.verbose = 0;
    o.cancel = NULL;
    return o;
}

lgelu_status lgelu_cancel_new(lgelu_cancel **out)
{
    if (!out) return lgelu_st(lg_fail(LG_ERR_ARG, "lgelu_cancel_new: NULL argument"));
    *out = malloc(sizeof **out);
    if (!*out) return lgelu_st(lg_fail(LG_ERR_NOMEM, "out of memory"));
    atomic_init(&(*out)->flag, 0);
    return LGELU_OK;
}

void lgelu_cancel_request(lgelu_cancel *c)
{
    if (c) atomic_store(&c->flag, 1);
}

void lgelu_cancel_free(lgelu_cancel *c) { free(c); }

/* The internal options for o (as `lgelu verify` fills them: z3 is the row
 * of its auto theory, as in cmd_verify.c). */
static lg_status lgelu_opts_internal(const lgelu_verify_opts *o, lg_verify_opts *v)
{
    *v = lg_verify_opts_default();
    const char *solver = o->solver ? o->solver : "auto";
    if (lg_solver_parse(solver, &v->solver) != LG_OK) {
        char why[160];
        snprintf(why, sizeof why, "%s", lg_errmsg());
        return lg_fail(LG_ERR_ARG, "solver: %s", why);
    }
    if (v->solver.mode == LG_SOLVER_ONE && v->solver.row->theories) /* z3: its auto theory, as `lgelu verify` */
        v->solver.row = lg_solver_theory(v->solver.row, "auto");
    if (!isfinite(o->margin) || isnan(o->timeout_s))
        return lg_fail(LG_ERR_ARG, "margin and timeout must be numbers, got %g and %g", o->margin, o->timeout_s);
    v->timeout_s = o->timeout_s;
    v->seed = o->seed;
    v->attack = o->attack;
    v->verbose = o->verbose;
    v->bab.threads = o->threads;
    return LG_OK;
}

/* lg_verify_run with the caller's cancel token in the run context. */
static lgelu_status lgelu_run(const lgelu_net *net, lg_prop *prop, const lg_verify_opts *v, lgelu_cancel *cancel,
                              int label, lgelu_result **out)
{
    lgelu_result *r = calloc(1, sizeof *r);
    if (!r) return lgelu_st(lg_fail(LG_ERR_NOMEM, "out of memory"));
    lg_runctx run = lg_runctx_start(v->timeout_s, v->seed, v->verbose, v->memory_mb);
    run.cancel = cancel ? &cancel->flag : NULL;
    lg_status st = lg_verify_run_in(&net->net, prop, v, &run, &r->rep);
    if (st != LG_OK) {
        lgelu_result_free(r);
        return lgelu_st(st);
    }
    r->label = label;
    *out = r;
    return LGELU_OK;
}

lgelu_status lgelu_verify_robust(const lgelu_net *net, const double *x, double eps, int label,
                                 const lgelu_verify_opts *o, lgelu_result **out)
{
    if (!net || !x || !out) return lgelu_st(lg_fail(LG_ERR_ARG, "lgelu_verify_robust: NULL argument"));
    *out = NULL;
    lgelu_verify_opts d = lgelu_verify_opts_default();
    if (!o) o = &d;
    const lg_net *g = &net->net;
    int ni = g->n_in, no = lg_net_n_out(g);
    if (!(eps >= 0) || !isfinite(eps))
        return lgelu_st(lg_fail(LG_ERR_ARG, "eps: expected a finite number >= 0, got %g", eps));
    if (!(o->clip_lo <= o->clip_hi))
        return lgelu_st(lg_fail(LG_ERR_ARG, "clip: expected clip_lo <= clip_hi, got [%g, %g]", o->clip_lo, o->clip_hi));
    if (label >= no)
        return lgelu_st(lg_fail(LG_ERR_ARG, "label: expected an integer in [0, %d] (the network has %d outputs), got %d",
                                no - 1, no, label));
    for (int i = 0; i < ni; i++)
        if (!isfinite(x[i])) return lgelu_st(lg_fail(LG_ERR_ARG, "x[%d] is not finite", i));
    lg_verify_opts v;
    lg_status st = lgelu_opts_internal(o, &v);
    if (st != LG_OK) return lgelu_st(st);
    if (label < 0) { /* the network's own prediction at x (cli/verify_args.c) */
        double *y = malloc(((size_t)2 * (size_t)lg_net_max_width(g) + (size_t)no) * sizeof *y);
        if (!y) return lgelu_st(lg_fail(LG_ERR_NOMEM, "out of memory"));
        double *yy = y + 2 * (size_t)lg_net_max_width(g);
        lg_net_forward(g, x, yy, y);
        label = 0;
        for (int j = 1; j < no; j++)
            if (yy[j] > yy[label]) label = j;
        free(y);
    }
    lg_prop prop = {0};
    if ((st = lg_prop_robustness(&prop, x, ni, eps, o->clip_lo, o->clip_hi, label, no, o->margin)) != LG_OK)
        return lgelu_st(st);
    lgelu_status s = lgelu_run(net, &prop, &v, o->cancel, label, out);
    lg_prop_free(&prop);
    return s;
}

lgelu_status lgelu_verify_vnnlib(const lgelu_net *net, const char *path, const lgelu_verify_opts *o,
                                 lgelu_result **out)
{
    if (!net || !path || !out) return lgelu_st(lg_fail(LG_ERR_ARG, "lgelu_verify_vnnlib: NULL argument"));
    *out = NULL;
    lgelu_verify_opts d = lgelu_verify_opts_default();
    if (!o) o = &d;
    lg_verify_opts v;
    lg_status st = lgelu_opts_internal(o, &v);
    if (st != LG_OK) return lgelu_st(st);
    lg_prop prop = {0};
    if ((st = lg_vnnlib_read_net(&prop, path, &net->net)) != LG_OK) return lgelu_st(st);
    if ((st = lg_verify_apply_margin(&prop, o->margin)) != LG_OK) {
        lg_prop_free(&prop);
        return lgelu_st(st);
    }
    lgelu_status s = lgelu_run(net, &prop, &v, o->cancel, -1, out);
    lg_prop_free(&prop);
    return s;
}

void lgelu_result_free(lgelu_result *r)
{
    if (!r) return;
    lg_verify_report_free(&r->rep);
    free(r);
}

lgelu_verdict lgelu_result_verdict(const lgelu_result *r) { return r ? (lgelu_verdict)r->rep.verdict : LGELU_UNKNOWN; }
const char *lgelu_result_reason(const lgelu_result *r) { return r ? r->rep.how.reason : ""; }
const char *lgelu_result_method(const lgelu_result *r) { return r ? r->rep.method : ""; }
int lgelu_result_timed_out(const lgelu_result *r) { return r ? r->rep.how.timed_out : 0; }
double lgelu_result_seconds(const lgelu_result *r) { return r ? r->rep.seconds : 0.0; }
int lgelu_result_label(const lgelu_result *r) { return r ? r->label : -1; }
int lgelu_result_unstable_total(const lgelu_result *r) { return r ? r->rep.unstable_total : 0; }

const double *lgelu_result_counterexample(const lgelu_result *r, int *n)
{
    int ok = r && r->rep.verdict == LG_VERDICT_VIOLATED && r->rep.x;
    if (n) *n = ok ? r->rep.n_in : 0;
    return ok ? r->rep.x : NULL;
}

const double *lgelu_result_outputs(const lgelu_result *r, int *n)
{
    int ok = r && r->rep.verdict == LG_VERDICT_VIOLATED && r->rep.y;
    if (n) *n = ok ? r->rep.n_out : 0;
    return ok ? r->rep.y : NULL;
}

const int *lgelu_result_unstable(const lgelu_result *r, int *n_layers)
{
    if (n_layers) *n_layers = r && r->rep.unstable ? r->rep.n_layers : 0;
    return r ? r->rep.unstable : NULL;
}

lgelu_status lgelu_result_write(const lgelu_result *r, const char *path)
{
    if (!r || !path) return lgelu_st(lg_fail(LG_ERR_ARG, "lgelu_result_write: NULL argument"));
    return lgelu_st(lg_verify_write_result_path(&r->rep, path));
}

/* ---- training: one hardness parameter through the trainer's own step ---- */

lgelu_status lgelu_hardness_step(const char *optim, const char *s_update, double t, double lr, double c,
                                 double momentum, double s0, const double *grad_lambda, int n_steps, double *s_out,
                                 double *lambda_out)
{
    lg_optim_opts o = lg_optim_opts_default();
    if (!optim || lg_optim_parse(optim, &o.kind))
        return lgelu_st(lg_fail(LG_ERR_ARG, "optim: expected sgd or adamw, got '%s'", optim ? optim : "(null)"));
    if (!s_update || lg_s_update_parse(s_update, &o.s_update))
        return lgelu_st(lg_fail(LG_ERR_ARG, "s_update: expected s or lambda, got '%s'", s_update ? s_update : "(null)"));
    if (!(t > 0) || !isfinite(t) || !isfinite(lr) || !isfinite(c) || !isfinite(momentum) || !isfinite(s0) ||
        n_steps < 0 || (n_steps && !grad_lambda))
        return lgelu_st(lg_fail(LG_ERR_ARG, "lgelu_hardness_step: expected t > 0, finite rates and s, n_steps >= 0"));
    o.lr = lr;
    o.c = c;
    o.momentum = momentum;
    int dims[3] = {1, 1, 1};
    lg_net net = {0};
    lg_model m = {0};
    lg_status st = lg_net_init(&net, 2, dims, LG_ACT_LGELU);
    if (st != LG_OK) return lgelu_st(st);
    if ((st = lg_model_init(&m, &net, 1)) != LG_OK) goto fail;
    lg_mlayer *L = &m.layers[0];
    m.t = t;
    *L->s = (float)s0; /* the trainer keeps s in float */
    lg_model_sync_lambda(&m);
    for (int k = 0; k < n_steps; k++) {
        lg_model_zero_grad(&m);
        /* what lg_model_backward leaves for this layer: ∂L/∂λ and ∂L/∂s = ∂L/∂λ·σ(s/t)/t */
        L->dlambda = (float)grad_lambda[k];
        double u = (double)*L->s / m.t;
        *L->ds = (float)((double)L->dlambda / (1.0 + exp(-u)) / m.t);
        lg_optim_step(&m, &o, k + 1);
    }
    if (s_out) *s_out = (double)*L->s;
    if (lambda_out) *lambda_out = L->lambda;
fail:
    lg_model_free(&m);
    lg_net_free(&net);
    return lgelu_st(st);
}
