/* npy_data.c — a pair of .npy files (X, y) as an lg_dataset, and the
 * --data spec (IDX directory or .npy files) shared by the CLI (npy.h). */
#include "core/npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* As lg_npy_load_dataset; with keep non-NULL and a file holding values
 * float32 cannot (ds->lossy), *keep receives them in double ([n][dim],
 * owned by the caller), else NULL. */
static lg_status lg_npy_dataset(lg_dataset *ds, const char *x_path, const char *y_path, double **keep)
{
    memset(ds, 0, sizeof *ds);
    if (keep) *keep = NULL;
    lg_npy X = {0}, Y = {0};
    lg_status st;
    if ((st = lg_npy_load(&X, x_path)) != LG_OK) return st;
    if ((st = lg_npy_load(&Y, y_path)) != LG_OK) goto fail;
    if (X.ndim < 2 || X.cols == 0 || X.cols > 1000000) {
        st = lg_fail(LG_ERR_FORMAT, "%s: 'shape' must be (n, n_in) with 1 <= n_in <= 1000000 (got %d dimension%s)",
                     x_path, X.ndim, X.ndim == 1 ? "" : "s");
        goto fail;
    }
    if (X.n == 0) {
        st = lg_fail(LG_ERR_FORMAT, "%s: no examples (shape[0] = 0)", x_path);
        goto fail;
    }
    if (!(Y.ndim == 1 || (Y.ndim == 2 && Y.shape[1] == 1))) {
        st = lg_fail(LG_ERR_FORMAT, "%s: labels must have shape (n,) or (n, 1)", y_path);
        goto fail;
    }
    if (Y.n != X.n) {
        st = lg_fail(LG_ERR_FORMAT, "%s has %zu labels but %s has %zu examples", y_path, Y.n, x_path, X.n);
        goto fail;
    }
    size_t d = X.cols;
    ds->x = malloc(X.n * d * sizeof *ds->x);
    ds->y = malloc(X.n);
    if (!ds->x || !ds->y) {
        st = lg_fail(LG_ERR_NOMEM, "cannot allocate %zu examples", X.n);
        goto fail;
    }
    for (size_t i = 0; i < X.n * d; i++) {
        double v = X.data[i];
        if (!(v >= 0.0 && v <= 1.0)) {
            st = lg_fail(LG_ERR_FORMAT,
                         "%s: example %zu, feature %zu is %g; inputs must lie in [0, 1] (scale pixels by 1/255)",
                         x_path, i / d, i % d, v);
            goto fail;
        }
        ds->x[i] = (float)v;
        if (!ds->lossy && (double)ds->x[i] != v) ds->lossy = i + 1;
    }
    int maxl = 0;
    for (size_t i = 0; i < Y.n; i++) {
        double v = Y.data[i];
        if (!(v >= 0.0 && v <= 255.0) || v != (double)(int)v) {
            st = lg_fail(LG_ERR_FORMAT, "%s: label %zu is %g; labels must be integers in [0, 255]", y_path, i, v);
            goto fail;
        }
        ds->y[i] = (uint8_t)v;
        if ((int)v > maxl) maxl = (int)v;
    }
    ds->n = X.n;
    ds->dim = (int)d;
    ds->rows = X.ndim == 3 ? (int)X.shape[1] : 1;
    ds->cols = X.ndim == 3 ? (int)X.shape[2] : (int)d;
    ds->n_classes = maxl + 1;
    if (keep && ds->lossy) {
        *keep = X.data; /* ownership moves to the caller */
        X.data = NULL;
    }
    lg_npy_free(&X);
    lg_npy_free(&Y);
    return LG_OK;
fail:
    lg_dataset_free(ds);
    lg_npy_free(&X);
    lg_npy_free(&Y);
    return st;
}

lg_status lg_npy_load_dataset(lg_dataset *ds, const char *x_path, const char *y_path)
{
    return lg_npy_dataset(ds, x_path, y_path, NULL);
}

/* Split spec at commas into at most 4 fields of up to 4095 bytes; returns
 * the count, or -1 if there are more fields or one is too long or empty. */
static int lg_data_spec_split(const char *spec, char f[4][4096])
{
    int n = 0;
    const char *p = spec;
    for (;;) {
        const char *q = strchr(p, ',');
        size_t l = q ? (size_t)(q - p) : strlen(p);
        if (n == 4 || l == 0 || l >= 4096) return -1;
        memcpy(f[n], p, l);
        f[n++][l] = '\0';
        if (!q) break;
        p = q + 1;
    }
    return n;
}

static int lg_data_ends_npy(const char *s)
{
    size_t l = strlen(s);
    return l > 4 && strcmp(s + l - 4, ".npy") == 0;
}

int lg_data_spec_is_npy(const char *spec)
{
    char f[4][4096];
    int n = lg_data_spec_split(spec, f);
    if (n != 2 && n != 4) return lg_data_ends_npy(spec);
    for (int i = 0; i < n; i++)
        if (!lg_data_ends_npy(f[i])) return 0;
    return 1;
}

static lg_status lg_data_spec(lg_dataset *ds, const char *spec, const char *split, double **keep)
{
    memset(ds, 0, sizeof *ds);
    if (keep) *keep = NULL;
    if (!strchr(spec, ',') && !lg_data_ends_npy(spec)) return lg_data_load(ds, spec, split);
    char f[4][4096];
    int n = lg_data_spec_split(spec, f);
    if ((n != 2 && n != 4) || !lg_data_spec_is_npy(spec))
        return lg_fail(LG_ERR_ARG,
                       "--data '%s': expected a directory of IDX files, X.npy,y.npy or "
                       "Xtrain.npy,ytrain.npy,Xtest.npy,ytest.npy",
                       spec);
    int second = n == 4 && strcmp(split, "test") == 0;
    return lg_npy_dataset(ds, f[second ? 2 : 0], f[second ? 3 : 1], keep);
}

lg_status lg_data_load_spec(lg_dataset *ds, const char *spec, const char *split)
{
    return lg_data_spec(ds, spec, split, NULL);
}

lg_status lg_data_load_spec_exact(lg_dataset *ds, double **xd, const char *spec, const char *split)
{
    return lg_data_spec(ds, spec, split, xd);
}
