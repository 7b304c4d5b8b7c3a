/* make_seeds.c — writes the generated part of the fuzz seed corpora
 * (fuzz/corpus/<parser>/gen_*): small networks of every activation, with and
 * without normalisation, in the native format and as ONNX (lg_onnx_write),
 * and IDX image/label pairs (plain and gzip) in the lg_fuzz_idx layout.
 * Real third-party files (tests/fixtures) are copied by scripts/fuzz.sh
 * --seed. Usage: fuzz_make_seeds CORPUS_DIR. Deterministic (fixed seed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/netfile.h"
#include "onnx/onnx.h"
#include "core/rng.h"

static int lg_seed_net(const char *dir, const char *tag, int n_layers, const int *dims, lg_act act, int norm,
                       uint64_t seed)
{
    lg_net net;
    if (lg_net_init(&net, n_layers, dims, act) != LG_OK) return -1;
    lg_rng r;
    lg_rng_init(&r, seed, 0);
    for (size_t i = 0; i < net.n_params; i++) net.params[i] = 0.5 * lg_rng_normal(&r);
    for (int k = 0; k < net.n_layers; k++)
        if (net.layers[k].act == LG_ACT_LGELU) {
            net.layers[k].s = 0.1 * lg_rng_normal(&r);
            net.layers[k].lambda = lg_lambda_from_s(net.layers[k].s, net.t);
        }
    if (norm) {
        net.in_sub = malloc((size_t)net.n_in * sizeof(double));
        net.in_div = malloc((size_t)net.n_in * sizeof(double));
        if (!net.in_sub || !net.in_div) return -1;
        for (int i = 0; i < net.n_in; i++) net.in_sub[i] = 0.25 * i, net.in_div[i] = 0.5 + i;
    }
    char p[4096];
    int rc = 0;
    snprintf(p, sizeof p, "%s/netfile/gen_%s.lgnet", dir, tag);
    if (lg_netfile_write(&net, p) != LG_OK) rc = -1;
    snprintf(p, sizeof p, "%s/onnx/gen_%s.onnx", dir, tag);
    if (lg_onnx_write(&net, p) != LG_OK) rc = -1;
    if (rc) fprintf(stderr, "make_seeds: %s: %s\n", tag, lg_errmsg());
    lg_net_free(&net);
    return rc;
}

static void lg_be32(unsigned char *b, uint32_t v)
{
    b[0] = (unsigned char)(v >> 24), b[1] = (unsigned char)(v >> 16), b[2] = (unsigned char)(v >> 8),
    b[3] = (unsigned char)v;
}

/* gzip src[n] into dst (cap bytes); returns the compressed size or 0. */
static size_t lg_gzip(unsigned char *dst, size_t cap, const unsigned char *src, size_t n)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    z.next_in = (unsigned char *)src;
    z.avail_in = (uInt)n;
    z.next_out = dst;
    z.avail_out = (uInt)cap;
    int r = deflate(&z, Z_FINISH);
    size_t out = cap - z.avail_out;
    deflateEnd(&z);
    return r == Z_STREAM_END ? out : 0;
}

/* One lg_fuzz_idx input: u16 images length, images file, labels file. */
static int lg_seed_idx(const char *dir, const char *tag, uint32_t n, uint32_t rows, uint32_t cols, int gz)
{
    unsigned char img[4096], lab[1024], zi[8192], zl[4096], out[16384];
    size_t ni = 16 + (size_t)n * rows * cols, nl = 8 + n;
    if (ni > sizeof img || nl > sizeof lab) return -1;
    lg_be32(img, 0x803), lg_be32(img + 4, n), lg_be32(img + 8, rows), lg_be32(img + 12, cols);
    for (size_t i = 16; i < ni; i++) img[i] = (unsigned char)(i * 37);
    lg_be32(lab, 0x801), lg_be32(lab + 4, n);
    for (size_t i = 8; i < nl; i++) lab[i] = (unsigned char)(i % 10);
    const unsigned char *pi = img, *pl = lab;
    if (gz) {
        ni = lg_gzip(zi, sizeof zi, img, ni);
        nl = lg_gzip(zl, sizeof zl, lab, nl);
        if (!ni || !nl) return -1;
        pi = zi, pl = zl;
    }
    out[0] = (unsigned char)ni, out[1] = (unsigned char)(ni >> 8);
    memcpy(out + 2, pi, ni);
    memcpy(out + 2 + ni, pl, nl);
    char p[4096];
    snprintf(p, sizeof p, "%s/idx/gen_%s.bin", dir, tag);
    FILE *f = fopen(p, "wb");
    if (!f) return -1;
    size_t w = fwrite(out, 1, 2 + ni + nl, f);
    return (fclose(f) == 0 && w == 2 + ni + nl) ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    const char *d = argv[1];
    static const int d1[] = {3, 2}, d2[] = {4, 5, 3}, d3[] = {5, 4, 4, 2}, d4[] = {2, 3, 3, 3, 2};
    int rc = 0;
    rc |= lg_seed_net(d, "linear", 1, d1, LG_ACT_IDENTITY, 0, 1);
    rc |= lg_seed_net(d, "linear_norm", 1, d1, LG_ACT_IDENTITY, 1, 2);
    for (int a = 0; a < LG_ACT_COUNT; a++) {
        char tag[64];
        snprintf(tag, sizeof tag, "%s_1h", lg_act_name((lg_act)a));
        rc |= lg_seed_net(d, tag, 2, d2, (lg_act)a, 0, 10 + (uint64_t)a);
        snprintf(tag, sizeof tag, "%s_2h_norm", lg_act_name((lg_act)a));
        rc |= lg_seed_net(d, tag, 3, d3, (lg_act)a, 1, 20 + (uint64_t)a);
    }
    rc |= lg_seed_net(d, "lgelu_3h", 4, d4, LG_ACT_LGELU, 0, 30);
    rc |= lg_seed_idx(d, "plain_3x4x4", 3, 4, 4, 0);
    rc |= lg_seed_idx(d, "gzip_3x4x4", 3, 4, 4, 1);
    rc |= lg_seed_idx(d, "plain_1x2x3", 1, 2, 3, 0);
    rc |= lg_seed_idx(d, "gzip_10x3x3", 10, 3, 3, 1);
    rc |= lg_seed_idx(d, "plain_0x1x1", 0, 1, 1, 0);
    return rc ? 1 : 0;
}
