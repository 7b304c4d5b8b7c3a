/* npy.h — NumPy .npy arrays (format versions 1.0, 2.0 and 3.0), read into
 * double, and a pair of .npy files (X, y) as an lg_dataset.
 *
 * The header is validated strictly: magic "\x93NUMPY", version 1.0/2.0/3.0,
 * header length inside the buffer and ending in '\n', a Python dict literal
 * with exactly the keys 'descr', 'fortran_order', 'shape' (each once),
 * descr one of float32/float64 and signed/unsigned integers of 1, 2, 4 or 8
 * bytes with an explicit or native byte order ('<', '>', '=', '|' for one
 * byte), fortran_order False (True is refused: save with
 * np.ascontiguousarray), a shape tuple of 1 to LG_NPY_MAX_DIMS
 * non-negative dimensions, and a data size equal to what follows the
 * header exactly (no truncation, no trailing bytes). Values are converted to
 * double; NaN and ±Inf are refused (the element index is named).
 * Errors name the file (the `name` argument) and the field at fault.
 *
 * Ownership: an lg_npy owns its data; lg_npy_free releases it (a zeroed
 * lg_npy is a no-op). lg_npy_parse borrows buf.
 */
#ifndef LG_NPY_H
#define LG_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "core/idx.h"
#include "core/status.h"

#define LG_NPY_MAX_DIMS 8
/* Largest file lg_npy_load reads (bytes) and largest element count. */
#define LG_NPY_MAX_BYTES ((size_t)1 << 34)
#define LG_NPY_MAX_ITEMS ((size_t)1 << 31)

typedef enum lg_npy_kind { LG_NPY_FLOAT, LG_NPY_INT, LG_NPY_UINT } lg_npy_kind;

typedef struct lg_npy {
    int ndim;                        /* 1 .. LG_NPY_MAX_DIMS */
    size_t shape[LG_NPY_MAX_DIMS];   /* as in the header */
    size_t n;                        /* shape[0] (rows) */
    size_t cols;                     /* product of shape[1..]; 1 for a 1-d array */
    lg_npy_kind kind;                /* element type in the file */
    int itemsize;                    /* bytes per element in the file */
    double *data;                    /* [n][cols], C order */
} lg_npy;

/* Parse a whole .npy file held in buf[len]; name is used in messages.
 * On failure a is zeroed and LG_ERR_FORMAT (or LG_ERR_NOMEM) returned. */
lg_status lg_npy_parse(lg_npy *a, const unsigned char *buf, size_t len, const char *name);

/* Read path (at most LG_NPY_MAX_BYTES) and parse it. LG_ERR_IO when it
 * cannot be read. */
lg_status lg_npy_load(lg_npy *a, const char *path);

void lg_npy_free(lg_npy *a);

/* A dataset from X (shape (n, d) or (n, d1, d2, ...): rows flattened; values
 * must lie in [0, 1], the domain every lgelu network expects) and y (shape
 * (n,) or (n, 1), integral values in [0, 255]). rows/cols of ds are set to
 * (d1, d2) for a 3-d X and (1, d) otherwise. Errors name the file, the
 * element and the rule. ds is owned by the caller (lg_dataset_free). */
lg_status lg_npy_load_dataset(lg_dataset *ds, const char *x_path, const char *y_path);

/* 1 when spec names .npy files ("X.npy,y.npy" or
 * "X.npy,y.npy,Xtest.npy,ytest.npy"), 0 for anything else (a directory). */
int lg_data_spec_is_npy(const char *spec);

/* Load a split from a --data spec: a directory of IDX files (lg_data_load),
 * or "X.npy,y.npy" (the pair is every split), or
 * "Xtrain.npy,ytrain.npy,Xtest.npy,ytest.npy" (split "train" is the first
 * pair, "test" the second). */
lg_status lg_data_load_spec(lg_dataset *ds, const char *spec, const char *split);

/* As lg_data_load_spec, and when the file held values float32 cannot (a
 * float64 .npy: ds->lossy), *xd receives the file's values in double
 * ([ds->n][ds->dim], owned by the caller); else *xd is NULL and ds->x is
 * exact. For the commands whose certificate is about the file's points. */
lg_status lg_data_load_spec_exact(lg_dataset *ds, double **xd, const char *spec, const char *split);

#endif
