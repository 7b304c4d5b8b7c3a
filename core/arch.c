/* arch.c — the `--arch` grammar (arch.h; docs/USAGE.md "Architectures"). */
#include "core/arch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a parse builds up: growing arrays of layers and terms, and the
 * current node (its index, width and image shape; C = 0 when flat). */
typedef struct lg_arch_state {
    lg_arch *a;
    int cap_layers, cap_terms, n_terms;
    int *first;            /* [cap_layers] index of each layer's first term */
    int node, width;
    long C, H, W;
    const char *text, *tok;
    int tok_no;
} lg_arch_state;

/* The token's error: names the whole text, the token's number and text, and what was expected. */
static lg_status lg_arch_bad(const lg_arch_state *S, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return lg_fail(LG_ERR_ARG, "architecture '%s', token %d '%s': %s", S->text, S->tok_no, S->tok, what);
}

/* Read an int ≥ 0 at *p, advancing it; −1 when there is none or it is too large. */
static long lg_arch_int(const char **p)
{
    char *end;
    if (**p < '0' || **p > '9') return -1;
    long v = strtol(*p, &end, 10);
    *p = end;
    return v >= 0 && v <= LG_NET_MAX_DIM ? v : -1;
}

/* "A" or "AxB" into a, b (b = a when absent); 0 on success. */
static int lg_arch_pair(const char **p, long *a, long *b)
{
    if ((*a = lg_arch_int(p)) < 0) return -1;
    *b = *a;
    if (**p == 'x') {
        (*p)++;
        if ((*b = lg_arch_int(p)) < 0) return -1;
    }
    return 0;
}

/* Optional "x<R>" repetition at *p (default 1); −1 when malformed. */
static long lg_arch_reps(const char **p)
{
    if (**p != 'x') return 1;
    (*p)++;
    long r = lg_arch_int(p);
    return r >= 1 && r <= LG_NET_MAX_LAYERS ? r : -1;
}

/* Append a layer of width n_out with terms t[0..nt), reading whatever src each
 * names; returns its index, or −1 (out of memory / too many layers). */
static int lg_arch_add(lg_arch_state *S, int n_out, int hidden, int nt, const lg_linear *t)
{
    lg_arch *a = S->a;
    if (a->n_layers >= LG_NET_MAX_LAYERS) return -1;
    if (a->n_layers == S->cap_layers) {
        int nc = S->cap_layers ? 2 * S->cap_layers : 16;
        lg_layer_spec *sp = realloc(a->specs, (size_t)nc * sizeof *sp);
        if (!sp) return -1;
        a->specs = sp;
        unsigned char *h = realloc(a->hidden, (size_t)nc);
        if (!h) return -1;
        a->hidden = h;
        int *f = realloc(S->first, (size_t)nc * sizeof *f);
        if (!f) return -1;
        S->first = f;
        S->cap_layers = nc;
    }
    if (S->n_terms + nt > S->cap_terms) {
        int nc = S->cap_terms ? 2 * S->cap_terms : 32;
        lg_linear *tm = realloc(a->terms, (size_t)nc * sizeof *tm);
        if (!tm) return -1;
        a->terms = tm;
        S->cap_terms = nc;
    }
    int k = a->n_layers++;
    a->specs[k] = (lg_layer_spec){n_out, LG_ACT_IDENTITY, nt, NULL};
    a->hidden[k] = (unsigned char)hidden;
    S->first[k] = S->n_terms;
    for (int i = 0; i < nt; i++) {
        a->terms[S->n_terms] = t[i];
        a->terms[S->n_terms].n_out = n_out;
        S->n_terms++;
    }
    return k;
}

/* A term reading node src of width n_in. */
static lg_linear lg_arch_dense(int src, int n_in) { return (lg_linear){.kind = LG_LAYER_DENSE, .n_in = n_in, .src = src}; }
static lg_linear lg_arch_index(int src, int n_in) { return (lg_linear){.kind = LG_LAYER_INDEX, .n_in = n_in, .src = src}; }
static lg_linear lg_arch_conv(int src, const lg_conv *c)
{
    return (lg_linear){.kind = LG_LAYER_CONV2D, .n_in = c->c_in * c->h_in * c->w_in, .conv = *c, .src = src};
}

