/* bab.c — the branch-and-bound driver (bab.h): options, and rounds of
 * nodes from the work list, bounded in parallel (bab_node.c), merged in a
 * fixed order. */
#include "core/clock.h"
#include "verify/bab.h"
#include "verify/bab_tnode.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verify/alpha.h"
#include "verify/bounds.h"
#include "verify/bab_cuts.h"
#include "verify/bab_internal.h"
#include "verify/worklist.h"

lg_bab_opts lg_bab_opts_default(void)
{
    lg_bab_opts o;
    memset(&o, 0, sizeof o);
    o.mode = LG_BAB_AUTO;
    o.threads = 0;
    o.batch = 16;
    o.group = 8;
    o.max_nodes = 2000000;
    o.max_depth = 400;
    o.min_width = 1e-9;
    o.alpha_steps = 10;
    o.alpha_lr = 0.1;
    o.beta = 1;
    o.branch = LG_BAB_BRANCH_FSB;
    o.branch_k = 8;
    o.solver_unstable = 12;
    o.solver = (lg_solver_pick){LG_SOLVER_ONE, lg_solver_glpk};
    o.solver_timeout = 10;
    o.attack_steps = 10;
    o.max_queue_mb = 1024;
    o.root_alpha_steps = -1;
    o.conj = 1;
    o.root_alpha_steps = -1;
    return o;
}

lg_bab_mode lg_bab_pick(lg_bab_mode m, int n_in)
{
    if (m != LG_BAB_AUTO) return m;
    return n_in <= 16 ? LG_BAB_INPUT : LG_BAB_RELU;
}

const char *lg_bab_mode_name(lg_bab_mode m)
{
    switch (m) {
    case LG_BAB_NONE: return "none";
    case LG_BAB_INPUT: return "input";
    case LG_BAB_RELU: return "relu";
    default: return "auto";
    }
}

lg_status lg_bab_mode_parse(const char *s, lg_bab_mode *m)
{
    static const lg_bab_mode all[] = {LG_BAB_AUTO, LG_BAB_NONE, LG_BAB_INPUT, LG_BAB_RELU};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (s && strcmp(s, lg_bab_mode_name(all[i])) == 0) {
            *m = all[i];
            return LG_OK;
        }
    return lg_fail(LG_ERR_ARG, "bab: expected auto, none, input or relu, got '%s'", s ? s : "(null)");
}

/* ---- rounds ---- */

/* Whether round r (0, 1, …) of the search runs the nodes' sub-domain attacks
 * (the short one of every node, the group's longer one; fully split leaves
 * always get theirs). Input splitting: every round. ReLU splitting backs
 * off: after every LG_BAB_ATTACK_BACKOFF attack rounds the gap between
 * attack rounds doubles, up to LG_BAB_ATTACK_GAP_MAX (an attack round that
 * finds a counterexample ends the search). *next is the next attack round,
 * *done the attack rounds so far (both 0 at the start). */
int lg_bab_attack_round(lg_bab_mode mode, long r, long *next, long *done)
{
    if (mode != LG_BAB_RELU) return 1;
    if (r < *next) return 0;
    long gap = 1;
    for (long a = *done / LG_BAB_ATTACK_BACKOFF; a > 0 && gap < LG_BAB_ATTACK_GAP_MAX; a--) gap *= 2;
    if (gap > LG_BAB_ATTACK_GAP_MAX) gap = LG_BAB_ATTACK_GAP_MAX;
    (*done)++;
    *next = r + gap;
    return 1;
}

typedef struct lg_bab_round {
    const lg_bab_ctx *cx;
    lg_bab_node **nodes;
    lg_bab_res *res;
    int nb, group;          /* nodes in the round, nodes per job */
} lg_bab_round;

/* Job i: the nodes [i·group, (i + 1)·group) of the round, bounded together. */
static lg_status lg_bab_job(void *ctx, int i, int thread)
{
    lg_bab_round *r = ctx;
    (void)thread;
    int a = i * r->group, k = r->nb - a < r->group ? r->nb - a : r->group;
    return lg_bab_process_batch(r->cx, r->nodes + a, k, r->res + a);
}

