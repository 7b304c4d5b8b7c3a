/* run.c — the study runner (run.h). */
#include "study/run.h"
#include "core/clock.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "anneal/deviation.h"
#include "core/atomic_file.h"
#include "core/idx.h"
#include "core/netfile.h"
#include "core/version.h"
#include "verify/prop.h"
#include "verify/recheck.h"
#include "verify/transfer.h"
#include "verify/verify.h"
#include "study/nets.h"
#include "study/results.h"

lg_status lg_study_copy_file(const char *src, const char *dir, const char *name)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    lg_status st = lg_file_slurp(src, (size_t)1 << 24, &buf, &len);
    if (st != LG_OK) return st;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    st = lg_atomic_write(path, buf, len);
    free(buf);
    return st;
}

void lg_study_verify_settings(const lg_study_grid *g, const lg_study_arch *a, lg_study_mode m, lg_verify_opts *vo,
                              char *desc, size_t n)
{
    double timeout = lg_study_arch_timeout(g, a);
    *vo = lg_verify_opts_default();
    vo->timeout_s = timeout;
    vo->bab.threads = 1; /* verdicts that do not depend on -j */
    int w = snprintf(desc, n, "timeout=%g bab_threads=1", timeout);
    if (m == LG_STUDY_Z3 || m == LG_STUDY_GLPK) {
        /* the z3 mode's row is its theory's (grid key z3_theory, verify --z3-theory) */
        vo->solver = (lg_solver_pick){LG_SOLVER_ONE, m == LG_STUDY_Z3 ? g->z3_row : lg_solver_glpk};
        vo->backend_only = 1;
        vo->attack = 0;
        vo->bab.mode = LG_BAB_NONE;
        if (w > 0 && (size_t)w < n) lg_verify_opts_settings(vo, desc + w, n - (size_t)w); /* verify.h */
    } else if (m == LG_STUDY_SMOOTH && w > 0 && (size_t)w < n) {
        snprintf(desc + w, n - (size_t)w, " transfer=1");
    }
}

lg_study_opts lg_study_opts_default(void)
{
    lg_study_opts o;
    memset(&o, 0, sizeof o);
    o.out_dir = "out/study";
    o.jobs = 1;
    o.shard_k = o.shard_n = 1;
    return o;
}

int lg_study_shard_parse(const char *s, int *k, int *n)
{
    char *end;
    errno = 0;
    long a = strtol(s, &end, 10);
    if (end == s || *end != '/' || errno) return -1;
    const char *p = end + 1;
    long b = strtol(p, &end, 10);
    if (end == p || *end || errno || b < 1 || b > 100000 || a < 1 || a > b) return -1;
    *k = (int)a;
    *n = (int)b;
    return 0;
}


/* One network slot of the grid. */
typedef struct lg_run_net {
    const lg_study_regime *r;
    const lg_study_arch *a;
    long seed;
    int needed;
    lg_study_net n;
    lg_status st;
    int data;       /* index into lg_run_ctx.data: the (pooled) images this net sees */
} lg_run_net;

/* The images at one pooling factor (lg_dataset_pool): one per distinct
 * architecture input size. train/test point at the loaded sets when k is 1
 * (no copy) and at the owned pooled sets otherwise. */
#define LG_RUN_MAX_DATA LG_STUDY_MAX_DIMS
typedef struct lg_run_data {
    int k;
    lg_dataset pool_train, pool_test; /* owned; empty when k is 1 */
    const lg_dataset *train, *test;
} lg_run_data;

/* One instance to run. */
typedef struct lg_run_inst {
    int net, input, eps_i;
    lg_study_mode mode;
    /* the smooth mode tries the counterexample the auto mode found on the ReLU net first: auto_ix
     * is that auto instance's index in todo (−1 none, or not in this run); an auto instance sets
     * finished and, when violated, cex ([n_in], owned) under the context's mutex */
    long auto_ix;
    int finished;
    double *cex;
} lg_run_inst;

typedef struct lg_run_ctx {
    const lg_study_grid *g;
    const lg_study_opts *o;
    lg_run_net *nets;
    int n_nets;
    lg_run_inst *todo;
    long n_todo;
    lg_dataset train, test; /* as loaded */
    lg_run_data data[LG_RUN_MAX_DATA];
    int n_data;
    const char *cache;
    lg_study_log results, networks;
    pthread_mutex_t mu;
    pthread_cond_t cv;  /* an auto instance finished (lg_run_inst.finished), or the run failed */
    long next, done;
    lg_status st;       /* first failure */
    char err[512];
    double t0;
} lg_run_ctx;

