/* cmd_cex.c — `lgelu cex NET --vnnlib P FILE`: close the loop of
 * `lgelu encode`. FILE is what an external solver answered for the encoded
 * query: a z3 or cvc5 output (sat + (get-model), unsat, unknown, timeout), a
 * glpsol solution (`glpsol --lp Q.lp -o FILE`), a CBC solution (`solu FILE`)
 * or a VNN-COMP counterexample. First the solver's own status is read
 * (lg_cex_classify: its status words, never the values it printed). For a
 * point, the values of X_0..X_{n-1} are read (SMT-LIB rationals exactly, then
 * rounded to the nearest double) and the point goes through the one witness
 * gate, lg_witness_accept (DESIGN.md §3): `violated` only when it satisfies a
 * case of the property in exact rational arithmetic on the network, else
 * `unknown`. A complete solver's unsat/infeasible answer to the query of a
 * one-case property is reported as `unsat` (the solver's word, not re-checked
 * by lgelu); unknown and undefined answers as `unknown`, a solver time limit
 * as `timeout`. The VNN-COMP result file is written with -o.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "core/netfile.h"
#include "verify/recheck.h"
#include "verify/verify.h"
#include "verify/vnnlib.h"

#define LG_CEX_MAX_BYTES ((size_t)1 << 30)

static void lg_cex_help(void)
{
    printf("usage: lgelu cex NET --vnnlib P FILE [-o RESULT]\n\n"
           "Read the answer of an external solver to a query written by `lgelu encode NET --vnnlib P`\n"
           "and re-check it exactly. FILE is one of:\n"
           "  - an SMT-LIB 2 solver's output: `z3 query.smt2 > FILE` or cvc5 (sat, then\n"
           "    (define-fun X_i () Real v) for every input, rationals such as (/ 1.0 3.0) read\n"
           "    exactly; or unsat, unknown, timeout);\n"
           "  - a glpsol solution: `glpsol --lp query.lp -o FILE` (its Status: line; values with 6\n"
           "    significant digits);\n"
           "  - a CBC solution: `cbc query.lp solve solu FILE`;\n"
           "  - a VNN-COMP counterexample ((X_0 v) ... (Y_j v)).\n"
           "The solver's own status decides what is read. A point X (sat, OPTIMAL, INTEGER OPTIMAL or\n"
           "NON-OPTIMAL) is rounded to the nearest doubles and must pass the witness gate every\n"
           "`violated` of lgelu passes: inside the box, and some case of P satisfied in exact rational\n"
           "arithmetic on the network. Then the verdict is `violated`; otherwise `unknown`. An unsat\n"
           "or infeasible answer (unsat, INTEGER EMPTY, INFEASIBLE (FINAL), CBC Infeasible) is\n"
           "printed as `unsat` with the solver's words, for a property of one case (the query holds\n"
           "one case); it is the solver's answer, not re-checked by lgelu (`lgelu verify` proves\n"
           "robustness itself). unknown, UNDEFINED or INTEGER UNDEFINED give `unknown`, a solver's\n"
           "timeout `timeout`.\n\n"
           "options:\n"
           "  --vnnlib P          the property the query was written for (required; .gz is read)\n"
           "  -o, --output FILE   write the VNN-COMP result file (sat + counterexample, unsat,\n"
           "                      unknown or timeout)\n"
           "  -h, --help          show this help\n\n"
           "exit status: 0 for every verdict; 1 when a file cannot be read; 2 on bad usage or a\n"
           "file that does not fit (a property of other sizes than NET, a FILE that is no solver\n"
           "answer).\n");
}

/* Nearest double to q (ties: either). */
static double lg_cex_nearest(const mpq_t q)
{
    double d = mpq_get_d(q); /* truncated toward zero */
    mpq_t t, e0, e1;
    mpq_inits(t, e0, e1, NULL);
    double other = nextafter(d, mpq_sgn(q) >= 0 ? INFINITY : -INFINITY);
    mpq_set_d(t, d);
    mpq_sub(e0, q, t);
    mpq_abs(e0, e0);
    if (isfinite(other)) {
        mpq_set_d(t, other);
        mpq_sub(e1, q, t);
        mpq_abs(e1, e1);
        if (mpq_cmp(e1, e0) < 0) d = other;
    }
    mpq_clears(t, e0, e1, NULL);
    return d;
}