/* Conv geometry from the current image; 0 when the kernel does not fit or the sizes are too large. */
static int lg_arch_geom(const lg_arch_state *S, long co, long kh, long kw, long sh, long sw, long ph, long pw, lg_conv *c)
{
    *c = (lg_conv){(int)S->C, (int)S->H, (int)S->W, (int)co, 0, 0, (int)kh, (int)kw, (int)sh, (int)sw, (int)ph, (int)pw};
    if (co < 1 || kh < 1 || kw < 1 || sh < 1 || sw < 1) return 0;
    c->h_out = lg_conv_out_size(c->h_in, c->kh, c->sh, c->ph);
    c->w_out = lg_conv_out_size(c->w_in, c->kw, c->sw, c->pw);
    return c->h_out > 0 && c->w_out > 0 && (long long)co * c->h_out * c->w_out <= LG_NET_MAX_DIM;
}

#define LG_ARCH_ADD(S, ...)                                                              \
    do {                                                                                 \
        if (lg_arch_add(S, __VA_ARGS__) < 0) goto nomem;                                 \
    } while (0)

/* One token after the input; `last` when it is the output layer. */
static lg_status lg_arch_token(lg_arch_state *S, const char *q, int last)
{
    if (q[0] == 'r' && q[1] == 'c') { /* rc<C>k<K>[s<S>][x<R>] */
        long co, k, s = 1, reps;
        q += 2;
        if ((co = lg_arch_int(&q)) < 1 || *q++ != 'k' || (k = lg_arch_int(&q)) < 1 ||
            (*q == 's' && (q++, (s = lg_arch_int(&q)) < 1)) || (reps = lg_arch_reps(&q)) < 0 || *q)
            return lg_arch_bad(S, "expected a residual conv block rc<C>k<K>[s<S>][x<R>] (C channels, K x K "
                                  "kernel, K odd, stride S of the first conv, R blocks)");
        if (S->C == 0) return lg_arch_bad(S, "a residual conv block needs an image before it (a CxHxW input or a conv)");
        if (k % 2 == 0) return lg_arch_bad(S, "a residual conv block keeps the image size: expected an odd kernel, got %ld", k);
        if (last) return lg_arch_bad(S, "the last token is the output layer: expected a width N or a conv, not a block");
        for (long r = 0; r < reps; r++) {
            long st = r == 0 ? s : 1;
            lg_conv c1, c2, cs;
            if (!lg_arch_geom(S, co, k, k, st, st, k / 2, k / 2, &c1))
                return lg_arch_bad(S, "the kernel does not fit the %ldx%ldx%ld image", S->C, S->H, S->W);
            int in = S->node, in_w = S->width;
            int same = S->C == co && st == 1;
            if (!same && !lg_arch_geom(S, co, 1, 1, st, st, 0, 0, &cs))
                return lg_arch_bad(S, "the 1x1 shortcut does not fit the %ldx%ldx%ld image", S->C, S->H, S->W);
            lg_linear t1 = lg_arch_conv(in, &c1);
            LG_ARCH_ADD(S, (int)(co * c1.h_out * c1.w_out), 1, 1, &t1);
            S->C = co, S->H = c1.h_out, S->W = c1.w_out;
            if (!lg_arch_geom(S, co, k, k, 1, 1, k / 2, k / 2, &c2))
                return lg_arch_bad(S, "the kernel does not fit the %ldx%ldx%ld image", S->C, S->H, S->W);
            lg_linear t2[2] = {lg_arch_conv(S->a->n_layers - 1, &c2), same ? lg_arch_index(in, in_w) : lg_arch_conv(in, &cs)};
            LG_ARCH_ADD(S, (int)(co * c2.h_out * c2.w_out), 1, 2, t2);
            S->node = S->a->n_layers - 1;
            S->width = (int)(co * c2.h_out * c2.w_out);
        }
        S->a->chain = 0;
        return LG_OK;
    }
    if (q[0] == 'r') { /* r<N>[x<R>] */
        long n, reps;
        q++;
        if ((n = lg_arch_int(&q)) < 1 || (reps = lg_arch_reps(&q)) < 0 || *q)
            return lg_arch_bad(S, "expected a residual dense block r<N>[x<R>] (width N, R blocks)");
        if (last) return lg_arch_bad(S, "the last token is the output layer: expected a width N or a conv, not a block");
        for (long r = 0; r < reps; r++) {
            int in = S->node, in_w = S->width;
            lg_linear t1 = lg_arch_dense(in, in_w);
            LG_ARCH_ADD(S, (int)n, 1, 1, &t1);
            lg_linear t2[2] = {lg_arch_dense(S->a->n_layers - 1, (int)n),
                               in_w == n ? lg_arch_index(in, in_w) : lg_arch_dense(in, in_w)};
            LG_ARCH_ADD(S, (int)n, 1, 2, t2);
            S->node = S->a->n_layers - 1;
            S->width = (int)n;
        }
        S->C = 0;
        S->a->chain = 0;
        return LG_OK;
    }
    if (q[0] == 'm') { /* m<N>:<H>[x<R>] */
        long n, h, reps;
        q++;
        if ((n = lg_arch_int(&q)) < 1 || *q++ != ':' || (h = lg_arch_int(&q)) < 1 || (reps = lg_arch_reps(&q)) < 0 || *q)
            return lg_arch_bad(S, "expected a Transformer-style MLP block m<N>:<H>[x<R>] (width N, hidden width H, "
                                  "R blocks)");
        if (n != S->width)
            return lg_arch_bad(S, "an MLP block adds its input to its output: expected N = %d, the width before it",
                               S->width);
        if (last) return lg_arch_bad(S, "the last token is the output layer: expected a width N or a conv, not a block");
        for (long r = 0; r < reps; r++) {
            int in = S->node;
            lg_linear t1 = lg_arch_dense(in, (int)n);
            LG_ARCH_ADD(S, (int)h, 1, 1, &t1);
            lg_linear t2[2] = {lg_arch_dense(S->a->n_layers - 1, (int)h), lg_arch_index(in, (int)n)};
            LG_ARCH_ADD(S, (int)n, 0, 2, t2);
            S->node = S->a->n_layers - 1;
        }
        S->C = 0;
        S->a->chain = 0;
        return LG_OK;
    }
    if (q[0] == 'c') { /* c<C>k<K>[x<K2>][s<S>[x<S2>]][p<P>[x<P2>]] */
        long co, kh, kw, sh = 1, sw = 1, ph = 0, pw = 0;
        q++;
        if ((co = lg_arch_int(&q)) < 1 || *q++ != 'k' || lg_arch_pair(&q, &kh, &kw) ||
            (*q == 's' && (q++, lg_arch_pair(&q, &sh, &sw))) || (*q == 'p' && (q++, lg_arch_pair(&q, &ph, &pw))) || *q)
            return lg_arch_bad(S, "expected a conv c<C>k<K>[x<K>][s<S>[x<S>]][p<P>[x<P>]]");
        if (S->C == 0) return lg_arch_bad(S, "a conv needs an image before it (a CxHxW input or a conv)");
        lg_conv c;
        if (!lg_arch_geom(S, co, kh, kw, sh, sw, ph, pw, &c) || ph >= kh || pw >= kw)
            return lg_arch_bad(S, "the kernel does not fit the %ldx%ldx%ld image (padding below the kernel size)",
                               S->C, S->H, S->W);
        lg_linear t = lg_arch_conv(S->node, &c);
        LG_ARCH_ADD(S, (int)(co * c.h_out * c.w_out), !last, 1, &t);
        S->node = S->a->n_layers - 1;
        S->width = (int)(co * c.h_out * c.w_out);
        S->C = co, S->H = c.h_out, S->W = c.w_out;
        return LG_OK;
    }
    long v = lg_arch_int(&q);
    if (v < 1 || *q)
        return lg_arch_bad(S, "expected a width N, a conv c<C>k<K>..., or a block r<N>, m<N>:<H> or rc<C>k<K>");
    lg_linear t = lg_arch_dense(S->node, S->width);
    LG_ARCH_ADD(S, (int)v, !last, 1, &t);
    S->node = S->a->n_layers - 1;
    S->width = (int)v;
    S->C = 0;
    return LG_OK;
nomem:
    return lg_fail(LG_ERR_NOMEM, "architecture '%s': out of memory or more than %d layers", S->text, LG_NET_MAX_LAYERS);
}

