/* soundfuzz_pool.c — the pool class: ONNX graphs with MaxPool /
 * GlobalMaxPool, judged on the graph's own semantics (soundfuzz.h,
 * lg_fuzz_pool). The reference evaluator below reads the graph description
 * tests/onnx_poolfuzz.py writes beside each file and computes conv, relu,
 * max over each window and gemm in exact rationals (GMP), sharing no code
 * with the importer's rewrite (onnx/onnx_conv.c) or lgelu's forward pass. */
#include "soundfuzz.h"
#include "test_solver.h"

#include <gmp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/netfile.h"
#include "core/rng.h"
#include "oracle.h"
#include "verify/verify.h"
#include "onnx/load.h"

enum { FP_CONV, FP_RELU, FP_MAXPOOL, FP_FLATTEN, FP_GEMM };

typedef struct fp_op {
    int kind;
    int co, kh, kw, sh, sw, ph, pw; /* conv; maxpool uses kh, kw; gemm: co = M, kh = N */
    double *w, *b;
} fp_op;

typedef struct fp_graph {
    int c, h, w; /* input */
    int n_ops;
    fp_op ops[16];
    int n_out;
} fp_graph;

static void fp_free(fp_graph *g)
{
    for (int i = 0; i < g->n_ops; i++) {
        free(g->ops[i].w);
        free(g->ops[i].b);
    }
    memset(g, 0, sizeof *g);
}

/* n hex floats after the next ':' of *p. */
static double *fp_nums(char **p, size_t n)
{
    char *q = strchr(*p, ':');
    if (!q) return NULL;
    q++;
    double *v = malloc((n ? n : 1) * sizeof *v);
    LG_ASSERT(v);
    for (size_t i = 0; i < n; i++) {
        char *end;
        v[i] = strtod(q, &end);
        if (end == q) {
            free(v);
            return NULL;
        }
        q = end;
    }
    *p = q;
    return v;
}

/* Read DIR/g<i>.txt; returns 0 or −1 (malformed). Shapes are tracked to size the outputs. */
static int fp_read(fp_graph *g, const char *path)
{
    memset(g, 0, sizeof *g);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char *line = malloc(1 << 16);
    LG_ASSERT(line);
    int ok = fgets(line, 1 << 16, f) && sscanf(line, "in %d %d %d", &g->c, &g->h, &g->w) == 3;
    int C = g->c, H = g->h, W = g->w, n = C * H * W;
    while (ok && fgets(line, 1 << 16, f) && g->n_ops < 16) {
        fp_op *o = &g->ops[g->n_ops];
        char *p = line;
        if (!strncmp(line, "conv", 4)) {
            o->kind = FP_CONV;
            ok = sscanf(line, "conv %d %d %d %d %d %d %d", &o->co, &o->kh, &o->kw, &o->sh, &o->sw, &o->ph, &o->pw) == 7;
            if (ok) o->w = fp_nums(&p, (size_t)o->co * (size_t)C * (size_t)o->kh * (size_t)o->kw);
            if (ok && o->w) o->b = fp_nums(&p, (size_t)o->co);
            ok = ok && o->w && o->b;
            H = (H + 2 * o->ph - o->kh) / o->sh + 1, W = (W + 2 * o->pw - o->kw) / o->sw + 1, C = o->co;
            n = C * H * W;
        } else if (!strncmp(line, "relu", 4)) {
            o->kind = FP_RELU;
        } else if (!strncmp(line, "maxpool", 7)) {
            o->kind = FP_MAXPOOL;
            ok = sscanf(line, "maxpool %d %d %d %d %d %d", &o->kh, &o->kw, &o->sh, &o->sw, &o->ph, &o->pw) == 6 &&
                 o->kh >= 1 && o->kw >= 1 && o->sh >= 1 && o->sw >= 1 && o->ph >= 0 && o->pw >= 0;
            if (ok)
                H = (H + 2 * o->ph - o->kh) / o->sh + 1, W = (W + 2 * o->pw - o->kw) / o->sw + 1, n = C * H * W;
        } else if (!strncmp(line, "flatten", 7)) {
            o->kind = FP_FLATTEN;
            H = 1, W = 1, C = n;
        } else if (!strncmp(line, "gemm", 4)) {
            o->kind = FP_GEMM;
            ok = sscanf(line, "gemm %d %d", &o->co, &o->kh) == 2 && o->kh == n;
            if (ok) o->w = fp_nums(&p, (size_t)o->co * (size_t)o->kh);
            if (ok && o->w) o->b = fp_nums(&p, (size_t)o->co);
            ok = ok && o->w && o->b;
            n = C = o->co, H = W = 1;
        } else {
            ok = 0;
        }
        g->n_ops++;
    }
    g->n_out = n;
    free(line);
    fclose(f);
    return ok && g->n_ops > 0 ? 0 : -1;
}

