/* gen_fuzz.h — seeded adversarial verification instances with known truth,
 * for the differential soundness fuzzer (soundfuzz.h).
 *
 * Case (seed, index) is a pure function of the two numbers: a tiny ReLU
 * network (1–4 inputs, or a conv image of up to 9, 1–3 hidden layers, at most LG_ORACLE_MAX_UNSTABLE
 * unstable ReLUs under exact interval bounds), one input box and a property
 * (a disjunction of conjunctions of linear output constraints). Each case
 * draws from these classes (the tag in `cls` lists the ones used):
 *   w-unit / w-layer / w-wide  weights N(0,1/fan_in); a random 10^[−3,3]
 *                    scale per layer; or every weight its own 10^[−6,6]
 *   dyadic           weights with ≤ 6 significant bits (exact products, ties)
 *   cancel2 / cancel10  a pair of hidden neurons whose rows differ by a
 *                    factor 2^e (exact: a·relu(bx) − c·relu(dx) with ab = cd)
 *                    or by 0.1 vs 0.3 (3·relu(0.1·v·x) − relu(0.3·v·x)),
 *                    combined in the next layer so they cancel, the rest of
 *                    that layer's row shrunk by up to 1e-8
 *   big              box centred at up to ±1e10, widths down to 1e-12 relative
 *   huge             (a quarter of big) centred at up to ±1e308, inputs often pinned
 *   norm             input normalisation (x − sub)/div, div in ±10^[−3,3]
 *   robust / lin     robustness terms y_ℓ − y_j − κ ≤ 0 (a disjunction), or
 *                    1–3 terms of 1–3 random linear constraints
 *   conj             some term has ≥ 2 constraints
 *   tie-E            constants shifted so the exact depth of the property
 *                    (lg_oracle_gap) is ±10^E·scale, E ∈ [−14, −3]; tie-0:
 *                    exactly 0 (a closed boundary point is a counterexample)
 *   xdiv             (with norm) divisors ±2^±[40, 60]: a tiny box becomes wide
 *                    after normalisation and the reverse
 *   point            every input pinned: a one-point box
 *   trivial / empty  one term made true everywhere (constraints 0·y + d ≤ 0,
 *                    d ≤ 0), or with no constraint at all: every point of the
 *                    box is a counterexample
 *   conv / pos-bias  (a fifth of the cases, from their own stream) a C×H×W
 *                    image (C 1–2, H, W 2–4, ≤ 9 values) through 1–2 conv layers (1–3
 *                    channels, kernels 1–3 each way so often non-square,
 *                    strides 1–2, padding 0–1), 0–1 dense hidden layers,
 *                    a dense output; bias constant per channel, or one per
 *                    position (pos-bias). cancel2 / cancel10 then make two
 *                    channels' kernels proportional and the next layer
 *                    cancel them at every position. The driver gets the conv
 *                    net; the oracle (prob, the exact re-check of witnesses,
 *                    the smooth MPFR pass) works on lg_net_densify of it, so a
 *                    structured-vs-dense mistake shows as a wrong verdict
 *   margin           the driver gets the property with margin K near the ulp
 *                    of its constants (lg_prop_margin): the region is
 *                    Σ coef·y + d − K ≤ 0 exactly, K 1e-17, 3·2⁻⁵⁴ or
 *                    ¼…3 ulps of the largest |d|
 * The truth is lg_oracle_decide on the final doubles; for margin cases, on
 * d (a counterexample there is one of the larger region) and on d − K
 * rounded down (none there: none in the region); LG_ANSWER_UNKNOWN when the
 * two disagree (then only witnesses are judged). The new classes draw from
 * their own random stream, so the other classes of a (seed, index) are
 * unchanged.
 *
 * lg_fuzz_case owns its network, property and witness; lg_fuzz_case_free
 * releases them.
 */
#ifndef LG_GEN_FUZZ_H
#define LG_GEN_FUZZ_H

#include <stdint.h>
#include <stdio.h>

#include "encode/problem.h"
#include "verify/prop.h"

typedef struct lg_fuzz_case {
    uint64_t seed;
    long index;
    lg_net net;           /* what the driver runs (conv layers kept as conv) */
    lg_net dnet;          /* conv class: lg_net_densify(net), the oracle's net; else zeroed */
    lg_prop prop;         /* one case */
    lg_problem prob;      /* the oracle's view of case 0 (borrows dnet or net, prop) */
    char cls[128];        /* class tags, space separated */
    lg_answer truth;      /* exact: SAT (violated) or UNSAT (robust); UNKNOWN: margin undecided */
    double *witness;      /* [n_in] the oracle's witness rounded to double, or NULL */
    double tie;           /* |τ| when a tie class was used, else 0 */
    double margin;        /* K > 0 for the margin class, else 0 */
    lg_prop dprop;        /* margin class: the driver's property (prop with lg_prop_margin(K)) */
    long n_lp;            /* exact LPs the oracle solved for this case */
} lg_fuzz_case;

/* Make case (seed, index). Errors only for out-of-memory or an oracle
 * failure (LG_ERR_SOLVER). */
lg_status lg_fuzz_case_make(lg_fuzz_case *fc, uint64_t seed, long index);
void lg_fuzz_case_free(lg_fuzz_case *fc);

/* Write the case as dir/net.lgnet and dir/prop.vnnlib (constants %.17g,
 * which read back as the same doubles) for `lgelu verify`. dir must exist. */
lg_status lg_fuzz_case_dump(const lg_fuzz_case *fc, const char *dir);

/* Deep copy of a one-case property without inner data (the fuzzer's
 * own: at most 3 terms); dst is the caller's to free. */
lg_status lg_fuzz_prop_copy(lg_prop *dst, const lg_prop *src);

/* The case in readable text (weights in %a, exact). */
void lg_fuzz_case_print(const lg_fuzz_case *fc, FILE *f);

#endif
