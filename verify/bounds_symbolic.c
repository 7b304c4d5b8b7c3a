/* bounds_symbolic.c — symbolic (CROWN/DeepPoly) pre-activation and
 * objective bounds (bounds.h) on top of the one back-substitution of
 * backsub.h: rows ±W_k[o], ±b_k[o] for neuron o of layer k, pushed back
 * from the node its one term reads (layer k − 1 in a chain) to the input
 * box, or, for a layer with several terms, ±e_o over z_k pushed back from
 * z_k itself; an upper bound is minus the lower bound of the negated row. A
 * batch interrupted by b->run's deadline (backsub.h) updates nothing and the
 * function returns LG_ERR_TIMEOUT.
 */
#include "verify/bounds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/linop.h"
#include "core/op.h"
#include "verify/backsub.h"
#include "verify/opstage.h"

/* Rows pushed back per batch: the back-substitution holds two [rows][max
 * width] matrices, so a wide layer (a conv's output) goes in chunks of at
 * most LG_SYM_CHUNK_BYTES of rows. */
#define LG_SYM_CHUNK_BYTES ((size_t)64 << 20)
/* A net with Transformer nodes: every step of its pass reads and writes the rows' buffers
 * element by element (the nodes' planes, the sums of the rounding terms) besides the
 * products, so its batches stay small enough to be cached between the steps (on the 4-block
 * ViT of benchmarks/VERIFY.md "Faster bounds on the 4-block ViT", 80 rows instead of 642). */
#define LG_SYM_TNODE_CHUNK_BYTES ((size_t)8 << 20)

static int lg_sym_chunk_of(const lg_net *net, size_t bytes)
{
    size_t w = (size_t)lg_net_max_width(net), nbuf = (size_t)lg_backsub_live(net) + (size_t)lg_backsub_shared(net);
    size_t m = bytes / (nbuf * w * sizeof(double));
    if (m < 1) m = 1;
    return m < w ? (int)m : (int)w;
}

static int lg_sym_chunk(const lg_net *net) { return lg_sym_chunk_of(net, LG_SYM_CHUNK_BYTES); }

/* Row r of s.A = g·W[o] (lg_linear_row of the layer's one term, over its
 * source), s.c[r] = g·b[o]; a layer with several terms: g·e_o over z
 * (lg_backsub_lower_pre). */
static void lg_sym_row(lg_backsub *s, const lg_layer *L, int r, int o, double g)
{
    if (!lg_layer_single(L) || lg_layer_is_tnode(L)) { /* a sum of terms or a node: rows over z */
        double *Ar = s->A + (size_t)r * (size_t)L->n_out;
        memset(Ar, 0, (size_t)L->n_out * sizeof *Ar);
        Ar[o] = g;
        s->c[r] = 0.0; /* the pass adds the bias at z */
        return;
    }
    double *Ar = s->A + (size_t)r * (size_t)L->lin.n_in;
    const double *Wr = lg_layer_row(L, o, Ar);
    for (int i = 0; i < L->lin.n_in; i++) Ar[i] = g * Wr[i];
    s->c[r] = g * L->b[o];
}

/* The pass for n rows of layer k set by lg_sym_row. */
static lg_status lg_sym_lower(lg_backsub *s, const lg_layer *L, int k, int n, double *out)
{
    if (!lg_layer_single(L) || lg_layer_is_tnode(L)) return lg_backsub_lower_pre(s, k, n, out);
    return lg_backsub_lower(s, L->lin.src, n, NULL, NULL, 0, NULL, out);
}

lg_status lg_bounds_symbolic(lg_bounds *b, const lg_net *net, const double *lo, const double *hi)
{
    lg_status st = lg_bounds_interval(b, net, lo, hi);
    if (st != LG_OK) return st;
    return lg_bounds_symbolic_from(b, net, 1); /* layer 0 is exact by interval */
}

/* Layers whose bounds a back-substitution reads (DESIGN.md §3 "Back-substitution through the
 * Transformer nodes"): relu layers (their phases: need[k] |= 1), smooth layers and the sources of
 * Transformer and max-pool nodes (their lines and planes, which every bound shapes: need[k] |= 2). */
