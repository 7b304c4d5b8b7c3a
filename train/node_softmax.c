/* node_softmax.c — the softmax node's training entry (node.h): softmax over
 * each contiguous group of op.group values, through the row kernels of
 * train/attention.h. Its backward needs only its output (io->z). */
#include "train/attention.h"
#include "train/node.h"

void lg_tnode_softmax_forward(const lg_tnode_io *io)
{
    int g = io->A->op.group;
    lg_softmax_rows(io->z, io->a, io->B * (io->A->n_out / g), g);
}

void lg_tnode_softmax_backward(const lg_tnode_io *io, const float *dz, float *da, float *db)
{
    (void)db;
    int g = io->A->op.group;
    lg_softmax_rows_backward(da, dz, io->z, io->B * (io->A->n_out / g), g);
}
