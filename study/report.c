/* report.c — REPORT.md and CSVs from a study directory (report.h). */
#include "study/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "study/grid.h"
#include "study/report_internal.h"
#include "study/results.h"

/* Index of group (arch, regime), added if new. */
static int lg_rep_group(lg_rep *R, const char *arch, const char *regime)
{
    for (int i = 0; i < R->n_groups; i++)
        if (strcmp(R->groups[i].arch, arch) == 0 && strcmp(R->groups[i].regime, regime) == 0) return i;
    if (R->n_groups == LG_REP_MAX_GROUPS) return -1;
    lg_rep_groupst *G = &R->groups[R->n_groups];
    memset(G, 0, sizeof *G);
    snprintf(G->arch, sizeof G->arch, "%s", arch);
    snprintf(G->regime, sizeof G->regime, "%s", regime);
    G->order = 1000000000L + R->n_groups;
    return R->n_groups++;
}

static int lg_rep_eps_index(lg_rep *R, double e)
{
    for (int i = 0; i < R->n_eps; i++)
        if (R->eps[i] == e) return i;
    if (R->n_eps == LG_REP_MAX_EPS) return -1;
    R->eps[R->n_eps] = e;
    return R->n_eps++;
}

/* The cell of an instance row (results.h), from its fields. */
static void lg_rep_cell(json_t *o, char *buf, size_t n)
{
    lg_study_mode m;
    if (lg_study_mode_parse(lg_rep_str(o, "mode"), &m) != 0) {
        snprintf(buf, n, "%s", lg_rep_str(o, "key"));
        return;
    }
    lg_study_key_cell(buf, n, lg_rep_str(o, "regime"), lg_rep_str(o, "arch"), (long)lg_rep_num(o, "seed"),
                      (int)lg_rep_num(o, "input"), lg_rep_num(o, "eps"), m);
}

/* Keep the last row of each cell (file order is append order) in the position of its first; *n_dropped counts
 * the rows replaced. cells (may be NULL) receives cell → row. Replaces *rows. */
static lg_status lg_rep_latest(json_t **rows, int instance, int *n_dropped, json_t **cells)
{
    json_t *pos = json_object(), *kept = json_array();
    if (!pos || !kept) {
        json_decref(pos);
        json_decref(kept);
        return lg_fail(LG_ERR_NOMEM, "out of memory");
    }
    size_t i;
    json_t *o;
    *n_dropped = 0;
    json_array_foreach(*rows, i, o)
    {
        char cell[1024];
        if (instance) lg_rep_cell(o, cell, sizeof cell);
        else snprintf(cell, sizeof cell, "%s|%s|%ld", lg_rep_str(o, "regime"), lg_rep_str(o, "arch"), (long)lg_rep_num(o, "seed"));
        json_t *at = json_object_get(pos, cell);
        if (at) {
            json_array_set(kept, (size_t)json_integer_value(at), o);
            (*n_dropped)++;
        } else {
            json_object_set_new(pos, cell, json_integer((json_int_t)json_array_size(kept)));
            json_array_append(kept, o);
        }
    }
    if (cells) {
        const char *k;
        json_t *v;
        *cells = json_object();
        json_object_foreach(pos, k, v) json_object_set(*cells, k, json_array_get(kept, (size_t)json_integer_value(v)));
    }
    json_decref(pos);
    json_decref(*rows);
    *rows = kept;
    return LG_OK;
}

