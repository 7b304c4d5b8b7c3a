/* z3lp.c — Z3's CDCL over the phases of the unstable ReLUs, lgelu's LP as
 * the theory: online through Z3's user propagator, or lemmas on demand
 * (z3lp.h).
 *
 * Boolean abstraction (Z3, a simple solver, QF Boolean only):
 *   p_j  for unstable neuron j (true: active),   q_t  for term t,
 *   q_0 ∨ … ∨ q_{T−1}                                 asserted once
 *   plus one learned clause per theory conflict.
 *
 * Theory LP (lp_relax.h, built and loaded once; a model only switches rows
 * on and off, so each LP starts from the previous basis). Columns
 *   x_i ∈ [lo_i, hi_i];  xn_i (normalised input, box widened by 1e-9 rel.)
 *   z_k,i ∈ [l, u] for every neuron that is not stably zero
 *   a_j ∈ [0, u_j] for every unstable neuron j;  t ∈ [−T, T]
 * Rows that hold for every model (the exact network, bounds sound):
 *   div_i·xn_i − x_i = −sub_i
 *   z_k,i − Σ_t Σ_j A_t[i,j]·a_{src(t)},j = b_i   (a = z for linear neurons, 0 for zero;
 *                               one row over every term's source node, pwl.h;
 *                               a copy column v' ∈ [v's bounds], v' − v = 0,
 *                               where two terms meet with an inexact sum)
 *   a_j − z_j ≥ 0
 *   A_j·a_j − u_j·z_j ≤ C_j    (the chord, A_j ≤ u_j − l_j and C_j ≥ −u_j·l_j
 *                               rounded toward validity: the convex
 *                               A·relu(z) − u·z peaks at z = l or z = u, where
 *                               it is ≤ −u·l)
 * Rows switched on by the model, each relaxed by the elastic column t:
 *   p_j true:   z_j + t ≥ 0,   a_j − z_j − t ≤ 0
 *   p_j false:  z_j − t ≤ 0,   a_j − t ≤ 0
 *   q_t true:   c·y − t ≤ −d   for each constraint c·y + d ≤ 0 of term t
 * The LP minimises t. It is always feasible (the exact forward pass of any
 * x, with t the largest violation ≤ T), so GLPK returns an optimal basis and
 * its duals. The model is realisable iff min t ≤ 0. lg_lp_relax_min turns
 * the duals into a certified lower bound lb of t (lp_cert.h: the safe
 * Lagrangian bound, rounding outward):
 *   lb > 0   conflict. The bound uses only the rows with a nonzero
 *            multiplier, so the LP of those rows alone has no point with
 *            t ≤ 0: the clause ∨ ¬(literals of those rows) holds for every
 *            counterexample. It is added and Z3 asked again.
 *   t* ≤ 0   x (GLPK's, clamped into the box) is the candidate when the
 *            double forward pass and the exact one put it in some term:
 *            SAT (verify/ still applies its witness gate).
 *   else     (t* within GLPK's tolerance of 0, the bound too weak, the
 *            candidate rounding out of the region, GLPK failing) the model
 *            is blocked by the clause of all its literals and the run can
 *            no longer answer UNSAT ("incomplete"): nothing is robust that
 *            was not closed by a certified bound.
 * UNSAT of the abstraction with no incomplete model: UNSAT (certified:
 * every model was closed by a checked bound; the solver table's kind).
 * Online (user propagator) the same check runs on partial models: an
 * unassigned neuron keeps only its rows valid for both phases (a ≥ 0,
 * a ≥ z, the chord: the triangle relaxation), an unassigned term is off;
 * a conflict there is raised at once, a point that already passes is the
 * candidate, anything else waits for more literals.
 * Warm starts: the theory LP restarts with the dual simplex, and from the
 * last basis seen under the same single true term (zl_slot; one basis per
 * term, LG_Z3LP_BASES=0 turns the restore off for measurement).
 * Online, no LP runs while no term is true (the phases alone rarely
 * conflict without the property's rows) nor when a term turns false (its
 * rows were off already); the final check always runs (LG_Z3LP_LAZY=0
 * checks every literal, for measurement).
 * Phase propagation (online, LG_Z3LP_PROPAGATE LPs per partial check, off
 * by default; zl_propagate): certified min ±z of unassigned neurons over
 * the rows of the fixed literals, each proof a consequence for Z3.
 *
 * Timeout: Z3's "timeout" parameter gets the time left before each check
 * (the checks are pure SAT), the LP's simplex stops at o->run.deadline, and
 * the loop stops there; the isolation of every back-end (isolate.h) is the
 * hard limit. Z3 errors are recorded by a handler (never exit).
 */
#include "encode/z3lp.h"

#include <glpk.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <z3.h>

#include "core/clock.h"
#include "core/linop.h"
#include "core/traverse.h"
#include "core/exact.h"
#include "encode/lp_cert.h"
#include "encode/lp_relax.h"
#include "encode/pwl.h"
#include "encode/z3_session.h"

