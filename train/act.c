/* act.c — the float activation kernels of training, called through the one
 * activation table (core/act.h: lg_act_info.fwd, .bwd, .keep; the kernels
 * are in core/act_float.c and core/act_simd.c). Unknown kinds act as
 * identity. */
#include "train/act.h"

static const lg_act_info *lg_act_kernels(lg_act kind)
{
    const lg_act_info *ai = lg_act_info_of(kind);
    return ai ? ai : lg_act_info_of(LG_ACT_IDENTITY);
}

void lg_act_forward(float *out, const float *inp, lg_act kind, float lambda, size_t n)
{
    lg_act_kernels(kind)->fwd(out, NULL, inp, lambda, n);
}

void lg_act_backward(float *dinp, float *dlambda, const float *dout, const float *inp, lg_act kind, float lambda,
                     size_t n)
{
    lg_act_kernels(kind)->bwd(dinp, dlambda, dout, NULL, inp, lambda, n);
}

size_t lg_act_keep_count(lg_act kind) { return (size_t)lg_act_kernels(kind)->keep; }

void lg_act_forward_keep(float *out, float *keep, const float *inp, lg_act kind, float lambda, size_t n)
{
    const lg_act_info *ai = lg_act_kernels(kind);
    ai->fwd(out, ai->keep ? keep : NULL, inp, lambda, n);
}

void lg_act_backward_kept(float *dinp, float *dlambda, const float *dout, const float *keep, const float *inp,
                          lg_act kind, float lambda, size_t n)
{
    const lg_act_info *ai = lg_act_kernels(kind);
    ai->bwd(dinp, dlambda, dout, ai->keep ? keep : NULL, inp, lambda, n);
}