/* A decimal literal ("12", "0.5", "1e-3") as an exact rational; 0 or -1. */
static int lg_cex_decimal(const char *s, size_t n, mpq_t out)
{
    char buf[512];
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char digits[512];
    size_t k = 0, frac = 0;
    int seen_dot = 0, neg = 0;
    const char *p = buf;
    if (*p == '-' || *p == '+') neg = *p++ == '-';
    for (; *p && *p != 'e' && *p != 'E'; p++) {
        if (*p == '.' && !seen_dot) seen_dot = 1;
        else if (isdigit((unsigned char)*p)) {
            digits[k++] = *p;
            frac += seen_dot;
        } else return -1;
    }
    if (k == 0) return -1;
    digits[k] = '\0';
    long ex = 0;
    if (*p) {
        char *end;
        errno = 0;
        ex = strtol(p + 1, &end, 10);
        if (*end || errno || ex > 400 || ex < -400) return -1;
    }
    mpz_t num, den;
    mpz_inits(num, den, NULL);
    mpz_set_str(num, digits, 10);
    mpz_set_ui(den, 1);
    long e10 = ex - (long)frac;
    mpz_t pw;
    mpz_init(pw);
    mpz_ui_pow_ui(pw, 10, (unsigned long)(e10 < 0 ? -e10 : e10));
    if (e10 < 0) mpz_set(den, pw);
    else mpz_mul(num, num, pw);
    if (neg) mpz_neg(num, num);
    mpq_set_num(out, num);
    mpq_set_den(out, den);
    mpq_canonicalize(out);
    mpz_clears(num, den, pw, NULL);
    return 0;
}

static const char *lg_cex_ws(const char *p, const char *end)
{
    while (p < end && isspace((unsigned char)*p)) p++;
    return p;
}

/* An SMT-LIB 2 real term: decimal | (/ t t) | (- t) | (- t t) | (+ t ...).
 * Returns the position after it, or NULL. */
static const char *lg_cex_term(const char *p, const char *end, mpq_t out)
{
    p = lg_cex_ws(p, end);
    if (p >= end) return NULL;
    if (*p != '(') {
        const char *q = p;
        while (q < end && !isspace((unsigned char)*q) && *q != '(' && *q != ')') q++;
        return lg_cex_decimal(p, (size_t)(q - p), out) == 0 ? q : NULL;
    }
    p = lg_cex_ws(p + 1, end);
    if (p >= end) return NULL;
    char op = *p++;
    if (op != '/' && op != '-' && op != '+' && op != '*') return NULL;
    mpq_t a;
    mpq_init(a);
    int n = 0;
    mpq_set_ui(out, op == '*' ? 1 : 0, 1);
    for (;;) {
        p = lg_cex_ws(p, end);
        if (p >= end) goto bad;
        if (*p == ')') break;
        if (!(p = lg_cex_term(p, end, a))) goto bad;
        if (n == 0 && op != '*') mpq_set(out, a);
        else if (op == '/') {
            if (mpq_sgn(a) == 0) goto bad;
            mpq_div(out, out, a);
        } else if (op == '-') mpq_sub(out, out, a);
        else if (op == '+') mpq_add(out, out, a);
        else mpq_mul(out, out, a);
        n++;
    }
    if (n == 0) goto bad;
    if (op == '-' && n == 1) mpq_neg(out, out);
    mpq_clear(a);
    return p + 1;
bad:
    mpq_clear(a);
    return NULL;
}

/* Does the name at p (length n) read "X_<i>" with i < n_in? Sets *i. */
static int lg_cex_xname(const char *p, size_t n, int n_in, int *i)
{
    if (n < 3 || p[0] != 'X' || p[1] != '_') return 0;
    long v = 0;
    for (size_t k = 2; k < n; k++) {
        if (!isdigit((unsigned char)p[k]) || v > 100000000) return 0;
        v = v * 10 + (p[k] - '0');
    }
    if (v >= n_in) return 0;
    *i = (int)v;
    return 1;
}

/* What the solver said, read from its own status words (never from the
 * values it printed): a point to re-check, no point (unsat, infeasible),
 * no answer (unknown, an undefined solution), or its time limit. */
typedef enum { LG_CEX_POINT, LG_CEX_UNSAT, LG_CEX_UNKNOWN, LG_CEX_TIMEOUT, LG_CEX_NONE } lg_cex_kind;

