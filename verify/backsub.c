/* backsub.c — sound back-substitution with the chain's rounding carried
 * along (backsub.h; DESIGN.md §3 "Floating point"). */
#include "verify/backsub.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify/relax.h"
#include "verify/backsub_plain.h"
#include "verify/backsub_tnode.h"
#include "verify/opstage.h"
#include "core/act_relax.h"
#include "core/linop.h"
#include "core/traverse.h"

/* Multiply-adds of one product A·W_ℓ between two deadline checks: the rows
 * go in blocks of at most this much work (about 0.1 s), so a wide layer
 * times a large batch never runs long past the deadline; but never fewer
 * than LG_BACKSUB_CHECK_ROWS rows, where dgemm is still near its peak (a
 * 4096 x 3072 layer: 24 GFlop/s at 64 rows, 29 at 256, 17 at 21). */
#define LG_BACKSUB_CHECK_WORK ((double)(1 << 30))
#define LG_BACKSUB_CHECK_ROWS 128

/* max |a| over [lo, hi] after the activation of L (relu, identity, or a
 * smooth one through its certified image); a NaN bound means "no bound". */
static double lg_bs_amax_act(double lo, double hi, const lg_layer *L)
{
    if (isnan(lo) || isnan(hi)) return INFINITY;
    if (lg_act_info_of(L->act)->smooth) {
        double fl, fh;
        lg_act_image(L->act, L->lambda, lo, hi, &fl, &fh);
        fl = fabs(fl), fh = fabs(fh);
        return fh > fl ? fh : fl;
    }
    lo = L->act == LG_ACT_RELU && lo < 0.0 ? 0.0 : lo;
    hi = L->act == LG_ACT_RELU && hi < 0.0 ? 0.0 : hi;
    lo = fabs(lo), hi = fabs(hi);
    return hi > lo ? hi : lo;
}

/* max |a| over [lo, hi] (relu or identity). */
static double lg_bs_amax(double lo, double hi, int relu)
{
    if (isnan(lo) || isnan(hi)) return INFINITY;
    if (relu) return hi > 0.0 ? (hi > lo ? hi : lo) : (lo > 0.0 ? lo : 0.0);
    lo = fabs(lo), hi = fabs(hi);
    return hi > lo ? hi : lo;
}

void lg_backsub_changed(lg_backsub *s, int l)
{
    if (l >= 0)
        for (int g = 0; g < s->ng; g++) {
            s->lines_ok[(size_t)g * (size_t)s->net->n_layers + (size_t)l] = 0;
            if (s->fam) s->fam_ok[(size_t)g * (size_t)s->net->n_layers + (size_t)l] = 0;
        }
    /* M_k of every layer with a term reading node l (a chain: layer l + 1) */
    for (int k = l + 1; k < s->net->n_layers; k++)
        for (int t = 0; t < lg_layer_n_lin(&s->net->layers[k]); t++)
            if (lg_layer_lin(&s->net->layers[k], t)->src == l) s->mag_ok[k] = 0;
    lg_bs_tnode_changed(s, l);
}

/* The relaxation of every neuron of relu layer l in group g (area-heuristic
 * slopes), or of smooth layer l (core/act_relax.h, area-best lines). */
static void lg_bs_lines(lg_backsub *s, int g, int l)
{
    const lg_bounds *b = s->gb[g];
    const lg_layer *L = &s->net->layers[l];
    lg_relu_lines *ln = s->lines + (size_t)g * s->size + (size_t)s->off[l];
    s->lines_ok[(size_t)g * (size_t)s->net->n_layers + (size_t)l] = 1;
    for (int j = 0; j < L->n_out; j++) {
        double lo = b->lo[l][j], hi = b->hi[l][j];
        if (L->act == LG_ACT_RELU) {
            lg_relax_relu_lines(lo, hi, lg_relax_alpha_default(lo, hi), &ln[j]);
            continue;
        }
        lg_act_lines al;
        lg_act_relax(L->act, L->lambda, lo, hi, NAN, NAN, &al);
        double a = fabs(lo), h = fabs(hi);
        ln[j].phase = LG_RELU_SMOOTH;
        ln[j].lo_s = al.lo_s;
        ln[j].lo_c = al.lo_c;
        ln[j].up_s = al.up_s;
        ln[j].up_c = al.up_c;
        ln[j].up_x0 = 0.0;
        ln[j].zmax = h > a ? h : a;
        if (isnan(ln[j].zmax)) ln[j].zmax = INFINITY;
    }
}