static lg_status lg_rep_load(lg_rep *R, const char *dir)
{
    char path[4200];
    memset(R, 0, sizeof *R);
    snprintf(R->dir, sizeof R->dir, "%s", dir);
    snprintf(path, sizeof path, "%s/networks.jsonl", dir);
    lg_status st = lg_study_rows_read(path, &R->nets);
    if (st != LG_OK) return st;
    snprintf(path, sizeof path, "%s/results.jsonl", dir);
    if ((st = lg_study_rows_read(path, &R->rows)) != LG_OK) return st;
    if (json_array_size(R->rows) == 0) return lg_fail(LG_ERR_ARG, "%s: no results (run `lgelu study` first)", path);
    if (!(R->versions = json_object()) || !(R->z3_theories = json_object()))
        return lg_fail(LG_ERR_NOMEM, "out of memory");
    size_t i;
    json_t *o;
    json_array_foreach(R->rows, i, o)
    {
        char v[256];
        if (json_is_string(json_object_get(o, "version")))
            snprintf(v, sizeof v, "lgelu %s (commit %s)", lg_rep_str(o, "version"), lg_rep_str(o, "commit"));
        else
            snprintf(v, sizeof v, "no version recorded");
        json_object_set_new(R->versions, v, json_integer(json_integer_value(json_object_get(R->versions, v)) + 1));
    }
    if ((st = lg_rep_latest(&R->rows, 1, &R->n_superseded, &R->index)) != LG_OK) return st;
    json_array_foreach(R->rows, i, o)
    {
        if (lg_rep_mode(o) != LG_STUDY_Z3) continue;
        /* the theory that ran: the row's z3_theory (null when no back-end ran) */
        const char *th = json_is_string(json_object_get(o, "z3_theory")) ? lg_rep_str(o, "z3_theory") : "none";
        json_object_set_new(R->z3_theories, th, json_integer(json_integer_value(json_object_get(R->z3_theories, th)) + 1));
    }
    if ((st = lg_rep_latest(&R->nets, 0, &R->n_nets_superseded, NULL)) != LG_OK) return st;
    json_array_foreach(R->nets, i, o)
    {
        int g = lg_rep_group(R, lg_rep_str(o, "arch"), lg_rep_str(o, "regime"));
        if (g < 0) return lg_fail(LG_ERR_ARG, "more than %d (architecture, regime) groups", LG_REP_MAX_GROUPS);
        lg_rep_groupst *G = &R->groups[g];
        G->n_nets++;
        G->acc_before += lg_rep_num(o, "acc_before");
        G->acc_after += lg_rep_num(o, "acc_after");
        double dg = lg_rep_num(o, "delta_global");
        if (G->n_nets == 1 || dg > G->delta_global) G->delta_global = dg;
        G->smooth |= json_is_true(json_object_get(o, "smooth"));
        /* annealed: λ hardened during training (anneal_start < 1) or by `lgelu anneal` afterwards */
        json_t *tr = json_object_get(o, "train");
        json_t *as = json_object_get(tr, "anneal_start"), *ae = json_object_get(tr, "anneal_epochs");
        G->annealed |= json_is_true(json_object_get(o, "smooth")) &&
                       ((json_is_number(as) && json_number_value(as) < 1.0) ||
                        (json_is_number(ae) && json_number_value(ae) > 0));
        json_t *ord = json_object_get(o, "order");
        if (json_is_integer(ord) && json_integer_value(ord) < G->order) G->order = (long)json_integer_value(ord);
    }
    /* groups in the order of DIR/grid.ini (the grid of the last run) when it is there: architecture, then
     * regime; else the networks' recorded grid order */
    snprintf(path, sizeof path, "%s/grid.ini", dir);
    lg_study_grid g;
    if (access(path, R_OK) == 0 && lg_study_grid_load(&g, path) == LG_OK) {
        for (int k = 0; k < R->n_groups; k++) {
            lg_rep_groupst *G = &R->groups[k];
            int ai = -1, ri = -1;
            for (int a = 0; a < g.n_archs; a++)
                if (strcmp(g.archs[a].name, G->arch) == 0) ai = a;
            for (int r = 0; r < g.n_regimes; r++)
                if (strcmp(g.regimes[r].name, G->regime) == 0) ri = r;
            if (ai >= 0 && ri >= 0) G->order = (long)ai * 100000L + ri;
            else G->order += 500000000L; /* not in the grid: after, in their old order */
        }
        lg_study_grid_free(&g);
    }
    /* groups in grid order (networks first seen without an order keep file order after them) */
    for (int a = 1; a < R->n_groups; a++)
        for (int b = a; b > 0 && R->groups[b - 1].order > R->groups[b].order; b--) {
            lg_rep_groupst t = R->groups[b];
            R->groups[b] = R->groups[b - 1];
            R->groups[b - 1] = t;
        }
    json_array_foreach(R->rows, i, o)
    {
        if (lg_rep_group(R, lg_rep_str(o, "arch"), lg_rep_str(o, "regime")) < 0 ||
            lg_rep_eps_index(R, lg_rep_num(o, "eps")) < 0)
            return lg_fail(LG_ERR_ARG, "too many groups or radii in the results");
        lg_study_mode m;
        if (lg_study_mode_parse(lg_rep_str(o, "mode"), &m) == 0) R->has_mode[m] = 1;
    }
    return LG_OK;
}

