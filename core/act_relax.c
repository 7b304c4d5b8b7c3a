/* act_relax.c — certified linear relaxations of the smooth activations
 * (act_relax.h; DESIGN.md §3 "Smooth activations"). */
#include "core/act_relax.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LG_AR_ETA LG_LIBM_REL_ERR /* trusted relative error of libm's exp, erfc (core/act_relax.h) */
#define LG_AR_TINY 0x1p-1000 /* absolute margin for underflow */
#define LG_AR_MAX (LG_ACT_RELAX_N + 8)

/* The sample points of [l, u] and f there, for the lower (parameter p) and
 * the upper (parameter next(p)) line; K[i] ≥ sup|f''| on [x[i], x[i+1]]
 * for both parameters, w2[i] ≥ (x[i+1] − x[i])²/8. */
typedef struct lg_ar_s {
    int n;
    double x[LG_AR_MAX], flo[LG_AR_MAX], fup[LG_AR_MAX], pen[LG_AR_MAX];
} lg_ar_s;

static double lg_ar_down(double v) { return v - (fabs(v) * 0x1p-51 + LG_AR_TINY); }
static double lg_ar_up(double v) { return v + (fabs(v) * 0x1p-51 + LG_AR_TINY); }

static void lg_ar_insert(lg_ar_s *S, double v, double l, double u)
{
    if (!(v > l && v < u) || S->n >= LG_AR_MAX) return;
    int i = S->n;
    while (i > 0 && S->x[i - 1] > v) {
        S->x[i] = S->x[i - 1];
        i--;
    }
    if (i > 0 && S->x[i - 1] == v) { /* already there: undo the shift */
        for (int j = i; j < S->n; j++) S->x[j] = S->x[j + 1];
        return;
    }
    S->x[i] = v;
    S->n++;
}

/* Fill the samples: the N + 1 grid points, the inflection points inside,
 * and the given extra points (tangent points). */
static void lg_ar_sample(const lg_act_info *I, double p, double pu, double l, double u, const double *extra,
                         int n_extra, lg_ar_s *S)
{
    double h = (u - l) / LG_ACT_RELAX_N;
    S->n = 0;
    for (int i = 0; i <= LG_ACT_RELAX_N; i++) S->x[S->n++] = i == LG_ACT_RELAX_N ? u : l + (double)i * h;
    for (int i = 1; i < S->n; i++) /* fl is monotone, but keep the order explicit */
        if (S->x[i] < S->x[i - 1]) S->x[i] = S->x[i - 1];
    double pts[2];
    int left;
    int k = I->curv ? I->curv(p, pts, &left) : 0;
    for (int i = 0; i < k; i++) lg_ar_insert(S, pts[i], l, u);
    for (int i = 0; i < n_extra; i++) lg_ar_insert(S, extra[i], l, u);
    for (int i = 0; i < S->n; i++) {
        S->flo[i] = I->f(S->x[i], p);
        S->fup[i] = pu == p ? S->flo[i] : I->f(S->x[i], pu);
    }
    for (int i = 0; i + 1 < S->n; i++) {
        double a = S->x[i], b = S->x[i + 1];
        double K = I->d2max(p, a, b), Ku = pu == p ? K : I->d2max(pu, a, b);
        if (Ku > K) K = Ku;
        double w = (b - a) * (1.0 + 0x1p-50);
        S->pen[i] = b > a ? K * w * w * 0.125 * (1.0 + 0x1p-40) + LG_AR_TINY : 0.0;
        if (!(S->pen[i] >= 0)) S->pen[i] = INFINITY;
    }
}

/* A certified lower bound of min over [l, u] of σ·(f(x) − s·x − c)
 * (σ = +1 below f with the lower samples, −1 above with the upper ones);
 * −∞ if anything is not finite. */
static double lg_ar_certify(const lg_ar_s *S, double s, double c, int sg)
{
    const double *F = sg > 0 ? S->flo : S->fup;
    double m = INFINITY, prev = 0.0;
    for (int i = 0; i < S->n; i++) {
        double sx = s * S->x[i];
        double G = sg * (F[i] - (sx + c));
        double e = LG_AR_ETA * fabs(F[i]) + 0x1p-51 * (fabs(sx) + fabs(c) + fabs(G)) + LG_AR_TINY;
        double g = G - e * (1.0 + 0x1p-20);
        if (!isfinite(g)) return -INFINITY;
        if (i > 0) {
            double lo = prev < g ? prev : g;
            lo -= S->pen[i - 1] * (1.0 + 0x1p-40);
            if (!(lo > -INFINITY)) return -INFINITY;
            if (lo < m) m = lo;
        } else if (S->n == 1) {
            m = g;
        }
        prev = g;
    }
    return m;
}

