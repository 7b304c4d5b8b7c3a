/* arch_vit.c — the ViT form of the `--arch` grammar (arch_vit.h). */
#include "core/arch_vit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/net.h"

int lg_arch_is_vit(const char *s) { return strstr(s, "vit:") != NULL; }

int lg_vit_n_patches(const lg_vit_spec *v) { return (v->H / v->patch) * (v->W / v->patch); }
int lg_vit_n_tokens(const lg_vit_spec *v) { return lg_vit_n_patches(v) + (v->cls ? 1 : 0); }
int lg_vit_patch_len(const lg_vit_spec *v) { return v->C * v->patch * v->patch; }

static lg_status lg_vit_bad(const char *s, int no, const char *tok, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return lg_fail(LG_ERR_ARG, "architecture '%s', token %d '%s': %s", s, no, tok, what);
}

/* A positive int filling all of q; −1 otherwise. */
static long lg_vit_int(const char *q)
{
    char *end;
    if (*q < '0' || *q > '9') return -1;
    long v = strtol(q, &end, 10);
    return *end == '\0' && v >= 1 && v <= LG_NET_MAX_DIM ? v : -1;
}

lg_status lg_arch_vit_parse(lg_vit_spec *v, const char *s)
{
    memset(v, 0, sizeof *v);
    v->cls = 1;
    const char *expect = "the fields p<P>, d<D>, h<NH>, L<L>, m<M>, cls or mean, then the output width N";
    int seen_pool = 0, no = 0, done = 0;
    long val[5] = {0, 0, 0, 0, 0}; /* p d h L m */
    const char *names = "pdhLm";
    const char *p = s;
    char tok[64];
    for (;;) {
        size_t len = strcspn(p, ",");
        no++;
        snprintf(tok, sizeof tok, "%.*s", (int)(len < sizeof tok ? len : sizeof tok - 1), p);
        int last = p[len] == '\0';
        if (len == 0 || len >= sizeof tok) return lg_vit_bad(s, no, tok, "empty or too long (expected %s)", expect);
        if (no == 1) {
            long c, h, w;
            char *e1, *e2, *e3;
            c = strtol(tok, &e1, 10);
            if (*e1 != 'x') return lg_vit_bad(s, no, tok, "a ViT needs an image input CxHxW");
            h = strtol(e1 + 1, &e2, 10);
            if (*e2 != 'x') return lg_vit_bad(s, no, tok, "a ViT needs an image input CxHxW");
            w = strtol(e2 + 1, &e3, 10);
            if (*e3 || c < 1 || h < 1 || w < 1 || c * h * w > LG_NET_MAX_DIM)
                return lg_vit_bad(s, no, tok, "a ViT needs an image input CxHxW (at most %d values)", LG_NET_MAX_DIM);
            v->C = (int)c, v->H = (int)h, v->W = (int)w;
        } else if (no == 2) {
            if (strncmp(tok, "vit:", 4) != 0)
                return lg_vit_bad(s, no, tok, "expected 'vit:' right after the input, then %s", expect);
            memmove(tok, tok + 4, strlen(tok + 4) + 1);
            goto field;
        } else {
        field:
            if (done) return lg_vit_bad(s, no, tok, "the output width N is the last token");
            if (strcmp(tok, "cls") == 0 || strcmp(tok, "mean") == 0) {
                if (seen_pool++) return lg_vit_bad(s, no, tok, "the pooling (cls or mean) is given twice");
                v->cls = tok[0] == 'c';
            } else if (tok[0] >= '0' && tok[0] <= '9') {
                long n = lg_vit_int(tok);
                if (n < 1) return lg_vit_bad(s, no, tok, "expected the output width N ≥ 1");
                v->n_out = (int)n;
                done = 1;
            } else {
                const char *f = tok[0] ? strchr(names, tok[0]) : NULL;
                long n = f ? lg_vit_int(tok + 1) : -1;
                if (!f || n < 1) return lg_vit_bad(s, no, tok, "expected %s", expect);
                if (val[f - names]) return lg_vit_bad(s, no, tok, "the field %c is given twice", tok[0]);
                val[f - names] = n;
            }
        }
        if (last) break;
        p += len + 1;
    }
    if (no < 2) return lg_fail(LG_ERR_ARG, "architecture '%s': expected 'vit:' and %s after the input", s, expect);
    for (int i = 0; i < 5; i++)
        if (!val[i])
            return lg_fail(LG_ERR_ARG, "architecture '%s': the ViT field %c<...> is missing (expected %s)", s, names[i],
                           expect);
    if (!done) return lg_fail(LG_ERR_ARG, "architecture '%s': expected the output width N as the last token", s);
    v->patch = (int)val[0], v->dim = (int)val[1], v->heads = (int)val[2], v->depth = (int)val[3];
    v->mlp = (int)val[4];
    if (v->H % v->patch || v->W % v->patch)
        return lg_fail(LG_ERR_ARG, "architecture '%s': the patch size %d must divide the image %dx%d", s, v->patch,
                       v->H, v->W);
    if (v->dim % v->heads)
        return lg_fail(LG_ERR_ARG, "architecture '%s': the %d heads must divide the width %d", s, v->heads, v->dim);
    if (v->depth > 64) return lg_fail(LG_ERR_ARG, "architecture '%s': at most 64 blocks, got %d", s, v->depth);
    return LG_OK;
}