static lg_status lg_bab_ctx_init(lg_bab_ctx *cx, const lg_net *net, const double *lo, const double *hi, int n_terms,
                                 const lg_term *terms, const lg_bab_opts *o, const lg_runctx *run)
{
    memset(cx, 0, sizeof *cx);
    cx->net = net;
    cx->lo = lo;
    cx->hi = hi;
    cx->n_terms = n_terms;
    cx->terms = terms;
    cx->o = o;
    cx->run = run;
    cx->mode = lg_bab_pick(o->mode, net->n_in);
    cx->strategy = cx->mode == LG_BAB_INPUT ? &lg_bab_input_strategy : &lg_bab_relu_strategy;
    cx->n_in = net->n_in;
    cx->n_out = lg_net_n_out(net);
    cx->size = lg_alpha_size(net);
    cx->n_pre = 2 * (size_t)net->n_in + 2 * (size_t)cx->size + lg_bounds_diff_len(net);
    cx->row0 = malloc(((size_t)n_terms + 1) * sizeof *cx->row0);
    if (!cx->row0) return lg_fail(LG_ERR_NOMEM, "bab: out of memory");
    cx->row0[0] = 0;
    for (int t = 0; t < n_terms; t++) {
        if (terms[t].n_cons < 1) return lg_fail(LG_ERR_ARG, "bab: term %d has no constraint", t);
        cx->row0[t + 1] = cx->row0[t] + terms[t].n_cons;
    }
    cx->m = cx->row0[n_terms];
    size_t no = (size_t)cx->n_out;
    cx->C = malloc(((size_t)cx->m * (no + 1) + 1) * sizeof *cx->C);
    if (!cx->C) return lg_fail(LG_ERR_NOMEM, "bab: out of memory");
    cx->d = cx->C + (size_t)cx->m * no;
    for (int t = 0, r = 0; t < n_terms; t++)
        for (int k = 0; k < terms[t].n_cons; k++, r++) {
            memcpy(cx->C + (size_t)r * no, terms[t].cons[k].coef, no * sizeof *cx->C);
            cx->d[r] = terms[t].cons[k].d;
        }
    return LG_OK;
}

int lg_bab_root_alpha_steps(const lg_bab_opts *o, const lg_net *net)
{
    if (o->root_alpha_steps >= 0) return o->root_alpha_steps;
    /* conv nets: off (on the CIFAR max-pool nets it changed no verdict and cost nodes; benchmarks/VERIFY.md
     * "Max-pool nodes") */
    return lg_net_has_conv(net) ? 0 : LG_BAB_ROOT_ALPHA_AUTO;
}

/* Intermediate-layer α-CROWN at the root (lg_bab_root_alpha_steps, Adam
 * rate LG_BAB_ROOT_ALPHA_LR): the unstable neurons of every hidden relu
 * layer after the first, layer by layer (lg_alpha_tighten), each followed by
 * CROWN on the later ones; the result becomes the root's inherited bounds.
 * The α steps get LG_BAB_ROOT_ALPHA_SHARE of the search's time: past it the layers left keep
 * their CROWN bounds (a layer's tightening that did not finish changes
 * nothing, alpha.h) and the search starts. */
static lg_status lg_bab_root_tighten(const lg_bab_ctx *cx, int have_root, double *pre, int *done, lg_bab_out *out)
{
    const lg_net *net = cx->net;
    const lg_bab_opts *o = cx->o;
    lg_runctx share = lg_runctx_share(cx->run, LG_BAB_ROOT_ALPHA_SHARE);
    lg_bounds b;
    *done = 0;
    lg_status st = lg_bab_bounds_start(cx, &b, have_root ? pre : NULL);
    if (st != LG_OK && !b.lo) return st;
    for (int k = 1; k < net->n_layers && st == LG_OK; k++) {
        if (lg_runctx_expired(&share)) break;
        int nt = 0;
        st = lg_alpha_tighten(&b, net, k, lg_bab_root_alpha_steps(o, net), LG_BAB_ROOT_ALPHA_LR, &share, &nt);
        if (st == LG_ERR_TIMEOUT && !lg_runctx_expired(cx->run)) { /* the share is over, not the run */
            st = LG_OK;
            break;
        }
        if (st != LG_OK) break;
        out->root_stabilised += nt;
        if (nt > 0 && k + 1 < net->n_layers) st = lg_bounds_symbolic_unstable_from(&b, net, k + 1);
    }
    if (st == LG_OK && !lg_bab_bounds_empty(&b)) {
        lg_bab_bounds_save(cx, &b, pre);
        *done = 1;
    }
    lg_bounds_free(&b);
    return st;
}

