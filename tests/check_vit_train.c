/* check_vit_train.c — ViT training (train/vit.h, layernorm.h, attention.h,
 * vit_train.h) and the ViT --arch grammar (core/arch_vit.h): every backward
 * (softmax, LayerNorm, attention, whole encoder blocks, the λ gradient)
 * against central finite differences of an independent double-precision
 * oracle written here with plain loops; the float forward against the same
 * oracle; AdamW with warm-up; a short real Fashion-MNIST run that must learn. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arch_vit.h"
#include "core/idx.h"
#include "core/rng.h"
#include "train/attention.h"
#include "train/layernorm.h"
#include "train/optim.h"
#include "train/vit.h"
#include "train/vit_train.h"
#include "testutil.h"

/* ---- double oracle ------------------------------------------------------ */

static void ref_ln(double *y, const double *x, const double *g, const double *b, int n, int w)
{
    for (int i = 0; i < n; i++) {
        double mu = 0, var = 0;
        for (int j = 0; j < w; j++) mu += x[i * w + j];
        mu /= w;
        for (int j = 0; j < w; j++) var += (x[i * w + j] - mu) * (x[i * w + j] - mu);
        var /= w;
        for (int j = 0; j < w; j++) y[i * w + j] = g[j] * (x[i * w + j] - mu) / sqrt(var + 1e-5) + b[j];
    }
}

static void ref_softmax(double *y, const double *x, int n, int w)
{
    for (int i = 0; i < n; i++) {
        double mx = x[i * w], s = 0;
        for (int j = 1; j < w; j++) mx = fmax(mx, x[i * w + j]);
        for (int j = 0; j < w; j++) s += exp(x[i * w + j] - mx);
        for (int j = 0; j < w; j++) y[i * w + j] = exp(x[i * w + j] - mx) / s;
    }
}

/* y[n][o] = x[n][i]·Wᵀ + b */
static void ref_lin(double *y, const double *x, const double *W, const double *b, int n, int i, int o)
{
    for (int r = 0; r < n; r++)
        for (int j = 0; j < o; j++) {
            double s = b ? b[j] : 0.0;
            for (int k = 0; k < i; k++) s += W[j * i + k] * x[r * i + k];
            y[r * o + j] = s;
        }
}

/* O[T][D] = multi-head attention of one example */
static void ref_attn(double *O, const double *Q, const double *K, const double *V, int T, int D, int NH)
{
    int dh = D / NH;
    double *S = malloc((size_t)T * T * sizeof *S);
    for (int h = 0; h < NH; h++) {
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) {
                double s = 0;
                for (int c = 0; c < dh; c++) s += Q[i * D + h * dh + c] * K[j * D + h * dh + c];
                S[i * T + j] = s / sqrt((double)dh);
            }
        ref_softmax(S, S, T, T);
        for (int i = 0; i < T; i++)
            for (int c = 0; c < dh; c++) {
                double s = 0;
                for (int j = 0; j < T; j++) s += S[i * T + j] * V[j * D + h * dh + c];
                O[i * D + h * dh + c] = s;
            }
    }
    free(S);
}

/* The whole ViT in double from parameters p (the model's layout), one
 * example x; logits into z; returns the cross-entropy for label y. */