/* y[g->n_out] (initialised) = the graph at x[c·h·w], exactly. */
static void fp_eval(const fp_graph *g, const double *x, mpq_t *y)
{
    int C = g->c, H = g->h, W = g->w, n = C * H * W, cap = 256; /* the generator's shapes stay far below */
    mpq_t *a = malloc(2 * (size_t)cap * sizeof *a), *b = a + cap, t;
    LG_ASSERT(a);
    for (int i = 0; i < 2 * cap; i++) mpq_init(a[i]);
    mpq_init(t);
    for (int i = 0; i < n; i++) mpq_set_d(a[i], x[i]);
    for (int k = 0; k < g->n_ops; k++) {
        const fp_op *o = &g->ops[k];
        if (o->kind == FP_CONV) {
            int Ho = (H + 2 * o->ph - o->kh) / o->sh + 1, Wo = (W + 2 * o->pw - o->kw) / o->sw + 1;
            LG_ASSERT(o->co * Ho * Wo <= cap && n <= cap);
            for (int q = 0; q < o->co; q++)
                for (int i = 0; i < Ho; i++)
                    for (int j = 0; j < Wo; j++) {
                        mpq_t *z = &b[(q * Ho + i) * Wo + j];
                        mpq_set_d(*z, o->b[q]);
                        for (int c = 0; c < C; c++)
                            for (int u = 0; u < o->kh; u++)
                                for (int v = 0; v < o->kw; v++) {
                                    int r = i * o->sh - o->ph + u, s = j * o->sw - o->pw + v;
                                    if (r < 0 || r >= H || s < 0 || s >= W) continue; /* zero padding */
                                    mpq_set_d(t, o->w[((q * C + c) * o->kh + u) * o->kw + v]);
                                    mpq_mul(t, t, a[(c * H + r) * W + s]);
                                    mpq_add(*z, *z, t);
                                }
                    }
            C = o->co, H = Ho, W = Wo, n = C * H * W;
        } else if (o->kind == FP_RELU) {
            for (int i = 0; i < n; i++) {
                if (mpq_sgn(a[i]) < 0)
                    mpq_set_ui(b[i], 0, 1);
                else
                    mpq_set(b[i], a[i]);
            }
        } else if (o->kind == FP_MAXPOOL) { /* padding is -inf: only positions inside the input count */
            int Ho = (H + 2 * o->ph - o->kh) / o->sh + 1, Wo = (W + 2 * o->pw - o->kw) / o->sw + 1;
            for (int c = 0; c < C; c++)
                for (int i = 0; i < Ho; i++)
                    for (int j = 0; j < Wo; j++) {
                        mpq_t *z = &b[(c * Ho + i) * Wo + j];
                        int any = 0;
                        for (int u = 0; u < o->kh; u++)
                            for (int v = 0; v < o->kw; v++) {
                                int py = i * o->sh - o->ph + u, px = j * o->sw - o->pw + v;
                                if (py < 0 || py >= H || px < 0 || px >= W) continue;
                                if (!any || mpq_cmp(a[(c * H + py) * W + px], *z) > 0)
                                    mpq_set(*z, a[(c * H + py) * W + px]);
                                any = 1;
                            }
                    }
            H = Ho, W = Wo, n = C * H * W;
        } else if (o->kind == FP_FLATTEN) {
            for (int i = 0; i < n; i++) mpq_set(b[i], a[i]);
            C = n, H = W = 1;
        } else {
            for (int m = 0; m < o->co; m++) {
                mpq_set_d(b[m], o->b[m]);
                for (int i = 0; i < o->kh; i++) {
                    mpq_set_d(t, o->w[(size_t)m * (size_t)o->kh + (size_t)i]);
                    mpq_mul(t, t, a[i]);
                    mpq_add(b[m], b[m], t);
                }
            }
            n = C = o->co, H = W = 1;
        }
        mpq_t *sw = a;
        a = b, b = sw;
    }
    for (int j = 0; j < n; j++) mpq_set(y[j], a[j]);
    mpq_t *base = a < b ? a : b;
    for (int i = 0; i < 2 * cap; i++) mpq_clear(base[i]);
    mpq_clear(t);
    free(base);
}