/* The splitting a net's kind allows: Transformer nodes try ReLU splitting (bab_tnode.h), then
 * their inputs on interval bounds; a smooth net its inputs; a piecewise-linear net either. *o
 * becomes so where the kind changes the options; *over = 1 when the ReLU splitting on the
 * Transformer nodes ended the search (out final). */
static lg_status lg_bab_kind_opts(const lg_net *net, int n_terms, const lg_term *terms, const lg_bounds *root,
                                  const lg_runctx *run, lg_bab_out *out, lg_bab_opts *so, const lg_bab_opts **o,
                                  int *over)
{
    /* a smooth net is split on its inputs only (bounds through the certified
     * relaxations, no back-end: DESIGN.md §3 "Smooth activations"): CROWN
     * bounds through the smooth lines per input box, α-CROWN (both line
     * families, warm-started from the parent) on the boxes they leave open */
    const lg_bab_opts *q = *o;
    lg_status st;
    if (net && lg_net_first_tnode(net) >= 0 && q->mode == LG_BAB_RELU && q->solver.mode == LG_SOLVER_NONE && root) {
        /* Transformer nodes: ReLU splitting (bab_tnode.h); left open before the deadline, input
         * splitting below in the time left */
        if ((st = lg_bab_tnode_relu(net, n_terms, terms, root, run, out)) != LG_OK || out->answer != LG_BAB_OPEN ||
            lg_runctx_expired(run)) {
            *over = 1;
            return st;
        }
        memset(out, 0, sizeof *out);
    }
    if (net && lg_net_first_tnode(net) >= 0) { /* Transformer nodes: input splitting on interval bounds */
        if (lg_bab_pick(q->mode, net->n_in) != LG_BAB_INPUT && q->mode != LG_BAB_AUTO && q->mode != LG_BAB_RELU)
            return lg_fail(LG_ERR_UNSUPPORTED, "bab: a network with %s nodes is split on its inputs only",
                           lg_kind_name(net->layers[lg_net_first_tnode(net)].lin.kind));
        if (q->solver.mode != LG_SOLVER_NONE)
            return lg_fail(LG_ERR_UNSUPPORTED, "bab: the back-ends do not take the %s node yet (solver none)",
                           lg_kind_name(net->layers[lg_net_first_tnode(net)].lin.kind));
        *so = *q;
        so->mode = LG_BAB_INPUT;
        so->alpha_steps = 0; /* no α-CROWN through the nodes yet: interval bounds per box */
        so->root_alpha_steps = 0;
        so->conj = 0;
        *o = so;
    } else if (net && lg_bounds_net_smooth(net)) {
        if ((st = lg_bounds_check_direct(net)) != LG_OK) return st;
        if (lg_bab_pick(q->mode, net->n_in) != LG_BAB_INPUT)
            return lg_fail(LG_ERR_UNSUPPORTED, "bab: a smooth network is split on its inputs only");
        if (q->solver.mode != LG_SOLVER_NONE)
            return lg_fail(LG_ERR_UNSUPPORTED, "bab: a smooth network has no back-end (solver none)");
        *so = *q;
        so->root_alpha_steps = 0;
        *o = so;
    } else if ((st = lg_bounds_check_net(net)) != LG_OK) {
        return st;
    }
    return LG_OK;
}

/* The root node: the case's box, every term open, the given bounds (or none), and on ReLU
 * splitting the root's α tightening (*r0 owned by the caller). */
static lg_status lg_bab_root(lg_bab_ctx *cx, const double *lo, const double *hi, int n_terms, const lg_bounds *root,
                             const lg_bab_opts *o, const lg_runctx *run, lg_bab_out *out, lg_bab_node **r0p)
{
    lg_bab_node *r0 = lg_bab_node_new(cx);
    if (!r0) return lg_fail(LG_ERR_NOMEM, "bab: out of memory");
    memcpy(r0->lo, lo, (size_t)cx->n_in * sizeof *lo);
    memcpy(r0->hi, hi, (size_t)cx->n_in * sizeof *hi);
    memset(r0->open, 1, (size_t)n_terms);
    double *pre = r0->pre; /* the node's own storage */
    if (root) lg_bab_bounds_save(cx, root, pre);
    else r0->pre = NULL;
    if (cx->mode == LG_BAB_RELU && lg_bab_root_alpha_steps(o, cx->net) > 0) {
        int done = 0;
        double t_tight = lg_now();
        lg_status st = lg_bab_root_tighten(cx, root != NULL, pre, &done, out);
        if (st != LG_OK) {
            free(r0);
            return st;
        }
        if (done) r0->pre = pre;
        if (run->verbose)
            fprintf(stderr, "bab-relu: root alpha tightening made %ld neurons stable (%.2f s)\n", out->root_stabilised,
                    lg_now() - t_tight);
    }
    r0->id = 0;
    *r0p = r0;
    return LG_OK;
}

