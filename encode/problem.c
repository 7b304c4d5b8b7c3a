/* problem.c — the back-end query's helpers: default solve options, results, LP statistics (problem.h). */
#include "encode/problem.h"

#include <stdlib.h>
#include <string.h>

lg_solve_opts lg_solve_opts_default(void)
{
    lg_solve_opts o;
    memset(&o, 0, sizeof o);
    o.run = lg_runctx_none();
    o.run.seed = 0;
    return o;
}

void lg_result_free(lg_result *r)
{
    free(r->x);
    memset(r, 0, sizeof *r);
}

void lg_lp_stats_add(lg_lp_stats *a, const lg_lp_stats *b)
{
    a->n_lp += b->n_lp;
    a->lp_seconds += b->lp_seconds;
    a->cert_seconds += b->cert_seconds;
    a->n_open += b->n_open;
}