/* Sort the F lines fm[F][2] by slope, tracking index *at. */
static void lg_bs_sort(double *fm, int n, int *at)
{
    for (int q = 1; q < n; q++)
        for (int r = q; r > 0 && fm[2 * r - 2] > fm[2 * r]; r--) {
            double ts = fm[2 * r], tc = fm[2 * r + 1];
            fm[2 * r] = fm[2 * r - 2], fm[2 * r + 1] = fm[2 * r - 1];
            fm[2 * r - 2] = ts, fm[2 * r - 1] = tc;
            if (*at == r) *at = r - 1;
            else if (*at == r - 1) *at = r;
        }
}

/* The lower- and upper-line families of every neuron of smooth layer l in
 * group g (backsub.h): certified tangents and the area-best line, each
 * sorted by slope. */
static void lg_bs_family(lg_backsub *s, int g, int l)
{
    const lg_bounds *b = s->gb[g];
    const lg_layer *L = &s->net->layers[l];
    if (!s->lines_ok[(size_t)g * (size_t)s->net->n_layers + (size_t)l]) lg_bs_lines(s, g, l);
    s->fam_ok[(size_t)g * (size_t)s->net->n_layers + (size_t)l] = 1;
    const int F = LG_BACKSUB_FAM;
    for (int j = 0; j < L->n_out; j++) {
        size_t i = (size_t)g * s->size + (size_t)s->off[l] + (size_t)j;
        const lg_relu_lines *ln = &s->lines[i];
        double lo = b->lo[l][j], hi = b->hi[l][j];
        for (int up = 0; up < 2; up++) {
            double *fm = s->fam + (i * 2 + (size_t)up) * 2 * (size_t)F; /* [F][2] */
            double bs = up ? ln->up_s : ln->lo_s, bc = up ? ln->up_c : ln->lo_c;
            int n = 0, ok = isfinite(bs) && isfinite(bc) && isfinite(lo) && isfinite(hi) && hi > lo;
            for (int q = 0; ok && q < F - 1; q++) {
                lg_act_lines x;
                lg_act_relax(L->act, L->lambda, lo, hi, (double)q / (F - 2), (double)q / (F - 2), &x);
                double xs = up ? x.up_s : x.lo_s, xc = up ? x.up_c : x.lo_c;
                if (!isfinite(xs) || !isfinite(xc)) continue;
                fm[2 * n] = xs, fm[2 * n + 1] = xc;
                n++;
            }
            /* the area-best line last, then all sorted by slope (it is tracked); missing
             * tangents are copies of the last */
            fm[2 * n] = bs, fm[2 * n + 1] = bc;
            int at = n++;
            lg_bs_sort(fm, n, &at);
            for (int q = n; q < F; q++) fm[2 * q] = fm[2 * n - 2], fm[2 * q + 1] = fm[2 * n - 1];
            if (!ok) {
                for (int q = 0; q < F; q++) fm[2 * q] = bs, fm[2 * q + 1] = bc;
                at = 0;
            }
            s->fam0[i * 2 + (size_t)up] = (double)at / (F - 1);
        }
    }
}

/* The families' scratch, on first use; 0 if it cannot be allocated. */
static int lg_bs_fam_alloc(lg_backsub *s)
{
    if (s->fam) return 1;
    size_t G = (size_t)s->ng, L = (size_t)s->net->n_layers;
    s->fam = malloc(G * s->size * 2 * (2 * (size_t)LG_BACKSUB_FAM + 1) * sizeof *s->fam + G * L);
    if (!s->fam) return 0;
    s->fam0 = s->fam + G * s->size * 2 * 2 * (size_t)LG_BACKSUB_FAM;
    s->fam_ok = (unsigned char *)(s->fam0 + G * s->size * 2);
    memset(s->fam_ok, 0, G * L);
    return 1;
}

static int lg_bs_layer_of(const lg_backsub *s, int i)
{
    int l = 0;
    while (l + 1 < s->net->n_layers && s->off[l + 1] <= i) l++;
    return l;
}

