/* alpha.c — objective bounds with explicit lower slopes and their
 * projected-gradient optimisation (alpha.h).
 *
 * The bound is the one back-substitution of backsub.h with the lower slope
 * of each unstable ReLU taken from α (relax.h: the ReLU relaxation lives
 * there and only there), so its floating-point soundness is the same. The
 * gradient with respect to α is the reverse pass of the linear steps with
 * the corner and the signs held fixed (they are piecewise constant in α).
 * A max-pool output's α weighs two planes of the side its coefficient's
 * sign uses (backsub.h); its gradient is the coefficient times their
 * difference at the forward values.
 */
#include "verify/alpha.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/act_relax.h"
#include "core/linop.h"
#include "core/traverse.h"
#include "verify/backsub.h"
#include "verify/opstage.h"
#include "verify/relax.h"

/* valv[node + 1]: node values at the corner (lg_layer_sum's lg_node_val_fn). */
static const double *lg_ag_val(const void *ctx, int node) { return ((double *const *)ctx)[node + 1]; }

int lg_alpha_size(const lg_net *net)
{
    int n = 0;
    for (int k = 0; k < net->n_layers; k++) n += net->layers[k].n_out;
    return n;
}

int lg_alpha_offset(const lg_net *net, int k)
{
    int n = 0;
    for (int l = 0; l < k; l++) n += net->layers[l].n_out;
    return n;
}

void lg_alpha_default(const lg_bounds *b, const lg_net *net, int m, double *alpha)
{
    int size = lg_alpha_size(net);
    for (int k = 0, off = 0; k < net->n_layers; off += net->layers[k].n_out, k++) {
        const lg_vopdef *vop = lg_vop(net->layers[k].lin.kind);
        for (int j = 0; j < net->layers[k].n_out; j++) /* smooth: NaN = the area-best lines (act_relax.h) */
            alpha[off + j] = vop && vop->bs_value ? 0.0 /* a node's planes of α = 0 (opstage.h) */
                             : lg_act_info_of(net->layers[k].act)->smooth ? NAN
                                                                          : lg_relax_alpha_default(b->lo[k][j], b->hi[k][j]);
    }
    for (int r = 1; r < m; r++) memcpy(alpha + (size_t)r * (size_t)size, alpha, (size_t)size * sizeof *alpha);
}

/* ∂out/∂alpha of every row (grad[r·gs + i]) from the coefficients lam
 * [m][ls] recorded by the back-substitution and the final ones ain
 * [m][n_in]: the reverse pass of its linear steps with the corner and the
 * signs held fixed, all rows at once (one dgemm per layer over the stacked
 * rows). gbeta (optional, same stride gs): ∂out/∂β where row r's group has
 * splits (sign·(z − t) at the corner, t the split point). alpha [m][as]
 * (NULL: default slopes). s: the back-substitution that computed lam, whose
 * cached lines of a smooth neuron without α are the ones its bound used.
 * F: lg_backsub_live(net) buffers of [m][max width] scratch, one per node
 * alive in the forward pass through the relaxed network (a chain: two).
 * The rounding terms are left out (they are ~1e-16 of the bound and only
 * steer the ascent). */
