/* z3_err.c — see z3_err.h. */
#include "encode/z3_err.h"

#include <stdio.h>

_Thread_local Z3_error_code lg_z3_err;
_Thread_local char lg_z3_errmsg[256];

void lg_z3_record_error(Z3_context c, Z3_error_code e)
{
    if (lg_z3_err != Z3_OK) return;
    lg_z3_err = e;
    const char *m = Z3_get_error_msg(c, e);
    snprintf(lg_z3_errmsg, sizeof lg_z3_errmsg, "%s", m ? m : "?");
}
