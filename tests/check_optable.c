/* check_optable.c — the node-kind tables (core/op.h, verify/opstage.h):
 * every entry agrees with its flags, a node kind is refused as a further
 * term, and lg_net_lower_nodes lowers exactly the nets that have a kind
 * with a ReLU form, into the same function; the graph traversal
 * (core/traverse.h) agrees with the forward step on a layer of several terms. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/op.h"
#include "core/rng.h"
#include "encode/problem.h"
#include "onnx/onnx.h"
#include "testutil.h"
#include "verify/devtf.h"
#include "verify/opstage.h"

START_TEST(test_optable_entries_match_flags)
{
    for (int k = 0; k < LG_LAYER_KIND_COUNT; k++) {
        const lg_opdef *op = lg_op((lg_layer_kind)k);
        ck_assert_int_eq((int)op->kind, k);
        ck_assert_ptr_nonnull(op->name);
        ck_assert_ptr_nonnull(op->n_weights);
        for (int j = 0; j < k; j++) ck_assert_str_ne(op->name, lg_op((lg_layer_kind)j)->name);
        int node = (op->flags & LG_OPF_NODE) != 0, lin = (op->flags & LG_OPF_LINEAR) != 0;
        ck_assert_msg(node != lin, "%s: exactly one of LINEAR and NODE", op->name);
        ck_assert_msg(!(op->flags & LG_OPF_TNODE) || node, "%s: a Transformer node is a node", op->name);
        ck_assert_msg(!op->lower || (node && (op->flags & LG_OPF_PWL)), "%s: only a piecewise-linear node lowers",
                      op->name);
        ck_assert_msg(!(op->flags & LG_OPF_MAP) == !op->n_map, "%s: MAP and n_map agree", op->name);
        const lg_vopdef *v = lg_vop((lg_layer_kind)k);
        if (node) {
            ck_assert_msg(op->forward && op->enclose && op->describe, "%s: a node's core entry is complete", op->name);
            ck_assert_msg(!(op->flags & LG_OPF_RATIONAL) == !op->exact_z && !op->exact_z == !op->exact_q,
                          "%s: a rational node has both exact forms, any other neither", op->name);
            ck_assert_msg(v && (int)v->kind == k && v->interval && v->attack_backward && v->smear,
                          "%s: a node's verify entry is complete", op->name);
            int bs = !!v->bs_step; /* the back-substitution planes come as one group, α with them */
            ck_assert_msg(!v->bs_prepare == !bs && !v->bs_mag == !bs && !v->bs_addends == !bs && !v->bs_terms == !bs &&
                              !v->bs_value == !bs,
                          "%s: the planes' entries all or none", op->name);
            ck_assert_msg(!v->split == !v->n_split && !v->split == !v->split_score, "%s: the split's entries all or none",
                          op->name);
            ck_assert_msg(!v->n_diff || v->symbolic, "%s: difference bounds come from its symbolic step", op->name);
            ck_assert_msg(!(op->flags & LG_OPF_TNODE) == !v->relax_rows,
                          "%s: a Transformer node, and only one, gives the back-ends' relaxation rows", op->name);
            int tn = (op->flags & LG_OPF_TNODE) != 0; /* the Transformer nodes' step, all or none, only theirs */
            ck_assert_msg(!v->bs_tlen == !tn && !v->bs_tplanes == !tn && !v->bs_tstep == !tn && !v->bs_taddends == !tn &&
                              !v->reach == !tn && (tn || (!v->bs_gplanes && !v->bs_row_len && !v->bs_shift && !v->bs_row_icpt)),
                          "%s: the Transformer step's entries all or none", op->name);
            ck_assert_msg(v->bs_n_alpha >= 0 && v->bs_n_alpha <= 2 && (!v->bs_n_alpha || (op->flags & LG_OPF_TNODE)),
                          "%s: lg_backsub.talpha holds at most two α per Transformer node", op->name);
            const lg_devop *d = lg_devop_of((lg_layer_kind)k); /* the deviation's entry: every Transformer node's */
            ck_assert_msg(!d == !tn && (!d || ((int)d->kind == k && d->work && d->node && d->noise)),
                          "%s: a Transformer node, and only one, has a complete deviation entry", op->name);
            ck_assert_msg(!v->diff_forget == !v->diff_centred && (!v->diff_forget || v->n_diff) &&
                              (!d || !d->centred == !v->diff_centred),
                          "%s: the centred bounds the deviation reads are kept (and forgotten) by verify", op->name);
        } else {
            ck_assert_msg(!op->forward && !op->enclose && !v && !lg_devop_of((lg_layer_kind)k),
                          "%s: a linear term has no node entries", op->name);
        }
    }
    ck_assert_str_eq(lg_op((lg_layer_kind)LG_LAYER_KIND_COUNT)->name, "unknown");
    ck_assert_uint_eq(lg_op((lg_layer_kind)-1)->flags, 0);
    ck_assert_ptr_null(lg_vop((lg_layer_kind)LG_LAYER_KIND_COUNT));
    ck_assert_int_eq(lg_kind_is_tnode(LG_LAYER_SOFTMAX), 1);
    ck_assert_int_eq(lg_kind_is_tnode(LG_LAYER_MAX), 0);
}
END_TEST