int lg_backsub_fam_line(lg_backsub *s, int g, int i, int up, double alpha, double *ls, double *lc, double *ds,
                        double *dc)
{
    int l = lg_bs_layer_of(s, i);
    const lg_layer *L = &s->net->layers[l];
    if (!lg_act_info_of(L->act)->smooth || !lg_bs_fam_alloc(s)) return 0;
    if (!s->fam_ok[(size_t)g * (size_t)s->net->n_layers + (size_t)l]) lg_bs_family(s, g, l);
    size_t gi = ((size_t)g * s->size + (size_t)i) * 2 + (up ? 1 : 0);
    const int F = LG_BACKSUB_FAM;
    const double *fm = s->fam + gi * 2 * (size_t)F;
    if (alpha != alpha) alpha = s->fam0[gi];
    double pos = (alpha > 0.0 ? (alpha < 1.0 ? alpha : 1.0) : 0.0) * (F - 1);
    int p = (int)pos;
    if (p > F - 2) p = F - 2;
    double th = pos - p, s0 = fm[2 * p], c0 = fm[2 * p + 1], s1 = fm[2 * p + 2], c1 = fm[2 * p + 3];
    if (ds) *ds = (s1 - s0) * (F - 1);
    if (dc) *dc = (c1 - c0) * (F - 1);
    if (th == 0.0) { /* a family line itself: certified as it is */
        *ls = s0, *lc = c0;
        return 1;
    }
    /* (1 − θ)·line_p + θ·line_{p+1}, its rounding moved outward in the constant
     * (down below f, up above; backsub.h) */
    double sl = (1.0 - th) * s0 + th * s1, c = (1.0 - th) * c0 + th * c1;
    double lo = s->gb[g]->lo[l][i - s->off[l]], hi = s->gb[g]->hi[l][i - s->off[l]];
    double zm = fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi);
    double E = ((fabs(s0) + fabs(s1)) * 0x1p-51 + 0x1p-1070) * zm + (fabs(c0) + fabs(c1)) * 0x1p-51 + 0x1p-1070;
    if (up) {
        c = c + E * (1.0 + 0x1p-50);
        c += fabs(c) * 0x1p-51 + 0x1p-1070;
    } else {
        c = c - E * (1.0 + 0x1p-50);
        c -= fabs(c) * 0x1p-51 + 0x1p-1070;
    }
    if (!isfinite(sl) || !isfinite(c)) return 0;
    *ls = sl, *lc = c;
    return 1;
}

double lg_backsub_alpha0(lg_backsub *s, int g, int i, int up)
{
    int l = lg_bs_layer_of(s, i);
    const lg_vopdef *vop = lg_layer_vop(&s->net->layers[l]);
    if (vop && vop->bs_value) return 0.0; /* a node's planes of α = 0 (opstage.h) */
    if (!lg_act_info_of(s->net->layers[l].act)->smooth || !lg_bs_fam_alloc(s)) return 0.5;
    if (!s->fam_ok[(size_t)g * (size_t)s->net->n_layers + (size_t)l]) lg_bs_family(s, g, l);
    return s->fam0[((size_t)g * s->size + (size_t)i) * 2 + (up ? 1 : 0)];
}

/* M_l, U_l, γ'_l from the current bounds of the sources of layer l's
 * terms (or the box), over the hull of the groups: am[i] = max_g
 * max|h_src[i]| on group g's bounds; M_l[j] = Σ_t (|A_t|·am_t)[j] rounded
 * up, U_l = Σ_t n_out·2^-1073·Σ_i am_t[i], and γ'_l = (N + 2)·2^-51 with N
 * the largest number of products summed into one coefficient of a source
 * (lg_backsub_init: s->nsum). A chain: the one term, N = n_out. */
