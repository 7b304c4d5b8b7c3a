/* nnet.h — read the .nnet text format (the Stanford/Reluplex format nnenum
 * and Marabou read) into a dense ReLU chain (docs/FORMATS.md ".nnet").
 *
 * The file: `//` comment lines, then numLayers,inputSize,outputSize,
 * maxLayerSize; the numLayers+1 layer sizes; a flag (unused); the inputs'
 * minimums, maximums, means (inputSize+1: the last is the output's) and
 * ranges (likewise); then per layer its weight rows (one line of n_in values
 * per output) and its biases (one line each). Hidden layers are ReLU, the
 * last is identity. The input normalisation (x − mean)/range is kept exact
 * as the net's in_sub/in_div; the output's y·range + mean, when it is not the
 * identity, is one more exact diagonal layer. Minimums and maximums are read
 * and checked but not applied: the net is the unclipped one (inside
 * [min, max] the two agree), as nnenum and Marabou read it.
 *
 * The caller owns the lg_net filled in (lg_net_free); on error *net is zeroed.
 */
#ifndef LG_NNET_H
#define LG_NNET_H

#include <stddef.h>

#include "core/net.h"

/* Parse text[len] (not NUL-terminated); name is used in messages
 * ("name:line: ..."). LG_ERR_FORMAT on a malformed file. */
lg_status lg_nnet_parse(lg_net *net, const char *text, size_t len, const char *name);
/* 1 when path names a .nnet file (by its extension, .nnet or .nnet.gz) or
 * head[0..n) starts like one ("//" comment); else 0. */
int lg_nnet_detect(const char *path, const unsigned char *head, size_t n);

#endif
