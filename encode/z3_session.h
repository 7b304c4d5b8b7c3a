/* z3_session.h — one Z3 query's session, for every Z3 back-end of encode/
 * (internal): the context and solver, their parameters, the error record,
 * and the deadline watchdog.
 *
 * lg_z3_session_open makes the context (models on; run.memory_mb as Z3's
 * memory_max_size), installs an error handler that records the session's
 * first error (Z3 then never exits: z->err, z->errmsg, read per session),
 * makes the solver (for a logic, or Z3's simple solver) with the run's
 * random seed, and with a deadline starts a watchdog thread that calls
 * Z3_interrupt every 50 ms once the deadline has passed — only while a
 * check runs (lg_z3_session_check arms it): an interrupt while an encoding
 * is built makes Z3 return NULL terms, which later calls would dereference.
 * Z3 4.8.12 does not always listen, so the hard limit stays the isolation
 * of every back-end (isolate.h). lg_z3_session_close releases everything;
 * closing a zeroed session is a no-op. One thread per session.
 */
#ifndef LG_Z3_SESSION_H
#define LG_Z3_SESSION_H

#include <pthread.h>
#include <z3.h>

#include "encode/problem.h"

typedef struct lg_z3_session {
    Z3_context ctx;
    Z3_solver s;
    Z3_error_code err;        /* the first Z3 error of this session, Z3_OK if none */
    char errmsg[256];         /* its message */
    double deadline;          /* lg_now() seconds; ≤ 0 none */
    /* the watchdog (with a deadline) */
    pthread_t thr;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int have_thr, done, armed;
    struct lg_z3_session *next; /* the thread's open sessions (the error handler finds its session) */
} lg_z3_session;

/* who names the back-end in messages ("z3", "z3-lp"); logic: the solver's
 * logic ("QF_LRA"), or NULL for Z3's simple solver. LG_ERR_SOLVER when Z3
 * cannot make a context, solver or watchdog (z is then closed). */
lg_status lg_z3_session_open(lg_z3_session *z, const char *who, const char *logic, const lg_solve_opts *o);
/* Z3's "timeout" parameter: the time left until the deadline (no-op without one). */
void lg_z3_session_timeout(lg_z3_session *z);
/* Z3_solver_check with the watchdog armed. Past the deadline an
 * interruption is no error: the session's error is cleared and the answer
 * is Z3_L_UNDEF. */
Z3_lbool lg_z3_session_check(lg_z3_session *z);
/* 1 when the deadline has passed. */
int lg_z3_session_late(const lg_z3_session *z);
void lg_z3_session_close(lg_z3_session *z);

#endif
