/* vnnlib.c — VNN-LIB parser (see vnnlib.h).
 *
 * Stages: text → S-expression tree (vnnlib_sexpr.c) → linear atoms  lin(x, y) ≤ 0  and a DNF over them → lg_prop.
 */
#include "verify/vnnlib.h"
#include "verify/vnnlib_sexpr.h"

#include <ctype.h>
#include <gmp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ball.h"
#include "core/net.h"
#include "core/netfile.h"
#include "verify/bounds.h"

typedef struct lg_vp {
    const char *name;
    const lg_net *net; /* the network the property is read for (output bounds), or NULL */
    lg_sx_tree t;
    /* declarations */
    int n_x, n_y, cap_x, cap_y;
    unsigned char *dx, *dy;  /* declared flags */
    /* atoms: lin ≤ 0; variable v = 2i (X_i) or 2j+1 (Y_j) */
    int n_atoms, cap_atoms;
    struct lg_vatom {
        int n, line, col;
        int *var;
        double *coef;  /* the atom scaled by a positive rational (see lg_vp_atom): exact, or nearest */
        double *cerr;  /* [n] |exact − coef| rounded up when some coefficient is no double, else NULL */
        double c_lo, c_hi; /* the scaled constant rounded down and up (equal when exact) */
        int c_sign;    /* sign of the exact constant */
        int has_cq;    /* cq holds the exact constant (only when c_lo < c_hi) */
        mpq_t cq;
    } *atoms;
} lg_vp;

typedef struct lg_vatom lg_vatom;

static lg_status lg_vp_oom(const lg_vp *P) { return lg_fail(LG_ERR_NOMEM, "%s: out of memory", P->name); }

/* ---- linear forms ---- */

typedef struct lg_lin {
    int n, cap;
    int *var;
    mpq_t *coef; /* exact rationals: constants are never rounded while parsing */
    mpq_t c;
    int init;    /* c initialised */
} lg_lin;

static void lg_lin_init(lg_lin *l)
{
    memset(l, 0, sizeof *l);
    mpq_init(l->c);
    l->init = 1;
}

static void lg_lin_free(lg_lin *l)
{
    for (int i = 0; i < l->n; i++) mpq_clear(l->coef[i]);
    if (l->init) mpq_clear(l->c);
    free(l->var);
    free(l->coef);
    memset(l, 0, sizeof *l);
}

/* l += s·m */
static int lg_lin_addto(lg_lin *l, const lg_lin *m, const mpq_t s)
{
    mpq_t t;
    mpq_init(t);
    for (int i = 0; i < m->n; i++) {
        int j = 0;
        while (j < l->n && l->var[j] != m->var[i]) j++;
        if (j == l->n) {
            if (l->n == l->cap) {
                int cap = l->cap ? 2 * l->cap : 4;
                int *nv = realloc(l->var, (size_t)cap * sizeof *nv);
                if (!nv) goto oom;
                l->var = nv;
                mpq_t *nc = realloc(l->coef, (size_t)cap * sizeof *nc);
                if (!nc) goto oom;
                l->coef = nc;
                l->cap = cap;
            }
            l->var[j] = m->var[i];
            mpq_init(l->coef[j]);
            l->n++;
        }
        mpq_mul(t, s, m->coef[i]);
        mpq_add(l->coef[j], l->coef[j], t);
    }
    mpq_mul(t, s, m->c);
    mpq_add(l->c, l->c, t);
    mpq_clear(t);
    return 0;
oom:
    mpq_clear(t);
    return -1;
}

static int lg_lin_addto_si(lg_lin *l, const lg_lin *m, long s)
{
    mpq_t q;
    mpq_init(q);
    mpq_set_si(q, s, 1);
    int r = lg_lin_addto(l, m, q);
    mpq_clear(q);
    return r;
}

static int lg_lin_const(const lg_lin *l)
{
    for (int i = 0; i < l->n; i++)
        if (mpq_sgn(l->coef[i]) != 0) return 0;
    return 1;
}

static void lg_lin_scale(lg_lin *l, const mpq_t s)
{
    for (int i = 0; i < l->n; i++) mpq_mul(l->coef[i], l->coef[i], s);
    mpq_mul(l->c, l->c, s);
}

/* The exact value of a decimal/scientific token ([+-]?(d+[.d*]|.d+)([eE][+-]?d+)?,
 * already validated by lg_sx_number). 0, or −1 if the exponent is absurd. */
