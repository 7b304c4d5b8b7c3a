/* load.c — a network file in any supported format, chosen by content (load.h). */
#include "onnx/load.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/netfile.h"
#include "core/nnet.h"
#include "onnx/onnx.h"

lg_status lg_net_load(lg_net *net, const char *path) { return lg_net_load_in(net, path, NULL); }

lg_status lg_net_load_in(lg_net *net, const char *path, const lg_runctx *run)
{
    memset(net, 0, sizeof *net);
    unsigned char head[8] = {0};
    gzFile f = gzopen(path, "rb");
    if (!f) return lg_fail(LG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    int got = gzread(f, head, sizeof head);
    gzclose(f);
    if (got == 8 && memcmp(head, LG_NETFILE_MAGIC, 8) == 0) {
        lg_status st = lg_netfile_read(net, path);
        if (st == LG_OK && (st = lg_runctx_check(run, "network file")) != LG_OK) lg_net_free(net);
        return st;
    }
    unsigned char *buf;
    size_t len;
    lg_status st = lg_file_slurp_in(path, LG_ONNX_MAX_BYTES, run, &buf, &len);
    if (st != LG_OK) return st;
    if (lg_nnet_detect(path, head, got > 0 ? (size_t)got : 0)) {
        if ((st = lg_runctx_check(run, "nnet import")) == LG_OK) st = lg_nnet_parse(net, (const char *)buf, len, path);
        free(buf);
        return st;
    }
    /* anything else is tried as ONNX (a protobuf has no magic number) */
    if ((st = lg_runctx_check(run, "onnx import")) == LG_OK) st = lg_onnx_parse_in(net, buf, len, path, run);
    free(buf);
    return st;
}
