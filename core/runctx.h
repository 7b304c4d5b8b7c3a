/* runctx.h — the per-run context: what one verification run (or one part of
 * it) is given besides its options — when to stop, how to seed, how much to
 * say, how much memory a back-end may take.
 *
 * Option structs (lg_verify_opts, lg_bab_opts, lg_attack_opts, ...) hold
 * only what the user chose; nothing overwrites them during a run. The
 * driver (verify/verify.c) makes one lg_runctx at the start from its
 * options — the one deadline source, a value of lg_now() — and passes it
 * down by const pointer to every stage (bounds/LP tightening, attack,
 * branch and bound, α/β optimisation, the back-end decision and the
 * back-ends themselves). A stage that needs a tighter budget or its own
 * seed derives a new value (lg_runctx_sooner, lg_runctx_share,
 * lg_runctx_child): a sub-budget is never later than its parent's deadline,
 * and no stage starts a second clock.
 *
 * Check-points (DESIGN.md §3 "One run context, one deadline"): a long loop
 * asks lg_runctx_check at a granularity that keeps the clock reads below 1%
 * of its work (per layer, per block of rows, per LP, per node); past the
 * deadline (or once cancelled) the stage
 * stops, leaves its outputs sound but unfinished and returns
 * LG_ERR_TIMEOUT, which its callers pass up unchanged: an interrupted bound
 * is never used as if complete. The verdict driver (verify/verify.c) and
 * branch and bound (verify/bab.c) turn it into an unknown with timed_out
 * set (the `timeout` result).
 *
 * A plain value: copy it freely; it owns nothing and borrows nothing.
 */
#ifndef LG_RUNCTX_H
#define LG_RUNCTX_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/status.h"

typedef struct lg_runctx {
    double deadline;  /* lg_now() seconds to stop at; ≤ 0 none */
    uint64_t seed;    /* seed of every randomised step (attack, back-end) */
    int verbose;      /* 0 quiet; 1 progress lines on stderr; 2 also solver chatter */
    double memory_mb; /* memory cap of each back-end call (MB); ≤ 0 none */
    const _Atomic int *cancel; /* NULL, or a caller's flag (lib/lgelu.h's cancel token): once it is
                                  nonzero the run counts as past its deadline (expired, no time
                                  remaining); borrowed, it must outlive the run */
} lg_runctx;

/* No deadline, seed 1, quiet, no memory cap. */
lg_runctx lg_runctx_none(void);
/* A run starting now: deadline lg_now() + timeout_s (none if timeout_s ≤ 0). */
lg_runctx lg_runctx_start(double timeout_s, uint64_t seed, int verbose, double memory_mb);

/* 1 once the deadline has passed (never without one) or the cancel flag is
 * set; never for c NULL. */
int lg_runctx_expired(const lg_runctx *c);
/* The one check-point: LG_OK before the deadline (or c NULL, or none, and
 * not cancelled), else LG_ERR_TIMEOUT with the message "<stage>: deadline
 * passed" (or "<stage>: cancelled"). */
lg_status lg_runctx_check(const lg_runctx *c, const char *stage);
/* Seconds left (≥ 0; 0 once cancelled), or INFINITY without a deadline. */
double lg_runctx_remaining(const lg_runctx *c);

/* The same run with seed + salt (a case, a node: a derived stream). */
lg_runctx lg_runctx_child(const lg_runctx *c, uint64_t salt);
/* The same run with deadline min(c's, deadline) (deadline ≤ 0: unchanged). */
lg_runctx lg_runctx_sooner(const lg_runctx *c, double deadline);
/* A sub-budget of a fraction f ∈ (0, 1] of the time left: deadline
 * lg_now() + f·remaining (unchanged without a deadline). */
lg_runctx lg_runctx_share(const lg_runctx *c, double f);

#endif
