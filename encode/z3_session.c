/* z3_session.c — one Z3 query's session (z3_session.h). */
#include "encode/z3_session.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"

/* The open sessions of this thread: Z3's error handler gets the context
 * only, and finds its session here. */
static _Thread_local lg_z3_session *lg_z3_open;

static void lg_z3_record_error(Z3_context c, Z3_error_code e)
{
    for (lg_z3_session *z = lg_z3_open; z; z = z->next)
        if (z->ctx == c) {
            if (z->err != Z3_OK) return; /* keep the first */
            z->err = e;
            const char *m = Z3_get_error_msg(c, e);
            snprintf(z->errmsg, sizeof z->errmsg, "%s", m ? m : "?");
            return;
        }
}

static void *lg_z3_watchdog(void *arg)
{
    lg_z3_session *z = arg;
    pthread_mutex_lock(&z->mu);
    while (!z->done) {
        double now = lg_now(), wake = z->deadline;
        if (now >= z->deadline) {
            if (z->armed) Z3_interrupt(z->ctx);
            wake = now + 0.05;
        }
        struct timespec ts;
        ts.tv_sec = (time_t)wake;
        ts.tv_nsec = (long)((wake - (double)ts.tv_sec) * 1e9);
        if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
        pthread_cond_timedwait(&z->cv, &z->mu, &ts);
    }
    pthread_mutex_unlock(&z->mu);
    return NULL;
}

lg_status lg_z3_session_open(lg_z3_session *z, const char *who, const char *logic, const lg_solve_opts *o)
{
    memset(z, 0, sizeof *z);
    z->deadline = o->run.deadline;
    Z3_config cfg = Z3_mk_config();
    if (!cfg) return lg_fail(LG_ERR_SOLVER, "%s: cannot create configuration", who);
    Z3_set_param_value(cfg, "model", "true");
    if (o->run.memory_mb > 0) { /* a global parameter: set per query (the back-end runs isolated) */
        char mb[32];
        snprintf(mb, sizeof mb, "%u", o->run.memory_mb >= 4e9 ? 4000000000u : (unsigned)o->run.memory_mb);
        Z3_global_param_set("memory_max_size", mb);
    }
    z->ctx = Z3_mk_context(cfg);
    Z3_del_config(cfg);
    if (!z->ctx) return lg_fail(LG_ERR_SOLVER, "%s: cannot create context", who);
    z->next = lg_z3_open;
    lg_z3_open = z;
    Z3_set_error_handler(z->ctx, lg_z3_record_error);
    z->s = logic ? Z3_mk_solver_for_logic(z->ctx, Z3_mk_string_symbol(z->ctx, logic)) : Z3_mk_simple_solver(z->ctx);
    if (!z->s || z->err != Z3_OK) {
        z->s = NULL;
        lg_status st = lg_fail(LG_ERR_SOLVER, "%s: cannot create solver: %s", who, z->errmsg);
        lg_z3_session_close(z);
        return st;
    }
    Z3_solver_inc_ref(z->ctx, z->s);
    Z3_params prm = Z3_mk_params(z->ctx);
    Z3_params_inc_ref(z->ctx, prm);
    Z3_params_set_uint(z->ctx, prm, Z3_mk_string_symbol(z->ctx, "random_seed"), (unsigned)o->run.seed);
    Z3_solver_set_params(z->ctx, z->s, prm);
    Z3_params_dec_ref(z->ctx, prm);
    if (z->deadline > 0) {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_mutex_init(&z->mu, NULL);
        pthread_cond_init(&z->cv, &ca);
        pthread_condattr_destroy(&ca);
        if (pthread_create(&z->thr, NULL, lg_z3_watchdog, z) != 0) {
            pthread_cond_destroy(&z->cv);
            pthread_mutex_destroy(&z->mu);
            lg_z3_session_close(z);
            return lg_fail(LG_ERR_SOLVER, "%s: cannot start the timeout watchdog", who);
        }
        z->have_thr = 1;
    }
    return LG_OK;
}

void lg_z3_session_timeout(lg_z3_session *z)
{
    if (!(z->deadline > 0)) return;
    double left_ms = (z->deadline - lg_now()) * 1000.0;
    Z3_params prm = Z3_mk_params(z->ctx);
    Z3_params_inc_ref(z->ctx, prm);
    Z3_params_set_uint(z->ctx, prm, Z3_mk_string_symbol(z->ctx, "timeout"),
                       left_ms < 1 ? 1u : left_ms > 4e9 ? 4000000000u : (unsigned)left_ms);
    Z3_solver_set_params(z->ctx, z->s, prm);
    Z3_params_dec_ref(z->ctx, prm);
}

int lg_z3_session_late(const lg_z3_session *z) { return z->deadline > 0 && lg_now() >= z->deadline; }

static void lg_z3_arm(lg_z3_session *z, int on)
{
    if (!z->have_thr) return;
    pthread_mutex_lock(&z->mu);
    z->armed = on;
    pthread_mutex_unlock(&z->mu);
}

Z3_lbool lg_z3_session_check(lg_z3_session *z)
{
    lg_z3_arm(z, 1);
    Z3_lbool res = Z3_solver_check(z->ctx, z->s);
    lg_z3_arm(z, 0);
    if (z->err != Z3_OK && res == Z3_L_UNDEF && lg_z3_session_late(z)) z->err = Z3_OK; /* the watchdog: a timeout */
    return res;
}

void lg_z3_session_close(lg_z3_session *z)
{
    if (z->have_thr) {
        pthread_mutex_lock(&z->mu);
        z->done = 1;
        pthread_cond_signal(&z->cv);
        pthread_mutex_unlock(&z->mu);
        pthread_join(z->thr, NULL);
        pthread_cond_destroy(&z->cv);
        pthread_mutex_destroy(&z->mu);
        z->have_thr = 0;
    }
    if (z->s) Z3_solver_dec_ref(z->ctx, z->s);
    if (z->ctx) {
        for (lg_z3_session **p = &lg_z3_open; *p; p = &(*p)->next)
            if (*p == z) {
                *p = z->next;
                break;
            }
        Z3_del_context(z->ctx);
    }
    memset(z, 0, sizeof *z);
}
