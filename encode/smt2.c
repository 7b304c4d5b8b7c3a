/* smt2.c — SMT-LIB 2 text export (QF_LRA), the same query as z3.c.
 *
 * Every constant is the exact rational of its double, written as
 * (/ num den) or (- (/ num den)) with integer literals (rational.h). The
 * encoding, with one declare-fun per variable:
 *
 *   (<= lo_i X_i) (<= X_i hi_i)                            VNN-LIB names X_i, Y_j
 *   (= (* div_i xn_i) (- X_i sub_i))                       normalisation, if any
 *   (= z_k_i (+ b (* W_ij a_j) ...))  (<= l z_k_i) (<= z_k_i u)
 *                 one row over every term's source node (pwl.h lg_pwl_row; a
 *                 position two terms read may appear twice, added exactly)
 *   unstable relu: (or (and (<= z 0) (= a 0)) (and (>= z 0) (= a z))),
 *                  (>= a 0), (>= a z)
 *   stable relu / identity: a is z itself, or the constant 0 (dropped)
 *   (= Y_j <last layer's output j>)
 *   (assert (or <term> ...)), term = (and (<= (+ d (* c_j Y_j) ...) 0) ...)
 *   (check-sat) (get-model)       a sat model gives X_i: `lgelu cex` re-checks it
 *
 * sat ⇔ a counterexample exists (given sound bounds). When the problem
 * carries the property's exact text (lg_problem.property_smt: VNN-LIB with
 * every number an exact rational) it is asserted, linked by x_i = X_i and
 * Y_j = output j, instead of the box and terms; otherwise, when a property
 * number was not a double (lg_problem.rounded), the file says that the box
 * was rounded outward and the constants down: unsat still proves the
 * property, sat may be spurious. The triangle
 * relaxation asserted by z3.c needs products of constants and is omitted
 * here (it is implied by the split). A Transformer node's outputs are
 * declared in their bounds with no defining row; the relaxation's rows
 * (problem.h lg_trelax, auxiliaries t_<a>) constrain them, and the header
 * says that the query is relaxed: unsat still proves the property, sat may
 * be spurious. */
#include <stdlib.h>

#include "encode/backends.h"
#include "encode/pwl.h"
#include "encode/rational.h"

typedef struct smtw {
    FILE *f;
    lg_status st;
} smtw;

static void smt_num(smtw *w, double v)
{
    lg_rat r;
    if (w->st || (w->st = lg_rat_from_double(&r, v))) return;
    lg_rat_write_smt(&r, w->f);
}

/* Affine form d + Σ c_j·v_j over variables named by names[j] ("" = zero). */
static void smt_affine(smtw *w, const double *c, char (*names)[32], int n, double d)
{
    int m = 0;
    for (int j = 0; j < n; j++) m += names[j][0] && c[j] != 0;
    if (m == 0) {
        smt_num(w, d);
        return;
    }
    fputs("(+ ", w->f);
    smt_num(w, d);
    for (int j = 0; j < n; j++) {
        if (!names[j][0] || c[j] == 0) continue;
        fputs(" (* ", w->f);
        smt_num(w, c[j]);
        fprintf(w->f, " %s)", names[j]);
    }
    fputc(')', w->f);
}

/* Row r of pwl.h: b + Σ w·v over the node variables named by names[pos] ("" = zero). */
static void smt_row(smtw *w, const lg_pwl_row *r, char (*names)[32], double b)
{
    int m = 0;
    for (int j = 0; j < r->n; j++) m += names[r->pos[j]][0] && r->w[j] != 0;
    if (m == 0) {
        smt_num(w, b);
        return;
    }
    fputs("(+ ", w->f);
    smt_num(w, b);
    for (int j = 0; j < r->n; j++) {
        if (!names[r->pos[j]][0] || r->w[j] == 0) continue;
        fputs(" (* ", w->f);
        smt_num(w, r->w[j]);
        fprintf(w->f, " %s)", names[r->pos[j]]);
    }
    fputc(')', w->f);
}

static void smt_declare(smtw *w, const char *name) { fprintf(w->f, "(declare-fun %s () Real)\n", name); }