static double ref_vit(const lg_vit *m, const double *p, const float *x, int y, double *z)
{
    const lg_vit_spec *s = &m->spec;
    int D = m->D, M = m->M, T = m->T, Pz = s->patch, gw = s->W / Pz, off = s->cls;
    size_t TD = (size_t)T * D;
    double *X = calloc(TD, 8), *Y = calloc(TD, 8), *Q = calloc(TD, 8), *K = calloc(TD, 8), *V = calloc(TD, 8),
           *O = calloc(TD, 8), *A = calloc(TD, 8), *H = calloc((size_t)T * M, 8), *pt = calloc((size_t)m->PL, 8),
           *pool = calloc((size_t)D, 8);
    if (off)
        for (int j = 0; j < D; j++) X[j] = p[m->glob[LG_VG_CLS] + j];
    for (int q = 0; q < m->NP; q++) {
        int py = q / gw, px = q % gw, k = 0;
        for (int c = 0; c < s->C; c++)
            for (int dy = 0; dy < Pz; dy++)
                for (int dx = 0; dx < Pz; dx++) pt[k++] = x[(c * s->H + py * Pz + dy) * s->W + px * Pz + dx];
        ref_lin(X + (size_t)(q + off) * D, pt, p + m->glob[LG_VG_WP], p + m->glob[LG_VG_BP], 1, m->PL, D);
    }
    for (size_t i = 0; i < TD; i++) X[i] += p[m->glob[LG_VG_POS] + i];
    for (int l = 0; l < s->depth; l++) {
        const size_t *b = m->blk[l];
        ref_ln(Y, X, p + b[LG_VB_G1], p + b[LG_VB_B1N], T, D);
        ref_lin(Q, Y, p + b[LG_VB_WQ], p + b[LG_VB_BQ], T, D, D);
        ref_lin(K, Y, p + b[LG_VB_WK], p + b[LG_VB_BK], T, D, D);
        ref_lin(V, Y, p + b[LG_VB_WV], p + b[LG_VB_BV], T, D, D);
        ref_attn(O, Q, K, V, T, D, s->heads);
        ref_lin(A, O, p + b[LG_VB_WO], p + b[LG_VB_BO], T, D, D);
        for (size_t i = 0; i < TD; i++) X[i] += A[i];
        ref_ln(Y, X, p + b[LG_VB_G2], p + b[LG_VB_B2N], T, D);
        ref_lin(H, Y, p + b[LG_VB_W1], p + b[LG_VB_B1], T, D, M);
        for (int i = 0; i < T * M; i++) H[i] = lg_act_eval(m->act, H[i], p[b[LG_VB_ACT]]);
        ref_lin(A, H, p + b[LG_VB_W2], p + b[LG_VB_B2], T, M, D);
        for (size_t i = 0; i < TD; i++) X[i] += A[i];
    }
    ref_ln(Y, X, p + m->glob[LG_VG_GF], p + m->glob[LG_VG_BF], T, D);
    for (int j = 0; j < D; j++) {
        double sm = 0;
        for (int t = 0; t < T; t++) sm += Y[t * D + j];
        pool[j] = off ? Y[j] : sm / T;
    }
    ref_lin(z, pool, p + m->glob[LG_VG_WH], p + m->glob[LG_VG_BH], 1, D, s->n_out);
    double mx = z[0], se = 0;
    for (int j = 1; j < s->n_out; j++) mx = fmax(mx, z[j]);
    for (int j = 0; j < s->n_out; j++) se += exp(z[j] - mx);
    free(X), free(Y), free(Q), free(K), free(V), free(O), free(A), free(H), free(pt), free(pool);
    return mx + log(se) - z[y];
}

static double ref_loss(const lg_vit *m, const double *p, const float *X, const uint8_t *y, int B)
{
    double z[16], s = 0;
    int n = m->spec.C * m->spec.H * m->spec.W;
    for (int b = 0; b < B; b++) s += ref_vit(m, p, X + (size_t)b * n, y[b], z);
    return s / B;
}

/* ---- helpers ------------------------------------------------------------ */

static void fill_normal(float *a, size_t n, double sd, lg_rng *r)
{
    for (size_t i = 0; i < n; i++) a[i] = (float)(sd * lg_rng_normal(r));
}

/* |a − b| ≤ atol + rtol·|b| */
#define CK_CLOSE(a, b, atol, rtol, what, i)                                                                      \
    ck_assert_msg(fabs((double)(a) - (double)(b)) <= (atol) + (rtol) * fabs((double)(b)),                        \
                  "%s[%d]: %.8g vs oracle %.8g", what, (int)(i), (double)(a), (double)(b))

/* ---- kernels -------------------------------------------------------------- */

START_TEST(test_softmax_backward_fd)
{
    lg_rng r;
    lg_rng_init(&r, 3, 1);
    enum { N = 3, G = 7 };
    float x[N * G], y[N * G], dy[N * G], dx[N * G] = {0};
    fill_normal(x, N * G, 2.0, &r);
    fill_normal(dy, N * G, 1.0, &r);
    lg_softmax_rows(y, x, N, G);
    double xd[N * G], yd[N * G];
    for (int i = 0; i < N * G; i++) xd[i] = x[i];
    ref_softmax(yd, xd, N, G);
    for (int i = 0; i < N * G; i++) CK_CLOSE(y[i], yd[i], 1e-6, 1e-5, "softmax", i);
    lg_softmax_rows_backward(dx, dy, y, N, G);
    for (int i = 0; i < N * G; i++) {
        double h = 1e-6, f[2];
        for (int s = 0; s < 2; s++) {
            xd[i] = x[i] + (s ? -h : h);
            ref_softmax(yd, xd, N, G);
            f[s] = 0;
            for (int j = 0; j < N * G; j++) f[s] += dy[j] * yd[j];
        }
        xd[i] = x[i];
        CK_CLOSE(dx[i], (f[0] - f[1]) / (2 * h), 1e-5, 1e-4, "softmax dx", i);
    }
}
END_TEST

