/* onnx_opts.c — the ONNX reader's import options and the note of what an import changed
 * (onnx.h lg_onnx_set_import_opts, lg_onnx_import_note; onnx_internal.h lg_ox_note_*).
 *
 * The options are process-wide, set once by the command line before any read. The note is
 * per thread: a read starts it empty (lg_ox_note_begin), the handlers that change the file's
 * function add to it, and a failed read leaves it empty. Nothing here is heap-allocated.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onnx/onnx.h"
#include "onnx/onnx_internal.h"

static lg_onnx_import_opts lg_ox_opts;
static _Thread_local char lg_ox_note[640];
static _Thread_local int lg_ox_note_rounded;

void lg_onnx_set_import_opts(const lg_onnx_import_opts *o)
{
    if (o) lg_ox_opts = *o;
    else memset(&lg_ox_opts, 0, sizeof lg_ox_opts);
}

const lg_onnx_import_opts *lg_onnx_get_import_opts(void) { return &lg_ox_opts; }

const char *lg_onnx_import_note(void) { return lg_ox_note; }

int lg_onnx_import_rounded(void) { return lg_ox_note_rounded; }

void lg_ox_note_begin(void)
{
    lg_ox_note[0] = '\0';
    lg_ox_note_rounded = 0;
}

void lg_ox_note_add(int rounded, const char *fmt, ...)
{
    size_t len = strlen(lg_ox_note);
    if (len + 8 >= sizeof lg_ox_note) return; /* full: the first changes are named */
    if (len) len += (size_t)snprintf(lg_ox_note + len, sizeof lg_ox_note - len, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lg_ox_note + len, sizeof lg_ox_note - len, fmt, ap);
    va_end(ap);
    lg_ox_note_rounded |= rounded;
}