static void lg_run_fail(lg_run_ctx *C, lg_status st)
{
    pthread_mutex_lock(&C->mu);
    if (C->st == LG_OK) {
        C->st = st;
        snprintf(C->err, sizeof C->err, "%s", lg_errmsg());
    }
    pthread_cond_broadcast(&C->cv);
    pthread_mutex_unlock(&C->mu);
}

static void lg_run_progress(lg_run_ctx *C, const char *what)
{
    if (!C->o->progress) return;
    double el = lg_now() - C->t0;
    double eta = C->done > 0 ? el / (double)C->done * (double)(C->n_todo - C->done) : 0.0;
    if (C->o->progress == 2) { /* a log: one line per 5% */
        long step = C->n_todo / 20 > 0 ? C->n_todo / 20 : 1;
        if (C->done % step != 0 && C->done != C->n_todo) return;
        fprintf(stderr, "study: %s %ld/%ld, %.0f s elapsed, ETA %.0f s\n", what, C->done, C->n_todo, el, eta);
        return;
    }
    fprintf(stderr, "\rstudy: %s %ld/%ld, %.0f s elapsed, ETA %.0f s   ", what, C->done, C->n_todo, el, eta);
    if (C->done == C->n_todo) fprintf(stderr, "\n");
}

/* Phase 1 worker: networks. */
static void *lg_run_nets_worker(void *arg)
{
    lg_run_ctx *C = arg;
    for (;;) {
        pthread_mutex_lock(&C->mu);
        int i = -1;
        while (C->st == LG_OK && C->next < C->n_nets) {
            long j = C->next++;
            if (C->nets[j].needed) {
                i = (int)j;
                break;
            }
        }
        pthread_mutex_unlock(&C->mu);
        if (i < 0) return NULL;
        lg_run_net *N = &C->nets[i];
        const lg_run_data *D = &C->data[N->data];
        lg_status st = lg_study_net_get(&N->n, C->cache, N->r, N->a, N->seed, D->train, D->test);
        if (st == LG_OK) {
            json_t *j = lg_study_net_json(&N->n, N->r, N->a, N->seed);
            if (j) json_object_set_new(j, "order", json_integer(i)); /* grid order, for the report */
            st = j ? lg_study_log_append(&C->networks, j, NULL) : lg_fail(LG_ERR_NOMEM, "out of memory");
            json_decref(j);
        }
        if (st != LG_OK) {
            lg_run_fail(C, st);
            return NULL;
        }
        pthread_mutex_lock(&C->mu);
        C->done++;
        if (C->o->log)
            fprintf(C->o->log, "study: network %s %s seed %ld: %s, accuracy %.2f%% -> %.2f%% after ReLU, global delta %.4g\n",
                    N->r->name, N->a->name, N->seed, N->n.cached ? "cached" : "trained", 100 * N->n.acc_before,
                    100 * N->n.acc_after, N->n.delta_global);
        if (C->o->log) fflush(C->o->log);
        pthread_mutex_unlock(&C->mu);
    }
}

/* An auto instance is done: its counterexample (x[n], or NULL) for the smooth instance that waits. */
static void lg_run_publish(lg_run_ctx *C, lg_run_inst *I, const double *x, int n)
{
    double *c = x ? malloc((size_t)n * sizeof *c) : NULL;
    if (c) memcpy(c, x, (size_t)n * sizeof *c);
    pthread_mutex_lock(&C->mu);
    I->cex = c;
    I->finished = 1;
    pthread_cond_broadcast(&C->cv);
    pthread_mutex_unlock(&C->mu);
}

/* The smooth mode's first try: the counterexample auto found on the ReLU net of the same instance,
 * through the one witness gate on the smooth net (DESIGN.md §3). 1 accepted (rep holds the verdict
 * and the witness), 0 not (no counterexample, or rejected), −1 out of memory. Waits for the auto
 * instance: it precedes this one in todo, so a worker holds it already. */
