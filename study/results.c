/* results.c — JSON-lines logs with resume (results.h). */
#include "study/results.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/atomic_file.h"
#include "core/netfile.h"
#include "core/version.h"

void lg_study_key_cell(char *buf, size_t n, const char *regime, const char *arch, long seed, int input, double eps,
                       lg_study_mode mode)
{
    snprintf(buf, n, "%s|%s|%ld|%d|%.17g|%s", regime, arch, seed, input, eps, lg_study_mode_name(mode));
}

void lg_study_key_instance(char *buf, size_t n, const char *regime, const char *arch, long seed, int input,
                           double eps, lg_study_mode mode, uint64_t hash, const char *settings)
{
    snprintf(buf, n, "%s|%s|%ld|%d|%.17g|%s|%016" PRIx64 "|%s|lgelu %s", regime, arch, seed, input, eps,
             lg_study_mode_name(mode), hash, settings, lg_version());
}

void lg_study_key_net(char *buf, size_t n, const char *regime, const char *arch, long seed, uint64_t hash)
{
    snprintf(buf, n, "%s|%s|%ld|%016" PRIx64 "|lgelu %s", regime, arch, seed, hash, lg_version());
}

static int lg_key_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Insert key keeping the array sorted. 0 or −1 out of memory. */
static int lg_log_insert(lg_study_log *L, const char *key)
{
    if (L->n_keys == L->cap_keys) {
        int cap = L->cap_keys ? 2 * L->cap_keys : 256;
        char **k = realloc(L->keys, (size_t)cap * sizeof *k);
        if (!k) return -1;
        L->keys = k;
        L->cap_keys = cap;
    }
    char *dup = strdup(key);
    if (!dup) return -1;
    int lo = 0, hi = L->n_keys;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (strcmp(L->keys[mid], key) < 0) lo = mid + 1;
        else hi = mid;
    }
    memmove(L->keys + lo + 1, L->keys + lo, (size_t)(L->n_keys - lo) * sizeof *L->keys);
    L->keys[lo] = dup;
    L->n_keys++;
    return 0;
}

static int lg_log_has_locked(lg_study_log *L, const char *key)
{
    return L->n_keys && bsearch(&key, L->keys, (size_t)L->n_keys, sizeof *L->keys, lg_key_cmp) != NULL;
}

/* Read the whole file; *len excludes a torn last line (no newline). */
static lg_status lg_rows_slurp(const char *path, char **buf, size_t *len, size_t *full)
{
    *buf = NULL;
    *len = *full = 0;
    struct stat sb;
    if (stat(path, &sb) != 0) return errno == ENOENT ? LG_OK : lg_fail(LG_ERR_IO, "%s: %s", path, strerror(errno));
    unsigned char *b = NULL;
    size_t n = 0;
    lg_status st = lg_file_slurp(path, (size_t)1 << 34, &b, &n);
    if (st != LG_OK) return st;
    size_t keep = n;
    while (keep > 0 && b[keep - 1] != '\n') keep--;
    *buf = (char *)b;
    *len = keep;
    *full = n;
    return LG_OK;
}

/* Call fn on every parsed line of buf[0..len). */
static lg_status lg_rows_each(const char *path, char *buf, size_t len, lg_status (*fn)(void *, json_t *), void *ctx)
{
    size_t pos = 0;
    int line = 0;
    while (pos < len) {
        char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - buf) : len;
        line++;
        if (end > pos) {
            json_error_t je;
            json_t *o = json_loadb(buf + pos, end - pos, 0, &je);
            if (!o || !json_is_object(o) || !json_is_string(json_object_get(o, "key"))) {
                json_decref(o);
                return lg_fail(LG_ERR_FORMAT, "%s:%d: not a JSON object with a \"key\" (%s)", path, line,
                               o ? "no key" : je.text);
            }
            lg_status st = fn(ctx, o);
            json_decref(o);
            if (st != LG_OK) return st;
        }
        pos = end + 1;
    }
    return LG_OK;
}

static lg_status lg_log_add_key(void *ctx, json_t *o)
{
    lg_study_log *L = ctx;
    const char *k = json_string_value(json_object_get(o, "key"));
    if (lg_log_has_locked(L, k)) return LG_OK;
    return lg_log_insert(L, k) ? lg_fail(LG_ERR_NOMEM, "out of memory") : LG_OK;
}

