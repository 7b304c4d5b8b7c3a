/* npy.c — the .npy header parser and element conversion (npy.h).
 * Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html */
#include "core/npy.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A cursor over the header dict text [p, end). */
typedef struct lg_npy_cur {
    const char *p, *end;
    const char *name;
} lg_npy_cur;

static void lg_npy_ws(lg_npy_cur *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

/* Expect the character ch after optional spaces. */
static int lg_npy_eat(lg_npy_cur *c, char ch)
{
    lg_npy_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A quoted string ('…' or "…", no escapes) into out[cap]. */
static lg_status lg_npy_string(lg_npy_cur *c, char *out, size_t cap, const char *what)
{
    lg_npy_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return lg_fail(LG_ERR_FORMAT, "%s: header: expected a quoted string for %s", c->name, what);
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || n + 1 >= cap)
            return lg_fail(LG_ERR_FORMAT, "%s: header: %s is not a short plain string", c->name, what);
        out[n++] = *c->p++;
    }
    if (c->p >= c->end) return lg_fail(LG_ERR_FORMAT, "%s: header: unterminated string in %s", c->name, what);
    c->p++;
    out[n] = '\0';
    return LG_OK;
}

/* descr: byte order and type, e.g. "<f4", ">i8", "|u1". */
static lg_status lg_npy_descr(lg_npy *a, int *swap, const char *d, const char *name)
{
    size_t l = strlen(d);
    char order = l ? d[0] : 0, type = l > 1 ? d[1] : 0;
    long size = 0;
    if (l == 3 && d[2] >= '1' && d[2] <= '8') size = d[2] - '0';
    int ok_order = order == '<' || order == '>' || order == '=' || order == '|';
    int ok = ok_order && ((type == 'f' && (size == 4 || size == 8)) ||
                          ((type == 'i' || type == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)));
    if (!ok)
        return lg_fail(LG_ERR_FORMAT,
                       "%s: header: 'descr' is '%s'; supported: float32/float64 ('<f4', '<f8', '>f4', ...) and "
                       "integers ('<i8', '|u1', ...)",
                       name, d);
    if (order == '|' && size != 1)
        return lg_fail(LG_ERR_FORMAT, "%s: header: 'descr' '%s': byte order '|' only for one-byte types", name, d);
    a->kind = type == 'f' ? LG_NPY_FLOAT : type == 'i' ? LG_NPY_INT : LG_NPY_UINT;
    a->itemsize = (int)size;
    const uint16_t probe = 1;
    int little = *(const unsigned char *)&probe == 1;
    *swap = size > 1 && ((order == '<' && !little) || (order == '>' && little));
    return LG_OK;
}

static lg_status lg_npy_bool(lg_npy_cur *c, int *v)
{
    lg_npy_ws(c);
    size_t left = (size_t)(c->end - c->p);
    if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
        c->p += 4, *v = 1;
        return LG_OK;
    }
    if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
        c->p += 5, *v = 0;
        return LG_OK;
    }
    return lg_fail(LG_ERR_FORMAT, "%s: header: 'fortran_order' must be True or False", c->name);
}

/* shape: "()", "(n,)", "(n, m)", "(n, m, k)", ... (trailing comma allowed). */
static lg_status lg_npy_shape(lg_npy_cur *c, lg_npy *a)
{
    if (!lg_npy_eat(c, '(')) return lg_fail(LG_ERR_FORMAT, "%s: header: 'shape' must be a tuple", c->name);
    a->ndim = 0;
    int comma = 0;
    for (;;) {
        lg_npy_ws(c);
        if (lg_npy_eat(c, ')')) break;
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            return lg_fail(LG_ERR_FORMAT, "%s: header: 'shape' must hold non-negative integers", c->name);
        size_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            if (v > LG_NPY_MAX_ITEMS) return lg_fail(LG_ERR_FORMAT, "%s: header: a dimension of 'shape' is too large", c->name);
            v = v * 10 + (size_t)(*c->p++ - '0');
        }
        if (c->p < c->end && *c->p == 'L') c->p++; /* Python 2 long suffix */
        if (a->ndim == LG_NPY_MAX_DIMS)
            return lg_fail(LG_ERR_FORMAT, "%s: header: 'shape' has more than %d dimensions", c->name, LG_NPY_MAX_DIMS);
        a->shape[a->ndim++] = v;
        comma = lg_npy_eat(c, ',');
        if (comma) continue;
        if (lg_npy_eat(c, ')')) break;
        return lg_fail(LG_ERR_FORMAT, "%s: header: 'shape': expected ',' or ')'", c->name);
    }
    if (a->ndim == 1 && !comma) /* "(n)" is an int in Python, not a tuple */
        return lg_fail(LG_ERR_FORMAT, "%s: header: 'shape' (n) is not a tuple; expected (n,)", c->name);
    if (a->ndim == 0) return lg_fail(LG_ERR_FORMAT, "%s: header: 'shape' is () (a scalar); expected an array", c->name);
    return LG_OK;
}

