/* check_study.c — the study subsystem (study/): grid parsing and its errors,
 * the back-end-only switch of the verify driver, resume after a kill (no
 * lost or duplicated rows), shard + merge equals one unsharded run, a resume
 * that cannot mix (a changed grid refused, --force adds without duplicates,
 * rows of different networks never share a key, another version refused),
 * and the report on a committed results file (tests/fixtures/study).
 * The runner tests train 784-8-10 nets for one epoch on 600 Fashion-MNIST
 * images (skipped without the data); the suite takes about 20 s. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/rng.h"
#include "core/version.h"
#include "study/grid.h"
#include "study/report.h"
#include "study/results.h"
#include "study/run.h"
#include "testutil.h"
#include "test_solver.h"
#include "train/loop.h"
#include "verify/verify.h"

static const char *lg_grid_ok =
    "; a comment\n"
    "[study]\n"
    "archs = 784,8,10 784,16,16,10\n"
    "seeds = 1 2\n"
    "eps = 0.01 0.02\n"
    "inputs = 3\n"
    "input_offset = 5\n"
    "modes = auto glpk\n"
    "timeout = 4\n"
    "[train]\n"
    "epochs = 2\n"
    "lr = 0.01\n"
    "[regime relu]\n"
    "act = relu\n"
    "[regime anneal]\n"
    "act = lgelu\n"
    "anneal_start = 0.1 0.5\n"
    "lambda_target = 40 160 640\n"
    "[regime post]\n"
    "act = gelu\n"
    "anneal_epochs = 1\n"
    "epochs = 3\n";

START_TEST(test_study_grid_parse)
{
    lg_study_grid g;
    ck_assert_int_eq(lg_study_grid_parse(&g, lg_grid_ok, "ok.ini"), LG_OK);
    ck_assert_int_eq(g.n_archs, 2);
    ck_assert_int_eq(g.archs[1].n_dims, 4);
    ck_assert_int_eq(g.archs[1].dims[2], 16);
    ck_assert_str_eq(g.archs[0].name, "784,8,10");
    ck_assert_int_eq(g.n_seeds, 2);
    ck_assert_int_eq(g.n_eps, 2);
    ck_assert_double_eq(g.eps[1], 0.02);
    ck_assert_int_eq(g.n_inputs, 3);
    ck_assert_int_eq(g.input_offset, 5);
    ck_assert_int_eq(g.n_modes, 2);
    ck_assert_int_eq(g.modes[1], LG_STUDY_GLPK);
    ck_assert_double_eq(g.timeout, 4);
    /* relu + 2×3 annealed + post */
    ck_assert_int_eq(g.n_regimes, 8);
    ck_assert_str_eq(g.regimes[0].name, "relu");
    ck_assert_str_eq(g.regimes[1].name, "anneal_s0.1_l40");
    ck_assert_str_eq(g.regimes[6].name, "anneal_s0.5_l640");
    ck_assert_double_eq(g.regimes[6].tr.anneal_start, 0.5);
    ck_assert_double_eq(g.regimes[6].tr.lambda_target, 640);
    ck_assert_double_eq(g.regimes[6].tr.lr, 0.01); /* from [train] */
    ck_assert_int_eq(g.regimes[6].tr.epochs, 2);
    /* λ learns at c·lr as with `lgelu train` (c = 0 would freeze it) */
    ck_assert_double_eq(g.regimes[6].tr.c, lg_train_opts_default().optim.c);
    ck_assert(g.regimes[6].tr.c > 0);
    ck_assert_str_eq(g.regimes[7].name, "post");
    ck_assert_int_eq(g.regimes[7].tr.epochs, 3); /* regime overrides [train] */
    ck_assert_int_eq(g.regimes[7].tr.anneal_epochs, 1);
    /* the cache key: the regime's name does not enter, its options and the seed do */
    lg_study_train t = g.regimes[0].tr;
    uint64_t h = lg_study_train_hash(&t, &g.archs[0], 1);
    ck_assert(h == lg_study_train_hash(&g.regimes[0].tr, &g.archs[0], 1));
    ck_assert(h != lg_study_train_hash(&t, &g.archs[0], 2));
    ck_assert(h != lg_study_train_hash(&t, &g.archs[1], 1));
    t.lr = 0.02;
    ck_assert(h != lg_study_train_hash(&t, &g.archs[0], 1));
    t = g.regimes[0].tr; /* the initialisation: he by default, and part of the key when it is not */
    ck_assert_str_eq(t.init, "he");
    snprintf(t.init, sizeof t.init, "torch");
    ck_assert(h != lg_study_train_hash(&t, &g.archs[0], 1));
    lg_study_grid_free(&g);
    ck_assert_int_eq(lg_study_grid_parse(&g, "[study]\narchs=4,2\neps=0.1\ninputs=1\n[train]\ninit=xavier\n"
                                             "[regime r]\nact=relu\n[regime s]\nact=relu\ninit=torch\n",
                                         "init.ini"),
                     LG_OK);
    ck_assert_str_eq(g.regimes[0].tr.init, "xavier");
    ck_assert_str_eq(g.regimes[1].tr.init, "torch");
    lg_study_grid_free(&g);
    /* [arch NAME]: modes and timeout for one architecture, the rest from [study] */
    ck_assert_int_eq(lg_study_grid_parse(&g,
                                         "[arch 784,16,10]\nmodes = smooth auto\ntimeout = 7\n"
                                         "[study]\narchs=49,4,10 784,16,10\neps=0.1\ninputs=1\nmodes=z3 glpk\n"
                                         "timeout=3\n[regime r]\nact=relu\n",
                                         "arch.ini"),
                     LG_OK);
    const lg_study_mode *ms;
    ck_assert_int_eq(lg_study_arch_modes(&g, &g.archs[0], &ms), 2);
    ck_assert_int_eq(ms[0], LG_STUDY_Z3);
    ck_assert_double_eq(lg_study_arch_timeout(&g, &g.archs[0]), 3);
    ck_assert_int_eq(lg_study_arch_modes(&g, &g.archs[1], &ms), 2);
    ck_assert_int_eq(ms[0], LG_STUDY_SMOOTH);
    ck_assert_int_eq(ms[1], LG_STUDY_AUTO);
    ck_assert_double_eq(lg_study_arch_timeout(&g, &g.archs[1]), 7);
    lg_study_grid_free(&g);
    /* a ViT architecture (its input and classes) and [arch NAME] regimes (a name or its section) */
    ck_assert_int_eq(lg_study_grid_parse(&g,
                                         "[arch 1x28x28,vit:p7,d8,h2,L1,m16,cls,10]\nregimes = relu anneal\n"
                                         "[study]\narchs=784,16,10 1x28x28,vit:p7,d8,h2,L1,m16,cls,10\neps=0.1\n"
                                         "inputs=1\n[regime relu]\nact=relu\n[regime anneal]\nact=lgelu\n"
                                         "anneal_start=0.25\nlambda_target=160 640\n[regime rs]\nact=relu\nrs=0.1\n",
                                         "vit.ini"),
                     LG_OK);
    ck_assert_int_eq(g.archs[1].n_dims, 2);
    ck_assert_int_eq(g.archs[1].dims[0], 784);
    ck_assert_int_eq(g.archs[1].dims[1], 10);
    ck_assert_int_eq(g.n_regimes, 4);
    for (int r = 0; r < g.n_regimes; r++) {
        ck_assert(lg_study_arch_has_regime(&g.archs[0], g.regimes[r].name));
        ck_assert_int_eq(lg_study_arch_has_regime(&g.archs[1], g.regimes[r].name), strcmp(g.regimes[r].name, "rs") != 0);
    }
    lg_study_grid_free(&g);
    /* a patch that does not divide the image */
    ck_assert_int_eq(lg_study_grid_parse(&g, "[study]\narchs=1x28x28,vit:p5,d8,h2,L1,m16,cls,10\neps=0.1\ninputs=1\n"
                                         "[regime r]\nact=relu\n", "badvit.ini"),
                     LG_ERR_FORMAT);
    /* defaults: seed 1, every mode, timeout 30 */
    ck_assert_int_eq(lg_study_grid_parse(&g, "[study]\narchs=4,2\neps=0.1\ninputs=1\n[regime r]\nact=relu\n", "d.ini"),
                     LG_OK);
    ck_assert_int_eq(g.n_seeds, 1);
    ck_assert_int_eq(g.seeds[0], 1);
    ck_assert_int_eq(g.n_modes, LG_STUDY_N_MODES);
    ck_assert_double_eq(g.timeout, 30);
    lg_study_grid_free(&g);
}
END_TEST

