/* glpk_guard.h — GLPK's fatal errors as a return value, and GLPK's terminal
 * output kept off stdout, in one place.
 *
 * GLPK stops the process on a failed internal check (seen: spxchuzr.c
 * "teta >= 0" on near-degenerate warm starts, prob4.c "invalid scale
 * factor"). lg_glpk_guard runs fn(arg) with glp_error_hook set; on such an
 * error it frees this thread's GLPK environment — every glp_prob of the
 * thread is then gone, so the caller must forget its pointers — and returns
 * 1. Otherwise it returns 0. A guard inside a guard runs fn directly: the
 * outermost one catches. Every GLPK call of encode/ runs under it.
 *
 * While fn runs, everything GLPK prints goes through one terminal hook: it
 * never reaches stdout (where results and JSON go); it is echoed to stderr
 * only when this thread asked for solver chatter (lg_glpk_guard_echo), and
 * the last part of it is kept so that a caught error can be reported with
 * GLPK's own words (lg_glpk_guard_message). */
#ifndef LG_GLPK_GUARD_H
#define LG_GLPK_GUARD_H

int lg_glpk_guard(void (*fn)(void *arg), void *arg);

/* Echo GLPK's output to stderr (on = 1) or keep it quiet (0, the default)
 * for the guards this thread runs; returns the previous setting. */
int lg_glpk_guard_echo(int on);

/* GLPK's last message before the error the last failed guard of this
 * thread caught, one line, without the trailing newline; "" if none. The
 * string lives in thread-local storage until the next guard of the thread. */
const char *lg_glpk_guard_message(void);

#endif