START_TEST(test_layernorm_backward_fd)
{
    lg_rng r;
    lg_rng_init(&r, 4, 1);
    enum { N = 4, G = 6 };
    float x[N * G], y[N * G], xh[N * G], rs[N], dy[N * G], dx[N * G] = {0}, g[G], b[G], dg[G] = {0}, db[G] = {0};
    fill_normal(x, N * G, 1.5, &r);
    fill_normal(dy, N * G, 1.0, &r);
    fill_normal(g, G, 1.0, &r);
    fill_normal(b, G, 1.0, &r);
    lg_ln_forward(y, xh, rs, x, g, b, N, G, LG_LN_EPS);
    double xd[N * G], yd[N * G], gd[G], bd[G];
    for (int i = 0; i < N * G; i++) xd[i] = x[i];
    for (int j = 0; j < G; j++) gd[j] = g[j], bd[j] = b[j];
    ref_ln(yd, xd, gd, bd, N, G);
    for (int i = 0; i < N * G; i++) CK_CLOSE(y[i], yd[i], 1e-5, 1e-5, "layernorm", i);
    lg_ln_backward(dx, dg, db, dy, xh, rs, g, N, G);
    double h = 1e-6;
#define LN_FD(var, k, out, what)                                                                                   \
    do {                                                                                                           \
        double f[2], v0 = var[k];                                                                                  \
        for (int s = 0; s < 2; s++) {                                                                              \
            var[k] = v0 + (s ? -h : h);                                                                            \
            ref_ln(yd, xd, gd, bd, N, G);                                                                          \
            f[s] = 0;                                                                                              \
            for (int q = 0; q < N * G; q++) f[s] += dy[q] * yd[q];                                                 \
        }                                                                                                          \
        var[k] = v0;                                                                                               \
        CK_CLOSE(out, (f[0] - f[1]) / (2 * h), 1e-4, 1e-3, what, k);                                              \
    } while (0)
    for (int i = 0; i < N * G; i++) LN_FD(xd, i, dx[i], "layernorm dx");
    for (int j = 0; j < G; j++) LN_FD(gd, j, dg[j], "layernorm dgamma");
    for (int j = 0; j < G; j++) LN_FD(bd, j, db[j], "layernorm dbeta");
#undef LN_FD
}
END_TEST

START_TEST(test_attention_backward_fd)
{
    lg_rng r;
    lg_rng_init(&r, 5, 1);
    enum { B = 2, T = 5, D = 6, NH = 2, N = B * T * D };
    float Q[N], K[N], V[N], O[N], P[B * NH * T * T], dO[N], dQ[N] = {0}, dK[N] = {0}, dV[N] = {0}, dP[T * T];
    fill_normal(Q, N, 1.0, &r);
    fill_normal(K, N, 1.0, &r);
    fill_normal(V, N, 1.0, &r);
    fill_normal(dO, N, 1.0, &r);
    lg_attn_forward(O, P, Q, K, V, B, T, D, NH);
    lg_attn_backward(dQ, dK, dV, dP, dO, P, Q, K, V, B, T, D, NH);
    double q[N], k[N], v[N], o[T * D];
    for (int i = 0; i < N; i++) q[i] = Q[i], k[i] = K[i], v[i] = V[i];
    for (int b = 0; b < B; b++) {
        ref_attn(o, q + b * T * D, k + b * T * D, v + b * T * D, T, D, NH);
        for (int i = 0; i < T * D; i++) CK_CLOSE(O[b * T * D + i], o[i], 1e-5, 1e-4, "attention", i);
    }
    double *vars[3] = {q, k, v};
    float *grads[3] = {dQ, dK, dV};
    const char *names[3] = {"attention dQ", "attention dK", "attention dV"};
    for (int w = 0; w < 3; w++)
        for (int i = 0; i < N; i++) {
            double h = 1e-6, f[2], v0 = vars[w][i];
            int b = i / (T * D);
            for (int s = 0; s < 2; s++) {
                vars[w][i] = v0 + (s ? -h : h);
                ref_attn(o, q + b * T * D, k + b * T * D, v + b * T * D, T, D, NH);
                f[s] = 0;
                for (int j = 0; j < T * D; j++) f[s] += dO[b * T * D + j] * o[j];
            }
            vars[w][i] = v0;
            CK_CLOSE(grads[w][i], (f[0] - f[1]) / (2 * h), 1e-4, 1e-3, names[w], i);
        }
}
END_TEST

