/* vnnlib.c — VNN-LIB parser (see vnnlib.h).
 *
 * Stages: text → S-expression tree (vnnlib_sexpr.c) → linear atoms  lin(x, y) ≤ 0  and a DNF over them → lg_prop.
 */
#include "verify/vnnlib.h"
#include "verify/vnnlib_sexpr.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/net.h"
#include "core/netfile.h"

typedef struct lg_vp {
    const char *name;
    lg_sx_tree t;
    /* declarations */
    int n_x, n_y, cap_x, cap_y;
    unsigned char *dx, *dy;  /* declared flags */
    /* atoms: lin ≤ 0; variable v = 2i (X_i) or 2j+1 (Y_j) */
    int n_atoms, cap_atoms;
    struct lg_vatom {
        int n, line, col;
        int *var;
        double *coef;
        double c;
    } *atoms;
} lg_vp;

typedef struct lg_vatom lg_vatom;

static lg_status lg_vp_oom(const lg_vp *P) { return lg_fail(LG_ERR_NOMEM, "%s: out of memory", P->name); }

/* ---- linear forms ---- */

typedef struct lg_lin {
    int n, cap;
    int *var;
    double *coef;
    double c;
} lg_lin;

static void lg_lin_free(lg_lin *l)
{
    free(l->var);
    free(l->coef);
    memset(l, 0, sizeof *l);
}

/* l += s·m */
static int lg_lin_addto(lg_lin *l, const lg_lin *m, double s)
{
    for (int i = 0; i < m->n; i++) {
        int j = 0;
        while (j < l->n && l->var[j] != m->var[i]) j++;
        if (j == l->n) {
            if (l->n == l->cap) {
                int cap = l->cap ? 2 * l->cap : 4;
                int *nv = realloc(l->var, (size_t)cap * sizeof *nv);
                if (!nv) return -1;
                l->var = nv;
                double *nc = realloc(l->coef, (size_t)cap * sizeof *nc);
                if (!nc) return -1;
                l->coef = nc;
                l->cap = cap;
            }
            l->var[j] = m->var[i];
            l->coef[j] = 0.0;
            l->n++;
        }
        l->coef[j] += s * m->coef[i];
    }
    l->c += s * m->c;
    return 0;
}

static int lg_lin_const(const lg_lin *l)
{
    for (int i = 0; i < l->n; i++)
        if (l->coef[i] != 0.0) return 0;
    return 1;
}

static void lg_lin_scale(lg_lin *l, double s)
{
    for (int i = 0; i < l->n; i++) l->coef[i] *= s;
    l->c *= s;
}

static lg_status lg_vp_term(lg_vp *P, const lg_sx *x, lg_lin *out, int depth);

static lg_status lg_vp_term_list(lg_vp *P, const lg_sx *x, lg_lin *out, int depth)
{
    const lg_sx *h = lg_sx_at(&P->t, x->first);
    if (!h || h->is_list)
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: expected an operator (+, -, *, /) after '('", P->name, x->line, x->col);
    int nargs = lg_sx_count(&P->t, x) - 1;
    int is_add = lg_sx_is(h, "+"), is_sub = lg_sx_is(h, "-"), is_mul = lg_sx_is(h, "*"), is_div = lg_sx_is(h, "/");
    if (!is_add && !is_sub && !is_mul && !is_div)
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: unknown operator '%.*s' in a term; expected +, -, * or /", P->name,
                       h->line, h->col, h->len, h->s);
    if (nargs < 1 || (is_div && nargs != 2))
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: '%.*s' needs %s", P->name, h->line, h->col, h->len, h->s,
                       is_div ? "exactly 2 arguments" : "at least 1 argument");
    lg_status st = LG_OK;
    int i = 0, nonconst = 0;
    out->c = is_mul ? 1.0 : 0.0;
    for (int k = h->next; k >= 0; k = P->t.sx[k].next, i++) {
        lg_lin a = {0};
        if ((st = lg_vp_term(P, &P->t.sx[k], &a, depth + 1)) != LG_OK) {
            lg_lin_free(&a);
            return st;
        }
        if (is_mul || (is_div && i == 1)) {
            int ac = lg_lin_const(&a);
            if (is_div) {
                if (!ac || a.c == 0.0) st = lg_fail(LG_ERR_FORMAT, "%s:%d:%d: division must be by a nonzero constant",
                                                    P->name, P->t.sx[k].line, P->t.sx[k].col);
                else lg_lin_scale(out, 1.0 / a.c);
            } else if (ac) {
                lg_lin_scale(out, a.c);
            } else if (nonconst++ || !lg_lin_const(out)) {
                st = lg_fail(LG_ERR_FORMAT, "%s:%d:%d: non-linear term: product of two variables", P->name,
                             P->t.sx[k].line, P->t.sx[k].col);
            } else {
                double s = out->c;
                out->c = 0.0;
                if (lg_lin_addto(out, &a, s)) st = lg_vp_oom(P);
            }
        } else {
            double s = (is_sub && (i > 0 || nargs == 1)) ? -1.0 : 1.0;
            if (lg_lin_addto(out, &a, s)) st = lg_vp_oom(P);
        }
        lg_lin_free(&a);
        if (st != LG_OK) return st;
    }
    return LG_OK;
}

