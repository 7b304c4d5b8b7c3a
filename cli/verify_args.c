/* verify_args.c — property options of `lgelu verify` / `lgelu encode`. */
#include "cli/verify_args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/inputs.h"
#include "core/idx.h"
#include "core/npy.h"
#include "verify/verify.h"
#include "verify/vnnlib.h"

void lg_verify_args_default(lg_verify_args *a)
{
    memset(a, 0, sizeof *a);
    a->data = LG_DATA_DEFAULT_DIR;
    a->index = LG_VA_UNSET;
    a->label = -1;
    a->eps = -1;
}

void lg_verify_args_free(lg_verify_args *a)
{
    free(a->indices);
    a->indices = NULL;
    a->n_indices = 0;
    if (a->ds_loaded) lg_dataset_free(&a->ds);
    a->ds_loaded = 0;
    free(a->xd);
    a->xd = NULL;
}

int lg_verify_args_index(lg_verify_args *a, const char *cmd, const char *spec)
{
    static const long max_ix = 1L << 30;
    long *ix = NULL;
    size_t n = 0, cap = 0;
    const char *p = spec;
    {
        /* one negative integer: kept, so the range check names the data's range */
        char *e;
        errno = 0;
        long v = strtol(spec, &e, 10);
        if (*spec == '-' && e != spec + 1 && *e == '\0' && errno == 0 && v > LG_VA_UNSET) {
            ix = malloc(sizeof *ix);
            if (!ix) return lg_cli_usage(cmd, "out of memory");
            ix[0] = v;
            n = 1;
            goto done;
        }
    }
    for (;;) {
        long lo, hi;
        char *end;
        errno = 0;
        if (!(*p >= '0' && *p <= '9')) goto bad;
        lo = strtol(p, &end, 10);
        if (errno || lo > max_ix) goto bad;
        hi = lo;
        if (*end == '-') {
            p = end + 1;
            if (!(*p >= '0' && *p <= '9')) goto bad;
            hi = strtol(p, &end, 10);
            if (errno || hi > max_ix) goto bad;
            if (hi < lo) {
                free(ix);
                return lg_cli_usage(cmd, "--index: range %ld-%ld ends before it starts (in '%s')", lo, hi, spec);
            }
        }
        if ((size_t)(hi - lo) + n >= LG_VERIFY_MAX_INDICES) {
            free(ix);
            return lg_cli_usage(cmd, "--index: at most %d instances in one run, '%s' has more", LG_VERIFY_MAX_INDICES,
                                spec);
        }
        for (long v = lo; v <= hi; v++) {
            if (n == cap) {
                cap = cap ? 2 * cap : 16;
                long *nx = realloc(ix, cap * sizeof *nx);
                if (!nx) {
                    free(ix);
                    fprintf(stderr, "lgelu %s: out of memory\n", cmd);
                    return 2;
                }
                ix = nx;
            }
            ix[n++] = v;
        }
        if (*end == '\0') break;
        if (*end != ',') goto bad;
        p = end + 1;
    }
done:
    free(a->indices);
    a->indices = ix;
    a->n_indices = (int)n;
    a->index = ix[0];
    return 0;
bad:
    free(ix);
    return lg_cli_usage(cmd, "--index: expected an integer in [0, %ld], a range A-B or a comma list of both "
                        "(e.g. 0-9,15,20-22), got '%s'", max_ix, spec);
}

int lg_verify_args_check(const char *cmd, const lg_verify_args *a)
{
    if (a->vnnlib) {
        if (a->index != LG_VA_UNSET || a->eps >= 0 || a->input)
            return lg_cli_usage(cmd, "--vnnlib cannot be combined with --index, --input or --eps");
        return 0;
    }
    if ((a->index != LG_VA_UNSET) == (a->input != NULL))
        return lg_cli_usage(cmd, "give either --vnnlib P, or --index I (or --input FILE) with --eps E");
    if (a->eps < 0) return lg_cli_usage(cmd, "--eps E is required with --index/--input");
    if (a->label >= 0 && !a->input) return lg_cli_usage(cmd, "--label only applies to --input");
    return 0;
}

/* 1 if path is a NumPy file (the .npy extension or the \x93NUMPY magic). */
static int lg_va_is_npy(const char *path)
{
    size_t l = strlen(path);
    if (l >= 4 && strcmp(path + l - 4, ".npy") == 0) return 1;
    unsigned char head[6] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    return got == 6 && memcmp(head, "\x93NUMPY", 6) == 0;
}

/* The one input vector of path: a .npy array of n values (shape (n,) or
 * (1, n); cli/inputs.h), or text holding n whitespace-separated numbers. */