typedef struct zl {
    lg_lp_relax lp;
    int n_un, n_lit;
    int *un_row;        /* [n_un] first of the four phase rows A1 A2 I1 I2 */
    int *un_z;          /* [n_un] the column z of each unstable neuron */
    double *un_lo, *un_hi; /* [n_un] its pre-activation bounds */
    int *term_row;      /* [n_terms + 1] term t owns rows term_row[t] .. term_row[t+1] */
    int *x_col;         /* [n_in] */
    int t_col;
    double *obj;        /* [n_cols] e_t */
    double *pobj;       /* [n_cols] ±e_z of a propagation LP (0 elsewhere) */
    double T;           /* the elastic column's range [−T, T] */
    double t_last;      /* GLPK's min t of the last theory LP (INFINITY: none) */
    int prop_max;       /* propagation LPs per partial check (lg_solve_opts.z3lp.propagate) */
    int prop_it;        /* simplex iterations per propagation LP (lg_solve_opts.z3lp.propagate_it) */
    int *cand;          /* [n_un] propagation candidates */
    double *score;      /* [n_un] their z/u or −z/l, signed by the direction to prove */
    int *bases;         /* [(n_terms + 1) · (rows + cols)] the last theory basis of each slot (zl_slot) */
    char *has_basis;    /* [n_terms + 1] */
    int basis_slot;     /* the slot whose basis GLPK holds now, −1 none */
    int bases_on;       /* per-term bases (default 1; lg_solve_opts.z3lp.no_bases) */
    int lazy;           /* online: no LP before a term is true (default 1; lg_solve_opts.z3lp.no_lazy) */
    int *val;           /* [n_lit] the current (partial) model: 1 true, 0 false, −1 unassigned */
    int *ex_lit, *ex_val; /* [n_lit] explanation scratch */
    double *x;          /* [n_in] candidate */
    double *scratch;    /* forward pass */
    lg_z3_session z;    /* context, solver, error record, watchdog (z3_session.h) */
    Z3_context ctx;     /* z.ctx */
    Z3_ast *lits;       /* [n_lit] */
    Z3_ast *clause;     /* [n_lit] */
    /* run state */
    const lg_problem *p;
    const lg_solve_opts *o;
    lg_z3lp_conflict_fn fn;
    void *fctx;
    long lps, lemmas, incomplete, props, prop_lps;
    int found;          /* q->x holds a candidate */
    int lp_dead;        /* GLPK failed: no more LPs (zl_lp_min) */
    double t_lp;        /* seconds in LPs (verbose line) */
    long sum_expl;      /* literals over all explanations (verbose line) */
    char why[160];      /* why the first incomplete model stayed open */
    /* user propagator: trail of fixed literals, scope limits, ids */
    int *trail, n_trail; /* [n_lit] */
    int *lim, n_lim;     /* [cap_lim] trail size at each push */
    int cap_lim, oom;
    unsigned *lit2id, *ids; /* [n_lit] */
    int *id2lit, n_ids;     /* [2·n_lit + 2] */
} zl;

/* Count columns, rows and entries of the theory LP (exact upper bounds);
 * n_copy copy columns (pwl.h) each with its row v' − v = 0. */
static void zl_sizes(const lg_problem *p, long n_copy, int *n_cols, int *n_rows, size_t *nnz)
{
    const lg_net *net = p->net;
    int norm = net->in_sub || net->in_div;
    int c = net->n_in * (norm ? 2 : 1) + 1 + (int)n_copy, r = (norm ? net->n_in : 0) + (int)n_copy;
    size_t e = (norm ? 2 * (size_t)net->n_in : 0) + 2 * (size_t)n_copy;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        size_t row = 1 + lg_layer_sum_row_cap(L); /* z and every term's row entries (core/traverse.h) */
        for (int i = 0; i < L->n_out; i++) {
            lg_phase ph = lg_pwl_phase(p, k, i);
            if (ph == LG_PHASE_ZERO) continue;
            c++;
            r++;
            e += row;
            if (ph == LG_PHASE_UNSTABLE) {
                c++;
                r += 6;
                e += 2 + 2 + 2 + 3 + 2 + 2;
            }
        }
    }
    int n_out = lg_net_n_out(net);
    for (int t = 0; t < p->n_terms; t++) {
        r += p->terms[t].n_cons;
        e += (size_t)p->terms[t].n_cons * ((size_t)n_out + 1);
    }
    *n_cols = c;
    *n_rows = r;
    *nnz = e;
}