static lg_status lg_vp_term(lg_vp *P, const lg_sx *x, lg_lin *out, int depth)
{
    if (depth > LG_VNNLIB_MAX_DEPTH)
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: term nested too deeply", P->name, x->line, x->col);
    if (x->is_list) return lg_vp_term_list(P, x, out, depth);
    double v;
    int ok;
    if (lg_sx_number(x, &v, &ok)) {
        if (!ok)
            return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: bad number '%.*s' (expected decimal or scientific notation)",
                           P->name, x->line, x->col, x->len, x->s);
        out->c = v;
        return LG_OK;
    }
    long var = lg_sx_var(x);
    int declared = var >= 0 && ((var & 1) ? (var / 2 < P->cap_y && P->dy[var / 2]) : (var / 2 < P->cap_x && P->dx[var / 2]));
    if (!declared)
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: undeclared variable '%.*s'", P->name, x->line, x->col, x->len, x->s);
    lg_lin one = {1, 1, (int[]){(int)var}, (double[]){1.0}, 0.0};
    if (lg_lin_addto(out, &one, 1.0)) return lg_vp_oom(P);
    return LG_OK;
}

/* Record atom lin ≤ 0 as *id; refuses a non-finite coefficient or
 * constant and more than LG_VNNLIB_MAX_ATOMS atoms. */
static lg_status lg_vp_atom(lg_vp *P, lg_lin *l, const lg_sx *where, int *id)
{
    int finite = isfinite(l->c);
    for (int i = 0; i < l->n; i++) finite &= isfinite(l->coef[i]);
    if (!finite)
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: constraint has a NaN or infinite coefficient or constant (overflow)",
                       P->name, where->line, where->col);
    if (P->n_atoms >= LG_VNNLIB_MAX_ATOMS)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s:%d:%d: more than %d comparisons (limit)", P->name, where->line,
                       where->col, LG_VNNLIB_MAX_ATOMS);
    if (P->n_atoms == P->cap_atoms) {
        int cap = P->cap_atoms ? 2 * P->cap_atoms : 256;
        lg_vatom *n = realloc(P->atoms, (size_t)cap * sizeof *n);
        if (!n) return lg_vp_oom(P);
        P->atoms = n;
        P->cap_atoms = cap;
    }
    lg_vatom *a = &P->atoms[P->n_atoms];
    a->n = l->n;
    a->var = l->var;
    a->coef = l->coef;
    a->c = l->c;
    a->line = where->line;
    a->col = where->col;
    memset(l, 0, sizeof *l);
    *id = P->n_atoms++;
    return LG_OK;
}

/* ---- DNF: a list of conjunctions of atom indices ---- */

typedef struct lg_conj {
    int n, cap;
    int *a;
} lg_conj;

typedef struct lg_dnf {
    int n;
    lg_conj *c;
    int cap; /* allocated conjunctions (0: exactly n) */
} lg_dnf;

static void lg_dnf_free(lg_dnf *d)
{
    for (int i = 0; i < d->n; i++) free(d->c[i].a);
    free(d->c);
    memset(d, 0, sizeof *d);
}

