/* fuzz_main.c — the libFuzzer entry point of every harness: fuzz/CMakeLists.txt
 * compiles it once per parser with LG_FUZZ_FN set to that parser's
 * lg_fuzz_<parser> function (fuzz_input.h). */
#include <stddef.h>
#include <stdint.h>

#include "fuzz/fuzz_input.h"

#ifndef LG_FUZZ_FN
#error "LG_FUZZ_FN must name an lg_fuzz_<parser> function"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)LG_FUZZ_FN(data, size);
    return 0;
}
