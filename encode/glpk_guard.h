/* glpk_guard.h — GLPK's fatal errors as a return value, in one place.
 *
 * GLPK stops the process on a failed internal check (seen: spxchuzr.c
 * "teta >= 0" on near-degenerate warm starts, prob4.c "invalid scale
 * factor"). lg_glpk_guard runs fn(arg) with glp_error_hook set; on such an
 * error it frees this thread's GLPK environment — every glp_prob of the
 * thread is then gone, so the caller must forget its pointers — and returns
 * 1. Otherwise it returns 0. A guard inside a guard runs fn directly: the
 * outermost one catches. Every GLPK call of encode/ runs under it. */
#ifndef LG_GLPK_GUARD_H
#define LG_GLPK_GUARD_H

int lg_glpk_guard(void (*fn)(void *arg), void *arg);

#endif
