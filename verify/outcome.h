/* outcome.h — who decided a verdict, at which stage, and why it stayed
 * unknown: the one record every stage of verify/ fills (the back-end
 * decision, branch and bound, the case driver, the report).
 *
 * A verdict is decided by a stage (lg_stage); a back-end stage also names
 * the solver table's row that decided (encode/problem.h) and the theory
 * that ran; a splitting stage names the last row that closed one of its
 * nodes. An unknown carries a reason code and its message. The text the
 * CLI, the study and the library print as `method` is rendered from these
 * fields by lg_outcome_method, and nothing parses it back.
 * Rows are borrowed from the table (static); the record owns no memory.
 */
#ifndef LG_OUTCOME_H
#define LG_OUTCOME_H

#include <stddef.h>

#include "encode/problem.h"

typedef enum lg_stage {
    LG_STAGE_NONE = 0,     /* nothing decided ("") */
    LG_STAGE_BOUNDS,       /* the symbolic (or LP-tightened) bounds refuted every term: "bounds" */
    LG_STAGE_TRIVIAL,      /* a term every output satisfies: "trivial" */
    LG_STAGE_ATTACK,       /* sampling + PGD found a counterexample: "attack" */
    LG_STAGE_ALPHA,        /* α-CROWN through a smooth net's tangent lines: "alpha" */
    LG_STAGE_INPUT_SPLIT,  /* input-box branch and bound: "bab-input" (+ "+row" when a back-end closed nodes) */
    LG_STAGE_RELU_SPLIT,   /* ReLU branch and bound: "bab-relu" (+ "+row") */
    LG_STAGE_ACT_SPLIT,    /* smooth-activation branch and bound: "bab-act" */
    LG_STAGE_BACKEND,      /* a complete back-end on the whole case: its label (lg_solver_label) */
    LG_STAGE_CLEAN_INPUT,  /* the unperturbed input is a counterexample: "clean input" */
    LG_STAGE_EMPTY_BOX,    /* the property has no case: "empty box" */
    LG_STAGE_EXTERNAL      /* another verifier's answer re-checked (`lgelu cex`): "external" */
} lg_stage;

typedef enum lg_reason {
    LG_REASON_NONE = 0,
    LG_REASON_TIMEOUT,      /* the deadline */
    LG_REASON_BACKEND,      /* a back-end's own unknown (the message is its reason) */
    LG_REASON_NO_BACKEND,   /* no back-end to ask */
    LG_REASON_UNCONFIRMED,  /* a back-end's UNSAT its confirming row did not confirm */
    LG_REASON_WITNESS,      /* a candidate that failed the re-check */
    LG_REASON_OVERFLOW,     /* a pre-activation bound is infinite */
    LG_REASON_LIMIT,        /* branch and bound's node, depth or width limit */
    LG_REASON_MEMORY,       /* the run's memory cap */
    LG_REASON_UNDECIDED,    /* every stage of the route ran without a decision */
    LG_REASON_TRANSFER,     /* the ReLU net's counterexample does not fool the reference net */
    LG_REASON_EXTERNAL,     /* another verifier's answer that could not be re-checked */
    LG_REASON_TOLERANCE     /* no exact witness, but one within the opt-in witness tolerance (--witness-tol): the
                               report's own kind "violated-within-tolerance" (lg_verify_kind), never `violated` */
} lg_reason;

typedef struct lg_outcome {
    lg_stage stage;              /* what decided, or (unknown) the last stage tried */
    const lg_solver_ops *by;     /* BACKEND: the row called; splits: the last row that closed a node; else NULL */
    const lg_solver_ops *confirm; /* BACKEND: the row that confirmed by's UNSAT (LG_UNSAT_CONFIRM), else NULL */
    char theory[8];              /* BACKEND: the theory that ran ("exact", "lp") or "" */
    lg_reason why;               /* unknown: the reason code */
    int timed_out;               /* the unknown came from the deadline */
    char reason[256];            /* its message ("timeout", a back-end's reason, …); "" when decided */
} lg_outcome;

/* Mark o unknown with code why and the message (printf format). */
void lg_outcome_unknown(lg_outcome *o, lg_reason why, int timed_out, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Decided at stage s: clears the reason. */
void lg_outcome_decided(lg_outcome *o, lg_stage s);
/* The method text of o ("bounds", "bab-relu+glpk", "z3-lp", "glpk+z3", "")
 * into buf (n bytes); returns buf. */
const char *lg_outcome_method(const lg_outcome *o, char *buf, size_t n);

#endif