/* Build and load the theory LP (header comment). */
static lg_status zl_build_lp(zl *q, const lg_problem *p)
{
    const lg_net *net = p->net;
    size_t len = lg_net_nodes_len(net);
    lg_pwl_row R;
    lg_status st = lg_pwl_row_init(&R, net);
    if (st) return st;
    /* colmap[pos]: the column of node value pos (x or xn; z or a; −1: a stably inactive
     * ReLU, 0); copies[pos] the copies of pos the rows use (pwl.h), their columns from
     * copy_col[pos] on */
    int *colmap = malloc(len * sizeof *colmap), *copies = malloc(len * sizeof *copies);
    int *copy_col = malloc(len * sizeof *copy_col);
    if (!colmap || !copies || !copy_col) {
        st = lg_fail(LG_ERR_NOMEM, "z3-lp: cannot allocate the LP");
        goto done;
    }
    memset(colmap, 0, len * sizeof *colmap);
    for (int k = 0; k < net->n_layers; k++)
        for (int i = 0; i < net->layers[k].n_out; i++)
            if (lg_pwl_phase(p, k, i) == LG_PHASE_ZERO) colmap[lg_pwl_node_off(&R, k) + (size_t)i] = -1;
    long n_copy = 0;
    if (lg_pwl_row_copies(&R, colmap, copies) > 0)
        for (size_t i = 0; i < len; i++) n_copy += copies[i];
    int n_cols, n_rows;
    size_t nnz;
    zl_sizes(p, n_copy, &n_cols, &n_rows, &nnz);
    q->obj = calloc((size_t)n_cols, sizeof *q->obj);
    q->pobj = calloc((size_t)n_cols, sizeof *q->pobj);
    if (!q->obj || !q->pobj) {
        st = lg_fail(LG_ERR_NOMEM, "z3-lp: cannot allocate the query");
        goto done;
    }
    if ((st = lg_lp_relax_init(&q->lp, n_cols, n_rows, nnz))) goto done;
    lg_lp_relax *lp = &q->lp;
    int n_in = net->n_in;
    int col = 0;
    double T = 1.0;
    for (int i = 0; i < n_in; i++) {
        q->x_col[i] = col;
        lg_lp_relax_col(lp, col++, p->lo[i], p->hi[i]);
        colmap[i] = q->x_col[i];
    }
    if (net->in_sub || net->in_div) {
        for (int i = 0; i < n_in; i++) {
            double sub = net->in_sub ? net->in_sub[i] : 0.0, div = net->in_div ? net->in_div[i] : 1.0;
            double a = (p->lo[i] - sub) / div, b = (p->hi[i] - sub) / div;
            double lo = fmin(a, b), hi = fmax(a, b);
            /* an implied box, widened far beyond the rounding of the two divisions */
            lo -= 1e-9 * (1.0 + fabs(lo));
            hi += 1e-9 * (1.0 + fabs(hi));
            int xn = col++;
            lg_lp_relax_col(lp, xn, lo, hi);
            lg_lp_relax_row_add(lp, 'E', -sub); /* div·xn − x = −sub */
            lg_lp_relax_ent(lp, xn, div);
            lg_lp_relax_ent(lp, q->x_col[i], -1.0);
            colmap[i] = xn;
        }
    }
    q->t_col = n_cols - 1;
    int j = 0;
    for (int k = -1; k < net->n_layers; k++) {
        if (k >= 0) {
            const lg_layer *L = &net->layers[k];
            int *cur = colmap + lg_pwl_node_off(&R, k);
            for (int i = 0; i < L->n_out; i++) {
                double l = p->pre_lo[k][i], u = p->pre_hi[k][i];
                lg_phase ph = lg_pwl_phase(p, k, i);
                if (ph == LG_PHASE_ZERO) {
                    cur[i] = -1;
                    continue;
                }
                int z = col++;
                lg_lp_relax_col(lp, z, l, u);
                lg_lp_relax_row_add(lp, 'E', L->b[i]); /* z − Σ_t A_t·a_src(t) = b */
                lg_lp_relax_ent(lp, z, 1.0);
                lg_pwl_row_get(&R, k, i, colmap);
                for (int m = 0; m < R.n; m++)
                    if (R.w[m] != 0)
                        lg_lp_relax_ent(lp, R.copy[m] ? copy_col[R.pos[m]] + R.copy[m] - 1 : colmap[R.pos[m]],
                                        -R.w[m]);
                if (ph == LG_PHASE_LINEAR) {
                    cur[i] = z;
                    continue;
                }
                int a = col++;
                lg_lp_relax_col(lp, a, 0.0, u);
                cur[i] = a;
                if (-l + 1.0 > T) T = -l + 1.0;
                if (u + 1.0 > T) T = u + 1.0;
                lg_lp_relax_row_add(lp, 'G', 0.0); /* a − z ≥ 0 */
                lg_lp_relax_ent(lp, a, 1.0);
                lg_lp_relax_ent(lp, z, -1.0);
                /* chord A·a − u·z ≤ C, A ≤ u − l and C ≥ −u·l (rounded toward validity) */
                double A = nextafter(u - l, 0.0), C = nextafter(-u * l, INFINITY);
                if (isfinite(C)) lg_lp_relax_row_add(lp, 'L', C);
                else lg_lp_relax_row_add(lp, 'F', 0.0); /* −u·l overflows: no chord (a relaxation stays sound) */
                lg_lp_relax_ent(lp, a, A);
                lg_lp_relax_ent(lp, z, -u);
                q->un_row[j] = lp->n_rows;
                q->un_z[j] = z;
                q->un_lo[j] = l;
                q->un_hi[j] = u;
                lg_lp_relax_row_add(lp, 'F', 0.0); /* A1: z + t ≥ 0 */
                lg_lp_relax_ent(lp, z, 1.0);
                lg_lp_relax_ent(lp, q->t_col, 1.0);
                lg_lp_relax_row_add(lp, 'F', 0.0); /* A2: a − z − t ≤ 0 */
                lg_lp_relax_ent(lp, a, 1.0);
                lg_lp_relax_ent(lp, z, -1.0);
                lg_lp_relax_ent(lp, q->t_col, -1.0);
                lg_lp_relax_row_add(lp, 'F', 0.0); /* I1: z − t ≤ 0 */
                lg_lp_relax_ent(lp, z, 1.0);
                lg_lp_relax_ent(lp, q->t_col, -1.0);
                lg_lp_relax_row_add(lp, 'F', 0.0); /* I2: a − t ≤ 0 */
                lg_lp_relax_ent(lp, a, 1.0);
                lg_lp_relax_ent(lp, q->t_col, -1.0);
                j++;
            }
        }
        if (n_copy == 0) continue;
        /* the copies of this node's values: v' ∈ v's bounds, v' − v = 0 */
        size_t off = lg_pwl_node_off(&R, k), w = (size_t)lg_net_node_width(net, k);
        for (size_t i = off; i < off + w; i++) {
            copy_col[i] = col;
            for (int c = 0; c < copies[i]; c++) {
                int v = colmap[i], cc = col++;
                lg_lp_relax_col(lp, cc, lp->lo[v], lp->hi[v]);
                lg_lp_relax_row_add(lp, 'E', 0.0);
                lg_lp_relax_ent(lp, cc, 1.0);
                lg_lp_relax_ent(lp, v, -1.0);
            }
        }
    }
    /* the output columns y (−1 = 0) */
    const int *prev = colmap + lg_pwl_node_off(&R, net->n_layers - 1);
    int n_out = lg_net_n_out(net);
    const double *ylo = p->pre_lo[net->n_layers - 1], *yhi = p->pre_hi[net->n_layers - 1];
    for (int t = 0; t < p->n_terms; t++) {
        q->term_row[t] = lp->n_rows;
        const lg_term *Tm = &p->terms[t];
        for (int c = 0; c < Tm->n_cons; c++) {
            const lg_lincon *C = &Tm->cons[c];
            double range = fabs(C->d);
            lg_lp_relax_row_add(lp, 'F', -C->d); /* c·y − t ≤ −d */
            for (int m = 0; m < n_out; m++) {
                if (prev[m] < 0 || C->coef[m] == 0) continue;
                lg_lp_relax_ent(lp, prev[m], C->coef[m]);
                range += fabs(C->coef[m]) * fmax(fabs(ylo[m]), fabs(yhi[m]));
            }
            lg_lp_relax_ent(lp, q->t_col, -1.0);
            if (range + 1.0 > T) T = range + 1.0;
        }
    }
    q->term_row[p->n_terms] = lp->n_rows;
    if (!isfinite(T)) {
        st = lg_fail(LG_ERR_NUMERIC, "z3-lp: the elastic column's range overflows");
        goto done;
    }
    lg_lp_relax_col(lp, q->t_col, -T, T);
    q->T = T;
    q->obj[q->t_col] = 1.0;
    lp->dual = 1; /* a model only tightens rows under the same objective: the dual simplex restarts */
    st = lg_lp_relax_load(lp);
done:
    lg_pwl_row_free(&R);
    free(colmap);
    free(copies);
    free(copy_col);
    return st;
}

