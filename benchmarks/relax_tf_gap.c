/* relax_tf_gap.c — how tight the softmax and layernorm planes are
 * (verify/relax_softmax.h, verify/relax_layernorm.h): for random boxes of
 * half-width w around points in [−2, 2]^g (gamma 1, beta 0, eps 1e-5), the
 * mean over outputs of (upper plane − lower plane at the box's centre) /
 * (width of the interval image). 1 means the planes are no better than the
 * interval image (they fall back to it). Run: build/lgelu_relax_tf_gap. */
#include <stdio.h>

#include "core/rng.h"
#include "verify/relax_layernorm.h"
#include "verify/relax_softmax.h"

int main(void)
{
    lg_rng r;
    lg_rng_init(&r, 1, 1);
    const double ws[] = {1e-3, 1e-2, 1e-1, 0.5};
    static double l[16], u[16], c[16], ga[16], be[16], lw[256], uw[256], lc[16], uc[16], il[16], ih[16];
    static lg_dv work[LG_SOFTMAX_WORK(16) + LG_LAYERNORM_WORK(16)];
    for (int ln = 0; ln < 2; ln++)
        for (int wi = 0; wi < 4; wi++)
            for (size_t g = 4; g <= 16; g *= 2) {
                double sum = 0;
                int cnt = 0;
                for (int b = 0; b < 50; b++) {
                    for (size_t j = 0; j < g; j++) {
                        c[j] = 4 * lg_rng_uniform(&r) - 2;
                        l[j] = c[j] - ws[wi];
                        u[j] = c[j] + ws[wi];
                        ga[j] = 1;
                        be[j] = 0;
                    }
                    if (ln) {
                        lg_relax_layernorm(g, l, u, 1e-5, ga, be, NULL, lw, lc, uw, uc, work);
                        lg_layernorm_image(g, l, u, 1e-5, ga, be, il, ih, work);
                    } else {
                        lg_relax_softmax(g, l, u, NULL, lw, lc, uw, uc, work);
                        lg_softmax_image(g, l, u, il, ih, work);
                    }
                    for (size_t i = 0; i < g; i++) {
                        double pl = lc[i], pu = uc[i];
                        for (size_t j = 0; j < g; j++) {
                            pl += lw[i * g + j] * c[j];
                            pu += uw[i * g + j] * c[j];
                        }
                        sum += (pu - pl) / (ih[i] - il[i]);
                        cnt++;
                    }
                }
                printf("%-9s g %2zu half-width %-6g plane gap / image width %.4f\n", ln ? "layernorm" : "softmax", g,
                       ws[wi], sum / cnt);
            }
    return 0;
}
