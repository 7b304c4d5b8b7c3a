/* netfile.h — the native network file format (".lgnet"), read and write.
 *
 * Layout (all little-endian; documented in docs/FORMATS.md "Native network format"):
 *   magic "LGELUNET" (8 bytes), u32 version (1 to 7), u32 n_in, u32 n_layers,
 *   u32 flags (bit 0: in_sub present, bit 1: in_div present), f64 t,
 *   per layer: u32 kind, u32 n_in, u32 n_out, u32 act, f64 lambda, f64 s,
 *   [f64 in_sub[n_in]], [f64 in_div[n_in]],
 *   f64 params[n_params] (W_k row-major then b_k, layer by layer),
 *   u32 CRC-32 (zlib) of every byte before it.
 * Version 2 has the same layout and adds activation codes 5
 * (swish, lambda = β) and 6 (prelu, lambda = slope a, s = a). The writer
 * emits the lowest version that can hold the net (1 unless a layer is swish
 * or prelu), so files without the new activations stay readable by older
 * lgelu builds; the reader accepts both and refuses codes 5 and 6 in a
 * version-1 file.
 * Version 3 adds layer kind 1 (conv, core/net.h): right after such a
 * layer's 32-byte header come 12 u32 of geometry (c_in, h_in, w_in, c_out,
 * h_out, w_out, kh, kw, sh, sw, ph, pw), and its parameters are the kernel
 * [c_out][c_in][kh][kw] then b[n_out]. The writer emits version 3 only when
 * a layer is a conv layer.
 * Version 4 holds a graph (core/net.h): after each layer's header (and its
 * conv geometry) come i32 src (−1: the input) and u32 n_terms, then per
 * further term u32 kind (0 dense, 1 conv, 2 index map), u32 n_in, i32 src
 * and, for a conv, its 12 geometry fields; a layer's own term may be kind 2.
 * The parameters are in the net's order (per layer W_0, b, then the further
 * terms' weights), then every index map as i32[n_out] (−1 = a zero), layer
 * by layer, term by term, before the CRC. The writer emits version 4 only
 * for a net that is not a chain (lg_net_is_chain).
 * Version 5 adds layer kind 3, a max-pool node (core/net.h LG_LAYER_MAX),
 * as a layer's own term only: its 12 geometry fields follow the header as
 * a conv's do (c_out = c_in; kh, kw the window, sh, sw the stride, ph, pw
 * the padding), it has no weights and its b[n_out] is 0. The writer emits
 * version 5 only for a net with a max-pool node.
 * Version 6 adds the Transformer nodes (core/net.h, DESIGN.md §1
 * "Transformer nodes") as a layer's own term only, each with the identity
 * activation and b[n_out] = 0: kind 4 (product) is followed by u32 K,
 * i32 src_b, u32 n_in_b, and its index tables ia then ib (i32[n_out·K]
 * each, entries 0..width−1) take its place among the maps; kind 5
 * (softmax) by u32 group; kind 6 (layernorm) by u32 group and f64 eps, and
 * its 2·group weights gamma then beta precede its b among the parameters.
 * The writer emits version 6 only for a net with such a node.
 * Version 7 adds kind 7, a per-token map (core/net.h LG_LAYER_TOKMAP), as
 * any term: its 12 geometry fields follow its header (or its further-term
 * record) as a conv's do (c_in = i, h_in = T, w_in = 1, c_out = o,
 * h_out = T, w_out = 1, kh = kw = sh = sw = 1, ph = pw = 0) and its o·i
 * block weights [o][i] take its place among the parameters. The writer
 * emits version 7 only for a net with such a term. On reading any version,
 * a dense term that is exactly kron(I_T, A) with T > 1 (bit-equal diagonal
 * blocks, zeros elsewhere) is replaced by the per-token map of A
 * (core/op.h lg_net_compact_tokmap): the same real function.
 * The reader checks every field and the file size against the header before
 * it allocates, so a truncated, corrupt or hostile file is refused with a
 * message naming the file and the problem.
 *
 * Reading any format by content: onnx/load.h (lg_net_load). Whole-file
 * reading: core/fileio.h. The caller owns the lg_net filled in and frees it
 * with lg_net_free().
 */
#ifndef LG_NETFILE_H
#define LG_NETFILE_H

#include <stddef.h>
#include <stdint.h>

#include "core/fileio.h"
#include "core/net.h"
#include "core/runctx.h"

#define LG_NETFILE_VERSION 7u    /* newest version written and read */
#define LG_NETFILE_CONV_FIELDS 12 /* u32 geometry fields after a conv layer's header */
#define LG_NETFILE_VERSION_MIN 1u /* oldest version read */
/* Activation codes below this are the only ones a version-1 file may hold. */
#define LG_NETFILE_V1_ACT_COUNT 5u
#define LG_NETFILE_MAGIC "LGELUNET"

lg_status lg_netfile_write(const lg_net *net, const char *path);
lg_status lg_netfile_read(lg_net *net, const char *path);
/* Parse an in-memory image of a native file; `name` is used in messages. */
lg_status lg_netfile_parse(lg_net *net, const unsigned char *buf, size_t len, const char *name);

#endif
