/* check_idx.c — IDX reader on the real Fashion-MNIST files and on corrupt,
 * truncated and mismatched ones made here. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/idx.h"
#include "testutil.h"

/* Write an IDX file (gz if gz != 0) with the given header and payload. */
static void lg_write_idx(const char *path, int gz, uint32_t magic, const uint32_t *dims, int nd, const unsigned char *data,
                         size_t n)
{
    unsigned char h[16];
    uint32_t words[4] = {magic, 0, 0, 0};
    for (int i = 0; i < nd; i++) words[i + 1] = dims[i];
    for (int i = 0; i <= nd; i++)
        h[4 * i] = (unsigned char)(words[i] >> 24), h[4 * i + 1] = (unsigned char)(words[i] >> 16),
                  h[4 * i + 2] = (unsigned char)(words[i] >> 8), h[4 * i + 3] = (unsigned char)words[i];
    if (gz) {
        gzFile g = gzopen(path, "wb");
        ck_assert_ptr_nonnull(g);
        gzwrite(g, h, (unsigned)(4 * (nd + 1)));
        if (n) gzwrite(g, data, (unsigned)n);
        gzclose(g);
    } else {
        FILE *f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        fwrite(h, 1, (size_t)(4 * (nd + 1)), f);
        if (n) fwrite(data, 1, n, f);
        fclose(f);
    }
}

START_TEST(test_idx_real_fashion_mnist)
{
    ck_assert_msg(lg_test_have_data(), "dataset-fashion-mnist is not installed (run scripts/setup.sh)");
    lg_dataset tr, te;
    ck_assert_int_eq(lg_data_load(&te, LG_DATA_DEFAULT_DIR, "test"), LG_OK);
    ck_assert_uint_eq(te.n, 10000);
    ck_assert_int_eq(te.dim, 784);
    ck_assert_int_eq(te.n_classes, 10);
    float mx = 0;
    size_t out_of_range = 0;
    for (size_t i = 0; i < te.n * 784; i++) {
        out_of_range += !(te.x[i] >= 0.0f && te.x[i] <= 1.0f);
        if (te.x[i] > mx) mx = te.x[i];
    }
    ck_assert_uint_eq(out_of_range, 0);
    ck_assert_float_eq(mx, 1.0f);
    ck_assert_int_eq(lg_data_load(&tr, LG_DATA_DEFAULT_DIR, "train"), LG_OK);
    ck_assert_uint_eq(tr.n, 60000);
    lg_dataset val;
    ck_assert_int_eq(lg_dataset_split(&tr, &val, 5000), LG_OK);
    ck_assert_uint_eq(tr.n, 55000);
    ck_assert_uint_eq(val.n, 5000);
    lg_dataset_free(&val);
    lg_dataset_free(&tr);
    lg_dataset_free(&te);
}
END_TEST

START_TEST(test_idx_synthetic_plain_and_gz)
{
    unsigned char px[2 * 3 * 2] = {0, 255, 51, 102, 0, 0, 1, 2, 3, 4, 5, 255};
    unsigned char lb[2] = {3, 1};
    uint32_t di[3] = {2, 3, 2}, dl[1] = {2};
    for (int gz = 0; gz < 2; gz++) {
        const char *ip = lg_test_tmpfile(".idx"), *lp = lg_test_tmpfile(".idx");
        lg_write_idx(ip, gz, 0x803, di, 3, px, sizeof px);
        lg_write_idx(lp, gz, 0x801, dl, 1, lb, sizeof lb);
        lg_dataset ds;
        ck_assert_int_eq(lg_idx_load(&ds, ip, lp), LG_OK);
        ck_assert_int_eq(ds.dim, 6);
        ck_assert_int_eq(ds.n_classes, 4);
        ck_assert_float_eq_tol(ds.x[2], 0.2f, 1e-7f);
        ck_assert_int_eq(ds.y[1], 1);
        lg_dataset_free(&ds);
        remove(ip);
        remove(lp);
    }
}
END_TEST

/* k × k average pooling: the factor from the input size, the means by hand,
 * and lg_dataset_fit's in-place pooling and its refusal. */
