/* z3.c — the Z3 back-end (C API, QF_LRA over the reals, exact rationals).
 *
 * Encoding (DESIGN.md §3), every constant an exact dyadic rational
 * (rational.h), one Z3_context per query created and destroyed here:
 *
 *   inputs        lo_i ≤ x_i ≤ hi_i
 *   normalisation div_i·x'_i = x_i − sub_i          (only if the net has one)
 *   layer k       z_k,i = Σ_t Σ_j A_t[i,j]·a_{src(t)},j + b_k,i,   l_k,i ≤ z_k,i ≤ u_k,i
 *                 (one row over every term's source node, pwl.h lg_pwl_row;
 *                 a_{−1} = x' ; stable-zero inputs a = 0 are dropped)
 *   identity      a_k,i = z_k,i
 *   relu, u ≤ 0   a_k,i = 0
 *   relu, l ≥ 0   a_k,i = z_k,i
 *   relu, l<0<u   (z ≤ 0 ∧ a = 0) ∨ (z ≥ 0 ∧ a = z)           the exact split
 *                 a ≥ 0,  a ≥ z,  (u − l)·a ≤ u·(z − l)         implied (triangle),
 *                                                              asserted to help
 *   output        y = a_{L−1};  ∨_t ∧_c (coef_c·y + d_c ≤ 0)
 *   Transformer   z_k,i free in [l_k,i, u_k,i], constrained by the
 *   node          relaxation's rows (problem.h lg_trelax), auxiliary reals t_a
 *
 * With Transformer nodes, unsat ⇒ no counterexample; sat gives a candidate
 * of the relaxation (verify/ re-checks it on the real net).
 *
 * sat ⇔ a counterexample exists (given sound bounds). The model's x is
 * rounded to the nearest double (via a 40-digit decimal) and clamped into the
 * box; verify/ re-checks it. Models often sit exactly on the boundary of the
 * region, where rounding can fall outside: if the double forward pass misses
 * every term, the condition with a 1e-9 margin is added and Z3 asked once
 * more for a point inside (kept only if it passes).
 *
 * Timeout: the solver's "timeout" parameter (the time left until
 * o->run.deadline) and the session's watchdog (z3_session.h), which calls
 * Z3_interrupt once that deadline has passed. Z3 4.8.12 does not always
 * listen (measured: a 784-256-256-10 query ignored both for > 90 s), so the
 * hard limit is the one isolation of every back-end: the table's z3 rows
 * run this in a child process killed 0.5 s after the same deadline
 * (isolate.h, solvers.c). run.memory_mb sets Z3's memory_max_size. Z3 errors
 * are caught by a recording handler (never exit) → LG_ERR_SOLVER, or a
 * timeout when the watchdog caused them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <z3.h>

#include "encode/backends.h"
#include "core/clock.h"
#include "encode/pwl.h"
#include "encode/z3_session.h"
#include "encode/rational.h"

typedef struct z3q {
    lg_z3_session z; /* context, solver, error record, watchdog (z3_session.h) */
    Z3_context ctx;  /* z.ctx */
    Z3_sort real;
    Z3_ast zero;
    Z3_ast *x;    /* [n_in] input variables */
    Z3_ast *node; /* [lg_net_nodes_len] the value of every node (normalised input, each
                     layer's output), NULL = 0 */
    Z3_ast *y;    /* the outputs: node + offset of the last layer */
    Z3_ast *args; /* [max(row cap, n_out) + 2] scratch for sums */
    double *scratch; /* forward-pass scratch for candidate checks */
    lg_pwl_row row; /* rows over the graph (pwl.h) */
} z3q;

static Z3_ast z3_num(z3q *q, double v)
{
    lg_rat r;
    char buf[2 * LG_RAT_DIGITS + 2];
    if (lg_rat_from_double(&r, v)) return NULL; /* validated: cannot happen */
    return Z3_mk_numeral(q->ctx, lg_rat_str(&r, buf), q->real);
}

/* Real constant named <prefix>_<a> or, if b ≥ 0, <prefix>_<a>_<b>. */
static Z3_ast z3_var(z3q *q, const char *prefix, int a, int b)
{
    char name[64];
    if (b >= 0)
        snprintf(name, sizeof name, "%s_%d_%d", prefix, a, b);
    else
        snprintf(name, sizeof name, "%s_%d", prefix, a);
    return Z3_mk_const(q->ctx, Z3_mk_string_symbol(q->ctx, name), q->real);
}

