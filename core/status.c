/* status.c — error codes and the thread-local error message (status.h). */
#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static _Thread_local char lg_msg[1024];

const char *lg_status_str(lg_status s)
{
    switch (s) {
    case LG_OK: return "ok";
    case LG_ERR_NOMEM: return "out of memory";
    case LG_ERR_IO: return "i/o error";
    case LG_ERR_FORMAT: return "format error";
    case LG_ERR_ARG: return "invalid argument";
    case LG_ERR_SOLVER: return "solver error";
    case LG_ERR_TIMEOUT: return "timeout";
    case LG_ERR_NUMERIC: return "numerical error";
    case LG_ERR_UNSUPPORTED: return "unsupported";
    }
    return "unknown status";
}

lg_status lg_fail(lg_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lg_msg, sizeof lg_msg, fmt, ap);
    va_end(ap);
    return s;
}

const char *lg_errmsg(void) { return lg_msg; }


void lg_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "lgelu: internal error: assertion '%s' failed at %s:%d\n", expr, file, line);
    abort();
}
