/* check_atomic_file.c — files that are never seen half-written
 * (core/atomic_file.h): replace, discard, whole-line appends, and `lgelu
 * bench` killed after its first row (SIGTERM and SIGKILL): results.csv holds
 * only whole rows, each with its result file. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "anneal/deviation.h"
#include "anneal/relu.h"
#include "core/atomic_file.h"
#include "core/eval.h"
#include "core/netfile.h"
#include "core/npy.h"
#include "testutil.h"

/* core/atomic_file.h: replace, discard, whole-line appends. */
START_TEST(test_atomic_file_replace_and_append)
{
    char path[256], buf[256];
    snprintf(path, sizeof path, "%s", lg_test_tmpfile(".csv"));
    ck_assert_int_eq(lg_atomic_write(path, "old\n", 4), LG_OK);
    lg_atomic_file a;
    ck_assert_int_eq(lg_atomic_open(&a, path), LG_OK);
    fputs("new contents\n", a.f);
    FILE *f = fopen(path, "r"); /* before the commit the target is the old file */
    ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
    fclose(f);
    ck_assert_str_eq(buf, "old\n");
    lg_atomic_discard(&a);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
    fclose(f);
    ck_assert_str_eq(buf, "old\n");
    ck_assert_int_eq(lg_atomic_open(&a, path), LG_OK);
    fputs("new contents\n", a.f);
    ck_assert_int_eq(lg_atomic_commit(&a), LG_OK);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
    fclose(f);
    ck_assert_str_eq(buf, "new contents\n");
    lg_line_log l;
    ck_assert_int_eq(lg_line_log_open(&l, path, "a,b\n"), LG_OK);
    ck_assert_int_eq(lg_line_log_printf(&l, "%d,%s", 1, "x"), LG_OK);
    ck_assert_int_eq(lg_line_log_printf(&l, "%d,%s\n", 2, "y"), LG_OK);
    ck_assert_int_eq(lg_line_log_close(&l), LG_OK);
    ck_assert_int_eq(lg_line_log_close(&l), LG_OK); /* closed twice: no-op */
    f = fopen(path, "r");
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = '\0';
    ck_assert_str_eq(buf, "a,b\n1,x\n2,y\n");
    ck_assert_int_eq(lg_atomic_open(&a, "/nonexistent-dir/x.csv"), LG_ERR_IO);
    ck_assert_msg(strstr(lg_errmsg(), "/nonexistent-dir/x.csv"), "%s", lg_errmsg());
    remove(path);
}
END_TEST

/* Check that out/results.csv holds only whole rows, each with its result
 * file; returns the number of rows. With tmp_ok = 0 no temporary file may
 * be left in out. */
static int lg_atomic_bench_files(const char *out, int tmp_ok)
{
    char p[512], rp[2048], line[4096];
    snprintf(p, sizeof p, "%s/results.csv", out);
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    int rows = -1;
    while (fgets(line, sizeof line, f)) {
        size_t l = strlen(line);
        ck_assert_msg(l > 0 && line[l - 1] == '\n', "partial row in %s: '%s'", p, line);
        if (rows++ < 0) {
            ck_assert_str_eq(line,
                             "instance,onnx,vnnlib,timeout,verdict,result,seconds,nodes,solver_nodes,method,settings,build,"
                             "reason\n");
            continue;
        }
        int commas = 0;
        for (char *c = line; *c; c++) commas += *c == ',';
        ck_assert_msg(commas == 12, "row %d has %d fields: %s", rows, commas + 1, line);
        char inst[1024], verdict[64], result[64];
        ck_assert_msg(sscanf(line, "%1023[^,],%*[^,],%*[^,],%*[^,],%63[^,],%63[^,],", inst, verdict, result) == 3,
                      "unparsable row: %s", line);
        ck_assert_msg(!strcmp(verdict, "robust") || !strcmp(verdict, "violated") || !strcmp(verdict, "unknown"),
                      "verdict '%s'", verdict);
        snprintf(rp, sizeof rp, "%s/%s.txt", out, inst);
        FILE *r = fopen(rp, "r");
        ck_assert_msg(r != NULL, "row %d has no result file %s", rows, rp);
        char first[64] = {0};
        ck_assert_ptr_nonnull(fgets(first, sizeof first, r));
        fclose(r);
        first[strcspn(first, "\n")] = '\0';
        ck_assert_msg(strcmp(first, result) == 0, "%s says %s, the CSV %s", rp, first, result);
    }
    fclose(f);
    if (!tmp_ok) {
        snprintf(rp, sizeof rp, "ls -a '%s' | grep -q '\\.tmp\\.'", out);
        ck_assert_msg(system(rp) != 0, "a temporary file was left in %s", out);
    }
    return rows;
}