/* Open nodes kept at most (*max_queue): max_queue_mb of node memory, and half the run's memory
 * cap (bab.h); returns the hard stop, the whole cap (at least one round past the guard). */
static size_t lg_bab_queue_caps(const lg_bab_ctx *cx, const lg_bab_opts *o, const lg_runctx *run, int batch,
                                size_t *max_queue)
{
    size_t node_bytes = lg_bab_node_bytes(cx) + 64;
    double mb = o->max_queue_mb > 0 ? o->max_queue_mb : 1024;
    if (run->memory_mb > 0 && run->memory_mb / 2 < mb) mb = run->memory_mb / 2;
    *max_queue = (size_t)(mb * 1048576.0 / (double)node_bytes);
    if (*max_queue < 32) *max_queue = 32;
    size_t hard_queue = SIZE_MAX;
    if (run->memory_mb > 0) {
        double h = run->memory_mb * 1048576.0 / (double)node_bytes;
        hard_queue = h < (double)(SIZE_MAX / 2) ? (size_t)h : SIZE_MAX / 2;
        if (hard_queue < *max_queue + 2 * (size_t)batch + 1) hard_queue = *max_queue + 2 * (size_t)batch + 1;
    }
    return hard_queue;
}

/* 1 (out says why) when the search stops before the next round: the deadline, the node limit,
 * or the memory cap. */
static int lg_bab_stop(const lg_worklist *wl, const lg_bab_opts *o, const lg_runctx *run, int batch,
                       size_t hard_queue, lg_bab_out *out)
{
    if (lg_runctx_expired(run)) {
        lg_outcome_unknown(&out->how, LG_REASON_TIMEOUT, 1, "timeout");
        return 1;
    }
    if (out->nodes >= o->max_nodes) {
        lg_outcome_unknown(&out->how, LG_REASON_LIMIT, 0, "node limit (%ld)", o->max_nodes);
        return 1;
    }
    if (lg_worklist_size(wl) + 2 * (size_t)batch > hard_queue) { /* a round adds up to 2·batch */
        out->out_of_memory = 1;
        lg_outcome_unknown(&out->how, LG_REASON_MEMORY, 0, "memory limit (%zu open nodes, %.0f MB)",
                           lg_worklist_size(wl), run->memory_mb);
        return 1;
    }
    return 0;
}

/* The search's state across rounds (lg_bab_run owns every pointer). */
typedef struct lg_bab_loop {
    lg_bab_ctx *cx;
    lg_worklist *wl;
    lg_bab_node **nodes; /* the round's nodes */
    lg_bab_res *res;     /* their results */
    lg_bab_out *out;
    const lg_runctx *run;
    double *x;           /* the counterexample when found */
    size_t max_queue;    /* open nodes past which children go first */
    long next_id;
    int solver_used;     /* bit i: back-end i closed a node */
    int stuck;
    const char *stuck_why;
    double t_start;
    lg_bab_cuts *cuts;   /* the cuts learnt (bab_cuts.h) */
    const lg_bab_opts *o;
} lg_bab_loop;

/* Node i of the round merged into the search (in batch order: the same for any thread count):
 * its counts, a counterexample (*found_i), or its children pushed; its storage freed. Returns
 * st, or the push's error. */
