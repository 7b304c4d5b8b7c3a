/* grid.h — the study's grid file: which networks to train, which instances
 * to verify (docs/STUDY.md, format documented there and in
 * benchmarks/small.ini).
 *
 * INI through libinih. Sections: [study] (archs, seeds, eps, inputs,
 * input_offset, modes, timeout, data), [train] (training options shared by
 * every regime), one [regime NAME] per regime (act plus any training
 * option, overriding [train]) and optionally one [arch NAME] per listed
 * architecture (modes, timeout: overriding [study] for that architecture). In a regime, `anneal_start` and
 * `lambda_target` may list several values: the regime expands to their cross
 * product, named NAME_s<start>_l<target>. `rs` (weight) and `rs_eps` add the
 * RS loss (train/rs.h) to a regime's training. Lists are separated by blanks;
 * an architecture is an --arch text (core/arch.h: "784,256,256,10",
 * "1x28x28,c8k3s2,10", "784,256,r256x2,10").
 * Errors name the file, the line and the key.
 *
 * Ownership: lg_study_grid_load initialises the grid; lg_study_grid_free
 * releases everything it owns (a zeroed grid is a no-op).
 */
#ifndef LG_STUDY_GRID_H
#define LG_STUDY_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#include "core/net.h"
#include "encode/problem.h"

#define LG_STUDY_MAX_DIMS 64
#define LG_STUDY_NAME 64

typedef enum lg_study_mode {
    LG_STUDY_AUTO = 0, /* the full pipeline on the ReLU net (verify --solver auto) */
    LG_STUDY_Z3,       /* back-end only: Z3 on the same bounds, nothing else */
    LG_STUDY_GLPK,     /* back-end only: GLPK MILP on the same bounds, nothing else */
    LG_STUDY_SMOOTH,   /* the smooth net through its substitution (verify --ref) */
    LG_STUDY_DIRECT,   /* the smooth net itself (verify on it: its relaxations, attack, input splitting) */
    LG_STUDY_N_MODES
} lg_study_mode;

/* "auto", "z3", "glpk", "smooth", "direct". */
const char *lg_study_mode_name(lg_study_mode m);
/* 0 and *m set, or −1 for an unknown name. */
int lg_study_mode_parse(const char *s, lg_study_mode *m);

/* Training options of one regime (what the network cache key hashes). */
typedef struct lg_study_train {
    char act[16];          /* any lg_act_parse name: lgelu, gelu, relu, ... */
    double anneal_start;   /* 1 = no annealing during training */
    double lambda_target;  /* for anneal_start < 1 and anneal_epochs */
    int anneal_epochs;     /* > 0: afterwards `lgelu anneal` for this many epochs (post-hoc route) */
    int epochs, batch, threads;
    char opt[8];           /* sgd or adamw */
    char init[8];          /* weight initialisation: he (the default), xavier or torch (train/init.h) */
    double lr, momentum, wd, t, c;
    long subset;           /* first N training images (0 = all) */
    double rs, rs_eps;     /* RS loss weight (0 = off) and its training radius (train/rs.h) */
} lg_study_train;

typedef struct lg_study_regime {
    char name[LG_STUDY_NAME];
    lg_study_train tr;
} lg_study_regime;

typedef struct lg_study_arch {
    int n_dims;               /* layers + 1 */
    int dims[LG_STUDY_MAX_DIMS]; /* the input width, then each layer's width */
    char name[LG_STUDY_NAME]; /* "784,256,256,10", "1x28x28,c8k3s2,c16k3s2,10", "784,256,r256x2,10" or a ViT
                               * "1x28x28,vit:p7,d16,h2,L1,m32,cls,10" (core/arch.h, core/arch_vit.h;
                               * the net is built from it; a ViT's dims are its input and classes) */
    /* from an optional [arch NAME] section: the modes and the timeout for
     * this architecture (n_modes = 0 / timeout = 0: the [study] ones) */
    int n_modes;
    lg_study_mode modes[LG_STUDY_N_MODES];
    double timeout;
    char regimes[256];        /* [arch NAME] regimes: the regimes run on it, space-separated ("" = every one) */
} lg_study_arch;

typedef struct lg_study_grid {
    char data[512];           /* IDX directory (default LG_DATA_DEFAULT_DIR) */
    int n_archs;
    lg_study_arch *archs;
    int n_regimes;
    lg_study_regime *regimes;
    int n_seeds;
    long *seeds;
    int n_eps;
    double *eps;
    int n_inputs;             /* test images input_offset .. input_offset + n_inputs − 1 */
    int input_offset;
    int n_modes;
    lg_study_mode modes[LG_STUDY_N_MODES];
    double timeout;           /* seconds per instance (default 30) */
    char z3_theory[16];       /* the z3 mode's theory: "auto" (default), "exact", "lp", "lp-lemmas"
                                 (verify --z3-theory); the row records the one that ran */
    const lg_solver_ops *z3_row; /* the solver table's row of that theory (resolved by the parser) */
} lg_study_grid;

lg_study_train lg_study_train_default(void);

/* The modes and the timeout that apply to architecture a of g. */
int lg_study_arch_modes(const lg_study_grid *g, const lg_study_arch *a, const lg_study_mode **modes);
double lg_study_arch_timeout(const lg_study_grid *g, const lg_study_arch *a);
/* 1 if regime (its expanded name, e.g. anneal_s0.25_l160) runs on a: a's
 * regimes list is empty, or names it or its section (anneal). */
int lg_study_arch_has_regime(const lg_study_arch *a, const char *regime);

/* Parse path. LG_ERR_IO if it cannot be read, LG_ERR_FORMAT naming
 * "path:line: [section] key: problem" otherwise. */
lg_status lg_study_grid_load(lg_study_grid *g, const char *path);
/* Same from a string (name used in messages). */
lg_status lg_study_grid_parse(lg_study_grid *g, const char *text, const char *name);
void lg_study_grid_free(lg_study_grid *g);

/* 64-bit FNV-1a of the training options that determine a network: regime
 * options, architecture and seed (not the regime's name). Equal options ⇒
 * equal hash ⇒ the cached network is reused. */
uint64_t lg_study_train_hash(const lg_study_train *tr, const lg_study_arch *a, long seed);

/* What differs between the grid old (e.g. OUT/grid.ini of an earlier run)
 * and g, one item per changed setting ("[regime relu] epochs: 1 -> 2",
 * "[study] timeout: 5 -> 2", "[regime x] added"), joined by "; " into buf
 * (truncated with "..." if it does not fit). Layout and comments do not
 * count, only parsed values. Returns the number of differences. */
int lg_study_grid_diff(const lg_study_grid *old, const lg_study_grid *g, char *buf, size_t n);

#endif
