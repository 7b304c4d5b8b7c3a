/* atomic_file.h — files that are never seen half-written ("no
 * lost results"). Two mechanisms, one for each kind of result file:
 *
 *  - lg_atomic_file: a whole file replaced at once. Writes go to a
 *    temporary file beside the target (same folder, so rename(2) is atomic),
 *    which lg_atomic_commit flushes, fsyncs and renames over the target (and
 *    fsyncs the folder). A reader sees the old file or the whole new one;
 *    after a crash or a kill the target is intact, at worst a stray
 *    ".<name>.tmp.XXXXXX" is left behind.
 *  - lg_line_log: a CSV grown one row at a time. The header is created
 *    atomically as above; each row is formatted in memory and written with
 *    one write(2) on an O_APPEND descriptor, then fdatasync'd. A short write
 *    (disk full) is truncated away, so the file only ever holds whole lines.
 *
 * Ownership: each object owns its FILE/descriptor and path copies until
 * commit/discard/close; a zeroed object may be discarded/closed (no-op).
 * Not for sharing one object between threads.
 */
#ifndef LG_ATOMIC_FILE_H
#define LG_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "core/status.h"

typedef struct lg_atomic_file {
    FILE *f;    /* write here (the temporary file) */
    char *path; /* target */
    char *tmp;  /* temporary file beside it */
} lg_atomic_file;

/* Create the temporary file for path. LG_ERR_IO naming path on failure. */
lg_status lg_atomic_open(lg_atomic_file *a, const char *path);
/* Flush, fsync, close and rename over the target. On any failure the
 * temporary file is removed and the target left as it was. Always releases a. */
lg_status lg_atomic_commit(lg_atomic_file *a);
/* Close and remove the temporary file; the target is untouched. */
void lg_atomic_discard(lg_atomic_file *a);
/* Replace path with the n bytes of data (open + write + commit). */
lg_status lg_atomic_write(const char *path, const void *data, size_t n);

/* The two primitives underneath, for callers that manage their own files
 * (the study runner): fsync tmp, rename it over path and fsync the folder;
 * and one write(2) of a whole line on an O_APPEND descriptor, truncated away
 * on a short write, then fdatasync. Nothing is owned. */
lg_status lg_atomic_publish(const char *tmp, const char *path);
lg_status lg_atomic_append_line(int fd, const char *line, size_t len);

typedef struct lg_line_log {
    int fd;     /* O_APPEND descriptor, −1 when closed */
    char *path;
} lg_line_log;

/* Create (or replace) path holding exactly header (which should end in
 * '\n'; may be "") atomically, then open it for appending rows. */
lg_status lg_line_log_open(lg_line_log *l, const char *path, const char *header);
/* Keep appending to path when it exists and starts with exactly header
 * (a resumed run); else as lg_line_log_open. *resumed is set to 1 when
 * the existing rows were kept. */
lg_status lg_line_log_resume(lg_line_log *l, const char *path, const char *header, int *resumed);
/* Append one row: printf-formatted, a '\n' added if missing, written whole
 * with one write(2) and made durable with fdatasync. At most 64 KiB. */
lg_status lg_line_log_printf(lg_line_log *l, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Close; a zeroed or closed log is a no-op. */
lg_status lg_line_log_close(lg_line_log *l);

#endif