static int lg_run_try_auto_cex(lg_run_ctx *C, const lg_run_inst *I, const lg_net *smooth, const lg_prop *prop,
                               double *y, lg_verify_report *rep)
{
    if (I->auto_ix < 0) return 0;
    const lg_run_inst *A = &C->todo[I->auto_ix];
    pthread_mutex_lock(&C->mu);
    while (!A->finished && C->st == LG_OK) pthread_cond_wait(&C->cv, &C->mu);
    const double *cex = A->finished ? A->cex : NULL;
    pthread_mutex_unlock(&C->mu);
    if (!cex) return 0;
    double t0 = lg_now();
    size_t n = (size_t)smooth->n_in;
    double *x = malloc(n * sizeof *x);
    if (!x) return -1;
    for (int c = 0; c < prop->n_cases; c++) {
        memcpy(x, cex, n * sizeof *x); /* the gate clips x into the case's box */
        int acc = lg_witness_accept(smooth, prop, c, x, y);
        if (acc < 0) break;
        if (acc == 1) {
            rep->verdict = LG_VERDICT_VIOLATED;
            rep->x = x;
            rep->n_in = smooth->n_in;
            rep->violated_case = c;
            snprintf(rep->method, sizeof rep->method, "auto cex");
            rep->bound_method = "none";
            rep->seconds = lg_now() - t0;
            return 1;
        }
    }
    free(x);
    return 0;
}