/* Switch the LP's rows to the (partial) model q->val (−1: unassigned, rows off). */
static void zl_apply(zl *q, const lg_problem *p)
{
    for (int j = 0; j < q->n_un; j++) {
        int r = q->un_row[j], on = q->val[j] == 1, off = q->val[j] == 0;
        lg_lp_relax_row_sense(&q->lp, r, on ? 'G' : 'F');
        lg_lp_relax_row_sense(&q->lp, r + 1, on ? 'L' : 'F');
        lg_lp_relax_row_sense(&q->lp, r + 2, off ? 'L' : 'F');
        lg_lp_relax_row_sense(&q->lp, r + 3, off ? 'L' : 'F');
    }
    for (int t = 0; t < p->n_terms; t++)
        for (int r = q->term_row[t]; r < q->term_row[t + 1]; r++)
            lg_lp_relax_row_sense(&q->lp, r, q->val[q->n_un + t] == 1 ? 'L' : 'F');
}

/* The literals of the rows with a nonzero multiplier into ex_lit/ex_val. */
static int zl_explain(zl *q, const lg_problem *p)
{
    int n = 0;
    for (int j = 0; j < q->n_un; j++) {
        int r = q->un_row[j], used = 0;
        for (int k = 0; k < 4; k++) used |= lg_lp_relax_mult(&q->lp, r + k) != 0.0;
        if (used) {
            q->ex_lit[n] = j;
            q->ex_val[n++] = q->val[j];
        }
    }
    for (int t = 0; t < p->n_terms; t++) {
        int used = 0;
        for (int r = q->term_row[t]; r < q->term_row[t + 1]; r++) used |= lg_lp_relax_mult(&q->lp, r) != 0.0;
        if (used) {
            q->ex_lit[n] = q->n_un + t;
            q->ex_val[n++] = q->val[q->n_un + t];
        }
    }
    return n;
}

/* Assert ∨ ¬(lit = val) over the n literals in ex_lit/ex_val. */
static void zl_block(zl *q, int n)
{
    Z3_context c = q->ctx;
    for (int i = 0; i < n; i++) {
        Z3_ast l = q->lits[q->ex_lit[i]];
        q->clause[i] = q->ex_val[i] ? Z3_mk_not(c, l) : l;
    }
    Z3_ast cl = n == 0 ? Z3_mk_false(c) : n == 1 ? q->clause[0] : Z3_mk_or(c, (unsigned)n, q->clause);
    if (cl && q->z.err == Z3_OK) Z3_solver_assert(c, q->z.s, cl);
}

/* The Z3 model's values of every literal into q->val. */
static lg_status zl_model(zl *q)
{
    Z3_model m = Z3_solver_get_model(q->ctx, q->z.s);
    if (!m) return lg_fail(LG_ERR_SOLVER, "z3-lp: sat but no model: %s", q->z.errmsg);
    Z3_model_inc_ref(q->ctx, m);
    for (int i = 0; i < q->n_lit; i++) {
        Z3_ast v = NULL;
        q->val[i] = Z3_model_eval(q->ctx, m, q->lits[i], true, &v) && v && Z3_get_bool_value(q->ctx, v) == Z3_L_TRUE;
    }
    Z3_model_dec_ref(q->ctx, m);
    return LG_OK;
}

