/* load.h — load a network file in any supported format: the native format
 * (core/netfile.h, by its magic), .nnet (core/nnet.h, by its extension or a
 * leading "//" comment) or ONNX (onnx/onnx.h, everything else).
 * The format dispatch lives here so that neither reader depends on the
 * other. The caller owns the lg_net filled in (lg_net_free). */
#ifndef LG_ONNX_LOAD_H
#define LG_ONNX_LOAD_H

#include "core/net.h"
#include "core/runctx.h"

/* Load a network from `path` in any supported format (native, .nnet or
 * ONNX, detected by content and extension). */
lg_status lg_net_load(lg_net *net, const char *path);
/* The same under run's deadline (NULL: none; core/runctx.h), checked after
 * the file is read and through the ONNX import (lg_onnx_parse_in): past it,
 * LG_ERR_TIMEOUT and *net zeroed. */
lg_status lg_net_load_in(lg_net *net, const char *path, const lg_runctx *run);

#endif