static lg_status lg_bab_merge(lg_bab_loop *lp, int i, lg_status st, int *found_i)
{
    lg_bab_res *rs = &lp->res[i];
    lg_bab_node **nodes = lp->nodes;
    lg_bab_out *out = lp->out;
    out->nodes++;
    if (nodes[i]->depth > out->max_depth) out->max_depth = nodes[i]->depth;
    out->t_bounds += rs->t_bounds;
    out->t_solver += rs->t_solver;
    out->solver_calls += rs->solver_calls;
    out->solver_nodes += rs->solver_nodes;
    lg_lp_stats_add(&out->lp, &rs->lp);
    lp->solver_used |= rs->solver_closed;
    if (rs->cut.n > 0) {
        if (st == LG_OK) st = lg_bab_cuts_add(lp->cuts, rs->cut.n, rs->cut.idx, rs->cut.sgn);
        if (lp->o->on_cut) lp->o->on_cut(lp->o->on_cut_ctx, rs->cut.n, rs->cut.idx, rs->cut.sgn);
        out->cuts++;
    }
    free(rs->cut.idx);
    if (lp->run->verbose && nodes[i]->id == 0 && rs->kind == LG_BK_SPLIT)
        fprintf(stderr, "bab-%s: root bound %.4g (plain slopes %.4g), %.2f s\n", lg_bab_mode_name(lp->cx->mode),
                rs->key, rs->pkey, lg_now() - lp->t_start);
    if (st == LG_OK && *found_i < 0 && rs->kind == LG_BK_FOUND) {
        *found_i = i;
        memcpy(lp->x, rs->x, (size_t)lp->cx->n_in * sizeof *lp->x);
    }
    if (st == LG_OK && *found_i < 0 && rs->kind == LG_BK_SPLIT) {
        lg_bab_node *c[2] = {rs->c0, rs->c1};
        /* memory guard: past max_queue open nodes, children go first (depth first), so the
         * list grows by at most a batch per level; the order still depends only on the
         * nodes, not on threads */
        int dfs = lg_worklist_size(lp->wl) >= lp->max_queue;
        for (int k = 0; k < 2; k++) {
            c[k]->id = lp->next_id++;
            c[k]->key = rs->key;
            c[k]->pkey = rs->pkey;
            double key = dfs ? -1e15 - (double)c[k]->id : rs->key;
            if (st == LG_OK) st = lg_worklist_push(lp->wl, key, c[k]->id, c[k]);
            if (st != LG_OK) lg_bab_node_free(c[k]);
        }
        rs->c0 = rs->c1 = NULL;
    }
    if (rs->kind == LG_BK_STUCK && !lp->stuck) {
        lp->stuck = 1;
        lp->stuck_why = rs->why;
    }
    lg_bab_node_free(rs->c0);
    lg_bab_node_free(rs->c1);
    free(rs->x);
    memset(rs, 0, sizeof *rs);
    lg_bab_node_free(nodes[i]);
    nodes[i] = NULL;
    return st;
}

