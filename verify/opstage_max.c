/* opstage_max.c — the max-pool node's verify-stage entries (opstage.h): its
 * interval bound (the largest end over each window: exact), the bounds of a
 * max-pool layer tightened from its source's (lg_bounds_max_layer,
 * bounds.h), the attack's backward step (the gradient of a max goes to its
 * first largest input) and the input-split smear. lg_bounds_max_layer
 * allocates a window's index scratch and frees it. */
#include "verify/opstage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify/backsub.h"

void lg_bounds_max_node(const lg_net *net, const lg_layer *L, const double *al, const double *ah, const size_t *noff,
                        double *lo, double *hi)
{
    (void)net;
    const lg_conv *c = &L->lin.conv;
    size_t so = noff[L->lin.src + 1];
    for (int o = 0; o < L->n_out; o++) {
        lg_window wb = lg_max_window_box(c, o);
        int first = 1;
        double l = 0.0, h = 0.0;
        for (int iy = wb.y0; iy < wb.y1; iy++)
            for (int ix = wb.x0; ix < wb.x1; ix++) {
                size_t i = so + (size_t)((wb.ch * c->h_in + iy) * c->w_in + ix);
                double a = al[i], u = ah[i];
                if (first || a > l || a != a) l = a;
                if (first || u > h || u != u) h = u;
                first = 0;
            }
        lo[o] = l == l ? l : -INFINITY;
        hi[o] = h == h ? h : INFINITY;
    }
}

lg_status lg_bounds_max_layer(lg_bounds *b, const lg_net *net, int k)
{
    const lg_layer *L = &net->layers[k], *S = L->lin.src >= 0 ? &net->layers[L->lin.src] : NULL;
    int *idx = malloc((size_t)L->lin.conv.kh * (size_t)L->lin.conv.kw * sizeof *idx);
    if (!idx) return lg_fail(LG_ERR_NOMEM, "bounds: out of memory");
    for (int o = 0; o < L->n_out; o++) {
        int n = lg_max_window(&L->lin.conv, o, idx);
        double l = -INFINITY, h = -INFINITY;
        for (int q = 0; q < n; q++) {
            int i = idx[q];
            double a, c;
            if (S) lg_bounds_post(S, b->lo[L->lin.src][i], b->hi[L->lin.src][i], &a, &c);
            else a = b->xlo[i], c = b->xhi[i];
            if (a != a) a = -INFINITY;
            if (c != c) c = INFINITY;
            if (a > l) l = a;
            if (c > h) h = c;
        }
        if (l > b->lo[k][o]) b->lo[k][o] = l;
        if (h < b->hi[k][o]) b->hi[k][o] = h;
    }
    free(idx);
    return LG_OK;
}

void lg_attack_max_backward(const lg_layer *L, const double *a, const double *b, const double *out, const double *dz,
                            double *da, double *db)
{
    (void)b, (void)out, (void)db;
    const lg_conv *c = &L->lin.conv;
    for (int o = 0; o < L->n_out; o++) {
        lg_window wb = lg_max_window_box(c, o);
        int top = -1;
        for (int iy = wb.y0; iy < wb.y1; iy++)
            for (int ix = wb.x0; ix < wb.x1; ix++) {
                int i = (wb.ch * c->h_in + iy) * c->w_in + ix;
                if (top < 0 || a[i] > a[top]) top = i;
            }
        if (top >= 0) da[top] += dz[o];
    }
}

void lg_bab_smear_max(const lg_net *net, const lg_bounds *b, const lg_layer *L, const double *cen, const double *rad,
                      double *cn, double *rd, unsigned char *seen, double *tc, double *tr)
{
    (void)b;
    const lg_linear *T = &L->lin; /* each window input may carry the output */
    size_t so = lg_net_node_offset(net, T->src);
    double *dc = seen[T->src + 1] ? tc : cn + so, *dr = seen[T->src + 1] ? tr : rd + so;
    memset(dc, 0, (size_t)T->n_in * sizeof *dc);
    memset(dr, 0, (size_t)T->n_in * sizeof *dr);
    for (int j = 0; j < T->n_out; j++) {
        lg_window wb = lg_max_window_box(&T->conv, j);
        for (int iy = wb.y0; iy < wb.y1; iy++)
            for (int ix = wb.x0; ix < wb.x1; ix++)
                dr[(wb.ch * T->conv.h_in + iy) * T->conv.w_in + ix] += fabs(cen[j]) + rad[j];
    }
    if (seen[T->src + 1])
        for (int i = 0; i < T->n_in; i++) cn[so + i] += tc[i], rd[so + i] += tr[i];
    seen[T->src + 1] = 1;
}