/* input 1x2x4 -> max-pool (window 1x2, stride 1x2: 4 outputs) -> dense 4 -> 2. */
static lg_status optable_pool_net(lg_net *net, int pool_term)
{
    lg_linear pool = {.kind = LG_LAYER_MAX, .n_in = 8, .src = LG_NET_INPUT,
                      .conv = {.c_in = 1, .h_in = 2, .w_in = 4, .c_out = 1, .h_out = 2, .w_out = 2, .kh = 1, .kw = 2,
                               .sh = 1, .sw = 2}};
    lg_linear dense = {.kind = LG_LAYER_DENSE, .n_in = 8, .src = LG_NET_INPUT};
    lg_linear t0[2] = {pool_term ? dense : pool, pool};
    lg_linear t1 = {.kind = LG_LAYER_DENSE, .n_in = 4, .src = 0};
    lg_layer_spec sp[2] = {{4, LG_ACT_IDENTITY, pool_term ? 2 : 1, t0}, {2, LG_ACT_IDENTITY, 1, &t1}};
    return lg_net_build(net, 8, 2, sp);
}

START_TEST(test_optable_node_only_as_own_term)
{
    lg_net net;
    ck_assert_int_eq(optable_pool_net(&net, 1), LG_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(lg_errmsg(), "max-pool node must be its layer's own term"));
}
END_TEST

START_TEST(test_optable_lower_nodes)
{
    lg_net net, low, plain;
    ck_assert_int_eq(optable_pool_net(&net, 0), LG_OK);
    lg_rng r;
    lg_rng_init(&r, 7, 0);
    for (int i = 0; i < 8; i++) net.layers[1].lin.W[i] = lg_rng_uniform(&r) * 2 - 1;
    ck_assert_int_eq(lg_net_validate(&net), LG_OK);
    ck_assert_int_eq(lg_net_has_lowering(&net), 1);
    ck_assert_int_eq(lg_net_lower_nodes(&low, &net, 1), LG_OK);
    ck_assert_int_gt(low.n_layers, net.n_layers);
    ck_assert_int_eq(lg_net_has_lowering(&low), 0);
    ck_assert_int_eq(lg_net_first_without(&low, LG_OPF_LINEAR), -1);
    for (int s = 0; s < 20; s++) { /* the same function: every coefficient ±1 or 0 */
        double x[8], y0[2], y1[2];
        for (int i = 0; i < 8; i++) x[i] = lg_rng_uniform(&r) * 4 - 2;
        double *scr = malloc(2 * (size_t)(lg_net_max_width(&net) + lg_net_max_width(&low)) * sizeof *scr);
        lg_net_forward(&net, x, y0, scr);
        lg_net_forward(&low, x, y1, scr);
        free(scr);
        for (int o = 0; o < 2; o++) ck_assert_double_eq_tol(y0[o], y1[o], 1e-12);
    }
    ck_assert_int_eq(lg_net_lower_nodes(&plain, &low, 1), LG_OK); /* nothing left to lower: dst zeroed */
    ck_assert_int_eq(plain.n_layers, 0);
    lg_net_free(&low);
    lg_net_free(&net);
}
END_TEST

/* Every back-end row says through `supports` that it takes the exact ReLU form of max-pool
 * nodes and not the nodes themselves; the back-end decision refuses the nodes before any
 * call. */
START_TEST(test_optable_solver_supports)
{
    lg_net net, low;
    ck_assert_int_eq(optable_pool_net(&net, 0), LG_OK);
    ck_assert_int_eq(lg_net_lower_nodes(&low, &net, 1), LG_OK);
    int rows = 0;
    for (int i = 0; lg_solver_at(i); i++, rows++) {
        const lg_solver_ops *o = lg_solver_at(i);
        ck_assert_ptr_nonnull(o->supports);
        lg_problem p = {0};
        p.net = &net;
        ck_assert_int_eq(o->supports(&p), LG_ERR_UNSUPPORTED);
        ck_assert_msg(strstr(lg_errmsg(), "max-pool") != NULL, "%s: %s", o->name, lg_errmsg());
        p.net = &low;
        ck_assert_int_eq(o->supports(&p), LG_OK);
    }
    ck_assert_int_ge(rows, 2);
    lg_net_free(&low);
    lg_net_free(&net);
}
END_TEST