/* Run one instance; *row receives the JSON row. */
static lg_status lg_run_instance(lg_run_ctx *C, lg_run_inst *I, json_t **row)
{
    const lg_run_net *N = &C->nets[I->net];
    const lg_study_net *n = &N->n;
    const lg_net *relu = &n->relu;
    int n_in = relu->n_in, n_out = lg_net_n_out(relu);
    double eps = C->g->eps[I->eps_i];
    double *x0 = malloc((size_t)n_in * sizeof *x0);
    double *y = malloc(((size_t)n_out + 2 * (size_t)lg_net_max_width(&n->net)) * sizeof *y);
    lg_prop prop;
    memset(&prop, 0, sizeof prop);
    lg_verify_report rep;
    memset(&rep, 0, sizeof rep);
    lg_status st = LG_OK;
    if (!x0 || !y) {
        st = lg_fail(LG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    const lg_dataset *test = C->data[N->data].test;
    for (int i = 0; i < n_in; i++) x0[i] = test->x[(size_t)I->input * (size_t)test->dim + (size_t)i];
    int label = test->y[I->input];
    if ((st = lg_prop_robustness(&prop, x0, n_in, eps, 0.0, 1.0, label, n_out, 0.0)) != LG_OK) goto fail;
    lg_verify_opts vo;
    double timeout = lg_study_arch_timeout(C->g, N->a);
    char settings[256];
    lg_study_verify_settings(C->g, N->a, I->mode, &vo, settings, sizeof settings);
    double delta_tr = 0.0;
    int from_auto = 0;
    if (I->mode == LG_STUDY_SMOOTH && n->smooth) {
        if ((from_auto = lg_run_try_auto_cex(C, I, &n->net, &prop, y, &rep)) < 0) {
            st = lg_fail(LG_ERR_NOMEM, "out of memory");
            goto fail;
        }
        if (!from_auto) st = lg_verify_transfer(relu, &n->net, &prop, &vo, &rep, &delta_tr);
    } else {
        st = lg_verify_run(I->mode == LG_STUDY_DIRECT ? &n->net : relu, &prop, &vo, &rep);
        if (st == LG_ERR_UNSUPPORTED && I->mode == LG_STUDY_DIRECT) {
            /* a net the direct route does not take (a smooth net with Transformer nodes): unknown, with why */
            memset(&rep, 0, sizeof rep);
            rep.verdict = LG_VERDICT_UNKNOWN;
            rep.violated_case = -1;
            lg_outcome_unknown(&rep.how, LG_REASON_UNDECIDED, 0, "not verified directly: %s", lg_errmsg());
            lg_verify_report_method(&rep);
            st = LG_OK;
        }
    }
    if (st != LG_OK) goto fail;
    double delta_ball = 0.0;
    if (n->smooth) {
        lg_dev d;
        if ((st = lg_dev_init(&d, relu, &n->net)) != LG_OK) goto fail;
        st = lg_dev_bound_balls(&d, x0, 1, eps, 0.0, 1.0, &delta_ball, NULL, NULL);
        lg_dev_free(&d);
        if (st != LG_OK) goto fail;
    }
    json_t *fools = json_null();
    if (rep.verdict == LG_VERDICT_VIOLATED && I->mode != LG_STUDY_SMOOTH && I->mode != LG_STUDY_DIRECT && n->smooth) {
        /* the smooth net is fooled only if the one witness gate certifies it (DESIGN.md §3) */
        fools = json_boolean(lg_witness_accept(&n->net, &prop, 0, rep.x, y) == 1);
    }
    char key[1024];
    lg_study_key_instance(key, sizeof key, N->r->name, N->a->name, N->seed, I->input, eps, I->mode, n->hash, settings);
    json_t *un = json_array();
    for (int k = 0; k < rep.n_layers; k++) json_array_append_new(un, json_integer(rep.unstable[k]));
    char hex[17];
    snprintf(hex, sizeof hex, "%016" PRIx64, n->hash);
    /* the z3 mode's theory: the one that ran (the back-end's label z3-exact / z3-lp), else the one
     * asked for unless the row picks per query; null in the other modes */
    const lg_solver_ops *z3 = I->mode == LG_STUDY_Z3 ? vo.solver.row : NULL;
    const lg_outcome *h = &rep.how;
    json_t *theory = !z3 ? json_null()
                     : h->stage == LG_STAGE_BACKEND && h->by && h->by->family && !h->confirm
                         ? json_string(h->theory[0] ? h->theory : h->by->theory)
                     : !(z3->caps & LG_SOLVER_PICKS_THEORY) ? json_string(z3->theory)
                                                            : json_null();
    *row = json_pack("{s:s, s:s, s:s, s:I, s:i, s:i, s:f, s:s, s:s, s:s, s:b, s:f, s:o, s:i, s:I, s:I, s:s, s:f, "
                     "s:f, s:o, s:f, s:s, s:o}",
                     "key", key, "regime", N->r->name, "arch", N->a->name, "seed", (json_int_t)N->seed, "input",
                     I->input, "label", label, "eps", eps, "mode", lg_study_mode_name(I->mode), "verdict",
                     lg_verdict_name(rep.verdict), "reason", rep.how.reason, "timed_out", rep.how.timed_out, "seconds",
                     rep.seconds, "unstable", un, "unstable_total", rep.unstable_total, "nodes",
                     (json_int_t)rep.nodes, "bab_nodes", (json_int_t)rep.bab_nodes, "stage", rep.method,
                     "delta_ball", delta_ball, "delta_transfer", delta_tr, "cex_fools_smooth", fools, "timeout",
                     timeout, "hash", hex, "z3_theory", theory);
    if (!*row) {
        st = lg_fail(LG_ERR_NOMEM, "out of memory (JSON row)");
        goto fail;
    }
    /* provenance: what ran it; the LP work of GLPK or Z3's lp theory (DESIGN.md §3) */
    if (json_object_set_new(*row, "settings", json_string(settings)) ||
        json_object_set_new(*row, "version", json_string(lg_version())) ||
        json_object_set_new(*row, "commit", json_string(lg_commit())) ||
        json_object_set_new(*row, "misclassified", json_boolean(rep.misclassified)) ||
        (I->mode == LG_STUDY_SMOOTH && json_object_set_new(*row, "cex_from_auto", json_boolean(from_auto))) ||
        json_object_set_new(*row, "lps", json_integer((json_int_t)rep.lp.n_lp)) ||
        json_object_set_new(*row, "seconds_lp", json_real(rep.lp.lp_seconds)) ||
        json_object_set_new(*row, "seconds_cert", json_real(rep.lp.cert_seconds)) ||
        json_object_set_new(*row, "seconds_solver", json_real(rep.t_solver)))
        st = lg_fail(LG_ERR_NOMEM, "out of memory (JSON row)");
fail:
    if (I->mode == LG_STUDY_AUTO)
        lg_run_publish(C, I, st == LG_OK && rep.verdict == LG_VERDICT_VIOLATED ? rep.x : NULL, n_in);
    lg_verify_report_free(&rep);
    lg_prop_free(&prop);
    free(x0);
    free(y);
    return st;
}

/* Phase 2 worker: instances. */
static void *lg_run_inst_worker(void *arg)
{
    lg_run_ctx *C = arg;
    for (;;) {
        pthread_mutex_lock(&C->mu);
        long i = C->st == LG_OK && C->next < C->n_todo ? C->next++ : -1;
        pthread_mutex_unlock(&C->mu);
        if (i < 0) return NULL;
        json_t *row = NULL;
        lg_status st = lg_run_instance(C, &C->todo[i], &row);
        if (st == LG_OK) st = lg_study_log_append(&C->results, row, NULL);
        json_decref(row);
        if (st != LG_OK) {
            lg_run_fail(C, st);
            return NULL;
        }
        pthread_mutex_lock(&C->mu);
        C->done++;
        lg_run_progress(C, "instances");
        pthread_mutex_unlock(&C->mu);
    }
}

/* Run order: input-major (input, ε, network, mode), so that at any moment
 * every network has been tried on the same first images: the ETA is
 * representative and an interrupted run is a balanced subset. */
static int lg_run_inst_cmp(const void *pa, const void *pb)
{
    const lg_run_inst *a = pa, *b = pb;
    if (a->input != b->input) return a->input < b->input ? -1 : 1;
    if (a->eps_i != b->eps_i) return a->eps_i < b->eps_i ? -1 : 1;
    if (a->net != b->net) return a->net < b->net ? -1 : 1;
    return (a->mode > b->mode) - (a->mode < b->mode);
}

static lg_status lg_run_pool(lg_run_ctx *C, void *(*fn)(void *), int jobs)
{
    C->next = C->done = 0;
    pthread_t th[256];
    int nt = 0;
    for (int i = 1; i < jobs && i < 256; i++)
        if (pthread_create(&th[nt], NULL, fn, C) == 0) nt++;
    fn(C);
    for (int i = 0; i < nt; i++) pthread_join(th[i], NULL);
    if (C->st != LG_OK) return lg_fail(C->st, "%s", C->err);
    return LG_OK;
}

lg_status lg_study_mkdir(const char *d)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", d) >= (int)sizeof p) return lg_fail(LG_ERR_ARG, "%s: path too long", d);
    for (char *s = p + 1; *s; s++) { /* parents first, like mkdir -p */
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) return lg_fail(LG_ERR_IO, "%s: %s", p, strerror(errno));
        *s = '/';
    }
    if (mkdir(p, 0755) != 0 && errno != EEXIST) return lg_fail(LG_ERR_IO, "%s: %s", d, strerror(errno));
    return LG_OK;
}

