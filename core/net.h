/* net.h — the network type shared by every stage.
 *
 * An lg_net is a feed-forward chain of layers. Each layer is an affine map
 * (today: dense, z = W·x + b) followed by an activation (identity, relu, gelu,
 * lgelu with its hardness λ and raw parameter s, DESIGN.md §1). An optional
 * per-input normalisation x' = (x − in_sub)/in_div precedes the first layer
 * (kept separate so imported ONNX constants stay exact).
 *
 * Parameters are double so that imported networks (float or double
 * initialisers) and verification encodings are exact; the trainer keeps its
 * own float copy. All W and b live in one allocation `params`, carved by the
 * layer shapes (W of layer k then b of layer k, in order). The net owns
 * params, layers and the normalisation arrays; lg_net_free releases them.
 *
 * Layer kinds other than dense (convolutions) will be added as new
 * lg_layer_kind values with their own shape fields; callers that walk layers
 * through lg_layer's n_in/n_out and lg_net_forward keep working.
 */
#ifndef LG_NET_H
#define LG_NET_H

#include <stddef.h>

#include "core/act.h"
#include "core/status.h"

typedef enum lg_layer_kind { LG_LAYER_DENSE = 0 } lg_layer_kind;

typedef struct lg_layer {
    lg_layer_kind kind;
    int n_in, n_out;
    double *W;      /* [n_out][n_in] row-major, points into net->params */
    double *b;      /* [n_out], points into net->params */
    lg_act act;     /* applied to z = W·x + b */
    double lambda;  /* hardness λ for LG_ACT_LGELU (≥ 1), β for LG_ACT_SWISH (≥ 1),
                       negative slope a for LG_ACT_PRELU; 1 for GELU; else 1 */
    double s;       /* raw parameter: λ (β) = 1 + softplus(s/t) while learned;
                       prelu: s = a (no reparameterisation) */
} lg_layer;

typedef struct lg_net {
    int n_in;          /* input dimension */
    int n_layers;
    lg_layer *layers;  /* [n_layers] */
    double *in_sub;    /* [n_in] or NULL: x' = (x − in_sub)/in_div */
    double *in_div;    /* [n_in] or NULL */
    double t;          /* temperature of the λ reparameterisation (default 0.1) */
    double *params;    /* one allocation: all W and b */
    size_t n_params;
} lg_net;

/* Hard limits that keep hostile files from causing giant allocations. */
#define LG_NET_MAX_DIM (1 << 24)
#define LG_NET_MAX_LAYERS 4096
#define LG_NET_MAX_PARAMS ((size_t)1 << 30)

/* Allocate a dense chain with sizes dims[0..n_layers] (dims[0] = input),
 * hidden activation `hidden` on layers 0..n_layers−2 and identity on the last.
 * Parameters are zero and t = 0.1; lgelu and swish layers get s = 0, i.e.
 * λ (β) = 1 + log 2; prelu layers get a = s = LG_PRELU_INIT_SLOPE (0.25,
 * PyTorch's default); every other layer has λ = 1, s = 0. */
lg_status lg_net_init(lg_net *net, int n_layers, const int *dims, lg_act hidden);
/* Free everything; a zeroed net is a no-op. Leaves *net zeroed. */
void lg_net_free(lg_net *net);
/* Deep copy: dst must be uninitialised or zeroed; caller frees dst. */
lg_status lg_net_copy(lg_net *dst, const lg_net *src);

/* Output dimension (n_out of the last layer). */
int lg_net_n_out(const lg_net *net);
/* Widest layer (max over n_in of the first layer and every n_out). */
int lg_net_max_width(const lg_net *net);

/* Forward pass in double for one input x[n_in] into y[n_out].
 * scratch must hold 2·lg_net_max_width(net) doubles. */
void lg_net_forward(const lg_net *net, const double *x, double *y, double *scratch);

/* Batched forward in double (cblas_dgemm): X [n][n_in] → Y [n][n_out].
 * Allocates its own scratch. */
lg_status lg_net_forward_batch(const lg_net *net, const double *X, double *Y, size_t n);

/* Check internal consistency (dims chain, finite values, λ ≥ 1 where used,
 * β ≥ 1 for swish, a finite prelu slope).
 * Returns LG_ERR_FORMAT with a message naming the layer on failure. */
lg_status lg_net_validate(const lg_net *net);

#endif
