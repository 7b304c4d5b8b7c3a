/* devtf.c — what the Transformer kinds' deviation rules share (devtf_kind.h)
 * and the deviation table that reaches each kind's own file (devtf.h lg_devop). */
#include "verify/devtf.h"

#include <float.h>
#include <math.h>

#include "core/net.h"
#include "verify/devtf_kind.h"

static const lg_devop lg_devops[] = {
    {LG_LAYER_BILINEAR, lg_devtf_product_work, lg_devtf_product_node, lg_devtf_product_noise, NULL,
     lg_devtf_product_envelope},
    {LG_LAYER_SOFTMAX, lg_devtf_group_work, lg_devtf_softmax_node, lg_devtf_softmax_noise, NULL,
     lg_devtf_softmax_envelope},
    {LG_LAYER_LAYERNORM, lg_devtf_group_work, lg_devtf_layernorm_node, lg_devtf_layernorm_noise,
     lg_devtf_layernorm_centred, lg_devtf_layernorm_envelope},
};

const lg_devop *lg_devop_of(lg_layer_kind k)
{
    for (size_t i = 0; i < sizeof lg_devops / sizeof *lg_devops; i++)
        if (lg_devops[i].kind == k) return &lg_devops[i];
    return NULL;
}

void lg_devtf_envelope(const lg_linear *L, const double *la, const double *ua, const double *ea, const double *ma,
                       const double *lb, const double *ub, const double *eb, const double *mb, double *s,
                       lg_dv *work, double *d, double *bx)
{
    lg_devop_of(L->kind)->envelope(L, la, ua, ea, ma, lb, ub, eb, mb, s, work, d, bx);
}

size_t lg_devtf_node_work(const lg_linear *L) { return lg_devop_of(L->kind)->work(L); }

void lg_devtf_noise(const lg_linear *L, const double *xa, const double *ma, const double *xb, const double *mb,
                    double *xo)
{
    lg_devop_of(L->kind)->noise(L, xa, ma, xb, mb, xo);
}

int lg_devtf_centred(const lg_linear *L, const double *err, const double *clo_in, const double *chi_in,
                     double *clo, double *chi)
{
    const lg_devop *op = lg_devop_of(L->kind);
    return op && op->centred ? op->centred(L, err, clo_in, chi_in, clo, chi) : 0;
}

int lg_dev_widen(size_t g, const double *l, const double *u, const double *e, double *wl, double *wu)
{
    for (size_t j = 0; j < g; j++) {
        if (!(e[j] >= 0.0)) return 0;
        wl[j] = lg_dn(l[j] - e[j]);
        wu[j] = lg_up(u[j] + e[j]);
        if (!isfinite(wl[j]) || !isfinite(wu[j]) || !(wl[j] <= wu[j])) return 0;
    }
    return 1;
}

int lg_dev_apply(size_t g, const lg_dv *J, const double *e, double *d)
{
    int ok = 1;
    for (size_t i = 0; i < g; i++) {
        double s = 0.0;
        for (size_t j = 0; j < g; j++)
            if (e[j] != 0.0) s = lg_up(s + lg_up(lg_dv_mag(J[i * g + j]) * e[j]));
        if (!(s < INFINITY)) {
            s = INFINITY;
            ok = 0;
        }
        d[i] = s;
    }
    return ok;
}

double lg_devtf_addu(double a, double b)
{
    double s = lg_up(a + b);
    return s == s ? s : INFINITY;
}

void lg_devtf_plane_image(int g, const double *l, const double *u, const double *pw, const double *pc,
                          const double *qw, const double *qc, double *lo, double *hi)
{
    for (int i = 0; i < g; i++) {
        double a = pc[i], b = qc[i];
        for (int j = 0; j < g; j++) {
            double p = pw[(size_t)i * g + j], q = qw[(size_t)i * g + j];
            a = lg_dn(a + fmin(lg_dn(p * l[j]), lg_dn(p * u[j])));
            b = lg_up(b + fmax(lg_up(q * l[j]), lg_up(q * u[j])));
        }
        if (a == a && a > lo[i]) lo[i] = a;
        if (b == b && b < hi[i]) hi[i] = b;
    }
}

size_t lg_devtf_group_work(const lg_linear *L) { return LG_DEVTF_NODE_WORK((size_t)L->op.group); }

void lg_devtf_groups(const lg_linear *L, const double *al, const double *ah, const double *ea, const double *clo,
                     const double *chi, double *lo, double *hi, double *e, double *work, lg_devtf_group_fn fn)
{
    const int n = L->n_out;
    const int g = L->op.group;
    lg_dv *w = (lg_dv *)work;
    double *d = work + 2 * LG_DEVTF_WORK((size_t)g), *pw = d + g, *qw = pw + (size_t)g * g, *pc = qw + (size_t)g * g,
           *qc = pc + g;
    const lg_devtf_gscr c = {w, d, pw, qw, pc, qc};
    for (int s = 0; s < n; s += g) fn(L, s, al + s, ah + s, ea + s, clo, chi, lo, hi, e, &c);
}

void lg_devtf_group_max(int g, const double *xa, const double *ma, double *mx_out, double *mm_out)
{
    double mx = 0.0, mm = 0.0;
    for (int i = 0; i < g; i++) { /* NaN propagates (fmax would drop it) */
        if (!(xa[i] <= mx)) mx = xa[i];
        if (!(ma[i] <= mm)) mm = ma[i];
    }
    if (mx != mx || mm != mm) mx = mm = INFINITY;
    *mx_out = mx;
    *mm_out = mm;
}

int lg_devtf_node(const lg_linear *L, const double *al, const double *ah, const double *ea, const double *bl,
                  const double *bh, const double *eb, const double *clo, const double *chi, double *lo, double *hi,
                  double *e, double *work)
{
    int ok = 1;
    const int n = L->n_out;
    lg_devop_of(L->kind)->node(L, al, ah, ea, bl, bh, eb, clo, chi, lo, hi, e, work);
    for (int o = 0; o < n; o++) {
        if (!(lo[o] >= -DBL_MAX)) lo[o] = -INFINITY, ok = 0;
        if (!(hi[o] <= DBL_MAX)) hi[o] = INFINITY, ok = 0;
        if (!(e[o] <= DBL_MAX)) e[o] = INFINITY, ok = 0;
    }
    return ok;
}
