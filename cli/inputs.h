/* inputs.h — input vectors for `lgelu eval --input` and `lgelu check
 * --inputs`: a NumPy .npy file (shape (n, n_in), any dtype core/npy.h
 * reads; chosen by the .npy extension or the \x93NUMPY magic) or text with
 * one input per line, n_in numbers separated by spaces, tabs or commas
 * ('#' starts a comment, blank lines are skipped; '-' reads stdin).
 * Values must be finite. Errors name the file, the line or element, and
 * the rule. *X ([n][n_in], malloc'd) is owned by the caller. Only cli/
 * uses this.
 */
#ifndef LG_CLI_INPUTS_H
#define LG_CLI_INPUTS_H

#include <stddef.h>

#include "core/status.h"

lg_status lg_cli_inputs_read(const char *path, int n_in, double **X, size_t *n);

#endif
