/* op_max_lower.c — the exact ReLU form of max-pool nodes (lg_net_lower_max,
 * the max-pool entry's `lower` in core/op.h) and lg_net_lower_nodes, the one
 * helper the stages that do not take a node kind natively call
 * (DESIGN.md §1 "The max-pool node"). dst is the caller's to free. */
#include "core/op.h"

#include <stdlib.h>
#include <string.h>

/* The largest window of max-pool term A (positions inside the input). */
static int lg_max_kmax(const lg_linear *A, int *idx)
{
    int K = 1;
    for (int o = 0; o < A->n_out; o++) {
        int n = lg_max_window(&A->conv, o, idx);
        if (n > K) K = n;
    }
    return K;
}

/* The pairwise reduction of K values (per = 3: b as relu(b) − relu(−b);
 * per = 2: b ≥ 0 as relu(b)): nlev levels, level l of J[l + 1] neurons whose
 * rows over the J[l] values of the level before are lv[l] ([J[l+1]][J[l]],
 * ±1 or 0), and the final sum fin[J[nlev]]. Returns the level count, or −1
 * out of memory (everything freed). */
static int lg_max_levels(int K, int per, signed char ***lv, int **Jout, signed char **fin)
{
    int nlev = 0;
    for (int n = K; n > 1; n = (n + 1) / 2) nlev++;
    signed char **L = calloc((size_t)nlev + 1, sizeof *L);
    int *J = calloc((size_t)nlev + 2, sizeof *J);
    signed char *cur = calloc((size_t)K * (size_t)K, 1);
    if (!L || !J || !cur) goto oom;
    for (int i = 0; i < K; i++) cur[(size_t)i * (size_t)K + (size_t)i] = 1;
    J[0] = K;
    int nv = K;
    for (int l = 0; l < nlev; l++) {
        int pairs = nv / 2, odd = nv % 2, nv2 = pairs + odd, Jl = J[l];
        int J2 = pairs * per + odd * (per - 1);
        signed char *nc = calloc((size_t)J2 * (size_t)Jl, 1), *nxt = calloc((size_t)nv2 * (size_t)J2, 1);
        if (!nc || !nxt) {
            free(nc);
            free(nxt);
            goto oom;
        }
        int j = 0;
        for (int i = 0; i < nv2; i++) {
            const signed char *b = cur + (size_t)(2 * i + (i < pairs)) * (size_t)Jl;
            signed char *row;
            if (i < pairs) { /* relu(a − b) */
                const signed char *a = cur + (size_t)(2 * i) * (size_t)Jl;
                row = nc + (size_t)j * (size_t)Jl;
                for (int q = 0; q < Jl; q++) row[q] = (signed char)(a[q] - b[q]);
                nxt[(size_t)i * (size_t)J2 + (size_t)j++] = 1;
            }
            row = nc + (size_t)j * (size_t)Jl; /* relu(b) */
            for (int q = 0; q < Jl; q++) row[q] = b[q];
            nxt[(size_t)i * (size_t)J2 + (size_t)j++] = 1;
            if (per == 3) { /* − relu(−b) */
                row = nc + (size_t)j * (size_t)Jl;
                for (int q = 0; q < Jl; q++) row[q] = (signed char)-b[q];
                nxt[(size_t)i * (size_t)J2 + (size_t)j++] = -1;
            }
        }
        L[l] = nc;
        J[l + 1] = J2;
        free(cur);
        cur = nxt;
        nv = nv2;
    }
    *lv = L;
    *Jout = J;
    *fin = cur; /* row 0: the max over the last level */
    return nlev;
oom:
    if (L)
        for (int l = 0; l < nlev; l++) free(L[l]);
    free(L);
    free(J);
    free(cur);
    return -1;
}

/* Layers the node of layer k becomes (1 for every other layer). */
static int lg_max_span(const lg_net *net, int k, int *idx)
{
    const lg_layer *L = &net->layers[k];
    if (L->lin.kind != LG_LAYER_MAX) return 1;
    int K = lg_max_kmax(&L->lin, idx), n = 0;
    if (K == 1) return 1;
    for (int v = K; v > 1; v = (v + 1) / 2) n++;
    return n + 2;
}