/* The term sum written once (core/op.h): lg_layer_row_visit's rows and lg_layer_pre_t's
 * transpose agree with lg_layer_pre on a layer of three terms, two of them reading the same
 * node (the second visit adds). */
typedef struct optable_vals {
    const double *x, *a0;
} optable_vals;
static const double *optable_val(const void *ctx, int node)
{
    const optable_vals *v = ctx;
    return node < 0 ? v->x : v->a0;
}
typedef struct optable_row {
    const optable_vals *v;
    double sum;
    int n;
} optable_row;
static void optable_row_add(void *ctx, const lg_linear *A, int i, double w)
{
    optable_row *r = ctx;
    r->sum += w * optable_val(r->v, A->src)[i];
    r->n++;
}
static double *optable_slot(void *ctx, int node) { return ((double **)ctx)[node + 1]; }

/* A net whose layer 1 sums three terms, two of them reading layer 0 (random weights from
 * r, seeded with seed; r goes on from there). */
static void optable_three_terms(lg_net *net, lg_rng *r, uint64_t seed)
{
    lg_linear l0 = {.kind = LG_LAYER_DENSE, .n_in = 4, .src = LG_NET_INPUT};
    lg_linear t1[3] = {{.kind = LG_LAYER_DENSE, .n_in = 3, .src = 0},
                       {.kind = LG_LAYER_DENSE, .n_in = 4, .src = LG_NET_INPUT},
                       {.kind = LG_LAYER_DENSE, .n_in = 3, .src = 0}};
    lg_layer_spec sp[2] = {{3, LG_ACT_RELU, 1, &l0}, {2, LG_ACT_IDENTITY, 3, t1}};
    ck_assert_int_eq(lg_net_build(net, 4, 2, sp), LG_OK);
    lg_rng_init(r, seed, 0);
    for (int t = 0; t < 3; t++) {
        lg_linear *A = lg_layer_lin_mut(&net->layers[1], t);
        for (int i = 0; i < A->n_out * A->n_in; i++) A->W[i] = lg_rng_uniform(r) * 2 - 1;
    }
}

START_TEST(test_optable_term_sum_once)
{
    lg_net net;
    lg_rng r;
    optable_three_terms(&net, &r, 11);
    const lg_layer *L = &net.layers[1];
    lg_layer_lin_mut(&net.layers[1], 2)->W[1] = 0.0; /* a zero weight is not visited */
    for (int o = 0; o < 2; o++) net.layers[1].b[o] = 0.25 * (o + 1);
    double x[4], a0[3], z[2], dz[2] = {0.5, -1.5}, gx[4], ga[3], tmp[4];
    for (int i = 0; i < 4; i++) x[i] = lg_rng_uniform(&r) * 2 - 1;
    for (int i = 0; i < 3; i++) a0[i] = lg_rng_uniform(&r);
    optable_vals v = {x, a0};
    lg_layer_pre(L, optable_val, &v, z, 1);
    int idx[4];
    double wv[4];
    for (int o = 0; o < 2; o++) {
        optable_row row = {&v, L->b[o], 0};
        lg_layer_row_visit(L, o, idx, wv, optable_row_add, &row);
        ck_assert_double_eq_tol(row.sum, z[o], 1e-12);
        ck_assert_int_eq(row.n, 3 + 4 + 3 - (o == 0));
    }
    unsigned char seen[3] = {0, 0, 0};
    double *slots[3] = {gx, ga, NULL};
    lg_layer_pre_t(L, dz, 0, optable_slot, slots, seen, tmp);
    ck_assert(seen[0] && seen[1] && !seen[2]);
    for (int i = 0; i < 4; i++) { /* the input: term 1 only */
        const double *W = lg_layer_lin(L, 1)->W;
        ck_assert_double_eq_tol(gx[i], dz[0] * W[i] + dz[1] * W[4 + i], 1e-12);
    }
    for (int i = 0; i < 3; i++) { /* layer 0: terms 0 and 2, the second added */
        const double *W0 = lg_layer_lin(L, 0)->W, *W2 = lg_layer_lin(L, 2)->W;
        double e = dz[0] * W0[i] + dz[1] * W0[3 + i] + dz[0] * W2[i] + dz[1] * W2[3 + i];
        ck_assert_double_eq_tol(ga[i], e, 1e-12);
    }
    lg_net_free(&net);
}
END_TEST