static void lg_bs_mag(lg_backsub *s, int l)
{
    s->mag_ok[l] = 1;
    const lg_net *net = s->net;
    const lg_layer *L = &net->layers[l];
    double under = 0.0, nin = 0.0, N = 0.0;
    double *am = s->am; /* [width of the source] scratch */
    const lg_vopdef *vop = lg_layer_vop(L);
    for (int t = 0; t < lg_layer_n_lin(L); t++) {
        const lg_linear *T = lg_layer_lin(L, t);
        int ni = T->n_in, src = T->src;
        double sum = 0.0;
        for (int i = 0; i < ni; i++) {
            double v = 0.0;
            for (int g = 0; g < s->ng; g++) {
                const lg_bounds *b = s->gb[g];
                double a = src < 0 ? lg_bs_amax(b->xlo[i], b->xhi[i], 0)
                                   : lg_bs_amax_act(b->lo[src][i], b->hi[src][i], &net->layers[src]);
                if (!(a <= v)) v = a; /* NaN-safe max; amax never returns NaN */
            }
            am[i] = v;
            sum += am[i];
        }
        if (vop && vop->bs_mag) { /* the node's own M (opstage.h) */
            vop->bs_mag(s, l, am);
            under += (double)L->n_out * 0x1p-1073 * sum;
            nin += 1.0;
            if ((double)s->nsum[src + 1] > N) N = (double)s->nsum[src + 1];
            continue;
        }
        /* n·2^-1074 per unit of |a|: the underflow of n products per entry, ×2 */
        under += (double)L->n_out * 0x1p-1073 * sum;
        nin += (double)ni;
        if ((double)s->nsum[src + 1] > N) N = (double)s->nsum[src + 1];
        /* |A_t|·am through the term's structure (core/linop.h), summed over the terms */
        lg_linear_mul(T, 1, am, s->mag[l], 1, t > 0);
    }
    s->under[l] = under;
    s->gam[l] = (N + 2.0) * 0x1p-51; /* γ'_N ≥ 2γ_N */
    /* ×(1 + (n + 2)·2^-52) for its own rounding, n the products summed */
    double up = 1.0 + (nin + 2.0) * 0x1p-52;
    for (int j = 0; j < L->n_out; j++) {
        double m = s->mag[l][j];
        s->mag[l][j] = isnan(m) ? INFINITY : m * up;
    }
}

int lg_backsub_live(const lg_net *net)
{
    /* while node l is processed (backward) or computed (forward), the
     * buffers alive are l's and those of the earlier nodes some layer ≥ l
     * reads: last[j] = the last layer reading node j */
    int L = net->n_layers, best = 2;
    int *last = malloc(2 * ((size_t)L + 1) * sizeof *last), *delta = last + L + 1;
    if (!last) return L + 1; /* every node (the caller's allocation then fails or fits) */
    for (int j = 0; j <= L; j++) delta[j] = 0;
    lg_net_last_read(net, L, last); /* every term's source and a second source (core/traverse.h) */
    /* node j (at j + 1) is alive for the layers l in (j, last[j]]: +1 at l = j + 1, −1 after last[j] */
    for (int j = -1; j < L; j++)
        if (last[j + 1] > j) {
            delta[j + 1]++;
            if (last[j + 1] + 1 <= L) delta[last[j + 1] + 1]--;
        }
    for (int l = 0, live = 0; l < L; l++) {
        live += delta[l];
        if (live + 1 > best) best = live + 1;
    }
    free(last);
    return best;
}

int lg_backsub_shared(const lg_net *net)
{
    int L = net->n_layers, shared = 0;
    unsigned char *seen = calloc((size_t)L + 1, 1);
    if (!seen) return 1;
    for (int k = 0; k < L && !shared; k++)
        for (int i = 0; i < lg_layer_n_src(&net->layers[k]); i++) { /* a second source may be the first */
            int q = lg_layer_src(&net->layers[k], i) + 1;
            if (seen[q]) shared = 1;
            seen[q] = 1;
        }
    free(seen);
    return shared;
}

lg_status lg_backsub_init(lg_backsub *s, const lg_bounds *b, const lg_net *net, int m)
{
    lg_status st = lg_backsub_init_batch(s, 1, NULL, net, m);
    if (st == LG_OK) {
        s->b = b;
        s->gb = &s->b; /* the batch of one group; s is not moved while in use */
        s->run = b ? b->run : NULL;
    }
    return st;
}