static int lg_conj_push(lg_conj *c, const int *a, int n)
{
    if (c->n + n > c->cap) {
        int cap = c->cap ? c->cap : 8;
        while (cap < c->n + n) cap *= 2;
        int *na = realloc(c->a, (size_t)cap * sizeof *na);
        if (!na) return -1;
        c->a = na;
        c->cap = cap;
    }
    if (n) memcpy(c->a + c->n, a, (size_t)n * sizeof *a);
    c->n += n;
    return 0;
}

static size_t lg_dnf_entries(const lg_dnf *d)
{
    size_t n = 0;
    for (int i = 0; i < d->n; i++) n += (size_t)d->c[i].n;
    return n;
}

/* d ← d ∧ e (distributes); e is consumed. */
static lg_status lg_dnf_and(lg_vp *P, lg_dnf *d, lg_dnf *e, const lg_sx *where)
{
    lg_status st = LG_OK;
    /* atom references in the result: Σ_ij |d_i| + |e_j| */
    double entries = (double)e->n * (double)lg_dnf_entries(d) + (double)d->n * (double)lg_dnf_entries(e);
    if (entries > (double)LG_VNNLIB_MAX_DNF_ENTRIES) {
        st = lg_fail(LG_ERR_UNSUPPORTED, "%s:%d:%d: the disjunctive normal form would hold %.0f > %d atom references (limit)",
                     P->name, where->line, where->col, entries, LG_VNNLIB_MAX_DNF_ENTRIES);
        lg_dnf_free(e);
        return st;
    }
    if (e->n == 1) {
        for (int i = 0; i < d->n; i++)
            if (lg_conj_push(&d->c[i], e->c[0].a, e->c[0].n)) st = lg_vp_oom(P);
        lg_dnf_free(e);
        return st;
    }
    if ((long long)d->n * e->n > LG_VNNLIB_MAX_CONJ) {
        st = lg_fail(LG_ERR_UNSUPPORTED, "%s:%d:%d: the disjunctive normal form would have %lld > %d conjunctions",
                     P->name, where->line, where->col, (long long)d->n * e->n, LG_VNNLIB_MAX_CONJ);
        lg_dnf_free(e);
        return st;
    }
    lg_dnf r = {0, NULL, 0};
    if (d->n * e->n > 0 && !(r.c = calloc((size_t)d->n * (size_t)e->n, sizeof *r.c))) {
        lg_dnf_free(e);
        return lg_vp_oom(P);
    }
    for (int i = 0; i < d->n; i++)
        for (int j = 0; j < e->n; j++) {
            lg_conj *c = &r.c[r.n++];
            if (lg_conj_push(c, d->c[i].a, d->c[i].n) || lg_conj_push(c, e->c[j].a, e->c[j].n)) st = lg_vp_oom(P);
        }
    lg_dnf_free(d);
    lg_dnf_free(e);
    *d = r;
    return st;
}

/* d ← d ∨ e; e is consumed. */
static lg_status lg_dnf_or(lg_vp *P, lg_dnf *d, lg_dnf *e, const lg_sx *where)
{
    if ((long long)d->n + e->n > LG_VNNLIB_MAX_CONJ) {
        lg_dnf_free(e);
        return lg_fail(LG_ERR_UNSUPPORTED, "%s:%d:%d: more than %d disjuncts", P->name, where->line, where->col,
                       LG_VNNLIB_MAX_CONJ);
    }
    if (d->n + e->n + 1 > d->cap) { /* grow geometrically: long (or ...) stay linear */
        int cap = d->cap > d->n ? d->cap : d->n + 1;
        while (cap < d->n + e->n + 1) cap = cap < LG_VNNLIB_MAX_CONJ ? 2 * cap : d->n + e->n + 1;
        lg_conj *n = realloc(d->c, (size_t)cap * sizeof *n);
        if (!n) {
            lg_dnf_free(e);
            return lg_vp_oom(P);
        }
        d->c = n;
        d->cap = cap;
    }
    if (e->n) memcpy(d->c + d->n, e->c, (size_t)e->n * sizeof *e->c);
    d->n += e->n;
    free(e->c);
    memset(e, 0, sizeof *e);
    return LG_OK;
}

static lg_status lg_dnf_true(lg_vp *P, lg_dnf *d)
{
    d->n = 1;
    if (!(d->c = calloc(1, sizeof *d->c))) return lg_vp_oom(P);
    return LG_OK;
}

