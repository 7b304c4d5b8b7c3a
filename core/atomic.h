/* atomic.h — crash-safe file updates: publish a finished file under its
 * final name, and append whole lines to a log.
 *
 * lg_atomic_publish(tmp, path): fsync tmp, rename it to path, fsync the
 * directory — a reader sees either the old file or the whole new one.
 * lg_atomic_append_line(fd, line, len): one write(2) of the whole line on a
 * descriptor opened with O_APPEND, then fsync; a kill loses at most the line
 * being written and never interleaves two lines. Nothing is owned.
 */
#ifndef LG_ATOMIC_H
#define LG_ATOMIC_H

#include <stddef.h>

#include "core/status.h"

lg_status lg_atomic_publish(const char *tmp, const char *path);
lg_status lg_atomic_append_line(int fd, const char *line, size_t len);

#endif
