/* enclose_tnode.h — what the Transformer nodes' MPFR enclosures share
 * (core/op.h lg_bilinear_enclose, lg_softmax_enclose, lg_layernorm_enclose;
 * each kind's own code is in its op_KIND_exact.c): the interval product, a
 * node's scratch and the start and end of an enclosure. Every operation
 * rounds outward (MPFR_RNDD for a lower end, MPFR_RNDU for an upper one).
 * The scratch is the caller's (lg_tn_begin allocates it, lg_tn_end frees it). */
#ifndef LG_ENCLOSE_TNODE_H
#define LG_ENCLOSE_TNODE_H

#include <mpfr.h>

#include "core/act_mpfr.h"
#include "core/net.h"

/* r = [a]·[b] (r may not alias a or b); t scratch of 4 numbers. */
void lg_tn_iv_mul(lg_iv *r, const lg_iv *a, const lg_iv *b, mpfr_t *t);

/* Scratch intervals for one node. */
typedef struct lg_tn_scr {
    lg_iv *e; /* [n]: per-value work (exp, centred values) */
    lg_iv p, m, var, r;
    mpfr_t t[4];
    int n;
} lg_tn_scr;

/* Node L's outputs *z (at off[k + 1] of v) and its first source's *x, and scratch s with
 * n per-value intervals: 0, or −3 (memory; nothing to free). */
int lg_tn_begin(const lg_net *net, const lg_layer *L, lg_iv *v, const size_t *off, int n, lg_iv **z,
                const lg_iv **x, lg_tn_scr *s);
/* rc, or −2 when rc is 0 and an output of z [L->n_out] is NaN or infinite; frees s. */
int lg_tn_end(const lg_layer *L, const lg_iv *z, lg_tn_scr *s, int rc);
/* A grouped node's enclosure (softmax, layernorm: core/op.h enclose): lg_tn_begin with one
 * scratch interval per value of a group (L->lin.op.group), the kind's groups(L, x, z, s)
 * (0, or −2: a value not finite), lg_tn_end. 0, −2 or −3 (memory). */
typedef int (*lg_tn_groups_fn)(const lg_layer *L, const lg_iv *x, lg_iv *z, lg_tn_scr *s);
int lg_tn_enclose(const lg_net *net, const lg_layer *L, lg_iv *v, const size_t *off, lg_tn_groups_fn groups);

#endif
