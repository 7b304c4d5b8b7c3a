/* version.c — see version.h. lg_commit.h is generated at every build by
 * core/commit.cmake and rewritten only when the commit changes. */
#include "core/version.h"

#include "lg_commit.h"

const char *lg_version(void)
{
    return LG_VERSION_STRING;
}

const char *lg_commit(void)
{
    return LG_COMMIT_STRING;
}
