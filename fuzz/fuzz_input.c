/* fuzz_input.c — fuzzer input → parser input (see fuzz_input.h). */
#include "fuzz/fuzz_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/inputs.h"
#include "core/idx.h"
#include "core/npy.h"
#include "core/netfile.h"
#include "core/nnet.h"
#include "onnx/onnx.h"
#include "study/grid.h"
#include "verify/prop.h"
#include "verify/vnnlib.h"

/* Write data[size] to a fresh temporary file (tmpfs when there is one);
 * path receives its name. Returns 0 or -1. */
static int lg_fuzz_tmpfile(char *path, size_t cap, const uint8_t *data, size_t size)
{
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, cap, "%s/lgelu-fuzz-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            unlink(path);
            return -1;
        }
        done += (size_t)w;
    }
    close(fd);
    return 0;
}

lg_status lg_fuzz_netfile(const uint8_t *data, size_t size)
{
    lg_net net;
    lg_status st = lg_netfile_parse(&net, data, size, "fuzz.lgnet");
    lg_net_free(&net);
    return st;
}

lg_status lg_fuzz_nnet(const uint8_t *data, size_t size)
{
    lg_net net;
    lg_status st = lg_nnet_parse(&net, (const char *)data, size, "fuzz.nnet");
    lg_net_free(&net);
    return st;
}

lg_status lg_fuzz_onnx(const uint8_t *data, size_t size)
{
    lg_net net;
    lg_status st = lg_onnx_parse(&net, data, size, "fuzz.onnx");
    lg_net_free(&net);
    return st;
}

lg_status lg_fuzz_vnnlib(const uint8_t *data, size_t size)
{
    lg_prop p;
    lg_status st = lg_vnnlib_parse(&p, (const char *)data, size, "fuzz.vnnlib", 0, 0);
    lg_prop_free(&p);
    return st;
}

lg_status lg_fuzz_vnnlib_assign(const uint8_t *data, size_t size)
{
    if (size < 2) return LG_ERR_ARG;
    int n_in = 1 + data[0] % 16, n_out = 1 + data[1] % 16;
    char path[64];
    if (lg_fuzz_tmpfile(path, sizeof path, data + 2, size - 2)) return LG_ERR_IO;
    double x[16], y[16];
    lg_status st = lg_vnnlib_read_assignment(path, n_in, n_out, x, y);
    unlink(path);
    return st;
}

/* Two temporary files from "u16 length of the first, first, second" and
 * load(ds, first, second). */
static lg_status lg_fuzz_pair(const uint8_t *data, size_t size,
                              lg_status (*load)(lg_dataset *, const char *, const char *))
{
    if (size < 2) return LG_ERR_ARG;
    size_t ni = (size_t)data[0] | (size_t)data[1] << 8;
    data += 2;
    size -= 2;
    if (ni > size) ni = size;
    char ip[64], lp[64];
    if (lg_fuzz_tmpfile(ip, sizeof ip, data, ni)) return LG_ERR_IO;
    if (lg_fuzz_tmpfile(lp, sizeof lp, data + ni, size - ni)) {
        unlink(ip);
        return LG_ERR_IO;
    }
    lg_dataset ds;
    lg_status st = load(&ds, ip, lp);
    lg_dataset_free(&ds);
    unlink(ip);
    unlink(lp);
    return st;
}

lg_status lg_fuzz_idx(const uint8_t *data, size_t size) { return lg_fuzz_pair(data, size, lg_idx_load); }

lg_status lg_fuzz_npy(const uint8_t *data, size_t size)
{
    lg_npy a;
    lg_status st = lg_npy_parse(&a, data, size, "fuzz.npy");
    lg_npy_free(&a);
    return st;
}

lg_status lg_fuzz_npy_dataset(const uint8_t *data, size_t size)
{
    return lg_fuzz_pair(data, size, lg_npy_load_dataset);
}

lg_status lg_fuzz_inputs(const uint8_t *data, size_t size)
{
    if (size < 1) return LG_ERR_ARG;
    int n_in = 1 + data[0] % 16;
    char path[64];
    if (lg_fuzz_tmpfile(path, sizeof path, data + 1, size - 1)) return LG_ERR_IO;
    double *X = NULL;
    size_t n = 0;
    lg_status st = lg_cli_inputs_read(path, n_in, &X, &n);
    free(X);
    unlink(path);
    return st;
}

lg_status lg_fuzz_grid(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return LG_ERR_NOMEM;
    memcpy(text, data, size);
    text[size] = '\0';
    lg_study_grid g;
    lg_status st = lg_study_grid_parse(&g, text, "fuzz.ini");
    if (st == LG_OK) { /* the resume check: a grid never differs from itself */
        char diff[256];
        LG_ASSERT(lg_study_grid_diff(&g, &g, diff, sizeof diff) == 0);
    }
    lg_study_grid_free(&g);
    free(text);
    return st;
}
