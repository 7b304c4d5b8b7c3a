/* json.c — JSON output through jansson with shortest round-trip numbers. */
#include "core/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

char *lg_num_shortest(char buf[LG_NUM_BUFSIZE], double v)
{
    if (isnan(v)) return strcpy(buf, "nan");
    if (isinf(v)) return strcpy(buf, v > 0 ? "inf" : "-inf");
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, LG_NUM_BUFSIZE, "%.*g", p, v);
        if (strtod(buf, NULL) == v) break;
    }
    /* 30, not 3e+01: between 1e-4 and 1e16 the positional form when it is
     * no longer than the exponent form (at most 17 digits, so it fits) */
    double a = fabs(v);
    if (strchr(buf, 'e') && a >= 1e-4 && a < 1e16) {
        char fx[LG_NUM_BUFSIZE + 8];
        for (int d = 0; d <= 20; d++) {
            snprintf(fx, sizeof fx, "%.*f", d, v);
            if (strtod(fx, NULL) == v) {
                if (strlen(fx) < LG_NUM_BUFSIZE) strcpy(buf, fx);
                break;
            }
        }
    }
    return buf;
}

json_t *lg_json_num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* A growing string. */
typedef struct lg_sb {
    char *s;
    size_t n, cap;
    int oom;
} lg_sb;

static void lg_sb_put(lg_sb *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->n + n + 1 > cap) cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void lg_sb_str(lg_sb *b, const char *s) { lg_sb_put(b, s, strlen(s)); }

/* A real in JSON: the shortest round-trip form, always with a '.' or an
 * exponent so that it reads back as a real; null when not finite. */
static void lg_json_real(lg_sb *b, double v)
{
    char buf[LG_NUM_BUFSIZE + 2];
    if (!isfinite(v)) {
        lg_sb_str(b, "null");
        return;
    }
    lg_num_shortest(buf, v);
    if (!strpbrk(buf, ".eE")) strcat(buf, ".0");
    lg_sb_str(b, buf);
}

static void lg_json_walk(lg_sb *b, const json_t *j, int compact)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *v;
        int first = 1;
        lg_sb_str(b, "{");
        /* json_object_foreach needs a non-const object; iteration does not modify it */
        json_object_foreach((json_t *)j, k, v)
        {
            if (!first) lg_sb_str(b, compact ? "," : ", ");
            first = 0;
            json_t *key = json_string(k);
            char *ks = key ? json_dumps(key, JSON_ENCODE_ANY) : NULL;
            json_decref(key);
            if (!ks) {
                b->oom = 1;
                return;
            }
            lg_sb_str(b, ks);
            free(ks);
            lg_sb_str(b, compact ? ":" : ": ");
            lg_json_walk(b, v, compact);
        }
        lg_sb_str(b, "}");
        break;
    }
    case JSON_ARRAY:
        lg_sb_str(b, "[");
        for (size_t i = 0; i < json_array_size(j); i++) {
            if (i) lg_sb_str(b, compact ? "," : ", ");
            lg_json_walk(b, json_array_get(j, i), compact);
        }
        lg_sb_str(b, "]");
        break;
    case JSON_REAL: lg_json_real(b, json_real_value(j)); break;
    default: {
        /* strings, integers, true, false, null: jansson's own text */
        char *s = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
        if (!s) {
            b->oom = 1;
            return;
        }
        lg_sb_str(b, s);
        free(s);
    }
    }
}

char *lg_json_dumps(const json_t *j, int compact)
{
    lg_sb b = {0};
    if (!j) return NULL;
    lg_json_walk(&b, j, compact);
    if (b.oom || !b.s) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

int lg_json_print_line(FILE *f, json_t *j)
{
    char *s = lg_json_dumps(j, 0);
    json_decref(j);
    if (!s) return -1;
    int rc = fprintf(f, "%s\n", s) < 0 ? -1 : 0;
    free(s);
    return rc;
}
