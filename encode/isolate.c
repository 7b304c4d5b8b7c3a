/* isolate.c — a back-end in a child process under a hard deadline (isolate.h). */
#include "encode/isolate.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"

/* Message from child to parent: this header (the child's lg_result, its
 * pointer x meaningless here), then x[n_in] if have_x. */
typedef struct lg_iso_msg {
    int status;  /* lg_status of solve */
    int have_x;
    lg_result r;
    char errmsg[512];
} lg_iso_msg;

static int lg_iso_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Read n bytes unless the deadline passes (1 = timeout, −1 = EOF/error). */
static int lg_iso_read_all(int fd, void *buf, size_t n, double deadline)
{
    char *p = buf;
    while (n > 0) {
        double left = deadline - lg_now();
        if (left <= 0) return 1;
        struct pollfd pf = {fd, POLLIN, 0};
        int ms = left > 1e6 ? 1000000000 : (int)(left * 1000.0) + 1;
        int k = poll(&pf, 1, ms);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k == 0) continue; /* loop re-checks the clock */
        ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

/* Cap the child's address space at what it has now plus memory_mb (the
 * inherited image counts against RLIMIT_AS). */
static void lg_iso_limit_memory(double memory_mb)
{
    if (!(memory_mb > 0)) return;
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld", &pages) != 1) pages = 0;
        fclose(f);
    }
    double bytes = (double)pages * (double)sysconf(_SC_PAGESIZE) + memory_mb * 1048576.0;
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = bytes >= 1.8e19 ? RLIM_INFINITY : (rlim_t)bytes;
    setrlimit(RLIMIT_AS, &rl);
}

static void lg_iso_child(lg_solve_fn solve, const lg_problem *p, const lg_solve_opts *o, int fd)
{
    lg_iso_limit_memory(o->run.memory_mb);
    lg_result r;
    memset(&r, 0, sizeof r);
    lg_iso_msg m;
    memset(&m, 0, sizeof m);
    m.status = (int)solve(p, o, &r);
    m.r = r;
    m.r.x = NULL;
    if (m.status != LG_OK) snprintf(m.errmsg, sizeof m.errmsg, "%s", lg_errmsg());
    m.have_x = r.x != NULL;
    int bad = lg_iso_write_all(fd, &m, sizeof m);
    if (!bad && r.x) bad = lg_iso_write_all(fd, r.x, (size_t)p->net->n_in * sizeof *r.x);
    _exit(bad ? 3 : 0);
}

lg_status lg_isolate_solve(lg_solve_fn solve, const lg_problem *p, const lg_solve_opts *o, lg_result *r,
                           double hard_deadline)
{
    memset(r, 0, sizeof *r);
    double t0 = lg_now();
    int fds[2];
    if (pipe(fds) != 0) return lg_fail(LG_ERR_SOLVER, "cannot create a pipe for the back-end: %s", strerror(errno));
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return lg_fail(LG_ERR_SOLVER, "cannot fork for the back-end: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        lg_iso_child(solve, p, o, fds[1]);
    }
    close(fds[1]);
    lg_status st = LG_OK;
    lg_iso_msg m;
    int rd = lg_iso_read_all(fds[0], &m, sizeof m, hard_deadline);
    if (rd == 0 && m.have_x) {
        r->x = malloc((size_t)p->net->n_in * sizeof *r->x);
        if (!r->x) {
            st = lg_fail(LG_ERR_NOMEM, "back-end result: out of memory");
            rd = -2;
        } else {
            rd = lg_iso_read_all(fds[0], r->x, (size_t)p->net->n_in * sizeof *r->x, hard_deadline);
        }
    }
    close(fds[0]);
    if (rd != 0) kill(pid, SIGKILL);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    if (rd == -2) {
        lg_result_free(r);
        return st;
    }
    if (rd != 0) {
        lg_result_free(r);
        r->answer = LG_ANSWER_UNKNOWN;
        r->seconds = lg_now() - t0;
        r->timed_out = rd == 1;
        if (rd == 1) snprintf(r->reason, sizeof r->reason, "timeout");
        else if (WIFSIGNALED(ws)) snprintf(r->reason, sizeof r->reason, "back-end died (signal %d)", WTERMSIG(ws));
        else snprintf(r->reason, sizeof r->reason, "back-end exited without an answer");
        return LG_OK;
    }
    double *x = r->x;
    *r = m.r;
    r->x = x;
    r->reason[sizeof r->reason - 1] = '\0';
    r->theory[sizeof r->theory - 1] = '\0';
    m.errmsg[sizeof m.errmsg - 1] = '\0';
    if (m.status != LG_OK) {
        lg_result_free(r);
        return lg_fail((lg_status)m.status, "%s", m.errmsg);
    }
    return LG_OK;
}
