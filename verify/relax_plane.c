/* relax_plane.c — a plane applied to a row coefficient (relax_plane.h). */
#include "verify/relax_plane.h"

#include <math.h>

#include "verify/relax_iv.h"

void lg_relax_plane_apply(size_t n, const double *lo_w, double lo_c, const double *up_w, double up_c,
                          const double *xmax, double lam, double *coef, double *icpt, double *err)
{
    *icpt = 0.0;
    *err = 0.0;
    if (lam == 0.0) {
        for (size_t j = 0; j < n; j++) coef[j] = 0.0;
        return;
    }
    const double *w = lam > 0.0 ? lo_w : up_w;
    double c = lam > 0.0 ? lo_c : up_c;
    double e = 0.0;
    int bad = !isfinite(lam) || !isfinite(c);
    for (size_t j = 0; j < n; j++) {
        coef[j] = lam * w[j];
        if (coef[j] == 0.0 && w[j] == 0.0) continue; /* exact */
        double ac = fabs(coef[j]);
        if (!isfinite(ac) || !(xmax[j] >= 0.0)) bad = 1;
        e = lg_up(e + lg_up(lg_up(ac * 0x1p-51 + 0x1p-1073) * xmax[j]));
    }
    *icpt = lam * c;
    e = lg_up(lg_up(e + fabs(*icpt) * 0x1p-51) + 0x1p-1072);
    if (bad || !(e < INFINITY) || !isfinite(*icpt)) {
        e = INFINITY;
        if (!isfinite(*icpt)) *icpt = 0.0;
    }
    *err = e;
}
