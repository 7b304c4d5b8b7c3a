/* gen_graph.h — seeded random small DAG networks for tests and the
 * soundness fuzzer: residual sums (identity or dense shortcuts), Concat
 * (index-map terms), Slice (an index-map term under an activation), conv
 * terms on small images, and an output layer with a skip term.
 *
 * lg_test_dag_random fills an lg_net the caller frees with lg_net_free. The
 * net is a pure function of the generator's state and the options; weights
 * are N(0, 1/fan_in) (fan_in summed over a layer's terms), biases N(0, 0.3²).
 */
#ifndef LG_GEN_GRAPH_H
#define LG_GEN_GRAPH_H

#include "core/net.h"
#include "core/rng.h"

typedef struct lg_test_dag_opts {
    int max_nodes;   /* hidden layers at most (≥ 1; 0: 4) */
    int max_width;   /* widest hidden layer (0: 5) */
    int conv;        /* 1: the input is a small image and some terms are convs */
    lg_act act;      /* hidden activation (LG_ACT_RELU for the exact oracle) */
    int n_out;       /* outputs (0: 2–3) */
    int maxpool;     /* 1: a hidden layer after an image may be a max-pool node (any window, stride 1–2,
                        padding below the window; core/net.h LG_LAYER_MAX) */
} lg_test_dag_opts;

/* A random DAG over 2–4 inputs (conv: a 1–2 × 2–3 × 2–3 image) whose
 * hidden layers each draw one of: dense, residual (dense + identity or
 * dense shortcut from an earlier node of the same width), concat (identity
 * activation, two index-map terms), slice (an index map of an earlier node
 * plus bias, under the activation), conv (when the last node is an image),
 * max-pool (with o->maxpool, when the last node is an image).
 * The output layer is dense from the last node plus, half the time, a dense
 * skip from another node. */
lg_status lg_test_dag_random(lg_net *net, lg_rng *r, const lg_test_dag_opts *o);

/* One fixed DAG with every kind of sum, parameters U(−1, 1) from seed:
 *   x[4] → L0 = relu(W0·x + b0) [3]
 *        → L1 = relu(W1·L0 + x[0..2] (index map) + b1) [3]   (residual: slice of the input)
 *        → L2 = identity(concat(L0, L1) + b2) [6]            (two index maps)
 *        → L3 = W3·L2 + W3s·x + b3 [2]                       (dense skip from the input) */
lg_status lg_test_dag_fixed(lg_net *net, unsigned seed);

#endif
