/* atomic.c — crash-safe publish and line appends (atomic.h). */
#include "core/atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

lg_status lg_atomic_publish(const char *tmp, const char *path)
{
    int fd = open(tmp, O_RDONLY);
    if (fd < 0) return lg_fail(LG_ERR_IO, "%s: %s", tmp, strerror(errno));
    int rc = fsync(fd);
    close(fd);
    if (rc != 0) return lg_fail(LG_ERR_IO, "%s: fsync: %s", tmp, strerror(errno));
    if (rename(tmp, path) != 0) return lg_fail(LG_ERR_IO, "rename %s -> %s: %s", tmp, path, strerror(errno));
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
    int dfd = open(dir[0] ? dir : "/", O_RDONLY);
    if (dfd >= 0) {
        (void)fsync(dfd); /* best effort: some file systems refuse fsync on directories */
        close(dfd);
    }
    return LG_OK;
}

lg_status lg_atomic_append_line(int fd, const char *line, size_t len)
{
    ssize_t w;
    do w = write(fd, line, len);
    while (w < 0 && errno == EINTR);
    if (w < 0 || (size_t)w != len) return lg_fail(LG_ERR_IO, "append: %s", w < 0 ? strerror(errno) : "short write");
    if (fsync(fd) != 0) return lg_fail(LG_ERR_IO, "append: fsync: %s", strerror(errno));
    return LG_OK;
}