typedef struct lg_ar_best {
    double s, c, score;
    int ok;
} lg_ar_best;

/* Keep (s, c) moved by its certified minimum if it beats the best so far
 * (score: the line's value at the midpoint, larger is better below). */
static void lg_ar_try(const lg_ar_s *S, double s, double c, int sg, double mid, lg_ar_best *B)
{
    if (!isfinite(s) || !isfinite(c)) return;
    double m = lg_ar_certify(S, s, c, sg);
    if (!(m > -INFINITY)) return;
    double c2 = sg > 0 ? lg_ar_down(c + m) : lg_ar_up(c - m);
    if (!isfinite(c2)) return;
    double score = sg * (s * mid + c2);
    if (!B->ok || score > B->score) {
        B->s = s;
        B->c = c2;
        B->score = score;
        B->ok = 1;
    }
}

/* A line that needs no certification (valid by its own argument). */
static void lg_ar_keep(double s, double c, int sg, double mid, lg_ar_best *B)
{
    if (!isfinite(s) || !isfinite(c)) return;
    double score = sg * (s * mid + c);
    if (!B->ok || score > B->score) {
        B->s = s;
        B->c = c;
        B->score = score;
        B->ok = 1;
    }
}

/* Candidates valid without sampling. ReLU-like kinds: relu(x) − G ≤ f ≤
 * relu(x) + G with G the table's gap on [l, u] (sup|f − relu|, decreasing
 * in λ and β, so the gap at p covers [p, next(p)]), widened by the trusted
 * relative error; relu ≥ 0, relu ≥ x, relu ≤ s·(x − l) with s ≥ u/(u − l).
 * Increasing kinds: f(l) ≤ f ≤ f(u), widened by the trusted relative error. */
static void lg_ar_presets(const lg_act_info *I, double p, double l, double u, double mid, lg_ar_best *lo,
                          lg_ar_best *up)
{
    if (I->increasing) {
        double fl = I->f(l, p), fu = I->f(u, p);
        lg_ar_keep(0.0, lg_ar_down(fl - fabs(fl) * LG_AR_ETA), 1, mid, lo);
        lg_ar_keep(0.0, lg_ar_up(fu + fabs(fu) * LG_AR_ETA), -1, mid, up);
        return;
    }
    if (!I->relu_like || I->pwl) return; /* a piecewise-linear kind's samples are exact */
    double G = I->gap(p, l, u, NULL);
    if (!(G >= 0) || !isfinite(G)) return;
    G = lg_ar_up(G * (1.0 + LG_AR_ETA));
    lg_ar_keep(0.0, -G, 1, mid, lo);
    lg_ar_keep(1.0, -G, 1, mid, lo);
    if (u <= 0.0) {
        lg_ar_keep(0.0, G, -1, mid, up);
    } else if (l >= 0.0) {
        lg_ar_keep(1.0, G, -1, mid, up);
    } else {
        double s = u / (u - l);
        s = s + s * 0x1p-50; /* ≥ u/(u − l) */
        if (!(s <= 1.0)) s = 1.0;
        double c = lg_ar_up(-s * l);
        lg_ar_keep(s, lg_ar_up(c + G), -1, mid, up);
    }
}

static void lg_ar_vacuous(const lg_act_info *I, lg_act_lines *r)
{
    r->lo_s = r->up_s = 0.0;
    r->lo_c = I && I->bounded ? I->range_lo : -INFINITY;
    r->up_c = I && I->bounded ? I->range_hi : INFINITY;
}

/* The point d between a and b (the tangent point's side of the inflection
 * at b) whose tangent passes through (e, f(e)): a sign change of
 * f(d) + f'(d)(e − d) − f(e) between a and b, bisected. 0 if none. */
static int lg_ar_through(const lg_act_info *I, double p, double a, double b, double e, double *d)
{
    double fe = I->f(e, p);
    double ga = I->f(a, p) + I->df(a, p) * (e - a) - fe, gb = I->f(b, p) + I->df(b, p) * (e - b) - fe;
    if (!(ga * gb < 0.0)) return 0;
    for (int it = 0; it < 60; it++) {
        double m = a + 0.5 * (b - a), gm = I->f(m, p) + I->df(m, p) * (e - m) - fe;
        if ((gm < 0.0) == (ga < 0.0)) a = m, ga = gm;
        else b = m;
    }
    *d = a;
    return isfinite(a);
}

