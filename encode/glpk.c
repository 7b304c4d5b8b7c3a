/* glpk.c — the GLPK back-end: a certified branch and bound over the big-M
 * binaries of milp.h, GLPK's dual simplex for every node's LP (DESIGN.md §3
 * "Certified LP answers").
 *
 * For term T = ∧_k (c_k·y + d_k ≤ 0) the LP of a node is
 *
 *   minimise t   subject to   the network rows of milp.h (δ ∈ [0, 1], or
 *                             fixed to 0/1 by the node's branchings),
 *                             c_k·y − t ≤ −d_k  (every k),
 *                             t ∈ [t_lo, t_hi]
 *
 * with t_lo = min(max_k L_k − 1, −1) and t_hi = max(max_k U_k, 0) + 1
 * ([L_k, U_k] the interval range of c_k·y + d_k over the output bounds;
 * 1e6 when not finite): every counterexample x of T has t = max(t_lo,
 * max_k c_k·y + d_k) ≤ 0 in the box, so the counterexamples in a node are
 * exactly its points with t ≤ 0.
 *
 * A node is closed only by a certificate (lp_cert.h) on the LP GLPK left:
 * its duals giving a safe bound t > 0, or a Farkas multiplier proving the
 * node's LP infeasible. GLPK's "optimal" or "infeasible" alone close
 * nothing. An open node's LP point is a witness candidate: its x (clipped
 * to the box) goes through the double forward pass of the real network;
 * if some term holds there, that x is the answer (SAT; verify/ re-checks it
 * exactly). Otherwise the node branches on the unfixed δ whose ReLU the LP
 * point violates most (a − max(z, 0), weighted by the triangle height
 * −l·u/(u − l), ties to the most fractional δ; when no LP point is
 * available, the first unfixed δ), the side the LP leans to
 * first. Depth first, so each LP is warm-started from its parent's basis
 * (glp_simplex keeps the basis in the problem object; only bounds change).
 * A node with every δ fixed that no certificate closes is left open: the
 * term's answer is then UNKNOWN, never UNSAT.
 *
 * Primal heuristic (a dive, still GLPK's work): at the roots and at nodes
 * numbered by powers of two, while GLPK's LP value is ≤ 0, every free δ is
 * fixed to the real network's activation pattern at the LP point and that
 * linear region's LP is solved; its optimum is a candidate and seeds the
 * next of three rounds.
 *
 * One GLPK problem holds the rows of every term; the term searched has its
 * rows bound and the others free, so the basis carries over between terms;
 * the first basis is GLPK's triangular crash basis (glp_adv_basis) on
 * networks deeper than three layers, else the slack basis.
 * First every term's root (closed → that term is UNSAT; candidate, dive),
 * then the tree of each term still open. Verdict per term: UNSAT when every
 * node was closed (certified), SAT on the first candidate, else UNKNOWN
 * with a reason. SAT on the first satisfiable term; UNSAT when every term
 * is; else UNKNOWN with the first reason. One deadline for the whole query
 * (each simplex gets the time left). The LP work is reported in
 * lg_result.lp.
 *
 * Inputs are validated before any GLPK call; a GLPK fatal error is caught
 * by lg_glpk_guard (glpk_guard.h) and reported as
 * LG_ERR_SOLVER instead of aborting.
 */
#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "encode/backends.h"
#include "encode/glpk_guard.h"
#include "encode/lp_cert.h"
#include "encode/milp.h"
#include "encode/pwl.h"

/* One branch-and-bound node: fix column col (0-based δ) to val, with the
 * fixings path[0 .. depth) of its parent. The root has col −1. */
typedef struct glpk_node {
    int depth, col;
    int val;
} glpk_node;

/* Per-query state, heap-allocated so it survives a longjmp intact. */
typedef struct glpq {
    lg_milp m;
    glp_prob *P;
    lg_lp_cert cert;
    int have_cert;
    int *ind;          /* [n_cols + 2] 1-based scratch */
    double *val;       /* [n_cols + 2] */
    double *x;         /* [n_in] candidate */
    double *scratch;
    glpk_node *stack;  /* [2·n_relu + 2] */
    int *path;         /* [n_relu] δ columns fixed on the current path */
    int *dive;         /* [n_relu] δ columns fixed by a dive */
    double *z;         /* [lg_net_nodes_len] pre-activations of the real network at a point, node by node */
    double *vals;      /* [lg_net_nodes_len] its node values */
    int zoff[LG_NET_MAX_LAYERS + 1]; /* lg_net_node_offset of each layer */
    int *term_row;     /* [n_terms] row before term t's first row (0-based) */
    int *term_done;    /* [n_terms] 1 once certified UNSAT */
    int depth;         /* δ fixings on the current path */
    long nodes;
    lg_lp_stats lp;
} glpq;

