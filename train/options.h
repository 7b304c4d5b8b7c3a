/* options.h — the one range check of every training option, shared by the
 * command line (`lgelu train`, `lgelu anneal`) and the study's grid files,
 * so both accept exactly the same values.
 *
 * Names are the command-line spellings (batch, lambda-target, ...); a grid
 * key with '_' for '-' (lambda_target) names the same option. Nothing is
 * owned; the returned message is a static or thread-local string.
 */
#ifndef LG_TRAIN_OPTIONS_H
#define LG_TRAIN_OPTIONS_H

/* NULL when v is a valid value of option name, else the rule it breaks
 * ("expected an integer in [1, 65536]"). An unknown name is "unknown option". */
const char *lg_train_opt_check(const char *name, double v);

#endif
