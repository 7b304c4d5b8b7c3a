/* lgelu.h — the public C API of liblgelu (docs/LIBRARY.md).
 *
 * Load a network (native .lgnet or ONNX), evaluate it, save it, substitute
 * ReLU, bound the deviation of a ReLU net from the smooth net it came from,
 * and verify a robustness property (built in memory) or a VNN-LIB property.
 * Every call goes through the same internal functions as the `lgelu`
 * executable, so verdicts equal the CLI's for the same options.
 *
 * Errors. Every fallible call returns an lgelu_status (LGELU_OK = 0); the
 * human-readable detail ("file:line: expected ...") is a thread-local
 * message read with lgelu_errmsg(), valid until the next failing call on
 * the same thread.
 *
 * Ownership. Handles (lgelu_net, lgelu_result, lgelu_cancel) are opaque: whoever receives
 * one from a call (`**out`) owns it and frees it with the matching _free
 * (NULL is a no-op). Arrays passed in (`const double *`) are borrowed for
 * the call only. Pointers returned by result accessors (counterexample,
 * outputs, unstable counts, strings) are owned by the result and live until
 * lgelu_result_free. Strings returned by lgelu_status_str,
 * lgelu_verdict_name and lgelu_version are static.
 *
 * Thread safety. Calls are thread-safe per call: distinct calls may run
 * concurrently on different threads, and one lgelu_net may be shared by
 * concurrent calls (every call only reads it). A handle must not be freed
 * while another thread uses it. Verification may start worker threads and,
 * with a timeout, run the back-end solver in a child process (fork) that is
 * killed 1 s after the deadline; the call returns by then.
 *
 * Units and shapes: inputs x are double [n_in] (a batch: [n][n_in]
 * row-major), outputs double [n_out] ([n][n_out]); seconds are wall-clock.
 */
#ifndef LGELU_H
#define LGELU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define LGELU_API __attribute__((visibility("default")))
#else
#define LGELU_API
#endif

#define LGELU_VERSION_MAJOR 0
#define LGELU_VERSION_MINOR 4
#define LGELU_VERSION_PATCH 0

/* Status codes (same values as the executable's internal codes). */
typedef enum lgelu_status {
    LGELU_OK = 0,
    LGELU_ERR_NOMEM,       /* out of memory */
    LGELU_ERR_IO,          /* cannot open/read/write a file */
    LGELU_ERR_FORMAT,      /* malformed file or property */
    LGELU_ERR_ARG,         /* bad argument (shape, range, NULL) */
    LGELU_ERR_SOLVER,      /* a back-end failed (not a plain unknown) */
    LGELU_ERR_TIMEOUT,     /* a deadline passed where no verdict can be given */
    LGELU_ERR_NUMERIC,     /* non-finite values */
    LGELU_ERR_UNSUPPORTED  /* e.g. verifying a net that is not piecewise linear */
} lgelu_status;

typedef enum lgelu_verdict { LGELU_UNKNOWN = 0, LGELU_ROBUST = 1, LGELU_VIOLATED = 2 } lgelu_verdict;

typedef struct lgelu_net lgelu_net;       /* a network (opaque) */
typedef struct lgelu_result lgelu_result; /* the outcome of one verification (opaque) */
typedef struct lgelu_cancel lgelu_cancel; /* a cancel token (opaque) */

/* "0.4.0 (commit)" — static. */
LGELU_API const char *lgelu_version(void);
/* Short name of a status ("format error", ...). Never NULL, static. */
LGELU_API const char *lgelu_status_str(lgelu_status s);
/* The message of the last failing call on this thread ("" if none). */
LGELU_API const char *lgelu_errmsg(void);
/* "robust", "violated", "unknown" (static). */
LGELU_API const char *lgelu_verdict_name(lgelu_verdict v);

/* ---- networks ---------------------------------------------------------- */

/* Load a network from path (native or ONNX, chosen by content; .gz read
 * transparently). *out receives a new handle the caller frees. */
LGELU_API lgelu_status lgelu_net_load(const char *path, lgelu_net **out);
/* Write net to path: ONNX when the name ends in ".onnx", else the native
 * format. */
LGELU_API lgelu_status lgelu_net_save(const lgelu_net *net, const char *path);
LGELU_API void lgelu_net_free(lgelu_net *net);
/* Input and output dimensions. */
LGELU_API int lgelu_net_n_in(const lgelu_net *net);
LGELU_API int lgelu_net_n_out(const lgelu_net *net);
/* Layers (`lgelu info`): their number, and layer k's activation name
 * ("lgelu", "relu", "swish", "prelu", "identity", ...; static), output
 * width and parameter (λ for lgelu, β for swish, the slope for prelu, 1
 * for gelu, NAN for activations without one). act, n_out and param may
 * be NULL. LGELU_ERR_ARG for k out of range. */
LGELU_API int lgelu_net_n_layers(const lgelu_net *net);
LGELU_API lgelu_status lgelu_net_layer(const lgelu_net *net, int k, const char **act, int *n_out, double *param);
/* Y [n][n_out] = f(X [n][n_in]) in double precision (the `lgelu eval`
 * forward pass). */
LGELU_API lgelu_status lgelu_net_eval(const lgelu_net *net, const double *X, size_t n, double *Y);
/* ReLU substitution (`lgelu relu`): every gelu/lgelu/swish/prelu becomes
 * relu, weights bit-identical. *out is a new handle. */
LGELU_API lgelu_status lgelu_net_relu(const lgelu_net *net, lgelu_net **out);

/* ---- deviation bound ---------------------------------------------------- */