/* GLPK writes to stdout; route its chatter (verbose only) to stderr so that
 * machine-readable output on stdout stays clean. */
/* Load q->m into a fresh q->P with the rows of every term (free until
 * glpk_activate) and the t column. */
static void glpk_load(glpq *q, const lg_problem *p)
{
    const lg_milp *m = &q->m;
    glp_prob *P = q->P = glp_create_prob();
    glp_set_obj_dir(P, GLP_MIN);
    glp_add_cols(P, m->n_cols + 1);
    for (int j = 0; j < m->n_cols; j++) {
        const lg_milp_col *c = &m->cols[j];
        int type = isinf(c->lo) ? (isinf(c->hi) ? GLP_FR : GLP_UP) : isinf(c->hi) ? GLP_LO : c->lo == c->hi ? GLP_FX : GLP_DB;
        glp_set_col_bnds(P, j + 1, type, isinf(c->lo) ? 0.0 : c->lo, isinf(c->hi) ? 0.0 : c->hi);
    }
    int tc = m->n_cols + 1;
    glp_set_col_bnds(P, tc, GLP_DB, -1.0, 1.0);
    glp_set_obj_coef(P, tc, 1.0);
    int n_term_rows = 0;
    for (int t = 0; t < p->n_terms; t++) n_term_rows += p->terms[t].n_cons;
    glp_add_rows(P, m->n_rows + n_term_rows);
    for (int i = 0; i < m->n_rows; i++) {
        const lg_milp_row *r = &m->rows[i];
        int type = r->sense == 'E' ? GLP_FX : r->sense == 'L' ? GLP_UP : GLP_LO;
        glp_set_row_bnds(P, i + 1, type, r->rhs, r->rhs);
        for (int k = 0; k < r->n; k++) {
            q->ind[k + 1] = m->ind[r->start + k] + 1;
            q->val[k + 1] = m->val[r->start + k];
        }
        glp_set_mat_row(P, i + 1, r->n, q->ind, q->val);
    }
    int row = m->n_rows;
    for (int t = 0; t < p->n_terms; t++) {
        const lg_term *T = &p->terms[t];
        q->term_row[t] = row;
        for (int c = 0; c < T->n_cons; c++) {
            /* c·y − t ≤ −d (free while another term is searched) */
            int n = 0;
            for (int j = 0; j < m->n_out; j++) {
                if (m->y_col[j] < 0 || T->cons[c].coef[j] == 0) continue;
                n++;
                q->ind[n] = m->y_col[j] + 1;
                q->val[n] = T->cons[c].coef[j];
            }
            n++;
            q->ind[n] = tc;
            q->val[n] = -1.0;
            row++;
            glp_set_row_bnds(P, row, GLP_FR, 0.0, 0.0);
            glp_set_mat_row(P, row, n, q->ind, q->val);
        }
    }
    /* scale by powers of two only (column bounds a few ulps apart must stay apart: GLPK
     * asserts l < u for a double-bounded column), and not at all when coefficients are
     * extreme (GLPK's geometric mean then underflows to a zero scale factor) */
    double amin = INFINITY, amax = 0.0;
    for (int k = 0; k < m->n_nz; k++) {
        double v = fabs(m->val[k]);
        if (v > 0 && v < amin) amin = v;
        if (v > amax) amax = v;
    }
    if (amin > 1e-100 && amax < 1e100) glp_scale_prob(P, GLP_SF_GM | GLP_SF_EQ | GLP_SF_2N);
}

/* Make term t the one searched: its rows bind, the others are free; t's
 * bounds [t_lo, t_hi] as in the header. */