static lg_status lg_vp_formula(lg_vp *P, const lg_sx *x, lg_dnf *out, int depth)
{
    memset(out, 0, sizeof *out);
    if (depth > LG_VNNLIB_MAX_DEPTH)
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: formula nested too deeply", P->name, x->line, x->col);
    if (!x->is_list)
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: expected a formula '(...)', got '%.*s'", P->name, x->line, x->col,
                       x->len, x->s);
    const lg_sx *h = lg_sx_at(&P->t, x->first);
    if (!h || h->is_list)
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: expected and, or, <=, >= or = after '('", P->name, x->line, x->col);
    int nargs = lg_sx_count(&P->t, x) - 1;
    lg_status st = LG_OK;
    if (lg_sx_is(h, "and") || lg_sx_is(h, "or")) {
        int is_and = lg_sx_is(h, "and");
        if (nargs < 1)
            return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: '%s' needs at least one argument", P->name, h->line, h->col,
                           is_and ? "and" : "or");
        if (is_and && (st = lg_dnf_true(P, out)) != LG_OK) return st;
        for (int k = h->next; k >= 0; k = P->t.sx[k].next) {
            lg_dnf e;
            if ((st = lg_vp_formula(P, &P->t.sx[k], &e, depth + 1)) != LG_OK) break;
            st = is_and ? lg_dnf_and(P, out, &e, &P->t.sx[k]) : lg_dnf_or(P, out, &e, &P->t.sx[k]);
            if (st != LG_OK) break;
        }
        if (st != LG_OK) lg_dnf_free(out);
        return st;
    }
    int le = lg_sx_is(h, "<="), ge = lg_sx_is(h, ">="), eq = lg_sx_is(h, "=");
    if (lg_sx_is(h, "<") || lg_sx_is(h, ">"))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s:%d:%d: strict comparison '%.*s' is not supported; use <= or >=",
                       P->name, h->line, h->col, h->len, h->s);
    if (!le && !ge && !eq)
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: unknown operator '%.*s'; expected and, or, <=, >= or =", P->name,
                       h->line, h->col, h->len, h->s);
    if (nargs < 2)
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: '%.*s' needs at least 2 arguments", P->name, h->line, h->col, h->len,
                       h->s);
    if ((st = lg_dnf_true(P, out)) != LG_OK) return st;
    /* chain a1 op a2 op a3 ...: one atom per adjacent pair (two for =) */
    lg_lin prev = {0};
    int first = 1;
    for (int k = h->next; k >= 0 && st == LG_OK; k = P->t.sx[k].next) {
        lg_lin cur = {0};
        if ((st = lg_vp_term(P, &P->t.sx[k], &cur, depth + 1)) != LG_OK) {
            lg_lin_free(&cur);
            break;
        }
        if (!first) {
            for (int dir = 0; dir < (eq ? 2 : 1) && st == LG_OK; dir++) {
                /* le: prev − cur ≤ 0;  ge: cur − prev ≤ 0 */
                int prev_minus_cur = eq ? dir == 0 : le;
                lg_lin a = {0};
                if (lg_lin_addto(&a, &prev, prev_minus_cur ? 1.0 : -1.0) ||
                    lg_lin_addto(&a, &cur, prev_minus_cur ? -1.0 : 1.0)) {
                    st = lg_vp_oom(P);
                    lg_lin_free(&a);
                    break;
                }
                int id = -1;
                if ((st = lg_vp_atom(P, &a, h, &id)) == LG_OK && lg_conj_push(&out->c[0], &id, 1))
                    st = lg_vp_oom(P);
                lg_lin_free(&a);
            }
        }
        lg_lin_free(&prev);
        prev = cur;
        first = 0;
    }
    lg_lin_free(&prev);
    if (st != LG_OK) lg_dnf_free(out);
    return st;
}

