/* idx.c — reading IDX datasets, gzip or plain (idx.h). */
#include "core/idx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define LG_IDX_MAX_ITEMS 100000000u
#define LG_IDX_MAX_SIDE 4096u

/* Read exactly n bytes or fail with a message naming the file. */
static lg_status lg_gz_read(gzFile g, void *dst, size_t n, const char *path, const char *what)
{
    unsigned char *p = dst;
    while (n > 0) {
        unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
        int got = gzread(g, p, chunk);
        if (got < 0) {
            int err;
            const char *m = gzerror(g, &err);
            return lg_fail(LG_ERR_FORMAT, "%s: corrupt compressed data while reading %s: %s", path, what, m);
        }
        if (got == 0) return lg_fail(LG_ERR_FORMAT, "%s: truncated while reading %s", path, what);
        p += got;
        n -= (size_t)got;
    }
    return LG_OK;
}

static uint32_t lg_be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

/* Open, read the header words (magic then ndims sizes). */
static lg_status lg_idx_open(const char *path, uint32_t want_magic, uint32_t *sizes, int nsizes, gzFile *out)
{
    gzFile g = gzopen(path, "rb");
    if (!g) return lg_fail(LG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    unsigned char h[16];
    lg_status st = lg_gz_read(g, h, 4u * (size_t)(1 + nsizes), path, "the header");
    if (st != LG_OK) goto fail;
    uint32_t magic = lg_be32(h);
    if (magic != want_magic) {
        st = lg_fail(LG_ERR_FORMAT, "%s: bad magic 0x%08x, expected 0x%08x (%s)", path, magic, want_magic,
                     want_magic == 0x803 ? "IDX images, u8, 3 dims" : "IDX labels, u8, 1 dim");
        goto fail;
    }
    for (int i = 0; i < nsizes; i++) sizes[i] = lg_be32(h + 4 * (i + 1));
    *out = g;
    return LG_OK;
fail:
    gzclose(g);
    return st;
}

/* Read exactly n bytes into a malloc'd *out (caller frees, also on
 * failure), growing the buffer as data arrives (at most 16 MiB ahead of it). */
static lg_status lg_idx_read_grow(gzFile g, unsigned char **out, size_t n, const char *path, const char *what)
{
    const size_t step = (size_t)16 << 20;
    size_t have = 0, cap = 0;
    *out = NULL;
    do {
        size_t chunk = n - have < step ? n - have : step;
        if (have + chunk > cap || !*out) {
            cap = have + chunk;
            unsigned char *p = realloc(*out, cap ? cap : 1);
            if (!p) return lg_fail(LG_ERR_NOMEM, "%s: cannot allocate %zu bytes of %s", path, cap, what);
            *out = p;
        }
        lg_status st = lg_gz_read(g, *out + have, chunk, path, what);
        if (st != LG_OK) return st;
        have += chunk;
    } while (have < n);
    return LG_OK;
}

/* Fail if anything but EOF follows. */
static lg_status lg_idx_expect_end(gzFile g, const char *path)
{
    unsigned char c;
    int got = gzread(g, &c, 1);
    if (got < 0) return lg_fail(LG_ERR_FORMAT, "%s: corrupt compressed data at end of file", path);
    if (got > 0) return lg_fail(LG_ERR_FORMAT, "%s: trailing data after the declared items", path);
    return LG_OK;
}

lg_status lg_idx_load(lg_dataset *ds, const char *images_path, const char *labels_path)
{
    memset(ds, 0, sizeof *ds);
    gzFile gi = NULL, gl = NULL;
    unsigned char *raw = NULL;
    uint32_t isz[3] = {0}, lsz[1] = {0};
    lg_status st = lg_idx_open(images_path, 0x803, isz, 3, &gi);
    if (st != LG_OK) return st;
    st = lg_idx_open(labels_path, 0x801, lsz, 1, &gl);
    if (st != LG_OK) goto fail;
    if (isz[0] > LG_IDX_MAX_ITEMS || isz[1] == 0 || isz[2] == 0 || isz[1] > LG_IDX_MAX_SIDE || isz[2] > LG_IDX_MAX_SIDE) {
        st = lg_fail(LG_ERR_FORMAT, "%s: implausible dimensions %u x %u x %u", images_path, isz[0], isz[1], isz[2]);
        goto fail;
    }
    if (isz[0] != lsz[0]) {
        st = lg_fail(LG_ERR_FORMAT, "%s has %u images but %s has %u labels", images_path, isz[0], labels_path, lsz[0]);
        goto fail;
    }
    ds->n = isz[0];
    ds->rows = (int)isz[1];
    ds->cols = (int)isz[2];
    ds->dim = ds->rows * ds->cols;
    size_t npix = ds->n * (size_t)ds->dim;
    /* the header's counts are not trusted for allocation: the pixels and
     * labels are read in chunks into growing buffers, so a short (or
     * short-when-decompressed) file is refused before memory is committed
     * for what it only claims to hold */
    if ((st = lg_idx_read_grow(gi, &raw, npix, images_path, "pixels")) != LG_OK) goto fail;
    if ((st = lg_idx_expect_end(gi, images_path)) != LG_OK) goto fail;
    if ((st = lg_idx_read_grow(gl, &ds->y, ds->n, labels_path, "labels")) != LG_OK) goto fail;
    if ((st = lg_idx_expect_end(gl, labels_path)) != LG_OK) goto fail;
    ds->x = malloc((npix ? npix : 1) * sizeof *ds->x);
    if (!ds->x) {
        st = lg_fail(LG_ERR_NOMEM, "%s: cannot allocate %zu pixels", images_path, npix);
        goto fail;
    }
    for (size_t i = 0; i < npix; i++) ds->x[i] = (float)raw[i] / 255.0f;
    int maxy = -1;
    for (size_t i = 0; i < ds->n; i++)
        if (ds->y[i] > maxy) maxy = ds->y[i];
    ds->n_classes = maxy + 1;
    free(raw);
    gzclose(gi);
    gzclose(gl);
    return LG_OK;
fail:
    free(raw);
    if (gi) gzclose(gi);
    if (gl) gzclose(gl);
    lg_dataset_free(ds);
    return st;
}

/* Pick "<dir>/<base>.gz" if it exists, else "<dir>/<base>". */
static void lg_data_path(char *out, size_t n, const char *dir, const char *base)
{
    snprintf(out, n, "%s/%s.gz", dir, base);
    FILE *f = fopen(out, "rb");
    if (f) {
        fclose(f);
        return;
    }
    snprintf(out, n, "%s/%s", dir, base);
}

lg_status lg_data_load(lg_dataset *ds, const char *dir, const char *split)
{
    memset(ds, 0, sizeof *ds);
    const char *pre;
    if (strcmp(split, "train") == 0) pre = "train";
    else if (strcmp(split, "test") == 0) pre = "t10k";
    else return lg_fail(LG_ERR_ARG, "unknown split '%s', expected train or test", split);
    char ip[4096], lp[4096], base[64];
    snprintf(base, sizeof base, "%s-images-idx3-ubyte", pre);
    lg_data_path(ip, sizeof ip, dir, base);
    snprintf(base, sizeof base, "%s-labels-idx1-ubyte", pre);
    lg_data_path(lp, sizeof lp, dir, base);
    return lg_idx_load(ds, ip, lp);
}

void lg_dataset_truncate(lg_dataset *ds, size_t n)
{
    if (n < ds->n) ds->n = n;
}

lg_status lg_dataset_split(lg_dataset *ds, lg_dataset *val, size_t n_val)
{
    memset(val, 0, sizeof *val);
    if (n_val >= ds->n) return lg_fail(LG_ERR_ARG, "validation size %zu must be below the %zu training examples", n_val, ds->n);
    size_t d = (size_t)ds->dim, keep = ds->n - n_val;
    *val = *ds;
    val->n = n_val;
    val->x = malloc((n_val ? n_val : 1) * d * sizeof *val->x);
    val->y = malloc(n_val ? n_val : 1);
    if (!val->x || !val->y) {
        free(val->x);
        free(val->y);
        memset(val, 0, sizeof *val);
        return lg_fail(LG_ERR_NOMEM, "cannot allocate the validation split");
    }
    memcpy(val->x, ds->x + keep * d, n_val * d * sizeof *val->x);
    memcpy(val->y, ds->y + keep, n_val);
    ds->n = keep;
    return LG_OK;
}

int lg_dataset_pool_factor(const lg_dataset *ds, int n_in)
{
    if (n_in <= 0 || ds->rows <= 0 || ds->cols <= 0 || ds->rows * ds->cols != ds->dim) return 0;
    for (int k = 1; k <= ds->rows && k <= ds->cols; k++)
        if (ds->rows % k == 0 && ds->cols % k == 0 && (ds->rows / k) * (ds->cols / k) == n_in) return k;
    return 0;
}

lg_status lg_dataset_pool(lg_dataset *dst, const lg_dataset *src, int k)
{
    memset(dst, 0, sizeof *dst);
    if (k < 1 || src->rows <= 0 || src->cols <= 0 || src->rows % k || src->cols % k || src->rows * src->cols != src->dim)
        return lg_fail(LG_ERR_ARG, "cannot pool %d x %d images by %d", src->rows, src->cols, k);
    int r = src->rows / k, c = src->cols / k;
    size_t d = (size_t)r * (size_t)c, n = src->n;
    *dst = *src;
    dst->rows = r;
    dst->cols = c;
    dst->dim = (int)d;
    dst->x = malloc((n ? n : 1) * d * sizeof *dst->x);
    dst->y = malloc(n ? n : 1);
    if (!dst->x || !dst->y) {
        free(dst->x);
        free(dst->y);
        memset(dst, 0, sizeof *dst);
        return lg_fail(LG_ERR_NOMEM, "cannot allocate %zu pooled images", n);
    }
    memcpy(dst->y, src->y, n);
    const float inv = 1.0f / (float)(k * k);
    for (size_t e = 0; e < n; e++) {
        const float *s = src->x + e * (size_t)src->dim;
        float *o = dst->x + e * d;
        for (int i = 0; i < r; i++)
            for (int j = 0; j < c; j++) {
                float acc = 0.0f;
                for (int u = 0; u < k; u++)
                    for (int v = 0; v < k; v++) acc += s[(size_t)(i * k + u) * (size_t)src->cols + (size_t)(j * k + v)];
                float m = acc * inv;
                o[(size_t)i * (size_t)c + (size_t)j] = m > 1.0f ? 1.0f : m;
            }
    }
    return LG_OK;
}

lg_status lg_dataset_fit(lg_dataset *ds, int n_in, const char *what, const char *where)
{
    if (ds->dim == n_in) return LG_OK;
    int k = lg_dataset_pool_factor(ds, n_in);
    if (k < 2) {
        if (ds->rows > 1 && ds->rows * ds->cols == ds->dim)
            return lg_fail(LG_ERR_ARG,
                           "%s takes %d inputs but the data in %s has %d features (%d x %d images; k x k average "
                           "pooling gives (%d/k)*(%d/k) features for k dividing both)",
                           what, n_in, where, ds->dim, ds->rows, ds->cols, ds->rows, ds->cols);
        return lg_fail(LG_ERR_ARG, "%s takes %d inputs but the data in %s has %d features", what, n_in, where, ds->dim);
    }
    lg_dataset p;
    lg_status st = lg_dataset_pool(&p, ds, k);
    if (st != LG_OK) return st;
    p.lossy = ds->lossy ? 1 : 0; /* pooled values of rounded inputs: no exact index */
    lg_dataset_free(ds);
    *ds = p;
    return LG_OK;
}

lg_status lg_dataset_require_exact(const lg_dataset *ds, const char *where)
{
    if (!ds->lossy) return LG_OK;
    size_t i = ds->lossy - 1, d = ds->dim > 0 ? (size_t)ds->dim : 1;
    return lg_fail(LG_ERR_FORMAT,
                   "%s: example %zu, feature %zu holds a float64 value that float32 cannot, and fitting the data to "
                   "the network's inputs (average pooling) works in float32 (a certificate about a rounded point is "
                   "about another point); save X with one feature per network input, or as float32",
                   where, i / d, i % d);
}

void lg_dataset_free(lg_dataset *ds)
{
    free(ds->x);
    free(ds->y);
    memset(ds, 0, sizeof *ds);
}