static void lg_rep_free(lg_rep *R)
{
    json_decref(R->nets);
    json_decref(R->rows);
    json_decref(R->index);
    json_decref(R->versions);
    json_decref(R->z3_theories);
    memset(R, 0, sizeof *R);
}

/* Per-mode statistics of group g (all ε). */
static void lg_rep_mode_stats(lg_rep *R, int g, lg_study_mode m, lg_rep_modest *S, double *tbuf)
{
    memset(S, 0, sizeof *S);
    int nt = 0;
    size_t i;
    json_t *o;
    json_array_foreach(R->rows, i, o)
    {
        if (!lg_rep_row_in(R, o, g, m)) continue;
        const char *v = lg_rep_str(o, "verdict");
        double s = lg_rep_num(o, "seconds");
        S->n++;
        S->total_s += s;
        tbuf[nt++] = s;
        S->nodes += (long)lg_rep_num(o, "nodes");
        if (strcmp(v, "robust") == 0) S->robust++;
        else if (strcmp(v, "violated") == 0) {
            S->violated++;
            S->misclassified += json_is_true(json_object_get(o, "misclassified"));
        } else {
            S->unknown++;
            if (json_is_true(json_object_get(o, "timed_out"))) S->timeouts++;
        }
        const char *stage = lg_rep_str(o, "stage");
        if (m == LG_STUDY_Z3 || m == LG_STUDY_GLPK) /* the stage names the back-end that decided */
            S->stage_backend += strncmp(stage, lg_study_mode_name(m), strlen(lg_study_mode_name(m))) == 0;
    }
    S->median_s = lg_rep_median(tbuf, nt);
}

/* The row of (group g, seed, input, eps, mode), or NULL (through the key index). */
static json_t *lg_rep_find(lg_rep *R, int g, long seed, int input, double eps, lg_study_mode m)
{
    char key[1024];
    lg_study_key_cell(key, sizeof key, R->groups[g].regime, R->groups[g].arch, seed, input, eps, m);
    return json_object_get(R->index, key);
}

