/* nets.h — the study's networks: train (in-process) or reuse from the cache,
 * substitute ReLU, measure accuracy and the global deviation.
 *
 * A network is identified by lg_study_train_hash (regime options,
 * architecture, seed; not the regime's name): CACHE/<hash>.lgnet holds the
 * trained smooth (or relu) network, CACHE/<hash>.csv its training log (λ per
 * layer per epoch). Both are published atomically (core/atomic.h), so a
 * killed run never leaves a half-written network. A regime with
 * anneal_epochs > 0 first gets its base network (same options,
 * anneal_epochs = 0: normally the cached net of the plain regime) and then
 * continues training while λ moves to lambda_target (`lgelu anneal`).
 * Training is deterministic (train/loop.h), so every shard of a study that
 * trains the same options gets bit-identical networks.
 *
 * Ownership: lg_study_net_get initialises *n (smooth and relu nets, the
 * λ-history JSON); lg_study_net_free releases them. train and test are
 * borrowed.
 */
#ifndef LG_STUDY_NETS_H
#define LG_STUDY_NETS_H

#include <jansson.h>
#include <stdint.h>

#include "core/idx.h"
#include "core/net.h"
#include "study/grid.h"

typedef struct lg_study_net {
    uint64_t hash;
    int smooth;           /* 1 if the trained net has gelu/lgelu layers (a ReLU substitution exists) */
    lg_net net;           /* the trained network */
    lg_net relu;          /* its ReLU substitution (a copy when it is already piecewise linear) */
    double acc_before;    /* test accuracy of net, double precision */
    double acc_after;     /* test accuracy of relu */
    double delta_global;  /* certified ‖f_relu − f_net‖∞ over [0,1]^n_in (0 when not smooth) */
    double train_seconds; /* 0 when it came from the cache */
    int cached;
    json_t *lambda_log;   /* [[epoch, λ_0, λ_1, ...], ...] over training (post-hoc anneal appended) */
} lg_study_net;

/* Get (cache or train) the network of regime r, architecture a, seed.
 * cache_dir must exist. */
lg_status lg_study_net_get(lg_study_net *n, const char *cache_dir, const lg_study_regime *r,
                           const lg_study_arch *a, long seed, const lg_dataset *train, const lg_dataset *test);
void lg_study_net_free(lg_study_net *n);

/* The networks.jsonl object of a network (key, regime, arch, seed, hash,
 * acc_before, acc_after, delta_global, lambda_final, lambda_log, training
 * options, train_seconds). New reference. */
json_t *lg_study_net_json(const lg_study_net *n, const lg_study_regime *r, const lg_study_arch *a, long seed);

#endif