typedef struct lg_cex_answer {
    lg_cex_kind kind;
    char said[160]; /* "glpsol: INTEGER EMPTY", "SMT-LIB solver: unsat", "CBC: Infeasible", ... */
} lg_cex_answer;

/* The line at p (up to its end or max bytes) without trailing blanks, into out. */
static void lg_cex_line(const char *p, const char *end, char *out, size_t max)
{
    size_t n = 0;
    while (p + n < end && p[n] != '\n' && p[n] != '\r' && n + 1 < max) n++;
    while (n > 0 && isspace((unsigned char)p[n - 1])) n--;
    memcpy(out, p, n);
    out[n] = '\0';
}

static int lg_cex_starts(const char *p, const char *end, const char *w)
{
    size_t n = strlen(w);
    return (size_t)(end - p) >= n && strncmp(p, w, n) == 0;
}

/* A word that ends at p + n (a space, a parenthesis or the end follows). */
static int lg_cex_word(const char *p, const char *end, const char *w)
{
    size_t n = strlen(w);
    return lg_cex_starts(p, end, w) && (p + n == end || isspace((unsigned char)p[n]) || p[n] == '(' || p[n] == ')');
}

/* Classify the solver output in buf (see lg_cex_kind). */
static lg_cex_answer lg_cex_classify(const char *buf, size_t len)
{
    const char *end = buf + len;
    lg_cex_answer a = {LG_CEX_NONE, ""};
    char line[128];
    /* glpsol -o: "Status:     INTEGER EMPTY" (MIP) or "Status:     OPTIMAL" (LP) */
    for (const char *p = buf; p < end; p++) {
        if ((p != buf && p[-1] != '\n') || !lg_cex_starts(p, end, "Status:")) continue;
        const char *v = p + 7;
        while (v < end && (*v == ' ' || *v == '\t')) v++;
        lg_cex_line(v, end, line, sizeof line);
        snprintf(a.said, sizeof a.said, "glpsol: %s", line);
        if (!strcmp(line, "INTEGER OPTIMAL") || !strcmp(line, "INTEGER NON-OPTIMAL") || !strcmp(line, "OPTIMAL") ||
            !strcmp(line, "FEASIBLE"))
            a.kind = LG_CEX_POINT;
        else if (!strcmp(line, "INTEGER EMPTY") || !strcmp(line, "INFEASIBLE (FINAL)"))
            a.kind = LG_CEX_UNSAT;
        else
            a.kind = LG_CEX_UNKNOWN; /* UNDEFINED, INTEGER UNDEFINED, INFEASIBLE (INTERMEDIATE), ... */
        return a;
    }
    /* the first token, after blank lines and ';' comments */
    const char *p = buf;
    for (;;) {
        p = lg_cex_ws(p, end);
        if (p < end && *p == ';') {
            while (p < end && *p != '\n') p++;
            continue;
        }
        break;
    }
    if (p >= end) return a;
    lg_cex_line(p, end, line, sizeof line);
    /* CBC's solu file: "Optimal - objective value ...", "Infeasible - ...", "Stopped on time - ..." */
    static const struct {
        const char *head;
        lg_cex_kind kind;
    } cbc[] = {{"Optimal", LG_CEX_POINT},           {"Infeasible", LG_CEX_UNSAT},
               {"Integer infeasible", LG_CEX_UNSAT}, {"Stopped on time", LG_CEX_TIMEOUT},
               {"Stopped", LG_CEX_UNKNOWN},          {"Unbounded", LG_CEX_UNKNOWN}};
    for (size_t k = 0; k < sizeof cbc / sizeof cbc[0]; k++)
        if (lg_cex_starts(p, end, cbc[k].head)) {
            char *dash = strstr(line, " - ");
            if (dash) *dash = '\0';
            snprintf(a.said, sizeof a.said, "CBC: %s", line);
            a.kind = cbc[k].kind;
            return a;
        }
    /* an SMT-LIB 2 solver (z3, cvc5) or a VNN-COMP result/counterexample */
    static const struct {
        const char *word;
        lg_cex_kind kind;
    } smt[] = {{"sat", LG_CEX_POINT},
               {"unsat", LG_CEX_UNSAT},
               {"unknown", LG_CEX_UNKNOWN},
               {"timeout", LG_CEX_TIMEOUT}};
    for (size_t k = 0; k < sizeof smt / sizeof smt[0]; k++)
        if (lg_cex_word(p, end, smt[k].word)) {
            snprintf(a.said, sizeof a.said, "SMT-LIB solver: %s", smt[k].word);
            a.kind = smt[k].kind;
            return a;
        }
    if (lg_cex_starts(p, end, "(error")) {
        snprintf(a.said, sizeof a.said, "SMT-LIB solver: %s", line);
        a.kind = LG_CEX_UNKNOWN;
        return a;
    }
    if (*p == '(') { /* a model or a VNN-COMP assignment without its "sat" line */
        snprintf(a.said, sizeof a.said, "a model without a status line");
        a.kind = LG_CEX_POINT;
    }
    return a;
}

