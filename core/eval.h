/* eval.h — classification accuracy of a network on a dataset, in double
 * precision (lg_net_forward_batch in chunks). Borrows both arguments;
 * allocates only its own chunk buffers. */
#ifndef LG_EVAL_H
#define LG_EVAL_H

#include "core/idx.h"
#include "core/net.h"

/* *acc = fraction of ds whose argmax output equals the label (0 for an
 * empty set). LG_ERR_ARG if the shapes do not match. */
lg_status lg_eval_accuracy(const lg_net *net, const lg_dataset *ds, double *acc);

#endif
