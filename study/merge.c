/* merge.c — join the directories of study shards (report.h). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "study/report.h"
#include "study/results.h"
#include "study/run.h"

/* Merge file `name` of every input into out_dir; field `check` must agree for equal keys. */
static lg_status lg_merge_file(const char *out_dir, const char *const *in, int n, const char *name, const char *check,
                               long *count)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    json_t *seen = json_object(), *rows = NULL;
    lg_study_log L;
    if (!seen) return lg_fail(LG_ERR_NOMEM, "out of memory");
    lg_status st = lg_study_rows_read(path, &rows); /* what out_dir already has */
    if (st != LG_OK) goto fail;
    size_t i;
    json_t *o;
    json_array_foreach(rows, i, o) json_object_set(seen, json_string_value(json_object_get(o, "key")), o);
    json_decref(rows);
    rows = NULL;
    if ((st = lg_study_log_open(&L, path)) != LG_OK) goto fail;
    for (int d = 0; d < n && st == LG_OK; d++) {
        char ip[4200];
        snprintf(ip, sizeof ip, "%s/%s", in[d], name);
        if ((st = lg_study_rows_read(ip, &rows)) != LG_OK) break;
        json_array_foreach(rows, i, o)
        {
            const char *key = json_string_value(json_object_get(o, "key"));
            json_t *prev = json_object_get(seen, key);
            if (prev) {
                if (!json_equal(json_object_get(prev, check), json_object_get(o, check))) {
                    st = lg_fail(LG_ERR_FORMAT, "%s: row %s: its %s differs from the same row in an earlier input",
                                 ip, key, check);
                    break;
                }
                continue;
            }
            json_object_set(seen, key, o);
            if ((st = lg_study_log_append(&L, o, NULL)) != LG_OK) break;
        }
        json_decref(rows);
        rows = NULL;
    }
    lg_study_log_close(&L);
    if (count) *count = (long)json_object_size(seen);
fail:
    json_decref(rows);
    json_decref(seen);
    return st;
}

lg_status lg_study_merge(const char *out_dir, const char *const *in, int n, long *n_rows)
{
    lg_status sm = lg_study_mkdir(out_dir);
    if (sm != LG_OK) return sm;
    for (int d = 0; d < n; d++) {
        char p[4200];
        struct stat sb;
        snprintf(p, sizeof p, "%s/results.jsonl", in[d]);
        if (stat(p, &sb) != 0) return lg_fail(LG_ERR_IO, "%s: no results.jsonl (not a study directory?)", in[d]);
    }
    for (int d = 0; d < n; d++) { /* the grid the shards ran (the first one that has it) */
        char g[4200];
        snprintf(g, sizeof g, "%s/grid.ini", in[d]);
        if (access(g, R_OK) != 0) continue;
        lg_status sg = lg_study_copy_file(g, out_dir, "grid.ini");
        if (sg != LG_OK) return sg;
        break;
    }
    lg_status st = lg_merge_file(out_dir, in, n, "networks.jsonl", "hash", NULL);
    if (st != LG_OK) return st;
    return lg_merge_file(out_dir, in, n, "results.jsonl", "verdict", n_rows);
}
