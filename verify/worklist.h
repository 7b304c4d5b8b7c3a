/* worklist.h — the branch-and-bound work list: a binary min-heap of opaque
 * node pointers ordered by (key, id), so that the order never depends on
 * insertion timing, only on the keys and the ids the caller assigns.
 *
 * The driver (bab_*.c) pops a batch of nodes, hands them to worker threads
 * (lg_worklist_run: pthreads, a shared atomic-style index under a mutex) and
 * merges the results back in batch order, so the sequence of nodes explored
 * is the same whatever the number of threads.
 *
 * The worklist stores pointers it does not own: the caller frees the nodes
 * it pops (and, at the end, those still inside, with lg_worklist_pop).
 */
#ifndef LG_WORKLIST_H
#define LG_WORKLIST_H

#include <stddef.h>

#include "core/status.h"

typedef struct lg_wl_item {
    double key;   /* smaller first (e.g. the node's worst lower bound) */
    long id;      /* tie-break: smaller first; unique per node */
    void *node;
} lg_wl_item;

typedef struct lg_worklist {
    lg_wl_item *items;
    size_t n, cap;
} lg_worklist;

void lg_worklist_init(lg_worklist *w);
void lg_worklist_free(lg_worklist *w);  /* frees the array, not the nodes */

lg_status lg_worklist_push(lg_worklist *w, double key, long id, void *node);
/* Smallest (key, id); NULL when empty. */
void *lg_worklist_pop(lg_worklist *w);
size_t lg_worklist_size(const lg_worklist *w);

/* Run fn(ctx, i, thread) for every i in [0, n) on n_threads threads
 * (n_threads ≤ 1: in the calling thread). Items are taken in increasing i
 * by whichever thread is free. fn must only write to per-item outputs.
 * The first non-OK status (smallest i) is returned; the other items still
 * run. */
typedef lg_status (*lg_wl_fn)(void *ctx, int i, int thread);
lg_status lg_worklist_run(int n, int n_threads, lg_wl_fn fn, void *ctx);

/* Number of online processors (≥ 1). */
int lg_worklist_cores(void);

#endif