/* The flat, tangent and chord candidates of one side. */
static void lg_ar_side(const lg_act_info *I, const lg_ar_s *S, double pp, double l, double u, double mid,
                       const double *tp, int ntp, int sg, int only_tangent, lg_ar_best *B)
{
    const double *F = sg > 0 ? S->flo : S->fup;
    if (only_tangent) {
        for (int i = 0; i < ntp; i++) {
            double d = tp[i], s = I->df(d, pp);
            lg_ar_try(S, s, I->f(d, pp) - s * d, sg, mid, B);
        }
        return;
    }
    double ext = F[0];
    for (int i = 1; i < S->n; i++)
        if (sg > 0 ? F[i] < ext : F[i] > ext) ext = F[i];
    lg_ar_try(S, 0.0, ext, sg, mid, B);
    for (int i = 0; i < ntp; i++) {
        double d = tp[i], s = I->df(d, pp);
        lg_ar_try(S, s, I->f(d, pp) - s * d, sg, mid, B);
    }
    if (u > l) {
        double s = (F[S->n - 1] - F[0]) / (u - l);
        lg_ar_try(S, s, F[0] - s * l, sg, mid, B);
    }
}

static void lg_ar_relax(lg_act a, double p, double l, double u, double tlo, double tup, lg_act_lines *r)
{
    const lg_act_info *I = lg_act_info_of(a);
    lg_ar_vacuous(I, r);
    if (!I || !I->smooth || !isfinite(l) || !isfinite(u) || !(l <= u) || !isfinite(u - l)) return;
    if (!I->has_param) p = 1.0; /* gelu: λ = 1 */
    double pu = I->softplus ? nextafter(p, INFINITY) : p;
    double mid = l + 0.5 * (u - l);
    /* tangent points: the caller's, else the middle of [l, u], its ends and
     * the middle of each curvature region inside */
    double tl[8], tu[8];
    int nl = 0, nu = 0;
    if (tlo == tlo) tl[nl++] = l + (tlo < 0 ? 0 : tlo > 1 ? 1 : tlo) * (u - l);
    if (tup == tup) tu[nu++] = l + (tup < 0 ? 0 : tup > 1 ? 1 : tup) * (u - l);
    if (tlo != tlo || tup != tup) {
        double cand[8], pts[2];
        int nc = 0, left;
        cand[nc++] = mid;
        cand[nc++] = l;
        cand[nc++] = u;
        int k = I->curv ? I->curv(p, pts, &left) : 0;
        double infl = k == 1 && left > 0 ? pts[0] : NAN; /* an S shape's one inflection */
        double a0 = l;
        for (int i = 0; i <= k; i++) {
            double b0 = i < k ? pts[i] : u;
            if (b0 > u) b0 = u;
            if (b0 > a0) cand[nc++] = a0 + 0.5 * (b0 - a0);
            if (b0 > a0) a0 = b0;
        }
        for (int i = 0; i < nc; i++) {
            if (tlo != tlo) tl[nl++] = cand[i];
            if (tup != tup) tu[nu++] = cand[i];
        }
        /* an increasing S shape across its inflection: the tangents through
         * the far end (CROWN's S-shape lines), below through (u, f(u)) and
         * above through (l, f(l)); located by bisection, certified like any */
        if (I->increasing && l < infl && u > infl) {
            double d;
            if (tlo != tlo && lg_ar_through(I, p, l, infl, u, &d)) tl[nl++] = d;
            if (tup != tup && lg_ar_through(I, p, u, infl, l, &d)) tu[nu++] = d;
        }
    }
    double extra[16];
    int ne = 0;
    for (int i = 0; i < nl; i++) extra[ne++] = tl[i];
    for (int i = 0; i < nu; i++) extra[ne++] = tu[i];
    lg_ar_s S;
    lg_ar_sample(I, p, pu, l, u, extra, ne, &S);
    lg_ar_best lo = {0, 0, 0, 0}, up = {0, 0, 0, 0};
    if (tlo != tlo) lg_ar_presets(I, p, l, u, mid, &lo, &up);
    else if (tup != tup) {
        lg_ar_best dummy = {0, 0, 0, 0};
        lg_ar_presets(I, p, l, u, mid, &dummy, &up);
    }
    lg_ar_side(I, &S, p, l, u, mid, tl, nl, 1, tlo == tlo, &lo);
    lg_ar_side(I, &S, pu, l, u, mid, tu, nu, -1, tup == tup, &up);
    if (lo.ok) {
        r->lo_s = lo.s;
        r->lo_c = lo.c;
    }
    if (up.ok) {
        r->up_s = up.s;
        r->up_c = up.c;
    }
}

