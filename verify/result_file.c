/* result_file.c — the VNN-COMP result file (verify.h). */
#include <errno.h>
#include <string.h>

#include "verify/verify.h"

lg_status lg_verify_write_result(const lg_verify_report *r, FILE *f)
{
    if (r->verdict == LG_VERDICT_ROBUST) {
        fprintf(f, "unsat\n");
    } else if (r->verdict == LG_VERDICT_VIOLATED && r->x && r->y) {
        fprintf(f, "sat\n(");
        for (int i = 0; i < r->n_in; i++) fprintf(f, "%s(X_%d %.17g)\n", i ? " " : "", i, r->x[i]);
        for (int j = 0; j < r->n_out; j++) fprintf(f, " (Y_%d %.17g)%s", j, r->y[j], j + 1 < r->n_out ? "\n" : "");
        fprintf(f, ")\n");
    } else {
        fprintf(f, "%s\n", r->timed_out ? "timeout" : "unknown");
    }
    if (ferror(f)) return lg_fail(LG_ERR_IO, "result file: write error");
    return LG_OK;
}

lg_status lg_verify_write_result_path(const lg_verify_report *r, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return lg_fail(LG_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
    lg_status st = lg_verify_write_result(r, f);
    if (fclose(f) != 0 && st == LG_OK) st = lg_fail(LG_ERR_IO, "%s: write error: %s", path, strerror(errno));
    return st;
}