/* The header dict: exactly the three keys, each once. */
static lg_status lg_npy_dict(lg_npy_cur *c, lg_npy *a, int *swap)
{
    int seen_d = 0, seen_f = 0, seen_s = 0, fortran = 0;
    lg_status st;
    if (!lg_npy_eat(c, '{')) return lg_fail(LG_ERR_FORMAT, "%s: header: expected a dict '{...}'", c->name);
    for (;;) {
        if (lg_npy_eat(c, '}')) break;
        char key[32], val[32];
        if ((st = lg_npy_string(c, key, sizeof key, "a key")) != LG_OK) return st;
        if (!lg_npy_eat(c, ':')) return lg_fail(LG_ERR_FORMAT, "%s: header: expected ':' after '%s'", c->name, key);
        if (strcmp(key, "descr") == 0 && !seen_d++) {
            if ((st = lg_npy_string(c, val, sizeof val, "'descr'")) != LG_OK) return st;
            if ((st = lg_npy_descr(a, swap, val, c->name)) != LG_OK) return st;
        } else if (strcmp(key, "fortran_order") == 0 && !seen_f++) {
            if ((st = lg_npy_bool(c, &fortran)) != LG_OK) return st;
        } else if (strcmp(key, "shape") == 0 && !seen_s++) {
            if ((st = lg_npy_shape(c, a)) != LG_OK) return st;
        } else {
            return lg_fail(LG_ERR_FORMAT, "%s: header: unexpected or repeated key '%s'", c->name, key);
        }
        if (lg_npy_eat(c, ',')) continue;
        if (lg_npy_eat(c, '}')) break;
        return lg_fail(LG_ERR_FORMAT, "%s: header: expected ',' or '}' after '%s'", c->name, key);
    }
    if (!seen_d || !seen_f || !seen_s)
        return lg_fail(LG_ERR_FORMAT, "%s: header: missing key '%s'", c->name,
                       !seen_d ? "descr" : !seen_f ? "fortran_order" : "shape");
    lg_npy_ws(c);
    if (c->p != c->end) return lg_fail(LG_ERR_FORMAT, "%s: header: unexpected text after the dict", c->name);
    if (fortran)
        return lg_fail(LG_ERR_FORMAT,
                       "%s: header: 'fortran_order' is True; only C order is read (save "
                       "np.ascontiguousarray(a))",
                       c->name);
    return LG_OK;
}

/* Element i of the raw data as double (byte-swapped when needed). */
static double lg_npy_elem(const unsigned char *p, const lg_npy *a, int swap)
{
    unsigned char b[8];
    int s = a->itemsize;
    for (int k = 0; k < s; k++) b[k] = swap ? p[s - 1 - k] : p[k];
    switch (a->kind) {
    case LG_NPY_FLOAT:
        if (s == 4) {
            float f;
            memcpy(&f, b, 4);
            return f;
        } else {
            double d;
            memcpy(&d, b, 8);
            return d;
        }
    case LG_NPY_INT:
        if (s == 1) return (double)(int8_t)b[0];
        if (s == 2) { int16_t v; memcpy(&v, b, 2); return v; }
        if (s == 4) { int32_t v; memcpy(&v, b, 4); return v; }
        { int64_t v; memcpy(&v, b, 8); return (double)v; }
    case LG_NPY_UINT:
        if (s == 1) return b[0];
        if (s == 2) { uint16_t v; memcpy(&v, b, 2); return v; }
        if (s == 4) { uint32_t v; memcpy(&v, b, 4); return v; }
        { uint64_t v; memcpy(&v, b, 8); return (double)v; }
    }
    return 0.0;
}

