/* tnode_planes.h — the Transformer nodes' relaxation for the complete
 * back-ends (encode/problem.h lg_trelax; DESIGN.md §3 "Back-ends on
 * Transformer nodes"), built once per query from the query's bounds.
 *
 * Every node's planes hold on its sources' post-activation bounds (bounds
 * of the real network on the query's box, from the bound engine): the rows
 * are read with exact real arithmetic on the doubles, so the relaxed query
 * contains every real trajectory of the net on that box.
 *   product   each pair x·y of an output: McCormick's four planes
 *             (relax_bilinear.h with α = 1 and α = 0 on each side: the convex
 *             and concave envelopes); an output of one pair constrains the
 *             output itself, one of K > 1 pairs sums K auxiliary values, each
 *             within the pair's interval image. A square x·x whose two slopes
 *             do not add exactly in double loses that plane (sound: weaker).
 *   softmax   per group, relax_softmax.h's lower and upper plane of each
 *             output (linearised at the box's centre) and the exact
 *             identity Σ_i s_i = 1.
 *   layernorm per group, relax_layernorm.h's lower and upper plane of each
 *             output.
 * The output bounds themselves are the query's (pre_lo/pre_hi of the node's
 * layer), which the encoders put on the output values.
 *
 * The relaxation is owned by the caller (lg_trelax_free); b and net are
 * borrowed.
 */
#ifndef LG_TNODE_PLANES_H
#define LG_TNODE_PLANES_H

#include "encode/problem.h"
#include "verify/bounds.h"
#include "verify/relax_iv.h"

/* LG_OK when verification and the back-ends take net with its Transformer
 * nodes (relu and identity activations, no max-pool node);
 * LG_ERR_UNSUPPORTED naming the layer otherwise. */
lg_status lg_tnode_relax_check(const lg_net *net);

/* The parts the kinds' rows share (each kind's rows: its opstage.h entry relax_rows). */
/* Post-activation bounds [*lo, *hi] of entry i of node src (the normalised input for
 * LG_NET_INPUT). */
void lg_tnode_post(const lg_net *net, const lg_bounds *b, int src, int i, double *lo, double *hi);
/* One group's planes of grouped node k (its group G of g outputs on the source's box
 * [l, u]): lower y_i ≥ lo_w[i·g ..]·x + lo_c[i], upper y_i ≤ up_w[i·g ..]·x + up_c[i]
 * (work: the kind's scratch). */
typedef void (*lg_tnode_group_planes)(const lg_net *net, const lg_bounds *b, int k, int G, size_t g, const double *l,
                                      const double *u, double *lo_w, double *lo_c, double *up_w, double *up_c,
                                      lg_dv *work);
/* The rows of grouped node k (softmax, layernorm): per group, each output between its two
 * planes (`planes`, with work_n lg_dv of scratch) and, with sum_one, Σ_i y_i = 1 over the
 * group, exactly; *count is incremented once the groups are done. LG_ERR_NOMEM. */
lg_status lg_tnode_group_rows(const lg_net *net, const lg_bounds *b, int k, lg_trelax *r, lg_tnode_group_planes planes,
                              size_t work_n, int sum_one, int *count);

/* Build the relaxation of every Transformer node of net from b (bounds of
 * the query's box, finite) into r (initialised here). LG_ERR_NOMEM,
 * LG_ERR_ARG (bounds not finite); r is freed on failure. */
lg_status lg_tnode_relax_build(const lg_net *net, const lg_bounds *b, lg_trelax *r);

#endif
