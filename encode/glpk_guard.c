/* glpk_guard.c — see glpk_guard.h. */
#include "encode/glpk_guard.h"

#include <glpk.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define LG_GLPK_TAIL 512

static _Thread_local jmp_buf *lg_glpk_jmp;
static _Thread_local int lg_glpk_echo;
static _Thread_local char lg_glpk_tail[LG_GLPK_TAIL]; /* the last output, truncated at the front */
static _Thread_local char lg_glpk_msg[LG_GLPK_TAIL];

static void lg_glpk_on_error(void *info)
{
    (void)info;
    if (lg_glpk_jmp) longjmp(*lg_glpk_jmp, 1);
}

/* GLPK's terminal hook: keep the tail, echo on request; returning nonzero
 * stops GLPK from printing it to stdout itself. */
static int lg_glpk_on_text(void *info, const char *s)
{
    (void)info;
    if (lg_glpk_echo) fputs(s, stderr);
    size_t have = strlen(lg_glpk_tail), add = strlen(s);
    if (add >= LG_GLPK_TAIL) {
        s += add - (LG_GLPK_TAIL - 1);
        add = LG_GLPK_TAIL - 1;
        have = 0;
    } else if (have + add >= LG_GLPK_TAIL) {
        size_t drop = have + add - (LG_GLPK_TAIL - 1);
        memmove(lg_glpk_tail, lg_glpk_tail + drop, have - drop);
        have -= drop;
    }
    memcpy(lg_glpk_tail + have, s, add);
    lg_glpk_tail[have + add] = '\0';
    return 1;
}

/* The tail's text as one line: GLPK's message, then its "Error detected in
 * file ... at line ..." (newlines become "; "). */
static void lg_glpk_keep_message(void)
{
    size_t n = 0;
    for (const char *p = lg_glpk_tail; *p && n + 3 < LG_GLPK_TAIL; p++) {
        if (*p == '\n') {
            if (p[1] && n > 0) {
                lg_glpk_msg[n++] = ';';
                lg_glpk_msg[n++] = ' ';
            }
        } else {
            lg_glpk_msg[n++] = *p;
        }
    }
    lg_glpk_msg[n] = '\0';
}

int lg_glpk_guard_echo(int on)
{
    int was = lg_glpk_echo;
    lg_glpk_echo = on != 0;
    return was;
}

const char *lg_glpk_guard_message(void) { return lg_glpk_msg; }

int lg_glpk_guard(void (*fn)(void *arg), void *arg)
{
    if (lg_glpk_jmp) { /* an outer guard catches */
        fn(arg);
        return 0;
    }
    jmp_buf jb;
    volatile int failed = 0;
    lg_glpk_tail[0] = '\0';
    lg_glpk_msg[0] = '\0';
    if (setjmp(jb) == 0) {
        lg_glpk_jmp = &jb;
        glp_error_hook(lg_glpk_on_error, NULL);
        glp_term_hook(lg_glpk_on_text, NULL);
        int term_was = glp_term_out(GLP_ON); /* on, so that an error's message reaches the hook */
        fn(arg);
        glp_term_out(term_was);
        glp_term_hook(NULL, NULL);
        glp_error_hook(NULL, NULL);
    } else {
        /* GLPK hit a fatal error; its environment is unusable: free it all
         * (with it the hooks and the terminal setting). */
        lg_glpk_keep_message();
        glp_error_hook(NULL, NULL);
        glp_free_env();
        failed = 1;
    }
    lg_glpk_jmp = NULL;
    return failed;
}
