/* main.c — one Check runner for all suites (set CK_RUN_SUITE to run one). */
#include <stdlib.h>

#include "core/linalg.h"
#include "suites.h"

int main(void)
{
    lg_blas_set_threads(1); /* as the CLI: suites fork solver children (cli/main.c) */
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; lg_suites[i]; i++) srunner_add_suite(sr, lg_suites[i]());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
