/* runctx.c — the per-run context (runctx.h). */
#include "core/runctx.h"

#include <math.h>
#include <stddef.h>

#include "core/clock.h"

lg_runctx lg_runctx_none(void)
{
    lg_runctx c = {0, 1, 0, 0, NULL};
    return c;
}

lg_runctx lg_runctx_start(double timeout_s, uint64_t seed, int verbose, double memory_mb)
{
    lg_runctx c = {timeout_s > 0 ? lg_now() + timeout_s : 0, seed, verbose, memory_mb, NULL};
    return c;
}

static int lg_runctx_cancelled(const lg_runctx *c)
{
    return c->cancel && atomic_load_explicit(c->cancel, memory_order_relaxed);
}

int lg_runctx_expired(const lg_runctx *c)
{
    return c && (lg_runctx_cancelled(c) || (c->deadline > 0 && lg_now() >= c->deadline));
}

lg_status lg_runctx_check(const lg_runctx *c, const char *stage)
{
    if (!lg_runctx_expired(c)) return LG_OK;
    return lg_fail(LG_ERR_TIMEOUT, "%s: %s", stage, lg_runctx_cancelled(c) ? "cancelled" : "deadline passed");
}

double lg_runctx_remaining(const lg_runctx *c)
{
    if (lg_runctx_cancelled(c)) return 0;
    if (!(c->deadline > 0)) return INFINITY;
    double left = c->deadline - lg_now();
    return left > 0 ? left : 0;
}

lg_runctx lg_runctx_child(const lg_runctx *c, uint64_t salt)
{
    lg_runctx r = *c;
    r.seed = c->seed + salt;
    return r;
}

lg_runctx lg_runctx_sooner(const lg_runctx *c, double deadline)
{
    lg_runctx r = *c;
    if (deadline > 0 && (!(r.deadline > 0) || deadline < r.deadline)) r.deadline = deadline;
    return r;
}

lg_runctx lg_runctx_share(const lg_runctx *c, double f)
{
    lg_runctx r = *c;
    if (c->deadline > 0) {
        double now = lg_now();
        r.deadline = now + f * (c->deadline - now);
    }
    return r;
}