/* Fill x[n_in] from the solver output in buf; have[i] marks values found. */
static void lg_cex_values(const char *buf, size_t len, int n_in, double *x, char *have)
{
    const char *end = buf + len;
    mpq_t q;
    mpq_init(q);
    const char *p = buf;
    while (p < end) {
        /* the next identifier */
        while (p < end && !(isalpha((unsigned char)*p) || *p == '_')) p++;
        const char *s = p;
        while (p < end && (isalnum((unsigned char)*p) || *p == '_')) p++;
        int i;
        if (!lg_cex_xname(s, (size_t)(p - s), n_in, &i)) continue;
        if (s > buf && (s[-1] == '(' || isspace((unsigned char)s[-1]))) {
            const char *r = lg_cex_ws(p, end);
            /* SMT-LIB: (define-fun X_i () Real v) */
            if ((size_t)(end - r) >= 2 && r[0] == '(' && r[1] == ')') {
                r = lg_cex_ws(r + 2, end);
                while (r < end && isalpha((unsigned char)*r)) r++; /* the sort */
                const char *after = lg_cex_term(r, end, q);
                if (after) {
                    x[i] = lg_cex_nearest(q);
                    have[i] = 1;
                    p = after;
                }
                continue;
            }
            /* glpsol/CBC rows and VNN-COMP pairs: the next number ('*' marks integer
             * columns; an LP solution of glpsol has a status B, NL, NU, NF or NS first) */
            while (r < end && (*r == '*' || *r == ' ' || *r == '\t')) r++;
            if (r + 1 < end && r[0] == 'B' && (r[1] == ' ' || r[1] == '\t')) r++;
            else if (r + 2 < end && r[0] == 'N' && strchr("LUFS", r[1]) && (r[2] == ' ' || r[2] == '\t')) r += 2;
            char *e;
            errno = 0;
            double v = strtod(r, &e);
            if (e != r && errno == 0 && isfinite(v)) {
                x[i] = v;
                have[i] = 1;
                p = e;
            }
        }
    }
    mpq_clear(q);
}