static void lg_sym_need(const lg_net *net, unsigned char *need)
{
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->act == LG_ACT_RELU) need[k] |= 1;
        if (lg_act_info_of(L->act)->smooth) need[k] |= 2;
        if (lg_layer_is(L, LG_OPF_NODE)) { /* a node reads its sources' bounds */
            for (int i = 0; i < lg_layer_n_src(L); i++) /* core/traverse.h */
                if (lg_layer_src(L, i) >= 0) need[lg_layer_src(L, i)] |= 2;
        }
    }
}

unsigned char **lg_bounds_reach_alloc(const lg_net *net)
{
    size_t tot = 0, nl = (size_t)net->n_layers;
    for (size_t l = 0; l < nl; l++) tot += (size_t)net->layers[l].n_out;
    unsigned char **reach = malloc(nl * sizeof *reach + tot + 1);
    if (!reach) return NULL;
    unsigned char *buf = (unsigned char *)(reach + nl);
    for (size_t l = 0, o = 0; l < nl; o += (size_t)net->layers[l].n_out, l++) reach[l] = buf + o;
    if (!lg_bounds_reach(net, reach)) {
        free(reach);
        return NULL;
    }
    return reach;
}

/* bounds.h. The others (e.g. in a class-token ViT's last block every token but the class token,
 * relu neurons included) reach no output, so no back-substituted row of an output reads them:
 * interval bounds serve (sound; a relu among them may then count as unstable where a
 * back-substitution would have shown it stable). */
int lg_bounds_reach(const lg_net *net, unsigned char **rel)
{
    int *idx = NULL;
    double *w = NULL;
    if (lg_net_row_alloc(net, &idx, &w) != 0) return 0;
    int nl = net->n_layers;
    for (int k = 0; k < nl; k++) memset(rel[k], 0, (size_t)net->layers[k].n_out);
    memset(rel[nl - 1], 1, (size_t)net->layers[nl - 1].n_out);
    for (int k = nl - 1; k >= 0; k--) {
        const lg_layer *L = &net->layers[k];
        int all = lg_op_is(L->lin.kind, LG_OPF_NODE) && !lg_kind_is_tnode(L->lin.kind); /* max-pool: every input */
        const lg_vopdef *vop = lg_layer_vop(L);
        for (int o = 0; o < L->n_out; o++) {
            if (!rel[k][o]) continue;
            if (vop && vop->reach) /* a Transformer node: the entries its entry says (opstage.h) */
                vop->reach(L, o, rel);
            else
                for (int t = 0; t < lg_layer_n_lin(L); t++) {
                    const lg_linear *T = lg_layer_lin(L, t);
                    if (T->src < 0) continue;
                    if (all) {
                        memset(rel[T->src], 1, (size_t)net->layers[T->src].n_out);
                        continue;
                    }
                    int c = lg_linear_row_nz(T, o, idx, w);
                    for (int i = 0; i < c; i++)
                        if (w[i] != 0.0) rel[T->src][idx[i]] = 1; /* a zero weight adds 0 to every row */
                }
        }
    }
    free(idx);
    free(w);
    return 1;
}

/* A net with Transformer nodes: layer by layer from k0, the interval bounds recomputed from the
 * tightened earlier layers, then back-substitution bounds of each layer some relaxation reads,
 * each kept where tighter; rows only for the neurons whose bounds something reads (lg_bounds_reach)
 * and, on a relu layer that only its own relaxation reads, only for the neurons the bounds so far
 * leave unstable: a stable relu's relaxation is exact whatever its bounds, so tighter bounds there
 * change no later plane or line. */