/* The graph traversal (core/traverse.h) on the layer of three terms above: the term sum
 * over m rows (A and |A|, written and accumulated) against lg_layer_pre row by row, the
 * backward visit's first/added order, the counts, the sources read and their last readers;
 * a product node's second source. */
typedef struct optable_rows {
    const double *X, *A0; /* [2][4], [2][3] */
} optable_rows;
static const double *optable_rows_val(const void *ctx, int node)
{
    const optable_rows *v = ctx;
    return node < 0 ? v->X : v->A0;
}
typedef struct optable_back {
    int src[4], first[4], n;
} optable_back;
static void optable_back_rec(void *ctx, const lg_linear *A, int first)
{
    optable_back *b = ctx;
    b->src[b->n] = A->src;
    b->first[b->n++] = first;
}

START_TEST(test_optable_traverse)
{
    lg_net net;
    lg_rng r;
    optable_three_terms(&net, &r, 12);
    const lg_layer *L = &net.layers[1];
    for (int o = 0; o < 2; o++) net.layers[1].b[o] = 0.5 * (o + 1);
    double X[8], A0[6], Z[4], Za[4], Zacc[4];
    for (int i = 0; i < 8; i++) X[i] = lg_rng_uniform(&r) * 2 - 1;
    for (int i = 0; i < 6; i++) A0[i] = lg_rng_uniform(&r) * 2 - 1;
    optable_rows v = {X, A0};
    lg_layer_sum(L, 2, optable_rows_val, &v, Z, 0, 0);
    lg_layer_sum(L, 2, optable_rows_val, &v, Za, 1, 0);
    for (int i = 0; i < 4; i++) Zacc[i] = 1.0;
    lg_layer_sum(L, 2, optable_rows_val, &v, Zacc, 0, 1);
    for (int m = 0; m < 2; m++) {
        optable_vals one = {X + 4 * m, A0 + 3 * m};
        double z[2];
        lg_layer_pre(L, optable_val, &one, z, 1);
        for (int o = 0; o < 2; o++) {
            double za = 0; /* Σ_t |A_t|·x by hand */
            for (int t = 0; t < 3; t++) {
                const lg_linear *A = lg_layer_lin(L, t);
                const double *xs = A->src < 0 ? X + 4 * m : A0 + 3 * m;
                for (int i = 0; i < A->n_in; i++) za += fabs(A->W[o * A->n_in + i]) * xs[i];
            }
            ck_assert_double_eq_tol(Z[2 * m + o], z[o] - L->b[o], 1e-12);
            ck_assert_double_eq_tol(Za[2 * m + o], za, 1e-12);
            ck_assert_double_eq_tol(Zacc[2 * m + o], 1.0 + z[o] - L->b[o], 1e-12);
        }
    }
    optable_back bk = {{0}, {0}, 0};
    unsigned char seen[3] = {0, 0, 0};
    lg_layer_terms_back(L, seen, optable_back_rec, &bk);
    ck_assert_int_eq(bk.n, 3);
    ck_assert(bk.src[0] == 0 && bk.first[0] == 1 && bk.src[1] == LG_NET_INPUT && bk.first[1] == 1);
    ck_assert(bk.src[2] == 0 && bk.first[2] == 0); /* the second term reading layer 0 adds */
    ck_assert_int_eq(lg_layer_sum_len(L), 3 + 4 + 3);
    ck_assert_uint_eq(lg_layer_sum_row_cap(L), 3 + 4 + 3);
    ck_assert_int_eq(lg_layer_n_src(L), 3);
    ck_assert(lg_layer_src(L, 0) == 0 && lg_layer_src(L, 1) == LG_NET_INPUT && lg_layer_src(L, 2) == 0);
    int last[3];
    lg_net_last_read(&net, 2, last);
    ck_assert(last[0] == 1 && last[1] == 1 && last[2] == -1);
    lg_net_last_read(&net, 1, last);
    ck_assert(last[0] == 0 && last[1] == -1);
    ck_assert(!lg_layer_single(L) && lg_layer_single(&net.layers[0]));
    lg_layer prod;
    memset(&prod, 0, sizeof prod);
    prod.lin.kind = LG_LAYER_BILINEAR;
    prod.lin.src = 0;
    prod.lin.op.src_b = LG_NET_INPUT;
    ck_assert_int_eq(lg_layer_n_src(&prod), 2);
    ck_assert(lg_layer_src(&prod, 0) == 0 && lg_layer_src(&prod, 1) == LG_NET_INPUT);
    ck_assert(lg_layer_is(&prod, LG_OPF_NODE | LG_OPF_TWO_SRC) && lg_layer_is_tnode(&prod));
    ck_assert_ptr_nonnull(lg_layer_vop(&prod));
    ck_assert_ptr_null(lg_layer_vop(L));
    lg_net_free(&net);
}
END_TEST