static lg_status zl_setup(zl *q, const lg_problem *p, const lg_solve_opts *o)
{
    q->basis_slot = -1;
    q->bases_on = !o->z3lp.no_bases;
    q->lazy = !o->z3lp.no_lazy;
    int n_in = p->net->n_in, width = lg_net_max_width(p->net);
    q->n_un = lg_pwl_count_unstable(p);
    q->n_lit = q->n_un + p->n_terms;
    q->t_last = INFINITY;
    q->prop_max = o->z3lp.propagate > 0 ? o->z3lp.propagate : LG_Z3LP_PROPAGATE_DEFAULT;
    q->prop_it = o->z3lp.propagate_it > 0 ? o->z3lp.propagate_it : o->z3lp.propagate_it < 0 ? 0 : LG_Z3LP_PROPAGATE_IT_DEFAULT;
    size_t nl = (size_t)q->n_lit + 1, nu = (size_t)q->n_un + 1;
    q->un_row = malloc(nu * sizeof *q->un_row);
    q->un_z = malloc(nu * sizeof *q->un_z);
    q->un_lo = malloc(nu * sizeof *q->un_lo);
    q->un_hi = malloc(nu * sizeof *q->un_hi);
    q->cand = malloc(nu * sizeof *q->cand);
    q->score = malloc(nu * sizeof *q->score);
    q->term_row = malloc(((size_t)p->n_terms + 1) * sizeof *q->term_row);
    q->x_col = malloc((size_t)n_in * sizeof *q->x_col);
    q->val = calloc(nl, sizeof *q->val);
    q->ex_lit = malloc(nl * sizeof *q->ex_lit);
    q->ex_val = malloc(nl * sizeof *q->ex_val);
    q->x = malloc((size_t)n_in * sizeof *q->x);
    q->scratch = malloc((2 * (size_t)width + (size_t)lg_net_n_out(p->net)) * sizeof *q->scratch);
    q->lits = calloc(nl, sizeof *q->lits);
    q->clause = calloc(nl, sizeof *q->clause);
    q->trail = malloc(nl * sizeof *q->trail);
    q->lit2id = malloc(nl * sizeof *q->lit2id);
    q->ids = malloc(nl * sizeof *q->ids);
    q->id2lit = malloc((2 * nl + 2) * sizeof *q->id2lit);
    if (!q->trail || !q->lit2id || !q->ids || !q->id2lit || !q->un_z || !q->un_lo || !q->un_hi || !q->cand ||
        !q->score)
        return lg_fail(LG_ERR_NOMEM, "z3-lp: cannot allocate the query");
    if (!q->un_row || !q->term_row || !q->x_col || !q->val || !q->ex_lit || !q->ex_val ||
        !q->x || !q->scratch || !q->lits || !q->clause)
        return lg_fail(LG_ERR_NOMEM, "z3-lp: cannot allocate the query");
    lg_status st = zl_build_lp(q, p);
    if (st) return st;
    size_t nb = (size_t)q->lp.n_rows + (size_t)q->lp.n_cols;
    q->bases = malloc(((size_t)p->n_terms + 1) * nb * sizeof *q->bases);
    q->has_basis = calloc((size_t)p->n_terms + 1, 1);
    if (!q->bases || !q->has_basis) return lg_fail(LG_ERR_NOMEM, "z3-lp: cannot allocate the bases");

    lg_status zst = lg_z3_session_open(&q->z, "z3-lp", NULL, o);
    if (zst != LG_OK) return zst;
    q->ctx = q->z.ctx;
    Z3_sort b = Z3_mk_bool_sort(q->ctx);
    int j = 0;
    for (int k = 0; k < p->net->n_layers; k++)
        for (int i = 0; i < p->net->layers[k].n_out; i++)
            if (lg_pwl_phase(p, k, i) == LG_PHASE_UNSTABLE) {
                char name[48];
                snprintf(name, sizeof name, "p_%d_%d", k, i);
                q->lits[j++] = Z3_mk_const(q->ctx, Z3_mk_string_symbol(q->ctx, name), b);
            }
    for (int t = 0; t < p->n_terms; t++) {
        char name[32];
        snprintf(name, sizeof name, "q_%d", t);
        q->lits[q->n_un + t] = Z3_mk_const(q->ctx, Z3_mk_string_symbol(q->ctx, name), b);
    }
    /* at least one term: the clause ∨ q_t is the blocking clause of all-false */
    for (int t = 0; t < p->n_terms; t++) {
        q->ex_lit[t] = q->n_un + t;
        q->ex_val[t] = 0;
    }
    zl_block(q, p->n_terms);
    if (q->z.err != Z3_OK) return lg_fail(LG_ERR_SOLVER, "z3-lp: building the abstraction failed: %s", q->z.errmsg);
    return LG_OK;
}

static void zl_free(zl *q)
{
    lg_z3_session_close(&q->z);
    lg_lp_relax_free(&q->lp);
    free(q->un_row);
    free(q->un_z);
    free(q->un_lo);
    free(q->un_hi);
    free(q->cand);
    free(q->score);
    free(q->pobj);
    free(q->bases);
    free(q->has_basis);
    free(q->term_row);
    free(q->x_col);
    free(q->obj);
    free(q->val);
    free(q->ex_lit);
    free(q->ex_val);
    free(q->x);
    free(q->scratch);
    free(q->lits);
    free(q->clause);
    free(q->trail);
    free(q->lim);
    free(q->lit2id);
    free(q->ids);
    free(q->id2lit);
}

/* 1 if the LP point is a candidate: clamped into the box, some term holds in
 * the double forward pass and in exact arithmetic (core/exact.h: a point
 * that rounding alone puts in the region is no candidate). */
static int zl_candidate(zl *q, const lg_problem *p)
{
    for (int i = 0; i < p->net->n_in; i++) {
        double v = lg_lp_relax_value(&q->lp, q->x_col[i]);
        q->x[i] = v < p->lo[i] ? p->lo[i] : v > p->hi[i] ? p->hi[i] : v;
    }
    for (int t = 0; t < p->n_terms; t++)
        if (lg_pwl_term_holds(p, t, q->x, 0.0, q->scratch))
            return lg_exact_first_holding(p->net, q->x, p->n_terms, p->terms, NULL) >= 0;
    return 0;
}

/* GLPK stops on a failed internal assertion (seen: spxchuzr.c "teta >= 0"
 * on near-degenerate warm starts): lg_lp_relax_min catches it
 * (glpk_guard.h) and the LP is dead — the theory is dead with it: every
 * later check is open, so the answer can only be SAT or UNKNOWN. */
static int zl_lp_min(zl *q, const lg_solve_opts *o, double *lb)
{
    if (q->lp_dead) return 0;
    double t0 = lg_now();
    int ok = lg_lp_relax_min(&q->lp, q->obj, 0.0, &o->run, lb);
    q->t_lp += lg_now() - t0;
    if (!q->lp.P) q->lp_dead = 1;
    return ok;
}

typedef enum zl_verdict { ZL_CONFLICT, ZL_SAT, ZL_OPEN } zl_verdict;

/* The basis slot of the model q->val: the term when exactly one term
 * literal is true, else n_terms. Switching terms changes the LP most (its
 * rows and the point it pulls toward), so each term restarts from the last
 * basis seen under it instead of the last basis of any term. */
static int zl_slot(const zl *q, const lg_problem *p)
{
    int slot = -1;
    for (int t = 0; t < p->n_terms; t++)
        if (q->val[q->n_un + t] == 1) {
            if (slot >= 0) return p->n_terms;
            slot = t;
        }
    return slot >= 0 ? slot : p->n_terms;
}

/* The theory on the (partial) model q->val: ZL_CONFLICT with the
 * explanation in ex_lit/ex_val (*n literals), ZL_SAT with the candidate in
 * q->x, else ZL_OPEN (*why set when it is not the mere absence of a
 * conflict: see the header comment). */
