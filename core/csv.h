/* csv.h — the one CSV writer: one row built in memory, fields quoted as
 * RFC 4180 asks (a field holding a comma, a quote, CR or LF is enclosed in
 * double quotes, its quotes doubled), numbers in the shortest round-trip
 * form of core/json.h (non-finite: nan, inf, -inf).
 *
 * Usage: lg_csv_row r = {0}; lg_csv_str(&r, name); lg_csv_num(&r, x);
 * then write r.s (one line, '\n'-terminated) with fputs or
 * lg_line_log_printf(log, "%s", r.s); lg_csv_row_free(&r). The row owns
 * r.s; lg_csv_row_clear empties it for the next row. A failed allocation
 * sets r.oom and leaves r.s NULL after lg_csv_end.
 */
#ifndef LG_CSV_H
#define LG_CSV_H

#include <stddef.h>
#include <stdio.h>

typedef struct lg_csv_row {
    char *s;
    size_t n, cap;
    int fields, oom;
} lg_csv_row;

void lg_csv_str(lg_csv_row *r, const char *s);
void lg_csv_num(lg_csv_row *r, double v);
void lg_csv_int(lg_csv_row *r, long long v);
/* Append the '\n' ending the row; returns r->s (NULL when out of memory). */
const char *lg_csv_end(lg_csv_row *r);
/* Write the header or row of n string fields to f ending with '\n'; 0 or -1. */
int lg_csv_write_strs(FILE *f, const char *const *fields, size_t n);
void lg_csv_row_clear(lg_csv_row *r);
void lg_csv_row_free(lg_csv_row *r);

#endif