/* Bad grids and the "file:line: [section] key" their message must start with. */
static const struct {
    const char *text, *expect;
} lg_grid_bad[] = {
    {"[study]\narchs = 784,8,10\neps = 0.01\ninputs = 2\nmodes = auto fast\n[regime r]\nact=relu\n",
     "bad.ini:5: [study] modes: 'fast' is not a mode"},
    {"[study]\narchs = 784,,10\n", "bad.ini:2: [study] archs: '784,,10' is not an architecture"},
    {"[study]\narchs = 784,8\neps = 2\n", "bad.ini:3: [study] eps: '2' is not a radius"},
    {"[study]\narchs = 784,8\neps = 0.1\ninputs = 0\n", "bad.ini:4: [study] inputs: expected an integer"},
    {"[study]\narchs = 784,8\nsurprise = 1\n", "bad.ini:3: [study] surprise: unknown key"},
    {"[study]\narchs=784,8\neps=0.1\ninputs=1\n[train]\nlr = fast\n", "bad.ini:6: [train] lr: 'fast': expected"},
    {"[study]\narchs=784,8\neps=0.1\ninputs=1\n[regime a]\nact = relu\n\n[regime b]\nact = tanh\n",
     "bad.ini:9: [regime b] act: 'tanh': expected an activation"},
    {"[study]\narchs=784,8\neps=0.1\ninputs=1\n[regime a]\nact = lgelu\nanneal_start = 0.1 1.5\n",
     "bad.ini:7: [regime a] anneal_start: '1.5': expected a number in [0, 1]"},
    {"[study]\narchs=784,8\neps=0.1\ninputs=1\n[regime a]\nact=relu\n[regime a]\nact=gelu\n",
     "bad.ini:8: [regime a] act: regime 'a' defined twice"},
    {"[study]\narchs=784,8\neps=0.1\ninputs=1\n[train]\ninit = zeros\n",
     "bad.ini:6: [train] init: 'zeros': expected he, xavier or torch"},
    {"[study]\narchs=784,8\neps=0.1\ninputs=1\n[extra]\nx=1\n", "bad.ini:6: [extra] x: unknown section"},
    {"[study]\narchs=784,8\neps=0.1\ninputs=1\nthis line has no equals sign\n", "bad.ini:5: syntax error"},
    {"[study]\narchs=784,8\ninputs=1\n[regime a]\nact=relu\n", "bad.ini: [study] needs the keys archs, eps and inputs"},
    {"[study]\narchs=784,8\neps=0.1\ninputs=1\n", "bad.ini: no [regime NAME] section"},
    {"[study]\narchs=784,8 49,8\neps=0.1\ninputs=1\n[arch 784,9]\nmodes=auto\n[regime a]\nact=relu\n",
     "bad.ini:6: [arch 784,9] modes: '784,9' is not one of [study] archs"},
    {"[study]\narchs=784,8\neps=0.1\ninputs=1\n[arch 784,8]\nmodes=auto auto\n[regime a]\nact=relu\n",
     "bad.ini:6: [arch 784,8] modes: 'auto' is given twice"},
    {"[study]\narchs=784,8\neps=0.1\ninputs=1\n[arch 784,8]\ntimeout=-1\n[regime a]\nact=relu\n",
     "bad.ini:6: [arch 784,8] timeout: '-1': expected seconds > 0"},
    {"[study]\narchs=784,8\neps=0.1\ninputs=1\n[arch 784,8]\nseeds=2\n", "bad.ini:6: [arch 784,8] seeds: unknown key"},
};

START_TEST(test_study_grid_errors)
{
    lg_study_grid g;
    const char *text = lg_grid_bad[_i].text, *expect = lg_grid_bad[_i].expect;
    lg_status st = lg_study_grid_parse(&g, text, "bad.ini");
    ck_assert_msg(st == LG_ERR_FORMAT, "case %d: status %d", _i, (int)st);
    ck_assert_msg(strncmp(lg_errmsg(), expect, strlen(expect)) == 0, "case %d: got '%s', want '%s...'", _i,
                  lg_errmsg(), expect);
    ck_assert_ptr_null(g.regimes);
}
END_TEST

START_TEST(test_study_grid_file_missing)
{
    lg_study_grid g;
    ck_assert_int_eq(lg_study_grid_load(&g, "/nonexistent/grid.ini"), LG_ERR_IO);
    ck_assert_int_eq(lg_study_shard_parse("3/2", &(int){0}, &(int){0}), -1);
    int k, n;
    ck_assert_int_eq(lg_study_shard_parse("2/3", &k, &n), 0);
    ck_assert_int_eq(k * 10 + n, 23);
}
END_TEST

/* The back-end-only switch: on a box the bounds alone prove, the normal
 * driver says "bounds" and never calls a solver; backend_only must reach the
 * named back-end (method = its name, nodes counted) with the same verdict. */
START_TEST(test_study_backend_only_reaches_solver)
{
    static const char *solvers[] = {"glpk", "z3"};
    int dims[] = {4, 6, 3};
    lg_net net = {0};
    ck_assert_int_eq(lg_net_init(&net, 2, dims, LG_ACT_RELU), LG_OK);
    lg_rng r;
    lg_rng_init(&r, 7, 0);
    lg_test_randomize(&net, &r, 0.5);
    double x0[4] = {0.3, 0.6, 0.2, 0.8}, y[3], scr[16];
    lg_net_forward(&net, x0, y, scr);
    int label = 0;
    for (int j = 1; j < 3; j++)
        if (y[j] > y[label]) label = j;
    lg_prop p;
    ck_assert_int_eq(lg_prop_robustness(&p, x0, 4, 1e-6, 0, 1, label, 3, 0), LG_OK);
    lg_verify_opts o = lg_verify_opts_default();
    o.timeout_s = 20;
    o.bab.threads = 1;
    lg_verify_report rep;
    ck_assert_int_eq(lg_verify_run(&net, &p, &o, &rep), LG_OK);
    ck_assert_int_eq(rep.verdict, LG_VERDICT_ROBUST);
    ck_assert_str_eq(rep.method, "bounds");
    ck_assert_double_eq(rep.t_solver, 0);
    lg_verify_report_free(&rep);
    for (int s = 0; s < 2; s++) {
        o.solver = lg_test_solver(solvers[s]);
        o.backend_only = 1;
        o.attack = 0;
        o.bab.mode = LG_BAB_NONE;
        ck_assert_int_eq(lg_verify_run(&net, &p, &o, &rep), LG_OK);
        ck_assert_msg(rep.verdict == LG_VERDICT_ROBUST, "%s: verdict %s (%s)", solvers[s], lg_verdict_name(rep.verdict),
                      rep.how.reason);
        /* the stage is the back-end (GLPK's UNSAT is certified: no Z3 in it) */
        ck_assert_msg(strncmp(rep.method, solvers[s], strlen(solvers[s])) == 0, "%s: stage %s", solvers[s], rep.method);
        ck_assert_msg(rep.t_solver > 0, "%s: no time in the back-end", solvers[s]);
        if (strcmp(solvers[s], "glpk") == 0) { /* GLPK's own LP work, reported */
            ck_assert_str_eq(rep.method, "glpk");
            ck_assert_int_gt(rep.lp.n_lp, 0);
            ck_assert(rep.lp.lp_seconds > 0 && rep.lp.lp_seconds <= rep.t_solver);
        }
        lg_verify_report_free(&rep);
    }
    lg_prop_free(&p);
    lg_net_free(&net);
}
END_TEST

/* ---- runner tests on real data ---- */

/* 3 regimes × 2 radii × inputs × 3 modes; 2 inputs under LG_TEST_QUICK (sanitizers), else 3. */
static int lg_run_inputs(void) { return getenv("LG_TEST_QUICK") ? 2 : 3; }
#define LG_RUN_ROWS (3 * 2 * lg_run_inputs() * 3)

static const char *lg_grid_run_text(void)
{
    static char b[1024];
    snprintf(b, sizeof b,
             "[study]\n"
             "archs = 784,8,10\n"
             "eps = 0.01 0.05\n"
             "inputs = %d\n"
             "modes = auto glpk smooth\n"
             "timeout = 5\n"
             "[train]\n"
             "epochs = 1\n"
             "subset = 600\n"
             "[regime relu]\n"
             "act = relu\n"
             "[regime gelu_swap]\n"
             "act = gelu\n"
             "[regime anneal]\n"
             "act = lgelu\n"
             "anneal_start = 0.5\n"
             "lambda_target = 160\n",
             lg_run_inputs());
    return b;
}
#define lg_grid_run lg_grid_run_text()

static char lg_tmpdir[256];

static const char *lg_dir(const char *sub)
{
    static char b[4][512];
    static int k;
    char *p = b[k++ % 4];
    snprintf(p, 512, "%s/%s", lg_tmpdir, sub);
    return p;
}

static void lg_study_setup(void)
{
    snprintf(lg_tmpdir, sizeof lg_tmpdir, "%s", lg_test_tmpfile("_study"));
    ck_assert_int_eq(mkdir(lg_tmpdir, 0755), 0);
}

static void lg_study_teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", lg_tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", lg_tmpdir);
}

static void lg_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static json_t *lg_rows(const char *dir)
{
    char p[600];
    snprintf(p, sizeof p, "%s/results.jsonl", dir);
    json_t *rows = NULL;
    ck_assert_int_eq(lg_study_rows_read(p, &rows), LG_OK);
    return rows;
}

