/* result_file.c — the VNN-COMP result file (verify.h). */
#include "core/atomic_file.h"
#include "core/json.h"
#include "verify/verify.h"

lg_status lg_verify_write_result(const lg_verify_report *r, FILE *f)
{
    int tol = r->verdict == LG_VERDICT_UNKNOWN && r->how.why == LG_REASON_TOLERANCE && r->x && r->y;
    if (r->verdict == LG_VERDICT_ROBUST) {
        fprintf(f, "unsat\n");
    } else if ((r->verdict == LG_VERDICT_VIOLATED && r->x && r->y) || tol) {
        /* a witness within the opt-in tolerance is written as the competition expects (sat and the
         * assignment, which its checker accepts within its tolerance) and followed by a comment line */
        char v[LG_NUM_BUFSIZE];
        fprintf(f, "sat\n(");
        for (int i = 0; i < r->n_in; i++) fprintf(f, "%s(X_%d %s)\n", i ? " " : "", i, lg_num_shortest(v, r->x[i]));
        for (int j = 0; j < r->n_out; j++)
            fprintf(f, " (Y_%d %s)%s", j, lg_num_shortest(v, r->y[j]), j + 1 < r->n_out ? "\n" : "");
        fprintf(f, ")\n");
        if (tol) fprintf(f, "; lgelu: %s: %s\n", lg_verify_kind(r), r->how.reason);
    } else {
        fprintf(f, "%s\n", r->how.timed_out ? "timeout" : "unknown");
    }
    if (r->net_note && *r->net_note) fprintf(f, "; lgelu: network read: %s\n", r->net_note);
    if (ferror(f)) return lg_fail(LG_ERR_IO, "result file: write error");
    return LG_OK;
}

/* Written to a temporary file and renamed (core/atomic_file.h): the result
 * file is never seen half-written, whatever interrupts the run. */
lg_status lg_verify_write_result_path(const lg_verify_report *r, const char *path)
{
    lg_atomic_file a;
    lg_status st = lg_atomic_open(&a, path);
    if (st != LG_OK) return st;
    if ((st = lg_verify_write_result(r, a.f)) != LG_OK) {
        lg_atomic_discard(&a);
        return lg_fail(st, "%s: write error", path);
    }
    return lg_atomic_commit(&a);
}
