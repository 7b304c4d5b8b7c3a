/* node_layernorm.c — the layernorm node's training entry (node.h): each
 * contiguous group of g = op.group values normalised, then scaled by γ and
 * shifted by β (the term's weights [γ[g]; β[g]]), through the kernels of
 * train/layernorm.h. It keeps x̂ [n_in] and 1/σ [n_in/g] per row. */
#include "train/layernorm.h"
#include "train/node.h"

size_t lg_tnode_layernorm_keep(const lg_linear *A) { return (size_t)A->n_in + (size_t)(A->n_in / A->op.group); }

void lg_tnode_layernorm_forward(const lg_tnode_io *io)
{
    int g = io->A->op.group, n = io->B * (io->A->n_in / g);
    float *xhat = io->keep, *rstd = io->keep + (size_t)io->B * (size_t)io->A->n_in;
    lg_ln_forward(io->z, xhat, rstd, io->a, io->W, io->W + g, n, g, (float)io->A->op.eps);
}

void lg_tnode_layernorm_backward(const lg_tnode_io *io, const float *dz, float *da, float *db)
{
    (void)db;
    int g = io->A->op.group, n = io->B * (io->A->n_in / g);
    const float *xhat = io->keep, *rstd = io->keep + (size_t)io->B * (size_t)io->A->n_in;
    lg_ln_backward(da, io->dW, io->dW + g, dz, xhat, rstd, io->W, n, g);
}