/* Every key once; returns the number of rows. */
static int lg_unique(json_t *rows)
{
    json_t *seen = json_object();
    size_t i;
    json_t *o;
    json_array_foreach(rows, i, o)
    {
        const char *k = json_string_value(json_object_get(o, "key"));
        ck_assert_msg(!json_object_get(seen, k), "duplicated row %s", k);
        json_object_set_new(seen, k, json_true());
    }
    json_decref(seen);
    return (int)json_array_size(rows);
}

static lg_status lg_run(const char *grid_text, const char *out, const char *cache, int k, int n, int jobs)
{
    lg_study_grid g;
    ck_assert_int_eq(lg_study_grid_parse(&g, grid_text, "run.ini"), LG_OK);
    lg_study_opts o = lg_study_opts_default();
    o.out_dir = out;
    o.cache_dir = cache;
    o.shard_k = k;
    o.shard_n = n;
    o.jobs = jobs;
    lg_study_stats s;
    lg_status st = lg_study_run(&g, &o, &s);
    lg_study_grid_free(&g);
    return st;
}

static long lg_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    long n = 0;
    int c;
    while ((c = fgetc(f)) != EOF) n += c == '\n';
    fclose(f);
    return n;
}

START_TEST(test_study_resume_after_kill)
{
    if (!lg_test_have_data()) return;
    const char *grid = lg_dir("grid.ini"), *out = lg_dir("out");
    lg_write(grid, lg_grid_run);
    char res[600];
    snprintf(res, sizeof res, "%s/results.jsonl", out);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char bin[600];
        snprintf(bin, sizeof bin, "%s/lgelu", LG_BINARY_DIR);
        if (!freopen("/dev/null", "w", stdout)) _exit(126);
        execl(bin, bin, "study", grid, "--out", out, "-j", "1", (char *)NULL);
        _exit(127);
    }
    /* kill it (SIGKILL: no cleanup) once a few rows are on disk */
    long n0 = 0;
    for (int t = 0; t < 6000 && (n0 = lg_lines(res)) < 4; t++) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    ck_assert_msg(WIFSIGNALED(status), "the study finished before it could be killed");
    json_t *before = lg_rows(out);
    int n_before = lg_unique(before);
    ck_assert_int_ge(n_before, 4);
    ck_assert_int_lt(n_before, LG_RUN_ROWS);
    /* a torn line, as a kill in the middle of a write would leave */
    FILE *f = fopen(res, "a");
    fputs("{\"key\":\"relu|784,8,10|1|0|0.0", f);
    fclose(f);
    char args[1400];
    snprintf(args, sizeof args, "study '%s' --out '%s' -j 2", grid, out);
    ck_assert_int_eq(lg_test_cli(args, NULL), 0);
    json_t *after = lg_rows(out);
    ck_assert_int_eq(lg_unique(after), LG_RUN_ROWS);
    /* nothing written before the kill was lost or changed */
    for (int i = 0; i < n_before; i++)
        ck_assert(json_equal(json_array_get(before, (size_t)i), json_array_get(after, (size_t)i)));
    /* a third run finds everything done and writes nothing */
    ck_assert_int_eq(lg_test_cli(args, NULL), 0);
    ck_assert_int_eq(lg_lines(res), LG_RUN_ROWS);
    json_decref(before);
    json_decref(after);
}
END_TEST

/* The fields that do not depend on timing: the route `auto` takes (stage) and
 * a verdict cut by the wall-clock timeout depend on the machine's speed. */
static int lg_same_row(json_t *a, json_t *b)
{
    static const char *f[] = {"key", "unstable", "label", "delta_ball", "hash"};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!json_equal(json_object_get(a, f[i]), json_object_get(b, f[i]))) return 0;
    int timed = json_is_true(json_object_get(a, "timed_out")) || json_is_true(json_object_get(b, "timed_out"));
    return timed || json_equal(json_object_get(a, "verdict"), json_object_get(b, "verdict"));
}

START_TEST(test_study_shard_merge_equals_single)
{
    if (!lg_test_have_data()) return;
    const char *cache = lg_dir("nets");
    ck_assert_int_eq(mkdir(cache, 0755), 0);
    ck_assert_int_eq(lg_run(lg_grid_run, lg_dir("single"), cache, 1, 1, 2), LG_OK);
    ck_assert_int_eq(lg_run(lg_grid_run, lg_dir("s1"), cache, 1, 2, 1), LG_OK);
    ck_assert_int_eq(lg_run(lg_grid_run, lg_dir("s2"), cache, 2, 2, 1), LG_OK);
    json_t *a = lg_rows(lg_dir("s1")), *b = lg_rows(lg_dir("s2"));
    int na = lg_unique(a), nb = lg_unique(b);
    ck_assert_int_eq(na + nb, LG_RUN_ROWS);
    ck_assert_int_eq(na, LG_RUN_ROWS / 2);
    const char *in[] = {lg_dir("s1"), lg_dir("s2")};
    char in0[512], in1[512];
    snprintf(in0, sizeof in0, "%s", in[0]);
    snprintf(in1, sizeof in1, "%s", in[1]);
    const char *ins[] = {in0, in1};
    long n = 0;
    ck_assert_int_eq(lg_study_merge(lg_dir("merged"), ins, 2, &n), LG_OK);
    ck_assert_int_eq(n, LG_RUN_ROWS);
    /* merging again adds nothing */
    ck_assert_int_eq(lg_study_merge(lg_dir("merged"), ins, 2, &n), LG_OK);
    json_t *m = lg_rows(lg_dir("merged")), *s = lg_rows(lg_dir("single"));
    ck_assert_int_eq(lg_unique(m), LG_RUN_ROWS);
    ck_assert_int_eq(lg_unique(s), LG_RUN_ROWS);
    json_t *idx = json_object();
    size_t i;
    json_t *o;
    json_array_foreach(s, i, o) json_object_set(idx, json_string_value(json_object_get(o, "key")), o);
    int n_violated = 0, n_backend = 0;
    json_array_foreach(m, i, o)
    {
        const char *k = json_string_value(json_object_get(o, "key"));
        json_t *t = json_object_get(idx, k);
        ck_assert_msg(t && lg_same_row(o, t), "row %s differs between the merged shards and the single run", k);
        n_violated += strcmp(json_string_value(json_object_get(o, "verdict")), "violated") == 0;
        if (strcmp(json_string_value(json_object_get(o, "mode")), "glpk") == 0) {
            /* back-end only: the recorded stage is the back-end, never bounds/attack (a misclassified clean
             * input is decided before any stage runs) */
            const char *stage = json_string_value(json_object_get(o, "stage"));
            int mis = json_is_true(json_object_get(o, "misclassified"));
            ck_assert_msg(mis ? strcmp(stage, "clean input") == 0 : strncmp(stage, "glpk", 4) == 0,
                          "%s: stage %s (misclassified %d)", k, stage, mis);
            n_backend++;
        }
    }
    ck_assert_int_eq(n_backend, LG_RUN_ROWS / 3);
    ck_assert_int_gt(n_violated, 0); /* eps 0.05 on an 8-unit net: some instances fall */
    /* networks.jsonl joined too: one row per network */
    char p[700];
    snprintf(p, sizeof p, "%s/networks.jsonl", lg_dir("merged"));
    ck_assert_int_eq(lg_lines(p), 3);
    /* a conflicting shard is refused */
    snprintf(p, sizeof p, "%s/results.jsonl", in0);
    json_t *r0 = json_deep_copy(json_array_get(a, 0));
    const char *v = json_string_value(json_object_get(r0, "verdict"));
    json_object_set_new(r0, "verdict", json_string(strcmp(v, "robust") == 0 ? "violated" : "robust"));
    char *line = json_dumps(r0, JSON_COMPACT);
    char bad[512];
    snprintf(bad, sizeof bad, "%s", lg_dir("bad"));
    ck_assert_int_eq(mkdir(bad, 0755), 0);
    snprintf(p, sizeof p, "%s/results.jsonl", bad);
    FILE *f = fopen(p, "w");
    fprintf(f, "%s\n", line);
    fclose(f);
    free(line);
    const char *ins2[] = {in0, bad};
    ck_assert_int_eq(lg_study_merge(lg_dir("merged2"), ins2, 2, &n), LG_ERR_FORMAT);
    json_decref(r0);
    json_decref(idx);
    json_decref(a);
    json_decref(b);
    json_decref(m);
    json_decref(s);
}
END_TEST


/* ---- a resume that cannot mix ---- */

/* Two regimes, 2 inputs, 1 radius, 2 modes: 8 rows. */
static const char *lg_grid_mix =
    "[study]\narchs = 784,8,10\neps = 0.02\ninputs = 2\nmodes = auto smooth\ntimeout = 5\n"
    "[train]\nepochs = 1\nsubset = 600\n"
    "[regime relu]\nact = relu\n"
    "[regime anneal]\nact = lgelu\nanneal_start = 0.5\nlambda_target = 160\n";