static void z3_assert(z3q *q, Z3_ast f)
{
    if (f && q->z.err == Z3_OK) Z3_solver_assert(q->ctx, q->z.s, f);
}

/* Σ_j c[j]·v[j] + d over the non-NULL v[j] with c[j] ≠ 0. */
static Z3_ast z3_affine(z3q *q, const double *c, Z3_ast const *v, int n, double d)
{
    int m = 0;
    q->args[m++] = z3_num(q, d);
    for (int j = 0; j < n; j++) {
        if (!v[j] || c[j] == 0) continue;
        Z3_ast mul[2] = {z3_num(q, c[j]), v[j]};
        q->args[m++] = Z3_mk_mul(q->ctx, 2, mul);
    }
    return m == 1 ? q->args[0] : Z3_mk_add(q->ctx, (unsigned)m, q->args);
}

static void z3_build_relu(z3q *q, Z3_ast z, Z3_ast a, double l, double u)
{
    Z3_context c = q->ctx;
    Z3_ast off[2] = {Z3_mk_le(c, z, q->zero), Z3_mk_eq(c, a, q->zero)};
    Z3_ast on[2] = {Z3_mk_ge(c, z, q->zero), Z3_mk_eq(c, a, z)};
    Z3_ast split[2] = {Z3_mk_and(c, 2, off), Z3_mk_and(c, 2, on)};
    z3_assert(q, Z3_mk_or(c, 2, split));
    z3_assert(q, Z3_mk_ge(c, a, q->zero));
    z3_assert(q, Z3_mk_ge(c, a, z));
    /* (u − l)·a ≤ u·z − u·l, constants folded exactly by Z3_simplify */
    Z3_ast U = z3_num(q, u), L = z3_num(q, l);
    Z3_ast ul[2] = {U, L};
    Z3_ast width = Z3_simplify(c, Z3_mk_sub(c, 2, ul));
    Z3_ast prod = Z3_simplify(c, Z3_mk_mul(c, 2, ul));
    Z3_ast lhs_m[2] = {width, a}, uz[2] = {U, z};
    Z3_ast rhs_s[2] = {Z3_mk_mul(c, 2, uz), prod};
    z3_assert(q, Z3_mk_le(c, Z3_mk_mul(c, 2, lhs_m), Z3_mk_sub(c, 2, rhs_s)));
}

/* Σ_q w[q]·node[pos[q]] + b over row r (every copy of a position is the
 * position's own variable: Z3 adds the products exactly). */
static Z3_ast z3_row(z3q *q, const lg_pwl_row *r, double b)
{
    int m = 0;
    q->args[m++] = z3_num(q, b);
    for (int j = 0; j < r->n; j++) {
        Z3_ast v = q->node[r->pos[j]];
        if (!v || r->w[j] == 0) continue;
        Z3_ast mul[2] = {z3_num(q, r->w[j]), v};
        q->args[m++] = Z3_mk_mul(q->ctx, 2, mul);
    }
    return m == 1 ? q->args[0] : Z3_mk_add(q->ctx, (unsigned)m, q->args);
}

/* ∨_t ∧_c (coef_c·y + d_c + eta ≤ 0) over the outputs q->y. */
static Z3_ast z3_condition(z3q *q, const lg_problem *p, double eta)
{
    Z3_context c = q->ctx;
    int n_out = lg_net_n_out(p->net);
    Z3_ast disj = Z3_mk_false(c);
    for (int t = 0; t < p->n_terms; t++) {
        const lg_term *T = &p->terms[t];
        Z3_ast conj = Z3_mk_true(c);
        for (int j = 0; j < T->n_cons; j++) {
            Z3_ast lhs = z3_affine(q, T->cons[j].coef, q->y, n_out, T->cons[j].d);
            Z3_ast le = Z3_mk_le(c, lhs, eta == 0 ? q->zero : z3_num(q, -eta));
            Z3_ast both[2] = {conj, le};
            conj = j == 0 ? le : Z3_mk_and(c, 2, both);
        }
        Z3_ast either[2] = {disj, conj};
        disj = t == 0 ? conj : Z3_mk_or(c, 2, either);
    }
    return disj;
}