int lg_cmd_cex(int argc, char **argv)
{
    enum { O_VNN = 256 };
    static const struct option lo[] = {{"vnnlib", required_argument, 0, O_VNN},
                                       {"output", required_argument, 0, 'o'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    const char *vnn = NULL, *out = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", lo, NULL)) != -1) {
        switch (c) {
        case O_VNN: vnn = optarg; break;
        case 'o': out = optarg; break;
        case 'h': lg_cex_help(); return 0;
        default: return lg_cli_usage("cex", "unknown option");
        }
    }
    if (optind != argc - 2) return lg_cli_usage("cex", "expected a network file and a solver output file");
    if (!vnn) return lg_cli_usage("cex", "--vnnlib P is required");
    if (lg_cli_check_output(out) != LG_OK) return lg_cli_usage("cex", "-o/--output: %s", lg_errmsg());
    const char *sol = argv[optind + 1];
    lg_net net;
    lg_prop prop = {0};
    lg_verify_report r = {0};
    unsigned char *buf = NULL;
    size_t len = 0;
    char *have = NULL;
    double *x = NULL, *xc = NULL;
    int rc = 1;
    lg_status st = lg_cli_load_lowered(&net, argv[optind], 0);
    if (st != LG_OK) return lg_cli_fail("cex", st);
    int n_in = net.n_in, n_out = lg_net_n_out(&net);
    if ((st = lg_vnnlib_read_net(&prop, vnn, &net)) != LG_OK) goto fail;
    if ((st = lg_file_slurp(sol, LG_CEX_MAX_BYTES, &buf, &len)) != LG_OK) goto fail;
    have = calloc((size_t)n_in, 1);
    x = calloc((size_t)n_in, sizeof *x);
    xc = calloc((size_t)n_in, sizeof *xc);
    r.x = calloc((size_t)n_in, sizeof *r.x);
    r.y = calloc((size_t)n_out, sizeof *r.y);
    if (!have || !x || !xc || !r.x || !r.y) {
        st = lg_fail(LG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    r.n_in = n_in;
    r.n_out = n_out;
    r.violated_case = -1;
    r.verdict = LG_VERDICT_UNKNOWN;
    r.how.stage = LG_STAGE_EXTERNAL;
    lg_verify_report_method(&r);
    lg_cex_answer ans = lg_cex_classify((const char *)buf, len);
    if (ans.kind == LG_CEX_NONE) { /* a file of the wrong kind: a usage error (exit 2) */
        st = lg_fail(LG_ERR_ARG, "%s: not a solver answer: no status (sat, unsat, unknown, timeout; glpsol's Status:; "
                                 "CBC's first line) and no value of X_0 (expected a z3 or cvc5 output, a glpsol or CBC "
                                 "solution, or a VNN-COMP counterexample for %d inputs)",
                     sol, n_in);
        goto fail;
    }
    if (prop.n_cases == 0) { /* every input box of P is empty: nothing can violate, whatever the solver said */
        r.verdict = LG_VERDICT_ROBUST;
        snprintf(ans.said, sizeof ans.said, "every input box of the property is empty");
    } else if (ans.kind == LG_CEX_POINT) {
        lg_cex_values((const char *)buf, len, n_in, x, have);
        int missing = -1;
        for (int i = n_in - 1; i >= 0; i--)
            if (!have[i]) missing = i;
        if (missing >= 0) {
            lg_outcome_unknown(&r.how, LG_REASON_EXTERNAL, 0, "%s, but no value of X_%d: nothing to re-check", ans.said,
                               missing);
        } else {
            for (int k = 0; k < prop.n_cases && r.verdict != LG_VERDICT_VIOLATED; k++) {
                memcpy(xc, x, (size_t)n_in * sizeof *xc);
                int ok = lg_witness_accept(&net, &prop, k, xc, r.y);
                if (ok < 0) {
                    st = lg_fail(LG_ERR_NOMEM, "out of memory in the exact re-check");
                    goto fail;
                }
                if (ok) {
                    r.verdict = LG_VERDICT_VIOLATED;
                    r.violated_case = k;
                    memcpy(r.x, xc, (size_t)n_in * sizeof *r.x);
                }
            }
            if (r.verdict != LG_VERDICT_VIOLATED)
                lg_outcome_unknown(&r.how, LG_REASON_WITNESS, 0, "%s, but its point fails the exact re-check of every case",
                                   ans.said);
        }
    } else if (ans.kind == LG_CEX_UNSAT && prop.n_cases == 1) {
        /* the solver's complete answer to the whole query: no point of the box violates */
        r.verdict = LG_VERDICT_ROBUST;
    } else if (ans.kind == LG_CEX_UNSAT) {
        lg_outcome_unknown(&r.how, LG_REASON_EXTERNAL, 0, "%s for the one case of the query; the property has %d cases",
                           ans.said, prop.n_cases);
    } else {
        int late = ans.kind == LG_CEX_TIMEOUT;
        lg_outcome_unknown(&r.how, late ? LG_REASON_TIMEOUT : LG_REASON_EXTERNAL, late, "%s", ans.said);
    }
    if (r.verdict == LG_VERDICT_VIOLATED)
        printf("violated\n  the point of %s passes the exact re-check (case %d of %s)\n", sol, r.violated_case, vnn);
    else if (r.verdict == LG_VERDICT_ROBUST)
        printf("unsat (%s: no point violates %s%s)\n", ans.said, vnn,
               prop.n_cases ? "; the solver's answer, not re-checked" : "");
    else printf("%s (%s)\n", r.how.timed_out ? "timeout" : "unknown", r.how.reason);
    if (out && (st = lg_verify_write_result_path(&r, out)) != LG_OK) goto fail;
    rc = 0;
fail:
    if (rc) rc = lg_cli_fail("cex", st);
    free(buf);
    free(have);
    free(x);
    free(xc);
    lg_verify_report_free(&r);
    lg_prop_free(&prop);
    lg_net_free(&net);
    return rc;
}