/* ---- the whole encoder ----------------------------------------------------- */

/* Every parameter's gradient (the λ of each MLP included) against central
 * differences of the double oracle's loss; the float loss and logits
 * against the oracle's. */
static void vit_fd_check(const char *arch, lg_act act, uint64_t seed)
{
    lg_vit_spec sp;
    ck_assert_int_eq(lg_arch_vit_parse(&sp, arch), LG_OK);
    lg_vit m;
    enum { B = 3 };
    ck_assert_int_eq(lg_vit_init(&m, &sp, act, B), LG_OK);
    lg_vit_init_weights(&m, seed);
    lg_rng r;
    lg_rng_init(&r, seed, 9);
    /* perturb γ, β and the biases too, so their gradients are not special cases */
    for (size_t i = 0; i < m.n_params; i++) m.params[i] += (float)(0.1 * lg_rng_normal(&r));
    for (int l = 0; l < sp.depth; l++)
        if (lg_act_info_of(act)->has_param) m.params[m.blk[l][LG_VB_ACT]] = (float)(1.3 + 0.4 * l);
    int n_in = sp.C * sp.H * sp.W;
    float *X = malloc((size_t)B * n_in * sizeof *X);
    for (int i = 0; i < B * n_in; i++) X[i] = (float)lg_rng_uniform(&r);
    uint8_t y[B];
    for (int b = 0; b < B; b++) y[b] = (uint8_t)lg_rng_below(&r, (uint32_t)sp.n_out);
    uint32_t idx[B] = {0, 1, 2};
    lg_vit_gather(&m, X, idx, B);
    double loss;
    int c;
    lg_vit_forward(&m, B, y, &loss, &c);
    double *p = malloc(m.n_params * sizeof *p);
    for (size_t i = 0; i < m.n_params; i++) p[i] = m.params[i];
    double lref = ref_loss(&m, p, X, y, B);
    CK_CLOSE(loss, lref, 1e-5, 1e-4, "loss", 0);
    double z[16];
    for (int b = 0; b < B; b++) {
        ref_vit(&m, p, X + (size_t)b * n_in, y[b], z);
        for (int j = 0; j < sp.n_out; j++) CK_CLOSE(m.logits[b * sp.n_out + j], z[j], 1e-4, 1e-4, "logits", j);
    }
    lg_vit_zero_grad(&m);
    lg_vit_backward(&m, B, y);
    int n_act = 0;
    for (size_t i = 0; i < m.n_params; i++) {
        int is_act = 0;
        for (int l = 0; l < sp.depth; l++) is_act |= m.blk[l][LG_VB_ACT] == i;
        if (is_act && !lg_act_info_of(act)->has_param) {
            ck_assert_float_eq(m.grads[i], 0.0f);
            continue;
        }
        double h = 1e-5, v0 = p[i];
        p[i] = v0 + h;
        double fp = ref_loss(&m, p, X, y, B);
        p[i] = v0 - h;
        double fm = ref_loss(&m, p, X, y, B);
        p[i] = v0;
        double fd = (fp - fm) / (2 * h);
        CK_CLOSE(m.grads[i], fd, 2e-4, 2e-3, is_act ? "λ gradient" : "gradient", i);
        if (is_act) {
            n_act++;
            ck_assert_msg(fabs(fd) > 1e-7, "the λ gradient of a block is (numerically) zero: the test would be vacuous");
        }
    }
    if (lg_act_info_of(act)->has_param) ck_assert_int_eq(n_act, sp.depth);
    free(p);
    free(X);
    lg_vit_free(&m);
}