static void lg_alpha_grad(const lg_alpha_batch *bt, lg_backsub *s, const lg_net *net, int m, const double *alpha,
                          size_t as, const double *lam, size_t ls, const double *ain, double *grad, double *gbeta,
                          size_t gs, double *F)
{
    size_t size = (size_t)lg_alpha_size(net), ni0 = (size_t)net->n_in, w = (size_t)lg_net_max_width(net);
    int P = s->npool, NL = net->n_layers;
    /* valv[j + 1]: the value of node j at the corner through the relaxed lines; lastv[j + 1]: its last
     * reader; usedv[P]: the buffers of F in use. The scratch of s (its node buffers are free now). */
    double **valv = s->nb;
    int *lastv = s->nsum2;
    int *usedv = s->used;
    memset(usedv, 0, (size_t)P * sizeof *usedv);
    for (int j = 0; j <= NL; j++) {
        valv[j] = NULL;
        lastv[j] = j - 1; /* no reader: free once computed */
    }
    for (int k = 0; k < NL; k++)
        for (int t = 0; t < lg_layer_n_lin(&net->layers[k]); t++) lastv[lg_layer_lin(&net->layers[k], t)->src + 1] = k;
#define LG_AG_GET(dst)                                                  \
    do {                                                                \
        int q_ = 0;                                                     \
        while (q_ < P - 1 && usedv[q_]) q_++;                           \
        LG_ASSERT(!usedv[q_]);                                          \
        usedv[q_] = 1;                                                  \
        (dst) = F + (size_t)q_ * (size_t)m * w;                         \
    } while (0)
#define LG_AG_PUT(buf) (usedv[((buf) - F) / ((ptrdiff_t)m * (ptrdiff_t)w)] = 0)
    double *G;
    LG_AG_GET(G);
    valv[0] = G;
    for (int r = 0; r < m; r++) {
        const lg_bounds *b = bt->b[bt->grp ? bt->grp[r] : 0];
        memset(grad + (size_t)r * gs, 0, size * sizeof *grad);
        if (gbeta) memset(gbeta + (size_t)r * gs, 0, size * sizeof *gbeta);
        for (size_t i = 0; i < ni0; i++) G[(size_t)r * ni0 + i] = ain[(size_t)r * ni0 + i] >= 0.0 ? b->xlo[i] : b->xhi[i];
    }
    if (lastv[0] < 0) LG_AG_PUT(G);
    for (int l = 0, off = 0; l < net->n_layers; off += net->layers[l].n_out, l++) {
        const lg_layer *Ly = &net->layers[l];
        int n = Ly->n_out;
        /* H[m][n] = Σ_t G_src(t)[m][ni]·A_t^T + b_ℓ : gradient w.r.t. the relaxed coefficients */
        double *H;
        LG_AG_GET(H);
        for (int r = 0; r < m; r++) memcpy(H + (size_t)r * (size_t)n, Ly->b, (size_t)n * sizeof *H);
        const lg_vopdef *vop = lg_vop(Ly->lin.kind);
        if (vop && vop->bs_value) {
            /* the α-plane each row's coefficient picked (opstage.h): a·((1 − α)·P1 + α·P2), so
             * ∂/∂α = a·(P2 − P1) at the forward values */
            const double *X = valv[Ly->lin.src + 1];
            for (int r = 0; r < m; r++)
                for (int j = 0; j < n; j++) {
                    double a = lam[(size_t)r * ls + (size_t)(off + j)], dv;
                    H[(size_t)r * (size_t)n + (size_t)j] =
                        vop->bs_value(s, bt->grp ? bt->grp[r] : 0, l, j, a,
                                             alpha ? alpha[(size_t)r * as + (size_t)(off + j)] : 0.0,
                                             X + (size_t)r * (size_t)Ly->lin.n_in, &dv);
                    grad[(size_t)r * gs + (size_t)(off + j)] = a * dv;
                }
        } else {
            lg_layer_sum(Ly, m, lg_ag_val, valv, H, 0, 1); /* the term sum (core/traverse.h) */
        }
        for (int t = 0; t < lg_layer_n_lin(Ly); t++) { /* sources read for the last time */
            int q = lg_layer_lin(Ly, t)->src + 1;
            if (lastv[q] == l && valv[q]) {
                LG_AG_PUT(valv[q]);
                valv[q] = NULL;
            }
        }
        valv[l + 1] = H;
        for (int r = 0; r < m; r++) {
            int g = bt->grp ? bt->grp[r] : 0;
            const lg_bounds *b = bt->b[g];
            const signed char *sign = bt->sign ? bt->sign[g] : NULL;
            const double *tg = sign && bt->thr && bt->thr[g] ? bt->thr[g] + off : NULL;
            double *h = H + (size_t)r * (size_t)n;
            /* ∂/∂β_j: the row gained σ_j·β_j·(z_ℓ[j] − t_j) */
            if (sign && gbeta)
                for (int j = 0; j < n; j++)
                    if (sign[off + j])
                        gbeta[(size_t)r * gs + (size_t)(off + j)] = sign[off + j] * (h[j] - (tg ? tg[j] : 0.0));
            if (lg_act_info_of(Ly->act)->smooth) {
                /* a positive coefficient takes the lower line of the family at α_j (NaN: the
                 * area-best one), s(α)·z + c(α), so ∂/∂α = coef·(s'(α)·z + c'(α)); a negative one
                 * the upper line of the upper family at α_j the same way (backsub.h) */
                const double *lm = lam + (size_t)r * ls + off;
                const double *al = alpha ? alpha + (size_t)r * as + off : NULL;
                double *gr = grad + (size_t)r * gs + off;
                /* a layer no back-substitution reached has no lines (backsub.c computes them lazily) */
                const lg_relu_lines *ln = s && s->lines_ok[(size_t)g * (size_t)NL + (size_t)l]
                                              ? s->lines + (size_t)g * s->size + (size_t)off
                                              : NULL;
                for (int j = 0; j < n; j++) {
                    double sl, cl, dsl, dcl;
                    if (!ln || ln[j].phase != LG_RELU_SMOOTH) continue;
                    if (lm[j] != 0.0 && s &&
                        lg_backsub_fam_line(s, g, off + j, lm[j] < 0.0, al ? al[j] : NAN, &sl, &cl, &dsl, &dcl)) {
                        gr[j] = lm[j] * (dsl * h[j] + dcl);
                        h[j] = sl * h[j] + cl;
                    } else {
                        h[j] = lm[j] >= 0.0 ? ln[j].lo_s * h[j] + ln[j].lo_c : ln[j].up_s * h[j] + ln[j].up_c;
                    }
                }
                continue;
            }
            if (Ly->act != LG_ACT_RELU) continue;
            const double *lm = lam + (size_t)r * ls + off;
            const double *al = alpha ? alpha + (size_t)r * as + off : NULL;
            double *gr = grad + (size_t)r * gs + off;
            for (int j = 0; j < n; j++) {
                double a = lm[j], lo = b->lo[l][j], hi = b->hi[l][j];
                lg_relu_lines ln = {.phase = lg_relax_phase(lo, hi)}; /* the lines of relax.h, built lazily */
                if (ln.phase == LG_RELU_ACTIVE) continue;
                if (ln.phase == LG_RELU_INACTIVE) {
                    h[j] = 0.0;
                } else if (a >= 0.0) { /* coef = λ·α */
                    lg_relax_set_alpha(&ln, al ? al[j] : lg_relax_alpha_default(lo, hi));
                    gr[j] = h[j] * a;
                    h[j] *= ln.lo_s;
                } else { /* coef = λ·s, intercept −λ·s·l */
                    double sl = lg_relax_chord(lo, hi);
                    h[j] = h[j] * sl - sl * lo;
                }
            }
        }
        if (lastv[l + 1] < l + 1) { /* no reader (the output) */
            LG_AG_PUT(H);
            valv[l + 1] = NULL;
        }
    }
#undef LG_AG_GET
#undef LG_AG_PUT
}