static zl_verdict zl_theory(zl *q, const lg_problem *p, const lg_solve_opts *o, int *n, const char **why)
{
    zl_apply(q, p);
    int slot = zl_slot(q, p);
    size_t nb = (size_t)q->lp.n_rows + (size_t)q->lp.n_cols;
    if (q->bases_on && slot != q->basis_slot && q->has_basis[slot])
        lg_lp_relax_basis_set(&q->lp, q->bases + (size_t)slot * nb);
    double lb = -INFINITY;
    int ok = zl_lp_min(q, o, &lb);
    lg_lp_relax_basis_get(&q->lp, q->bases + (size_t)slot * nb);
    q->has_basis[slot] = 1;
    q->basis_slot = slot;
    q->lps++;
    *n = 0;
    *why = NULL;
    q->t_last = INFINITY;
    if (ok && lb > 0) {
        *n = zl_explain(q, p);
        q->sum_expl += *n;
        if (q->fn) q->fn(q->fctx, *n, q->ex_lit, q->ex_val, 0);
        q->lemmas++;
        return ZL_CONFLICT;
    }
    double t = ok ? lg_lp_relax_value(&q->lp, q->t_col) : INFINITY;
    q->t_last = t;
    int any_term = 0;
    for (int k = q->n_un; k < q->n_lit; k++) any_term |= q->val[k] == 1;
    if (ok && t <= 0 && any_term && zl_candidate(q, p)) return ZL_SAT;
    *why = q->lp_dead ? "GLPK failed an internal check"
           : !ok      ? "the LP bound was not certified"
           : t <= 0   ? "the LP point misses the region in double"
                      : "the LP bound does not certify infeasibility";
    return ZL_OPEN;
}

/* Every assigned literal of q->val into ex_lit/ex_val. */
static int zl_all(zl *q)
{
    int n = 0;
    for (int i = 0; i < q->n_lit; i++)
        if (q->val[i] >= 0) {
            q->ex_lit[n] = i;
            q->ex_val[n++] = q->val[i];
        }
    return n;
}

/* The answer once Z3's check is over (res) or the loop gave up. */
static void zl_answer(zl *q, const lg_solve_opts *o, Z3_lbool res, lg_result *r)
{
    if (q->found) {
        r->answer = LG_ANSWER_SAT;
        r->x = q->x;
        q->x = NULL;
    } else if (q->lp_dead) {
        snprintf(r->reason, sizeof r->reason, "z3-lp: GLPK failed an internal check");
    } else if (res == Z3_L_FALSE && !q->incomplete) {
        r->answer = LG_ANSWER_UNSAT; /* every model closed by a certified bound: a proof over the reals */
    } else if (res == Z3_L_FALSE) {
        snprintf(r->reason, sizeof r->reason, "z3-lp: %ld model(s) not closed by a certified bound (%s)",
                 q->incomplete, q->why);
    } else {
        const char *w = res == Z3_L_UNDEF ? Z3_solver_get_reason_unknown(q->ctx, q->z.s) : NULL;
        r->timed_out = o->run.deadline > 0 && lg_now() >= o->run.deadline - 1e-3;
        snprintf(r->reason, sizeof r->reason, "%s", r->timed_out ? "timeout" : w ? w : "z3-lp: no answer");
    }
}

/* The root pass: each term alone (no phase fixed, every unstable neuron
 * with its triangle rows), as GLPK's search starts from its roots. A term
 * whose LP is certified infeasible becomes the unit clause ¬q_t before Z3
 * starts, so the search never branches on phases under a term the
 * relaxation already refutes; a root point that passes is the answer.
 * Returns 1 when the run is over (candidate found, time up, GLPK dead). */
static int zl_roots(zl *q, const lg_problem *p, const lg_solve_opts *o)
{
    for (int t = 0; t < p->n_terms; t++) {
        if ((o->run.deadline > 0 && lg_now() >= o->run.deadline) || q->lp_dead) return 1;
        for (int i = 0; i < q->n_lit; i++) q->val[i] = -1;
        q->val[q->n_un + t] = 1;
        int n;
        const char *why;
        zl_verdict v = zl_theory(q, p, o, &n, &why);
        if (v == ZL_SAT) {
            q->found = 1;
            return 1;
        }
        if (v == ZL_CONFLICT) zl_block(q, n);
    }
    for (int i = 0; i < q->n_lit; i++) q->val[i] = -1;
    return 0;
}

/* Lemmas on demand: Z3 solves the abstraction, the theory checks each full
 * model and adds its explanation clause. */
static lg_status zl_run_lemmas(zl *q, const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    Z3_lbool res = Z3_L_UNDEF;
    for (int over = zl_roots(q, p, o); !over;) {
        if (o->run.deadline > 0 && lg_now() >= o->run.deadline) break;
        lg_z3_session_timeout(&q->z);
        res = lg_z3_session_check(&q->z);
        if (q->z.err != Z3_OK) return lg_fail(LG_ERR_SOLVER, "z3-lp: check failed: %s", q->z.errmsg);
        if (res != Z3_L_TRUE) break;
        lg_status st = zl_model(q);
        if (st) return st;
        int n;
        const char *why;
        zl_verdict v = zl_theory(q, p, o, &n, &why);
        if (v == ZL_SAT) {
            q->found = 1;
            break;
        }
        if (v == ZL_OPEN) {
            if (q->lp_dead || (o->run.deadline > 0 && lg_now() >= o->run.deadline)) break; /* the LP was cut short */
            if (!q->incomplete++) snprintf(q->why, sizeof q->why, "%s", why);
            n = zl_all(q);
        }
        zl_block(q, n);
    }
    if (res == Z3_L_TRUE && !q->found) res = Z3_L_UNDEF;
    zl_answer(q, o, res, r);
    return LG_OK;
}

/* Online: Z3's user propagator (4.8.12: a simple solver only). The theory
 * runs on every partial assignment Z3 fixes (unassigned neurons keep their
 * triangle rows, unassigned terms are off) and on the full one (final). */
