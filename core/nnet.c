/* nnet.c — the .nnet reader (see nnet.h). */
#include "core/nnet.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

/* A cursor over the text, line by line. */
typedef struct lg_nnet_in {
    const char *p, *end, *name;
    size_t line;         /* number of the line being read (1-based) */
    const char *lp, *le; /* the current line [lp, le) */
} lg_nnet_in;

/* Next line that is neither blank nor a "//" comment; 0 at the end. */
static int lg_nnet_next_line(lg_nnet_in *in)
{
    while (in->p < in->end) {
        const char *s = in->p, *e = memchr(s, '\n', (size_t)(in->end - s));
        if (!e) e = in->end;
        in->p = e < in->end ? e + 1 : e;
        in->line++;
        const char *t = s;
        while (t < e && (*t == ' ' || *t == '\t' || *t == '\r')) t++;
        if (t == e || (e - t >= 2 && t[0] == '/' && t[1] == '/')) continue;
        in->lp = t;
        in->le = e;
        return 1;
    }
    return 0;
}

/* Read exactly n numbers from the next line (comma or blank separated, an
 * optional trailing comma) into v; what names them in messages. */
static lg_status lg_nnet_numbers(lg_nnet_in *in, double *v, size_t n, const char *what)
{
    if (!lg_nnet_next_line(in))
        return lg_fail(LG_ERR_FORMAT, "%s:%zu: the file ends where %s (%zu numbers) were expected", in->name, in->line,
                       what, n);
    char buf[64];
    const char *q = in->lp;
    for (size_t i = 0;; i++) {
        while (q < in->le && (*q == ' ' || *q == '\t' || *q == '\r' || *q == ',')) q++;
        if (q == in->le) {
            if (i == n) return LG_OK;
            return lg_fail(LG_ERR_FORMAT, "%s:%zu: %s: expected %zu numbers, got %zu", in->name, in->line, what, n, i);
        }
        size_t k = 0;
        while (q + k < in->le && q[k] != ',' && q[k] != ' ' && q[k] != '\t' && q[k] != '\r') k++;
        if (i == n)
            return lg_fail(LG_ERR_FORMAT, "%s:%zu: %s: expected %zu numbers, got more", in->name, in->line, what, n);
        if (k >= sizeof buf)
            return lg_fail(LG_ERR_FORMAT, "%s:%zu: %s: number %zu is too long", in->name, in->line, what, i + 1);
        memcpy(buf, q, k);
        buf[k] = '\0';
        char *e;
        errno = 0;
        double x = strtod(buf, &e);
        if (*e != '\0' || !isfinite(x))
            return lg_fail(LG_ERR_FORMAT, "%s:%zu: %s: number %zu: expected a finite number, got '%s'", in->name,
                           in->line, what, i + 1, buf);
        v[i] = x;
        q += k;
    }
}

/* An integer field in [lo, hi]. */
static lg_status lg_nnet_int(const lg_nnet_in *in, double x, const char *what, long lo, long hi, int *out)
{
    if (!(x >= (double)lo && x <= (double)hi) || x != floor(x))
        return lg_fail(LG_ERR_FORMAT, "%s:%zu: %s: expected an integer in [%ld, %ld], got %g", in->name, in->line, what,
                       lo, hi, x);
    *out = (int)x;
    return LG_OK;
}

int lg_nnet_detect(const char *path, const unsigned char *head, size_t n)
{
    size_t l = strlen(path);
    if ((l > 5 && strcmp(path + l - 5, ".nnet") == 0) || (l > 8 && strcmp(path + l - 8, ".nnet.gz") == 0)) return 1;
    return n >= 2 && head[0] == '/' && head[1] == '/';
}