static void glpk_activate(glpq *q, const lg_problem *p, int t)
{
    const lg_milp *m = &q->m;
    for (int u = 0; u < p->n_terms; u++) {
        const lg_term *T = &p->terms[u];
        for (int c = 0; c < T->n_cons; c++) {
            int row = q->term_row[u] + c + 1;
            if (u == t) glp_set_row_bnds(q->P, row, GLP_UP, 0.0, -T->cons[c].d);
            else glp_set_row_bnds(q->P, row, GLP_FR, 0.0, 0.0);
        }
    }
    const lg_term *T = &p->terms[t];
    double max_lo = -INFINITY, max_hi = -INFINITY;
    for (int c = 0; c < T->n_cons; c++) {
        double lo, hi;
        lg_milp_con_range(m, &T->cons[c], &lo, &hi);
        if (lo > max_lo) max_lo = lo;
        if (hi > max_hi) max_hi = hi;
    }
    double t_lo = isfinite(max_lo) ? fmin(max_lo - 1.0, -1.0) : -1.0;
    double t_hi = isfinite(max_hi) && max_hi < 1e6 ? fmax(max_hi, 0.0) + 1.0 : 1e6;
    glp_set_col_bnds(q->P, m->n_cols + 1, GLP_DB, t_lo, t_hi);
}

/* One simplex on the node's LP, warm from the current basis. The dual
 * simplex may stop once its objective passes obj_ul (then the duals are
 * already a bound); 0 = GLPK ran, else its failure code. */
static int glpk_simplex(glpq *q, double deadline, double obj_ul)
{
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.meth = GLP_DUALP;
    parm.presolve = GLP_OFF;
    if (obj_ul < INFINITY) parm.obj_ul = obj_ul;
    if (deadline > 0) {
        double left = (deadline - lg_now()) * 1000.0;
        parm.tm_lim = left < 1 ? 1 : left > 2e9 ? 2000000000 : (int)left;
    }
    double t0 = lg_now();
    int rc = glp_simplex(q->P, &parm);
    if (rc != 0 && rc != GLP_EOBJUL && rc != GLP_ETMLIM && rc != GLP_EITLIM) { /* bad basis etc.: rebuild once */
        glp_adv_basis(q->P, 0);
        rc = glp_simplex(q->P, &parm);
    }
    q->lp.lp_seconds += lg_now() - t0;
    q->lp.n_lp++;
    return rc == GLP_EOBJUL || rc == GLP_ETMLIM || rc == GLP_EITLIM ? 0 : rc;
}

/* 1 when the node's LP is closed by a certificate: min t > 0 or infeasible. */
static int glpk_closed(glpq *q)
{
    double lb;
    lg_lp_cert_res r = lg_lp_cert_check(&q->cert, nextafter(0.0, 1.0), &lb);
    return r != LG_LP_CERT_NONE;
}

/* The node's LP point as a witness candidate: 1 (q->x set) when some term
 * holds in the double forward pass at the clipped x. */
static int glpk_candidate(glpq *q, const lg_problem *p)
{
    for (int i = 0; i < p->net->n_in; i++) {
        double v = glp_get_col_prim(q->P, q->m.x_col[i] + 1);
        q->x[i] = !(v >= p->lo[i]) ? p->lo[i] : v > p->hi[i] ? p->hi[i] : v;
    }
    for (int t = 0; t < p->n_terms; t++)
        if (lg_pwl_term_holds(p, t, q->x, 0.0, q->scratch)) return 1;
    return 0;
}

/* The δ column to branch on (0-based) and the side to try first; −1 when
 * every δ is fixed. Score: the LP point's violation a − max(z, 0) times the
 * triangle height −l·u/(u − l) (on the 12 hardest small.ini instances at
 * 5 s this decided 2, the plain violation 1, earliest layer first 0). */
