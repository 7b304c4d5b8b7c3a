/* devtf_product.c — the product node's deviation rules: its bound of |a·b − a'·b'|, its
 * rounding, its step of lg_devtf_node and its noise entry
 * (devtf.h; the shared parts: devtf_kind.h). */
#include "verify/devtf.h"

#include <float.h>
#include <math.h>

#include "core/net.h"
#include "verify/devtf_kind.h"

double lg_dev_bilinear(double la, double ua, double ea, double lb, double ub, double eb)
{
    if (!(ea >= 0.0) || !(eb >= 0.0)) return INFINITY;
    double ma = lg_dv_mag((lg_dv){la, ua});
    double mb = lg_dv_mag((lg_dv){lg_dn(lb - eb), lg_up(ub + eb)});
    double d = lg_up(lg_up(ma * eb) + lg_up(mb * ea));
    return isnan(d) ? INFINITY : d;
}

double lg_devtf_round_product(int K, double mass)
{
    double r = lg_up(lg_up(lg_dev_gamma(K) * mass) * (1.0 + 1e-10)) + LG_DEVTF_TINY * K;
    return r == r ? r : INFINITY;
}

size_t lg_devtf_product_work(const lg_linear *L)
{
    (void)L;
    return LG_DEVTF_NODE_WORK(1);
}

void lg_devtf_product_node(const lg_linear *L, const double *al, const double *ah, const double *ea,
                           const double *bl, const double *bh, const double *eb, const double *clo, const double *chi,
                           double *lo, double *hi, double *e, double *work)
{
    (void)clo, (void)chi, (void)work;
    const int n = L->n_out;
    const size_t K = (size_t)L->op.K;
    const int *ia = L->map, *ib = L->map + (size_t)n * K;
    for (size_t o = 0; o < (size_t)n; o++) {
        lg_dv s = {0.0, 0.0};
        double mr = 0.0, mg = 0.0, d = 0.0;
        for (size_t q = o * K; q < (o + 1) * K; q++) {
            const int i = ia[q], j = ib[q];
            s = lg_dv_add(s, lg_dv_mul((lg_dv){al[i], ah[i]}, (lg_dv){bl[j], bh[j]}));
            double ma = lg_dv_mag((lg_dv){al[i], ah[i]}), mb = lg_dv_mag((lg_dv){bl[j], bh[j]});
            mr = lg_devtf_addu(mr, lg_up(ma * mb));
            mg = lg_devtf_addu(mg, lg_up(lg_up(ma + ea[i]) * lg_up(mb + eb[j])));
            d = lg_devtf_addu(d, lg_dev_bilinear(al[i], ah[i], ea[i], bl[j], bh[j], eb[j]));
        }
        double rr = lg_devtf_round_product((int)K, mr), rg = lg_devtf_round_product((int)K, mg);
        lo[o] = lg_dn(s.lo - rr);
        hi[o] = lg_up(s.hi + rr);
        e[o] = lg_devtf_addu(d, lg_devtf_addu(rr, rg));
    }
}

void lg_devtf_product_noise(const lg_linear *L, const double *xa, const double *ma, const double *xb,
                            const double *mb, double *xo)
{
    const size_t K = (size_t)L->op.K;
    const int *ia = L->map, *ib = L->map + (size_t)L->n_out * K;
    for (size_t o = 0; o < (size_t)L->n_out; o++) {
        double p = 0.0, mass = 0.0;
        for (size_t q = o * K; q < (o + 1) * K; q++) {
            const int i = ia[q], j = ib[q];
            p += ma[i] * xb[j] + (mb[j] + xb[j]) * xa[i];
            mass += ma[i] * mb[j];
        }
        const double g = lg_dev_gamma(2 * (int)K + 2);
        xo[o] = (p * (1.0 + g) + lg_devtf_round_product((int)K, mass * (1.0 + g))) * (1.0 + LG_DEVTF_EPS);
    }
}

void lg_devtf_product_envelope(const lg_linear *L, const double *la, const double *ua, const double *ea,
                               const double *ma, const double *lb, const double *ub, const double *eb,
                               const double *mb, double *s, lg_dv *work, double *d, double *bx)
{
    (void)work, (void)d, (void)bx;
    const size_t n = (size_t)L->n_out, K = (size_t)L->op.K;
    const int *ia = L->map, *ib = L->map + n * K;
    for (size_t o = 0; o < n; o++) {
        double sr = 0.0, mass = 0.0;
        for (size_t q = o * K; q < (o + 1) * K; q++) {
            size_t jb = (size_t)ib[q];
            sr = nextafter(sr + lg_dev_bilinear(la[ia[q]], ua[ia[q]], ea[ia[q]], lb[jb], ub[jb], eb[jb]), INFINITY);
            mass = nextafter(mass + nextafter(ma[ia[q]] * mb[jb], INFINITY), INFINITY);
        }
        s[o] = nextafter(sr + lg_devtf_round_product((int)K, mass), INFINITY);
    }
}