static void zp_push(void *c)
{
    zl *q = c;
    if (q->n_lim == q->cap_lim) { /* scopes can outnumber literals (Z3 pushes for its own reasons) */
        int cap = q->cap_lim ? 2 * q->cap_lim : 64;
        int *l = realloc(q->lim, (size_t)cap * sizeof *l);
        if (!l) { /* out of memory: stop the search, the answer is unknown */
            q->oom = 1;
            Z3_interrupt(q->ctx);
            return;
        }
        q->lim = l;
        q->cap_lim = cap;
    }
    q->lim[q->n_lim++] = q->n_trail;
}

static void zp_pop(void *c, unsigned n)
{
    zl *q = c;
    int to = q->n_lim - (int)n;
    if (to < 0) to = 0;
    int keep = q->lim[to];
    while (q->n_trail > keep) q->val[q->trail[--q->n_trail]] = -1;
    q->n_lim = to;
}

static void *zp_fresh(void *c, Z3_context nc)
{
    (void)nc;
    return c;
}

/* Phase propagation (DESIGN.md §3 "Z3's theory"): after a partial check
 * that neither closed nor passed, with the LP point at t ≤ 0, the
 * unassigned neurons whose z sits farthest from 0 on the scale of its
 * bounds (z/u above, z/l below) are tried, at most prop_max of them: min z
 * (or min −z) over the same LP with t ∈ [−T, 0], from the current basis.
 * A certified bound lb > 0 (lp_cert.h) proves z > 0 (or z < 0) for every
 * point of the rows with a nonzero multiplier — the phase rows of the
 * explanation's literals, with t = 0 the exact encoding among them — so
 * the other phase is infeasible with them and Z3 gets the phase as a
 * consequence of those literals. Strict on both sides, so the clause holds
 * for every labelling of every counterexample, as a conflict clause does. */
static void zl_propagate(zl *q, Z3_solver_callback cb)
{
    if (q->prop_max <= 0 || q->lp_dead || !(q->t_last <= 0)) return;
    int nc = 0;
    for (int j = 0; j < q->n_un; j++) {
        if (q->val[j] >= 0) continue;
        double z = lg_lp_relax_value(&q->lp, q->un_z[j]);
        double s = z > 0 ? z / q->un_hi[j] : z < 0 ? z / q->un_lo[j] : 0.0;
        if (!(s > 0)) continue;
        q->score[j] = z > 0 ? s : -s; /* the sign carries the direction */
        q->cand[nc++] = j;
    }
    if (!nc) return;
    /* the prop_max largest |score| first (selection; ties: the lower index) */
    if (nc > q->prop_max) {
        for (int c = 0; c < q->prop_max; c++) {
            int best = c;
            for (int d = c + 1; d < nc; d++)
                if (fabs(q->score[q->cand[d]]) > fabs(q->score[q->cand[best]])) best = d;
            int tmp = q->cand[c];
            q->cand[c] = q->cand[best];
            q->cand[best] = tmp;
        }
        nc = q->prop_max;
    }
    lg_lp_relax_col(&q->lp, q->t_col, -q->T, 0.0);
    q->basis_slot = -1; /* GLPK's basis is a propagation LP's from here on */
    q->lp.dual = 0; /* a new objective over the same rows: the current point stays primal feasible */
    q->lp.it_lim = q->prop_it; /* a cheap bound: the duals of any basis certify one */
    for (int c = 0; c < nc && !q->lp_dead; c++) {
        if (q->o->run.deadline > 0 && lg_now() >= q->o->run.deadline) break;
        int j = q->cand[c], dir = q->score[j] > 0 ? 1 : -1;
        q->pobj[q->un_z[j]] = dir;
        double lb = -INFINITY;
        double t0 = lg_now();
        int ok = lg_lp_relax_min(&q->lp, q->pobj, 0.0, &q->o->run, &lb);
        q->t_lp += lg_now() - t0;
        if (!q->lp.P) q->lp_dead = 1;
        q->pobj[q->un_z[j]] = 0.0;
        q->lps++;
        q->prop_lps++;
        if (!ok || !(lb > 0)) continue;
        int n = zl_explain(q, q->p);
        if (q->fn) { /* the explanation plus the phase it excludes: infeasible together */
            q->ex_lit[n] = j;
            q->ex_val[n] = dir < 0;
            q->fn(q->fctx, n + 1, q->ex_lit, q->ex_val, 1);
        }
        for (int i = 0; i < n; i++) q->ids[i] = q->lit2id[q->ex_lit[i]];
        Z3_ast l = q->lits[j];
        Z3_solver_propagate_consequence(q->ctx, cb, (unsigned)n, q->ids, 0, NULL, NULL,
                                        dir > 0 ? l : Z3_mk_not(q->ctx, l));
        q->props++;
    }
    lg_lp_relax_col(&q->lp, q->t_col, -q->T, q->T);
    q->lp.dual = 1;
    q->lp.it_lim = 0;
}

/* Run the theory; on a conflict tell Z3 (consequence false from the
 * explanation's literals). final: a full model, which must not stay open. */
static void zp_check(zl *q, Z3_solver_callback cb, int final)
{
    if (q->found || (q->o->run.deadline > 0 && lg_now() >= q->o->run.deadline)) {
        Z3_interrupt(q->ctx);
        return;
    }
    int n;
    const char *why;
    zl_verdict v = zl_theory(q, q->p, q->o, &n, &why);
    if (v == ZL_SAT) {
        q->found = 1;
        Z3_interrupt(q->ctx);
        return;
    }
    if (v == ZL_OPEN && q->lp_dead) {
        Z3_interrupt(q->ctx);
        return;
    }
    if (v == ZL_OPEN && !final) {
        zl_propagate(q, cb);
        return;
    }
    if (v == ZL_OPEN) {
        if (q->o->run.deadline > 0 && lg_now() >= q->o->run.deadline) {
            Z3_interrupt(q->ctx);
            return;
        }
        if (!q->incomplete++) snprintf(q->why, sizeof q->why, "%s", why);
        n = zl_all(q);
    }
    for (int i = 0; i < n; i++) q->ids[i] = q->lit2id[q->ex_lit[i]];
    Z3_solver_propagate_consequence(q->ctx, cb, (unsigned)n, q->ids, 0, NULL, NULL, Z3_mk_false(q->ctx));
}