/* Transfer, agreement and unstable statistics of group g (uses the auto rows as the reference). */
static void lg_rep_cross(lg_rep *R, int g, lg_rep_groupst *G, double *buf)
{
    size_t i;
    json_t *o;
    int nd = 0;
    json_array_foreach(R->rows, i, o)
    {
        if (strcmp(lg_rep_str(o, "arch"), G->arch) || strcmp(lg_rep_str(o, "regime"), G->regime)) continue;
        const char *v = lg_rep_str(o, "verdict");
        int e = lg_rep_eps_index(R, lg_rep_num(o, "eps"));
        if (lg_rep_mode(o) == LG_STUDY_AUTO) {
            /* the transfer table counts auto rows only: robust and violated over the same rows */
            json_t *f = json_object_get(o, "cex_fools_smooth");
            if (strcmp(v, "violated") == 0) {
                G->cex_n++;
                G->cex_fool += json_is_true(f);
            }
            if (!json_is_true(json_object_get(o, "misclassified"))) { /* no bounds ran on a misclassified input */
                G->unstable_sum[e] += lg_rep_num(o, "unstable_total");
                G->unstable_n[e]++;
                json_t *u = json_object_get(o, "unstable");
                for (size_t k = 0; k < json_array_size(u) && k < LG_REP_MAX_LAYERS; k++)
                    G->unstable_layer[e][k] += json_number_value(json_array_get(u, k));
                if ((int)json_array_size(u) > G->n_layers) G->n_layers = (int)json_array_size(u);
            }
            buf[nd++] = lg_rep_num(o, "delta_ball");
            long seed = (long)lg_rep_num(o, "seed");
            int input = (int)lg_rep_num(o, "input");
            double eps = lg_rep_num(o, "eps");
            json_t *sm = lg_rep_find(R, g, seed, input, eps, LG_STUDY_SMOOTH);
            if (strcmp(v, "robust") == 0) {
                G->relu_robust++;
                if (sm && strcmp(lg_rep_str(sm, "verdict"), "robust") == 0) G->transfer_robust++;
                if (sm && strcmp(lg_rep_str(sm, "verdict"), "violated") == 0) G->false_robust++;
            }
            /* agreement: every pair of decided verdicts on this instance */
            static const lg_study_mode modes[] = {LG_STUDY_AUTO, LG_STUDY_Z3, LG_STUDY_GLPK};
            const char *vs[3];
            for (int m = 0; m < 3; m++) {
                json_t *x = m == 0 ? o : lg_rep_find(R, g, seed, input, eps, modes[m]);
                vs[m] = x ? lg_rep_str(x, "verdict") : "";
            }
            for (int a = 0; a < 3; a++) /* the ReLU-net modes must agree; smooth is a different network */
                for (int b = a + 1; b < 3; b++) {
                    int da = strcmp(vs[a], "robust") == 0 || strcmp(vs[a], "violated") == 0;
                    int db = strcmp(vs[b], "robust") == 0 || strcmp(vs[b], "violated") == 0;
                    if (!da || !db) continue;
                    G->both_decided++;
                    if (strcmp(vs[a], vs[b]) != 0) {
                        G->disagree++;
                        if (R->n_disagree < LG_REP_MAX_DISAGREE)
                            snprintf(R->disagree[R->n_disagree++], sizeof R->disagree[0],
                                     "%s %s seed %ld input %d eps %g: %s says %s, %s says %s", G->arch, G->regime,
                                     seed, input, eps, lg_study_mode_name(modes[a]), vs[a],
                                     lg_study_mode_name(modes[b]), vs[b]);
                    }
                }
        }
    }
    G->delta_ball_median = lg_rep_median(buf, nd);
    G->delta_ball_max = 0;
    for (int k = 0; k < nd; k++) G->delta_ball_max = fmax(G->delta_ball_max, buf[k]);
}

lg_status lg_study_report(const char *dir, FILE *out)
{
    lg_rep *R = calloc(1, sizeof *R);
    if (!R) return lg_fail(LG_ERR_NOMEM, "out of memory");
    double *buf = NULL;
    lg_status st = lg_rep_load(R, dir);
    if (st != LG_OK) goto fail;
    buf = malloc((json_array_size(R->rows) + 1) * sizeof *buf);
    if (!buf) {
        st = lg_fail(LG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (int g = 0; g < R->n_groups; g++) {
        lg_rep_groupst *G = &R->groups[g];
        if (G->n_nets) {
            G->acc_before /= G->n_nets;
            G->acc_after /= G->n_nets;
        } else {
            G->acc_before = G->acc_after = NAN;
        }
        for (int m = 0; m < LG_STUDY_N_MODES; m++) lg_rep_mode_stats(R, g, (lg_study_mode)m, &G->mode[m], buf);
        lg_rep_cross(R, g, G, buf);
    }
    if ((st = lg_rep_write_csv(R)) != LG_OK) goto fail;
    if ((st = lg_rep_write_plots(R)) != LG_OK) goto fail;
    if ((st = lg_rep_write_md(R, out)) != LG_OK) goto fail;
fail:
    free(buf);
    lg_rep_free(R);
    free(R);
    return st;
}