START_TEST(test_vit_fd_lgelu_cls) { vit_fd_check("1x6x6,vit:p3,d6,h2,L2,m8,cls,4", LG_ACT_LGELU, 1); }
END_TEST
START_TEST(test_vit_fd_lgelu_mean) { vit_fd_check("2x4x4,vit:mean,p2,d4,h2,L1,m5,3", LG_ACT_LGELU, 2); }
END_TEST
START_TEST(test_vit_fd_gelu) { vit_fd_check("1x6x6,vit:p2,d6,h3,L2,m7,cls,3", LG_ACT_GELU, 3); }
END_TEST
START_TEST(test_vit_fd_swish) { vit_fd_check("1x4x4,vit:p2,d4,h1,L2,m6,mean,3", LG_ACT_SWISH, 4); }
END_TEST

/* ---- the grammar ------------------------------------------------------------ */

START_TEST(test_vit_arch_grammar)
{
    lg_vit_spec v;
    ck_assert_int_eq(lg_arch_vit_parse(&v, "1x28x28,vit:p7,d32,h2,L2,m64,cls,10"), LG_OK);
    ck_assert_int_eq(v.patch, 7);
    ck_assert_int_eq(v.dim, 32);
    ck_assert_int_eq(v.heads, 2);
    ck_assert_int_eq(v.depth, 2);
    ck_assert_int_eq(v.mlp, 64);
    ck_assert_int_eq(v.cls, 1);
    ck_assert_int_eq(v.n_out, 10);
    ck_assert_int_eq(lg_vit_n_tokens(&v), 17);
    ck_assert_int_eq(lg_vit_patch_len(&v), 49);
    ck_assert_int_eq(lg_arch_vit_parse(&v, "3x32x32,vit:m128,L3,h4,d64,p8,mean,10"), LG_OK);
    ck_assert_int_eq(v.cls, 0);
    ck_assert_int_eq(lg_vit_n_tokens(&v), 16);
    ck_assert(lg_arch_is_vit("1x28x28,vit:p7,d32,h2,L2,m64,cls,10"));
    ck_assert(!lg_arch_is_vit("784,256,10"));
    static const char *bad[][2] = {
        {"784,vit:p7,d32,h2,L2,m64,10", "image input"},
        {"1x28x28,vit:p5,d32,h2,L2,m64,10", "must divide the image"},
        {"1x28x28,vit:p7,d30,h4,L2,m64,10", "heads must divide"},
        {"1x28x28,vit:p7,d32,h2,L2,10", "field m"},
        {"1x28x28,vit:p7,d32,h2,L2,m64", "output width"},
        {"1x28x28,vit:p7,d32,d16,h2,L2,m64,10", "given twice"},
        {"1x28x28,vit:p7,d32,h2,L2,m64,10,5", "last token"},
        {"1x28x28,vit:p7,q3,d32,h2,L2,m64,10", "token 3 'q3'"},
        {"1x28x28,vit:p7,d32,h2,L0,m64,10", "token 5 'L0'"},
        {"1x28x28,vit:p7,d32,h2,L2,m64,cls,mean,10", "pooling"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(lg_arch_vit_parse(&v, bad[i][0]), LG_ERR_ARG);
        ck_assert_msg(strstr(lg_errmsg(), bad[i][1]), "'%s': message '%s' lacks '%s'", bad[i][0], lg_errmsg(),
                      bad[i][1]);
    }
}
END_TEST

/* ---- optimiser ---------------------------------------------------------------- */

START_TEST(test_warmup_lr)
{
    lg_optim_opts o = lg_optim_opts_default();
    o.lr = 0.01;
    ck_assert_double_eq(lg_optim_lr_at(&o, 1), 0.01);
    o.warmup = 4;
    ck_assert_double_eq_tol(lg_optim_lr_at(&o, 1), 0.0025, 1e-15);
    ck_assert_double_eq_tol(lg_optim_lr_at(&o, 3), 0.0075, 1e-15);
    ck_assert_double_eq(lg_optim_lr_at(&o, 4), 0.01);
    ck_assert_double_eq(lg_optim_lr_at(&o, 100), 0.01);
    /* the cosine decay after the warm-up: η at its start, η/2 half way, 0 at the last step */
    lg_optim_opts oc = o;
    oc.cosine = 1, oc.total = 4 + 200;
    ck_assert_double_eq(lg_optim_lr_at(&oc, 2), lg_optim_lr_at(&o, 2));
    ck_assert_double_eq_tol(lg_optim_lr_at(&oc, 4), 0.01, 1e-15);
    ck_assert_double_eq_tol(lg_optim_lr_at(&oc, 104), 0.005, 1e-15);
    ck_assert_double_eq_tol(lg_optim_lr_at(&oc, 204), 0.0, 1e-15);
    ck_assert(lg_optim_lr_at(&oc, 150) < lg_optim_lr_at(&oc, 50));
    /* AdamW's first step is lr·sign(g) (bias-corrected) minus the decoupled decay */
    o.kind = LG_OPTIM_ADAMW;
    o.wd = 0.1;
    float p[2] = {1.0f, -2.0f}, g[2] = {0.5f, -3.0f}, m1[2] = {0}, m2[2] = {0};
    lg_optim_flat(&o, p, g, m1, m2, 2, lg_optim_lr_at(&o, 1), 1, 1);
    ck_assert_float_eq_tol(p[0], 1.0f - 0.0025f * (1.0f + 0.1f * 1.0f), 1e-6f);
    ck_assert_float_eq_tol(p[1], -2.0f - 0.0025f * (-1.0f + 0.1f * -2.0f), 1e-6f);
}
END_TEST

/* ---- real data ---------------------------------------------------------------- */

START_TEST(test_vit_fashion_learns)
{
    /* a 2-block ViT, one epoch of AdamW with warm-up on 4000 (quick: 2000)
     * Fashion-MNIST images: must reach 65% (quick: 55%) on 1000 test images
     * (chance 10%; measured 70.2% and 62.3%) */
    ck_assert_msg(lg_test_have_data(), "Fashion-MNIST not installed at %s", LG_DATA_DEFAULT_DIR);
    size_t n = lg_test_quick() ? 2000 : 4000;
    double need = lg_test_quick() ? 0.55 : 0.65;
    lg_dataset tr = {0}, te = {0};
    ck_assert_int_eq(lg_data_load(&tr, LG_DATA_DEFAULT_DIR, "train"), LG_OK);
    ck_assert_int_eq(lg_data_load(&te, LG_DATA_DEFAULT_DIR, "test"), LG_OK);
    lg_dataset_truncate(&tr, n);
    lg_dataset_truncate(&te, 1000);
    lg_vit_spec sp;
    ck_assert_int_eq(lg_arch_vit_parse(&sp, "1x28x28,vit:p7,d32,h2,L2,m64,cls,10"), LG_OK);
    lg_vit m;
    ck_assert_int_eq(lg_vit_init(&m, &sp, LG_ACT_LGELU, 64), LG_OK);
    lg_vit_init_weights(&m, 1);
    lg_train_opts o = lg_train_opts_default();
    o.epochs = 1, o.batch = 64;
    o.optim.kind = LG_OPTIM_ADAMW, o.optim.lr = 3e-3, o.optim.wd = 0.05, o.optim.warmup = 10, o.optim.c = 1;
    lg_train_result res;
    ck_assert_int_eq(lg_vit_train(&m, &tr, &te, &o, NULL, NULL, &res), LG_OK);
    printf("vit_train: ViT test accuracy %.4f after one epoch on %zu images\n", res.test_acc, n);
    ck_assert_msg(res.test_acc >= need, "test accuracy %.4f < %.2f", res.test_acc, need);
    ck_assert_double_eq_tol(lg_vit_accuracy(&m, &te), res.test_acc, 1e-12);
    for (int l = 0; l < sp.depth; l++) ck_assert(lg_vit_act_param(&m, l) >= LG_LAMBDA_FLOOR);
    lg_vit_free(&m);
    lg_dataset_free(&tr);
    lg_dataset_free(&te);
}
END_TEST

Suite *suite_vit_train(void)
{
    Suite *s = suite_create("vit_train");
    TCase *tc = tcase_create("vit_train");
    lg_tcase_timeout(tc, 600);
    tcase_add_test(tc, test_softmax_backward_fd);
    tcase_add_test(tc, test_layernorm_backward_fd);
    tcase_add_test(tc, test_attention_backward_fd);
    tcase_add_test(tc, test_vit_fd_lgelu_cls);
    tcase_add_test(tc, test_vit_fd_lgelu_mean);
    tcase_add_test(tc, test_vit_fd_gelu);
    tcase_add_test(tc, test_vit_fd_swish);
    tcase_add_test(tc, test_vit_arch_grammar);
    tcase_add_test(tc, test_warmup_lr);
    tcase_add_test(tc, test_vit_fashion_learns);
    suite_add_tcase(s, tc);
    return s;
}