/* Run grid text (written to a file, so OUT/grid.ini is compared and kept) into out. */
static lg_status lg_run_file(const char *grid_text, const char *name, const char *out, int force, lg_study_stats *s)
{
    const char *path = lg_dir(name);
    lg_write(path, grid_text);
    lg_study_grid g;
    ck_assert_int_eq(lg_study_grid_load(&g, path), LG_OK);
    lg_study_opts o = lg_study_opts_default();
    o.out_dir = out;
    o.grid_path = path;
    o.force = force;
    o.jobs = 2;
    lg_status st = lg_study_run(&g, &o, s);
    lg_study_grid_free(&g);
    return st;
}

/* A copy of text with the first occurrence of from replaced by to (static buffer). */
static const char *lg_replace(const char *text, const char *from, const char *to)
{
    static char b[2048];
    char in[2048];
    snprintf(in, sizeof in, "%s", text);
    const char *at = strstr(in, from);
    ck_assert_ptr_nonnull(at);
    snprintf(b, sizeof b, "%.*s%s%s", (int)(at - in), in, to, at + strlen(from));
    return b;
}

START_TEST(test_study_grid_diff)
{
    lg_study_grid a, b;
    char buf[2048];
    ck_assert_int_eq(lg_study_grid_parse(&a, lg_grid_mix, "a.ini"), LG_OK);
    /* layout and comments do not count */
    const char *same = lg_replace(lg_grid_mix, "timeout = 5\n", "timeout=5.0   ; seconds\n\n; comment\n");
    ck_assert_int_eq(lg_study_grid_parse(&b, same, "b.ini"), LG_OK);
    ck_assert_int_eq(lg_study_grid_diff(&a, &b, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "");
    lg_study_grid_free(&b);
    /* a training option of one regime, the timeout, a regime removed and one added: each named */
    const char *t = lg_replace(lg_grid_mix, "timeout = 5", "timeout = 2");
    t = lg_replace(t, "[regime relu]\nact = relu\n", "[regime relu]\nact = relu\nepochs = 2\n");
    t = lg_replace(t, "[regime anneal]", "[regime annealed]");
    char t2[2048];
    int n2 = snprintf(t2, sizeof t2, "%s[regime rs]\nact = relu\nrs = 0.1\n", t);
    ck_assert(n2 > 0 && (size_t)n2 < sizeof t2);
    ck_assert_int_eq(lg_study_grid_parse(&b, t2, "b.ini"), LG_OK);
    ck_assert_int_eq(lg_study_grid_diff(&a, &b, buf, sizeof buf), 5);
    static const char *want[] = {"[study] timeout: 5 -> 2", "[regime relu] epochs: 1 -> 2", "[regime anneal] removed",
                                 "[regime annealed] added", "[regime rs] added"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) ck_assert_msg(strstr(buf, want[i]), "'%s' not in '%s'", want[i], buf);
    ck_assert_ptr_null(strstr(buf, "[regime anneal] act")); /* a removed regime is said once */
    /* a tiny buffer is cut, not overrun */
    char small[24];
    ck_assert_int_eq(lg_study_grid_diff(&a, &b, small, sizeof small), 5);
    ck_assert_int_lt(strlen(small), sizeof small);
    /* the rs options change the network hash only when the RS loss is on */
    lg_study_train tr = lg_study_train_default();
    uint64_t h0 = lg_study_train_hash(&tr, &a.archs[0], 1);
    tr.rs_eps = 0.1;
    ck_assert(lg_study_train_hash(&tr, &a.archs[0], 1) == h0);
    tr.rs = 0.01;
    uint64_t h1 = lg_study_train_hash(&tr, &a.archs[0], 1);
    ck_assert(h1 != h0);
    tr.rs_eps = 0.2;
    ck_assert(lg_study_train_hash(&tr, &a.archs[0], 1) != h1);
    lg_study_grid_free(&a);
    lg_study_grid_free(&b);
}
END_TEST

START_TEST(test_study_resume_changed_grid_refused)
{
    if (!lg_test_have_data()) return;
    const char *out = lg_dir("mix");
    char out_s[512];
    snprintf(out_s, sizeof out_s, "%s", out);
    lg_study_stats s;
    ck_assert_int_eq(lg_run_file(lg_grid_mix, "g0.ini", out_s, 0, &s), LG_OK);
    ck_assert_int_eq(s.n_run, 8);
    /* the same grid resumes (nothing to do) */
    ck_assert_int_eq(lg_run_file(lg_grid_mix, "g0b.ini", out_s, 0, &s), LG_OK);
    ck_assert_int_eq(s.n_run, 0);
    ck_assert_int_eq(s.n_skipped, 8);
    /* epochs of one regime, or the timeout: refused, naming the change; nothing written */
    const char *epochs = lg_replace(lg_grid_mix, "[regime relu]\nact = relu\n", "[regime relu]\nact = relu\nepochs = 2\n");
    ck_assert_int_eq(lg_run_file(epochs, "g1.ini", out_s, 0, &s), LG_ERR_ARG);
    ck_assert_msg(strstr(lg_errmsg(), "[regime relu] epochs: 1 -> 2"), "message: %s", lg_errmsg());
    ck_assert_msg(strstr(lg_errmsg(), "--force"), "message: %s", lg_errmsg());
    ck_assert_int_eq(lg_run_file(lg_replace(lg_grid_mix, "timeout = 5", "timeout = 2"), "g2.ini", out_s, 0, &s),
                     LG_ERR_ARG);
    ck_assert_msg(strstr(lg_errmsg(), "[study] timeout: 5 -> 2"), "message: %s", lg_errmsg());
    json_t *rows = lg_rows(out_s);
    ck_assert_int_eq(lg_unique(rows), 8);
    json_decref(rows);
    char p[700], line[512];
    snprintf(p, sizeof p, "%s/grid.ini", out_s); /* still the grid of the rows */
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    int epochs_line = 0;
    while (fgets(line, sizeof line, f)) epochs_line |= strcmp(line, "epochs = 2\n") == 0;
    fclose(f);
    ck_assert_int_eq(epochs_line, 0);
    /* the CLI too: a usage error (another --out, or --force), exit status 2 */
    char args[1600];
    snprintf(args, sizeof args, "study '%s' --out '%s' --quiet", lg_dir("g1.ini"), out_s);
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
}
END_TEST

START_TEST(test_study_force_adds_without_duplicates)
{
    if (!lg_test_have_data()) return;
    char out[512];
    snprintf(out, sizeof out, "%s", lg_dir("force"));
    lg_study_stats s;
    ck_assert_int_eq(lg_run_file(lg_grid_mix, "g0.ini", out, 0, &s), LG_OK);
    json_t *before = lg_rows(out);
    /* one regime's recipe changes: --force runs exactly that regime's 4 instances again, under new keys */
    const char *epochs = lg_replace(lg_grid_mix, "[regime relu]\nact = relu\n", "[regime relu]\nact = relu\nepochs = 2\n");
    ck_assert_int_eq(lg_run_file(epochs, "g1.ini", out, 1, &s), LG_OK);
    ck_assert_int_eq(s.n_run, 4);
    ck_assert_int_eq(s.n_skipped, 4);
    /* again: nothing new */
    ck_assert_int_eq(lg_run_file(epochs, "g1b.ini", out, 1, &s), LG_OK);
    ck_assert_int_eq(s.n_run, 0);
    json_t *after = lg_rows(out);
    ck_assert_int_eq(lg_unique(after), 12);
    /* the earlier rows are untouched, and the earlier grid is kept */
    for (size_t i = 0; i < json_array_size(before); i++)
        ck_assert(json_equal(json_array_get(before, i), json_array_get(after, i)));
    char p[700];
    snprintf(p, sizeof p, "%s/grid-1.ini", out);
    ck_assert_int_eq(access(p, R_OK), 0);
    /* rows of different networks never share a key: key → one hash; the relu cells now have two rows with
     * two hashes; every row carries settings, version and commit */
    json_t *hash_of = json_object(), *cells = json_object();
    size_t i;
    json_t *o;
    json_array_foreach(after, i, o)
    {
        const char *k = json_string_value(json_object_get(o, "key")), *h = json_string_value(json_object_get(o, "hash"));
        ck_assert_ptr_nonnull(h);
        ck_assert_msg(strstr(k, h) != NULL, "key %s does not hold its hash %s", k, h);
        json_t *prev = json_object_get(hash_of, k);
        ck_assert(!prev || strcmp(json_string_value(prev), h) == 0);
        json_object_set_new(hash_of, k, json_string(h));
        ck_assert_str_eq(json_string_value(json_object_get(o, "version")), lg_version());
        ck_assert_str_eq(json_string_value(json_object_get(o, "commit")), lg_commit());
        ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(o, "settings")), "timeout=5"));
        char cell[512];
        lg_study_mode m;
        ck_assert_int_eq(lg_study_mode_parse(json_string_value(json_object_get(o, "mode")), &m), 0);
        lg_study_key_cell(cell, sizeof cell, json_string_value(json_object_get(o, "regime")),
                          json_string_value(json_object_get(o, "arch")), (long)json_integer_value(json_object_get(o, "seed")),
                          (int)json_integer_value(json_object_get(o, "input")), json_number_value(json_object_get(o, "eps")), m);
        json_t *hs = json_object_get(cells, cell);
        if (!hs) json_object_set_new(cells, cell, hs = json_object());
        json_object_set_new(hs, h, json_true());
    }
    int two = 0;
    const char *ck;
    json_t *hs;
    json_object_foreach(cells, ck, hs)
    {
        int n = (int)json_object_size(hs);
        ck_assert_int_eq(n, strncmp(ck, "relu|", 5) == 0 ? 2 : 1);
        two += n == 2;
    }
    ck_assert_int_eq(two, 4);
    /* the report counts the latest row of each cell: 8 instances, 4 superseded */
    ck_assert_int_eq(lg_study_report(out, NULL), LG_OK);
    snprintf(p, sizeof p, "%s/REPORT.md", out);
    FILE *f = fopen(p, "r");
    char line[1024];
    int sup = 0;
    while (fgets(line, sizeof line, f)) sup |= strncmp(line, "4 instance rows and 1 network rows were superseded", 50) == 0;
    fclose(f);
    ck_assert_int_eq(sup, 1);
    json_decref(hash_of);
    json_decref(cells);
    json_decref(before);
    json_decref(after);
}
END_TEST

