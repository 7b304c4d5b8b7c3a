/* testutil.c — helpers shared by the Check suites (testutil.h). */
#include "testutil.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/arch_vit.h"
#include "core/idx.h"
#include "core/rng.h"
#include "train/vit.h"
#include "train/vit_net.h"

const char *lg_test_fixture(const char *rel)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", LG_FIXTURES, rel);
    return buf;
}

/* Every process (each forked Check child too) names its files inside a
 * directory of its own made by mkdtemp, removed when the process exits:
 * names made of the pid alone would meet the files an earlier process with
 * the same pid left behind (pids wrap at 32768 on a busy machine). */
static char lg_tmp_base[192];
static pid_t lg_tmp_pid;

static void lg_tmp_remove(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            char sub[1024];
            while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
                    lg_tmp_remove(sub);
                }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void lg_tmp_cleanup(void)
{
    if (lg_tmp_pid == getpid() && lg_tmp_base[0]) lg_tmp_remove(lg_tmp_base);
}

const char *lg_test_tmpfile(const char *suffix)
{
    static char bufs[8][256];
    static int next, counter, registered;
    if (lg_tmp_pid != getpid()) {
        const char *dir = getenv("TMPDIR");
        snprintf(lg_tmp_base, sizeof lg_tmp_base, "%s/lgelu_test_XXXXXX", dir && *dir ? dir : "/tmp");
        if (!mkdtemp(lg_tmp_base)) {
            perror("lg_test_tmpfile: mkdtemp");
            abort();
        }
        lg_tmp_pid = getpid();
        counter = 0;
        if (!registered) registered = atexit(lg_tmp_cleanup) == 0;
    }
    char *b = bufs[next];
    next = (next + 1) % 8;
    snprintf(b, 256, "%s/f%d%s", lg_tmp_base, counter++, suffix ? suffix : "");
    return b;
}

void lg_test_randomize(lg_net *net, lg_rng *r, double scale)
{
    for (size_t i = 0; i < net->n_params; i++) net->params[i] = scale * lg_rng_normal(r);
    for (int k = 0; k < net->n_layers; k++) {
        lg_layer *L = &net->layers[k];
        const lg_act_info *ai = lg_act_info_of(L->act);
        if (ai && ai->softplus) {
            L->s = 0.1 * lg_rng_normal(r);
            L->lambda = lg_lambda_from_s(L->s, net->t);
        } else if (ai && ai->has_param) { /* learned as itself (prelu's slope) */
            L->lambda = L->s = 0.25 + 0.1 * lg_rng_normal(r);
        }
    }
}

int lg_test_have_data(void)
{
    return access(LG_DATA_DEFAULT_DIR "/train-images-idx3-ubyte.gz", R_OK) == 0;
}

int lg_test_cli(const char *args, const char *out_path)
{
    static char cmd[16384];
    snprintf(cmd, sizeof cmd, "'%s/lgelu' %s >'%s' 2>/dev/null", LG_BINARY_DIR, args, out_path ? out_path : "/dev/null");
    int st = system(cmd);
    ck_assert_msg(st != -1 && WIFEXITED(st), "could not run: %s", cmd);
    return WEXITSTATUS(st);
}

void lg_test_preacts(const lg_net *net, const double *x, double *z, double *y)
{
    double a[64], t[64];
    for (int i = 0; i < net->n_in; i++) a[i] = net->in_sub ? (x[i] - net->in_sub[i]) / net->in_div[i] : x[i];
    for (int k = 0, off = 0; k < net->n_layers; off += net->layers[k].n_out, k++) {
        const lg_layer *L = &net->layers[k];
        for (int j = 0; j < L->n_out; j++) {
            double v = L->b[j];
            for (int i = 0; i < L->lin.n_in; i++) v += L->lin.W[(size_t)j * (size_t)L->lin.n_in + (size_t)i] * a[i];
            z[off + j] = v;
            t[j] = L->act == LG_ACT_RELU ? fmax(v, 0.0) : v;
        }
        memcpy(a, t, (size_t)L->n_out * sizeof *a);
    }
    memcpy(y, a, (size_t)lg_net_n_out(net) * sizeof *y);
}

#if defined(__SANITIZE_ADDRESS__)
#define LG_TEST_TIME_FACTOR_DEFAULT 4.0 /* ASan/UBSan: solver children and CLI runs are 2–5× slower */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LG_TEST_TIME_FACTOR_DEFAULT 4.0
#endif
#endif
#ifndef LG_TEST_TIME_FACTOR_DEFAULT
#define LG_TEST_TIME_FACTOR_DEFAULT 1.0
#endif

double lg_test_time_factor(void)
{
    const char *s = getenv("LG_TEST_TIME_FACTOR");
    if (!s || !*s) return LG_TEST_TIME_FACTOR_DEFAULT;
    char *end;
    double f = strtod(s, &end);
    if (*end || !(f >= 1.0) || f > 1000.0) {
        static int warned;
        if (!warned++)
            fprintf(stderr, "LG_TEST_TIME_FACTOR: expected a number in [1, 1000], got '%s'; using %g\n", s,
                    LG_TEST_TIME_FACTOR_DEFAULT);
        return LG_TEST_TIME_FACTOR_DEFAULT;
    }
    return f;
}