lg_status lg_backsub_init_batch(lg_backsub *s, int ng, const lg_bounds *const *gb, const lg_net *net, int m)
{
    memset(s, 0, sizeof *s);
    size_t w = (size_t)lg_net_max_width(net), L = (size_t)net->n_layers, tot = 0;
    for (size_t k = 0; k < L; k++) tot += (size_t)net->layers[k].n_out;
    if (m < 1) m = 1;
    if (ng < 1) ng = 1;
    size_t G = (size_t)ng, P = (size_t)lg_backsub_live(net), acc = lg_backsub_shared(net) ? 1 : 0;
    /* doubles: the node buffers [P][m][w] (A the first, tmp the second), acc [m][w] when some node is read
     * by several terms; c, mass, err [m]; mag [tot]; under, gam [L]; am [w];
     * then lines [ng][tot], the pointer tables (mag [L], pool [P], nb [L + 1]), off [L], grp [m],
     * nsum [L + 1], used [P], the flag arrays */
    size_t nd = (P + acc) * (size_t)m * w + 3 * (size_t)m + tot + 2 * L + w;
    size_t bytes = nd * sizeof(double) + G * tot * sizeof(lg_relu_lines) + (L + P + L + 1) * sizeof(void *) +
                   (L + (size_t)m + 2 * (L + 1) + P) * sizeof(int) + L + G * L;
    unsigned char *p = malloc(bytes);
    if (!p) return lg_fail(LG_ERR_NOMEM, "bounds: cannot allocate %zu bytes for back-substitution", bytes);
    s->store = p;
    double *d = (double *)p;
    s->A = d;
    s->tmp = d + (size_t)m * w;
    s->acc = acc ? d + P * (size_t)m * w : NULL;
    s->c = d + (P + acc) * (size_t)m * w;
    s->mass = s->c + m;
    s->err = s->mass + m;
    double *mg = s->err + m;
    s->under = mg + tot;
    s->gam = s->under + L;
    s->am = s->gam + L;
    s->lines = (lg_relu_lines *)(p + nd * sizeof(double));
    s->mag = (double **)(s->lines + G * tot);
    s->pool = s->mag + L;
    s->nb = s->pool + P;
    s->off = (int *)(s->nb + L + 1);
    s->grp = s->off + L;
    s->nsum = s->grp + m;
    s->nsum2 = s->nsum + L + 1;
    s->used = s->nsum2 + L + 1;
    s->mag_ok = (unsigned char *)(s->used + P);
    s->lines_ok = s->mag_ok + L;
    s->npool = (int)P;
    for (size_t q = 0; q < P; q++) s->pool[q] = d + q * (size_t)m * w;
    for (size_t k = 0, o = 0; k < L; o += (size_t)net->layers[k].n_out, k++) {
        s->mag[k] = mg + o;
        s->off[k] = (int)o;
    }
    /* products summed into one coefficient of node j: n_out of every term reading it */
    memset(s->nsum, 0, (L + 1) * sizeof *s->nsum);
    for (size_t k = 0; k < L; k++) {
        const lg_layer *Lk = &net->layers[k];
        const lg_vopdef *vop = lg_layer_vop(Lk);
        int tn = lg_layer_is_tnode(Lk);
        for (int i = 0; i < lg_layer_n_src(Lk); i++) /* the planes' addends (backsub_tnode.h), a node's planes: its entry's count (opstage.h) */
            s->nsum[lg_layer_src(Lk, i) + 1] += tn ? lg_bs_tnode_addends(Lk, i)
                                                   : vop && vop->bs_addends ? vop->bs_addends(Lk) : Lk->n_out;
    }
    memset(s->grp, 0, (size_t)m * sizeof *s->grp);
    s->gb = gb;
    s->b = gb ? gb[0] : NULL;
    s->run = s->b ? s->b->run : NULL;
    s->ng = ng;
    s->size = tot;
    s->net = net;
    s->m = m;
    memset(s->mag_ok, 0, L + G * L);
    if (lg_net_has_max(net)) {
        s->msel = malloc(G * tot * sizeof *s->msel);
        s->mdom = malloc(G * tot);
        if (!s->msel || !s->mdom) {
            lg_backsub_free(s);
            return lg_fail(LG_ERR_NOMEM, "bounds: out of memory for the max-pool planes");
        }
    }
    if (lg_bs_tnode_init(s) != LG_OK) {
        lg_backsub_free(s);
        return LG_ERR_NOMEM;
    }
    return LG_OK;
}

void lg_backsub_free(lg_backsub *s)
{
    lg_bs_tnode_free(s);
    free(s->fam);
    free(s->msel);
    free(s->mdom);
    free(s->store);
    memset(s, 0, sizeof *s);
}

lg_status lg_backsub_lower(lg_backsub *s, int level, int m, const double *alpha, double *lam, size_t stride,
                           double *Ain, double *out)
{
    return lg_backsub_lower_beta(s, level, m, alpha, NULL, lam, stride, Ain, out);
}