/* 1 if key ends with "|lgelu <this version>". */
static int lg_run_key_this_version(const char *key)
{
    char tail[96];
    snprintf(tail, sizeof tail, "|lgelu %s", lg_version());
    size_t k = strlen(key), t = strlen(tail);
    return k >= t && strcmp(key + k - t, tail) == 0;
}

/* A directory with rows: the same grid (DIR/grid.ini) and the same lgelu version, or o->force. */
static lg_status lg_run_check_dir(lg_run_ctx *C)
{
    const lg_study_opts *o = C->o;
    if (C->results.n_keys == 0 && C->networks.n_keys == 0) return LG_OK;
    static const char hint[] = "use a new --out directory, or --force to add only the new rows (the report then uses "
                               "the latest row of each instance)";
    int other = 0;
    for (int i = 0; i < C->results.n_keys; i++) other += !lg_run_key_this_version(C->results.keys[i]);
    for (int i = 0; i < C->networks.n_keys; i++) other += !lg_run_key_this_version(C->networks.keys[i]);
    if (other && !o->force)
        return lg_fail(LG_ERR_ARG, "%s: %d rows were made by another lgelu version (this is %s) or before rows "
                                   "recorded it; %s",
                       o->out_dir, other, lg_version(), hint);
    if (!o->grid_path) return LG_OK;
    char gp[4200];
    snprintf(gp, sizeof gp, "%s/grid.ini", o->out_dir);
    if (access(gp, R_OK) != 0) return LG_OK;
    lg_study_grid old;
    lg_status st = lg_study_grid_load(&old, gp);
    if (st != LG_OK) {
        if (!o->force) {
            char why[512];
            snprintf(why, sizeof why, "%s", lg_errmsg());
            return lg_fail(LG_ERR_ARG, "%s (the grid of the earlier run) cannot be read: %s; %s", gp, why, hint);
        }
    } else {
        char diff[2048];
        int nd = lg_study_grid_diff(&old, C->g, diff, sizeof diff);
        lg_study_grid_free(&old);
        if (nd == 0) return LG_OK;
        if (!o->force)
            return lg_fail(LG_ERR_ARG, "%s holds the rows of another grid: %d change%s against %s: %s; %s", o->out_dir,
                           nd, nd == 1 ? "" : "s", gp, diff, hint);
    }
    /* --force: keep the earlier grid beside the new one */
    for (int k = 1; k < 10000; k++) {
        char name[64], p[4300];
        snprintf(name, sizeof name, "grid-%d.ini", k);
        snprintf(p, sizeof p, "%s/%s", o->out_dir, name);
        if (access(p, F_OK) == 0) continue;
        return lg_study_copy_file(gp, o->out_dir, name);
    }
    return LG_OK;
}