static lg_status lg_vp_declare(lg_vp *P, const lg_sx *cmd)
{
    const lg_sx *nm = lg_sx_at(&P->t, cmd->first);
    nm = nm ? lg_sx_at(&P->t, nm->next) : NULL;
    const lg_sx *ty = nm ? lg_sx_at(&P->t, nm->next) : NULL;
    if (!nm || !ty || ty->next >= 0 || nm->is_list)
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: expected (declare-const NAME Real)", P->name, cmd->line, cmd->col);
    if (!lg_sx_is(ty, "Real"))
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: expected sort Real, got '%.*s'", P->name, ty->line, ty->col,
                       ty->is_list ? 1 : ty->len, ty->is_list ? "(" : ty->s);
    long v = lg_sx_var(nm);
    if (v < 0)
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: expected a variable named X_<i> or Y_<j> (i, j < %d), got '%.*s'",
                       P->name, nm->line, nm->col, LG_NET_MAX_DIM, nm->len, nm->s);
    int idx = (int)(v / 2), isy = (int)(v & 1);
    int *cap = isy ? &P->cap_y : &P->cap_x;
    unsigned char **flags = isy ? &P->dy : &P->dx;
    if (idx >= *cap) {
        int nc = *cap ? *cap : 16;
        while (nc <= idx) nc *= 2;
        unsigned char *nf = realloc(*flags, (size_t)nc);
        if (!nf) return lg_vp_oom(P);
        memset(nf + *cap, 0, (size_t)(nc - *cap));
        *flags = nf;
        *cap = nc;
    }
    if ((*flags)[idx])
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: '%.*s' declared twice", P->name, nm->line, nm->col, nm->len, nm->s);
    (*flags)[idx] = 1;
    if (isy) P->n_y++;
    else P->n_x++;
    return LG_OK;
}

/* Check the declarations are X_0..X_{n−1}, Y_0..Y_{m−1} matching the net. */
static lg_status lg_vp_check_decls(lg_vp *P, int *n_in, int *n_out)
{
    for (int i = 0; i < P->n_x; i++)
        if (i >= P->cap_x || !P->dx[i])
            return lg_fail(LG_ERR_FORMAT, "%s: inputs must be declared as X_0..X_%d without gaps (X_%d missing)",
                           P->name, P->n_x - 1, i);
    for (int j = 0; j < P->n_y; j++)
        if (j >= P->cap_y || !P->dy[j])
            return lg_fail(LG_ERR_FORMAT, "%s: outputs must be declared as Y_0..Y_%d without gaps (Y_%d missing)",
                           P->name, P->n_y - 1, j);
    if (P->n_x < 1 || P->n_y < 1)
        return lg_fail(LG_ERR_FORMAT, "%s: expected declarations of X_0.. and Y_0.. (found %d inputs, %d outputs)",
                       P->name, P->n_x, P->n_y);
    if (*n_in > 0 && P->n_x != *n_in)
        return lg_fail(LG_ERR_FORMAT, "%s: declares %d inputs X_i but the network has %d", P->name, P->n_x, *n_in);
    if (*n_out > 0 && P->n_y != *n_out)
        return lg_fail(LG_ERR_FORMAT, "%s: declares %d outputs Y_j but the network has %d", P->name, P->n_y, *n_out);
    *n_in = P->n_x;
    *n_out = P->n_y;
    return LG_OK;
}

/* Turn one conjunction into (box, term); returns 0 = keep, 1 = drop (false
 * or empty box), or -1 with lg_fail set. lo/hi [n_in]; T gets n_out-dense
 * constraints. */