/* Rows of another lgelu version in OUT: refused (keys would not collide, but the report would mix builds). */
START_TEST(test_study_other_version_refused)
{
    char out[512], p[700];
    snprintf(out, sizeof out, "%s", lg_dir("ver"));
    ck_assert_int_eq(mkdir(out, 0755), 0);
    snprintf(p, sizeof p, "%s/results.jsonl", out);
    lg_write(p, "{\"key\":\"relu|784,8,10|1|0|0.02|auto|0123456789abcdef|timeout=5 bab_threads=1|lgelu 0.0.1\"}\n");
    lg_study_grid g;
    ck_assert_int_eq(lg_study_grid_parse(&g, "[study]\narchs = 784,8,10\neps = 0.02\ninputs = 1\nmodes = auto\n"
                                             "[regime relu]\nact = relu\n", "v.ini"), LG_OK);
    lg_study_opts o = lg_study_opts_default();
    o.out_dir = out;
    lg_study_stats s;
    ck_assert_int_eq(lg_study_run(&g, &o, &s), LG_ERR_ARG);
    ck_assert_msg(strstr(lg_errmsg(), "another lgelu version"), "message: %s", lg_errmsg());
    lg_study_grid_free(&g);
}
END_TEST

/* z3 back-end-only rows through the runner: the stage names the theory that
 * ran (auto: the LP theory at 784 inputs; exact when the grid asks), and so
 * does the row's z3_theory; an unknown theory is refused. */
START_TEST(test_study_z3_mode_row)
{
    if (!lg_test_have_data()) return;
    static const char *grids[2] = {
        "[study]\narchs = 784,8,10\neps = 0.01\ninputs = 1\nmodes = z3\ntimeout = 2\n"
        "[train]\nepochs = 1\nsubset = 600\n[regime relu]\nact = relu\n",
        "[study]\narchs = 784,8,10\neps = 0.01\ninputs = 1\nmodes = z3\ntimeout = 2\nz3_theory = exact\n"
        "[train]\nepochs = 1\nsubset = 600\n[regime relu]\nact = relu\n"};
    static const char *const theory[2] = {"lp", "exact"};
    for (int g = 0; g < 2; g++) {
        const char *dir = lg_dir(g ? "z3x" : "z3");
        ck_assert_int_eq(lg_run(grids[g], dir, NULL, 1, 1, 1), LG_OK);
        json_t *rows = lg_rows(dir);
        ck_assert_int_eq(lg_unique(rows), 1);
        json_t *row = json_array_get(rows, 0);
        char stage[16];
        snprintf(stage, sizeof stage, "z3-%s", theory[g]);
        ck_assert_str_eq(json_string_value(json_object_get(row, "stage")), stage);
        ck_assert_str_eq(json_string_value(json_object_get(row, "z3_theory")), theory[g]);
        ck_assert(json_is_integer(json_object_get(row, "lps")));
        json_decref(rows);
    }
    lg_study_grid g, h;
    ck_assert_int_eq(lg_study_grid_parse(&g, "[study]\narchs = 4,2\nz3_theory = fast\n", "bad.ini"), LG_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(lg_errmsg(), "z3_theory"));
    /* a resume cannot mix theories: the grid diff names the change */
    ck_assert_int_eq(lg_study_grid_parse(&g, grids[0], "a.ini"), LG_OK);
    ck_assert_int_eq(lg_study_grid_parse(&h, grids[1], "b.ini"), LG_OK);
    char diff[256];
    ck_assert_int_eq(lg_study_grid_diff(&g, &h, diff, sizeof diff), 1);
    ck_assert_str_eq(diff, "[study] z3_theory: auto -> exact");
    lg_study_grid_free(&g);
    lg_study_grid_free(&h);
}
END_TEST

/* The smooth mode tries the counterexample auto found on the ReLU net
 * first: wherever auto's witness also fools the smooth net (cex_fools_smooth,
 * the exact witness gate), the smooth row of that instance is violated by it
 * (cex_from_auto), with -j 2 as with -j 1. */
START_TEST(test_study_smooth_tries_auto_cex)
{
    if (!lg_test_have_data()) return;
    static const char *grid = "[study]\narchs = 784,8,10\neps = 0.1\ninputs = 4\nmodes = auto smooth\ntimeout = 2\n"
                              "[train]\nepochs = 1\nsubset = 600\n[regime gelu]\nact = gelu\n";
    for (int jobs = 1; jobs <= 2; jobs++) {
        const char *dir = lg_dir(jobs == 1 ? "smoothcex1" : "smoothcex2");
        ck_assert_int_eq(lg_run(grid, dir, NULL, 1, 1, jobs), LG_OK);
        json_t *rows = lg_rows(dir);
        int pairs = 0;
        size_t i, j;
        json_t *a, *s;
        json_array_foreach(rows, i, a)
        {
            if (strcmp(json_string_value(json_object_get(a, "mode")), "auto") != 0) continue;
            int fools = json_is_true(json_object_get(a, "cex_fools_smooth"));
            json_array_foreach(rows, j, s)
            {
                if (strcmp(json_string_value(json_object_get(s, "mode")), "smooth") != 0 ||
                    json_integer_value(json_object_get(s, "input")) != json_integer_value(json_object_get(a, "input")))
                    continue;
                ck_assert(json_is_boolean(json_object_get(s, "cex_from_auto")));
                if (!fools) continue;
                pairs++;
                ck_assert_msg(json_is_true(json_object_get(s, "cex_from_auto")) &&
                                  strcmp(json_string_value(json_object_get(s, "verdict")), "violated") == 0 &&
                                  strcmp(json_string_value(json_object_get(s, "stage")), "auto cex") == 0,
                              "input %d: auto's counterexample fools the smooth net, the smooth row says %s by %s",
                              (int)json_integer_value(json_object_get(s, "input")),
                              json_string_value(json_object_get(s, "verdict")),
                              json_string_value(json_object_get(s, "stage")));
            }
        }
        ck_assert_msg(pairs > 0, "-j %d: no auto counterexample that fools the smooth net at eps 0.1", jobs);
        json_decref(rows);
    }
}
END_TEST

