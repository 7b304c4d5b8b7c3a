/* vnnlib_sexpr.h — S-expression reader for VNN-LIB / SMT-LIB text (used by
 * verify/vnnlib.c only): a flat array of nodes with line:column kept for
 * messages, ';' comments, no strings or quoted symbols, nesting bounded by
 * LG_VNNLIB_MAX_DEPTH. Atoms point into the caller's text, which must
 * outlive the tree. lg_sx_tree owns its node array (lg_sx_tree_free).
 */
#ifndef LG_VNNLIB_SEXPR_H
#define LG_VNNLIB_SEXPR_H

#include <stddef.h>

#include "core/status.h"

typedef struct lg_sx {
    int is_list;
    int line, col;
    const char *s;  /* atom text (not NUL-terminated) */
    int len;
    int first, next;  /* first child, next sibling; -1 = none */
} lg_sx;

typedef struct lg_sx_tree {
    const char *name;  /* file name for messages (borrowed) */
    lg_sx *sx;
    int n_sx, cap_sx;
    int top;           /* first top-level item, -1 if none */
} lg_sx_tree;

/* Parse text[len] into T (T->name must be set; other fields zero). */
lg_status lg_sx_parse(lg_sx_tree *T, const char *text, size_t len);
void lg_sx_tree_free(lg_sx_tree *T);
/* 1 if x is the atom w. */
int lg_sx_is(const lg_sx *x, const char *w);
/* Node k, or NULL for k < 0. */
const lg_sx *lg_sx_at(const lg_sx_tree *T, int k);
/* Number of children of list l. */
int lg_sx_count(const lg_sx_tree *T, const lg_sx *l);
/* 1 if x looks like a number ([+-]digit or '.' first); then *ok = 1 and
 * *out = value when it is a valid finite decimal/scientific number. */
int lg_sx_number(const lg_sx *x, double *out, int *ok);
/* X_i → 2i, Y_j → 2j+1; -1 if x is not such a name (index < LG_NET_MAX_DIM). */
long lg_sx_var(const lg_sx *x);

#endif