lg_status lg_net_lower_max(lg_net *dst, const lg_net *src, int any_sign)
{
    memset(dst, 0, sizeof *dst);
    if (!lg_net_has_max(src)) return lg_net_copy(dst, src);
    if (lg_net_require_no_tnode(src, "the exact ReLU form of max-pool nodes") != LG_OK) return LG_ERR_UNSUPPORTED;
    int kcap = 1;
    for (int k = 0; k < src->n_layers; k++)
        if (src->layers[k].lin.kind == LG_LAYER_MAX && src->layers[k].lin.conv.kh * src->layers[k].lin.conv.kw > kcap)
            kcap = src->layers[k].lin.conv.kh * src->layers[k].lin.conv.kw;
    int *idx = malloc((size_t)kcap * sizeof *idx), *newi = malloc((size_t)src->n_layers * sizeof *newi);
    lg_layer_spec *sp = NULL;
    lg_linear *tm = NULL;
    lg_status st = LG_OK;
    int n_new = 0, n_lin = 0;
    if (!idx || !newi) goto oom;
    for (int k = 0; k < src->n_layers; k++) {
        n_new += lg_max_span(src, k, idx);
        newi[k] = n_new - 1;
        n_lin += lg_max_span(src, k, idx) + src->layers[k].n_terms;
    }
    if (n_new > LG_NET_MAX_LAYERS) {
        free(idx);
        free(newi);
        return lg_fail(LG_ERR_UNSUPPORTED, "the ReLU form of the max-pool nodes needs %d layers, more than %d", n_new,
                       LG_NET_MAX_LAYERS);
    }
    sp = calloc((size_t)n_new, sizeof *sp);
    tm = calloc((size_t)n_lin, sizeof *tm);
    if (!sp || !tm) goto oom;
    /* shapes */
    lg_linear *tp = tm;
    int q = 0;
    for (int k = 0; k < src->n_layers; k++) {
        const lg_layer *S = &src->layers[k];
        int span = lg_max_span(src, k, idx);
        int srcn = S->lin.src < 0 ? S->lin.src : newi[S->lin.src];
        if (S->lin.kind != LG_LAYER_MAX || span == 1) {
            sp[q] = (lg_layer_spec){S->n_out, S->act, lg_layer_n_lin(S), tp};
            for (int t = 0; t < lg_layer_n_lin(S); t++) {
                *tp = *lg_layer_lin(S, t);
                if (tp->src >= 0) tp->src = newi[tp->src];
                if (tp->kind == LG_LAYER_MAX) { /* windows of one position: an index map */
                    tp->kind = LG_LAYER_INDEX;
                    memset(&tp->conv, 0, sizeof tp->conv);
                }
                tp++;
            }
            q++;
            continue;
        }
        const lg_conv *c = &S->lin.conv;
        int K = lg_max_kmax(&S->lin, idx), C = c->c_in, ho = c->h_out, wo = c->w_out, nlev = span - 2;
        int per = !any_sign && S->lin.src >= 0 && src->layers[S->lin.src].act == LG_ACT_RELU ? 2 : 3;
        /* the gather: channel c·K + p, position (oy, ox) */
        *tp = (lg_linear){.kind = LG_LAYER_INDEX, .n_in = S->lin.n_in, .src = srcn};
        sp[q++] = (lg_layer_spec){C * K * ho * wo, LG_ACT_IDENTITY, 1, tp++};
        /* neurons per level, as lg_max_levels counts them */
        int nv = K, J = K;
        for (int l = 0; l < nlev; l++) {
            int pairs = nv / 2, odd = nv % 2, J2 = pairs * per + odd * (per - 1);
            *tp = (lg_linear){.kind = LG_LAYER_CONV2D, .n_in = C * J * ho * wo, .src = q - 1,
                              .conv = {C * J, ho, wo, C * J2, ho, wo, 1, 1, 1, 1, 0, 0}};
            sp[q++] = (lg_layer_spec){C * J2 * ho * wo, LG_ACT_RELU, 1, tp++};
            nv = pairs + odd;
            J = J2;
        }
        *tp = (lg_linear){.kind = LG_LAYER_CONV2D, .n_in = C * J * ho * wo, .src = q - 1,
                          .conv = {C * J, ho, wo, C, ho, wo, 1, 1, 1, 1, 0, 0}};
        sp[q++] = (lg_layer_spec){C * ho * wo, LG_ACT_IDENTITY, 1, tp++};
    }
    if ((st = lg_net_build(dst, src->n_in, n_new, sp)) != LG_OK) goto done;
    dst->t = src->t;
    /* parameters */
    for (int k = 0; k < src->n_layers; k++) {
        const lg_layer *S = &src->layers[k];
        int span = lg_max_span(src, k, idx), first = newi[k] - span + 1;
        if (S->lin.kind != LG_LAYER_MAX || span == 1) {
            lg_layer *D = &dst->layers[newi[k]];
            lg_layer_copy_act_bias(D, S);
            for (int t = 0; t < lg_layer_n_lin(S); t++) {
                const lg_linear *A = lg_layer_lin(S, t);
                lg_linear *B = lg_layer_lin_mut(D, t);
                if (A->kind == LG_LAYER_MAX)
                    for (int o = 0; o < A->n_out; o++) {
                        lg_max_window(&A->conv, o, idx);
                        B->map[o] = idx[0];
                    }
                else if (A->kind == LG_LAYER_INDEX)
                    memcpy(B->map, A->map, (size_t)A->n_out * sizeof *B->map);
                else
                    memcpy(B->W, A->W, lg_linear_n_weights(A) * sizeof *B->W);
            }
            continue;
        }
        const lg_conv *c = &S->lin.conv;
        int K = lg_max_kmax(&S->lin, idx), C = c->c_in, hw = c->h_out * c->w_out, nlev = span - 2;
        int per = !any_sign && S->lin.src >= 0 && src->layers[S->lin.src].act == LG_ACT_RELU ? 2 : 3;
        int *map = dst->layers[first].lin.map;
        for (int o = 0; o < S->n_out; o++) {
            int n = lg_max_window(c, o, idx), ch = o / hw, pos = o % hw;
            for (int p = 0; p < K; p++) map[(size_t)(ch * K + p) * (size_t)hw + (size_t)pos] = idx[p < n ? p : 0];
        }
        signed char **lv = NULL, *fin = NULL;
        int *Jl = NULL;
        if (lg_max_levels(K, per, &lv, &Jl, &fin) != nlev) goto oom_built;
        for (int l = 0; l <= nlev; l++) {
            int Ji = Jl[l], Jo = l < nlev ? Jl[l + 1] : 1;
            double *Kc = dst->layers[first + 1 + l].lin.W; /* [C·Jo][C·Ji][1][1], channel-diagonal blocks */
            for (int ch = 0; ch < C; ch++)
                for (int jo = 0; jo < Jo; jo++)
                    for (int ji = 0; ji < Ji; ji++) {
                        signed char w = l < nlev ? lv[l][(size_t)jo * (size_t)Ji + (size_t)ji] : fin[ji];
                        Kc[((size_t)ch * (size_t)Jo + (size_t)jo) * (size_t)C * (size_t)Ji + (size_t)ch * (size_t)Ji +
                           (size_t)ji] = (double)w;
                    }
        }
        for (int l = 0; l < nlev; l++) free(lv[l]);
        free(lv);
        free(Jl);
        free(fin);
    }
    if (src->in_sub && !(dst->in_sub = malloc((size_t)src->n_in * sizeof *dst->in_sub))) goto oom_built;
    if (src->in_sub) memcpy(dst->in_sub, src->in_sub, (size_t)src->n_in * sizeof *dst->in_sub);
    if (src->in_div && !(dst->in_div = malloc((size_t)src->n_in * sizeof *dst->in_div))) goto oom_built;
    if (src->in_div) memcpy(dst->in_div, src->in_div, (size_t)src->n_in * sizeof *dst->in_div);
    goto done;
oom_built:
    lg_net_free(dst);
oom:
    st = lg_fail(LG_ERR_NOMEM, "out of memory writing max-pool nodes as ReLU layers");
done:
    free(idx);
    free(newi);
    free(sp);
    free(tm);
    return st;
}

lg_status lg_net_lower_nodes(lg_net *dst, const lg_net *src, int any_sign)
{
    memset(dst, 0, sizeof *dst);
    const lg_opdef *op = NULL;
    for (int k = 0; k < src->n_layers && !op; k++)
        if (lg_layer_op(&src->layers[k])->lower) op = lg_layer_op(&src->layers[k]);
    if (!op) return LG_OK; /* nothing to lower: src as it is */
    lg_status st = op->lower(dst, src, any_sign); /* max-pool is the one kind with a ReLU form */
    if (st != LG_OK) lg_net_free(dst);
    return st;
}
