/* outcome.c — rendering who decided a verdict (outcome.h). */
#include "verify/outcome.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void lg_outcome_unknown(lg_outcome *o, lg_reason why, int timed_out, const char *fmt, ...)
{
    o->why = why;
    o->timed_out = timed_out;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->reason, sizeof o->reason, fmt, ap);
    va_end(ap);
}

void lg_outcome_decided(lg_outcome *o, lg_stage s)
{
    o->stage = s;
    o->why = LG_REASON_NONE;
    o->timed_out = 0;
    o->reason[0] = '\0';
}

const char *lg_outcome_method(const lg_outcome *o, char *buf, size_t n)
{
    static const char *const names[] = {
        [LG_STAGE_NONE] = "",           [LG_STAGE_BOUNDS] = "bounds",        [LG_STAGE_TRIVIAL] = "trivial",
        [LG_STAGE_ATTACK] = "attack",   [LG_STAGE_ALPHA] = "alpha",          [LG_STAGE_INPUT_SPLIT] = "bab-input",
        [LG_STAGE_RELU_SPLIT] = "bab-relu", [LG_STAGE_ACT_SPLIT] = "bab-act", [LG_STAGE_BACKEND] = "",
        [LG_STAGE_CLEAN_INPUT] = "clean input", [LG_STAGE_EMPTY_BOX] = "empty box", [LG_STAGE_EXTERNAL] = "external"};
    if (!n) return buf;
    buf[0] = '\0';
    if (o->stage == LG_STAGE_BACKEND) {
        if (o->confirm && o->by) snprintf(buf, n, "%.12s+%.12s", o->by->name, o->confirm->name);
        else lg_solver_label(o->by, o->theory, buf, n);
    } else if ((o->stage == LG_STAGE_INPUT_SPLIT || o->stage == LG_STAGE_RELU_SPLIT) && o->by) {
        snprintf(buf, n, "%s+%s", names[o->stage], o->by->name);
    } else if ((unsigned)o->stage < sizeof names / sizeof names[0]) {
        snprintf(buf, n, "%s", names[o->stage]);
    }
    return buf;
}