/* Edit dir/results.jsonl in place with the sed script `script` (a planted change to the rows). */
static void lg_sed_results(const char *dir, const char *script)
{
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "sed -i '%s' '%s/results.jsonl'", script, dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* The report on the committed results (tests/fixtures/study, made by
 * `lgelu study grid.ini`): numbers checked against counts made by hand. */
START_TEST(test_study_report_fixture)
{
    const char *dir = lg_dir("rep");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    char cmd[2000], fr[700];
    snprintf(fr, sizeof fr, "%s", lg_test_fixture("study/results.jsonl"));
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' '%s/'", fr, lg_test_fixture("study/networks.jsonl"), dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(lg_study_report(dir, NULL), LG_OK);
    char p[700], line[4096];
    snprintf(p, sizeof p, "%s/modes.csv", dir);
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        /* gelu_swap smooth: 2 robust, 0 violated, 1 unknown of 3; z3 (back-end only) decides none */
        if (strncmp(line, "\"784,16,10\",gelu_swap,smooth,3,2,0,1,", 37) == 0) found |= 1;
        if (strncmp(line, "\"784,16,10\",relu,z3,3,0,0,3,3,", 30) == 0) found |= 2;
        /* glpk (back-end only): its UNSAT must be confirmed by Z3, which times out here: 3 unknown, stage glpk */
        if (strncmp(line, "\"784,16,10\",relu,glpk,3,0,0,3,3,", 32) == 0 && strstr(line, ",3,0\n")) found |= 4;
    }
    fclose(f);
    ck_assert_int_eq(found, 7);
    snprintf(p, sizeof p, "%s/transfer.csv", dir);
    f = fopen(p, "r");
    found = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, ",gelu_swap,") && strstr(line, ",3,2,0,0,0\n")) found |= 1; /* 3 ReLU robust, 2 transfer */
        if (strstr(line, ",anneal_s0.25_l160,") && strstr(line, ",3,3,0,0,0\n")) found |= 2;
    }
    fclose(f);
    ck_assert_int_eq(found, 3);
    snprintf(p, sizeof p, "%s/REPORT.md", dir);
    f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    found = 0;
    while (fgets(line, sizeof line, f)) {
        found |= strstr(line, "## Transfer to the smooth network") ? 1 : 0;
        found |= strstr(line, "No two ReLU-net modes disagreed") ? 2 : 0;
        found |= strstr(line, "| 784,16,10 | gelu_swap | 59.28 | 57.79 |") ? 4 : 0;
        /* the new fields: versions in the header, the RS regime, the new plots */
        found |= strncmp(line, "Made by: lgelu ", 15) == 0 && strstr(line, "(commit ") && strstr(line, "(72 rows") ? 8 : 0;
        found |= strstr(line, "fewest unstable ReLUs at ε = 0.01: **rs_anneal** (0.3 per instance)") ? 16 : 0;
        found |= strstr(line, "(plots/unstable_time_784-16-10.png)") ? 32 : 0;
        found |= strstr(line, "(plots/lambda_784-16-10.png)") ? 64 : 0;
        found |= strstr(line, "superseded") ? 128 : 0;
    }
    fclose(f);
    ck_assert_int_eq(found, 127);
    /* a planted disagreement (glpk says violated where auto proved robust) is reported */
    lg_sed_results(dir, "s/\\(\"key\":\"relu|784,16,10|1|0|0.01|glpk|[^\"]*\".*\"verdict\":\\)\"[a-z]*\"/\\1\"violated\"/");
    ck_assert_int_eq(lg_study_report(dir, NULL), LG_OK);
    snprintf(p, sizeof p, "%s/agreement.csv", dir);
    f = fopen(p, "r");
    found = 0;
    while (fgets(line, sizeof line, f)) found |= strncmp(line, "\"784,16,10\",relu,", 17) == 0 && strstr(line, ",1\n");
    fclose(f);
    ck_assert_int_eq(found, 1);
    /* a --force re-run appends a row of the same instance under another key (another network hash): the
     * report counts only the latest row of each instance and says how many it set aside */
    snprintf(cmd, sizeof cmd,
             "grep '\"key\":\"gelu_swap|784,16,10|1|1|0.01|smooth|' '%s/results.jsonl' | "
             "sed 's/|smooth|[0-9a-f]*|/|smooth|00000000deadbeef|/; s/\"verdict\":\"[a-z]*\"/\"verdict\":\"robust\"/' "
             ">> '%s/results.jsonl'",
             dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(lg_study_report(dir, NULL), LG_OK);
    snprintf(p, sizeof p, "%s/modes.csv", dir);
    f = fopen(p, "r");
    found = 0;
    while (fgets(line, sizeof line, f)) /* was 2 robust 1 unknown of 3; the latest row of input 1 is robust */
        found |= strncmp(line, "\"784,16,10\",gelu_swap,smooth,3,3,0,0,", 37) == 0;
    fclose(f);
    ck_assert_int_eq(found, 1);
    snprintf(p, sizeof p, "%s/REPORT.md", dir);
    f = fopen(p, "r");
    found = 0;
    while (fgets(line, sizeof line, f)) found |= strncmp(line, "1 instance rows and 0 network rows were superseded", 50) == 0;
    fclose(f);
    ck_assert_int_eq(found, 1);
}
END_TEST


/* Two architectures (the fixture's rows, and a copy of them under another architecture): the report's
 * time-per-architecture table counts every regime of each (auto: all 18 decided; z3: 18 timeouts). */
START_TEST(test_study_report_arch_table)
{
    const char *dir = lg_dir("rep3");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    char cmd[4800], fr[700], fn[700];
    snprintf(fr, sizeof fr, "%s", lg_test_fixture("study/results.jsonl"));
    snprintf(fn, sizeof fn, "%s", lg_test_fixture("study/networks.jsonl"));
    snprintf(cmd, sizeof cmd,
             "cp '%s' '%s' '%s/' && sed 's/784,16,10/49,16,10/g' '%s' >> '%s/results.jsonl' && "
             "sed 's/784,16,10/49,16,10/g' '%s' >> '%s/networks.jsonl'",
             fr, fn, dir, fr, dir, fn, dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(lg_study_report(dir, NULL), LG_OK);
    char p[700], line[4096];
    snprintf(p, sizeof p, "%s/REPORT.md", dir);
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        found |= strcmp(line, "## Time per architecture and mode\n") == 0;
        if (strncmp(line, "| 784,16,10 | 784 | 18 / 18 (0) |", 33) == 0 && strstr(line, "| 0 / 18 (18) |")) found |= 2;
        if (strncmp(line, "| 49,16,10 | 49 | 18 / 18 (0) |", 31) == 0) found |= 4;
        found |= strstr(line, "(plots/arch_time.png)") ? 8 : 0;
    }
    fclose(f);
    ck_assert_int_eq(found, 15);
}
END_TEST

/* Without an architecture's z3 rows (an [arch] section left the mode out):
 * no z3 cactus plot is linked, and the other modes are still read. */
