/* inputs.h — input vectors for `lgelu eval --input`, `lgelu verify
 * --input` and `lgelu check --inputs`: a NumPy .npy file (shape (n, n_in),
 * or (n_in,) for one input; any dtype core/npy.h reads; chosen by the .npy
 * extension or the \x93NUMPY magic) or text with
 * one input per line, n_in numbers separated by spaces, tabs or commas
 * ('#' starts a comment, blank lines are skipped; '-' reads stdin).
 * Values must be finite. Errors name the file, the line or element, and
 * the rule. *X ([n][n_in], malloc'd) is owned by the caller. Only cli/
 * uses this.
 */
#ifndef LG_CLI_INPUTS_H
#define LG_CLI_INPUTS_H

#include <stddef.h>

#include "core/idx.h"
#include "core/status.h"

lg_status lg_cli_inputs_read(const char *path, int n_in, double **X, size_t *n);

/* The labelled examples of split ("train"/"test") of a --data spec
 * (core/npy.h) for a network of n_in inputs, as the exact points a
 * certificate is about: ds (initialised here, owned by the caller) holds the
 * labels and the data fitted to n_in (lg_dataset_fit, `what` names the
 * network in messages); *X ([ds->n][n_in], owned by the caller) the points
 * in double: a float64 .npy's own values, else ds->x. A float64 file whose
 * values float32 cannot hold and that needs pooling to fit is refused
 * (lg_dataset_require_exact). On failure ds is freed and *X is NULL. */
lg_status lg_cli_data_rows(lg_dataset *ds, double **X, const char *spec, const char *split, int n_in,
                           const char *what);

#endif