/* Start `lgelu bench`, wait for its first row, send sig; the files must be
 * whole. SIGTERM: it stops early with exit 143; SIGKILL: killed. SIGINT:
 * it says at once on stderr that it waits for the instance in flight; with
 * twice set, a second SIGINT (sent once that word is there) stops it now. */
static void lg_atomic_bench_kill_n(int sig, int twice)
{
    char dir[256], out[300], p[600];
    snprintf(dir, sizeof dir, "%s", lg_test_tmpfile("_bench"));
    snprintf(out, sizeof out, "%s/out", dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(p, sizeof p, "%s/instances.csv", dir);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    enum { LG_GATE_INST = 24 };
    for (int i = 0; i < LG_GATE_INST; i++) /* about 0.5 s each */
        fprintf(f, "%s,%s,60\n", lg_test_fixture(i % 2 ? "acasxu/ACASXU_run2a_1_1_batch_2000.onnx" : "vnncomp/mnist-net_256x2.onnx"),
                i % 2 ? "acasxu/prop_2.vnnlib" : "vnncomp/prop_3_0.05.vnnlib");
    fclose(f);
    /* the vnnlib paths are relative to DIR: link the fixture folders there */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "ln -s '%s/acasxu' '%s/acasxu' && ln -s '%s/vnncomp' '%s/vnncomp'", LG_FIXTURES, dir,
             LG_FIXTURES, dir);
    ck_assert_int_eq(system(cmd), 0);
    char errp[600];
    snprintf(errp, sizeof errp, "%s/stderr.txt", dir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY), err = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(devnull, 1), dup2(err, 2);
        execl(LG_BINARY_DIR "/lgelu", "lgelu", "bench", dir, "--out", out, "-j", "1", (char *)NULL);
        _exit(127);
    }
    snprintf(p, sizeof p, "%s/results.csv", out);
    int seen = 0;
    for (int t = 0; t < 6000 && !seen; t++) { /* up to 120 s */
        FILE *r = fopen(p, "r");
        int lines = 0, ch;
        if (r) {
            while ((ch = fgetc(r)) != EOF) lines += ch == '\n';
            fclose(r);
        }
        seen = lines >= 2;
        if (!seen) nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    ck_assert_msg(seen, "bench wrote no row in 120 s");
    ck_assert_int_eq(kill(pid, sig), 0);
    int ws, told = 0;
    if (sig != SIGKILL) {
        /* the word comes from the signal handler itself: it is there before the instance in flight ends */
        for (int t = 0; t < 6000 && !told; t++) {
            FILE *r = fopen(errp, "r");
            char buf[4096] = {0};
            if (r) {
                size_t got = fread(buf, 1, sizeof buf - 1, r);
                buf[got] = '\0';
                fclose(r);
            }
            told = strstr(buf, "waiting for the instance in flight") != NULL;
            if (!told) nanosleep(&(struct timespec){0, 20000000L}, NULL);
        }
        ck_assert_msg(told, "bench said nothing of the instance in flight after signal %d", sig);
        if (twice) ck_assert_int_eq(kill(pid, sig), 0);
    }
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    if (sig == SIGKILL) ck_assert(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
    else if (twice) /* killed by the second one, or it had ended the instance in flight before it came */
        ck_assert_msg((WIFSIGNALED(ws) && WTERMSIG(ws) == sig) || (WIFEXITED(ws) && WEXITSTATUS(ws) == 128 + sig),
                      "exit status %d", ws);
    else ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 128 + sig, "exit status %d", ws);
    int rows = lg_atomic_bench_files(out, sig == SIGKILL || twice);
    ck_assert_msg(rows >= 1 && rows < LG_GATE_INST, "%d rows: not stopped early", rows);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void lg_atomic_bench_kill(int sig) { lg_atomic_bench_kill_n(sig, 0); }

START_TEST(test_atomic_file_bench_sigterm_keeps_whole_files) { lg_atomic_bench_kill(SIGTERM); }
END_TEST

START_TEST(test_atomic_file_bench_sigint_says_it_waits) { lg_atomic_bench_kill(SIGINT); }
END_TEST

START_TEST(test_atomic_file_bench_second_sigint_stops_now) { lg_atomic_bench_kill_n(SIGINT, 1); }
END_TEST

START_TEST(test_atomic_file_bench_sigkill_keeps_whole_files) { lg_atomic_bench_kill(SIGKILL); }
END_TEST

Suite *suite_atomic_file(void)
{
    Suite *s = suite_create("atomic_file");
    TCase *tc = tcase_create("limits");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_atomic_file_replace_and_append);
    tcase_add_test(tc, test_atomic_file_bench_sigterm_keeps_whole_files);
    tcase_add_test(tc, test_atomic_file_bench_sigkill_keeps_whole_files);
    tcase_add_test(tc, test_atomic_file_bench_sigint_says_it_waits);
    tcase_add_test(tc, test_atomic_file_bench_second_sigint_stops_now);
    suite_add_tcase(s, tc);
    return s;
}