/* 1 if x lies in [lo, hi] and the graph's exact outputs satisfy some term. */
static int fp_is_cex(const fp_graph *g, const double *lo, const double *hi, int n_terms, const lg_term *terms,
                     const double *x)
{
    int n = g->c * g->h * g->w;
    for (int i = 0; i < n; i++)
        if (!(x[i] >= lo[i] && x[i] <= hi[i])) return 0;
    mpq_t *y = malloc((size_t)g->n_out * sizeof *y), v, t;
    LG_ASSERT(y);
    for (int j = 0; j < g->n_out; j++) mpq_init(y[j]);
    mpq_inits(v, t, NULL);
    fp_eval(g, x, y);
    int hit = 0;
    for (int k = 0; k < n_terms && !hit; k++) {
        int all = 1;
        for (int c = 0; c < terms[k].n_cons && all; c++) {
            mpq_set_d(v, terms[k].cons[c].d);
            for (int j = 0; j < g->n_out; j++) {
                mpq_set_d(t, terms[k].cons[c].coef[j]);
                mpq_mul(t, t, y[j]);
                mpq_add(v, v, t);
            }
            all = mpq_sgn(v) <= 0;
        }
        hit = all;
    }
    for (int j = 0; j < g->n_out; j++) mpq_clear(y[j]);
    mpq_clears(v, t, NULL);
    free(y);
    return hit;
}

static void fp_report(FILE *log, unsigned long seed, long batch, long i, const char *what, const char *mode,
                      const double *x, int n, const char *dir_hint)
{
    fprintf(log, "soundfuzz: WRONG-POOL %s seed=%lu batch=%ld graph %ld%s%s", what, seed, batch, i, mode ? " " : "",
            mode ? mode : "");
    if (x) {
        fprintf(log, " at");
        for (int k = 0; k < n; k++) fprintf(log, " %.17g", x[k]);
    }
    fprintf(log, "\n  reproduce: %s\n", dir_hint);
}

/* One graph: import, compare with the reference at sampled points, build a
 * property around a sampled point, decide it with the exact oracle on the
 * imported net and cross-check that with the reference, then run the driver. */
