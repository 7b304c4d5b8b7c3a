/* csv.c — CSV rows with RFC 4180 quoting and shortest round-trip numbers. */
#include "core/csv.h"

#include <stdlib.h>
#include <string.h>

#include "core/json.h"

static void lg_csv_put(lg_csv_row *r, const char *s, size_t n)
{
    if (r->oom) return;
    if (r->n + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 128;
        while (r->n + n + 1 > cap) cap *= 2;
        char *p = realloc(r->s, cap);
        if (!p) {
            r->oom = 1;
            return;
        }
        r->s = p;
        r->cap = cap;
    }
    memcpy(r->s + r->n, s, n);
    r->n += n;
    r->s[r->n] = '\0';
}

static void lg_csv_sep(lg_csv_row *r)
{
    if (r->fields++) lg_csv_put(r, ",", 1);
}

void lg_csv_str(lg_csv_row *r, const char *s)
{
    lg_csv_sep(r);
    if (!s) s = "";
    if (!strpbrk(s, ",\"\r\n")) {
        lg_csv_put(r, s, strlen(s));
        return;
    }
    lg_csv_put(r, "\"", 1);
    for (const char *p = s; *p; p++) {
        if (*p == '"') lg_csv_put(r, "\"", 1);
        lg_csv_put(r, p, 1);
    }
    lg_csv_put(r, "\"", 1);
}

void lg_csv_num(lg_csv_row *r, double v)
{
    char buf[LG_NUM_BUFSIZE];
    lg_csv_sep(r);
    lg_num_shortest(buf, v);
    lg_csv_put(r, buf, strlen(buf));
}

void lg_csv_int(lg_csv_row *r, long long v)
{
    char buf[32];
    lg_csv_sep(r);
    int n = snprintf(buf, sizeof buf, "%lld", v);
    lg_csv_put(r, buf, (size_t)n);
}

const char *lg_csv_end(lg_csv_row *r)
{
    lg_csv_put(r, "\n", 1);
    if (r->oom) {
        free(r->s);
        r->s = NULL;
        r->n = r->cap = 0;
    }
    return r->s;
}

int lg_csv_write_strs(FILE *f, const char *const *fields, size_t n)
{
    lg_csv_row r = {0};
    for (size_t i = 0; i < n; i++) lg_csv_str(&r, fields[i]);
    const char *s = lg_csv_end(&r);
    int rc = s && fputs(s, f) >= 0 ? 0 : -1;
    lg_csv_row_free(&r);
    return rc;
}

void lg_csv_row_clear(lg_csv_row *r)
{
    r->n = 0;
    r->fields = 0;
    if (r->s) r->s[0] = '\0';
}

void lg_csv_row_free(lg_csv_row *r)
{
    free(r->s);
    memset(r, 0, sizeof *r);
}
