/* atomic_file.c — temporary file + rename, and whole-line appends
 * (atomic_file.h). POSIX. */
#include "core/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LG_LINE_MAX 65536

/* fsync the folder holding path, so a rename survives a crash (best effort:
 * some file systems refuse fsync on folders). */
static void lg_atomic_sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

lg_status lg_atomic_open(lg_atomic_file *a, const char *path)
{
    memset(a, 0, sizeof *a);
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0, n = strlen(path) + 32;
    a->path = strdup(path);
    a->tmp = malloc(n);
    if (!a->path || !a->tmp) {
        lg_atomic_discard(a);
        return lg_fail(LG_ERR_NOMEM, "%s: out of memory", path);
    }
    /* ".<name>.tmp.XXXXXX" in the target's folder */
    snprintf(a->tmp, n, "%.*s.%s.tmp.XXXXXX", (int)dl, path, path + dl);
    int fd = mkstemp(a->tmp);
    if (fd < 0) {
        lg_status st = lg_fail(LG_ERR_IO, "%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        free(a->tmp);
        a->tmp = NULL;
        lg_atomic_discard(a);
        return st;
    }
    (void)fchmod(fd, 0644); /* mkstemp makes 0600; results are meant to be shared like fopen's files */
    if (!(a->f = fdopen(fd, "w"))) {
        close(fd);
        lg_status st = lg_fail(LG_ERR_IO, "%s: cannot open the temporary file: %s", path, strerror(errno));
        lg_atomic_discard(a);
        return st;
    }
    return LG_OK;
}

lg_status lg_atomic_publish(const char *tmp, const char *path)
{
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return lg_fail(LG_ERR_IO, "%s: %s", tmp, strerror(errno));
    int rc = fsync(fd);
    int err = errno;
    close(fd);
    if (rc != 0) return lg_fail(LG_ERR_IO, "%s: fsync: %s", tmp, strerror(err));
    if (rename(tmp, path) != 0) return lg_fail(LG_ERR_IO, "%s: cannot replace it: %s", path, strerror(errno));
    lg_atomic_sync_dir(path);
    return LG_OK;
}

lg_status lg_atomic_commit(lg_atomic_file *a)
{
    if (!a->f) {
        lg_atomic_discard(a);
        return lg_fail(LG_ERR_IO, "atomic file: commit without open");
    }
    lg_status st = LG_OK;
    int bad = ferror(a->f) || fflush(a->f) != 0;
    int err = errno;
    bad |= fclose(a->f) != 0;
    a->f = NULL;
    if (bad) st = lg_fail(LG_ERR_IO, "%s: write error: %s", a->path, strerror(err ? err : errno));
    else st = lg_atomic_publish(a->tmp, a->path);
    if (st == LG_OK) {
        free(a->tmp);
        a->tmp = NULL;
    }
    lg_atomic_discard(a);
    return st;
}

void lg_atomic_discard(lg_atomic_file *a)
{
    if (a->f) fclose(a->f);
    if (a->tmp) remove(a->tmp);
    free(a->tmp);
    free(a->path);
    memset(a, 0, sizeof *a);
}

lg_status lg_atomic_write(const char *path, const void *data, size_t n)
{
    lg_atomic_file a;
    lg_status st = lg_atomic_open(&a, path);
    if (st != LG_OK) return st;
    if (n && fwrite(data, 1, n, a.f) != n) {
        st = lg_fail(LG_ERR_IO, "%s: write error: %s", path, strerror(errno));
        lg_atomic_discard(&a);
        return st;
    }
    return lg_atomic_commit(&a);
}

lg_status lg_atomic_append_line(int fd, const char *line, size_t len)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0) return lg_fail(LG_ERR_IO, "append: %s", strerror(errno));
    ssize_t w;
    do w = write(fd, line, len);
    while (w < 0 && errno == EINTR);
    if (w < 0 || (size_t)w != len) {
        int err = w < 0 ? errno : ENOSPC;
        if (w > 0) (void)ftruncate(fd, sb.st_size); /* never leave part of a line */
        return lg_fail(LG_ERR_IO, "append: write error: %s", strerror(err));
    }
    if (fdatasync(fd) != 0) return lg_fail(LG_ERR_IO, "append: cannot sync: %s", strerror(errno));
    return LG_OK;
}

lg_status lg_line_log_open(lg_line_log *l, const char *path, const char *header)
{
    l->fd = -1;
    l->path = NULL;
    lg_status st = lg_atomic_write(path, header, strlen(header));
    if (st != LG_OK) return st;
    if (!(l->path = strdup(path))) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", path);
    l->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (l->fd < 0) {
        st = lg_fail(LG_ERR_IO, "%s: cannot open for appending: %s", path, strerror(errno));
        free(l->path);
        l->path = NULL;
    }
    return st;
}

lg_status lg_line_log_resume(lg_line_log *l, const char *path, const char *header, int *resumed)
{
    *resumed = 0;
    size_t hn = strlen(header);
    FILE *f = fopen(path, "rb");
    if (f) {
        char *head = malloc(hn + 1);
        size_t got = head ? fread(head, 1, hn, f) : 0;
        int same = head && got == hn && memcmp(head, header, hn) == 0;
        free(head);
        fclose(f);
        if (same) {
            l->fd = -1;
            if (!(l->path = strdup(path))) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", path);
            l->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
            if (l->fd < 0) {
                lg_status st = lg_fail(LG_ERR_IO, "%s: cannot open for appending: %s", path, strerror(errno));
                free(l->path);
                l->path = NULL;
                return st;
            }
            *resumed = 1;
            return LG_OK;
        }
    }
    return lg_line_log_open(l, path, header);
}

lg_status lg_line_log_printf(lg_line_log *l, const char *fmt, ...)
{
    if (!l->path || l->fd < 0) return lg_fail(LG_ERR_IO, "line log: not open");
    char *buf = malloc(LG_LINE_MAX + 2);
    if (!buf) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", l->path);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, LG_LINE_MAX, fmt, ap);
    va_end(ap);
    lg_status st = LG_OK;
    if (n < 0 || n >= LG_LINE_MAX) {
        st = lg_fail(LG_ERR_ARG, "%s: a row longer than %d bytes", l->path, LG_LINE_MAX);
        goto done;
    }
    if (n == 0 || buf[n - 1] != '\n') buf[n++] = '\n';
    st = lg_atomic_append_line(l->fd, buf, (size_t)n);
    if (st != LG_OK) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", lg_errmsg());
        st = lg_fail(st, "%s: %s", l->path, msg);
    }
done:
    free(buf);
    return st;
}

lg_status lg_line_log_close(lg_line_log *l)
{
    lg_status st = LG_OK;
    if (l->path && l->fd >= 0 && close(l->fd) != 0) st = lg_fail(LG_ERR_IO, "%s: close: %s", l->path, strerror(errno));
    free(l->path);
    l->fd = -1;
    l->path = NULL;
    return st;
}
