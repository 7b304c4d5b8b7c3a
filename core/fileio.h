/* fileio.h — reading a whole file, plain or gzip-compressed, into memory,
 * and handing it to a parser. Buffers are malloc'd and owned by the caller
 * (lg_file_slurp) or freed before returning (lg_net_read_with). */
#ifndef LG_FILEIO_H
#define LG_FILEIO_H

#include <stddef.h>

#include "core/net.h"
#include "core/runctx.h"

/* Read a whole file into a malloc'd buffer (caller frees); a gzip file
 * (.onnx.gz, .vnnlib.gz, ...) is decompressed transparently. Refuses files
 * larger than max_bytes. */
lg_status lg_file_slurp(const char *path, size_t max_bytes, unsigned char **buf, size_t *len);
/* The same with run's deadline checked every 16 MB read (run NULL: none). */
lg_status lg_file_slurp_in(const char *path, size_t max_bytes, const lg_runctx *run, unsigned char **buf,
                           size_t *len);

/* Read the whole file (at most max_bytes) and hand it to parse (a format's
 * lg_*_parse function); the buffer is freed before returning. */
typedef lg_status (*lg_net_parse_fn)(lg_net *net, const unsigned char *buf, size_t len, const char *name);
lg_status lg_net_read_with(lg_net *net, const char *path, size_t max_bytes, lg_net_parse_fn parse);

#endif