void lg_act_image(lg_act a, double p, double l, double u, double *flo, double *fhi)
{
    const lg_act_info *I = lg_act_info_of(a);
    lg_act_lines r;
    lg_ar_vacuous(I, &r);
    *flo = r.lo_c;
    *fhi = r.up_c;
    if (!I || !I->smooth || !isfinite(l) || !isfinite(u) || !(l <= u) || !isfinite(u - l)) return;
    if (!I->has_param) p = 1.0; /* gelu: λ = 1 */
    double pu = I->softplus ? nextafter(p, INFINITY) : p;
    double mid = l + 0.5 * (u - l);
    lg_ar_s S;
    lg_ar_sample(I, p, pu, l, u, NULL, 0, &S);
    lg_ar_best lo = {0, 0, 0, 0}, up = {0, 0, 0, 0};
    /* flat presets only: the relu ± gap and monotone bounds at slope 0 */
    lg_ar_best plo = {0, 0, 0, 0}, pup = {0, 0, 0, 0};
    lg_ar_presets(I, p, l, u, mid, &plo, &pup);
    double ext = S.flo[0], exu = S.fup[0];
    for (int i = 1; i < S.n; i++) {
        if (S.flo[i] < ext) ext = S.flo[i];
        if (S.fup[i] > exu) exu = S.fup[i];
    }
    lg_ar_try(&S, 0.0, ext, 1, mid, &lo);
    lg_ar_try(&S, 0.0, exu, -1, mid, &up);
    /* relu ± G at slope 0 is −G below; above it is relu(u) + G */
    if (I->relu_like && !I->pwl && I->gap) {
        double G = I->gap(p, l, u, NULL);
        if (G >= 0 && isfinite(G)) {
            G = lg_ar_up(G * (1.0 + LG_AR_ETA));
            double rl = l > 0 ? l : 0.0, ru = u > 0 ? u : 0.0;
            lg_ar_keep(0.0, lg_ar_down(rl - G), 1, mid, &lo);
            lg_ar_keep(0.0, lg_ar_up(ru + G), -1, mid, &up);
        }
    } else if (I->increasing) {
        lo = lo.ok && lo.c > plo.c ? lo : plo;
        up = up.ok && up.c < pup.c ? up : pup;
    }
    if (lo.ok) *flo = lo.c;
    if (up.ok) *fhi = up.c;
}

/* A memo of lg_act_relax per thread: branch and bound asks for the lines
 * of the same neuron on the same interval node after node (only the split
 * neuron's and the re-bounded layers' intervals change). Direct mapped,
 * keyed by every argument bit for bit; a hit returns the lines computed
 * for those arguments, so results do not depend on the memo. Each thread's
 * memo is freed when the thread exits. */
#define LG_AR_MEMO 16384
typedef struct lg_ar_memo_e {
    double key[5];
    int a, used;
    lg_act_lines r;
} lg_ar_memo_e;

static pthread_key_t lg_ar_memo_key;
static pthread_once_t lg_ar_memo_once = PTHREAD_ONCE_INIT;
static int lg_ar_memo_ok;

static void lg_ar_memo_make(void) { lg_ar_memo_ok = pthread_key_create(&lg_ar_memo_key, free) == 0; }

static lg_ar_memo_e *lg_ar_memo(void)
{
    pthread_once(&lg_ar_memo_once, lg_ar_memo_make);
    if (!lg_ar_memo_ok) return NULL;
    lg_ar_memo_e *m = pthread_getspecific(lg_ar_memo_key);
    if (!m && (m = calloc(LG_AR_MEMO, sizeof *m)) != NULL && pthread_setspecific(lg_ar_memo_key, m) != 0) {
        free(m);
        m = NULL;
    }
    return m;
}

void lg_act_relax(lg_act a, double p, double l, double u, double tlo, double tup, lg_act_lines *r)
{
    double key[5] = {p, l, u, tlo, tup};
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 5; i++) {
        uint64_t b;
        memcpy(&b, &key[i], sizeof b);
        h = (h ^ b) * 0xff51afd7ed558ccdu;
        h ^= h >> 33;
    }
    lg_ar_memo_e *m = lg_ar_memo();
    lg_ar_memo_e *e = m ? &m[h % LG_AR_MEMO] : NULL;
    if (e && e->used && e->a == (int)a && memcmp(e->key, key, sizeof key) == 0) {
        *r = e->r;
        return;
    }
    lg_ar_relax(a, p, l, u, tlo, tup, r);
    if (e) {
        memcpy(e->key, key, sizeof key);
        e->a = (int)a;
        e->r = *r;
        e->used = 1;
    }
}