lg_status lg_study_log_open(lg_study_log *L, const char *path)
{
    memset(L, 0, sizeof *L);
    L->fd = -1;
    char *buf = NULL;
    size_t len = 0, full = 0;
    lg_status st = lg_rows_slurp(path, &buf, &len, &full);
    if (st != LG_OK) return st;
    if (!(L->path = strdup(path))) {
        st = lg_fail(LG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if ((st = lg_rows_each(path, buf, len, lg_log_add_key, L)) != LG_OK) goto fail;
    L->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (L->fd < 0) {
        st = lg_fail(LG_ERR_IO, "%s: %s", path, strerror(errno));
        goto fail;
    }
    if (full != len && ftruncate(L->fd, (off_t)len) != 0) { /* a torn line from a killed run */
        st = lg_fail(LG_ERR_IO, "%s: cannot cut the torn last line: %s", path, strerror(errno));
        goto fail;
    }
    pthread_mutex_init(&L->mu, NULL);
    L->mu_init = 1;
    free(buf);
    return LG_OK;
fail:
    free(buf);
    lg_study_log_close(L);
    return st;
}

int lg_study_log_has(lg_study_log *L, const char *key)
{
    pthread_mutex_lock(&L->mu);
    int r = lg_log_has_locked(L, key);
    pthread_mutex_unlock(&L->mu);
    return r;
}

lg_status lg_study_log_append(lg_study_log *L, json_t *obj, int *written)
{
    const char *key = json_string_value(json_object_get(obj, "key"));
    if (!key) return lg_fail(LG_ERR_ARG, "results: object without a \"key\"");
    char *line = json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(17));
    if (!line) return lg_fail(LG_ERR_NOMEM, "out of memory");
    size_t n = strlen(line);
    char *l2 = realloc(line, n + 2);
    if (!l2) {
        free(line);
        return lg_fail(LG_ERR_NOMEM, "out of memory");
    }
    line = l2;
    line[n++] = '\n';
    line[n] = '\0';
    lg_status st = LG_OK;
    if (written) *written = 0;
    pthread_mutex_lock(&L->mu);
    if (!lg_log_has_locked(L, key)) {
        if ((st = lg_atomic_append_line(L->fd, line, n)) == LG_OK) {
            if (lg_log_insert(L, key)) st = lg_fail(LG_ERR_NOMEM, "out of memory");
            else if (written) *written = 1;
        }
    }
    pthread_mutex_unlock(&L->mu);
    free(line);
    return st;
}

void lg_study_log_close(lg_study_log *L)
{
    if (L->path && L->fd >= 0) close(L->fd);
    for (int i = 0; i < L->n_keys; i++) free(L->keys[i]);
    free(L->keys);
    free(L->path);
    if (L->mu_init) pthread_mutex_destroy(&L->mu);
    memset(L, 0, sizeof *L);
    L->fd = -1;
}

static lg_status lg_rows_push(void *ctx, json_t *o)
{
    return json_array_append(ctx, o) ? lg_fail(LG_ERR_NOMEM, "out of memory") : LG_OK;
}

/* path + ".gz" read whole through zlib (an archived study directory); *buf NULL if there is none. */
static lg_status lg_rows_slurp_gz(const char *path, char **buf, size_t *len)
{
    char gz[4200];
    *buf = NULL;
    *len = 0;
    snprintf(gz, sizeof gz, "%s.gz", path);
    if (access(gz, R_OK) != 0) return LG_OK;
    gzFile f = gzopen(gz, "rb");
    if (!f) return lg_fail(LG_ERR_IO, "%s: cannot open", gz);
    size_t cap = 1 << 20, n = 0;
    char *b = malloc(cap);
    lg_status st = LG_OK;
    for (int r; b;) {
        if (n == cap) {
            char *nb = cap < ((size_t)1 << 34) ? realloc(b, cap *= 2) : NULL;
            if (!nb) break;
            b = nb;
        }
        if ((r = gzread(f, b + n, (unsigned)(cap - n > (1u << 30) ? (1u << 30) : cap - n))) <= 0) {
            if (r < 0) st = lg_fail(LG_ERR_IO, "%s: not a valid gzip file", gz);
            break;
        }
        n += (size_t)r;
    }
    gzclose(f);
    if (!b) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", gz);
    if (st != LG_OK) {
        free(b);
        return st;
    }
    while (n > 0 && b[n - 1] != '\n') n--;
    *buf = b;
    *len = n;
    return LG_OK;
}

lg_status lg_study_rows_read(const char *path, json_t **rows)
{
    *rows = json_array();
    if (!*rows) return lg_fail(LG_ERR_NOMEM, "out of memory");
    char *buf = NULL;
    size_t len = 0, full = 0;
    lg_status st = access(path, F_OK) == 0 ? lg_rows_slurp(path, &buf, &len, &full) : lg_rows_slurp_gz(path, &buf, &len);
    if (st == LG_OK) st = lg_rows_each(path, buf, len, lg_rows_push, *rows);
    free(buf);
    if (st != LG_OK) {
        json_decref(*rows);
        *rows = NULL;
    }
    return st;
}