static int lg_vp_conj(lg_vp *P, const lg_conj *c, int n_in, int n_out, double *lo, double *hi, lg_term *T,
                      size_t *n_coefs)
{
    for (int i = 0; i < n_in; i++) lo[i] = -INFINITY, hi[i] = INFINITY;
    int n_y = 0;
    for (int k = 0; k < c->n; k++) {
        const lg_vatom *a = &P->atoms[c->a[k]];
        int nx = 0, ny = 0, xv = -1;
        double xc = 0;
        for (int i = 0; i < a->n; i++) {
            if (a->coef[i] == 0.0) continue;
            if (a->var[i] & 1) ny++;
            else nx++, xv = a->var[i] / 2, xc = a->coef[i];
        }
        if (nx && ny) {
            lg_fail(LG_ERR_UNSUPPORTED, "%s:%d:%d: constraint mixes inputs X and outputs Y (unsupported)", P->name,
                    a->line, a->col);
            return -1;
        }
        if (nx > 1 || (nx == 1 && xc != 1.0 && xc != -1.0)) {
            lg_fail(LG_ERR_UNSUPPORTED,
                    "%s:%d:%d: unsupported input constraint: only bounds on a single X_i (coefficient 1) are allowed",
                    P->name, a->line, a->col);
            return -1;
        }
        if (nx == 1) {
            /* xc·x + c ≤ 0 */
            if (xc == 1.0) {
                if (-a->c < hi[xv]) hi[xv] = -a->c;
            } else if (a->c > lo[xv]) {
                lo[xv] = a->c;
            }
        } else if (ny) {
            n_y++;
        } else if (!(a->c <= 0.0)) {
            return 1; /* constant false */
        }
    }
    for (int i = 0; i < n_in; i++) {
        if (!isfinite(lo[i]) || !isfinite(hi[i])) {
            const lg_vatom *a = c->n ? &P->atoms[c->a[0]] : NULL;
            lg_fail(LG_ERR_FORMAT, "%s:%d:%d: X_%d has no finite %s bound in this case (every X_i needs both)",
                    P->name, a ? a->line : 1, a ? a->col : 1, i, isfinite(lo[i]) ? "upper" : "lower");
            return -1;
        }
        if (lo[i] > hi[i]) return 1;
    }
    /* every output constraint is stored densely: bound the total up front */
    *n_coefs += (size_t)n_y * (size_t)n_out;
    if (*n_coefs > LG_PROP_MAX_COEFS) {
        lg_fail(LG_ERR_FORMAT, "%s: the property's output constraints need more than %zu coefficients (limit)",
                P->name, LG_PROP_MAX_COEFS);
        return -1;
    }
    T->n_cons = n_y;
    if (n_y && !(T->cons = calloc((size_t)n_y, sizeof *T->cons))) goto oom;
    for (int k = 0, t = 0; k < c->n; k++) {
        const lg_vatom *a = &P->atoms[c->a[k]];
        int ny = 0;
        for (int i = 0; i < a->n; i++) ny += a->coef[i] != 0.0 && (a->var[i] & 1);
        if (!ny) continue;
        lg_lincon *L = &T->cons[t++];
        if (!(L->coef = calloc((size_t)n_out, sizeof *L->coef))) goto oom;
        for (int i = 0; i < a->n; i++)
            if (a->var[i] & 1) L->coef[a->var[i] / 2] += a->coef[i];
        L->d = a->c;
    }
    return 0;
oom:
    lg_vp_oom(P);
    return -1;
}

static void lg_term_free(lg_term *T)
{
    for (int k = 0; T->cons && k < T->n_cons; k++) free(T->cons[k].coef);
    free(T->cons);
    memset(T, 0, sizeof *T);
}

/* FNV-1a over the bytes of a box (lo then hi, n doubles each). */
static size_t lg_vp_box_hash(const double *lo, const double *hi, int n)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *b[2] = {(const unsigned char *)lo, (const unsigned char *)hi};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < (size_t)n * sizeof(double); i++) h = (h ^ b[k][i]) * 1099511628211ull;
    return (size_t)h;
}

/* Build the cases of p from the DNF, grouping equal boxes (found through a
 * hash table of case indices, so many distinct boxes stay linear). */