/* zadd[size] = σ·max(β, 0) (NaN → 0): the terms lg_backsub_lower_beta adds. */
static void lg_alpha_zadd(size_t size, const signed char *sign, const double *beta, double *zadd)
{
    for (size_t j = 0; j < size; j++) zadd[j] = sign && sign[j] && beta[j] > 0.0 ? sign[j] * beta[j] : 0.0;
}

size_t lg_alpha_row_bytes(const lg_net *net)
{
    size_t size = (size_t)lg_alpha_size(net), w = (size_t)lg_net_max_width(net);
    /* backsub node buffers (+ acc) [w] each; the gradient's as many [w]; a, grad, best, m1, m2, lam,
     * za [2·size]; ain [n_in] (a chain: 4·w) */
    size_t P = (size_t)lg_backsub_live(net), acc = (size_t)lg_backsub_shared(net);
    return ((2 * P + acc) * w + 14 * size + (size_t)net->n_in + 8) * sizeof(double);
}

/* Rows per call within the documented cap (alpha.h): LG_ALPHA_BATCH_MB, or
 * an eighth of the run's memory cap (--memory) when that is smaller. */
static int lg_alpha_chunk(const lg_net *net, int m, const lg_runctx *run)
{
    size_t per = lg_alpha_row_bytes(net), cap = (size_t)LG_ALPHA_BATCH_MB << 20;
    if (run && run->memory_mb > 0 && run->memory_mb / 8.0 < (double)LG_ALPHA_BATCH_MB)
        cap = (size_t)(run->memory_mb / 8.0 * 1048576.0);
    size_t k = cap / per;
    if (k < 1) k = 1;
    return (size_t)m < k ? m : (int)k;
}