static int glpk_branch(glpq *q, int have_point, int *first)
{
    const lg_milp *m = &q->m;
    int best = -1;
    double best_s = -1.0;
    for (int r = 0; r < m->n_relu; r++) {
        const lg_milp_relu *R = &m->relu[r];
        if (glp_get_col_type(q->P, R->d + 1) == GLP_FX) continue;
        double s = 0.0, dv = 0.5;
        if (have_point) {
            double z = glp_get_col_prim(q->P, R->z + 1), a = glp_get_col_prim(q->P, R->a + 1);
            dv = glp_get_col_prim(q->P, R->d + 1);
            s = a - (z > 0 ? z : 0.0);
            if (!(s >= 0)) s = 0;
            s += 1e-9 + 1e-12 * fmin(dv, 1.0 - dv); /* ties: the most fractional δ */
            /* weighted by the relaxation's size at the ReLU: −l·u/(u − l), the height of its triangle */
            double l = m->cols[R->z].lo, u = m->cols[R->z].hi;
            s *= -l * u / (u - l);
        }
        if (s > best_s) {
            best_s = s;
            best = r;
            *first = dv >= 0.5;
        }
        if (!have_point) break;
    }
    return best < 0 ? -1 : m->relu[best].d;
}

/* Pre-activations of the real network at x (double forward pass through the graph) into q->z. */
static void glpk_forward(glpq *q, const lg_net *net, const double *x)
{
    lg_net_forward_nodes(net, x, q->vals, q->z);
}

/* A primal heuristic, still GLPK's work: fix every free δ to the activation
 * pattern of the real network at the node's LP point and solve that linear
 * region's LP; its optimum is a witness candidate, and the next round starts
 * from it. The dive's fixings are undone afterwards. 1 = candidate found. */
static int glpk_dive(glpq *q, const lg_problem *p, double deadline, int rounds)
{
    const lg_milp *m = &q->m;
    int n_dive = 0, found = 0;
    for (int r = 0; r < m->n_relu; r++)
        if (glp_get_col_type(q->P, m->relu[r].d + 1) != GLP_FX) q->dive[n_dive++] = r;
    if (n_dive == 0) return 0;
    for (int round = 0; round < rounds && !found; round++) {
        if (deadline > 0 && lg_now() >= deadline) break;
        glpk_forward(q, p->net, q->x);
        int changed = round == 0;
        for (int k = 0; k < n_dive; k++) {
            const lg_milp_relu *R = &m->relu[q->dive[k]];
            double v = q->z[q->zoff[R->layer] + R->neuron] > 0 ? 1.0 : 0.0;
            if (round > 0 && glp_get_col_lb(q->P, R->d + 1) == v) continue;
            glp_set_col_bnds(q->P, R->d + 1, GLP_FX, v, v);
            changed = 1;
        }
        if (!changed) break; /* the same region again */
        if (glpk_simplex(q, deadline, INFINITY) != 0 || glp_get_prim_stat(q->P) != GLP_FEAS) break;
        found = glpk_candidate(q, p);
    }
    for (int k = 0; k < n_dive; k++) glp_set_col_bnds(q->P, m->relu[q->dive[k]].d + 1, GLP_DB, 0.0, 1.0);
    return found;
}

/* Restore the path to n's parent and apply n's fixing. */
static void glpk_goto(glpq *q, int *depth, const glpk_node *n)
{
    for (int i = n->depth; i < *depth; i++) glp_set_col_bnds(q->P, q->path[i] + 1, GLP_DB, 0.0, 1.0);
    *depth = n->depth;
    if (n->col >= 0) {
        glp_set_col_bnds(q->P, n->col + 1, GLP_FX, (double)n->val, (double)n->val);
        q->path[(*depth)++] = n->col;
    }
}

/* Solve term t; sets *ans and reason (if UNKNOWN). Returns 1 if out of time. */
/* Search term t: its root only (probe = 1: closed → UNSAT, candidate and
 * dive → SAT, else UNKNOWN) or the whole tree. Sets *ans and reason (if
 * UNKNOWN). Returns 1 if out of time. */
