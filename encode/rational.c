/* rational.c — exact decimal expansion of m·2^e (see rational.h).
 *
 * A double is split with frexp into m·2^e, m < 2^53 odd (trailing zero bits
 * moved into e). The power-of-two factor is applied to a little-endian
 * base-10^9 big integer by repeated multiplication by 2^k, k ≤ 29, so the
 * digits are exact. */
#include "encode/rational.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define LIMB_BASE 1000000000u
#define MAX_LIMBS ((LG_RAT_DIGITS + 8) / 9 + 1)

typedef struct bigdec {
    uint32_t limb[MAX_LIMBS]; /* little endian, base 10^9 */
    int n;
} bigdec;

static void big_set_u64(bigdec *b, uint64_t v)
{
    b->n = 0;
    do {
        b->limb[b->n++] = (uint32_t)(v % LIMB_BASE);
        v /= LIMB_BASE;
    } while (v);
}

/* b ← b·2^k for any k ≥ 0. */
static void big_shl(bigdec *b, int k)
{
    while (k > 0) {
        int s = k > 29 ? 29 : k;
        uint64_t carry = 0;
        for (int i = 0; i < b->n; i++) {
            uint64_t t = ((uint64_t)b->limb[i] << s) + carry;
            b->limb[i] = (uint32_t)(t % LIMB_BASE);
            carry = t / LIMB_BASE;
        }
        while (carry) {
            LG_ASSERT(b->n < MAX_LIMBS);
            b->limb[b->n++] = (uint32_t)(carry % LIMB_BASE);
            carry /= LIMB_BASE;
        }
        k -= s;
    }
}

static void big_str(const bigdec *b, char *out)
{
    char *p = out + sprintf(out, "%u", (unsigned)b->limb[b->n - 1]);
    for (int i = b->n - 2; i >= 0; i--) p += sprintf(p, "%09u", (unsigned)b->limb[i]);
}

lg_status lg_rat_from_double(lg_rat *r, double v)
{
    if (!isfinite(v)) return lg_fail(LG_ERR_NUMERIC, "cannot represent non-finite value %g as a rational", v);
    r->neg = v < 0;
    if (v == 0) {
        strcpy(r->num, "0");
        strcpy(r->den, "1");
        r->neg = 0;
        return LG_OK;
    }
    int e;
    double f = frexp(fabs(v), &e);       /* |v| = f·2^e, f ∈ [0.5, 1) */
    uint64_t m = (uint64_t)ldexp(f, 53); /* exact: f has ≤ 53 significant bits */
    e -= 53;                             /* |v| = m·2^e */
    while ((m & 1u) == 0) {
        m >>= 1;
        e++;
    }
    bigdec num, den;
    big_set_u64(&num, m);
    big_set_u64(&den, 1);
    if (e >= 0)
        big_shl(&num, e);
    else
        big_shl(&den, -e);
    big_str(&num, r->num);
    big_str(&den, r->den);
    return LG_OK;
}

int lg_rat_is_zero(const lg_rat *r) { return strcmp(r->num, "0") == 0; }

lg_status lg_rat_inverse(lg_rat *r)
{
    if (lg_rat_is_zero(r)) return lg_fail(LG_ERR_NUMERIC, "cannot invert zero");
    char t[LG_RAT_DIGITS];
    memcpy(t, r->num, sizeof t);
    memcpy(r->num, r->den, sizeof t);
    memcpy(r->den, t, sizeof t);
    return LG_OK;
}

char *lg_rat_str(const lg_rat *r, char *buf)
{
    sprintf(buf, "%s%s/%s", r->neg ? "-" : "", r->num, r->den);
    return buf;
}

void lg_rat_write_smt(const lg_rat *r, FILE *f)
{
    if (lg_rat_is_zero(r))
        fputs("0.0", f);
    else if (r->neg)
        fprintf(f, "(- (/ %s %s))", r->num, r->den);
    else
        fprintf(f, "(/ %s %s)", r->num, r->den);
}