static const signed char *lg_alpha_sign(const lg_alpha_batch *bt, int r)
{
    return bt->sign ? bt->sign[bt->grp ? bt->grp[r] : 0] : NULL;
}

/* The backsub for rows [r0, r0 + m) of the batch; its deadline is run's,
 * else (run NULL) that of group 0's bounds (bounds.h). */
static lg_status lg_alpha_bs(lg_backsub *s, const lg_alpha_batch *bt, const lg_net *net, int r0, int m,
                             const lg_runctx *run)
{
    lg_status st = lg_backsub_init_batch(s, bt->ng, bt->b, net, m);
    if (st != LG_OK) return st;
    if (run) s->run = run;
    for (int r = 0; r < m; r++) s->grp[r] = bt->grp ? bt->grp[r0 + r] : 0;
    s->thr = bt->sign ? bt->thr : NULL;
    return LG_OK;
}

lg_status lg_alpha_bound(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                         const double *alpha, double *out, double *Ain, double *lam, double *grad)
{
    return lg_alpha_bound_beta(b, net, m, C, d, alpha, NULL, NULL, out, Ain, lam, grad, NULL);
}

lg_status lg_alpha_bound_beta(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                              const double *alpha, const signed char *sign, const double *beta, double *out,
                              double *Ain, double *lam, double *grad, double *gbeta)
{
    lg_alpha_batch bt = {1, &b, sign && beta ? &sign : NULL, NULL, NULL, 0};
    return lg_alpha_bound_batch(&bt, net, m, C, d, alpha, beta, out, Ain, lam, grad, gbeta);
}

lg_status lg_alpha_bound_batch(const lg_alpha_batch *bt, const lg_net *net, int m, const double *C, const double *d,
                               const double *alpha, const double *beta, double *out, double *Ain, double *lam,
                               double *grad, double *gbeta)
{
    /* the bound alone is the back-substitution's, which relaxes smooth
     * layers too; the α gradient is ReLU-only */
    if (lg_net_first_tnode(net) >= 0 && !grad && !gbeta) { /* back-substitution through the nodes, no α
                                                              * (DESIGN.md §3 "Back-substitution through the
                                                              * Transformer nodes") */
        int no = lg_net_n_out(net);
        for (int r = 0; r < m; r++) {
            lg_status s1 = lg_bounds_objective_lower(bt->b[bt->grp ? bt->grp[r] : 0], net, 1, C + (size_t)r * (size_t)no,
                                                     d + r, out + r);
            if (s1 != LG_OK) return s1;
        }
        if (Ain) memset(Ain, 0, (size_t)m * (size_t)net->n_in * sizeof *Ain); /* no slopes are reported */
        if (lam) memset(lam, 0, (size_t)m * (size_t)lg_alpha_size(net) * sizeof *lam);
        return LG_OK;
    }
    lg_status st = lg_bounds_check_direct(net);
    if (st != LG_OK) return st;
    if (m < 1) return LG_OK;
    lg_alpha_batch b1 = *bt;
    if (!beta) b1.sign = NULL;
    size_t size = (size_t)lg_alpha_size(net), w = (size_t)lg_net_max_width(net), no = (size_t)lg_net_n_out(net);
    size_t n_in = (size_t)net->n_in;
    int ch = lg_alpha_chunk(net, m, NULL);
    /* per chunk row: lam, zadd [size], ain [n_in]; the gradient's node buffers F [P][w] */
    size_t P = (size_t)lg_backsub_live(net);
    double *buf = malloc((size_t)ch * (2 * size + n_in + P * w) * sizeof *buf);
    if (!buf) return lg_fail(LG_ERR_NOMEM, "alpha: out of memory");
    double *lmb = buf, *zab = lmb + (size_t)ch * size, *aib = zab + (size_t)ch * size, *F = aib + (size_t)ch * n_in;
    for (int r0 = 0; r0 < m && st == LG_OK; r0 += ch) {
        int k = m - r0 < ch ? m - r0 : ch;
        lg_backsub s;
        if ((st = lg_alpha_bs(&s, &b1, net, r0, k, NULL)) != LG_OK) break;
        lg_alpha_batch sub = {b1.ng, b1.b, b1.sign, b1.grp ? b1.grp + r0 : NULL, b1.thr, b1.beta_only};
        double *lm = lam ? lam + (size_t)r0 * size : lmb, *ai = Ain ? Ain + (size_t)r0 * n_in : aib;
        const double *al = alpha ? alpha + (size_t)r0 * size : NULL;
        for (int r = 0; r < k; r++) {
            const signed char *sg = lg_alpha_sign(&sub, r);
            if (b1.sign) lg_alpha_zadd(size, sg, beta + (size_t)(r0 + r) * size, zab + (size_t)r * size);
        }
        memcpy(s.A, C + (size_t)r0 * no, (size_t)k * no * sizeof *s.A);
        memcpy(s.c, d + r0, (size_t)k * sizeof *s.c);
        if ((st = lg_backsub_lower_beta(&s, net->n_layers - 1, k, al, b1.sign ? zab : NULL, lm, size, ai,
                                        out + r0)) != LG_OK) {
            for (int r = r0 + k; r < m; r++) out[r] = -INFINITY; /* the rows not reached: no bound */
            lg_backsub_free(&s);
            break;
        }
        if (grad || gbeta) {
            double *gr = grad ? grad + (size_t)r0 * size : zab; /* zab is no longer needed */
            double *gb = gbeta ? gbeta + (size_t)r0 * size : NULL;
            lg_alpha_grad(&sub, &s, net, k, al, size, lm, size, ai, gr, b1.sign ? gb : NULL, size, F);
            if (gb && !b1.sign) memset(gb, 0, (size_t)k * size * sizeof *gb);
        }
        lg_backsub_free(&s);
    }
    free(buf);
    return st;
}