static lg_status lg_vp_build(lg_vp *P, const lg_dnf *d, int n_in, int n_out, lg_prop *p)
{
    lg_status st = LG_OK;
    double *lo = malloc((size_t)n_in * sizeof *lo), *hi = malloc((size_t)n_in * sizeof *hi);
    size_t hcap = 16, n_coefs = 0;
    while (hcap < 2 * (size_t)d->n) hcap *= 2;
    int *tab = malloc(hcap * sizeof *tab);                        /* case index or -1 */
    int *tcap = calloc((size_t)d->n + 1, sizeof *tcap);              /* terms allocated per case */
    p->n_in = n_in;
    p->n_out = n_out;
    if (!lo || !hi || !tab || !tcap || !(p->cases = calloc((size_t)d->n + 1, sizeof *p->cases))) goto oom;
    for (size_t i = 0; i < hcap; i++) tab[i] = -1;
    for (int i = 0; i < d->n; i++) {
        lg_term T = {0, NULL};
        int r = lg_vp_conj(P, &d->c[i], n_in, n_out, lo, hi, &T, &n_coefs);
        if (r < 0) {
            st = LG_ERR_FORMAT;
            lg_term_free(&T);
            goto fail;
        }
        if (r > 0) continue;
        size_t slot = lg_vp_box_hash(lo, hi, n_in) & (hcap - 1);
        int c;
        while ((c = tab[slot]) >= 0 && (memcmp(p->cases[c].lo, lo, (size_t)n_in * sizeof *lo) != 0 ||
                                        memcmp(p->cases[c].hi, hi, (size_t)n_in * sizeof *hi) != 0))
            slot = (slot + 1) & (hcap - 1);
        if (c < 0) tab[slot] = c = p->n_cases;
        lg_prop_case *C = &p->cases[c];
        if (c == p->n_cases) {
            C->lo = malloc((size_t)n_in * sizeof *lo);
            C->hi = malloc((size_t)n_in * sizeof *hi);
            C->terms = calloc(1, sizeof *C->terms);
            tcap[c] = 1;
            p->n_cases++;
            if (!C->lo || !C->hi || !C->terms) {
                lg_term_free(&T);
                goto oom;
            }
            memcpy(C->lo, lo, (size_t)n_in * sizeof *lo);
            memcpy(C->hi, hi, (size_t)n_in * sizeof *hi);
        } else if (C->n_terms == tcap[c]) {
            lg_term *nt = realloc(C->terms, 2 * (size_t)tcap[c] * sizeof *nt);
            if (!nt) {
                lg_term_free(&T);
                goto oom;
            }
            C->terms = nt;
            tcap[c] *= 2;
        }
        C->terms[C->n_terms++] = T;
    }
    free(lo);
    free(hi);
    free(tab);
    free(tcap);
    return LG_OK;
oom:
    st = lg_vp_oom(P);
fail:
    free(lo);
    free(hi);
    free(tab);
    free(tcap);
    lg_prop_free(p);
    return st;
}

static void lg_vp_free(lg_vp *P)
{
    for (int i = 0; i < P->n_atoms; i++) {
        free(P->atoms[i].var);
        free(P->atoms[i].coef);
    }
    free(P->atoms);
    lg_sx_tree_free(&P->t);
    free(P->dx);
    free(P->dy);
}

lg_status lg_vnnlib_parse(lg_prop *p, const char *text, size_t len, const char *name, int n_in, int n_out)
{
    memset(p, 0, sizeof *p);
    lg_vp P;
    memset(&P, 0, sizeof P);
    P.name = P.t.name = name;
    lg_dnf acc = {0, NULL, 0};
    lg_status st = lg_sx_parse(&P.t, text, len);
    if (st != LG_OK) goto done;
    if ((st = lg_dnf_true(&P, &acc)) != LG_OK) goto done;
    int n_assert = 0;
    for (int k = P.t.top; k >= 0; k = P.t.sx[k].next) {
        const lg_sx *cmd = &P.t.sx[k];
        const lg_sx *h = lg_sx_at(&P.t, cmd->first);
        if (!cmd->is_list || !h || h->is_list) {
            st = lg_fail(LG_ERR_FORMAT, "%s:%d:%d: expected a command (declare-const ...) or (assert ...)", name,
                         cmd->line, cmd->col);
            goto done;
        }
        if (lg_sx_is(h, "declare-const")) {
            if ((st = lg_vp_declare(&P, cmd)) != LG_OK) goto done;
        } else if (lg_sx_is(h, "assert")) {
            const lg_sx *f = lg_sx_at(&P.t, h->next);
            if (!f || f->next >= 0) {
                st = lg_fail(LG_ERR_FORMAT, "%s:%d:%d: expected (assert FORMULA) with one formula", name, cmd->line,
                             cmd->col);
                goto done;
            }
            lg_dnf e;
            if ((st = lg_vp_formula(&P, f, &e, 0)) != LG_OK) goto done;
            if ((st = lg_dnf_and(&P, &acc, &e, f)) != LG_OK) goto done;
            n_assert++;
        } else if (lg_sx_is(h, "check-sat") || lg_sx_is(h, "get-model") || lg_sx_is(h, "exit") ||
                   lg_sx_is(h, "set-logic") || lg_sx_is(h, "set-info")) {
            continue;
        } else {
            st = lg_fail(LG_ERR_FORMAT, "%s:%d:%d: unknown command '%.*s'; expected declare-const or assert", name,
                         h->line, h->col, h->len, h->s);
            goto done;
        }
    }
    if ((st = lg_vp_check_decls(&P, &n_in, &n_out)) != LG_OK) goto done;
    if (!n_assert) {
        st = lg_fail(LG_ERR_FORMAT, "%s: no (assert ...) found", name);
        goto done;
    }
    if ((st = lg_vp_build(&P, &acc, n_in, n_out, p)) != LG_OK) goto done;
    st = lg_prop_validate(p, name);
done:
    lg_dnf_free(&acc);
    lg_vp_free(&P);
    if (st != LG_OK) lg_prop_free(p);
    return st;
}