START_TEST(test_idx_pool)
{
    lg_dataset ds = {0};
    ds.n = 2;
    ds.rows = 4;
    ds.cols = 6;
    ds.dim = 24;
    ds.n_classes = 3;
    ds.x = malloc(48 * sizeof *ds.x);
    ds.y = malloc(2);
    ck_assert_ptr_nonnull(ds.x);
    ck_assert_ptr_nonnull(ds.y);
    for (int i = 0; i < 48; i++) ds.x[i] = (float)((i * 7) % 11) / 10.0f;
    ds.y[0] = 2;
    ds.y[1] = 0;
    ck_assert_int_eq(lg_dataset_pool_factor(&ds, 24), 1);
    ck_assert_int_eq(lg_dataset_pool_factor(&ds, 6), 2);   /* 2 × 3 */
    ck_assert_int_eq(lg_dataset_pool_factor(&ds, 0), 0);
    ck_assert_int_eq(lg_dataset_pool_factor(&ds, 5), 0);
    lg_dataset p;
    ck_assert_int_eq(lg_dataset_pool(&p, &ds, 2), LG_OK);
    ck_assert_int_eq(p.dim, 6);
    ck_assert_int_eq(p.rows * 10 + p.cols, 23);
    for (int e = 0; e < 2; e++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) {
                const float *s = ds.x + e * 24;
                float want = (s[(2 * i) * 6 + 2 * j] + s[(2 * i) * 6 + 2 * j + 1] + s[(2 * i + 1) * 6 + 2 * j] +
                              s[(2 * i + 1) * 6 + 2 * j + 1]) / 4.0f;
                ck_assert_float_eq_tol(p.x[e * 6 + i * 3 + j], want, 1e-6f);
            }
    ck_assert_int_eq(p.y[0], 2);
    lg_dataset_free(&p);
    ck_assert_int_eq(lg_dataset_pool(&p, &ds, 5), LG_ERR_ARG);
    ck_assert_int_eq(lg_dataset_fit(&ds, 7, "the network", "here"), LG_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(lg_errmsg(), "the network takes 7 inputs but the data in here has 24 features"));
    ck_assert_int_eq(ds.dim, 24); /* untouched on refusal */
    ck_assert_int_eq(lg_dataset_fit(&ds, 24, "x", "y"), LG_OK);
    ck_assert_int_eq(ds.dim, 24);
    ck_assert_int_eq(lg_dataset_fit(&ds, 6, "x", "y"), LG_OK);
    ck_assert_int_eq(ds.dim, 6);
    lg_dataset_free(&ds);
}
END_TEST

START_TEST(test_idx_bad_files)
{
    unsigned char px[12] = {0}, lb[2] = {0, 1};
    uint32_t di[3] = {2, 3, 2}, dl2[1] = {2}, dl3[1] = {3};
    const char *ip = lg_test_tmpfile(".gz"), *lp = lg_test_tmpfile(".gz");
    lg_dataset ds;
    /* wrong magic */
    lg_write_idx(ip, 1, 0x802, di, 3, px, 12);
    lg_write_idx(lp, 1, 0x801, dl2, 1, lb, 2);
    ck_assert_int_eq(lg_idx_load(&ds, ip, lp), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "magic") && strstr(lg_errmsg(), ip), "message: %s", lg_errmsg());
    /* truncated pixels */
    lg_write_idx(ip, 1, 0x803, di, 3, px, 7);
    ck_assert_int_eq(lg_idx_load(&ds, ip, lp), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "truncated") != NULL, "message: %s", lg_errmsg());
    /* count mismatch */
    lg_write_idx(ip, 1, 0x803, di, 3, px, 12);
    lg_write_idx(lp, 1, 0x801, dl3, 1, lb, 2);
    ck_assert_int_eq(lg_idx_load(&ds, ip, lp), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "labels") != NULL, "message: %s", lg_errmsg());
    /* corrupt gzip stream */
    FILE *f = fopen(ip, "r+b");
    fseek(f, 12, SEEK_SET);
    fputc(0xAA, f), fputc(0x55, f), fputc(0xAA, f);
    fclose(f);
    lg_write_idx(lp, 1, 0x801, dl2, 1, lb, 2);
    ck_assert_int_eq(lg_idx_load(&ds, ip, lp), LG_ERR_FORMAT);
    /* missing file */
    ck_assert_int_eq(lg_idx_load(&ds, "/nonexistent/x.gz", lp), LG_ERR_IO);
    ck_assert_ptr_null(ds.x);
    remove(ip);
    remove(lp);
}
END_TEST

Suite *suite_idx(void)
{
    Suite *s = suite_create("idx");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 60);
    tcase_add_test(tc, test_idx_real_fashion_mnist);
    tcase_add_test(tc, test_idx_synthetic_plain_and_gz);
    tcase_add_test(tc, test_idx_pool);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_idx_bad_files);
    suite_add_tcase(s, tl);
    return s;
}