lg_status lg_study_run(const lg_study_grid *g, const lg_study_opts *o, lg_study_stats *stats)
{
    lg_run_ctx C;
    memset(&C, 0, sizeof C);
    memset(stats, 0, sizeof *stats);
    C.g = g;
    C.o = o;
    C.t0 = lg_now();
    pthread_mutex_init(&C.mu, NULL);
    pthread_cond_init(&C.cv, NULL);
    char cache[4096], path[4200];
    lg_status st = lg_study_mkdir(o->out_dir);
    if (st != LG_OK) goto out;
    snprintf(cache, sizeof cache, "%s", o->cache_dir ? o->cache_dir : "");
    if (!o->cache_dir) snprintf(cache, sizeof cache, "%s/nets", o->out_dir);
    if ((st = lg_study_mkdir(cache)) != LG_OK) goto out;
    C.cache = cache;
    snprintf(path, sizeof path, "%s/results.jsonl", o->out_dir);
    if ((st = lg_study_log_open(&C.results, path)) != LG_OK) goto out;
    snprintf(path, sizeof path, "%s/networks.jsonl", o->out_dir);
    if ((st = lg_study_log_open(&C.networks, path)) != LG_OK) goto out;
    if ((st = lg_run_check_dir(&C)) != LG_OK) goto out;
    if (o->grid_path && (st = lg_study_copy_file(o->grid_path, o->out_dir, "grid.ini")) != LG_OK) goto out;

    C.n_nets = g->n_archs * g->n_regimes * g->n_seeds;
    long per_net = (long)g->n_inputs * g->n_eps * LG_STUDY_N_MODES;
    C.nets = calloc((size_t)C.n_nets, sizeof *C.nets);
    C.todo = malloc(((size_t)C.n_nets * (size_t)per_net + 1) * sizeof *C.todo);
    if (!C.nets || !C.todo) {
        st = lg_fail(LG_ERR_NOMEM, "out of memory");
        goto out;
    }
    long p = 0;
    int ni = 0;
    for (int a = 0; a < g->n_archs; a++)
        for (int r = 0; r < g->n_regimes; r++)
            for (int s = 0; s < g->n_seeds; s++, ni++) {
                lg_run_net *N = &C.nets[ni];
                N->r = &g->regimes[r];
                N->a = &g->archs[a];
                N->seed = g->seeds[s];
                if (!lg_study_arch_has_regime(N->a, N->r->name)) continue; /* [arch NAME] regimes */
                const lg_study_mode *modes;
                int n_modes = lg_study_arch_modes(g, N->a, &modes);
                uint64_t hash = lg_study_train_hash(&N->r->tr, N->a, N->seed);
                for (int i = 0; i < g->n_inputs; i++)
                    for (int e = 0; e < g->n_eps; e++)
                        for (int m = 0; m < n_modes; m++, p++) {
                            if (p % o->shard_n != o->shard_k - 1) continue;
                            stats->n_instances++;
                            char key[1024], settings[256];
                            lg_verify_opts vo;
                            lg_study_verify_settings(g, N->a, modes[m], &vo, settings, sizeof settings);
                            lg_study_key_instance(key, sizeof key, N->r->name, N->a->name, N->seed,
                                                  g->input_offset + i, g->eps[e], modes[m], hash, settings);
                            if (lg_study_log_has(&C.results, key)) {
                                stats->n_skipped++;
                                continue;
                            }
                            N->needed = 1;
                            C.todo[C.n_todo++] = (lg_run_inst){ni, g->input_offset + i, e, modes[m], -1, 0, NULL};
                        }
            }
    for (int i = 0; i < C.n_nets; i++) stats->n_nets += C.nets[i].needed;
    if (C.n_todo == 0) goto out;
    if ((st = lg_data_load(&C.train, g->data, "train")) != LG_OK) goto out;
    if ((st = lg_data_load(&C.test, g->data, "test")) != LG_OK) goto out;
    if ((size_t)(g->input_offset + g->n_inputs) > C.test.n) {
        st = lg_fail(LG_ERR_ARG, "the grid asks for test images up to %d but the test set has %zu",
                     g->input_offset + g->n_inputs - 1, C.test.n);
        goto out;
    }
    /* the images each architecture sees: as loaded, or average-pooled to its input size */
    for (int i = 0; i < C.n_nets; i++) {
        lg_run_net *N = &C.nets[i];
        if (!N->needed) continue;
        int k = lg_dataset_pool_factor(&C.test, N->a->dims[0]);
        if (k == 0) {
            st = lg_fail(LG_ERR_ARG,
                         "architecture %s has %d inputs; the %d x %d images give %d, or fewer by k x k average pooling "
                         "with k dividing both sides",
                         N->a->name, N->a->dims[0], C.test.rows, C.test.cols, C.test.dim);
            goto out;
        }
        int d = 0;
        while (d < C.n_data && C.data[d].k != k) d++;
        if (d == C.n_data) {
            if (d == LG_RUN_MAX_DATA) {
                st = lg_fail(LG_ERR_ARG, "too many distinct input sizes (at most %d)", LG_RUN_MAX_DATA);
                goto out;
            }
            C.data[d].k = k;
            C.n_data++;
            if (k == 1) {
                C.data[d].train = &C.train;
                C.data[d].test = &C.test;
            } else {
                if ((st = lg_dataset_pool(&C.data[d].pool_train, &C.train, k)) != LG_OK) goto out;
                if ((st = lg_dataset_pool(&C.data[d].pool_test, &C.test, k)) != LG_OK) goto out;
                C.data[d].train = &C.data[d].pool_train;
                C.data[d].test = &C.data[d].pool_test;
            }
        }
        N->data = d;
    }
    /* phase 1: networks. Training in parallel only with one BLAS thread each. */
    int par = 1;
    for (int r = 0; r < g->n_regimes; r++) par &= g->regimes[r].tr.threads == 1;
    if ((st = lg_run_pool(&C, lg_run_nets_worker, par ? o->jobs : 1)) != LG_OK) goto out;
    /* phase 2: instances */
    qsort(C.todo, (size_t)C.n_todo, sizeof *C.todo, lg_run_inst_cmp);
    for (long i = 0, a = -1; i < C.n_todo; i++) { /* each smooth instance to the auto instance before it */
        lg_run_inst *T = &C.todo[i];
        T->auto_ix = -1;
        if (T->mode == LG_STUDY_AUTO) a = i;
        else if (T->mode == LG_STUDY_SMOOTH && a >= 0 && C.todo[a].net == T->net && C.todo[a].input == T->input &&
                 C.todo[a].eps_i == T->eps_i)
            T->auto_ix = a;
    }
    C.t0 = lg_now();
    st = lg_run_pool(&C, lg_run_inst_worker, o->jobs);
    stats->n_run = C.done;
out:
    stats->seconds = lg_now() - C.t0;
    if (C.nets)
        for (int i = 0; i < C.n_nets; i++) lg_study_net_free(&C.nets[i].n);
    free(C.nets);
    for (long i = 0; C.todo && i < C.n_todo; i++) free(C.todo[i].cex);
    free(C.todo);
    lg_dataset_free(&C.train);
    lg_dataset_free(&C.test);
    for (int d = 0; d < C.n_data; d++) {
        lg_dataset_free(&C.data[d].pool_train);
        lg_dataset_free(&C.data[d].pool_test);
    }
    lg_study_log_close(&C.results);
    lg_study_log_close(&C.networks);
    pthread_mutex_destroy(&C.mu);
    pthread_cond_destroy(&C.cv);
    return st;
}