lg_status lg_bab_run(const lg_net *net, const double *lo, const double *hi, int n_terms, const lg_term *terms,
                     const lg_bounds *root, const lg_bab_opts *o, const lg_runctx *run, lg_bab_out *out, double *x)
{
    memset(out, 0, sizeof *out);
    lg_bab_opts so;
    int over = 0;
    lg_status st = lg_bab_kind_opts(net, n_terms, terms, root, run, out, &so, &o, &over);
    if (st != LG_OK || over) return st;
    lg_bab_ctx cx;
    lg_bab_cuts cuts;
    lg_bab_cuts_init(&cuts);
    lg_worklist wl;
    lg_worklist_init(&wl);
    lg_bab_node **nodes = NULL;
    lg_bab_res *res = NULL;
    int batch = o->batch > 0 ? o->batch : 16;
    int threads = o->threads > 0 ? o->threads : lg_worklist_cores();
    int group = o->group > 0 ? (o->group < batch ? o->group : batch) : 1;
    if ((st = lg_bab_ctx_init(&cx, net, lo, hi, n_terms, terms, o, run)) != LG_OK) goto fail;
    if (cx.mode != LG_BAB_INPUT && cx.mode != LG_BAB_RELU) {
        st = lg_fail(LG_ERR_ARG, "bab: mode %s is not a splitting strategy", lg_bab_mode_name(cx.mode));
        goto fail;
    }
    out->how.stage = cx.mode == LG_BAB_INPUT ? LG_STAGE_INPUT_SPLIT : LG_STAGE_RELU_SPLIT;
    nodes = calloc((size_t)batch, sizeof *nodes);
    res = calloc((size_t)batch, sizeof *res);
    if (!nodes || !res) {
        st = lg_fail(LG_ERR_NOMEM, "bab: out of memory");
        goto fail;
    }
    lg_bab_node *r0 = NULL;
    if ((st = lg_bab_root(&cx, lo, hi, n_terms, root, o, run, out, &r0)) != LG_OK) goto fail;
    if (lg_bab_cuts_on(&cx) && r0->pre) { /* cuts are verified on the root's bounds (bab_cuts.h) */
        cx.root_pre = malloc(cx.n_pre * sizeof *cx.root_pre);
        if (!cx.root_pre) {
            free(r0);
            st = lg_fail(LG_ERR_NOMEM, "bab: out of memory");
            goto fail;
        }
        memcpy(cx.root_pre, r0->pre, cx.n_pre * sizeof *cx.root_pre);
    }
    if ((st = lg_worklist_push(&wl, -INFINITY, 0, r0)) != LG_OK) {
        free(r0);
        goto fail;
    }
    lg_bab_loop lp = {&cx, &wl, nodes, res, out, run, x, 0, 1, 0, 0, NULL, lg_now(), &cuts, o};
    size_t hard_queue = lg_bab_queue_caps(&cx, o, run, batch, &lp.max_queue);
    long round = 0, atk_next = 0, atk_done = 0; /* rounds, and the sub-domain attacks' back-off */
    double t_print = lp.t_start;
    while (lg_worklist_size(&wl) > 0) {
        if (lg_bab_stop(&wl, o, run, batch, hard_queue, out)) break;
        int nb = 0;
        while (nb < batch && lg_worklist_size(&wl) > 0) {
            lg_bab_node *p = lg_worklist_pop(&wl);
            if (cuts.n > 0 && lg_bab_cuts_match(&cuts, p->sign)) { /* refuted by a cut: not bounded */
                out->cut_pruned++;
                lg_bab_node_free(p);
                continue;
            }
            nodes[nb++] = p;
        }
        if (nb == 0) continue;
        cx.attack = lg_bab_attack_round(cx.mode, round++, &atk_next, &atk_done);
        double worst = nodes[0]->key; /* best first: the lowest open bound (progress line) */
        /* jobs of `group` nodes: the grouping depends on the round only, never on the threads */
        lg_bab_round rd = {&cx, nodes, res, nb, group};
        st = lg_worklist_run((nb + group - 1) / group, threads, lg_bab_job, &rd);
        int found_i = -1;
        for (int i = 0; i < nb; i++) st = lg_bab_merge(&lp, i, st, &found_i); /* in batch order */
        if (st != LG_OK) goto fail;
        if ((long)lg_worklist_size(&wl) > out->peak_open) out->peak_open = (long)lg_worklist_size(&wl);
        if (run->verbose && lg_now() - t_print >= 1.0) {
            t_print = lg_now();
            fprintf(stderr, "bab-%s: %ld nodes, %zu open, depth %d, worst bound %.4g, %.1f s\n",
                    lg_bab_mode_name(cx.mode), out->nodes, lg_worklist_size(&wl), out->max_depth, worst,
                    t_print - lp.t_start);
        }
        if (found_i >= 0) {
            out->answer = LG_BAB_FOUND;
            break;
        }
    }
    if (out->answer != LG_BAB_FOUND && lg_worklist_size(&wl) == 0 && !out->how.reason[0]) {
        if (lp.stuck)
            lg_outcome_unknown(&out->how, LG_REASON_LIMIT, 0, "bab: %s with the property still open", lp.stuck_why);
        else out->answer = LG_BAB_PROVED;
    }
    for (int i = 0; lp.solver_used && lg_solver_at(i); i++) /* the last back-end in the table that closed a node */
        if (lp.solver_used & (1 << i)) out->how.by = lg_solver_at(i);
fail:
    if (st == LG_ERR_TIMEOUT) { /* a stage stopped at the deadline: open, nothing of it used */
        st = LG_OK;
        out->answer = LG_BAB_OPEN;
        lg_outcome_unknown(&out->how, LG_REASON_TIMEOUT, 1, "timeout");
    }
    double worst = INFINITY; /* the lowest bound still open (verbose) */
    for (lg_bab_node *p; (p = lg_worklist_pop(&wl)) != NULL;) {
        if (p->key < worst) worst = p->key;
        lg_bab_node_free(p);
    }
    if (run->verbose && isfinite(worst))
        fprintf(stderr, "bab-%s: %ld nodes, lowest open bound %.4g\n", lg_bab_mode_name(cx.mode), out->nodes, worst);
    if (run->verbose && (out->cuts || out->cut_pruned))
        fprintf(stderr, "bab-%s: %ld cuts learnt, %ld nodes refuted by them\n", lg_bab_mode_name(cx.mode), out->cuts,
                out->cut_pruned);
    lg_bab_cuts_free(&cuts);
    free(cx.root_pre);
    lg_worklist_free(&wl);
    free(nodes);
    free(res);
    free(cx.row0);
    free(cx.C);
    return st;
}
