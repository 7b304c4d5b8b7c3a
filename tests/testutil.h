/* testutil.h — helpers shared by the Check suites: fixture paths, temp
 * files, a random network builder. Everything returned is owned by the
 * caller unless stated. */
#ifndef LG_TESTUTIL_H
#define LG_TESTUTIL_H

#include <check.h>
#include <stddef.h>

/* Check's own ck_assert_msg records the file and line of every assertion
 * that holds (_mark_point: a write to the runner's message file). The
 * suites assert inside sampling loops millions of times, so that record
 * cost most of their time; here an assertion costs nothing until it fails,
 * and a failure reports its file, line and message as before. The one
 * thing lost is "last checkpoint" in the report of a test that crashes
 * (a signal): the sanitizer runs print the crash's stack instead. */
#undef ck_assert_msg
#define ck_assert_msg(expr, ...) \
    ((expr) ? (void)0 : _ck_assert_failed(__FILE__, __LINE__, "Assertion '" #expr "' failed", ##__VA_ARGS__))

#include "core/net.h"
#include "core/rng.h"
#include "encode/problem.h"

/* "<fixtures>/<rel>" in a static buffer (valid until the next call). */
const char *lg_test_fixture(const char *rel);
/* A fresh temporary file path (in a static ring of 8 buffers). */
const char *lg_test_tmpfile(const char *suffix);
/* Fill every parameter of net with N(0, scale²), a softplus kind's s
 * (lgelu, swish) with N(0,0.1²) (λ, β from it) and a parameter learned as
 * itself (prelu's slope a = s) with N(0.25, 0.1²): read from the act.h entry. */
void lg_test_randomize(lg_net *net, lg_rng *r, double scale);
/* Run `<build dir>/lgelu ARGS` (a shell command tail) with stdout to
 * out_path (NULL: discarded) and stderr discarded; returns its exit code and
 * fails the calling test if it did not exit normally. */
int lg_test_cli(const char *args, const char *out_path);
/* 1 if the Fashion-MNIST package data is installed. */
int lg_test_have_data(void);
/* ref = a copy of rn with every relu layer made act: λ = lams[(k + salt) % 3]
 * for layer k (1 for gelu), prelu's slope 0.05·(1 + (k + salt) % 4). Fails
 * the calling test if the copy is not a valid net. ref is the caller's. */
void lg_test_smooth_relus(lg_net *ref, const lg_net *rn, lg_act act, int salt, const double lams[3]);
/* ref = a copy of rn with every relu layer λ-GELU of hardness 1.5, 4, 20 or 160
 * (λ = those[(k + salt) % 4] for layer k); fails the calling test if not valid. */
void lg_test_lgelu_relus(lg_net *ref, const lg_net *rn, int salt);
/* net = a random ViT of --arch text arch (relu MLPs): lg_vit_init_weights(seed), each
 * parameter then moved by 0.2·N(0, 1); fails the calling test on an error. */
void lg_test_random_vit(lg_net *net, const char *arch, uint64_t seed);
/* max over outputs o (j < 0) or output j of |y_rn,o − y_ref,o| at x, both nets in double;
 * yr, yg ≥ n_out, scr the forward pass's scratch (the caller's). */
double lg_test_pair_obs(const lg_net *rn, const lg_net *ref, const double *x, int j, double *yr, double *yg,
                        double *scr);
/* 1 when LG_TEST_QUICK is set (sanitizer runs: fewer instances, same assertions). */
int lg_test_quick(void);
/* Run a shell command; its exit status, or −1 if it did not exit normally. */
int lg_test_sh(const char *cmd);
/* The whole of a text file of at most 64 KiB, NUL-terminated, in a static
 * buffer valid until the next call; "" when it cannot be read. */
const char *lg_test_slurp(const char *path);
/* Write text to path (the test fails if it cannot). */
void lg_test_write(const char *path, const char *text);

/* The time limit of every test case, set in this one place: tc may run for
 * seconds × the time factor. The factor is LG_TEST_TIME_FACTOR (a number
 * ≥ 1) when set, else 4 in a sanitizer build and 1 otherwise. Every TCase
 * calls this (the cli suite checks it), so no case runs under Check's
 * 4-second default. */
void lg_tcase_timeout(TCase *tc, double seconds);
/* The factor lg_tcase_timeout applies. */
double lg_test_time_factor(void);

/* Pre-activations of every layer of a small ReLU/linear net (widths ≤ 64) at
 * x, input normalisation applied: z [Σ widths, lg_alpha_offset layout] and
 * the outputs y. */
void lg_test_preacts(const lg_net *net, const double *x, double *z, double *y);

/* Run a shell command and return its whole output (the caller frees). */
char *lg_test_run_output(const char *cmd);
/* Verdict of an SMT solver's output (first line sat / unsat), and of
 * glpsol --lp output (feasible ⇔ sat; a MIP needs an integer optimum). */
lg_answer lg_test_smt_verdict(const char *out);
lg_answer lg_test_glpsol_verdict(const char *out);

#endif
