/* main.c — one Check runner for all suites (set CK_RUN_SUITE to run one). */
#include <stdlib.h>

#include "suites.h"

int main(void)
{
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; lg_suites[i]; i++) srunner_add_suite(sr, lg_suites[i]());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
