/* bab_cuts.h — cuts of ReLU branch and bound learnt from its own refuted
 * sub-problems (DESIGN.md §3 "Cuts from refuted sub-problems").
 *
 * A node of ReLU splitting is the case's box with a set S of fixed ReLU
 * phases (bab_internal.h: sign, +1 z ≤ 0, −1 z ≥ 0). When a node is
 * refuted with β-CROWN, the split constraints whose multipliers are zero in
 * every row were not used by the final bound; the cut is the sub-set S' of
 * S whose β is positive somewhere. S' is kept only after it is verified on
 * its own: the root's bounds with the phases of S' fixed, CROWN on the later
 * layers, β-CROWN on every constraint row of every term with the node's
 * slopes and multipliers (any α ∈ [0, 1], β ≥ 0 is sound), every term refuted. Then no counterexample has all the phases
 * of S' at once, the cut "not all of S' together" is valid for the exact
 * problem, and every later node whose splits include S' is refuted without
 * being bounded (in a search tree only descendants contain the node's whole
 * S, so the gain comes from S' ⊊ S).
 *
 * The store owns its arrays; lg_bab_cuts_free releases them. */
#ifndef LG_BAB_CUTS_H
#define LG_BAB_CUTS_H

#include <stddef.h>

#include "verify/bab_internal.h"

typedef struct lg_bab_cuts {
    int n, cap;            /* cuts */
    size_t *start;         /* [n + 1] first entry of each cut */
    int *idx;              /* [len] neuron (lg_alpha_offset layout) */
    signed char *sgn;      /* [len] its phase: +1 z ≤ 0, −1 z ≥ 0 */
    size_t len, lcap;
} lg_bab_cuts;

/* 1 if the search learns cuts: opts cuts, ReLU splitting with β, no max-pool node (a window
 * split is not in the node's sign). */
int lg_bab_cuts_on(const lg_bab_ctx *cx);

void lg_bab_cuts_init(lg_bab_cuts *c);
void lg_bab_cuts_free(lg_bab_cuts *c);
/* Append a cut (copied). */
lg_status lg_bab_cuts_add(lg_bab_cuts *c, int n, const int *idx, const signed char *sgn);
/* 1 if every split of some cut is among a node's splits (sign [size]). */
int lg_bab_cuts_match(const lg_bab_cuts *c, const signed char *sign);

/* The cut of a node refuted by α/β-CROWN (above): rows[m] its constraint
 * rows (indices into cx->C), beta [m][size] their multipliers, alpha
 * [m][size] their slopes. root_pre: the search root's bounds (bab_internal.h
 * pre layout) or NULL (CROWN on the box). *cut->n = 0 when S' is S, empty
 * or not verified. The cut is kept only if the verification refutes every
 * term; `mutant` (tests only, 0 otherwise) skips it. */
lg_status lg_bab_cut_try(const lg_bab_ctx *cx, const double *root_pre, const lg_bab_node *n, int m, const int *rows,
                         const double *alpha, const double *beta, int mutant, lg_bab_cut *cut);

#endif
