/* glpk_guard.c — see glpk_guard.h. */
#include "encode/glpk_guard.h"

#include <glpk.h>
#include <setjmp.h>
#include <stddef.h>

static _Thread_local jmp_buf *lg_glpk_jmp;

static void lg_glpk_on_error(void *info)
{
    (void)info;
    if (lg_glpk_jmp) longjmp(*lg_glpk_jmp, 1);
}

int lg_glpk_guard(void (*fn)(void *arg), void *arg)
{
    if (lg_glpk_jmp) { /* an outer guard catches */
        fn(arg);
        return 0;
    }
    jmp_buf jb;
    volatile int failed = 0;
    if (setjmp(jb) == 0) {
        lg_glpk_jmp = &jb;
        glp_error_hook(lg_glpk_on_error, NULL);
        fn(arg);
        glp_error_hook(NULL, NULL);
    } else {
        /* GLPK hit a fatal error; its environment is unusable: free it all. */
        glp_error_hook(NULL, NULL);
        glp_free_env();
        failed = 1;
    }
    lg_glpk_jmp = NULL;
    return failed;
}