START_TEST(test_study_report_mode_left_out)
{
    const char *dir = lg_dir("rep2");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    char cmd[2000], p[700], line[4096], fr[700];
    snprintf(fr, sizeof fr, "%s", lg_test_fixture("study/results.jsonl")); /* lg_test_fixture reuses its buffer */
    snprintf(cmd, sizeof cmd, "grep -v '\"mode\":\"z3\"' '%s' > '%s/results.jsonl' && cp '%s' '%s/'", fr, dir,
             lg_test_fixture("study/networks.jsonl"), dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(lg_study_report(dir, NULL), LG_OK);
    snprintf(p, sizeof p, "%s/REPORT.md", dir);
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    int z3 = 0, glpk = 0;
    while (fgets(line, sizeof line, f)) {
        z3 |= strstr(line, "cactus_784-16-10_z3") != NULL;
        glpk |= strstr(line, "cactus_784-16-10_glpk") != NULL;
    }
    fclose(f);
    ck_assert_int_eq(z3, 0);
    ck_assert_int_eq(glpk, 1);
    /* with the run's grid in DIR/grid.ini, the tables follow its regime order */
    snprintf(p, sizeof p, "%s/grid.ini", dir);
    f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs("[study]\narchs = 784,16,10\neps = 0.01\ninputs = 3\n[regime anneal_s0.25_l160]\nact = lgelu\n"
          "[regime gelu_swap]\nact = gelu\n[regime relu]\nact = relu\n",
          f);
    fclose(f);
    ck_assert_int_eq(lg_study_report(dir, NULL), LG_OK);
    snprintf(p, sizeof p, "%s/REPORT.md", dir);
    f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    int row = 0, at_anneal = 0, at_gelu = 0, at_relu = 0;
    while (fgets(line, sizeof line, f) && !at_relu) {
        row++;
        if (!at_anneal && strstr(line, "| 784,16,10 | anneal_s0.25_l160 |")) at_anneal = row;
        if (!at_gelu && strstr(line, "| 784,16,10 | gelu_swap |")) at_gelu = row;
        if (strstr(line, "| 784,16,10 | relu |")) at_relu = row;
    }
    fclose(f);
    ck_assert(at_anneal > 0 && at_anneal < at_gelu && at_gelu < at_relu);
    /* an archived directory: results.jsonl.gz is read when results.jsonl is missing */
    snprintf(cmd, sizeof cmd, "gzip '%s/results.jsonl' && rm -f '%s/modes.csv'", dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(lg_study_report(dir, NULL), LG_OK);
    snprintf(p, sizeof p, "%s/modes.csv", dir);
    f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    int glpk_rows = 0;
    while (fgets(line, sizeof line, f)) glpk_rows += strstr(line, ",glpk,") != NULL;
    fclose(f);
    ck_assert_int_gt(glpk_rows, 0);
}
END_TEST

/* --out a/b/c in a fresh clone: the missing parents are made (mkdir -p),
 * twice is fine, and a path through a regular file is refused. */
START_TEST(test_study_mkdir_parents)
{
    char base[512], d[700], f[700];
    snprintf(base, sizeof base, "%s", lg_test_tmpfile(".d"));
    snprintf(d, sizeof d, "%s/out/study/x", base);
    ck_assert_int_eq(lg_study_mkdir(d), LG_OK);
    struct stat sb;
    ck_assert_int_eq(stat(d, &sb), 0);
    ck_assert(S_ISDIR(sb.st_mode));
    ck_assert_int_eq(lg_study_mkdir(d), LG_OK);
    snprintf(f, sizeof f, "%s/file", base);
    FILE *fp = fopen(f, "w");
    ck_assert_ptr_nonnull(fp);
    fclose(fp);
    snprintf(d, sizeof d, "%s/file/sub", base);
    ck_assert_int_eq(lg_study_mkdir(d), LG_ERR_IO);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_study_report_empty_dir)
{
    ck_assert_int_eq(lg_study_report(lg_dir(""), NULL), LG_ERR_ARG);
}
END_TEST

/* A small synthetic study directory: architecture 16,8,10, regimes relu,
 * gelu_swap and anneal, 20 inputs at ε = 0.01, modes auto, z3 (its lp
 * theory), glpk and smooth; input 0 is misclassified everywhere (violated,
 * stage "clean input", no unstable ReLUs). auto: anneal and relu decide all
 * 20 and gelu_swap 19, within noise; glpk: anneal 20, gelu_swap 10, relu 12;
 * z3: 5 each; smooth: anneal transfers 18 of its 19 robust, gelu_swap 5. */
static void lg_synthetic_study(const char *dir)
{
    static const char *const regimes[3] = {"relu", "gelu_swap", "anneal"};
    static const double acc[3][2] = {{0.85, 0.85}, {0.86, 0.85}, {0.853, 0.853}};
    static const int unstable[3] = {30, 11, 10}, glpk_dec[3] = {12, 10, 20}, smooth_rob[3] = {19, 5, 18};
    char path[700];
    snprintf(path, sizeof path, "%s/networks.jsonl", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int r = 0; r < 3; r++)
        fprintf(f,
                "{\"key\":\"%s|16,8,10|1|%016x|lgelu 0.4.0\",\"regime\":\"%s\",\"arch\":\"16,8,10\",\"seed\":1,"
                "\"acc_before\":%g,\"acc_after\":%g,\"delta_global\":%g,\"smooth\":%s,\"order\":%d,"
                "\"lambda_log\":[[0,1.5],[1,160]],\"train\":{\"anneal_start\":%g,\"anneal_epochs\":0},"
                "\"version\":\"0.4.0\",\"commit\":\"abc\"}\n",
                regimes[r], r + 1, regimes[r], acc[r][0], acc[r][1], r ? 0.5 : 0.0, r ? "true" : "false", r,
                r == 2 ? 0.25 : 1.0);
    fclose(f);
    snprintf(path, sizeof path, "%s/results.jsonl", dir);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    static const char *const modes[4] = {"auto", "z3", "glpk", "smooth"};
    for (int r = 0; r < 3; r++)
        for (int in = 0; in < 20; in++)
            for (int m = 0; m < 4; m++) {
                const char *v = "robust", *stage = m == 1 ? "z3-lp" : m == 2 ? "glpk" : "bab-relu";
                int mis = in == 0, to = 0;
                double sec = m == 0 ? 1.0 + 0.05 * r : m == 2 ? 0.5 + r : 1.0;
                if (mis) v = "violated", stage = "clean input", sec = 0.001;
                else if ((m == 0 && r == 1 && in == 19) || (m == 1 && in >= 5) || (m == 2 && in >= glpk_dec[r]) ||
                         (m == 3 && in > smooth_rob[r]))
                    v = "unknown", to = 1, sec = 10;
                int fools = mis && r > 0 && m < 3;
                fprintf(f,
                        "{\"key\":\"%s|16,8,10|1|%d|0.01|%s|%016x|timeout=10|lgelu 0.4.0\",\"regime\":\"%s\","
                        "\"arch\":\"16,8,10\",\"seed\":1,\"input\":%d,\"label\":1,\"eps\":0.01,\"mode\":\"%s\","
                        "\"verdict\":\"%s\",\"reason\":\"%s\",\"timed_out\":%s,\"seconds\":%g,\"unstable\":[%d,0],"
                        "\"unstable_total\":%d,\"nodes\":0,\"bab_nodes\":0,\"stage\":\"%s\",\"delta_ball\":0.1,"
                        "\"delta_transfer\":0,\"cex_fools_smooth\":%s,\"timeout\":10,\"z3_theory\":%s,"
                        "\"misclassified\":%s,\"version\":\"0.4.0\",\"commit\":\"abc\"}\n",
                        regimes[r], in, modes[m], r + 1, regimes[r], in, modes[m], v, to ? "timeout" : "",
                        to ? "true" : "false", sec, mis ? 0 : unstable[r], mis ? 0 : unstable[r], stage,
                        fools ? "true" : r > 0 && m < 3 && !strcmp(v, "violated") ? "false" : "null",
                        m == 1 ? "\"lp\"" : "null", mis ? "true" : "false");
            }
    fclose(f);
}

/* A line of path holding every one of the NULL-terminated strings, or NULL. */
static const char *lg_line_with(const char *path, const char *const *parts)
{
    static char line[16384];
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s", path);
    while (fgets(line, sizeof line, f)) {
        int all = 1;
        for (int i = 0; parts[i] && all; i++) all = strstr(line, parts[i]) != NULL;
        if (all) {
            fclose(f);
            return line;
        }
    }
    fclose(f);
    return NULL;
}

#define LG_LINE(path, ...) lg_line_with(path, (const char *const[]){__VA_ARGS__, NULL})

/* The report reads right: an answer on top, one set of rows per column, the
 * Z3 theory that ran, misclassified counted apart, no bold winner inside
 * run-to-run noise, and plots with integer ticks and one colour per regime. */
START_TEST(test_study_report_reads_right)
{
    const char *dir = lg_dir("synth");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    lg_synthetic_study(dir);
    ck_assert_int_eq(lg_study_report(dir, NULL), LG_OK);
    char md[700], p[700];
    snprintf(md, sizeof md, "%s/REPORT.md", dir);
    /* the answer comes before everything but the title and the source line */
    FILE *f = fopen(md, "r");
    ck_assert_ptr_nonnull(f);
    char line[16384];
    int row = 0, answer = 0, made = 0;
    while (fgets(line, sizeof line, f)) {
        row++;
        if (!answer && strncmp(line, "**Answer", 8) == 0) answer = row;
        if (!made && strncmp(line, "Made by:", 8) == 0) made = row;
    }
    fclose(f);
    ck_assert_msg(answer > 0 && answer < made, "answer at line %d, header at %d", answer, made);
    const char *a = LG_LINE(md, "**Answer");
    ck_assert_msg(strstr(a, "annealing does not make the ReLU net faster to verify: `auto` decided 20 of 20 for the "
                            "best annealed regime anneal and 19 of 20 for the direct swap gelu_swap, within run-to-run "
                            "noise") &&
                      strstr(a, "unstable ReLUs per instance at ε = 0.01: 10.0 vs 11.0") &&
                      strstr(a, "smooth net: 18 of 19 vs 5 of 18") && strstr(a, "3 `auto` instances were misclassified"),
                  "%s", a);
    /* the mode list names the theory that ran */
    ck_assert_ptr_nonnull(LG_LINE(md, "- `z3`: ", "the theory that ran: `lp` (lgelu's certified LP as Z3's theory) in 60 rows"));
    /* inside noise no bold; beyond it bold */
    const char *l = LG_LINE(md, "- auto: ");
    ck_assert_msg(l && strstr(l, "no clear winner") && !strstr(l, "**"), "%s", l ? l : "no auto line");
    ck_assert_ptr_nonnull(LG_LINE(md, "- glpk: most instances decided by **anneal**, beyond run-to-run noise (20 of 20"));
    l = LG_LINE(md, "- z3: ");
    ck_assert_msg(l && strstr(l, "no clear winner") && !strstr(l, "**"), "%s", l ? l : "no z3 line");
    ck_assert_ptr_nonnull(LG_LINE(md, "fewest unstable ReLUs at ε = 0.01: anneal (10.0 per instance), within "
                                      "run-to-run noise of gelu_swap (11.0)"));
    l = LG_LINE(md, "best accuracy after substitution");
    ck_assert_msg(l && strstr(l, "within run-to-run noise") && !strstr(l, "**"), "%s", l ? l : "no accuracy line");
    ck_assert_ptr_nonnull(LG_LINE(md, "best transfer of ReLU-net `robust` to the smooth net: **anneal** (18 of 19)"));
    /* transfer: every count over the auto rows (z3 and glpk have counterexamples too) */
    ck_assert_ptr_nonnull(LG_LINE(md, "| auto robust | of which smooth robust | of which smooth violated | auto violated |"));
    ck_assert_ptr_nonnull(LG_LINE(md, "| 16,8,10 | anneal | 0.5 |", "| 19 | 18 | 0 | 1 | 1 |"));
    snprintf(p, sizeof p, "%s/transfer.csv", dir);
    ck_assert_ptr_nonnull(LG_LINE(p, "\"16,8,10\",gelu_swap,", ",18,5,0,1,1\n"));
    /* misclassified apart: the mode table, modes.csv */
    ck_assert_ptr_nonnull(LG_LINE(md, "| 16,8,10 | anneal | auto | 20 | 19 | 1 | 1 | 0 (0) |"));
    snprintf(p, sizeof p, "%s/modes.csv", dir);
    ck_assert_ptr_nonnull(LG_LINE(p, "\"16,8,10\",anneal,glpk,20,19,1,0,0,"));
    ck_assert_msg(strcmp(LG_LINE(p, "\"16,8,10\",anneal,glpk,") + strlen(LG_LINE(p, "\"16,8,10\",anneal,glpk,")) - 3,
                         ",1\n") == 0,
                  "misclassified column: %s", LG_LINE(p, "\"16,8,10\",anneal,glpk,"));
    /* plots: integer ticks on the instance axis; anneal has the same colour in every cactus plot, even where
     * another regime has no curve */
    static const char *const cm[] = {"auto", "z3", "glpk"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/plots/cactus_16-8-10_%s.body.gp", dir, cm[i]);
        ck_assert_msg(LG_LINE(p, "set xtics ") && LG_LINE(p, "set format x '%.0f'"), "%s", p);
        ck_assert_msg(LG_LINE(p, "lc 3 title 'anneal'") != NULL, "%s: anneal's colour", p);
    }
    snprintf(p, sizeof p, "%s/plots/cactus_16-8-10_glpk.body.gp", dir);
    ck_assert_ptr_nonnull(LG_LINE(p, "set xtics 2\n"));
    /* every title line fits its 960-pixel canvas (at most 60 characters per line) */
    char cmd[1500];
    snprintf(cmd, sizeof cmd,
             "grep -ho 'title \"[^\"]*\"' '%s'/plots/*.body.gp | sed 's/^title \"//; s/\"$//; s/\\\\n/\\n/g' | "
             "awk 'length($0) > 60 { print; bad = 1 } END { exit bad }'",
             dir);
    ck_assert_msg(system(cmd) == 0, "a plot title line is longer than 60 characters");
}
END_TEST

/* A regime whose ReLU-net `robust` verdicts the smooth net contradicts is said so where the report names
 * it the winner and in the answer: a fast but wrong regime is no answer. z3 rows where Z3 did not run
 * are counted as such. */
START_TEST(test_study_report_names_contradictions)
{
    const char *dir = lg_dir("synthc");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    lg_synthetic_study(dir);
    /* anneal's smooth run on input 19 (auto: robust) finds a smooth-net counterexample */
    char md[700];
    lg_sed_results(dir, "/\"regime\":\"anneal\".*\"input\":19,.*\"mode\":\"smooth\"/"
                        "s/\"verdict\":\"unknown\"/\"verdict\":\"violated\"/");
    /* and Z3 did not run on relu's misclassified input 0 (decided before the back-end) */
    lg_sed_results(dir, "/\"regime\":\"relu\".*\"input\":0,.*\"mode\":\"z3\"/"
                        "s/\"z3_theory\":\"lp\"/\"z3_theory\":null/");
    ck_assert_int_eq(lg_study_report(dir, NULL), LG_OK);
    snprintf(md, sizeof md, "%s/REPORT.md", dir);
    ck_assert_ptr_nonnull(LG_LINE(md, "- `z3`: ", "in 59 rows", "`none` (Z3 did not run: decided before it"));
    ck_assert_ptr_nonnull(LG_LINE(md, "- glpk: most instances decided by **anneal**, beyond run-to-run noise",
                                  "(but 1 of its 19 ReLU-net `robust` verdicts are contradicted by a smooth-net "
                                  "counterexample)"));
    ck_assert_ptr_nonnull(LG_LINE(md, "**Answer", "contradicted by a smooth-net counterexample: 1 vs 0"));
    /* without the counterexample (the synthetic study as it is) neither is said */
    const char *dir2 = lg_dir("synthc2");
    ck_assert_int_eq(mkdir(dir2, 0755), 0);
    lg_synthetic_study(dir2);
    ck_assert_int_eq(lg_study_report(dir2, NULL), LG_OK);
    snprintf(md, sizeof md, "%s/REPORT.md", dir2);
    ck_assert_ptr_null(LG_LINE(md, "contradicted by a smooth-net counterexample"));
}
END_TEST

/* The whole of a text file with every run of whitespace made one blank (static buffer). */
static const char *lg_flat(const char *path)
{
    static char text[1 << 18];
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s", path);
    size_t n = 0;
    for (int c, blank = 0; (c = fgetc(f)) != EOF && n + 1 < sizeof text;) {
        int b = c == ' ' || c == '\n' || c == '\t';
        if (b && blank) continue;
        text[n++] = b ? ' ' : (char)c;
        blank = b;
    }
    text[n] = '\0';
    fclose(f);
    return text;
}

/* docs/STUDY.md and README.md state the main job (benchmarks/small.ini) as
 * the program runs it: its modes, regimes, images, timeout and instances. */
START_TEST(test_study_docs_main_job)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/benchmarks/small.ini", LG_SOURCE_DIR);
    lg_study_grid g;
    ck_assert_int_eq(lg_study_grid_load(&g, path), LG_OK);
    long n = 0;
    for (int a = 0; a < g.n_archs; a++) {
        const lg_study_mode *modes;
        n += (long)g.n_regimes * g.n_seeds * g.n_inputs * g.n_eps * lg_study_arch_modes(&g, &g.archs[a], &modes);
    }
    char want[6][160];
    snprintf(want[0], sizeof want[0], "%ld instances", n);
    snprintf(want[1], sizeof want[1], "%d regimes", g.n_regimes);
    snprintf(want[2], sizeof want[2], "%d test images", g.n_inputs);
    snprintf(want[3], sizeof want[3], "%g s per instance", g.timeout);
    int w = snprintf(want[4], sizeof want[4], "`");
    for (int m = 0; m < g.n_modes; m++)
        w += snprintf(want[4] + w, sizeof want[4] - (size_t)w, "%s%s", m ? " " : "", lg_study_mode_name(g.modes[m]));
    snprintf(want[4] + w, sizeof want[4] - (size_t)w, "`");
    snprintf(want[5], sizeof want[5], "%s modes", g.n_modes == 5 ? "five" : g.n_modes == 4 ? "four" : "?");
    lg_study_grid_free(&g);
    snprintf(path, sizeof path, "%s/docs/STUDY.md", LG_SOURCE_DIR);
    const char *t = strstr(lg_flat(path), "**Main job**");
    ck_assert_msg(t != NULL, "docs/STUDY.md: no **Main job** paragraph");
    char para[4096];
    snprintf(para, sizeof para, "%s", t);
    for (int i = 0; i < 5; i++)
        ck_assert_msg(strstr(para, want[i]) != NULL, "docs/STUDY.md's main job does not say '%s' (small.ini): %.600s",
                      want[i], para);
    snprintf(path, sizeof path, "%s/README.md", LG_SOURCE_DIR);
    const char *r = lg_flat(path);
    ck_assert_msg(strstr(r, want[0]) && strstr(r, want[5]), "README.md's main job does not say '%s' and '%s'", want[0],
                  want[5]);
}
END_TEST

Suite *suite_study(void)
{
    Suite *s = suite_create("study");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, lg_study_setup, lg_study_teardown);
    tcase_add_test(tc, test_study_grid_parse);
    tcase_add_test(tc, test_study_backend_only_reaches_solver);
    tcase_add_test(tc, test_study_resume_after_kill);
    tcase_add_test(tc, test_study_shard_merge_equals_single);
    tcase_add_test(tc, test_study_z3_mode_row);
    tcase_add_test(tc, test_study_smooth_tries_auto_cex);
    tcase_add_test(tc, test_study_grid_diff);
    tcase_add_test(tc, test_study_resume_changed_grid_refused);
    tcase_add_test(tc, test_study_force_adds_without_duplicates);
    tcase_add_test(tc, test_study_report_fixture);
    tcase_add_test(tc, test_study_report_mode_left_out);
    tcase_add_test(tc, test_study_report_arch_table);
    lg_tcase_timeout(tc, 600);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_checked_fixture(tl, lg_study_setup, lg_study_teardown);
    tcase_add_loop_test(tl, test_study_grid_errors, 0, (int)(sizeof lg_grid_bad / sizeof lg_grid_bad[0]));
    tcase_add_test(tl, test_study_grid_file_missing);
    tcase_add_test(tl, test_study_report_empty_dir);
    tcase_add_test(tl, test_study_other_version_refused);
    tcase_add_test(tl, test_study_mkdir_parents);
    suite_add_tcase(s, tl);
    TCase *tr = tcase_create("report");
    tcase_add_checked_fixture(tr, lg_study_setup, lg_study_teardown);
    tcase_add_test(tr, test_study_report_reads_right);
    tcase_add_test(tr, test_study_report_names_contradictions);
    tcase_add_test(tr, test_study_docs_main_job);
    lg_tcase_timeout(tr, 120);
    suite_add_tcase(s, tr);
    return s;
}