/* The visit of a layer's terms (core/traverse.h lg_layer_terms_visit): every term once, in
 * order, with its index and the term itself; a single-term layer and a node: term 0 alone. */
typedef struct optable_visit {
    int t[4], src[4], n;
    const lg_linear *A[4];
} optable_visit;
static void optable_visit_rec(void *ctx, int t, const lg_linear *A)
{
    optable_visit *v = ctx;
    ck_assert_int_lt(v->n, 4);
    v->t[v->n] = t;
    v->src[v->n] = A->src;
    v->A[v->n++] = A;
}

START_TEST(test_optable_terms_visit)
{
    lg_net net;
    lg_rng r;
    optable_three_terms(&net, &r, 13);
    const lg_layer *L = &net.layers[1];
    optable_visit v = {{0}, {0}, 0, {NULL}};
    lg_layer_terms_visit(L, optable_visit_rec, &v);
    ck_assert_int_eq(v.n, 3);
    for (int t = 0; t < 3; t++) {
        ck_assert_int_eq(v.t[t], t);
        ck_assert_ptr_eq(v.A[t], lg_layer_lin(L, t));
    }
    ck_assert(v.src[0] == 0 && v.src[1] == LG_NET_INPUT && v.src[2] == 0);
    ck_assert_int_eq(v.A[1]->n_in, 4); /* the terms in order: only term 1 reads the 4 inputs */
    ck_assert(v.A[0]->n_in == 3 && v.A[2]->n_in == 3);
    memset(&v, 0, sizeof v);
    lg_layer_terms_visit(&net.layers[0], optable_visit_rec, &v);
    ck_assert(v.n == 1 && v.t[0] == 0 && v.A[0] == &net.layers[0].lin && v.src[0] == LG_NET_INPUT);
    lg_layer prod;
    memset(&prod, 0, sizeof prod);
    prod.lin.kind = LG_LAYER_BILINEAR;
    prod.lin.src = 0;
    prod.lin.op.src_b = LG_NET_INPUT;
    memset(&v, 0, sizeof v);
    lg_layer_terms_visit(&prod, optable_visit_rec, &v); /* a node is its one term (its second source is not a term) */
    ck_assert(v.n == 1 && v.A[0] == &prod.lin && v.src[0] == 0);
    lg_net_free(&net);
}
END_TEST

/* Every kind has an ONNX export entry of the right form: a linear kind a term, a node kind
 * a node (onnx/onnx_write.c's table of kinds); none for a kind out of range. */
START_TEST(test_optable_onnx_export_entries)
{
    for (int k = 0; k < LG_LAYER_KIND_COUNT; k++) {
        int form = lg_onnx_write_form((lg_layer_kind)k);
        int want = lg_op_is((lg_layer_kind)k, LG_OPF_NODE) ? 2 : lg_op_is((lg_layer_kind)k, LG_OPF_LINEAR) ? 1 : 0;
        ck_assert_msg(want > 0 && form == want, "kind %s: form %d, expected %d",
                      lg_kind_name((lg_layer_kind)k), form, want);
    }
    ck_assert_int_eq(lg_onnx_write_form((lg_layer_kind)LG_LAYER_KIND_COUNT), 0);
}
END_TEST

Suite *suite_optable(void)
{
    Suite *s = suite_create("optable");
    TCase *tc = tcase_create("optable");
    lg_tcase_timeout(tc, 30);
    tcase_add_test(tc, test_optable_entries_match_flags);
    tcase_add_test(tc, test_optable_node_only_as_own_term);
    tcase_add_test(tc, test_optable_lower_nodes);
    tcase_add_test(tc, test_optable_solver_supports);
    tcase_add_test(tc, test_optable_term_sum_once);
    tcase_add_test(tc, test_optable_traverse);
    tcase_add_test(tc, test_optable_terms_visit);
    tcase_add_test(tc, test_optable_onnx_export_entries);
    suite_add_tcase(s, tc);
    return s;
}
