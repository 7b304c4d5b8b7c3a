/* fileio.c — reading whole (possibly gzip-compressed) files (fileio.h). */
#include "core/fileio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define LG_SLURP_CHECK_BYTES ((size_t)16 << 20)
lg_status lg_file_slurp(const char *path, size_t max_bytes, unsigned char **buf, size_t *len)
{
    return lg_file_slurp_in(path, max_bytes, NULL, buf, len);
}

lg_status lg_file_slurp_in(const char *path, size_t max_bytes, const lg_runctx *run, unsigned char **buf,
                                  size_t *len)
{
    *buf = NULL;
    *len = 0;
    /* gzread reads a plain file unchanged and a gzip file decompressed */
    gzFile f = gzopen(path, "rb");
    if (!f) return lg_fail(LG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    lg_status st = LG_OK;
    size_t cap = 1 << 16, n = 0;
    unsigned char *p = malloc(cap);
    if (!p) {
        st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", path);
        goto done;
    }
    for (;;) {
        if (n == cap) {
            if (cap >= max_bytes) {
                st = lg_fail(LG_ERR_FORMAT, "%s: file larger than %zu bytes", path, max_bytes);
                goto done;
            }
            cap *= 2;
            unsigned char *np = realloc(p, cap);
            if (!np) {
                st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", path);
                goto done;
            }
            p = np;
        }
        size_t want = cap - n > (size_t)1 << 30 ? (size_t)1 << 30 : cap - n;
        if (run) {
            if ((st = lg_runctx_check(run, "reading the network")) != LG_OK) goto done;
            if (want > LG_SLURP_CHECK_BYTES) want = LG_SLURP_CHECK_BYTES;
        }
        int got = gzread(f, p + n, (unsigned)want);
        if (got < 0) {
            int zerr;
            const char *msg = gzerror(f, &zerr);
            st = lg_fail(LG_ERR_IO, "%s: read error: %s", path, msg);
            goto done;
        }
        n += (size_t)got;
        if (got == 0) break;
    }
done:
    gzclose(f);
    if (st != LG_OK) {
        free(p);
        return st;
    }
    *buf = p;
    *len = n;
    return LG_OK;
}

lg_status lg_net_read_with(lg_net *net, const char *path, size_t max_bytes, lg_net_parse_fn parse)
{
    unsigned char *buf;
    size_t len;
    memset(net, 0, sizeof *net);
    lg_status st = lg_file_slurp(path, max_bytes, &buf, &len);
    if (st != LG_OK) return st;
    st = parse(net, buf, len, path);
    free(buf);
    return st;
}
