/* act_onnx.h — each activation's ONNX form (one writer per kind of the
 * activation table core/act.h, act_onnx.c) and the few graph-building calls
 * it needs from the writer (onnx_write.c). The reader (onnx_read.c) reads
 * the same forms back through the table entry's onnx_pattern / onnx_op data.
 *
 * Every name and node lives in the writer's arena (lg_ow) and is freed with
 * it; the calls return NULL (or 0) once it is out of memory, and the writer
 * reports that after the layer.
 */
#ifndef LG_ACT_ONNX_H
#define LG_ACT_ONNX_H

#include "core/act.h"

typedef struct lg_ow lg_ow;

/* A node op(in0[, in1]) → out (in1 may be NULL); 1 on success. */
int lg_ow_op(lg_ow *w, const char *op, const char *out, const char *in0, const char *in1);
/* A name made of fmt with one %d, k (e.g. "L%d_beta"). */
char *lg_ow_str(lg_ow *w, const char *fmt, int k);
/* A scalar initializer `name` = v; with shape [1] when vec1 (PRelu's slope). */
const char *lg_ow_value(lg_ow *w, const char *name, double v, int vec1);
/* A scalar initializer shared by the whole file (c_half, c_one, ...):
 * written once, on first use, and its name returned after that. */
const char *lg_ow_shared(lg_ow *w, const char *name, double v);

/* The GELU pattern divides by the double just below √2: the file's exact
 * function is then erf(λ'x/√2) with λ' = λ·√2/c ∈ (λ, next(λ)), which the
 * importer reads back as λ itself (onnx_read.c, DESIGN.md §3). */
#define LG_ONNX_SQRT2_DOWN 0x1.6a09e667f3bccp+0

/* An activation's writer: the nodes computing f(z) with parameter p into
 * out; out, or NULL out of memory. k names the layer's constants. */
typedef const char *(*lg_act_onnx_write_fn)(lg_ow *w, double p, int k, const char *z, const char *out);
/* The writer of kind a (one per kind of the activation table), or NULL for
 * a kind out of range. */
lg_act_onnx_write_fn lg_act_onnx_writer(lg_act a);

/* The writers: */
const char *lg_act_onnx_identity(lg_ow *w, double p, int k, const char *z, const char *out);
const char *lg_act_onnx_relu(lg_ow *w, double p, int k, const char *z, const char *out);
const char *lg_act_onnx_sigmoid(lg_ow *w, double p, int k, const char *z, const char *out);
const char *lg_act_onnx_prelu(lg_ow *w, double p, int k, const char *z, const char *out);
const char *lg_act_onnx_swish(lg_ow *w, double p, int k, const char *z, const char *out);
const char *lg_act_onnx_gelu(lg_ow *w, double p, int k, const char *z, const char *out);
const char *lg_act_onnx_lgelu(lg_ow *w, double p, int k, const char *z, const char *out);

#endif