/* Certified bound delta[i] ≥ sup ‖f_relu(x') − f_ref(x')‖∞ over the L∞ ball
 * of radius eps around row i of X [n][n_in], clipped to [clip_lo, clip_hi]
 * (the bound of `lgelu check`: the deviation bound tightened with relu's
 * symbolic bounds and the difference network's bound). relu must be the
 * substitution of ref (same weights). */
LGELU_API lgelu_status lgelu_deviation(const lgelu_net *relu, const lgelu_net *ref, const double *X, size_t n,
                                       double eps, double clip_lo, double clip_hi, double *delta);

/* ---- verification ------------------------------------------------------- */

typedef struct lgelu_verify_opts {
    const char *solver;  /* "auto" (default), "glpk", "z3", "none" (bounds and attack only) */
    double timeout_s;    /* overall wall-clock limit (default 60); ≤ 0 none */
    unsigned long seed;  /* seed of the attack and branch and bound (default 1) */
    double margin;       /* robustness margin κ (default 0) */
    double clip_lo, clip_hi; /* robustness box ∩ [clip_lo, clip_hi] (default [0, 1], as the CLI) */
    int attack;          /* 1: sampling + PGD before the solvers (default 1) */
    int threads;         /* branch-and-bound threads, 0 = automatic (default 0) */
    int verbose;         /* 0 quiet (default), 1 progress on stderr, 2 solver chatter */
    lgelu_cancel *cancel; /* NULL (default) or a token: once lgelu_cancel_request is called the run
                             stops as at its deadline — the bounds, attack and branch-and-bound
                             loops at their next check; a back-end solver already started in a
                             child process runs to its own time limit — and the verdict is unknown
                             with timed_out = 1. Borrowed; it must outlive the call. */
} lgelu_verify_opts;

/* The defaults above (the CLI's). */
LGELU_API lgelu_verify_opts lgelu_verify_opts_default(void);

/* A cancel token, initially not requested; free it with lgelu_cancel_free
 * once no call uses it. lgelu_cancel_request may be called from any thread
 * (or a signal handler) while a call runs; a token stays requested. */
LGELU_API lgelu_status lgelu_cancel_new(lgelu_cancel **out);
LGELU_API void lgelu_cancel_request(lgelu_cancel *c);
LGELU_API void lgelu_cancel_free(lgelu_cancel *c);

/* Local robustness: the box [x − eps, x + eps] ∩ [clip_lo, clip_hi] around
 * x [n_in]; label must beat every other output by more than the margin.
 * label < 0: the network's own prediction at x (as `verify --input`).
 * o may be NULL (defaults). *out receives a new result; every verdict,
 * unknown included, is LGELU_OK. */
LGELU_API lgelu_status lgelu_verify_robust(const lgelu_net *net, const double *x, double eps, int label,
                                           const lgelu_verify_opts *o, lgelu_result **out);
/* The property of a VNN-LIB file (`verify --vnnlib`); margin applies,
 * clip_lo/clip_hi are ignored. */
LGELU_API lgelu_status lgelu_verify_vnnlib(const lgelu_net *net, const char *path, const lgelu_verify_opts *o,
                                           lgelu_result **out);

LGELU_API void lgelu_result_free(lgelu_result *r);
LGELU_API lgelu_verdict lgelu_result_verdict(const lgelu_result *r);
/* Why unknown ("timeout", ...; "" otherwise) and what decided ("bounds",
 * "attack", "glpk", "z3", ...). Owned by r. */
LGELU_API const char *lgelu_result_reason(const lgelu_result *r);
LGELU_API const char *lgelu_result_method(const lgelu_result *r);
/* 1 if the unknown came from the deadline. */
LGELU_API int lgelu_result_timed_out(const lgelu_result *r);
LGELU_API double lgelu_result_seconds(const lgelu_result *r);
/* The label of a robustness property (−1 for VNN-LIB). */
LGELU_API int lgelu_result_label(const lgelu_result *r);
/* Counterexample x [n_in] and its outputs y [n_out] when violated (it passed
 * the exact re-check), else NULL. *n receives the length (may be NULL). */
LGELU_API const double *lgelu_result_counterexample(const lgelu_result *r, int *n);
LGELU_API const double *lgelu_result_outputs(const lgelu_result *r, int *n);
/* Unstable ReLUs summed over the property's cases: the total, and per layer
 * ([*n_layers] owned by r). */
LGELU_API int lgelu_result_unstable_total(const lgelu_result *r);
LGELU_API const int *lgelu_result_unstable(const lgelu_result *r, int *n_layers);
/* Write the VNN-COMP result file (`verify -o`). */
LGELU_API lgelu_status lgelu_result_write(const lgelu_result *r, const char *path);

/* ---- training (for bindings) -------------------------------------------- */

/* Run the C trainer's optimiser step on one λ-GELU hardness parameter, as
 * `lgelu train` does (DESIGN.md §1): λ = 1 + softplus(s/t); for each step
 * k < n_steps the gradient ∂L/∂λ = grad_lambda[k] is applied by optim
 * ("sgd" with momentum, "adamw") at rate c·lr, with s_update "lambda" (the
 * λ-space step, the default) or "s" (the plain step on s). Writes the final
 * s and λ. Lets other trainers (lgelu.torch) check they take the same step. */
LGELU_API lgelu_status lgelu_hardness_step(const char *optim, const char *s_update, double t, double lr, double c,
                                           double momentum, double s0, const double *grad_lambda, int n_steps,
                                           double *s_out, double *lambda_out);

#ifdef __cplusplus
}
#endif

#endif