/* The Transformer nodes' relaxation (problem.h lg_trelax): auxiliary reals
 * t_<a> in their bounds and every row, over the node values (NULL = 0). */
static void z3_build_trelax(z3q *q, const lg_trelax *tr)
{
    Z3_context c = q->ctx;
    Z3_ast *aux = calloc((size_t)tr->n_aux + 1, sizeof *aux);
    Z3_ast *args = NULL;
    int width = 1;
    for (int i = 0; i < tr->n_rows; i++)
        if (tr->rows[i].n > width) width = tr->rows[i].n;
    args = calloc((size_t)width + 1, sizeof *args);
    if (!aux || !args) {
        q->z.err = Z3_MEMOUT_FAIL;
        snprintf(q->z.errmsg, sizeof q->z.errmsg, "out of memory for the relaxation");
        goto done;
    }
    for (int a = 0; a < tr->n_aux && q->z.err == Z3_OK; a++) {
        aux[a] = z3_var(q, "t", a, -1);
        z3_assert(q, Z3_mk_ge(c, aux[a], z3_num(q, tr->aux_lo[a])));
        z3_assert(q, Z3_mk_le(c, aux[a], z3_num(q, tr->aux_hi[a])));
    }
    for (int i = 0; i < tr->n_rows && q->z.err == Z3_OK; i++) {
        const lg_trow *w = &tr->rows[i];
        int m = 0;
        for (int j = w->start; j < w->start + w->n; j++) {
            int v = tr->var[j];
            Z3_ast x = (size_t)v < tr->nodes_len ? q->node[v] : aux[v - (int)tr->nodes_len];
            if (!x) continue; /* the constant 0 */
            Z3_ast mul[2] = {z3_num(q, tr->coef[j]), x};
            args[m++] = Z3_mk_mul(c, 2, mul);
        }
        Z3_ast lhs = m == 0 ? q->zero : m == 1 ? args[0] : Z3_mk_add(c, (unsigned)m, args);
        Z3_ast rhs = z3_num(q, w->rhs);
        z3_assert(q, w->sense == 'E' ? Z3_mk_eq(c, lhs, rhs) : w->sense == 'L' ? Z3_mk_le(c, lhs, rhs)
                                                                                : Z3_mk_ge(c, lhs, rhs));
    }
done:
    free(aux);
    free(args);
}

/* Assert the whole encoding; on return q->y holds the outputs. */
static void z3_build(z3q *q, const lg_problem *p)
{
    Z3_context c = q->ctx;
    const lg_net *net = p->net;
    for (int i = 0; i < net->n_in && q->z.err == Z3_OK; i++) {
        q->x[i] = z3_var(q, "x", i, -1);
        z3_assert(q, Z3_mk_ge(c, q->x[i], z3_num(q, p->lo[i])));
        z3_assert(q, Z3_mk_le(c, q->x[i], z3_num(q, p->hi[i])));
        q->node[i] = q->x[i];
        if (net->in_sub || net->in_div) {
            Z3_ast xn = z3_var(q, "xn", i, -1);
            Z3_ast dx[2] = {z3_num(q, net->in_div ? net->in_div[i] : 1.0), xn};
            Z3_ast xs[2] = {q->x[i], z3_num(q, net->in_sub ? net->in_sub[i] : 0.0)};
            z3_assert(q, Z3_mk_eq(c, Z3_mk_mul(c, 2, dx), Z3_mk_sub(c, 2, xs)));
            q->node[i] = xn;
        }
    }
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *Ly = &net->layers[k];
        Z3_ast *cur = q->node + lg_pwl_node_off(&q->row, k);
        for (int i = 0; i < Ly->n_out; i++) {
            if (q->z.err != Z3_OK) return; /* a failed call returned NULL: stop before using it */
            double l = p->pre_lo[k][i], u = p->pre_hi[k][i];
            Z3_ast z = z3_var(q, "z", k, i);
            if (!lg_layer_is_tnode(Ly)) { /* a Transformer node: the relaxation's rows, below */
                lg_pwl_row_get(&q->row, k, i, NULL);
                z3_assert(q, Z3_mk_eq(c, z, z3_row(q, &q->row, Ly->b[i])));
            }
            z3_assert(q, Z3_mk_ge(c, z, z3_num(q, l)));
            z3_assert(q, Z3_mk_le(c, z, z3_num(q, u)));
            switch (lg_pwl_phase(p, k, i)) {
            case LG_PHASE_LINEAR: cur[i] = z; break;
            case LG_PHASE_ZERO: cur[i] = NULL; break;
            case LG_PHASE_UNSTABLE:
                cur[i] = z3_var(q, "a", k, i);
                z3_build_relu(q, z, cur[i], l, u);
                break;
            }
        }
    }
    if (p->trelax) z3_build_trelax(q, p->trelax);
    q->y = q->node + lg_pwl_node_off(&q->row, net->n_layers - 1);
    z3_assert(q, z3_condition(q, p, 0.0));
}