static long fp_graph_run(const char *dir, unsigned long seed, long batch, long gi, const lg_fuzz_opts *o,
                         lg_fuzz_stats *s, FILE *log, const char *hint)
{
    char path[512];
    snprintf(path, sizeof path, "%s/g%ld.txt", dir, gi);
    fp_graph g;
    if (fp_read(&g, path) != 0) {
        fprintf(log, "soundfuzz: ERROR pool seed=%lu batch=%ld graph %ld: %s is malformed\n", seed, batch, gi, path);
        s->errors++;
        fp_free(&g);
        return 1;
    }
    s->pool_graphs++;
    snprintf(path, sizeof path, "%s/g%ld.onnx", dir, gi);
    lg_net net, dnet;
    memset(&dnet, 0, sizeof dnet);
    lg_status st = lg_net_load(&net, path);
    if (st != LG_OK) { /* every graph here is supported: a refusal is an error too */
        fprintf(log, "soundfuzz: ERROR pool seed=%lu batch=%ld graph %ld: %s\n  reproduce: %s\n", seed, batch, gi,
                lg_errmsg(), hint);
        s->errors++;
        fp_free(&g);
        return 1;
    }
    long bad = 0;
    int n = net.n_in, no = lg_net_n_out(&net);
    /* the exact oracle enumerates ReLU patterns of dense layers: the max-pool nodes' ReLU form, densified */
    lg_net low = {0};
    int shape_ok = n == g.c * g.h * g.w && no == g.n_out && lg_net_lower_max(&low, &net, 0) == LG_OK &&
                   (lg_net_has_conv(&low) ? lg_net_densify(&dnet, &low, 0) : lg_net_copy(&dnet, &low)) == LG_OK;
    lg_net_free(&low);
    if (!shape_ok) {
        fprintf(log, "soundfuzz: WRONG-POOL shape seed=%lu batch=%ld graph %ld: imported %d -> %d, the graph %d -> %d\n"
                     "  reproduce: %s\n", seed, batch, gi, n, no, g.c * g.h * g.w, g.n_out, hint);
        s->pool_wrong++;
        lg_net_free(&net);
        fp_free(&g);
        return 1;
    }
    lg_rng r;
    lg_rng_init(&r, seed ^ 0x9001f00dULL, (uint64_t)(batch * 1000 + gi));
    /* box */
    double *lo = malloc(4 * (size_t)n * sizeof *lo), *hi = lo + n, *x = hi + n, *xs = x + n;
    LG_ASSERT(lo);
    for (int i = 0; i < n; i++) {
        double c = lg_rng_normal(&r), w = lg_rng_below(&r, 8) == 0 ? 0.0 : pow(10.0, -2.0 + 2.0 * lg_rng_uniform(&r));
        lo[i] = c - w, hi[i] = c + w;
        xs[i] = lo[i] + (hi[i] - lo[i]) * lg_rng_uniform(&r); /* the property's anchor */
        if (!(xs[i] >= lo[i] && xs[i] <= hi[i])) xs[i] = lo[i];
    }
    /* the import against the reference at the anchor and 24 points (corners and uniform) */
    int W = lg_net_max_width(&dnet) > no ? lg_net_max_width(&dnet) : no;
    mpq_t *qx = malloc((size_t)n * sizeof *qx), *qy = malloc((size_t)W * sizeof *qy), *ry = malloc((size_t)no * sizeof *ry);
    LG_ASSERT(qx && qy && ry);
    for (int i = 0; i < n; i++) mpq_init(qx[i]);
    for (int j = 0; j < W; j++) mpq_init(qy[j]);
    for (int j = 0; j < no; j++) mpq_init(ry[j]);
    int mism = 0;
    for (int t = 0; t < 25 && !mism; t++) {
        for (int i = 0; i < n; i++) {
            x[i] = t == 0  ? xs[i]
                   : t < 9 ? (lg_rng_below(&r, 2) ? hi[i] : lo[i])
                           : lo[i] + (hi[i] - lo[i]) * lg_rng_uniform(&r);
            mpq_set_d(qx[i], x[i]);
        }
        lg_oracle_forward(&dnet, qx, qy);
        fp_eval(&g, x, ry);
        for (int j = 0; j < no; j++) mism |= !mpq_equal(qy[j], ry[j]);
    }
    if (mism) {
        s->pool_wrong++;
        bad++;
        fp_report(log, seed, batch, gi, "import (the imported net's exact outputs differ from the graph's)", NULL, x, n,
                  hint);
    }
    /* property: 1–2 terms of 1–2 constraints through the anchor's outputs, shifted */
    int n_terms = 1 + (int)lg_rng_below(&r, 2), n_cons[2] = {1 + (int)lg_rng_below(&r, 2), 1 + (int)lg_rng_below(&r, 2)};
    lg_prop p;
    LG_ASSERT(lg_prop_alloc(&p, n, no, n_terms, n_cons) == LG_OK);
    lg_prop_case *C = &p.cases[0];
    memcpy(C->lo, lo, (size_t)n * sizeof *lo);
    memcpy(C->hi, hi, (size_t)n * sizeof *hi);
    fp_eval(&g, xs, ry);
    int mode = (int)lg_rng_below(&r, 6);
    mpq_t v, t;
    mpq_inits(v, t, NULL);
    for (int k = 0; k < n_terms; k++)
        for (int c = 0; c < n_cons[k]; c++) {
            lg_lincon *L = &C->terms[k].cons[c];
            mpq_set_ui(v, 0, 1);
            for (int j = 0; j < no; j++) {
                L->coef[j] = lg_rng_below(&r, 2) ? (double)lg_rng_below(&r, 5) - 2.0 : lg_rng_normal(&r);
                mpq_set_d(t, L->coef[j]);
                mpq_mul(t, t, ry[j]);
                mpq_add(v, v, t);
            }
            double a = mpq_get_d(v);
            /* 0: through the anchor (a near-tie there); 1: anchor inside; 2, 3: anchor outside by 1e-3 or 1e-13 */
            L->d = -a + (mode == 0 ? 0.0 : mode == 1 ? -0.05 : mode == 2 ? 1e-3 : 1e-13) * (1.0 + fabs(a));
        }
    lg_problem prob;
    memset(&prob, 0, sizeof prob);
    prob.net = &dnet, prob.lo = lo, prob.hi = hi, prob.n_terms = n_terms, prob.terms = C->terms;
    double t0 = lg_now();
    if (mode >= 4 && lg_oracle_gap(&prob, v, NULL, NULL) == LG_OK) {
        /* 4: every constant moved by −gap + 1e-13·(1 + |d|) (robust on the import by that margin);
         * 5: by −gap exactly where the doubles allow (the exact depth 0: a closed tie) */
        for (int k = 0; k < n_terms; k++)
            for (int c = 0; c < n_cons[k]; c++) {
                lg_lincon *L = &C->terms[k].cons[c];
                mpq_set_d(t, L->d);
                mpq_sub(t, t, v);
                double d = mpq_get_d(t);
                L->d = isfinite(d) ? d + (mode == 4 ? 1e-13 * (1.0 + fabs(d)) : 0.0) : L->d;
            }
    }
    s->t_oracle += lg_now() - t0;
    mpq_clears(v, t, NULL);
    /* truth: the anchor and the exact oracle on the imported net, checked against each other on the graph */
    int known = fp_is_cex(&g, lo, hi, n_terms, C->terms, xs);
    lg_answer ans = LG_ANSWER_UNKNOWN;
    t0 = lg_now();
    st = lg_oracle_decide(&prob, &ans, qx, NULL);
    s->t_oracle += lg_now() - t0;
    if (st == LG_OK) {
        s->pool_decided++;
        if (ans == LG_ANSWER_UNSAT && known) {
            s->pool_wrong++;
            bad++;
            fp_report(log, seed, batch, gi, "oracle (robust on the import, the graph has a counterexample)", NULL, xs, n,
                      hint);
        }
        if (ans == LG_ANSWER_SAT) {
            /* the exact witness rounded to double need not stay a counterexample; judge it only when it does on the import */
            for (int i = 0; i < n; i++) x[i] = mpq_get_d(qx[i]);
            if (lg_oracle_is_counterexample(&prob, x)) {
                if (!fp_is_cex(&g, lo, hi, n_terms, C->terms, x)) {
                    s->pool_wrong++;
                    bad++;
                    fp_report(log, seed, batch, gi, "oracle (a counterexample of the import is none of the graph)",
                              NULL, x, n, hint);
                }
                known = 1;
            }
        }
    }
    s->pool_known += known;
    /* the driver: three modes a graph */
    static const char *const solvers[3] = {"auto", "glpk", "z3"};
    static const lg_bab_mode babs[3] = {LG_BAB_AUTO, LG_BAB_RELU, LG_BAB_INPUT};
    for (int m = 0; m < 3; m++) {
        lg_verify_opts vo = lg_verify_opts_default();
        vo.solver = lg_test_solver(solvers[m]);
        vo.bab.mode = babs[(m + gi) % 3];
        vo.attack = (gi + m) % 2 == 0;
        vo.timeout_s = o->timeout_s;
        vo.seed = (unsigned long)gi;
        vo.bab.threads = 1;
        vo.refine = (lg_refine_mode)o->refine;
        vo.bab.cuts = o->cuts;
        char mstr[96];
        snprintf(mstr, sizeof mstr, "--solver %s --bab %s%s", lg_solver_pick_name(&vo.solver), lg_bab_mode_name(vo.bab.mode),
                 vo.attack ? "" : " --no-attack");
        lg_verify_report rep;
        t0 = lg_now();
        st = lg_verify_run(&net, &p, &vo, &rep);
        s->t_verify += lg_now() - t0;
        s->pool_runs++;
        if (st != LG_OK) {
            s->errors++;
            bad++;
            fprintf(log, "soundfuzz: ERROR pool seed=%lu batch=%ld graph %ld %s: %s\n  reproduce: %s\n", seed, batch, gi,
                    mstr, lg_errmsg(), hint);
            continue;
        }
        if (rep.verdict == LG_VERDICT_ROBUST) {
            s->pool_robust++;
            if (known) {
                s->pool_wrong++;
                bad++;
                fp_report(log, seed, batch, gi, "robust", mstr, xs, n, hint);
            }
        } else if (rep.verdict == LG_VERDICT_VIOLATED) {
            s->pool_violated++;
            if (!rep.x || !fp_is_cex(&g, lo, hi, n_terms, C->terms, rep.x)) {
                s->pool_wrong++;
                bad++;
                fp_report(log, seed, batch, gi, "witness", mstr, rep.x, n, hint);
            }
        }
        if (o->verbose)
            fprintf(log, "soundfuzz: pool batch %ld graph %ld %s: %s (%s; known %d)\n", batch, gi, mstr,
                    lg_verdict_name(rep.verdict), rep.method[0] ? rep.method : rep.how.reason, known);
        lg_verify_report_free(&rep);
    }
    for (int i = 0; i < n; i++) mpq_clear(qx[i]);
    for (int j = 0; j < W; j++) mpq_clear(qy[j]);
    for (int j = 0; j < no; j++) mpq_clear(ry[j]);
    free(qx);
    free(qy);
    free(ry);
    free(lo);
    lg_prop_free(&p);
    lg_net_free(&net);
    lg_net_free(&dnet);
    fp_free(&g);
    return bad;
}