lg_status lg_nnet_parse(lg_net *net, const char *text, size_t len, const char *name)
{
    memset(net, 0, sizeof *net);
    lg_nnet_in in = {.p = text, .end = text + len, .name = name};
    double h[4];
    int L = 0, n_in = 0, n_out = 0, max_size = 0;
    lg_status st = lg_nnet_numbers(&in, h, 4, "numLayers, inputSize, outputSize, maxLayerSize");
    if (st != LG_OK) return st;
    if ((st = lg_nnet_int(&in, h[0], "numLayers", 1, LG_NET_MAX_LAYERS - 1, &L)) != LG_OK ||
        (st = lg_nnet_int(&in, h[1], "inputSize", 1, LG_NET_MAX_DIM, &n_in)) != LG_OK ||
        (st = lg_nnet_int(&in, h[2], "outputSize", 1, LG_NET_MAX_DIM, &n_out)) != LG_OK ||
        (st = lg_nnet_int(&in, h[3], "maxLayerSize", 1, LG_NET_MAX_DIM, &max_size)) != LG_OK)
        return st;
    /* every count below is at most the file's length: a hostile header cannot make a giant allocation */
    if ((size_t)L + 1 > len || (size_t)n_in + 1 > len)
        return lg_fail(LG_ERR_FORMAT, "%s:%zu: the header's sizes are larger than the file", name, in.line);
    int *dims = malloc(((size_t)L + 2) * sizeof *dims);
    double *v = malloc(((size_t)(n_in > L + 1 ? n_in : L + 1) + 2) * sizeof *v); /* the sizes, the minimums */
    double *mean = malloc(((size_t)n_in + 1) * sizeof *mean), *range = malloc(((size_t)n_in + 1) * sizeof *range);
    if (!dims || !v || !mean || !range) {
        st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", name);
        goto done;
    }
    if ((st = lg_nnet_numbers(&in, v, (size_t)L + 1, "layer sizes")) != LG_OK) goto done;
    size_t n_params = 0;
    for (int k = 0; k <= L; k++) {
        if ((st = lg_nnet_int(&in, v[k], "layer size", 1, max_size, &dims[k])) != LG_OK) goto done;
        if (k > 0) n_params += (size_t)dims[k] * ((size_t)dims[k - 1] + 1);
    }
    if (dims[0] != n_in || dims[L] != n_out) {
        st = lg_fail(LG_ERR_FORMAT, "%s:%zu: layer sizes: the first must be inputSize %d and the last outputSize %d, "
                     "got %d and %d", name, in.line, n_in, n_out, dims[0], dims[L]);
        goto done;
    }
    if (n_params > len / 2 || n_params > LG_NET_MAX_PARAMS) { /* each number takes at least 2 bytes */
        st = lg_fail(LG_ERR_FORMAT, "%s: the layer sizes need %zu weights and biases, more than the file holds", name,
                     n_params);
        goto done;
    }
    double flag;
    if ((st = lg_nnet_numbers(&in, &flag, 1, "the symmetric flag")) != LG_OK) goto done;
    if ((st = lg_nnet_numbers(&in, v, (size_t)n_in, "input minimums")) != LG_OK) goto done;
    double *vmax = malloc((size_t)n_in * sizeof *vmax);
    if (!vmax) {
        st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", name);
        goto done;
    }
    st = lg_nnet_numbers(&in, vmax, (size_t)n_in, "input maximums");
    for (int i = 0; st == LG_OK && i < n_in; i++)
        if (v[i] > vmax[i])
            st = lg_fail(LG_ERR_FORMAT, "%s:%zu: input %d: minimum %g above maximum %g", name, in.line, i, v[i], vmax[i]);
    free(vmax);
    if (st != LG_OK) goto done;
    if ((st = lg_nnet_numbers(&in, mean, (size_t)n_in + 1, "means (inputSize + 1)")) != LG_OK) goto done;
    if ((st = lg_nnet_numbers(&in, range, (size_t)n_in + 1, "ranges (inputSize + 1)")) != LG_OK) goto done;
    for (int i = 0; i <= n_in; i++)
        if (!(range[i] > 0.0)) {
            st = lg_fail(LG_ERR_FORMAT, "%s:%zu: range %d: expected a positive number (the normalisation divides by "
                         "it), got %g", name, in.line, i, range[i]);
            goto done;
        }
    /* the output's y·range + mean, when it is not the identity, is one more exact diagonal layer */
    int denorm = range[n_in] != 1.0 || mean[n_in] != 0.0;
    dims[L + 1] = n_out;
    if ((st = lg_net_init(net, L + denorm, dims, LG_ACT_RELU)) != LG_OK) goto done;
    lg_layer *last = &net->layers[L - 1];
    last->act = LG_ACT_IDENTITY;
    last->lambda = 1.0;
    last->s = 0.0;
    char what[96];
    for (int k = 0; k < L; k++) {
        lg_layer *Lk = &net->layers[k];
        for (int o = 0; o < Lk->n_out; o++) {
            snprintf(what, sizeof what, "layer %d weight row %d", k + 1, o + 1);
            if ((st = lg_nnet_numbers(&in, Lk->lin.W + (size_t)o * (size_t)Lk->lin.n_in, (size_t)Lk->lin.n_in, what)) != LG_OK)
                goto done;
        }
        for (int o = 0; o < Lk->n_out; o++) {
            snprintf(what, sizeof what, "layer %d bias %d", k + 1, o + 1);
            if ((st = lg_nnet_numbers(&in, &Lk->b[o], 1, what)) != LG_OK) goto done;
        }
    }
    if (lg_nnet_next_line(&in)) {
        st = lg_fail(LG_ERR_FORMAT, "%s:%zu: more lines than the layer sizes ask for", name, in.line);
        goto done;
    }
    if (denorm) {
        lg_layer *D = &net->layers[L];
        for (int o = 0; o < n_out; o++) {
            D->lin.W[(size_t)o * (size_t)n_out + (size_t)o] = range[n_in];
            D->b[o] = mean[n_in];
        }
    }
    int identity = 1;
    for (int i = 0; i < n_in; i++) identity &= mean[i] == 0.0 && range[i] == 1.0;
    if (!identity) {
        if (!(net->in_sub = malloc((size_t)n_in * sizeof *net->in_sub)) ||
            !(net->in_div = malloc((size_t)n_in * sizeof *net->in_div))) {
            st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", name);
            goto done;
        }
        memcpy(net->in_sub, mean, (size_t)n_in * sizeof *mean);
        memcpy(net->in_div, range, (size_t)n_in * sizeof *range);
    }
done:
    if (st != LG_OK) lg_net_free(net);
    free(dims);
    free(v);
    free(mean);
    free(range);
    return st;
}
