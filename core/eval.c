/* eval.c — classification accuracy of a network on a dataset (eval.h). */
#include "core/eval.h"

#include <stdlib.h>

lg_status lg_eval_accuracy(const lg_net *net, const lg_dataset *ds, double *acc)
{
    const size_t chunk = 1000;
    int no = lg_net_n_out(net);
    *acc = 0.0;
    if (ds->dim != net->n_in)
        return lg_fail(LG_ERR_ARG, "network takes %d inputs but the data has %d features", net->n_in, ds->dim);
    double *X = malloc(chunk * (size_t)ds->dim * sizeof *X), *Y = malloc(chunk * (size_t)no * sizeof *Y);
    lg_status st = LG_OK;
    size_t correct = 0;
    if (!X || !Y) {
        st = lg_fail(LG_ERR_NOMEM, "cannot allocate evaluation buffers");
        goto done;
    }
    for (size_t s = 0; s < ds->n; s += chunk) {
        size_t m = ds->n - s < chunk ? ds->n - s : chunk;
        for (size_t i = 0; i < m * (size_t)ds->dim; i++) X[i] = ds->x[s * (size_t)ds->dim + i];
        if ((st = lg_net_forward_batch(net, X, Y, m)) != LG_OK) goto done;
        for (size_t r = 0; r < m; r++) {
            const double *y = Y + r * (size_t)no; /* [no] outputs of example s + r */
            int best = 0;
            for (int j = 1; j < no; j++)
                if (y[j] > y[best]) best = j;
            correct += best == ds->y[s + r];
        }
    }
    *acc = ds->n ? (double)correct / (double)ds->n : 0.0;
done:
    free(X);
    free(Y);
    return st;
}
