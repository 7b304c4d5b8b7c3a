/* worklist.c — min-heap of B&B nodes and the batch runner (worklist.h). */
#include "verify/worklist.h"

#include "encode/problem.h" /* lg_encode_thread_done */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void lg_worklist_init(lg_worklist *w) { memset(w, 0, sizeof *w); }

void lg_worklist_free(lg_worklist *w)
{
    free(w->items);
    memset(w, 0, sizeof *w);
}

size_t lg_worklist_size(const lg_worklist *w) { return w->n; }

static int lg_wl_less(const lg_wl_item *a, const lg_wl_item *b)
{
    return a->key < b->key || (a->key == b->key && a->id < b->id);
}

lg_status lg_worklist_push(lg_worklist *w, double key, long id, void *node)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        lg_wl_item *p = realloc(w->items, cap * sizeof *p);
        if (!p) return lg_fail(LG_ERR_NOMEM, "worklist: cannot grow to %zu nodes", cap);
        w->items = p;
        w->cap = cap;
    }
    size_t i = w->n++;
    lg_wl_item it = {key, id, node};
    while (i > 0) { /* sift up */
        size_t p = (i - 1) / 2;
        if (!lg_wl_less(&it, &w->items[p])) break;
        w->items[i] = w->items[p];
        i = p;
    }
    w->items[i] = it;
    return LG_OK;
}

void *lg_worklist_pop(lg_worklist *w)
{
    if (w->n == 0) return NULL;
    void *top = w->items[0].node;
    lg_wl_item last = w->items[--w->n];
    size_t i = 0, n = w->n;
    for (;;) { /* sift down */
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && lg_wl_less(&w->items[c + 1], &w->items[c])) c++;
        if (!lg_wl_less(&w->items[c], &last)) break;
        w->items[i] = w->items[c];
        i = c;
    }
    if (n > 0) w->items[i] = last;
    return top;
}

int lg_worklist_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

typedef struct lg_wl_pool {
    pthread_mutex_t mu;
    int next, n;
    lg_wl_fn fn;
    void *ctx;
    lg_status st;
    int st_i;
    char msg[512];  /* the failing item's message (lg_errmsg is per thread) */
} lg_wl_pool;

typedef struct lg_wl_arg {
    lg_wl_pool *pool;
    int thread;
} lg_wl_arg;

static void lg_wl_loop(lg_wl_pool *p, int thread)
{
    for (;;) {
        pthread_mutex_lock(&p->mu);
        int i = p->next < p->n ? p->next++ : -1;
        pthread_mutex_unlock(&p->mu);
        if (i < 0) return;
        lg_status st = p->fn(p->ctx, i, thread);
        if (st != LG_OK) {
            pthread_mutex_lock(&p->mu);
            if (p->st == LG_OK || i < p->st_i) {
                p->st = st;
                p->st_i = i;
                snprintf(p->msg, sizeof p->msg, "%s", lg_errmsg());
            }
            pthread_mutex_unlock(&p->mu);
        }
    }
}

static void *lg_wl_thread(void *arg)
{
    lg_wl_arg *a = arg;
    lg_wl_loop(a->pool, a->thread);
    lg_encode_thread_done(); /* the solvers' thread-local state (GLPK) */
    return NULL;
}

lg_status lg_worklist_run(int n, int n_threads, lg_wl_fn fn, void *ctx)
{
    lg_wl_pool p;
    memset(&p, 0, sizeof p);
    p.n = n;
    p.fn = fn;
    p.ctx = ctx;
    if (n_threads > n) n_threads = n;
    if (n_threads <= 1) {
        for (int i = 0; i < n; i++) {
            lg_status st = fn(ctx, i, 0);
            if (st != LG_OK && p.st == LG_OK) p.st = st;
        }
        return p.st;
    }
    if (pthread_mutex_init(&p.mu, NULL) != 0) return lg_fail(LG_ERR_NOMEM, "worklist: cannot create a mutex");
    pthread_t *th = malloc((size_t)n_threads * sizeof *th);
    lg_wl_arg *args = malloc((size_t)n_threads * sizeof *args);
    int started = 0;
    if (th && args) {
        for (int t = 1; t < n_threads; t++) {
            args[t].pool = &p;
            args[t].thread = t;
            if (pthread_create(&th[t], NULL, lg_wl_thread, &args[t]) != 0) break;
            started = t;
        }
    }
    lg_wl_loop(&p, 0); /* the calling thread works too */
    for (int t = 1; t <= started; t++) pthread_join(th[t], NULL);
    pthread_mutex_destroy(&p.mu);
    free(th);
    free(args);
    if (p.st != LG_OK) return lg_fail(p.st, "%s", p.msg);
    return LG_OK;
}
