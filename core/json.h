/* json.h — the one JSON writer and the one number format of lgelu's output.
 *
 * Documents are built with jansson (json_pack, json_object_set_new, ...)
 * and printed by lg_json_dumps, which writes every real in the shortest
 * decimal form that reads back as the same double (lg_num_shortest:
 * 0.05, not 0.050000000000000003) and a non-finite real as null. Strings
 * are escaped by jansson. CSV files use the same number format (core/csv.h).
 *
 * Ownership: lg_json_dumps returns a malloc'd string the caller frees; the
 * json_t is borrowed. Output is one line without a trailing newline:
 * `{"a": 1, "b": [2.5, null]}` (the commands' --json), or with compact set
 * `{"a":1,"b":[2.5,null]}` (JSON-lines files such as the study's results).
 */
#ifndef LG_JSON_H
#define LG_JSON_H

#include <stdio.h>

#include <jansson.h>

/* Longest output of lg_num_shortest, with the terminating NUL. */
#define LG_NUM_BUFSIZE 32

/* The shortest "%.{p}g" (p = 1..17) of v that strtod reads back as v;
 * "nan", "inf" or "-inf" for non-finite values. Returns buf. */
char *lg_num_shortest(char buf[LG_NUM_BUFSIZE], double v);

/* json_real(v), or json_null() when v is not finite (jansson refuses
 * NaN and ±inf). New reference. */
json_t *lg_json_num(double v);

/* JSON text of j (any value), or NULL when out of memory. */
char *lg_json_dumps(const json_t *j, int compact);

/* Print lg_json_dumps(j, 0) and a newline to f; decrefs j (so a freshly built
 * document can be passed directly). 0 on success, -1 on failure. */
int lg_json_print_line(FILE *f, json_t *j);

#endif