static lg_status lg_sym_tnode_from(lg_bounds *b, const lg_net *net, int k0)
{
    lg_backsub s;
    int m = lg_sym_chunk_of(net, LG_SYM_TNODE_CHUNK_BYTES), nl = net->n_layers;
    size_t tot = 0;
    for (int k = 0; k < nl; k++) tot += (size_t)net->layers[k].n_out;
    unsigned char *need = calloc((size_t)nl + tot, 1), **rel = malloc((size_t)nl * sizeof *rel);
    int *rows = malloc((size_t)lg_net_max_width(net) * sizeof *rows);
    double *out = malloc((size_t)m * sizeof *out);
    lg_status st = need && rel && rows && out ? lg_backsub_init(&s, b, net, m) : lg_fail(LG_ERR_NOMEM, "bounds: out of memory");
    if (st != LG_OK) {
        free(need);
        free(rel);
        free(rows);
        free(out);
        return st;
    }
    rel[0] = need + nl;
    for (int k = 1; k < nl; k++) rel[k] = rel[k - 1] + net->layers[k - 1].n_out;
    if (!lg_bounds_reach(net, rel)) memset(rel[0], 1, tot);
    lg_sym_need(net, need);
    for (int k = k0 < 0 ? 0 : k0; k < net->n_layers && st == LG_OK; k++) {
        const lg_layer *L = &net->layers[k];
        if (k > 0 && (st = lg_bounds_interval_from(b, net, k)) != LG_OK) break;
        const lg_vopdef *vop = lg_layer_vop(L); /* a node's difference bounds (opstage.h), before its planes */
        if (vop && vop->symbolic && b->dlo[k]) {
            s.want = rel[k];
            st = vop->symbolic(b, net, k, &s, out, 1);
            s.want = NULL;
            if (st != LG_OK) break;
        }
        if (!need[k] || (k == 0 && !lg_layer_is_tnode(L))) continue; /* layer 0 of a sum: exact by interval */
        int nr = 0;
        for (int o = 0; o < L->n_out; o++)
            if (rel[k][o] && (need[k] != 1 || (!(b->lo[k][o] >= 0.0) && !(b->hi[k][o] <= 0.0)))) rows[nr++] = o;
        for (int o0 = 0; o0 < nr && st == LG_OK; o0 += m) {
            int n = nr - o0 < m ? nr - o0 : m;
            for (int sign = 0; sign < 2 && st == LG_OK; sign++) {
                double g = sign ? -1.0 : 1.0;
                for (int r = 0; r < n; r++) lg_sym_row(&s, L, r, rows[o0 + r], g);
                if ((st = lg_sym_lower(&s, L, k, n, out)) != LG_OK) break;
                for (int r = 0; r < n; r++) {
                    int o = rows[o0 + r];
                    if (sign == 0 && out[r] > b->lo[k][o]) b->lo[k][o] = out[r];
                    if (sign == 1 && -out[r] < b->hi[k][o]) b->hi[k][o] = -out[r];
                }
            }
        }
    }
    free(need);
    free(rel);
    free(rows);
    free(out);
    lg_backsub_free(&s);
    return st;
}

lg_status lg_bounds_symbolic_from(lg_bounds *b, const lg_net *net, int k0)
{
    if (lg_net_first_tnode(net) >= 0) return lg_sym_tnode_from(b, net, k0);
    lg_backsub s;
    int m = lg_sym_chunk(net);
    lg_status st = lg_backsub_init(&s, b, net, m);
    if (st != LG_OK) return st;
    double *out = malloc((size_t)m * sizeof *out); /* [m] */
    if (!out) {
        lg_backsub_free(&s);
        return lg_fail(LG_ERR_NOMEM, "bounds: out of memory");
    }
    for (int k = k0 < 1 ? 1 : k0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        const lg_vopdef *vop = lg_layer_vop(L);
        if (vop && vop->symbolic) { /* from its sources' bounds (no rows of its own; opstage.h) */
            if ((st = vop->symbolic(b, net, k, &s, out, 1)) != LG_OK) goto done;
            lg_backsub_changed(&s, k);
            continue;
        }
        for (int o0 = 0; o0 < L->n_out; o0 += m) {
            int n = L->n_out - o0 < m ? L->n_out - o0 : m;
            for (int sign = 0; sign < 2; sign++) {
                double g = sign ? -1.0 : 1.0;
                for (int r = 0; r < n; r++) lg_sym_row(&s, L, r, o0 + r, g);
                if ((st = lg_sym_lower(&s, L, k, n, out)) != LG_OK) goto done;
                for (int r = 0; r < n; r++) {
                    int o = o0 + r;
                    if (sign == 0 && out[r] > b->lo[k][o]) b->lo[k][o] = out[r];
                    if (sign == 1 && -out[r] < b->hi[k][o]) b->hi[k][o] = -out[r];
                }
            }
        }
    }
done:
    free(out);
    lg_backsub_free(&s);
    return st;
}