static int glpk_term(glpq *q, const lg_problem *p, int t, int probe, double deadline, lg_answer *ans, char *reason,
                     size_t rsz)
{
    glpk_activate(q, p, t);
    glpk_node root = {0, -1, 0};
    glpk_goto(q, &q->depth, &root); /* every δ free again */
    *ans = LG_ANSWER_UNKNOWN;
    int sp = 0, timed_out = 0;
    long open = 0;
    q->stack[sp++] = root;
    while (sp > 0) {
        if (deadline > 0 && lg_now() >= deadline) {
            timed_out = 1;
            break;
        }
        glpk_node n = q->stack[--sp];
        glpk_goto(q, &q->depth, &n);
        q->nodes++;
        /* stop early once the dual objective passes a small positive level: the duals then
         * usually certify t > 0; if they do not, finish the LP and try again */
        int rc = glpk_simplex(q, deadline, 1e-6);
        if (rc == 0 && glpk_closed(q)) continue;
        if (rc == 0 && glp_get_status(q->P) != GLP_OPT && glp_get_prim_stat(q->P) != GLP_NOFEAS) {
            rc = glpk_simplex(q, deadline, INFINITY);
            if (rc == 0 && glpk_closed(q)) continue;
        }
        int have_point = rc == 0 && glp_get_prim_stat(q->P) == GLP_FEAS;
        if (have_point && glpk_candidate(q, p)) {
            *ans = LG_ANSWER_SAT;
            return 0;
        }
        /* a dive at the first nodes and then at every power of two, while the LP still sees
         * points with t ≤ 0 (GLPK's value steers the heuristic only) */
        int first = 1;
        int col = glpk_branch(q, have_point, &first);
        if (have_point && glp_get_obj_val(q->P) <= 0 && (probe || !(q->nodes & (q->nodes - 1)))) {
            if (glpk_dive(q, p, deadline, 3)) {
                *ans = LG_ANSWER_SAT;
                return 0;
            }
        }
        if (probe) return 0;
        if (col < 0) { /* every δ fixed and nothing certified: this leaf stays open */
            if (!open)
                snprintf(reason, rsz, "glpk: term %d: a leaf LP (every ReLU fixed) %s", t,
                         !have_point ? "is not certified infeasible"
                         : p->trelax && glp_get_obj_val(q->P) < 0
                             ? "has a point of the Transformer nodes' relaxation that is no counterexample of the "
                               "network (a gap of the relaxation)"
                             : "has its optimum within the certificate's rounding of 0 and no witness");
            open++;
            continue;
        }
        q->stack[sp++] = (glpk_node){q->depth, col, !first};
        q->stack[sp++] = (glpk_node){q->depth, col, first};
    }
    if (timed_out) {
        snprintf(reason, rsz, "timeout");
        return 1;
    }
    if (!open) *ans = LG_ANSWER_UNSAT;
    return 0;
}

static void glpk_done(glpq *q)
{
    q->lp.cert_seconds += q->cert.seconds;
    q->lp.n_open += q->cert.n_open;
    if (q->have_cert) lg_lp_cert_free(&q->cert);
    q->have_cert = 0;
    if (q->P) glp_delete_prob(q->P);
    q->P = NULL;
}

