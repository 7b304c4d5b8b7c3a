/* vnnlib_write.c — a robustness query as a VNN-LIB file (vnnlib.h). */
#include "verify/vnnlib.h"

#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Print the dyadic rational q exactly as a decimal: q = m / 2^k has exactly
 * k digits after the point (m·5^k / 10^k). */
static void lg_vw_decimal(FILE *f, const mpq_t q)
{
    mpz_t num, den, ip, fp, p5;
    mpz_inits(num, den, ip, fp, p5, NULL);
    mpq_get_num(num, q);
    mpq_get_den(den, q);
    int neg = mpz_sgn(num) < 0;
    mpz_abs(num, num);
    size_t k = mpz_sizeinbase(den, 2) - 1; /* den = 2^k (every double is dyadic) */
    mpz_tdiv_qr(ip, fp, num, den);
    fputs(neg ? "-" : "", f);
    mpz_out_str(f, 10, ip);
    if (k > 0 && mpz_sgn(fp) != 0) {
        mpz_ui_pow_ui(p5, 5, (unsigned long)k);
        mpz_mul(fp, fp, p5); /* fp / 10^k */
        char *digits = mpz_get_str(NULL, 10, fp);
        size_t n = strlen(digits), last = k; /* digit i of the k is '0' for i < k − n, else digits[i − (k − n)] */
        while (last > 0 && last > k - n && digits[last - 1 - (k - n)] == '0') last--;
        fputc('.', f);
        for (size_t i = 0; i < last; i++) fputc(i < k - n ? '0' : digits[i - (k - n)], f);
        void (*freefn)(void *, size_t);
        mp_get_memory_functions(NULL, NULL, &freefn);
        freefn(digits, n + 1);
    }
    mpz_clears(num, den, ip, fp, p5, NULL);
}

lg_status lg_vnnlib_write_robustness(FILE *f, const double *x0, int n_in, double eps, double clip_lo, double clip_hi,
                                     int label, int n_out, double margin, const char *comment)
{
    if (n_in < 1 || n_out < 2 || label < 0 || label >= n_out)
        return lg_fail(LG_ERR_ARG, "VNN-LIB: label %d must be in [0, %d) with at least 2 outputs", label, n_out);
    if (!isfinite(eps) || eps < 0 || !isfinite(clip_lo) || !isfinite(clip_hi) || clip_lo > clip_hi || !isfinite(margin))
        return lg_fail(LG_ERR_ARG, "VNN-LIB: need a finite eps >= 0, finite clip bounds and margin");
    for (int i = 0; i < n_in; i++)
        if (!isfinite(x0[i])) return lg_fail(LG_ERR_ARG, "VNN-LIB: input %d is not finite", i);
    for (const char *p = comment; p && *p;) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        fprintf(f, "; %.*s\n", len, p);
        p += len + (nl != NULL);
    }
    for (int i = 0; i < n_in; i++) fprintf(f, "(declare-const X_%d Real)\n", i);
    for (int j = 0; j < n_out; j++) fprintf(f, "(declare-const Y_%d Real)\n", j);
    mpq_t q, e, c;
    mpq_inits(q, e, c, NULL);
    mpq_set_d(e, eps);
    for (int i = 0; i < n_in; i++) {
        /* the real ball's ends clipped as lg_ball_boxes clips them (core/ball.h) */
        for (int side = 0; side < 2; side++) {
            mpq_set_d(q, x0[i]);
            if (side == 0) mpq_sub(q, q, e);
            else mpq_add(q, q, e);
            mpq_set_d(c, side == 0 ? clip_lo : clip_hi);
            if (side == 0 ? mpq_cmp(q, c) < 0 : mpq_cmp(q, c) > 0) mpq_set(q, c);
            fprintf(f, "(assert (%s X_%d ", side == 0 ? ">=" : "<=", i);
            lg_vw_decimal(f, q);
            fputs("))\n", f);
        }
    }
    /* counterexample: some j ≠ label with Y_label − Y_j ≤ margin */
    mpq_set_d(q, margin);
    fputs("(assert (or\n", f);
    for (int j = 0; j < n_out; j++) {
        if (j == label) continue;
        fprintf(f, "    (and (<= (- Y_%d Y_%d) ", label, j);
        lg_vw_decimal(f, q);
        fputs("))\n", f);
    }
    fputs("))\n", f);
    mpq_clears(q, e, c, NULL);
    if (ferror(f)) return lg_fail(LG_ERR_IO, "VNN-LIB: write error");
    return LG_OK;
}