static void zp_fixed(void *c, Z3_solver_callback cb, unsigned id, Z3_ast value)
{
    zl *q = c;
    if (id >= (unsigned)q->n_ids || q->id2lit[id] < 0) return;
    int lit = q->id2lit[id];
    if (q->val[lit] >= 0) return;
    q->val[lit] = Z3_get_bool_value(q->ctx, value) == Z3_L_TRUE;
    q->trail[q->n_trail++] = lit;
    if (q->lazy) {
        /* a false term switches no row on: the LP is the one just checked */
        if (lit >= q->n_un && !q->val[lit]) return;
        /* no term true yet: without the property's rows the phases alone
         * rarely conflict, so the check waits for a term (or the final one) */
        int any_term = 0;
        for (int k = q->n_un; k < q->n_lit && !any_term; k++) any_term = q->val[k] == 1;
        if (!any_term) return;
    }
    zp_check(q, cb, 0);
}

static void zp_final(void *c, Z3_solver_callback cb)
{
    zl *q = c;
    zp_check(q, cb, 1);
}

static lg_status zl_run_online(zl *q, const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    q->p = p;
    q->o = o;
    if (zl_roots(q, p, o)) {
        zl_answer(q, o, Z3_L_UNDEF, r);
        return LG_OK;
    }
    Z3_solver_propagate_init(q->ctx, q->z.s, q, zp_push, zp_pop, zp_fresh);
    Z3_solver_propagate_fixed(q->ctx, q->z.s, zp_fixed);
    Z3_solver_propagate_final(q->ctx, q->z.s, zp_final);
    q->n_ids = 0;
    for (int i = 0; i < q->n_lit; i++) {
        unsigned id = Z3_solver_propagate_register(q->ctx, q->z.s, q->lits[i]);
        if (q->z.err != Z3_OK) return lg_fail(LG_ERR_SOLVER, "z3-lp: cannot register literal: %s", q->z.errmsg);
        if (id >= (unsigned)(2 * q->n_lit + 2)) return lg_fail(LG_ERR_SOLVER, "z3-lp: literal id %u out of range", id);
        q->lit2id[i] = id;
        if ((int)id + 1 > q->n_ids) q->n_ids = (int)id + 1;
    }
    for (int i = 0; i < q->n_ids; i++) q->id2lit[i] = -1;
    for (int i = 0; i < q->n_lit; i++) q->id2lit[q->lit2id[i]] = i;
    lg_z3_session_timeout(&q->z);
    Z3_lbool res = lg_z3_session_check(&q->z);
    if (q->z.err != Z3_OK && !q->found && !(o->run.deadline > 0 && lg_now() >= o->run.deadline))
        return lg_fail(LG_ERR_SOLVER, "z3-lp: check failed: %s", q->z.errmsg);
    q->z.err = Z3_OK;
    if (res == Z3_L_TRUE && !q->found) res = Z3_L_UNDEF;
    zl_answer(q, o, res, r);
    return LG_OK;
}

lg_status lg_z3lp_solve_traced(const lg_problem *p, const lg_solve_opts *o, lg_z3lp_mode mode, lg_result *r,
                               lg_z3lp_conflict_fn fn, void *ctx)
{
    lg_solve_opts defaults = lg_solve_opts_default();
    if (!o) o = &defaults;
    memset(r, 0, sizeof *r);
    double t0 = lg_now();
    lg_status st = lg_pwl_validate(p);
    if (st) return st;
    if (p->trelax)
        return lg_fail(LG_ERR_UNSUPPORTED, "z3-lp: Transformer nodes are encoded by z3 (exact theory) and glpk");
    zl q;
    memset(&q, 0, sizeof q);
    q.fn = fn;
    q.fctx = ctx;
    st = zl_setup(&q, p, o);
    if (!st) {
        if (o->run.verbose > 0)
            fprintf(stderr, "z3-lp: %d unstable relu, %d terms, LP %d x %d, %s\n", q.n_un, p->n_terms, q.lp.n_rows,
                    q.lp.n_cols, mode == LG_Z3LP_LEMMAS ? "lemmas on demand" : "user propagator");
        st = mode == LG_Z3LP_LEMMAS ? zl_run_lemmas(&q, p, o, r) : zl_run_online(&q, p, o, r);
        if (!st && q.oom) st = lg_fail(LG_ERR_NOMEM, "z3-lp: out of memory in the propagator");
    }
    r->lp.n_lp = q.lps;
    r->lp.cert_seconds = q.lp.cert ? q.lp.cert->seconds : 0.0;
    r->lp.lp_seconds = q.t_lp > r->lp.cert_seconds ? q.t_lp - r->lp.cert_seconds : 0.0;
    r->lp.n_open = q.incomplete;
    long lemmas = q.lemmas, props = q.props, prop_lps = q.prop_lps;
    zl_free(&q);
    if (st) lg_result_free(r);
    snprintf(r->theory, sizeof r->theory, "lp");
    r->nodes = lemmas;
    r->seconds = lg_now() - t0;
    if (o->run.verbose > 0)
        fprintf(stderr, "z3-lp: answer %d, %ld conflicts, %ld LPs, %.3f s (%.3f s in LPs), mean explanation %.1f literals, "
                "%ld phases propagated (%ld LPs)\n", (int)r->answer, lemmas, r->lp.n_lp, r->seconds, q.t_lp,
                lemmas ? (double)q.sum_expl / lemmas : 0.0, props, prop_lps);
    return st;
}

lg_status lg_z3lp_solve(const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    return lg_z3lp_solve_traced(p, o, LG_Z3LP_ONLINE, r, NULL, NULL);
}

lg_status lg_z3lp_lemmas_solve(const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    return lg_z3lp_solve_traced(p, o, LG_Z3LP_LEMMAS, r, NULL, NULL);
}
