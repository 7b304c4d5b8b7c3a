/* z3_err.h — the first Z3 error raised on this thread, for every Z3 back-end
 * of encode/ (internal). A back-end resets lg_z3_err to Z3_OK, installs
 * lg_z3_record_error with Z3_set_error_handler (Z3 then never exits), and
 * checks lg_z3_err after its calls; lg_z3_errmsg holds Z3's message. */
#ifndef LG_Z3_ERR_H
#define LG_Z3_ERR_H

#include <z3.h>

extern _Thread_local Z3_error_code lg_z3_err;
extern _Thread_local char lg_z3_errmsg[256];

void lg_z3_record_error(Z3_context c, Z3_error_code e);

#endif