/* A free node buffer of the pool (sized by lg_backsub_live, so one is free). */
static double *lg_bs_get(lg_backsub *s)
{
    for (int q = 0; q < s->npool; q++)
        if (!s->used[q]) {
            s->used[q] = 1;
            return s->pool[q];
        }
    LG_ASSERT(!"back-substitution: node buffers exhausted");
    return NULL;
}

static void lg_bs_put(lg_backsub *s, const double *buf)
{
    for (int q = 0; q < s->npool; q++)
        if (s->pool[q] == buf) s->used[q] = 0;
}

/* The reverse pass over the nodes level, level − 1, …, 0, then the input
 * box. Node l's coefficients (its buffer, [m][n_out]) are complete when it
 * is reached: every consumer k > l has added Λ_k·A_t. pre: node `level`
 * carries coefficients on its pre-activation z (not relaxed). */
/* Y[m][n_in] = A[m][n_out]·T through its structure, in blocks of rows with
 * a deadline check between them (LG_BACKSUB_CHECK_WORK above). */
static lg_status lg_bs_mul_t(lg_backsub *s, const lg_linear *T, int m, const double *A, double *Y)
{
    double per_row = (double)T->n_out * (double)lg_linear_row_cap(T);
    int blk = per_row * m <= LG_BACKSUB_CHECK_WORK ? m : (int)(LG_BACKSUB_CHECK_WORK / per_row);
    if (blk < LG_BACKSUB_CHECK_ROWS) blk = LG_BACKSUB_CHECK_ROWS;
    for (int r0 = 0; r0 < m; r0 += blk) {
        if (r0 > 0 && lg_runctx_check(s->run, "bounds: back-substitution") != LG_OK) return LG_ERR_TIMEOUT;
        int nr = m - r0 < blk ? m - r0 : blk;
        lg_linear_mul_t(T, nr, A + (size_t)r0 * (size_t)T->n_out, Y + (size_t)r0 * (size_t)T->n_in, 0);
    }
    return LG_OK;
}

/* 1 when every x[j], j < n, is finite. */
static int lg_bs_all_finite(const double *x, int n)
{
    int ok = 1;
    for (int j = 0; j < n; j++) ok &= isfinite(x[j]) != 0;
    return ok;
}

/* 1 when every x[j], j < n, is 0 (no split term on the layer). */
static int lg_bs_all_zero(const double *x, int n)
{
    int z = 1;
    for (int j = 0; j < n; j++) z &= x[j] == 0.0;
    return z;
}

