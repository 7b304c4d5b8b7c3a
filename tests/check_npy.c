/* check_npy.c — the .npy reader (core/npy.h) against files written by
 * Debian's python3-numpy (np.save / np.lib.format.write_array) at test time,
 * and hostile headers built here. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/npy.h"
#include "testutil.h"

/* Run a python3 (with numpy) script with argv[1] = dir; 1 if it ran. */
static int lg_npy_python(const char *script, const char *dir)
{
    const char *sp = lg_test_tmpfile(".py");
    FILE *f = fopen(sp, "w");
    ck_assert_ptr_nonnull(f);
    fputs(script, f);
    fclose(f);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s'", LG_PYTHON3, sp, dir);
    int st = system(cmd);
    remove(sp);
    return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* Every value is i*0.25 - 3 (exact in every float type), or i for integers. */
static const char *const lg_npy_script =
    "import sys, numpy as np\n"
    "d = sys.argv[1]\n"
    "base = np.arange(12).reshape(3, 4) * 0.25 - 3\n"
    "for t in ['<f4', '>f4', '<f8', '>f8']:\n"
    "    np.save(d + '/f_%s%s.npy' % (t[1:], '_be' if t[0] == '>' else ''), base.astype(t))\n"
    "for t in ['i1', 'u1', '<i2', '>i2', '<u2', '<i4', '>u4', '<i8', '>i8', '<u8']:\n"
    "    np.save(d + '/y_%s.npy' % t.replace('<', 'le').replace('>', 'be'), np.arange(5).astype(t))\n"
    "for v in [(2, 0), (3, 0)]:\n"
    "    with open(d + '/v%d.npy' % v[0], 'wb') as f:\n"
    "        np.lib.format.write_array(f, base.astype('<f8'), version=v)\n"
    "np.save(d + '/fortran.npy', np.asfortranarray(base))\n"
    "np.save(d + '/img.npy', (np.arange(2 * 3 * 5).reshape(2, 3, 5) / 29.0).astype('<f4'))\n"
    "np.save(d + '/empty.npy', np.zeros((0, 4)))\n"
    "np.save(d + '/nan.npy', np.array([[0.0, float('nan')]]))\n"
    "np.save(d + '/cplx.npy', np.zeros(3, dtype=np.complex64))\n"
    "np.save(d + '/x01.npy', np.array([[0.0, 0.5, 1.0], [0.25, 0.75, 1.0]]))\n"
    "np.save(d + '/y01.npy', np.array([3, 7], dtype=np.int64))\n"
    "np.save(d + '/yfloat.npy', np.array([1.0, 2.5]))\n"
    "np.save(d + '/x2big.npy', np.array([[0.0, 1.5, 0.0], [0.0, 0.0, 0.0]]))\n";

static char lg_npy_dir[256];

static const char *lg_npy_file(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", lg_npy_dir, name);
    return p;
}

static void lg_npy_setup(void)
{
    snprintf(lg_npy_dir, sizeof lg_npy_dir, "%s", lg_test_tmpfile("_npy"));
    ck_assert_int_eq(mkdir(lg_npy_dir, 0700), 0);
}

START_TEST(test_npy_numpy_files)
{
    lg_npy_setup();
    ck_assert_msg(lg_npy_python(lg_npy_script, lg_npy_dir), "python3-numpy could not write the test files");
    static const char *const floats[] = {"f_f4.npy", "f_f4_be.npy", "f_f8.npy", "f_f8_be.npy", "v2.npy", "v3.npy"};
    for (size_t t = 0; t < sizeof floats / sizeof floats[0]; t++) {
        lg_npy a;
        ck_assert_msg(lg_npy_load(&a, lg_npy_file(floats[t])) == LG_OK, "%s: %s", floats[t], lg_errmsg());
        ck_assert_int_eq(a.ndim, 2);
        ck_assert_uint_eq(a.n, 3);
        ck_assert_uint_eq(a.cols, 4);
        for (int i = 0; i < 12; i++) ck_assert_msg(a.data[i] == i * 0.25 - 3, "%s: element %d = %g", floats[t], i, a.data[i]);
        lg_npy_free(&a);
    }
    static const char *const ints[] = {"y_i1.npy",   "y_u1.npy",   "y_lei2.npy", "y_bei2.npy", "y_leu2.npy",
                                       "y_lei4.npy", "y_beu4.npy", "y_lei8.npy", "y_bei8.npy", "y_leu8.npy"};
    for (size_t t = 0; t < sizeof ints / sizeof ints[0]; t++) {
        lg_npy a;
        ck_assert_msg(lg_npy_load(&a, lg_npy_file(ints[t])) == LG_OK, "%s: %s", ints[t], lg_errmsg());
        ck_assert_int_eq(a.ndim, 1);
        ck_assert_uint_eq(a.n, 5);
        ck_assert_uint_eq(a.cols, 1);
        for (int i = 0; i < 5; i++) ck_assert_msg(a.data[i] == i, "%s: element %d = %g", ints[t], i, a.data[i]);
        lg_npy_free(&a);
    }
    lg_npy a;
    ck_assert_int_eq(lg_npy_load(&a, lg_npy_file("img.npy")), LG_OK);
    ck_assert_int_eq(a.ndim, 3);
    ck_assert_uint_eq(a.cols, 15);
    ck_assert(a.data[29] == 1.0 && a.data[7] == (double)(float)(7 / 29.0));
    lg_npy_free(&a);
    ck_assert_int_eq(lg_npy_load(&a, lg_npy_file("empty.npy")), LG_OK);
    ck_assert_uint_eq(a.n, 0);
    lg_npy_free(&a);
    /* refused with a message naming the file and the field */
    static const struct {
        const char *file, *want;
    } bad[] = {{"fortran.npy", "fortran_order"}, {"nan.npy", "NaN"}, {"cplx.npy", "descr"}};
    for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
        ck_assert_int_eq(lg_npy_load(&a, lg_npy_file(bad[t].file)), LG_ERR_FORMAT);
        ck_assert_msg(strstr(lg_errmsg(), bad[t].want) && strstr(lg_errmsg(), bad[t].file), "%s: %s", bad[t].file,
                      lg_errmsg());
        ck_assert_ptr_null(a.data);
    }
    /* a dataset pair: values kept, labels integral, domain [0,1] enforced */
    lg_dataset ds;
    char xp[512], yp[512];
    snprintf(xp, sizeof xp, "%s", lg_npy_file("x01.npy"));
    snprintf(yp, sizeof yp, "%s", lg_npy_file("y01.npy"));
    ck_assert_msg(lg_npy_load_dataset(&ds, xp, yp) == LG_OK, "%s", lg_errmsg());
    ck_assert_uint_eq(ds.n, 2);
    ck_assert_int_eq(ds.dim, 3);
    ck_assert_int_eq(ds.n_classes, 8);
    ck_assert_int_eq(ds.y[1], 7);
    ck_assert(ds.x[4] == 0.75f);
    lg_dataset_free(&ds);
    char spec[2600];
    snprintf(spec, sizeof spec, "%s,%s", xp, yp);
    ck_assert(lg_data_spec_is_npy(spec));
    ck_assert(!lg_data_spec_is_npy("/usr/share/datasets/fashion-mnist"));
    ck_assert_int_eq(lg_data_load_spec(&ds, spec, "test"), LG_OK);
    ck_assert_uint_eq(ds.n, 2);
    lg_dataset_free(&ds);
    snprintf(spec, sizeof spec, "%s,%s,%s,%s", xp, yp, lg_npy_file("img.npy"), yp);
    ck_assert_int_eq(lg_data_load_spec(&ds, spec, "train"), LG_OK); /* first pair */
    ck_assert_int_eq(ds.dim, 3);
    lg_dataset_free(&ds);
    ck_assert_int_eq(lg_data_load_spec(&ds, spec, "test"), LG_OK); /* second pair */
    ck_assert_int_eq(ds.dim, 15);
    ck_assert_int_eq(ds.rows, 3);
    lg_dataset_free(&ds);
    snprintf(spec, sizeof spec, "%s,%s,%s", xp, yp, yp);
    ck_assert_int_eq(lg_data_load_spec(&ds, spec, "test"), LG_ERR_ARG);
    snprintf(yp, sizeof yp, "%s", lg_npy_file("yfloat.npy"));
    ck_assert_int_eq(lg_npy_load_dataset(&ds, xp, yp), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "label 1"), "%s", lg_errmsg());
    snprintf(yp, sizeof yp, "%s", lg_npy_file("y_i1.npy"));
    ck_assert_int_eq(lg_npy_load_dataset(&ds, xp, yp), LG_ERR_FORMAT); /* 5 labels, 2 examples */
    snprintf(xp, sizeof xp, "%s", lg_npy_file("x2big.npy"));
    snprintf(yp, sizeof yp, "%s", lg_npy_file("y01.npy"));
    ck_assert_int_eq(lg_npy_load_dataset(&ds, xp, yp), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "example 0, feature 1"), "%s", lg_errmsg());
    snprintf(spec, sizeof spec, "rm -rf '%s'", lg_npy_dir);
    ck_assert_int_eq(system(spec), 0);
}
END_TEST