lg_status lg_vnnlib_read(lg_prop *p, const char *path, int n_in, int n_out)
{
    unsigned char *buf;
    size_t len;
    memset(p, 0, sizeof *p);
    lg_status st = lg_file_slurp(path, LG_VNNLIB_MAX_BYTES, &buf, &len);
    if (st != LG_OK) return st;
    st = lg_vnnlib_parse(p, (const char *)buf, len, path, n_in, n_out);
    free(buf);
    return st;
}

lg_status lg_vnnlib_read_assignment(const char *path, int n_in, int n_out, double *x, double *y)
{
    unsigned char *buf;
    size_t len;
    lg_vp P;
    memset(&P, 0, sizeof P);
    P.name = P.t.name = path;
    unsigned char *seen = NULL;
    lg_status st = lg_file_slurp(path, LG_VNNLIB_MAX_BYTES, &buf, &len);
    if (st != LG_OK) return st;
    if ((st = lg_sx_parse(&P.t, (const char *)buf, len)) != LG_OK) goto done;
    if (!(seen = calloc((size_t)n_in + (size_t)n_out, 1))) {
        st = lg_vp_oom(&P);
        goto done;
    }
    int k = P.t.top;
    if (k >= 0 && lg_sx_is(&P.t.sx[k], "sat")) k = P.t.sx[k].next;
    if (k < 0 || !P.t.sx[k].is_list || P.t.sx[k].next >= 0) {
        st = lg_fail(LG_ERR_FORMAT, "%s: expected [sat] ((X_0 v) ... (Y_j v))", path);
        goto done;
    }
    for (int e = P.t.sx[k].first; e >= 0; e = P.t.sx[e].next) {
        const lg_sx *pr = &P.t.sx[e];
        const lg_sx *nm = pr->is_list ? lg_sx_at(&P.t, pr->first) : NULL;
        const lg_sx *val = nm ? lg_sx_at(&P.t, nm->next) : NULL;
        if (!nm || !val || val->next >= 0) {
            st = lg_fail(LG_ERR_FORMAT, "%s:%d:%d: expected (NAME value)", path, pr->line, pr->col);
            goto done;
        }
        long v = lg_sx_var(nm);
        long idx = v / 2;
        if (v < 0 || ((v & 1) ? idx >= n_out : idx >= n_in)) {
            st = lg_fail(LG_ERR_FORMAT, "%s:%d:%d: expected X_i (i < %d) or Y_j (j < %d)", path, nm->line, nm->col,
                         n_in, n_out);
            goto done;
        }
        lg_lin l = {0};
        P.cap_x = P.cap_y = 0; /* no variables allowed in values */
        st = lg_vp_term(&P, val, &l, 0);
        int isc = st == LG_OK && lg_lin_const(&l);
        double c = l.c;
        lg_lin_free(&l);
        if (st != LG_OK || !isc) {
            if (st == LG_OK)
                st = lg_fail(LG_ERR_FORMAT, "%s:%d:%d: expected a number", path, val->line, val->col);
            goto done;
        }
        size_t slot = (v & 1) ? (size_t)n_in + (size_t)idx : (size_t)idx;
        if (seen[slot]++) {
            st = lg_fail(LG_ERR_FORMAT, "%s:%d:%d: %.*s given twice", path, nm->line, nm->col, nm->len, nm->s);
            goto done;
        }
        if (v & 1) {
            if (y) y[idx] = c;
        } else {
            x[idx] = c;
        }
    }
    for (int i = 0; i < n_in + n_out; i++)
        if (!seen[i] && (i < n_in || y)) {
            st = lg_fail(LG_ERR_FORMAT, "%s: no value for %s_%d", path, i < n_in ? "X" : "Y", i < n_in ? i : i - n_in);
            goto done;
        }
done:
    free(seen);
    free(buf);
    lg_vp_free(&P);
    return st;
}
