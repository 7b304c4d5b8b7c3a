/* status.h — error codes and the thread-local error message.
 *
 * Recoverable failures return an lg_status; the human-readable detail (file,
 * line, what was expected) is kept in a thread-local buffer set by lg_fail()
 * and read with lg_errmsg(). The buffer is owned by the library; callers copy
 * it if they need it past the next failing call.
 */
#ifndef LG_STATUS_H
#define LG_STATUS_H

typedef enum lg_status {
    LG_OK = 0,
    LG_ERR_NOMEM,
    LG_ERR_IO,
    LG_ERR_FORMAT,
    LG_ERR_ARG,
    LG_ERR_SOLVER,
    LG_ERR_TIMEOUT,
    LG_ERR_NUMERIC,
    LG_ERR_UNSUPPORTED
} lg_status;

/* Short constant name of a status ("format error", ...). Never NULL. */
const char *lg_status_str(lg_status s);

/* Record a printf-style message for the calling thread and return s. */
lg_status lg_fail(lg_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The last message recorded by lg_fail() on this thread ("" if none). */
const char *lg_errmsg(void);


/* Broken invariant (never for input validation): print and abort. */
#define LG_ASSERT(c)                                                            \
    do {                                                                        \
        if (!(c)) lg_assert_fail(#c, __FILE__, __LINE__);                       \
    } while (0)
void lg_assert_fail(const char *expr, const char *file, int line);

#endif