static lg_status glpk_run(glpq *q, const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    lg_status st = lg_milp_add_net(&q->m, p);
    if (st) return st;
    int n_in = p->net->n_in;
    q->ind = malloc(((size_t)q->m.n_cols + 2) * sizeof *q->ind);
    q->val = malloc(((size_t)q->m.n_cols + 2) * sizeof *q->val);
    q->x = malloc((size_t)n_in * sizeof *q->x);
    q->scratch = malloc((2 * (size_t)lg_net_max_width(p->net) + (size_t)q->m.n_out) * sizeof *q->scratch);
    q->stack = malloc((2 * (size_t)q->m.n_relu + 2) * sizeof *q->stack);
    q->path = malloc(((size_t)q->m.n_relu + 1) * sizeof *q->path);
    q->dive = malloc(((size_t)q->m.n_relu + 1) * sizeof *q->dive);
    size_t zn = lg_net_nodes_len(p->net);
    for (int k = 0; k < p->net->n_layers; k++) q->zoff[k] = (int)lg_net_node_offset(p->net, k);
    q->z = malloc((zn + 1) * sizeof *q->z);
    q->vals = malloc((zn + 1) * sizeof *q->vals);
    q->term_row = malloc(((size_t)p->n_terms + 1) * sizeof *q->term_row);
    q->term_done = calloc((size_t)p->n_terms + 1, sizeof *q->term_done);
    if (!q->ind || !q->val || !q->x || !q->scratch || !q->stack || !q->path || !q->dive || !q->z || !q->vals || !q->term_row ||
        !q->term_done)
        return lg_fail(LG_ERR_NOMEM, "glpk: cannot allocate buffers");
    if (o->run.verbose > 0)
        fprintf(stderr, "glpk: %d columns, %d rows, %d unstable relu, %d terms\n", q->m.n_cols, q->m.n_rows,
                q->m.n_relu, p->n_terms);
    double deadline = o->run.deadline;
    glpk_load(q, p);
    if (p->net->n_layers > 3) {
        /* a triangular crash basis: on deep nets (ACAS Xu's 7 layers) a quarter of the cold
         * start's pivots and half the leaf time; on the 2-hidden-layer MNIST nets it made the
         * first LPs 2–3× slower than the slack basis, on 784-256-256-10 no difference */
        glp_adv_basis(q->P, 0);
    }
    if ((st = lg_lp_cert_init(&q->cert, q->P)) != LG_OK) return st;
    q->have_cert = 1;
    int n_unsat = 0;
    r->answer = LG_ANSWER_UNKNOWN;
    /* every term's root (and a dive) first: a counterexample of a later term is not kept
     * waiting behind an earlier term's tree; then the trees of the terms left */
    for (int pass = 0; pass < 2; pass++)
        for (int t = 0; t < p->n_terms; t++) {
            if (q->term_done[t]) continue;
            lg_answer a;
            char why[200] = "";
            int out = glpk_term(q, p, t, pass == 0, deadline, &a, why, sizeof why);
            if (a == LG_ANSWER_SAT) {
                r->answer = LG_ANSWER_SAT;
                r->x = q->x;
                q->x = NULL;
                return LG_OK;
            }
            if (a == LG_ANSWER_UNSAT) {
                q->term_done[t] = 1;
                n_unsat++;
            } else if (pass == 1 && !r->reason[0]) {
                snprintf(r->reason, sizeof r->reason, "%s", why[0] ? why : "glpk: undecided");
            }
            if (out) {
                r->timed_out = 1;
                snprintf(r->reason, sizeof r->reason, "timeout");
                return LG_OK;
            }
        }
    if (n_unsat == p->n_terms) {
        r->answer = LG_ANSWER_UNSAT;
        r->reason[0] = '\0';
    }
    return LG_OK;
}

/* glpk_run under lg_glpk_guard: a GLPK fatal error frees GLPK's
 * environment and becomes LG_ERR_SOLVER. */
typedef struct glpk_call {
    glpq *q;
    const lg_problem *p;
    const lg_solve_opts *o;
    lg_result *r;
    lg_status st;
} glpk_call;

static void glpk_call_run(void *arg)
{
    glpk_call *c = arg;
    c->st = glpk_run(c->q, c->p, c->o, c->r);
    glpk_done(c->q);
}

static lg_status glpk_guarded(glpq *q, const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    glpk_call c = {q, p, o, r, LG_OK};
    if (!lg_glpk_guard(glpk_call_run, &c)) return c.st;
    q->P = NULL; /* freed with the environment */
    if (q->have_cert) lg_lp_cert_free(&q->cert);
    q->have_cert = 0;
    return lg_fail(LG_ERR_SOLVER, "glpk: internal error: %s", lg_glpk_guard_message());
}

lg_status lg_glpk_solve(const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    lg_solve_opts defaults = lg_solve_opts_default();
    if (!o) o = &defaults;
    memset(r, 0, sizeof *r);
    double t0 = lg_now();
    glpq *q = calloc(1, sizeof *q);
    if (!q) return lg_fail(LG_ERR_NOMEM, "glpk: cannot allocate the query");
    lg_milp_init(&q->m);
    if (o->run.memory_mb > 0) glp_mem_limit(o->run.memory_mb >= 2e9 ? 2000000000 : (int)o->run.memory_mb);
    int echo = lg_glpk_guard_echo(o->run.verbose > 1);
    lg_status st = glpk_guarded(q, p, o, r);
    lg_glpk_guard_echo(echo);
    r->nodes = q->nodes;
    r->lp = q->lp;
    lg_milp_free(&q->m);
    free(q->ind);
    free(q->val);
    free(q->x);
    free(q->scratch);
    free(q->stack);
    free(q->path);
    free(q->dive);
    free(q->z);
    free(q->vals);
    free(q->term_row);
    free(q->term_done);
    free(q);
    if (st) lg_result_free(r);
    r->seconds = lg_now() - t0;
    return st;
}

void lg_encode_thread_done(void) { glp_free_env(); }