/* A version-1.0 file: header text hdr (padding and '\n' added) then data. */
static size_t lg_npy_make(unsigned char *out, const char *hdr, const void *data, size_t n)
{
    size_t hl = strlen(hdr), tot = 10 + hl + 1;
    size_t pad = (64 - tot % 64) % 64;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (unsigned char)((hl + 1 + pad) & 0xff);
    out[9] = (unsigned char)((hl + 1 + pad) >> 8);
    memcpy(out + 10, hdr, hl);
    memset(out + 10 + hl, ' ', pad);
    out[10 + hl + pad] = '\n';
    memcpy(out + tot + pad, data, n);
    return tot + pad + n;
}

START_TEST(test_npy_hostile_headers)
{
    static unsigned char buf[4096];
    const double v[4] = {1, 2, 3, 4};
    size_t len = lg_npy_make(buf, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", v, sizeof v);
    lg_npy a;
    ck_assert_msg(lg_npy_parse(&a, buf, len, "ok.npy") == LG_OK, "%s", lg_errmsg());
    ck_assert(a.data[3] == 4.0);
    lg_npy_free(&a);
    /* every truncation and one trailing byte are refused */
    for (size_t l = 0; l < len; l++)
        ck_assert_msg(lg_npy_parse(&a, buf, l, "cut.npy") == LG_ERR_FORMAT, "prefix of %zu bytes accepted", l);
    ck_assert_int_eq(lg_npy_parse(&a, buf, len + 1, "long.npy"), LG_ERR_FORMAT);
    static const struct {
        const char *hdr, *want;
    } bad[] = {
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", "data bytes"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (4), }", "tuple"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (), }", "scalar"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (-4,), }", "shape"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }", "shape"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,4), }", "dimensions"},
        {"{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }", "fortran_order"},
        {"{'descr': '<f8', 'fortran_order': 0, 'shape': (4,), }", "fortran_order"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", "descr"},
        {"{'descr': '|f8', 'fortran_order': False, 'shape': (4,), }", "byte order"},
        {"{'descr': '<f16', 'fortran_order': False, 'shape': (2,), }", "descr"},
        {"{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (4,), }", "descr"},
        {"{'descr': '<f8', 'shape': (4,), }", "fortran_order"},
        {"{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", "repeated"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (4,), 'extra': 1}", "extra"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (4,) } x", "after the dict"},
        {"['descr', '<f8']", "dict"},
        {"{'descr': '<f8' 'fortran_order': False, 'shape': (4,)}", "','"},
        {"{'descr: '<f8', 'fortran_order': False, 'shape': (4,)}", "':'"},
    };
    for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
        len = lg_npy_make(buf, bad[t].hdr, v, sizeof v);
        ck_assert_msg(lg_npy_parse(&a, buf, len, "bad.npy") == LG_ERR_FORMAT, "accepted: %s", bad[t].hdr);
        ck_assert_msg(strstr(lg_errmsg(), bad[t].want) && strstr(lg_errmsg(), "bad.npy"), "%s -> %s", bad[t].hdr,
                      lg_errmsg());
        ck_assert_ptr_null(a.data);
    }
    /* magic, version, header length, non-ASCII header, missing newline */
    len = lg_npy_make(buf, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", v, sizeof v);
    static unsigned char b2[4096];
    static const struct {
        size_t at;
        unsigned char byte;
        const char *want;
    } flips[] = {{0, 0x92, "magic"}, {1, 'n', "magic"}, {6, 4, "version"}, {7, 1, "version"},
                 {9, 0x7f, "header length"}, {20, 0xc3, "ASCII"}, {20, 0, "ASCII"}, {0, ' ', "newline"}};
    for (size_t t = 0; t < sizeof flips / sizeof flips[0]; t++) {
        memcpy(b2, buf, len);
        size_t at = t + 1 == sizeof flips / sizeof flips[0] ? len - sizeof v - 1 : flips[t].at; /* the '\n' */
        b2[at] = flips[t].byte;
        ck_assert_msg(lg_npy_parse(&a, b2, len, "flip.npy") == LG_ERR_FORMAT, "byte %zu accepted", at);
        ck_assert_msg(strstr(lg_errmsg(), flips[t].want), "byte %zu: %s", at, lg_errmsg());
    }
    /* an infinity in the data */
    const double inf[2] = {0.0, HUGE_VAL};
    len = lg_npy_make(buf, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }", inf, sizeof inf);
    ck_assert_int_eq(lg_npy_parse(&a, buf, len, "inf.npy"), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "column 1") && strstr(lg_errmsg(), "infinite"), "%s", lg_errmsg());
    ck_assert_int_eq(lg_npy_load(&a, "/nonexistent/x.npy"), LG_ERR_IO);
}
END_TEST

Suite *suite_npy(void)
{
    Suite *s = suite_create("npy");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 60);
    tcase_add_test(tc, test_npy_numpy_files);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_npy_hostile_headers);
    suite_add_tcase(s, tl);
    return s;
}