lg_status lg_alpha_optimize(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d, int steps,
                            double lr, const lg_runctx *run, double *alpha, double *out, double *Ain)
{
    return lg_alpha_optimize_beta(b, net, m, C, d, NULL, steps, lr, run, alpha, NULL, out, Ain);
}

lg_status lg_alpha_optimize_beta(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                                 const signed char *sign, int steps, double lr, const lg_runctx *run, double *alpha,
                                 double *beta, double *out, double *Ain)
{
    lg_alpha_batch bt = {1, &b, sign && beta ? &sign : NULL, NULL, NULL, 0};
    return lg_alpha_optimize_batch(&bt, net, m, C, d, steps, lr, run, alpha, beta, out, Ain);
}

/* One chunk of k rows of lg_alpha_optimize_batch, in lockstep: every step
 * is one back-substitution of all k rows (dgemm) and one batched gradient. */
static lg_status lg_alpha_opt_chunk(const lg_alpha_batch *bt, const lg_net *net, int k, const double *C,
                                    const double *d, int steps, double lr, const lg_runctx *run, double *alpha,
                                    double *beta, double *out, double *Ain, double *buf)
{
    size_t size = (size_t)lg_alpha_size(net), w = (size_t)lg_net_max_width(net), no = (size_t)lg_net_n_out(net);
    size_t n_in = (size_t)net->n_in, np = bt->sign ? 2 * size : size; /* parameters of a row: α, then β */
    size_t K = (size_t)k;
    /* a, grad, best, m1, m2, lam, za [k][np]; ain [k][n_in]; F [P][k][w] (the gradient's node buffers);
     * bestv [k] */
    size_t P = (size_t)lg_backsub_live(net);
    double *a = buf, *grad = a + K * np, *best = grad + K * np, *m1 = best + K * np, *m2 = m1 + K * np;
    double *lam = m2 + K * np, *za = lam + K * np, *ain = za + K * np, *F = ain + K * n_in;
    double *bestv = F + P * K * w; /* [k] */
    const double b1 = 0.9, b2 = 0.999;
    lg_backsub s;
    lg_status st = lg_alpha_bs(&s, bt, net, 0, k, run);
    if (st != LG_OK) return st;
    for (size_t r = 0; r < K; r++) {
        double *ar = a + r * np;
        memcpy(ar, alpha + r * size, size * sizeof *a);
        if (bt->sign) {
            const signed char *sg = lg_alpha_sign(bt, (int)r);
            const double *be = beta + r * size;
            for (size_t j = 0; j < size; j++) ar[size + j] = sg && sg[j] && be[j] > 0.0 ? be[j] : 0.0;
        }
        bestv[r] = -INFINITY;
    }
    memset(m1, 0, 2 * K * np * sizeof *m1);
    double p1 = 1, p2 = 1;
    for (int it = 0; it <= steps; it++) {
        memcpy(s.A, C, K * no * sizeof *s.A);
        memcpy(s.c, d, K * sizeof *s.c);
        if (bt->sign)
            for (size_t r = 0; r < K; r++) lg_alpha_zadd(size, lg_alpha_sign(bt, (int)r), a + r * np + size, za + r * np);
        double *v = F; /* [k]: F is free until the gradient */
        if ((st = lg_backsub_lower_beta(&s, net->n_layers - 1, k, a, bt->sign ? za : NULL, lam, np, ain, v)) !=
            LG_OK) {
            /* the deadline: a later step keeps the best finished bounds (each is complete for its
             * α); without a finished one the chunk has no bound and says so */
            if (it > 0) st = LG_OK;
            else memcpy(best, a, K * np * sizeof *a); /* α, β as given; out −∞ */
            break;
        }
        for (size_t r = 0; r < K; r++) {
            if (v[r] > bestv[r] || it == 0) {
                bestv[r] = v[r];
                memcpy(best + r * np, a + r * np, np * sizeof *a);
                if (Ain) memcpy(Ain + r * n_in, ain + r * n_in, n_in * sizeof *ain);
            }
        }
        if (it == steps || (run && lg_runctx_expired(run))) break;
        lg_alpha_grad(bt, &s, net, k, a, np, lam, np, ain, grad, bt->sign ? grad + size : NULL, np, F);
        p1 *= b1;
        p2 *= b2;
        double c1 = lr / (1 - p1), c2 = 1 / (1 - p2);
        for (size_t r = 0; r < K; r++)
            for (size_t j = 0; j < np; j++) {
                size_t q = r * np + j;
                if ((grad[q] == 0.0 && m1[q] == 0.0) || (j < size && bt->beta_only)) continue;
                m1[q] = b1 * m1[q] + (1 - b1) * grad[q];
                m2[q] = b2 * m2[q] + (1 - b2) * grad[q] * grad[q];
                double step = c1 * m1[q] / (sqrt(m2[q] * c2) + 1e-12);
                /* ascent: maximise the bound; α ∈ [0, 1], β ≥ 0 (a smooth α starts at NaN: the
                 * area-best lines, at lg_backsub_alpha0 in the family its coefficient's sign uses) */
                double x = (a[q] == a[q] ? a[q] : lg_backsub_alpha0(&s, s.grp[r], (int)j, lam[q] < 0.0)) + step;
                a[q] = x < 0 ? 0 : (j < size && x > 1) ? 1 : x;
            }
    }
    for (size_t r = 0; r < K; r++) {
        memcpy(alpha + r * size, best + r * np, size * sizeof *alpha);
        if (bt->sign) memcpy(beta + r * size, best + r * np + size, size * sizeof *beta);
        out[r] = bestv[r];
    }
    lg_backsub_free(&s);
    return st;
}

