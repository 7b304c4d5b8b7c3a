/* version.h — lgelu's version and the source commit it was built from.
 * Both strings are static (owned by the library); the commit is read from
 * git at build time ("unknown" outside a git checkout, "+dirty" appended
 * when the tree had uncommitted changes). Results rows and reports carry
 * both (DESIGN §2). */
#ifndef LG_VERSION_H
#define LG_VERSION_H

const char *lg_version(void);
const char *lg_commit(void);

#endif