void lg_tcase_timeout(TCase *tc, double seconds) { tcase_set_timeout(tc, seconds * lg_test_time_factor()); }

int lg_test_quick(void) { return getenv("LG_TEST_QUICK") != NULL; }

int lg_test_sh(const char *cmd)
{
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

const char *lg_test_slurp(const char *path)
{
    static char buf[1 << 16];
    FILE *f = fopen(path, "r");
    if (!f) return "";
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

void lg_test_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* ---------------------------------------------- external solvers */

char *lg_test_run_output(const char *cmd)
{
    FILE *f = popen(cmd, "r");
    ck_assert_msg(f != NULL, "cannot run %s", cmd);
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    size_t k;
    while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
            ck_assert_ptr_nonnull(buf);
        }
    }
    buf[n] = '\0';
    int rc = pclose(f);
    ck_assert_msg(rc != -1, "pclose failed for %s", cmd);
    return buf;
}

/* Verdict of an SMT solver's output: first line sat / unsat. */
lg_answer lg_test_smt_verdict(const char *out)
{
    if (strncmp(out, "unsat", 5) == 0) return LG_ANSWER_UNSAT;
    if (strncmp(out, "sat", 3) == 0) return LG_ANSWER_SAT;
    return LG_ANSWER_UNKNOWN;
}

/* Verdict of glpsol --lp output (feasible ⇔ sat). */
lg_answer lg_test_glpsol_verdict(const char *out)
{
    if (strstr(out, "LIMIT EXCEEDED")) return LG_ANSWER_UNKNOWN;
    if (strstr(out, "NO PRIMAL FEASIBLE SOLUTION") || strstr(out, "NO INTEGER FEASIBLE SOLUTION"))
        return LG_ANSWER_UNSAT;
    if (strstr(out, "Integer Optimizer")) /* a MIP: the relaxation's optimum is not enough */
        return strstr(out, "INTEGER OPTIMAL SOLUTION FOUND") ? LG_ANSWER_SAT : LG_ANSWER_UNKNOWN;
    /* "OPTIMAL LP SOLUTION FOUND", "OPTIMAL SOLUTION FOUND BY LP PREPROCESSOR" */
    if (strstr(out, "OPTIMAL") && strstr(out, "SOLUTION FOUND")) return LG_ANSWER_SAT;
    return LG_ANSWER_UNKNOWN;
}


void lg_test_smooth_relus(lg_net *ref, const lg_net *rn, lg_act act, int salt, const double lams[3])
{
    ck_assert_int_eq(lg_net_copy(ref, rn), LG_OK);
    for (int k = 0; k < ref->n_layers; k++) {
        lg_layer *L = &ref->layers[k];
        if (L->act != LG_ACT_RELU) continue;
        L->act = act;
        L->lambda = act == LG_ACT_GELU ? 1.0 : act == LG_ACT_PRELU ? 0.05 * (1 + (k + salt) % 4) : lams[(k + salt) % 3];
        L->s = act == LG_ACT_PRELU ? L->lambda : 0.0;
    }
    ck_assert_int_eq(lg_net_validate(ref), LG_OK);
}

void lg_test_lgelu_relus(lg_net *ref, const lg_net *rn, int salt)
{
    static const double lams[] = {1.5, 4.0, 20.0, 160.0};
    ck_assert_int_eq(lg_net_copy(ref, rn), LG_OK);
    for (int k = 0; k < ref->n_layers; k++) {
        lg_layer *L = &ref->layers[k];
        if (L->act != LG_ACT_RELU) continue;
        L->act = LG_ACT_LGELU;
        L->lambda = lams[(k + salt) % 4];
        L->s = 0.0;
    }
    ck_assert_int_eq(lg_net_validate(ref), LG_OK);
}

void lg_test_random_vit(lg_net *net, const char *arch, uint64_t seed)
{
    lg_vit_spec sp;
    ck_assert_int_eq(lg_arch_vit_parse(&sp, arch), LG_OK);
    lg_vit m;
    ck_assert_int_eq(lg_vit_init(&m, &sp, LG_ACT_RELU, 1), LG_OK);
    lg_vit_init_weights(&m, seed);
    lg_rng r;
    lg_rng_init(&r, seed, 9);
    for (size_t i = 0; i < m.n_params; i++) m.params[i] += (float)(0.2 * lg_rng_normal(&r));
    ck_assert_int_eq(lg_vit_to_net(&m, net), LG_OK);
    lg_vit_free(&m);
}

double lg_test_pair_obs(const lg_net *rn, const lg_net *ref, const double *x, int j, double *yr, double *yg,
                        double *scr)
{
    lg_net_forward(rn, x, yr, scr);
    lg_net_forward(ref, x, yg, scr);
    double m = 0.0;
    for (int o = 0; o < lg_net_n_out(rn); o++)
        if ((j < 0 || o == j) && fabs(yr[o] - yg[o]) > m) m = fabs(yr[o] - yg[o]);
    return m;
}