static lg_status lg_va_read_vector(const char *path, int n, double *x)
{
    if (lg_va_is_npy(path)) {
        double *X = NULL;
        size_t rows = 0;
        lg_status st = lg_cli_inputs_read(path, n, &X, &rows);
        if (st != LG_OK) return st;
        if (rows != 1) st = lg_fail(LG_ERR_ARG, "%s: expected one input of %d values, got %zu", path, n, rows);
        else memcpy(x, X, (size_t)n * sizeof *x);
        free(X);
        return st;
    }
    FILE *f = fopen(path, "r");
    if (!f) return lg_fail(LG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    lg_status st = LG_OK;
    for (int i = 0; i < n; i++) {
        int got = fscanf(f, "%lf", &x[i]);
        if (got == EOF && !ferror(f)) { /* too short: the file does not fit the network */
            st = lg_fail(LG_ERR_ARG, "%s: %d numbers, expected %d (the network has %d inputs)", path, i, n, n);
            goto done;
        }
        if (got != 1 || !isfinite(x[i])) {
            st = lg_fail(LG_ERR_FORMAT, "%s: value %d: expected %d finite numbers", path, i, n);
            goto done;
        }
    }
    double extra;
    if (fscanf(f, "%lf", &extra) == 1)
        st = lg_fail(LG_ERR_ARG, "%s: more than %d numbers (the network has %d inputs)", path, n, n);
done:
    fclose(f);
    return st;
}

lg_status lg_verify_args_property(lg_verify_args *a, const lg_net *net, lg_prop *prop)
{
    int no = lg_net_n_out(net);
    lg_status st;
    memset(prop, 0, sizeof *prop);
    if (a->vnnlib) {
        snprintf(a->instance, sizeof a->instance, "%s", a->vnnlib);
        st = a->for_ref ? lg_vnnlib_read(prop, a->vnnlib, net->n_in, no) : lg_vnnlib_read_net(prop, a->vnnlib, net);
        if (st != LG_OK) return st;
        if ((st = lg_verify_apply_margin(prop, a->margin)) != LG_OK) lg_prop_free(prop);
        return st;
    }
    double *x0 = malloc((size_t)net->n_in * sizeof *x0);
    double *y = malloc(((size_t)2 * (size_t)lg_net_max_width(net) + (size_t)no) * sizeof *y);
    int label = (int)a->label;
    if (!x0 || !y) {
        st = lg_fail(LG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if (a->input) {
        snprintf(a->instance, sizeof a->instance, "input=%s eps=%g", a->input, a->eps);
        if ((st = lg_va_read_vector(a->input, net->n_in, x0)) != LG_OK) goto fail;
        if (label >= no) {
            st = lg_fail(LG_ERR_ARG, "--label: expected an integer in [0, %d] (the network has %d outputs), got %d", no - 1,
                         no, label);
            goto fail;
        }
        if (label < 0) { /* the network's own prediction at x0 */
            lg_net_forward(net, x0, y + 2 * (size_t)lg_net_max_width(net), y);
            const double *yy = y + 2 * (size_t)lg_net_max_width(net);
            label = 0;
            for (int j = 1; j < no; j++)
                if (yy[j] > yy[label]) label = j;
        }
    } else {
        snprintf(a->instance, sizeof a->instance, "index=%ld eps=%g", a->index, a->eps);
        if (!a->ds_loaded) {
            memset(&a->ds, 0, sizeof a->ds);
            if ((st = lg_cli_data_rows(&a->ds, &a->xd, a->data, "test", net->n_in, "the network")) != LG_OK) goto fail;
            a->ds_loaded = 1;
        }
        const lg_dataset ds = a->ds;
        if (a->index < 0 || (size_t)a->index >= ds.n) {
            st = lg_fail(LG_ERR_ARG, "--index: expected an integer in [0, %zu] (the test set of %s has %zu examples), got %ld",
                         ds.n ? ds.n - 1 : 0, a->data, ds.n, a->index);
            goto fail;
        }
        for (int i = 0; i < net->n_in; i++) x0[i] = a->xd[(size_t)a->index * (size_t)net->n_in + (size_t)i];
        label = ds.y[a->index];
        if (label >= no) {
            st = lg_fail(LG_ERR_ARG, "label %d of example %ld but the network has %d outputs", label, a->index, no);
            goto fail;
        }
    }
    a->label = label;
    st = lg_prop_robustness(prop, x0, net->n_in, a->eps, 0.0, 1.0, label, no, a->margin);
fail:
    if (st != LG_OK && a->ds_loaded) { /* not a usable data set: read it again next time */
        lg_dataset_free(&a->ds);
        a->ds_loaded = 0;
        free(a->xd);
        a->xd = NULL;
    }
    free(x0);
    free(y);
    return st;
}
