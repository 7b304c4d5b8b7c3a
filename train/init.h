/* init.h — seeded initialisation of a dense lg_net's weights before
 * training, by scheme (`lgelu train --init`):
 *   he      W ~ N(0, 2/n_in) before a rectifier-like activation (relu, gelu,
 *           lgelu, sigmoid), Xavier N(0, 2/(n_in+n_out)) before identity;
 *           biases 0 (the original lgelu initialisation);
 *   xavier  W ~ N(0, 2/(n_in+n_out)) for every layer, biases 0;
 *   torch   PyTorch's nn.Linear default: W ~ U(±1/√n_in) (kaiming_uniform
 *           with a = √5), b ~ U(±1/√n_in).
 * Every lgelu or swish layer gets s = 0 (λ or β = 1 + ln 2), prelu layers
 * a = s = LG_PRELU_INIT_SLOPE, other layers λ = 1. Values
 * are float-representable, so the trainer's float copy is exact. The net
 * is modified in place; nothing is allocated.
 */
#ifndef LG_TRAIN_INIT_H
#define LG_TRAIN_INIT_H

#include <stdint.h>

#include "core/net.h"

typedef enum lg_init_kind { LG_INIT_HE = 0, LG_INIT_XAVIER = 1, LG_INIT_TORCH = 2 } lg_init_kind;

/* Parse "he" / "xavier" / "torch"; 0 on success, −1 if unknown. */
int lg_init_parse(const char *name, lg_init_kind *out);
const char *lg_init_name(lg_init_kind kind);

/* Initialise every layer of net (dense layers) by kind from seed. */
void lg_init_weights(lg_net *net, uint64_t seed, lg_init_kind kind);

#endif