lg_status lg_arch_parse(lg_arch *a, const char *s)
{
    memset(a, 0, sizeof *a);
    a->chain = 1;
    lg_arch_state S = {.a = a, .node = LG_NET_INPUT, .text = s};
    lg_status st = LG_OK;
    char tok[128];
    const char *p = s;
    for (;;) {
        size_t len = strcspn(p, ",");
        S.tok_no++;
        S.tok = tok;
        snprintf(tok, sizeof tok, "%.*s", (int)(len < sizeof tok ? len : sizeof tok - 1), p);
        if (len == 0) {
            st = lg_fail(LG_ERR_ARG, "architecture '%s', token %d: empty (expected N, CxHxW, a conv or a block)", s,
                         S.tok_no);
            goto fail;
        }
        if (len >= sizeof tok) {
            st = lg_arch_bad(&S, "token longer than %zu characters", sizeof tok - 1);
            goto fail;
        }
        int last = p[len] == '\0';
        if (S.tok_no == 1) { /* the input: N or CxHxW */
            long v[3];
            int k = 0;
            const char *q = tok;
            while (k < 3 && (v[k] = lg_arch_int(&q)) >= 1) {
                k++;
                if (*q != 'x') break;
                q++;
            }
            long total = k == 3 ? v[0] * v[1] * v[2] : k == 1 ? v[0] : 0;
            if (*q || (k != 1 && k != 3) || total < 1 || total > LG_NET_MAX_DIM) {
                st = lg_arch_bad(&S, "expected the input size N or an image CxHxW (at most %d values)", LG_NET_MAX_DIM);
                goto fail;
            }
            if (k == 3) S.C = v[0], S.H = v[1], S.W = v[2];
            a->n_in = S.width = (int)total;
            if (last) {
                st = lg_fail(LG_ERR_ARG, "architecture '%s': expected at least one layer after the input", s);
                goto fail;
            }
        } else if ((st = lg_arch_token(&S, tok, last)) != LG_OK) {
            goto fail;
        }
        if (last) break;
        p += len + 1;
    }
    for (int k = 0; k < a->n_layers; k++) a->specs[k].terms = a->terms + S.first[k];
    free(S.first);
    return LG_OK;
fail:
    free(S.first);
    lg_arch_free(a);
    return st;
}

