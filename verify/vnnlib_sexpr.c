/* vnnlib_sexpr.c — S-expression reader (see vnnlib_sexpr.h). */
#include "verify/vnnlib_sexpr.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/net.h"
#include "verify/vnnlib.h"


static int lg_sx_new(lg_sx_tree *P, int is_list, int line, int col)
{
    if (P->n_sx == P->cap_sx) {
        int cap = P->cap_sx ? 2 * P->cap_sx : 1024;
        lg_sx *n = realloc(P->sx, (size_t)cap * sizeof *n);
        if (!n) return -1;
        P->sx = n;
        P->cap_sx = cap;
    }
    lg_sx *x = &P->sx[P->n_sx];
    memset(x, 0, sizeof *x);
    x->is_list = is_list;
    x->line = line;
    x->col = col;
    x->first = x->next = -1;
    return P->n_sx++;
}

/* Tokenise and build the tree; top-level items chained from P->top. */
lg_status lg_sx_parse(lg_sx_tree *P, const char *t, size_t len)
{
    int stack[LG_VNNLIB_MAX_DEPTH], last[LG_VNNLIB_MAX_DEPTH + 1];
    int depth = 0, line = 1, col = 1;
    last[0] = -1;
    P->top = -1;
    size_t i = 0;
    while (i < len) {
        char ch = t[i];
        if (ch == '\n') {
            line++, col = 1, i++;
            continue;
        }
        if (isspace((unsigned char)ch)) {
            col++, i++;
            continue;
        }
        if (ch == ';') {
            while (i < len && t[i] != '\n') i++;
            continue;
        }
        if (ch == ')') {
            if (depth == 0) return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: unbalanced ')'", P->name, line, col);
            depth--;
            col++, i++;
            continue;
        }
        if (ch == '"' || ch == '|')
            return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: strings and quoted symbols are not supported", P->name, line, col);
        if (ch == '\0' || !(isprint((unsigned char)ch)))
            return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: unexpected byte 0x%02x", P->name, line, col, (unsigned char)ch);
        int k = lg_sx_new(P, ch == '(', line, col);
        if (k < 0) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", P->name);
        int parent_last = last[depth];
        if (parent_last >= 0) P->sx[parent_last].next = k;
        else if (depth == 0) P->top = k;
        else P->sx[stack[depth - 1]].first = k;
        last[depth] = k;
        if (ch == '(') {
            if (depth == LG_VNNLIB_MAX_DEPTH)
                return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: nesting deeper than %d", P->name, line, col,
                               LG_VNNLIB_MAX_DEPTH);
            stack[depth++] = k;
            last[depth] = -1;
            col++, i++;
            continue;
        }
        size_t s = i;
        while (i < len && !isspace((unsigned char)t[i]) && t[i] != '(' && t[i] != ')' && t[i] != ';') i++;
        if (i - s > 4096) return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: token longer than 4096 bytes", P->name, line, col);
        P->sx[k].s = t + s;
        P->sx[k].len = (int)(i - s);
        col += (int)(i - s);
    }
    if (depth > 0) {
        const lg_sx *o = &P->sx[stack[depth - 1]];
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: unbalanced '(' (opened at %d:%d) at end of file", P->name, line, col,
                       o->line, o->col);
    }
    return LG_OK;
}

int lg_sx_is(const lg_sx *x, const char *w)
{
    return x && !x->is_list && (size_t)x->len == strlen(w) && memcmp(x->s, w, (size_t)x->len) == 0;
}

const lg_sx *lg_sx_at(const lg_sx_tree *P, int k) { return k >= 0 ? &P->sx[k] : NULL; }

int lg_sx_count(const lg_sx_tree *P, const lg_sx *l)
{
    int n = 0;
    for (int k = l->first; k >= 0; k = P->sx[k].next) n++;
    return n;
}

/* Strict number: [+-]?(d+[.d*]|.d+)([eE][+-]?d+)?  Returns 1 if x looks
 * like a number (then *ok says whether it is a valid one). */
int lg_sx_number(const lg_sx *x, double *out, int *ok)
{
    const char *s = x->s, *e = s + x->len;
    int lead = s < e && (isdigit((unsigned char)*s) || *s == '.' ||
                         ((*s == '-' || *s == '+') && s + 1 < e && (isdigit((unsigned char)s[1]) || s[1] == '.')));
    if (!lead) return 0;
    *ok = 0;
    const char *p = s;
    if (*p == '+' || *p == '-') p++;
    int digits = 0;
    while (p < e && isdigit((unsigned char)*p)) p++, digits++;
    if (p < e && *p == '.') {
        p++;
        while (p < e && isdigit((unsigned char)*p)) p++, digits++;
    }
    if (!digits) return 1;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        int ed = 0;
        while (p < e && isdigit((unsigned char)*p)) p++, ed++;
        if (!ed) return 1;
    }
    if (p != e) return 1;
    char buf[4100];
    memcpy(buf, s, (size_t)x->len);
    buf[x->len] = '\0';
    errno = 0;
    double v = strtod(buf, NULL);
    if (!isfinite(v)) return 1;
    *out = v;
    *ok = 1;
    return 1;
}

/* X_12 → var 24, Y_3 → var 7; -1 if not of that form. */
long lg_sx_var(const lg_sx *x)
{
    if (x->is_list || x->len < 3 || (x->s[0] != 'X' && x->s[0] != 'Y') || x->s[1] != '_') return -1;
    long v = 0;
    for (int i = 2; i < x->len; i++) {
        if (!isdigit((unsigned char)x->s[i]) || (i == 2 && x->s[i] == '0' && x->len > 3)) return -1;
        v = v * 10 + (x->s[i] - '0');
        if (v > LG_NET_MAX_DIM) return -1;
    }
    return 2 * v + (x->s[0] == 'Y');
}

void lg_sx_tree_free(lg_sx_tree *T)
{
    free(T->sx);
    T->sx = NULL;
    T->n_sx = T->cap_sx = 0;
}