static long z3_decisions(Z3_context c, Z3_solver s)
{
    Z3_stats st = Z3_solver_get_statistics(c, s);
    if (!st) return 0;
    Z3_stats_inc_ref(c, st);
    long n = 0;
    for (unsigned i = 0; i < Z3_stats_size(c, st); i++)
        if (strcmp(Z3_stats_get_key(c, st, i), "decisions") == 0 && Z3_stats_is_uint(c, st, i))
            n = (long)Z3_stats_get_uint_value(c, st, i);
    Z3_stats_dec_ref(c, st);
    return n;
}

/* Nearest double to the model value of v (40 decimals), clamped to [lo, hi]. */
static double z3_model_double(Z3_context c, Z3_model m, Z3_ast v, double lo, double hi)
{
    Z3_ast val = NULL;
    double x = lo;
    if (Z3_model_eval(c, m, v, true, &val) && val && Z3_is_numeral_ast(c, val)) {
        const char *s = Z3_get_numeral_decimal_string(c, val, 40);
        if (s) x = strtod(s, NULL); /* a trailing '?' marks truncation; strtod stops there */
    }
    if (!(x >= lo)) x = lo;
    if (x > hi) x = hi;
    return x;
}

/* Margin of the second query when the first model rounds badly. */
#define LG_Z3_INSIDE 1e-9

/* The model's inputs as doubles into x. */
static lg_status z3_candidate(z3q *q, const lg_problem *p, double *x)
{
    Z3_model m = Z3_solver_get_model(q->ctx, q->z.s);
    if (!m) return lg_fail(LG_ERR_SOLVER, "z3: sat but no model: %s", q->z.errmsg);
    Z3_model_inc_ref(q->ctx, m);
    for (int i = 0; i < p->net->n_in; i++) x[i] = z3_model_double(q->ctx, m, q->x[i], p->lo[i], p->hi[i]);
    Z3_model_dec_ref(q->ctx, m);
    return LG_OK;
}

/* 1 if the double forward pass at x satisfies some term exactly. */
/* 1 if the double forward pass at x lies in some term with every
 * constraint ≤ tol (tol < 0: strictly inside by |tol|). */
static int z3_candidate_holds(z3q *q, const lg_problem *p, const double *x, double tol)
{
    for (int t = 0; t < p->n_terms; t++)
        if (lg_pwl_term_holds(p, t, x, tol, q->scratch)) return 1;
    return 0;
}

