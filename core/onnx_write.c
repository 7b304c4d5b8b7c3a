#include "core/onnx.h"
lg_status lg_onnx_write(const lg_net *net, const char *path) { (void)net; return lg_fail(LG_ERR_UNSUPPORTED, "%s: todo", path); }