/* The difference bounds of max-pool layer k (dref, dlo, dhi; bounds.h) by back-substitution:
 * for each window the sources' bounds leave undecided, p = the position of the largest upper
 * bound (dref kept where already set) and rows ±(x_q − x_p) over the source's outputs pushed
 * back to the input box (backsub.h, rounding carried) through the caller's s (rows of up to
 * s->m) and out [s->m]; each kept where tighter. */
static lg_status lg_max_diff(lg_bounds *b, const lg_net *net, int k, lg_backsub *s, double *out)
{
    const lg_layer *L = &net->layers[k];
    if (!b->dlo[k] || s->m < 2) return LG_OK;
    const lg_layer *S = &net->layers[L->lin.src];
    int K = L->lin.conv.kh * L->lin.conv.kw, ns = L->lin.n_in, m = s->m, n = 0;
    int *idx = malloc((size_t)K * sizeof *idx), *rq = malloc((size_t)m * sizeof *rq);
    double *pl = malloc(2 * (size_t)K * sizeof *pl), *ph = pl + K;
    lg_status st = LG_OK;
    if (!idx || !rq || !pl) {
        st = lg_fail(LG_ERR_NOMEM, "bounds: out of memory");
        goto done;
    }
    /* rows 2r (lower bound of x_q − x_p) and 2r + 1 (minus its upper bound); rq[r] = o·K + q */
    for (int o = 0; o <= L->n_out && st == LG_OK; o++) {
        int nw = 0, p = -1;
        if (o < L->n_out) {
            nw = lg_max_window(&L->lin.conv, o, idx);
            int best = 0, top = 0;
            for (int q = 0; q < nw; q++) {
                lg_bounds_post(S, b->lo[L->lin.src][idx[q]], b->hi[L->lin.src][idx[q]], &pl[q], &ph[q]);
                if (pl[q] != pl[q]) pl[q] = -INFINITY;
                if (ph[q] != ph[q]) ph[q] = INFINITY;
                if (pl[q] > pl[best]) best = q;
                if (ph[q] > ph[top]) top = q;
            }
            int decided = 1;
            for (int q = 0; q < nw; q++) decided &= q == best || pl[best] >= ph[q];
            if (decided) nw = 0;
            p = b->dref[k][o] >= 0 && b->dref[k][o] < nw ? b->dref[k][o] : top;
            if (nw) b->dref[k][o] = p;
        }
        for (int q = 0; q <= nw; q++) {
            int flush = o == L->n_out || 2 * n + 2 > m;
            if (flush && n > 0) {
                if ((st = lg_backsub_lower(s, L->lin.src, 2 * n, NULL, NULL, 0, NULL, out)) != LG_OK) break;
                for (int r = 0; r < n; r++) {
                    size_t e = (size_t)rq[r];
                    if (out[2 * r] > b->dlo[k][e]) b->dlo[k][e] = out[2 * r];
                    if (-out[2 * r + 1] < b->dhi[k][e]) b->dhi[k][e] = -out[2 * r + 1];
                }
                n = 0;
            }
            if (q == nw || q == p) continue;
            double il = nextafter(pl[q] - ph[p], -INFINITY), ih = nextafter(ph[q] - pl[p], INFINITY);
            size_t e = (size_t)o * (size_t)K + (size_t)q; /* the interval ends' difference, rounded outward */
            if (il > b->dlo[k][e]) b->dlo[k][e] = il;
            if (ih < b->dhi[k][e]) b->dhi[k][e] = ih;
            if (ih <= 0.0) continue; /* x_q ≤ x_p already */
            for (int g = 0; g < 2; g++) {
                double *Ar = s->A + (size_t)(2 * n + g) * (size_t)ns;
                memset(Ar, 0, (size_t)ns * sizeof *Ar);
                Ar[idx[q]] = g ? -1.0 : 1.0;
                Ar[idx[p]] = g ? 1.0 : -1.0;
                s->c[2 * n + g] = 0.0;
            }
            rq[n++] = o * K + q;
        }
    }
done:
    free(idx);
    free(rq);
    free(pl);
    return st;
}