lg_status lg_arch_build(lg_net *net, const lg_arch *a, lg_act hidden)
{
    lg_layer_spec *sp = malloc((size_t)a->n_layers * sizeof *sp);
    if (!sp) {
        memset(net, 0, sizeof *net);
        return lg_fail(LG_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; k < a->n_layers; k++) {
        sp[k] = a->specs[k];
        sp[k].act = a->hidden[k] ? hidden : LG_ACT_IDENTITY;
    }
    lg_status st = lg_net_build(net, a->n_in, a->n_layers, sp);
    free(sp);
    if (st != LG_OK) return st;
    /* every index map of an architecture is a shortcut's identity */
    for (int k = 0; k < net->n_layers; k++)
        for (int t = 0; t < lg_layer_n_lin(&net->layers[k]); t++) {
            lg_linear *A = lg_layer_lin_mut(&net->layers[k], t);
            if (A->kind == LG_LAYER_INDEX)
                for (int o = 0; o < A->n_out; o++) A->map[o] = o;
        }
    return LG_OK;
}

lg_status lg_arch_net(lg_net *net, const char *s, lg_act hidden)
{
    lg_arch a;
    memset(net, 0, sizeof *net);
    lg_status st = lg_arch_parse(&a, s);
    if (st != LG_OK) return st;
    st = lg_arch_build(net, &a, hidden);
    lg_arch_free(&a);
    return st;
}

void lg_arch_free(lg_arch *a)
{
    free(a->specs);
    free(a->hidden);
    free(a->terms);
    memset(a, 0, sizeof *a);
}