lg_status lg_bounds_symbolic_unstable_from(lg_bounds *b, const lg_net *net, int k0)
{
    if (lg_net_first_tnode(net) >= 0) return LG_OK; /* interval bounds stand (DESIGN.md §1 "Transformer nodes") */
    lg_backsub s;
    int m = lg_sym_chunk(net), w = lg_net_max_width(net);
    lg_status st = lg_backsub_init(&s, b, net, m);
    if (st != LG_OK) return st;
    int *idx = malloc((size_t)w * sizeof *idx); /* [w] unstable neurons of layer k */
    double *out = malloc((size_t)m * sizeof *out); /* [m] */
    if (!idx || !out) {
        free(idx);
        free(out);
        lg_backsub_free(&s);
        return lg_fail(LG_ERR_NOMEM, "bounds: out of memory");
    }
    for (int k = k0 < 1 ? 1 : k0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        const lg_vopdef *vop = lg_layer_vop(L);
        if (vop && vop->symbolic) {
            if ((st = vop->symbolic(b, net, k, &s, out, 0)) != LG_OK) goto done;
            lg_backsub_changed(&s, k);
            continue;
        }
        int smooth = lg_act_info_of(L->act)->smooth;
        if (L->act != LG_ACT_RELU && !smooth) continue;
        int n = 0;
        for (int o = 0; o < L->n_out; o++) /* smooth: every neuron not fixed to a point */
            if (smooth ? b->lo[k][o] < b->hi[k][o] : b->lo[k][o] < 0.0 && b->hi[k][o] > 0.0) idx[n++] = o;
        if (n == 0) continue;
        for (int r0 = 0; r0 < n; r0 += m) {
            int nr = n - r0 < m ? n - r0 : m;
            for (int sign = 0; sign < 2; sign++) {
                double g = sign ? -1.0 : 1.0;
                for (int r = 0; r < nr; r++) lg_sym_row(&s, L, r, idx[r0 + r], g);
                if ((st = lg_sym_lower(&s, L, k, nr, out)) != LG_OK) goto done;
                for (int r = 0; r < nr; r++) {
                    int o = idx[r0 + r];
                    if (sign == 0 && out[r] > b->lo[k][o]) b->lo[k][o] = out[r];
                    if (sign == 1 && -out[r] < b->hi[k][o]) b->hi[k][o] = -out[r];
                }
            }
        }
    }
done:
    free(idx);
    free(out);
    lg_backsub_free(&s);
    return st;
}

lg_status lg_bounds_objective_lower(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                                    double *out)
{
    int tn = lg_net_first_tnode(net) >= 0;
    lg_status st = tn ? LG_OK : lg_bounds_check_direct(net);
    if (st != LG_OK) return st;
    if (m < 1) return LG_OK;
    lg_backsub s;
    if ((st = lg_backsub_init(&s, b, net, m)) != LG_OK) return st;
    int no = lg_net_n_out(net);
    memcpy(s.A, C, (size_t)m * (size_t)no * sizeof *s.A);
    memcpy(s.c, d, (size_t)m * sizeof *s.c);
    st = lg_backsub_lower(&s, net->n_layers - 1, m, NULL, NULL, 0, NULL, out);
    lg_backsub_free(&s);
    if (tn && st == LG_OK) /* the interval objective where it is better (DESIGN.md §3 "Back-substitution
                             * through the Transformer nodes") */
        for (int r = 0; r < m; r++) {
            double v;
            if ((st = lg_bounds_tnode_objective(b, net, 1, C + (size_t)r * (size_t)no, d + r, &v)) != LG_OK) break;
            if (v > out[r]) out[r] = v;
        }
    return st;
}
