/* inputs.c — .npy or text input vectors (inputs.h). */
#include "cli/inputs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/npy.h"

/* Parse one text line into x[n_in]; returns the count of values (0 for a
 * blank/comment line), or with lg_fail set -1 (not a number) or -2 (a row
 * of the wrong size: the file does not fit the network). */
static int lg_inputs_parse_line(char *line, double *x, int n_in, const char *path, size_t lineno)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\r\n,", &save); tok; tok = strtok_r(NULL, " \t\r\n,", &save)) {
        char *end;
        double v = strtod(tok, &end); /* overflow gives ±inf; underflow is fine */
        if (end == tok || *end || !isfinite(v)) {
            lg_fail(LG_ERR_FORMAT, "%s:%zu: value %d: expected a finite number, got '%s'", path, lineno, n + 1, tok);
            return -1;
        }
        if (n == n_in) {
            lg_fail(LG_ERR_ARG, "%s:%zu: more than %d values (the network has %d inputs)", path, lineno, n_in, n_in);
            return -2;
        }
        x[n++] = v;
    }
    if (n != 0 && n != n_in) {
        lg_fail(LG_ERR_ARG, "%s:%zu: expected %d values, got %d (the network has %d inputs)", path, lineno, n_in, n, n_in);
        return -2;
    }
    return n;
}

static lg_status lg_inputs_text(FILE *f, const char *path, int n_in, double **X, size_t *n)
{
    size_t cap = 0, rows = 0, lcap = 0, lineno = 0;
    double *A = NULL;
    char *line = NULL;
    lg_status st = LG_OK;
    while (getline(&line, &lcap, f) != -1) {
        lineno++;
        if (rows == cap) {
            size_t nc = cap ? 2 * cap : 64;
            double *B = realloc(A, nc * (size_t)n_in * sizeof *B);
            if (!B) {
                st = lg_fail(LG_ERR_NOMEM, "%s: cannot hold %zu inputs", path, nc);
                goto fail;
            }
            A = B, cap = nc;
        }
        int k = lg_inputs_parse_line(line, A + rows * (size_t)n_in, n_in, path, lineno);
        if (k < 0) {
            st = k == -2 ? LG_ERR_ARG : LG_ERR_FORMAT;
            goto fail;
        }
        rows += k > 0;
    }
    if (ferror(f)) {
        st = lg_fail(LG_ERR_IO, "%s: read error", path);
        goto fail;
    }
    free(line);
    *X = A, *n = rows;
    return LG_OK;
fail:
    free(line);
    free(A);
    return st;
}

static lg_status lg_inputs_npy(const char *path, int n_in, double **X, size_t *n)
{
    lg_npy a;
    lg_status st = lg_npy_load(&a, path);
    if (st != LG_OK) return st;
    if (a.ndim == 1 && (a.n == (size_t)n_in || n_in == 1)) { /* one input (n_in values), or n inputs of one value */
        *X = a.data, *n = n_in == 1 ? a.n : 1;
        return LG_OK;
    }
    if (a.ndim < 2 || a.cols != (size_t)n_in) {
        if (a.ndim < 2)
            st = lg_fail(LG_ERR_ARG, "%s: a 1-d array of %zu values, but the network has %d inputs (expected shape (%d,) "
                         "for one input or (n, %d))", path, a.n, n_in, n_in, n_in);
        else
            st = lg_fail(LG_ERR_ARG, "%s: 'shape' must be (n, %d) or (%d,) for a network with %d inputs (got %zu values "
                         "per row)", path, n_in, n_in, n_in, a.cols);
        lg_npy_free(&a);
        return st;
    }
    *X = a.data, *n = a.n; /* ownership moves to the caller */
    return LG_OK;
}

lg_status lg_cli_data_rows(lg_dataset *ds, double **X, const char *spec, const char *split, int n_in,
                           const char *what)
{
    double *xd = NULL;
    *X = NULL;
    lg_status st = lg_data_load_spec_exact(ds, &xd, spec, split);
    if (st != LG_OK) return st;
    if (xd && ds->dim == n_in) { /* the file's float64 values themselves */
        *X = xd;
        return LG_OK;
    }
    free(xd);
    if ((st = lg_dataset_require_exact(ds, spec)) != LG_OK || (st = lg_dataset_fit(ds, n_in, what, spec)) != LG_OK)
        goto fail;
    size_t m = ds->n * (size_t)n_in;
    if (!(*X = malloc((m ? m : 1) * sizeof **X))) {
        st = lg_fail(LG_ERR_NOMEM, "cannot allocate %zu inputs", ds->n);
        goto fail;
    }
    for (size_t i = 0; i < m; i++) (*X)[i] = ds->x[i];
    return LG_OK;
fail:
    lg_dataset_free(ds);
    return st;
}

lg_status lg_cli_inputs_read(const char *path, int n_in, double **X, size_t *n)
{
    *X = NULL, *n = 0;
    if (strcmp(path, "-") == 0) return lg_inputs_text(stdin, "<stdin>", n_in, X, n);
    FILE *f = fopen(path, "rb");
    if (!f) return lg_fail(LG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    unsigned char m[6] = {0};
    size_t got = fread(m, 1, 6, f);
    size_t l = strlen(path);
    int npy = (got == 6 && memcmp(m, "\x93NUMPY", 6) == 0) || (l > 4 && strcmp(path + l - 4, ".npy") == 0);
    lg_status st;
    if (npy) {
        fclose(f);
        return lg_inputs_npy(path, n_in, X, n);
    }
    rewind(f);
    st = lg_inputs_text(f, path, n_in, X, n);
    fclose(f);
    return st;
}