lg_status lg_max_symbolic(lg_bounds *b, const lg_net *net, int k, struct lg_backsub *s, double *out, int diff)
{
    lg_status st = lg_bounds_max_layer(b, net, k); /* exact from its source's bounds */
    if (st == LG_OK && diff) st = lg_max_diff(b, net, k, s, out);
    return st;
}

int lg_max_n_diff(const lg_layer *L)
{
    return L->lin.src >= 0 ? L->lin.conv.kh * L->lin.conv.kw : 0; /* a window's differences x_q − x_p */
}

/* The window split of max-pool layer k on difference entry e (bounds.h dlo, dhi): active
 * x_q − x_p ≥ 0, else ≤ 0. */
void lg_bab_window_split(lg_bounds *b, int k, int e, int active)
{
    if (active && b->dlo[k][e] < 0) b->dlo[k][e] = 0;
    if (!active && b->dhi[k][e] > 0) b->dhi[k][e] = 0;
}

/* The difference x_q − x_p of entry e = o·K + q of max-pool layer k within the current bounds:
 * the stored bounds and the interval ends (rounded outward). 0 when the window has no p. */
static int lg_bab_window_diff(const lg_net *net, const lg_bounds *b, int k, int e, double *dl, double *du)
{
    const lg_layer *L = &net->layers[k], *S = &net->layers[L->lin.src];
    int K = L->lin.conv.kh * L->lin.conv.kw, o = e / K, q = e % K, p = b->dref[k][o], idx[256];
    if (p < 0 || q == p || K > 256) return 0;
    int nw = lg_max_window(&L->lin.conv, o, idx);
    if (q >= nw || p >= nw) return 0;
    double lq, hq, lp, hp;
    lg_bounds_post(S, b->lo[L->lin.src][idx[q]], b->hi[L->lin.src][idx[q]], &lq, &hq);
    lg_bounds_post(S, b->lo[L->lin.src][idx[p]], b->hi[L->lin.src][idx[p]], &lp, &hp);
    *dl = fmax(b->dlo[k][e], nextafter(lq - hp, -INFINITY));
    *du = fmin(b->dhi[k][e], nextafter(hq - lp, INFINITY));
    return *dl == *dl && *du == *du;
}

/* Window splits (DESIGN.md §1 "The max-pool node"): where the row's coefficient λ_o on an
 * output is < 0 its upper plane sums a chord of relu(x_q − x_p) per undecided input q; the
 * split d_q ≥ 0 / ≤ 0 makes that chord exact, scored as a ReLU's: |λ_o|·(−l·u)/(u − l). */
int lg_bab_max_n_split(const lg_net *net, const lg_bounds *b, int k)
{
    const lg_layer *L = &net->layers[k];
    int Kw = L->lin.conv.kh * L->lin.conv.kw;
    if (!b->dlo[k] || Kw > 256 || (double)L->n_out * Kw > 1e9) return 0; /* lg_bab_window_diff's window; e an int */
    return L->n_out * Kw;
}

double lg_bab_max_split_score(const lg_net *net, const lg_bounds *b, int k, int e, const double *lam_k)
{
    const lg_layer *L = &net->layers[k];
    int o = e / (L->lin.conv.kh * L->lin.conv.kw);
    double l, u;
    if (!(lam_k[o] < 0) || b->dref[k][o] < 0) return 0.0;
    if (!lg_bab_window_diff(net, b, k, e, &l, &u) || !(l < 0 && u > 0)) return 0.0;
    double h = -l * u / (u - l);
    return fabs(lam_k[o]) * h;
}
