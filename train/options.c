/* options.c — valid ranges of the training options (train/options.h). */
#include "train/options.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct lg_opt_range {
    const char *name;
    double lo, hi;
    int lo_open, integer; /* lo_open: lo itself is excluded */
} lg_opt_range;

static const lg_opt_range lg_train_ranges[] = {
    {"epochs", 1, 100000, 0, 1},
    {"batch", 1, 65536, 0, 1},
    {"threads", 1, 256, 0, 1},
    {"seed", 0, 2147483647.0, 0, 1},
    {"val", 0, 1e8, 0, 1},
    {"subset", 0, 1e8, 0, 1},            /* 0: all */
    {"anneal-epochs", 0, 100000, 0, 1},  /* grid files */
    {"lr", 0, 1e300, 1, 0},
    {"momentum", 0, 0.999999, 0, 0},
    {"wd", 0, 10, 0, 0},
    {"t", 0, 1e6, 1, 0},
    {"c", 0, 1e6, 0, 0},
    {"anneal-start", 0, 1, 0, 0},
    {"lambda-target", 1, 1e12, 0, 0},
    {"tolerance", 0, 0.7978845608, 1, 0}, /* λ_target = 2/(E√(2π)) ≥ 1 */
    {"rs", 0, 1e6, 0, 0},                 /* RS loss weight, 0 = off */
    {"rs-eps", 0, 1, 0, 0},
    {"warmup", 0, 1e9, 0, 1},            /* learning-rate warm-up steps, 0 = off */
};

const char *lg_train_opt_check(const char *name, double v)
{
    static _Thread_local char msg[128];
    char key[32];
    snprintf(key, sizeof key, "%s", name);
    for (char *p = key; *p; p++)
        if (*p == '_') *p = '-';
    for (size_t i = 0; i < sizeof lg_train_ranges / sizeof lg_train_ranges[0]; i++) {
        const lg_opt_range *r = &lg_train_ranges[i];
        if (strcmp(r->name, key) != 0) continue;
        int ok = isfinite(v) && (r->lo_open ? v > r->lo : v >= r->lo) && v <= r->hi && (!r->integer || v == floor(v));
        if (ok) return NULL;
        if (r->integer) snprintf(msg, sizeof msg, "expected an integer in [%.0f, %.0f]", r->lo, r->hi);
        else snprintf(msg, sizeof msg, "expected a number in %c%.10g, %.10g]", r->lo_open ? '(' : '[', r->lo, r->hi);
        return msg;
    }
    return "unknown option";
}