long lg_fuzz_pool(unsigned long seed, long batch, long n, const lg_fuzz_opts *o, lg_fuzz_stats *s, FILE *log)
{
    char dir[256], cmd[1024], hint[1024];
    unsigned long pyseed = seed * 100019UL + (unsigned long)batch;
    snprintf(dir, sizeof dir, "/tmp/lgelu_poolfuzz_%ld_%lu_%ld", (long)getpid(), seed, batch);
    snprintf(cmd, sizeof cmd, "%s %s/tests/onnx_poolfuzz.py %lu %ld %s >/dev/null", LG_PYTHON3, LG_SOURCE_DIR, pyseed,
             n, dir);
    snprintf(hint, sizeof hint,
             "build/lgelu_soundfuzz --seed %lu --start %ld --cases 1 --solver '' (this batch); the graphs: %s "
             "%s/tests/onnx_poolfuzz.py %lu %ld DIR",
             seed, batch * 50 + 24, LG_PYTHON3, LG_SOURCE_DIR, pyseed, n);
    if (system(cmd) != 0) {
        fprintf(log, "soundfuzz: ERROR pool: %s failed (needs python3-onnx, python3-numpy)\n", cmd);
        s->errors++;
        return 1;
    }
    long bad = 0;
    for (long i = 0; i < n; i++) bad += fp_graph_run(dir, seed, batch, i, o, s, log, hint);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(log, "soundfuzz: could not remove %s\n", dir);
    return bad;
}
