/* bab_input.c — input splitting (bab.h): bound a sub-box with the symbolic
 * bounds (intersected with the parent's, which stay sound on a sub-box) and
 * halve it along the input dimension where the hardest objective is most
 * sensitive: score_i = |A_i|·w_i, A the objective's back-substituted
 * coefficients over the normalised input and w_i the sub-box width there
 * (how much of the objective's range dimension i accounts for). */
#include <math.h>
#include <string.h>

#include "verify/bab_internal.h"

lg_status lg_bab_input_bound(const lg_bab_ctx *cx, const lg_bab_node *n, lg_bounds *b)
{
    lg_status st = lg_bounds_symbolic(b, cx->net, n->lo, n->hi);
    if (st != LG_OK || !n->pre) return st;
    /* inherited bounds: keep the tighter side (layout of lg_bab_bounds_save) */
    const double *p = n->pre + 2 * (size_t)cx->n_in;
    for (int k = 0; k < b->n_layers; k++) {
        int w = b->width[k];
        for (int i = 0; i < w; i++) {
            if (p[i] > b->lo[k][i]) b->lo[k][i] = p[i];
            if (p[w + i] < b->hi[k][i]) b->hi[k][i] = p[w + i];
        }
        p += 2 * (size_t)w;
    }
    return LG_OK;
}

lg_status lg_bab_input_split(const lg_bab_ctx *cx, const lg_bab_node *n, const lg_bounds *b, const double *ain,
                             lg_bab_node **c0, lg_bab_node **c1, const char **why)
{
    *c0 = *c1 = NULL;
    int best = -1, widest = -1;
    double best_s = 0, widest_r = 0;
    for (int i = 0; i < cx->n_in; i++) {
        double w = n->hi[i] - n->lo[i], w0 = cx->hi[i] - cx->lo[i];
        if (!(w > cx->o->min_width * w0) || !(w > 0)) continue;
        /* the midpoint must differ from both ends */
        double mid = n->lo[i] + 0.5 * w;
        if (!(mid > n->lo[i] && mid < n->hi[i])) continue;
        double s = fabs(ain[i]) * (b->xhi[i] - b->xlo[i]);
        if (s > best_s) {
            best_s = s;
            best = i;
        }
        if (w / w0 > widest_r) {
            widest_r = w / w0;
            widest = i;
        }
    }
    if (best < 0) best = widest; /* objective flat in every splittable dimension */
    if (best < 0) {
        *why = "sub-box below the minimum width";
        return LG_OK;
    }
    *c0 = lg_bab_node_child(cx, n);
    *c1 = lg_bab_node_child(cx, n);
    if (!*c0 || !*c1) {
        lg_bab_node_free(*c0);
        lg_bab_node_free(*c1);
        *c0 = *c1 = NULL;
        return lg_fail(LG_ERR_NOMEM, "bab: out of memory for a node");
    }
    double mid = n->lo[best] + 0.5 * (n->hi[best] - n->lo[best]);
    (*c0)->hi[best] = mid;
    (*c1)->lo[best] = mid;
    lg_bab_bounds_save(cx, b, (*c0)->pre);
    lg_bab_bounds_save(cx, b, (*c1)->pre);
    return LG_OK;
}