lg_status lg_alpha_optimize_batch(const lg_alpha_batch *bt, const lg_net *net, int m, const double *C, const double *d,
                                  int steps, double lr, const lg_runctx *run, double *alpha, double *beta, double *out,
                                  double *Ain)
{
    lg_status st = lg_bounds_check_direct(net);
    if (st != LG_OK) return st;
    if (m < 1) return LG_OK;
    lg_alpha_batch b1 = *bt;
    if (!beta) b1.sign = NULL;
    size_t size = (size_t)lg_alpha_size(net), w = (size_t)lg_net_max_width(net), no = (size_t)lg_net_n_out(net);
    size_t n_in = (size_t)net->n_in, np = b1.sign ? 2 * size : size;
    int ch = lg_alpha_chunk(net, m, run);
    size_t P = (size_t)lg_backsub_live(net);
    double *buf = malloc((size_t)ch * (7 * np + n_in + P * w + 1) * sizeof *buf);
    if (!buf) return lg_fail(LG_ERR_NOMEM, "alpha: out of memory");
    for (int r0 = 0; r0 < m && st == LG_OK; r0 += ch) {
        int k = m - r0 < ch ? m - r0 : ch;
        lg_alpha_batch sub = {b1.ng, b1.b, b1.sign, b1.grp ? b1.grp + r0 : NULL, b1.thr, b1.beta_only};
        if ((st = lg_runctx_check(run ? run : b1.b[0]->run, "alpha")) != LG_OK) { /* rows not reached: no bound */
            for (int r = r0; r < m; r++) out[r] = -INFINITY;
            break;
        }
        st = lg_alpha_opt_chunk(&sub, net, k, C + (size_t)r0 * no, d + r0, steps, lr, run,
                                alpha + (size_t)r0 * size, b1.sign ? beta + (size_t)r0 * size : NULL, out + r0,
                                Ain ? Ain + (size_t)r0 * n_in : NULL, buf);
    }
    free(buf);
    return st;
}