static int lg_vp_decimal(const lg_sx *x, mpq_t q)
{
    const char *p = x->s, *e = x->s + x->len;
    int neg = 0;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    mpz_t m, t;
    mpz_init_set_ui(m, 0);
    long frac = 0, ex = 0;
    int in_frac = 0;
    for (; p < e && (isdigit((unsigned char)*p) || *p == '.'); p++) {
        if (*p == '.') {
            in_frac = 1;
            continue;
        }
        mpz_mul_ui(m, m, 10);
        mpz_add_ui(m, m, (unsigned long)(*p - '0'));
        frac += in_frac;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0;
        if (p < e && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        for (; p < e; p++) {
            if (ex < 100000) ex = ex * 10 + (*p - '0');
        }
        if (eneg) ex = -ex;
    }
    ex -= frac;
    if (ex > 4000 || ex < -4000) {
        mpz_clear(m);
        return mpz_sgn(m) == 0 ? (mpq_set_ui(q, 0, 1), 0) : -1;
    }
    mpz_init(t);
    mpz_ui_pow_ui(t, 10, (unsigned long)(ex < 0 ? -ex : ex));
    if (ex >= 0) {
        mpz_mul(m, m, t);
        mpz_set_ui(t, 1);
    }
    if (neg) mpz_neg(m, m);
    mpq_set_num(q, m);
    mpq_set_den(q, t);
    mpq_canonicalize(q);
    mpz_clear(m);
    mpz_clear(t);
    return 0;
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
    mpq_set_si(out->c, is_mul ? 1 : 0, 1);
    for (int k = h->next; k >= 0; k = P->t.sx[k].next, i++) {
        lg_lin a;
        lg_lin_init(&a);
        if ((st = lg_vp_term(P, &P->t.sx[k], &a, depth + 1)) != LG_OK) {
            lg_lin_free(&a);
            return st;
        }
        if (is_mul || (is_div && i == 1)) {
            int ac = lg_lin_const(&a);
            if (is_div) { /* exact: (/ t c) is t·(1/c) in rationals, never t·fl(1/c) */
                if (!ac || mpq_sgn(a.c) == 0)
                    st = lg_fail(LG_ERR_FORMAT, "%s:%d:%d: division must be by a nonzero constant", P->name,
                                 P->t.sx[k].line, P->t.sx[k].col);
                else {
                    mpq_inv(a.c, a.c);
                    lg_lin_scale(out, a.c);
                }
            } else if (ac) {
                lg_lin_scale(out, a.c);
            } else if (nonconst++ || !lg_lin_const(out)) {
                st = lg_fail(LG_ERR_FORMAT, "%s:%d:%d: non-linear term: product of two variables", P->name,
                             P->t.sx[k].line, P->t.sx[k].col);
            } else {
                mpq_t s;
                mpq_init(s);
                mpq_set(s, out->c);
                mpq_set_ui(out->c, 0, 1);
                if (lg_lin_addto(out, &a, s)) st = lg_vp_oom(P);
                mpq_clear(s);
            }
        } else {
            long s = (is_sub && (i > 0 || nargs == 1)) ? -1 : 1;
            if (lg_lin_addto_si(out, &a, s)) st = lg_vp_oom(P);
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
        if (!ok || lg_vp_decimal(x, out->c))
            return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: bad number '%.*s' (expected decimal or scientific notation)",
                           P->name, x->line, x->col, x->len, x->s);
        return LG_OK;
    }
    long var = lg_sx_var(x);
    int declared = var >= 0 && ((var & 1) ? (var / 2 < P->cap_y && P->dy[var / 2]) : (var / 2 < P->cap_x && P->dx[var / 2]));
    if (!declared)
        return lg_fail(LG_ERR_FORMAT, "%s:%d:%d: undeclared variable '%.*s'", P->name, x->line, x->col, x->len, x->s);
    lg_lin one;
    lg_lin_init(&one);
    int bad = 0;
    if (!(one.var = malloc(sizeof *one.var)) || !(one.coef = malloc(sizeof *one.coef))) bad = 1;
    if (!bad) {
        one.var[0] = (int)var;
        mpq_init(one.coef[0]);
        mpq_set_ui(one.coef[0], 1, 1);
        one.n = one.cap = 1;
        bad = lg_lin_addto_si(out, &one, 1);
    }
    lg_lin_free(&one);
    return bad ? lg_vp_oom(P) : LG_OK;
}

/* q rounded down and up to doubles; 0, or −1 if out of the double range. */
static int lg_vp_round(const mpq_t q, double *lo, double *hi)
{
    double d = mpq_get_d(q); /* truncated toward zero */
    if (!isfinite(d)) return -1;
    mpq_t t;
    mpq_init(t);
    mpq_set_d(t, d);
    int cmp = mpq_cmp(q, t);
    mpq_clear(t);
    *lo = *hi = d;
    if (cmp > 0) *hi = nextafter(d, INFINITY);
    if (cmp < 0) *lo = nextafter(d, -INFINITY);
    return isfinite(*lo) && isfinite(*hi) ? 0 : -1;
}

/* 1 if q is exactly a double. */
static int lg_vp_is_double(const mpq_t q)
{
    double lo, hi;
    return lg_vp_round(q, &lo, &hi) == 0 && lo == hi;
}

/* Record atom lin ≤ 0 (lin exact); returns its index, -1 out of memory, -2
 * (lg_fail set) when the coefficients cannot be held exactly. The atom is
 * first multiplied by a positive rational s, which keeps its meaning: on one
 * variable, 1/|its coefficient| (a bound: (* 0.10000000000000001 X_0) ≥ 0.01
 * becomes X_0 ≥ 10^15/(10^16 + 1), exactly; a bound on an input always, on
 * an output when its coefficient is not a double); else 1 when every
 * coefficient is a double, or the lcm of their denominators, which makes
 * them integers — (/ Y_0 3) ≥ Y_1 becomes 3·Y_1 − Y_0 ≤ 0. If some
 * coefficient is still no double, the atom is kept at the file's scale with
 * nearest doubles and their errors in cerr (lg_vp_conj widens its constant
 * by them). The constant is kept rounded down and up (DESIGN.md §3 "The
 * property": provers take the larger region, witnesses the smaller). */
static int lg_vp_atom(lg_vp *P, lg_lin *l, const lg_sx *where)
{
    if (P->n_atoms >= LG_VNNLIB_MAX_ATOMS) {
        lg_fail(LG_ERR_UNSUPPORTED, "%s:%d:%d: more than %d comparisons (limit)", P->name, where->line, where->col,
                LG_VNNLIB_MAX_ATOMS);
        return -2;
    }
    if (P->n_atoms == P->cap_atoms) {
        int cap = P->cap_atoms ? 2 * P->cap_atoms : 256;
        lg_vatom *n = realloc(P->atoms, (size_t)cap * sizeof *n);
        if (!n) return -1;
        P->atoms = n;
        P->cap_atoms = cap;
    }
    int nz = 0, one = -1;
    for (int i = 0; i < l->n; i++)
        if (mpq_sgn(l->coef[i]) != 0) nz++, one = i;
    int unit = nz == 1 && mpz_cmpabs_ui(mpq_numref(l->coef[one]), 1) == 0 && mpz_cmp_ui(mpq_denref(l->coef[one]), 1) == 0;
    if (nz == 1 && ((l->var[one] & 1) == 0 ? !unit : !lg_vp_is_double(l->coef[one]))) {
        mpq_t s;
        mpq_init(s);
        mpq_abs(s, l->coef[one]);
        mpq_inv(s, s);
        lg_lin_scale(l, s);
        mpq_clear(s);
    }
    int exact = 1;
    for (int i = 0; i < l->n && exact; i++) exact = lg_vp_is_double(l->coef[i]);
    if (!exact) {
        mpz_t L;
        mpz_init_set_ui(L, 1);
        for (int i = 0; i < l->n; i++) mpz_lcm(L, L, mpq_denref(l->coef[i]));
        mpq_t s;
        mpq_init(s);
        mpq_set_z(s, L);
        lg_lin_scale(l, s);
        exact = 1;
        for (int i = 0; i < l->n && exact; i++) exact = lg_vp_is_double(l->coef[i]);
        if (!exact) { /* no scale makes them doubles: back to the file's scale, nearest doubles below */
            mpq_inv(s, s);
            lg_lin_scale(l, s);
        }
        mpq_clear(s);
        mpz_clear(L);
    }
    lg_vatom *a = &P->atoms[P->n_atoms];
    memset(a, 0, sizeof *a);
    a->var = malloc(((size_t)l->n + 1) * sizeof *a->var);
    a->coef = malloc(((size_t)l->n + 1) * sizeof *a->coef);
    if (!exact) a->cerr = malloc(((size_t)l->n + 1) * sizeof *a->cerr);
    if (!a->var || !a->coef || (!exact && !a->cerr)) {
        free(a->var);
        free(a->coef);
        free(a->cerr);
        return -1;
    }
    for (int i = 0; i < l->n; i++) {
        double lo, hi;
        if (lg_vp_round(l->coef[i], &lo, &hi)) {
            free(a->var);
            free(a->coef);
            free(a->cerr);
            lg_fail(LG_ERR_UNSUPPORTED, "%s:%d:%d: a coefficient of this constraint is out of the double range",
                    P->name, where->line, where->col);
            return -2;
        }
        a->var[i] = l->var[i];
        a->coef[i] = lo;
        if (!exact) { /* the nearest double and the distance to it, rounded up (lg_vp_conj) */
            mpq_t t, u;
            mpq_inits(t, u, NULL);
            mpq_set_d(t, lo);
            mpq_set_d(u, hi);
            mpq_sub(t, l->coef[i], t); /* exact − lo ≥ 0 */
            mpq_sub(u, u, l->coef[i]); /* hi − exact ≥ 0 */
            int up = mpq_cmp(u, t) < 0;
            if (up) a->coef[i] = hi;
            double el, eh;
            lg_vp_round(up ? u : t, &el, &eh);
            a->cerr[i] = eh;
            mpq_clears(t, u, NULL);
        }
    }
    if (lg_vp_round(l->c, &a->c_lo, &a->c_hi)) {
        free(a->var);
        free(a->coef);
        free(a->cerr);
        lg_fail(LG_ERR_UNSUPPORTED, "%s:%d:%d: constant out of the double range", P->name, where->line, where->col);
        return -2;
    }
    a->c_sign = mpq_sgn(l->c);
    if (a->c_lo != a->c_hi) { /* kept exactly: deciding whether a box is empty needs it */
        mpq_init(a->cq);
        mpq_set(a->cq, l->c);
        a->has_cq = 1;
    }
    a->n = l->n;
    a->line = where->line;
    a->col = where->col;
    return P->n_atoms++;
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
    lg_lin prev;
    lg_lin_init(&prev);
    int first = 1;
    for (int k = h->next; k >= 0 && st == LG_OK; k = P->t.sx[k].next) {
        lg_lin cur;
        lg_lin_init(&cur);
        if ((st = lg_vp_term(P, &P->t.sx[k], &cur, depth + 1)) != LG_OK) {
            lg_lin_free(&cur);
            break;
        }
        if (!first) {
            for (int dir = 0; dir < (eq ? 2 : 1) && st == LG_OK; dir++) {
                /* le: prev − cur ≤ 0;  ge: cur − prev ≤ 0 */
                int prev_minus_cur = eq ? dir == 0 : le;
                lg_lin a;
                lg_lin_init(&a);
                if (lg_lin_addto_si(&a, &prev, prev_minus_cur ? 1 : -1) ||
                    lg_lin_addto_si(&a, &cur, prev_minus_cur ? -1 : 1)) {
                    st = lg_vp_oom(P);
                    lg_lin_free(&a);
                    break;
                }
                int id = lg_vp_atom(P, &a, h);
                if (id == -2) st = LG_ERR_UNSUPPORTED;
                else if (id < 0 || lg_conj_push(&out->c[0], &id, 1)) st = lg_vp_oom(P);
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
        return lg_fail(LG_ERR_ARG, "%s: declares %d inputs X_i but the network has %d", P->name, P->n_x, *n_in);
    if (*n_out > 0 && P->n_y != *n_out)
        return lg_fail(LG_ERR_ARG, "%s: declares %d outputs Y_j but the network has %d", P->name, P->n_y, *n_out);
    *n_in = P->n_x;
    *n_out = P->n_y;
    return LG_OK;
}

/* The exact constant of atom a into q. */
static void lg_vp_atom_const(const lg_vatom *a, mpq_t q)
{
    if (a->has_cq) mpq_set(q, a->cq);
    else mpq_set_d(q, a->c_lo);
}

/* 1 if variable i of atom a is present: a nonzero coefficient, or one that
 * is no double and rounds to 0. */
static int lg_vp_nonzero(const lg_vatom *a, int i)
{
    return a->coef[i] != 0.0 || (a->cerr && a->cerr[i] > 0.0);
}

/* 1 if the bounds of conjunction c on input xv leave no point, in exact
 * arithmetic on the file's numbers: the largest lower bound (atoms −x + c ≤ 0,
 * x ≥ c) above the smallest upper bound (atoms x + c ≤ 0, x ≤ −c). Called only
 * when the doubles cannot tell (the outward box is not empty, the inward one
 * is). */
static int lg_vp_empty_exact(const lg_vp *P, const lg_conj *c, int xv)
{
    mpq_t lo, hi, q;
    mpq_inits(lo, hi, q, NULL);
    int have_lo = 0, have_hi = 0;
    for (int k = 0; k < c->n; k++) {
        const lg_vatom *a = &P->atoms[c->a[k]];
        int nx = 0, ny = 0, v = -1;
        double xc = 0;
        for (int i = 0; i < a->n; i++) {
            if (!lg_vp_nonzero(a, i)) continue;
            if (a->var[i] & 1) ny++;
            else nx++, v = a->var[i] / 2, xc = a->coef[i];
        }
        if (ny || nx != 1 || v != xv) continue;
        lg_vp_atom_const(a, q);
        if (xc == 1.0) { /* x ≤ −c */
            mpq_neg(q, q);
            if (!have_hi++ || mpq_cmp(q, hi) < 0) mpq_set(hi, q);
        } else if (!have_lo++ || mpq_cmp(q, lo) > 0) { /* x ≥ c */
            mpq_set(lo, q);
        }
    }
    int empty = have_lo && have_hi && mpq_cmp(lo, hi) > 0;
    mpq_clears(lo, hi, q, NULL);
    return empty;
}

/* *e ≥ Σ_i cerr_i·|y_i| for every output y of P->net on the box [lo, hi]
 * (DESIGN.md §3 "The property"): the output box is computed
 * once per conjunction into ylo, yhi (allocated here, [2·n_out]). 0, or -1
 * with lg_fail set: no network to bound the outputs, or unbounded outputs. */
static int lg_vp_coef_error(lg_vp *P, const lg_vatom *a, int n_out, const double *lo, const double *hi,
                            double **ylo, double **yhi, double *e)
{
    if (!P->net) {
        lg_fail(LG_ERR_UNSUPPORTED, "%s:%d:%d: the coefficients of this constraint are not doubles and no scale makes "
                "them doubles; such a constraint is read with the network's output bounds (lgelu verify, encode, cex "
                "and bench do; verify --ref does not)", P->name, a->line, a->col);
        return -1;
    }
    if (!*ylo) {
        if (!(*ylo = malloc(2 * (size_t)n_out * sizeof **ylo))) {
            lg_vp_oom(P);
            return -1;
        }
        *yhi = *ylo + n_out;
        if (lg_bounds_output_box(P->net, lo, hi, *ylo, *yhi) != LG_OK) return -1;
    }
    double s = 0.0;
    for (int i = 0; i < a->n; i++) {
        if (!(a->var[i] & 1) || a->cerr[i] == 0.0) continue;
        int j = a->var[i] / 2;
        double m = fmax(fabs((*ylo)[j]), fabs((*yhi)[j]));
        double p = a->cerr[i] * m; /* both ≥ 0: one step up covers the rounding */
        s = lg_add_dir(s, p == 0.0 ? 0.0 : nextafter(p, INFINITY), 1);
    }
    if (!isfinite(s)) {
        lg_fail(LG_ERR_UNSUPPORTED, "%s:%d:%d: the coefficients of this constraint are not doubles, and the network's "
                "outputs it reads are not bounded on the input box, so the constraint cannot be held soundly",
                P->name, a->line, a->col);
        return -1;
    }
    *e = s;
    return 0;
}

/* Turn one conjunction into (box, term); returns 0 = keep, 1 = drop (false,
 * or an empty box, decided exactly: no point of it can violate), or -1 with
 * lg_fail set. lo/hi [n_in]; T gets n_out-dense constraints. */
static int lg_vp_conj(lg_vp *P, const lg_conj *c, int n_in, int n_out, double *lo, double *hi, double *lo_in,
                      double *hi_in, lg_term *T, double **slack, size_t *n_coefs)
{
    for (int i = 0; i < n_in; i++) lo[i] = lo_in[i] = -INFINITY, hi[i] = hi_in[i] = INFINITY;
    *slack = NULL;
    double *ylo = NULL, *yhi = NULL; /* output bounds over the box, when a coefficient is no double */
    int n_y = 0;
    for (int k = 0; k < c->n; k++) {
        const lg_vatom *a = &P->atoms[c->a[k]];
        int nx = 0, ny = 0, xv = -1;
        double xc = 0;
        for (int i = 0; i < a->n; i++) {
            if (!lg_vp_nonzero(a, i)) continue;
            if (a->var[i] & 1) ny++;
            else nx++, xv = a->var[i] / 2, xc = a->coef[i];
        }
        if (nx && ny) {
            lg_fail(LG_ERR_UNSUPPORTED, "%s:%d:%d: constraint mixes inputs X and outputs Y (unsupported)", P->name,
                    a->line, a->col);
            return -1;
        }
        if (nx > 1 || (nx == 1 && ((xc != 1.0 && xc != -1.0) || a->cerr))) {
            lg_fail(LG_ERR_UNSUPPORTED,
                    "%s:%d:%d: unsupported input constraint: only bounds on a single X_i are allowed",
                    P->name, a->line, a->col);
            return -1;
        }
        if (nx == 1) {
            /* xc·x + c ≤ 0 with c ∈ [c_lo, c_hi]: the box for proofs is rounded outward,
             * the box a witness must lie in inward */
            if (xc == 1.0) {
                if (-a->c_lo < hi[xv]) hi[xv] = -a->c_lo;
                if (-a->c_hi < hi_in[xv]) hi_in[xv] = -a->c_hi;
            } else {
                if (a->c_lo > lo[xv]) lo[xv] = a->c_lo;
                if (a->c_hi > lo_in[xv]) lo_in[xv] = a->c_hi;
            }
        } else if (ny) {
            n_y++;
        } else if (a->c_sign > 0) {
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
        if (lo[i] > hi[i]) return 1; /* the outward box is empty: so is the exact one */
        if (lo_in[i] > hi_in[i] && lg_vp_empty_exact(P, c, i)) return 1;
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
    if (n_y && !(*slack = calloc((size_t)n_y, sizeof **slack))) goto oom;
    for (int k = 0, t = 0; k < c->n; k++) {
        const lg_vatom *a = &P->atoms[c->a[k]];
        int ny = 0;
        for (int i = 0; i < a->n; i++) ny += lg_vp_nonzero(a, i) && (a->var[i] & 1);
        if (!ny) continue;
        lg_lincon *L = &T->cons[t++];
        if (!(L->coef = calloc((size_t)n_out, sizeof *L->coef))) goto oom;
        for (int i = 0; i < a->n; i++)
            if (a->var[i] & 1) L->coef[a->var[i] / 2] += a->coef[i];
        double e = 0.0; /* ≥ Σ_i |exact_i − coef_i|·|y_i| over the box */
        if (a->cerr && lg_vp_coef_error(P, a, n_out, lo, hi, &ylo, &yhi, &e)) {
            free(ylo);
            return -1;
        }
        L->d = lg_add_dir(a->c_lo, -e, -1);                       /* the larger region: what a proof must cover */
        (*slack)[t - 1] = lg_add_dir(lg_add_dir(a->c_hi, e, 1), -L->d, 1); /* d + slack ≥ c_hi + e */
    }
    free(ylo);
    return 0;
oom:
    free(ylo);
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
    size_t bn = (size_t)n_in * sizeof(double);
    double *lo = malloc(bn), *hi = malloc(bn), *lo_in = malloc(bn), *hi_in = malloc(bn), *slack = NULL;
    int *n_slack = calloc((size_t)d->n + 1, sizeof *n_slack);
    /* equal boxes are found through a hash table of case indices; terms and
     * slack grow geometrically (capacities per case) */
    size_t hcap = 16, n_coefs = 0;
    while (hcap < 2 * (size_t)d->n) hcap *= 2;
    int *tab = malloc(hcap * sizeof *tab);                 /* case index or -1 */
    int *tcap = calloc((size_t)d->n + 1, sizeof *tcap);    /* terms allocated per case */
    size_t *scap = calloc((size_t)d->n + 1, sizeof *scap); /* slack allocated per case */
    p->n_in = n_in;
    p->n_out = n_out;
    if (!lo || !hi || !lo_in || !hi_in || !n_slack || !tab || !tcap || !scap ||
        !(p->cases = calloc((size_t)d->n + 1, sizeof *p->cases)) ||
        !(p->inner = calloc((size_t)d->n + 1, sizeof *p->inner)))
        goto oom;
    for (size_t i = 0; i < hcap; i++) tab[i] = -1;
    for (int i = 0; i < d->n; i++) {
        lg_term T = {0, NULL};
        int r = lg_vp_conj(P, &d->c[i], n_in, n_out, lo, hi, lo_in, hi_in, &T, &slack, &n_coefs);
        if (r < 0) {
            st = LG_ERR_FORMAT;
            lg_term_free(&T);
            goto fail;
        }
        if (r > 0) {
            free(slack);
            slack = NULL;
            continue;
        }
        size_t slot = (lg_vp_box_hash(lo, hi, n_in) ^ 31 * lg_vp_box_hash(lo_in, hi_in, n_in)) & (hcap - 1);
        int c;
        while ((c = tab[slot]) >= 0 &&
               (memcmp(p->cases[c].lo, lo, bn) != 0 || memcmp(p->cases[c].hi, hi, bn) != 0 ||
                memcmp(p->inner[c].lo, lo_in, bn) != 0 || memcmp(p->inner[c].hi, hi_in, bn) != 0))
            slot = (slot + 1) & (hcap - 1);
        if (c < 0) tab[slot] = c = p->n_cases;
        lg_prop_case *C = &p->cases[c];
        lg_prop_inner *I = &p->inner[c];
        if (c == p->n_cases) {
            C->lo = malloc(bn);
            C->hi = malloc(bn);
            I->lo = malloc(bn);
            I->hi = malloc(bn);
            C->terms = calloc(1, sizeof *C->terms);
            tcap[c] = 1;
            p->n_cases++;
            if (!C->lo || !C->hi || !I->lo || !I->hi || !C->terms) {
                lg_term_free(&T);
                goto oom;
            }
            memcpy(C->lo, lo, bn);
            memcpy(C->hi, hi, bn);
            memcpy(I->lo, lo_in, bn);
            memcpy(I->hi, hi_in, bn);
        } else if (C->n_terms == tcap[c]) {
            lg_term *nt = realloc(C->terms, 2 * (size_t)tcap[c] * sizeof *nt);
            if (!nt) {
                lg_term_free(&T);
                goto oom;
            }
            C->terms = nt;
            tcap[c] *= 2;
        }
        if ((size_t)n_slack[c] + (size_t)T.n_cons + 1 > scap[c]) {
            size_t nc = 2 * ((size_t)n_slack[c] + (size_t)T.n_cons + 1);
            double *ns = realloc(I->slack, nc * sizeof *ns);
            if (!ns) {
                lg_term_free(&T);
                goto oom;
            }
            I->slack = ns;
            scap[c] = nc;
        }
        if (T.n_cons) memcpy(I->slack + n_slack[c], slack, (size_t)T.n_cons * sizeof *I->slack);
        n_slack[c] += T.n_cons;
        free(slack);
        slack = NULL;
        C->terms[C->n_terms++] = T;
    }
    free(lo);
    free(hi);
    free(lo_in);
    free(hi_in);
    free(n_slack);
    free(tab);
    free(tcap);
    free(scap);
    return LG_OK;
oom:
    st = lg_vp_oom(P);
fail:
    free(lo);
    free(hi);
    free(lo_in);
    free(hi_in);
    free(slack);
    free(n_slack);
    free(tab);
    free(tcap);
    free(scap);
    lg_prop_free(p);
    return st;
}

static void lg_vp_free(lg_vp *P)
{
    for (int i = 0; i < P->n_atoms; i++) {
        free(P->atoms[i].var);
        free(P->atoms[i].coef);
        free(P->atoms[i].cerr);
        if (P->atoms[i].has_cq) mpq_clear(P->atoms[i].cq);
    }
    free(P->atoms);
    lg_sx_tree_free(&P->t);
    free(P->dx);
    free(P->dy);
}

static lg_status lg_vp_parse(lg_prop *p, const char *text, size_t len, const char *name, int n_in, int n_out,
                             const lg_net *net)
{
    memset(p, 0, sizeof *p);
    lg_vp P;
    memset(&P, 0, sizeof P);
    P.name = P.t.name = name;
    P.net = net;
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

lg_status lg_vnnlib_parse(lg_prop *p, const char *text, size_t len, const char *name, int n_in, int n_out)
{
    return lg_vp_parse(p, text, len, name, n_in, n_out, NULL);
}

lg_status lg_vnnlib_parse_net(lg_prop *p, const char *text, size_t len, const char *name, const lg_net *net)
{
    return lg_vp_parse(p, text, len, name, net->n_in, lg_net_n_out(net), net);
}

static lg_status lg_vp_read(lg_prop *p, const char *path, int n_in, int n_out, const lg_net *net)
{
    unsigned char *buf;
    size_t len;
    memset(p, 0, sizeof *p);
    lg_status st = lg_file_slurp(path, LG_VNNLIB_MAX_BYTES, &buf, &len);
    if (st != LG_OK) return st;
    st = lg_vp_parse(p, (const char *)buf, len, path, n_in, n_out, net);
    free(buf);
    return st;
}

lg_status lg_vnnlib_read(lg_prop *p, const char *path, int n_in, int n_out)
{
    return lg_vp_read(p, path, n_in, n_out, NULL);
}

lg_status lg_vnnlib_read_net(lg_prop *p, const char *path, const lg_net *net)
{
    return lg_vp_read(p, path, net->n_in, lg_net_n_out(net), net);
}

/* Node k and its subtree as SMT-LIB text, numbers as exact rationals. */
static int lg_vp_smt_node(const lg_sx_tree *T, int k, FILE *out)
{
    const lg_sx *x = &T->sx[k];
    if (x->is_list) {
        fputc('(', out);
        for (int c = x->first, first = 1; c >= 0; c = T->sx[c].next, first = 0) {
            if (!first) fputc(' ', out);
            if (lg_vp_smt_node(T, c, out)) return -1;
        }
        fputc(')', out);
        return 0;
    }
    double v;
    int ok;
    if (!lg_sx_number(x, &v, &ok)) {
        fprintf(out, "%.*s", x->len, x->s);
        return 0;
    }
    mpq_t q;
    mpq_init(q);
    if (!ok || lg_vp_decimal(x, q)) {
        mpq_clear(q);
        return -1;
    }
    int neg = mpq_sgn(q) < 0;
    mpq_abs(q, q);
    char *num = mpz_get_str(NULL, 10, mpq_numref(q)), *den = mpz_get_str(NULL, 10, mpq_denref(q));
    fprintf(out, neg ? "(- (/ %s %s))" : "(/ %s %s)", num, den);
    free(num);
    free(den);
    mpq_clear(q);
    return 0;
}

lg_status lg_vnnlib_write_smt(const char *path, FILE *out)
{
    unsigned char *buf;
    size_t len;
    lg_sx_tree T;
    memset(&T, 0, sizeof T);
    T.name = path;
    lg_status st = lg_file_slurp(path, LG_VNNLIB_MAX_BYTES, &buf, &len);
    if (st != LG_OK) return st;
    if ((st = lg_sx_parse(&T, (const char *)buf, len)) != LG_OK) goto done;
    for (int k = T.top; k >= 0; k = T.sx[k].next) {
        const lg_sx *cmd = &T.sx[k];
        const lg_sx *h = cmd->is_list ? lg_sx_at(&T, cmd->first) : NULL;
        if (!h || !(lg_sx_is(h, "declare-const") || lg_sx_is(h, "assert"))) continue;
        if (lg_vp_smt_node(&T, k, out)) {
            st = lg_fail(LG_ERR_FORMAT, "%s:%d:%d: bad number", path, cmd->line, cmd->col);
            goto done;
        }
        fputc('\n', out);
    }
done:
    lg_sx_tree_free(&T);
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
        lg_lin l;
        lg_lin_init(&l);
        P.cap_x = P.cap_y = 0; /* no variables allowed in values */
        st = lg_vp_term(&P, val, &l, 0);
        int isc = st == LG_OK && lg_lin_const(&l);
        double c = 0, c_lo, c_hi; /* the nearest double (ties: either neighbour) */
        if (isc && lg_vp_round(l.c, &c_lo, &c_hi) == 0) {
            mpq_t m, t;
            mpq_init(m);
            mpq_init(t);
            mpq_set_d(m, c_lo);
            mpq_set_d(t, c_hi);
            mpq_add(m, m, t);
            mpq_div_2exp(m, m, 1);
            c = mpq_cmp(l.c, m) < 0 ? c_lo : c_hi;
            mpq_clear(m);
            mpq_clear(t);
        } else if (isc) {
            st = lg_fail(LG_ERR_FORMAT, "%s:%d:%d: number out of the double range", path, val->line, val->col);
        }
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
