/* fuzz_input.h — how a fuzzer input becomes a parser's input, shared by the
 * libFuzzer harnesses (fuzz/fuzz_*.c) and the regression suite
 * (tests/check_parsers.c), so a crashing input replays the same way
 * in both.
 *
 * One function per parser, lg_fuzz_<parser>(data, size): it feeds the bytes
 * to the parser exactly as the CLI would, frees whatever the parser built and
 * returns the parser's status (the harness ignores it; the regression test
 * may assert on it). Parsers that read paths rather than buffers (IDX, the
 * VNN-LIB assignment reader) get a temporary file that is removed before
 * returning. Nothing is kept between calls.
 */
#ifndef LG_FUZZ_INPUT_H
#define LG_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* Native network format (lg_netfile_parse). */
lg_status lg_fuzz_netfile(const uint8_t *data, size_t size);
/* .nnet text network (lg_nnet_parse). */
lg_status lg_fuzz_nnet(const uint8_t *data, size_t size);
/* ONNX (lg_onnx_parse). */
lg_status lg_fuzz_onnx(const uint8_t *data, size_t size);
/* VNN-LIB property (lg_vnnlib_parse, sizes taken from the declarations). */
lg_status lg_fuzz_vnnlib(const uint8_t *data, size_t size);
/* VNN-COMP counterexample / assignment file (lg_vnnlib_read_assignment);
 * the first byte picks n_in (1..16) and the second n_out (1..16). */
lg_status lg_fuzz_vnnlib_assign(const uint8_t *data, size_t size);
/* IDX images + labels pair (lg_idx_load, gzip or plain): the first two bytes
 * (little-endian) give the length of the images file, clamped to what is
 * left; the rest is the labels file. */
lg_status lg_fuzz_idx(const uint8_t *data, size_t size);

/* NumPy .npy array (lg_npy_parse). */
lg_status lg_fuzz_npy(const uint8_t *data, size_t size);
/* A pair of .npy files X, y as a dataset (lg_npy_load_dataset); split as
 * lg_fuzz_idx (u16 length of X, X, then y). */
lg_status lg_fuzz_npy_dataset(const uint8_t *data, size_t size);
/* Input vectors for eval --input / check --inputs (lg_cli_inputs_read:
 * .npy by magic, else text); the first byte picks n_in (1..16). */
lg_status lg_fuzz_inputs(const uint8_t *data, size_t size);

/* Study grid file (lg_study_grid_parse; libinih underneath). */
lg_status lg_fuzz_grid(const uint8_t *data, size_t size);

#endif