/* The Transformer nodes' relaxation (problem.h lg_trelax): t_<a> in its
 * bounds, then every row over the node names ("" = the constant 0). */
static void smt_trelax(smtw *w, const lg_trelax *tr, char (*names)[32])
{
    FILE *f = w->f;
    fprintf(f, "; the Transformer nodes' relaxation over the input box (%d rows)\n", tr->n_rows);
    for (int a = 0; a < tr->n_aux; a++) {
        fprintf(f, "(declare-fun t_%d () Real)\n(assert (<= ", a);
        smt_num(w, tr->aux_lo[a]);
        fprintf(f, " t_%d))\n(assert (<= t_%d ", a, a);
        smt_num(w, tr->aux_hi[a]);
        fputs("))\n", f);
    }
    for (int i = 0; i < tr->n_rows; i++) {
        const lg_trow *r = &tr->rows[i];
        fprintf(f, "(assert (%s (+ 0.0", r->sense == 'E' ? "=" : r->sense == 'L' ? "<=" : ">=");
        for (int j = r->start; j < r->start + r->n; j++) {
            int v = tr->var[j];
            if ((size_t)v < tr->nodes_len && !names[v][0]) continue; /* the constant 0 */
            fputs(" (* ", f);
            smt_num(w, tr->coef[j]);
            if ((size_t)v < tr->nodes_len) fprintf(f, " %s)", names[v]);
            else fprintf(f, " t_%d)", v - (int)tr->nodes_len);
        }
        fputs(") ", f);
        smt_num(w, r->rhs);
        fputs("))\n", f);
    }
}