lg_status lg_npy_parse(lg_npy *a, const unsigned char *buf, size_t len, const char *name)
{
    memset(a, 0, sizeof *a);
    lg_status st;
    static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (len < 10 || memcmp(buf, magic, 6) != 0)
        return lg_fail(LG_ERR_FORMAT, "%s: not a .npy file (magic \\x93NUMPY missing)", name);
    int major = buf[6], minor = buf[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0)
        return lg_fail(LG_ERR_FORMAT, "%s: version %d.%d; supported: 1.0, 2.0, 3.0", name, major, minor);
    size_t pre = major == 1 ? 10 : 12, hlen;
    if (len < pre) return lg_fail(LG_ERR_FORMAT, "%s: truncated header length", name);
    if (major == 1) hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
    else hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
    if (hlen == 0 || hlen > len - pre)
        return lg_fail(LG_ERR_FORMAT, "%s: header length %zu exceeds the %zu bytes of the file", name, hlen, len);
    const char *h = (const char *)buf + pre;
    if (h[hlen - 1] != '\n') return lg_fail(LG_ERR_FORMAT, "%s: header does not end in a newline", name);
    for (size_t i = 0; i < hlen; i++) {
        unsigned char ch = (unsigned char)h[i];
        if (ch == 0 || (ch < 32 && ch != '\n' && ch != '\t' && ch != '\r') || ch > 126)
            return lg_fail(LG_ERR_FORMAT, "%s: header byte %zu is not printable ASCII", name, pre + i);
    }
    lg_npy_cur c = {h, h + hlen, name};
    int swap = 0;
    if ((st = lg_npy_dict(&c, a, &swap)) != LG_OK) goto fail;
    size_t count = 1;
    for (int k = 0; k < a->ndim; k++) {
        if (a->shape[k] != 0 && count > LG_NPY_MAX_ITEMS / a->shape[k]) {
            st = lg_fail(LG_ERR_FORMAT, "%s: header: 'shape' has more than %zu elements", name, LG_NPY_MAX_ITEMS);
            goto fail;
        }
        count *= a->shape[k];
    }
    size_t data = len - pre - hlen;
    if (data != count * (size_t)a->itemsize) {
        st = lg_fail(LG_ERR_FORMAT, "%s: 'shape' and 'descr' need %zu data bytes but the file has %zu", name,
                     count * (size_t)a->itemsize, data);
        goto fail;
    }
    a->n = a->shape[0];
    a->cols = 1;
    for (int k = 1; k < a->ndim; k++) a->cols *= a->shape[k];
    a->data = malloc((count ? count : 1) * sizeof *a->data);
    if (!a->data) {
        st = lg_fail(LG_ERR_NOMEM, "%s: cannot allocate %zu values", name, count);
        goto fail;
    }
    const unsigned char *p = buf + pre + hlen;
    for (size_t i = 0; i < count; i++) {
        double v = lg_npy_elem(p + i * (size_t)a->itemsize, a, swap);
        if (!isfinite(v)) {
            st = lg_fail(LG_ERR_FORMAT, "%s: element %zu (row %zu, column %zu) is %s", name, i,
                         a->cols ? i / a->cols : 0, a->cols ? i % a->cols : 0, isnan(v) ? "NaN" : "infinite");
            goto fail;
        }
        a->data[i] = v;
    }
    return LG_OK;
fail:
    lg_npy_free(a);
    return st;
}

lg_status lg_npy_load(lg_npy *a, const char *path)
{
    memset(a, 0, sizeof *a);
    FILE *f = fopen(path, "rb");
    if (!f) return lg_fail(LG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    unsigned char *buf = NULL;
    lg_status st;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = lg_fail(LG_ERR_IO, "%s: not a regular file", path);
        goto done;
    }
    if ((unsigned long long)sb.st_size > LG_NPY_MAX_BYTES) {
        st = lg_fail(LG_ERR_FORMAT, "%s: %lld bytes; the limit is %zu", path, (long long)sb.st_size, LG_NPY_MAX_BYTES);
        goto done;
    }
    size_t len = (size_t)sb.st_size;
    if (!(buf = malloc(len ? len : 1))) {
        st = lg_fail(LG_ERR_NOMEM, "%s: cannot allocate %zu bytes", path, len);
        goto done;
    }
    if (fread(buf, 1, len, f) != len) {
        st = lg_fail(LG_ERR_IO, "%s: read error", path);
        goto done;
    }
    st = lg_npy_parse(a, buf, len, path);
done:
    free(buf);
    fclose(f);
    return st;
}

void lg_npy_free(lg_npy *a)
{
    free(a->data);
    memset(a, 0, sizeof *a);
}