/* The query in this process; t0 is when the caller's clock started. */
static lg_status z3_solve_here(const lg_problem *p, const lg_solve_opts *o, double t0, lg_result *r)
{
    lg_status st;
    memset(r, 0, sizeof *r);
    z3q q;
    memset(&q, 0, sizeof q);
    int n_in = p->net->n_in, width = lg_net_max_width(p->net), n_out = lg_net_n_out(p->net);
    if ((st = lg_pwl_row_init(&q.row, p->net))) goto fail;
    int n_args = q.row.cap > n_out ? q.row.cap : n_out;
    q.x = calloc((size_t)n_in, sizeof *q.x);
    q.node = calloc(lg_net_nodes_len(p->net), sizeof *q.node);
    q.args = calloc((size_t)n_args + 2, sizeof *q.args);
    if (!q.x || !q.node || !q.args) {
        st = lg_fail(LG_ERR_NOMEM, "z3: cannot allocate encoding buffers");
        goto fail;
    }
    if ((st = lg_z3_session_open(&q.z, "z3", "QF_LRA", o)) != LG_OK) goto fail;
    q.ctx = q.z.ctx;
    q.real = Z3_mk_real_sort(q.ctx);
    q.zero = Z3_mk_numeral(q.ctx, "0", q.real);
    z3_build(&q, p);
    if (o->run.verbose > 0) fprintf(stderr, "z3: encoding built in %.2f s\n", lg_now() - t0);
    if (q.z.err != Z3_OK) {
        if (lg_z3_session_late(&q.z)) { /* interrupted by the watchdog */
            r->answer = LG_ANSWER_UNKNOWN;
            r->timed_out = 1;
            snprintf(r->reason, sizeof r->reason, "timeout");
            st = LG_OK;
        } else {
            st = lg_fail(LG_ERR_SOLVER, "z3: building the encoding failed: %s", q.z.errmsg);
        }
        goto fail;
    }
    lg_z3_session_timeout(&q.z);
    if (o->run.verbose > 0) fprintf(stderr, "z3: %d unstable relu, solving\n", lg_pwl_count_unstable(p));
    Z3_lbool res = Z3_L_UNDEF;
    if (!lg_z3_session_late(&q.z)) res = lg_z3_session_check(&q.z); /* past the deadline: a timeout, below */
    if (q.z.err != Z3_OK) {
        st = lg_fail(LG_ERR_SOLVER, "z3: check failed: %s", q.z.errmsg);
        goto fail;
    }
    r->nodes = z3_decisions(q.ctx, q.z.s);
    if (res == Z3_L_FALSE) {
        r->answer = LG_ANSWER_UNSAT;
    } else if (res == Z3_L_TRUE) {
        r->x = malloc((size_t)n_in * sizeof *r->x);
        q.scratch = malloc((2 * (size_t)width + (size_t)lg_net_n_out(p->net)) * sizeof *q.scratch);
        if (!r->x || !q.scratch) {
            st = lg_fail(LG_ERR_NOMEM, "z3: cannot allocate the candidate");
            goto fail;
        }
        if ((st = z3_candidate(&q, p, r->x))) goto fail;
        r->answer = LG_ANSWER_SAT;
        if (!z3_candidate_holds(&q, p, r->x, -LG_Z3_INSIDE / 4)) {
            /* The exact model sits on (or next to) the boundary of the
             * region — a tie the double rounding or the exact witness check
             * may reject: ask for a point 1e-9 inside. If there is none,
             * keep the boundary point (verify/ decides). */
            z3_assert(&q, z3_condition(&q, p, LG_Z3_INSIDE));
            if (q.z.err == Z3_OK && !lg_z3_session_late(&q.z) && lg_z3_session_check(&q.z) == Z3_L_TRUE) {
                double *x2 = malloc((size_t)n_in * sizeof *x2);
                if (x2 && z3_candidate(&q, p, x2) == LG_OK && z3_candidate_holds(&q, p, x2, 0.0))
                    memcpy(r->x, x2, (size_t)n_in * sizeof *x2);
                free(x2);
            }
        }
    } else {
        const char *why = Z3_solver_get_reason_unknown(q.ctx, q.z.s);
        int timed_out = o->run.deadline > 0 && lg_now() >= o->run.deadline - 1e-3;
        if (timed_out || (why && (strstr(why, "timeout") || strstr(why, "canceled")))) {
            r->timed_out = 1;
            snprintf(r->reason, sizeof r->reason, "timeout");
        } else if (why && strstr(why, "memory")) {
            snprintf(r->reason, sizeof r->reason, "memory limit (z3: %.200s)", why);
        }
        else
            snprintf(r->reason, sizeof r->reason, "z3: %s", why ? why : "unknown");
        r->answer = LG_ANSWER_UNKNOWN;
    }
    st = LG_OK;
fail:
    lg_z3_session_close(&q.z);
    free(q.x);
    free(q.node);
    free(q.args);
    lg_pwl_row_free(&q.row);
    free(q.scratch);
    if (st) lg_result_free(r);
    return st;
}

lg_status lg_z3_solve(const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    lg_solve_opts defaults = lg_solve_opts_default();
    if (!o) o = &defaults;
    memset(r, 0, sizeof *r);
    double t0 = lg_now();
    lg_status st = lg_pwl_validate(p);
    if (st) return st;
    st = z3_solve_here(p, o, t0, r);
    snprintf(r->theory, sizeof r->theory, "exact");
    r->seconds = lg_now() - t0;
    return st;
}