lg_status lg_smt2_write(const lg_problem *p, FILE *f)
{
    lg_status st = lg_pwl_validate(p);
    if (st) return st;
    const lg_net *net = p->net;
    int n_out = lg_net_n_out(net);
    lg_pwl_row R;
    if ((st = lg_pwl_row_init(&R, net))) return st;
    /* node[pos]: the name of every node value (normalised input, layer outputs; "" = 0) */
    char(*node)[32] = calloc(lg_net_nodes_len(net), sizeof *node);
    char(*prev)[32] = NULL;
    if (!node) {
        st = lg_fail(LG_ERR_NOMEM, "smt2: cannot allocate names");
        goto fail;
    }
    smtw w = {f, LG_OK};
    if (p->property_smt)
        fprintf(f, "; lgelu verification query: sat <=> a counterexample exists (the property's own numbers\n"
                   "; as exact rationals)\n");
    else if (p->rounded)
        fprintf(f, "; lgelu verification query: the property's box or constants were not doubles and were\n"
                   "; rounded toward the counterexample region (box outward, constants down):\n"
                   "; unsat => no counterexample exists; sat may be spurious\n");
    else
        fprintf(f, "; lgelu verification query: sat <=> a counterexample exists in the input box\n");
    if (p->trelax)
        fprintf(f, "; RELAXED: the network's Transformer nodes (%d product, %d softmax, %d layernorm) are\n"
                   "; replaced by linear planes that hold on the input box (exact rationals): unsat => no\n"
                   "; counterexample exists; a sat model may be spurious (re-check it on the network)\n",
                p->trelax->n_product, p->trelax->n_softmax, p->trelax->n_layernorm);
    fprintf(f, "; (exact rationals of the double weights; %d unstable relu)\n"
               "(set-option :produce-models true)\n(set-logic QF_LRA)\n",
            lg_pwl_count_unstable(p));
    if (p->property_smt) fputs(p->property_smt, f);
    for (int i = 0; i < net->n_in; i++) {
        char x[32];
        /* X_i itself, or x_i linked to the property's own X_i */
        snprintf(x, sizeof x, "%s_%d", p->property_smt ? "x" : "X", i);
        smt_declare(&w, x);
        fprintf(f, "(assert (<= ");
        smt_num(&w, p->lo[i]);
        fprintf(f, " %s))\n(assert (<= %s ", x, x);
        smt_num(&w, p->hi[i]);
        fputs("))\n", f);
        snprintf(node[i], sizeof node[i], "%s", x);
        if (p->property_smt) fprintf(f, "(assert (= %s X_%d))\n", x, i);
        if (net->in_sub || net->in_div) {
            snprintf(node[i], sizeof node[i], "xn_%d", i);
            smt_declare(&w, node[i]);
            fputs("(assert (= (* ", f);
            smt_num(&w, net->in_div ? net->in_div[i] : 1.0);
            fprintf(f, " %s) (- %s ", node[i], x);
            smt_num(&w, net->in_sub ? net->in_sub[i] : 0.0);
            fputs(")))\n", f);
        }
    }
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        char(*cur)[32] = node + lg_pwl_node_off(&R, k);
        for (int i = 0; i < L->n_out; i++) {
            char z[32], a[32];
            snprintf(z, sizeof z, "z_%d_%d", k, i);
            smt_declare(&w, z);
            if (!lg_layer_is_tnode(L)) { /* a Transformer node: the relaxation's rows, below */
                fprintf(f, "(assert (= %s ", z);
                lg_pwl_row_get(&R, k, i, NULL);
                smt_row(&w, &R, node, L->b[i]);
                fputs("))\n", f);
            }
            fprintf(f, "(assert (<= ");
            smt_num(&w, p->pre_lo[k][i]);
            fprintf(f, " %s))\n(assert (<= %s ", z, z);
            smt_num(&w, p->pre_hi[k][i]);
            fputs("))\n", f);
            switch (lg_pwl_phase(p, k, i)) {
            case LG_PHASE_LINEAR: snprintf(cur[i], sizeof cur[i], "%s", z); break;
            case LG_PHASE_ZERO: cur[i][0] = '\0'; break;
            case LG_PHASE_UNSTABLE:
                snprintf(a, sizeof a, "a_%d_%d", k, i);
                smt_declare(&w, a);
                fprintf(f,
                        "(assert (or (and (<= %s 0.0) (= %s 0.0)) (and (>= %s 0.0) (= %s %s))))\n"
                        "(assert (>= %s 0.0))\n(assert (>= %s %s))\n",
                        z, a, z, a, z, a, a, z);
                snprintf(cur[i], sizeof cur[i], "%s", a);
                break;
            }
        }
    }
    if (p->trelax) smt_trelax(&w, p->trelax, node);
    prev = node + lg_pwl_node_off(&R, net->n_layers - 1); /* the outputs */
    if (p->property_smt) { /* Y_j are the property's own declarations */
        for (int j = 0; j < n_out; j++) fprintf(f, "(assert (= Y_%d %s))\n", j, prev[j][0] ? prev[j] : "0.0");
        fputs("(check-sat)\n(get-model)\n(exit)\n", f);
        goto done;
    }
    /* the outputs under their VNN-LIB names */
    for (int j = 0; j < n_out; j++) {
        char y[32];
        snprintf(y, sizeof y, "Y_%d", j);
        smt_declare(&w, y);
        if (prev[j][0]) fprintf(f, "(assert (= %s %s))\n", y, prev[j]);
        else fprintf(f, "(assert (= %s 0.0))\n", y);
        snprintf(prev[j], sizeof prev[j], "%s", y);
    }
    fputs("(assert ", f);
    if (p->n_terms == 0) fputs("false", f);
    if (p->n_terms > 1) fputs("(or", f);
    for (int t = 0; t < p->n_terms; t++) {
        const lg_term *T = &p->terms[t];
        if (p->n_terms > 1) fputs("\n  ", f);
        if (T->n_cons == 0) fputs("true", f);
        if (T->n_cons > 1) fputs("(and", f);
        for (int c = 0; c < T->n_cons; c++) {
            fputs(T->n_cons > 1 ? " (<= " : "(<= ", f);
            smt_affine(&w, T->cons[c].coef, prev, n_out, T->cons[c].d);
            fputs(" 0.0)", f);
        }
        if (T->n_cons > 1) fputc(')', f);
    }
    if (p->n_terms > 1) fputc(')', f);
    fputs(")\n(check-sat)\n(get-model)\n(exit)\n", f);
done:
    st = w.st;
    if (!st && (fflush(f) != 0 || ferror(f))) st = lg_fail(LG_ERR_IO, "smt2: write failed");
fail:
    free(node);
    lg_pwl_row_free(&R);
    return st;
}