lg_status lg_alpha_tighten(lg_bounds *b, const lg_net *net, int k, int steps, double lr, const lg_runctx *run,
                           int *n_tight)
{
    *n_tight = 0;
    lg_status st = lg_bounds_check_direct(net);
    if (st != LG_OK) return st;
    int smooth = k >= 1 && k < net->n_layers && lg_act_info_of(net->layers[k].act)->smooth;
    if (k < 1 || k >= net->n_layers || (net->layers[k].act != LG_ACT_RELU && !smooth)) return LG_OK;
    int n = net->layers[k].n_out, u = 0;
    /* relu: the unstable neurons; smooth: every neuron (a narrower interval tightens its lines) */
#define LG_AT_OPEN(j) (smooth ? b->lo[k][j] < b->hi[k][j] : b->lo[k][j] < 0.0 && b->hi[k][j] > 0.0)
    for (int j = 0; j < n; j++) u += LG_AT_OPEN(j);
    if (u == 0) return LG_OK;
    /* the sub-network of layers 0..k whose output is z_k (layer k's ReLU dropped) */
    lg_layer *Ls = malloc((size_t)(k + 1) * sizeof *Ls);
    if (!Ls) return lg_fail(LG_ERR_NOMEM, "alpha: out of memory");
    memcpy(Ls, net->layers, (size_t)(k + 1) * sizeof *Ls);
    Ls[k].act = LG_ACT_IDENTITY;
    lg_net sub = *net;
    sub.n_layers = k + 1;
    sub.layers = Ls;
    size_t size = (size_t)lg_alpha_size(&sub), M = 2 * (size_t)u;
    /* rows 2q: +z_k[j] (lower bound), 2q + 1: −z_k[j] (minus the upper bound); C [M][n], d, out [M],
     * alpha [M][size], idx [u] */
    double *C = calloc(M * ((size_t)n + 2 + size), sizeof *C);
    int *idx = malloc((size_t)u * sizeof *idx);
    if (!C || !idx) {
        st = lg_fail(LG_ERR_NOMEM, "alpha: out of memory for %zu rows", M);
        goto done;
    }
    double *d = C + M * (size_t)n, *out = d + M, *al = out + M;
    for (int j = 0, q = 0; j < n; j++) {
        if (!LG_AT_OPEN(j)) continue;
        idx[q] = j;
        C[(2 * (size_t)q) * (size_t)n + (size_t)j] = 1.0;
        C[(2 * (size_t)q + 1) * (size_t)n + (size_t)j] = -1.0;
        q++;
    }
    lg_alpha_default(b, &sub, (int)M, al);
    lg_alpha_batch bt = {1, (const lg_bounds *const *)&b, NULL, NULL, NULL, 0};
    if ((st = lg_alpha_optimize_batch(&bt, &sub, (int)M, C, d, steps, lr, run, al, NULL, out, NULL)) != LG_OK)
        goto done;
    for (int q = 0; q < u; q++) {
        int j = idx[q];
        double l = out[2 * q], h = -out[2 * q + 1];
        int was = b->lo[k][j] < 0.0 && b->hi[k][j] > 0.0;
        if (l > b->lo[k][j]) b->lo[k][j] = l;
        if (h < b->hi[k][j]) b->hi[k][j] = h;
        *n_tight += was && !(b->lo[k][j] < 0.0 && b->hi[k][j] > 0.0);
    }
#undef LG_AT_OPEN
done:
    free(C);
    free(idx);
    free(Ls);
    return st;
}