static lg_status lg_bs_run(lg_backsub *s, int level, int pre, int m, const double *alpha, const double *zadd,
                           double *lam, size_t stride, double *Ain, double *out)
{
    const lg_net *net = s->net;
    double *c = s->c, *mass = s->mass, *err = s->err;
    double nterms = 0;
    for (int r = 0; r < m; r++) {
        mass[r] = fabs(c[r]);
        err[r] = 0.0;
    }
    memset(s->used, 0, (size_t)s->npool * sizeof *s->used);
    for (int q = 0; q <= net->n_layers; q++) s->nb[q] = NULL;
    s->used[0] = 1;
    s->nb[level + 1] = s->A;
    for (int l = level; l >= 0; l--) {
        if (lg_runctx_check(s->run, "bounds: back-substitution") != LG_OK) { /* unfinished: no bound */
            for (int r = 0; r < m; r++) out[r] = -INFINITY;
            return LG_ERR_TIMEOUT;
        }
        const lg_layer *L = &net->layers[l];
        int n = L->n_out, off = s->off[l];
        double *A = s->nb[l + 1];
        if (!A) { /* no consumer reached this node: its coefficients are 0 */
            if (lam)
                for (int r = 0; r < m; r++) memset(lam + (size_t)r * stride + off, 0, (size_t)n * sizeof *lam);
            continue;
        }
        if (lg_layer_is_tnode(L)) { /* the node's planes (backsub_tnode.h) */
            int bil = lg_layer_is(L, LG_OPF_TWO_SRC);
            int sa = lg_layer_src(L, 0), sb = lg_layer_src(L, lg_layer_n_src(L) - 1); /* a second source, else the first */
            double N = s->nsum[sa + 1] > s->nsum[sb + 1] ? s->nsum[sa + 1] : s->nsum[sb + 1];
            if (lam)
                for (int r = 0; r < m; r++) memcpy(lam + (size_t)r * stride + off, A + (size_t)r * (size_t)n, (size_t)n * sizeof *A);
            double *Y[2] = {NULL, NULL};
            for (int q = 0; q < 1 + bil; q++) {
                int src = q ? sb : sa, w = q ? L->lin.op.n_in_b : L->lin.n_in;
                double **dst = &s->nb[src + 1];
                if (!*dst) {
                    *dst = lg_bs_get(s);
                    memset(*dst, 0, (size_t)m * (size_t)w * sizeof **dst);
                }
                Y[q] = *dst;
            }
            nterms += lg_bs_tnode_step(s, l, m, A, Y[0], bil ? Y[1] : NULL, (N + 2.0) * 0x1p-51) + 1.0;
            lg_bs_put(s, A);
            s->nb[l + 1] = NULL;
            continue;
        }
        int relu = L->act == LG_ACT_RELU, relaxed = (relu || lg_act_info_of(L->act)->smooth) && !(pre && l == level);
        const lg_vopdef *vop = lg_layer_vop(L);
        int mtwo = 0; /* mtwo: some row read two upper planes */
        if (vop && vop->bs_prepare) vop->bs_prepare(s, l);
        if (!s->mag_ok[l]) lg_bs_mag(s, l);
        const double *M = s->mag[l];
        double gam = s->gam[l]; /* γ'_N ≥ 2γ_N */
        if (relaxed)
            for (int g = 0; g < s->ng; g++)
                if (!s->lines_ok[(size_t)g * (size_t)net->n_layers + (size_t)l]) lg_bs_lines(s, g, l);
        int plain = !relaxed && lg_bs_all_finite(L->b, n) && lg_bs_all_finite(M, n);
        for (int r = 0; r < m; r++) {
            double *Ar = A + (size_t)r * (size_t)n;
            if (plain && (!zadd || lg_bs_all_zero(zadd + (size_t)r * stride + off, n))) { /* nothing relaxed: the three sums in lanes (lg_bs_plain_row) */
                if (lam) memcpy(lam + (size_t)r * stride + off, Ar, (size_t)n * sizeof *Ar);
                lg_bs_plain_row(Ar, L->b, M, n, gam, s->under[l], &c[r], &mass[r], &err[r]);
                continue;
            }
            const lg_relu_lines *lines = s->lines + (size_t)s->grp[r] * s->size + (size_t)off; /* [n] of row r's group */
            double cr = c[r], ms = mass[r], er = err[r];
            if (lam) memcpy(lam + (size_t)r * stride + off, Ar, (size_t)n * sizeof *Ar);
            /* relax (relax.h), then c += A·b_ℓ and the rounding of A·A_t
             * below: γ'·Σ|A_j|·M_j + U_ℓ */
            const double *al = alpha && relaxed ? alpha + (size_t)r * stride + off : NULL;
            /* β-CROWN: + σβ·z_ℓ[j] after the relaxation; exact by monotone rounding (backsub.h) */
            const double *za = zadd ? zadd + (size_t)r * stride + off : NULL;
            const double *tz = za && s->thr && s->thr[s->grp[r]] ? s->thr[s->grp[r]] + off : NULL;
            double g = 0.0;
            int any = 0;
            for (int j = 0; j < n; j++) {
                double aj = Ar[j], zj = za ? za[j] : 0.0;
                if (aj == 0.0 && zj == 0.0) continue;
                if (aj != 0.0 && relaxed && lines[j].phase != LG_RELU_ACTIVE) {
                    if (lines[j].phase == LG_RELU_INACTIVE) {
                        Ar[j] = aj = 0.0;
                        if (zj == 0.0) continue;
                    } else {
                        double icpt, e;
                        if (al && lines[j].phase == LG_RELU_UNSTABLE) {
                            lg_relu_lines t = lines[j];
                            lg_relax_set_alpha(&t, al[j]);
                            lg_relax_relu_apply(&t, aj, &aj, &icpt, &e);
                        } else if (al && lines[j].phase == LG_RELU_SMOOTH && al[j] == al[j]) {
                            /* α-CROWN on a smooth neuron: the line of its family at α that the
                             * coefficient's sign uses, lower for aj > 0, upper for aj < 0 (backsub.h) */
                            lg_relu_lines t = lines[j];
                            int ok = aj > 0.0 ? lg_backsub_fam_line(s, s->grp[r], off + j, 0, al[j], &t.lo_s, &t.lo_c,
                                                                    NULL, NULL)
                                              : lg_backsub_fam_line(s, s->grp[r], off + j, 1, al[j], &t.up_s, &t.up_c,
                                                                    NULL, NULL);
                            if (!ok) t = lines[j];
                            lg_relax_relu_apply(&t, aj, &aj, &icpt, &e);
                        } else {
                            lg_relax_relu_apply(&lines[j], aj, &aj, &icpt, &e);
                        }
                        Ar[j] = aj;
                        cr += icpt;
                        ms += fabs(icpt);
                        er += e;
                    }
                }
                if (zj != 0.0) {
                    double a0 = aj;
                    Ar[j] = aj += zj;
                    if (tz && tz[j] != 0.0) { /* the split's constant −δ·t (backsub.h) */
                        double k = -(aj - a0) * tz[j];
                        cr += k;
                        ms += fabs(k);
                        er += fabs(k) * 0x1p-50 + 0x1p-1070;
                    }
                }
                if (aj == 0.0) continue;
                double t = aj * L->b[j];
                cr += t;
                ms += fabs(t);
                g += fabs(aj) * M[j];
                any = 1;
            }
            if (any) er += gam * g + s->under[l];
            c[r] = cr;
            mass[r] = ms;
            err[r] = er;
        }
        /* Λ_src(t) += Λ_ℓ·A_t for every term, through its structure (core/linop.h): the
         * first contribution is written, later ones are added (s->acc) */
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            const lg_linear *T = lg_layer_lin(L, t);
            double **dst = &s->nb[T->src + 1];
            int first = !*dst;
            if (first) *dst = lg_bs_get(s);
            if (vop && vop->bs_step) { /* the node's planes of each row's group (opstage.h) */
                mtwo |= vop->bs_step(s, l, m, A, first ? *dst : s->acc, alpha, stride);
            } else if (lg_bs_mul_t(s, T, m, A, first ? *dst : s->acc) != LG_OK) { /* unfinished: no bound */
                for (int r = 0; r < m; r++) out[r] = -INFINITY;
                return LG_ERR_TIMEOUT;
            }
            if (!first) {
                size_t len = (size_t)m * (size_t)T->n_in;
                double *D = *dst;
                for (size_t q = 0; q < len; q++) D[q] += s->acc[q];
            }
        }
        lg_bs_put(s, A);
        s->nb[l + 1] = NULL;
        nterms += (zadd && s->thr ? 3.0 : 2.0) * n + 1.0; /* per neuron: intercept, bias, split constant */
        if (vop && vop->bs_terms) nterms += vop->bs_terms(L, mtwo);
    }
    const double *X = s->nb[0]; /* [m][n_in] over x', NULL: no path from the input */
    for (int r = 0; r < m; r++) {
        const double *Ar = X ? X + (size_t)r * (size_t)net->n_in : NULL;
        const lg_bounds *b = s->gb[s->grp[r]];
        double v = c[r], ms = mass[r];
        for (int i = 0; Ar && i < net->n_in; i++) {
            double p = Ar[i] >= 0.0 ? Ar[i] * b->xlo[i] : Ar[i] * b->xhi[i];
            if (Ar[i] == 0.0) p = 0.0; /* 0·∞ */
            v += p;
            ms += fabs(p);
        }
        if (Ain) {
            if (Ar) memcpy(Ain + (size_t)r * (size_t)net->n_in, Ar, (size_t)net->n_in * sizeof *Ain);
            else memset(Ain + (size_t)r * (size_t)net->n_in, 0, (size_t)net->n_in * sizeof *Ain);
        }
        double o = v - err[r] - lg_bounds_margin(v, ms + err[r], nterms + net->n_in);
        out[r] = isfinite(o) && isfinite(err[r]) ? o : -INFINITY;
    }
    return LG_OK;
}

lg_status lg_backsub_lower_beta(lg_backsub *s, int level, int m, const double *alpha, const double *zadd,
                                double *lam, size_t stride, double *Ain, double *out)
{
    return lg_bs_run(s, level, 0, m, alpha, zadd, lam, stride, Ain, out);
}

lg_status lg_backsub_lower_pre(lg_backsub *s, int k, int m, double *out)
{
    return lg_bs_run(s, k, 1, m, NULL, NULL, NULL, 0, NULL, out);
}
