/* idx.h — IDX datasets (MNIST / Fashion-MNIST layout), gzip or plain.
 *
 * Reads an images file (magic 0x00000803, u8, n × rows × cols) and a labels
 * file (magic 0x00000801, u8, n) through zlib (gzip and plain files both
 * work), checks magic, sizes and that the counts agree, and scales pixels to
 * [0,1] as float. The lg_dataset owns its arrays; free with lg_dataset_free.
 */
#ifndef LG_IDX_H
#define LG_IDX_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define LG_DATA_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"

typedef struct lg_dataset {
    size_t n;       /* examples */
    int dim;        /* features per example (rows × cols) */
    int rows, cols;
    int n_classes;  /* 1 + largest label */
    float *x;       /* [n][dim], values in [0,1] */
    uint8_t *y;     /* [n] */
    size_t lossy;   /* 0, or 1 + the index in x of the first value the file held in more
                       precision than float32 (a float64 .npy): x is then rounded */
} lg_dataset;

/* A certificate about the points of ds must be about the file's points:
 * LG_OK when x holds the file's values exactly (ds->lossy == 0), else
 * LG_ERR_FORMAT with a message naming the example, feature and `where` and
 * pointing to a file with one feature per network input (kept in double by
 * lg_data_load_spec_exact) or a float32 file. */
lg_status lg_dataset_require_exact(const lg_dataset *ds, const char *where);

/* Load one images/labels pair. Errors name the file and the problem. */
lg_status lg_idx_load(lg_dataset *ds, const char *images_path, const char *labels_path);

/* Load "train" or "test" from dir: {train,t10k}-{images-idx3,labels-idx1}-ubyte
 * with or without ".gz" (the .gz is tried first). */
lg_status lg_data_load(lg_dataset *ds, const char *dir, const char *split);

/* Keep only the first n examples (n ≥ ds->n is a no-op). */
void lg_dataset_truncate(lg_dataset *ds, size_t n);

/* Move the last n_val examples of ds into val (ds shrinks); val is
 * initialised here and owned by the caller. */
lg_status lg_dataset_split(lg_dataset *ds, lg_dataset *val, size_t n_val);

/* The factor k ≥ 1 such that k×k average pooling of ds's rows × cols images
 * gives n_in features ((rows/k)·(cols/k) = n_in, k dividing both), or 0 if
 * there is none (e.g. a dataset without an image shape). 784 → 1, 196 → 2,
 * 49 → 4, 16 → 7 on 28 × 28 images. */
int lg_dataset_pool_factor(const lg_dataset *ds, int n_in);

/* dst (initialised here, owned by the caller) = src with each image
 * average-pooled k × k (k as lg_dataset_pool_factor; k = 1 copies). Pixels stay
 * in [0,1]. This is how a network with fewer inputs than the images (the
 * study's small architectures) sees the data. */
lg_status lg_dataset_pool(lg_dataset *dst, const lg_dataset *src, int k);

/* Make ds fit a network with n_in inputs, in place: nothing if ds->dim =
 * n_in, k × k average pooling if some k fits (lg_dataset_pool_factor),
 * else LG_ERR_ARG naming what (e.g. "the network", "--arch") and where
 * (the data's name) and the sizes that would fit. */
lg_status lg_dataset_fit(lg_dataset *ds, int n_in, const char *what, const char *where);

void lg_dataset_free(lg_dataset *ds);

#endif
