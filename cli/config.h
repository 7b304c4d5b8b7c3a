/* config.h — `--config FILE`: a per-run file of option defaults for any
 * subcommand (docs/USAGE.md "Config files").
 *
 * The file holds `key = value` or `key: value` lines, `#` and `;` comments
 * and `[command]` sections: keys before any section apply to every command,
 * keys in `[verify]` only to `lgelu verify`. Each key is a long option
 * without its dashes (one letter: the short option, `j = 2` is `-j 2`);
 * `true`/`yes`/`on` or an empty value set a flag, `false`/`no`/`off` leave it
 * out. The entries become options placed before the command line's own, so
 * an option given on the command line replaces the file's. An option the
 * command refuses is reported with the file, line and key it came from
 * (lg_cli_config_where).
 *
 * lg_cli_config_apply owns the argument vector it returns (freed by
 * lg_cli_config_free); the strings of the original argv are borrowed.
 */
#ifndef LG_CLI_CONFIG_H
#define LG_CLI_CONFIG_H

#include <stddef.h>

/* argv[0] is the command name. Without --config: *out_argv = argv, 0.
 * With `--config FILE` or `--config=FILE`: the file's entries for this
 * command inserted after argv[0], --config removed; 0. A file that cannot
 * be read or a malformed line: a message on stderr naming file:line, 2. */
int lg_cli_config_apply(int argc, char **argv, int *out_argc, char ***out_argv);
void lg_cli_config_free(void);
/* When argument index i of the vector lg_cli_config_apply returned came from
 * the config file: " (from FILE:LINE, key KEY)" into buf; else "". Returns buf. */
const char *lg_cli_config_where(int i, char *buf, size_t n);

#endif
