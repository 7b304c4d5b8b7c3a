/* verify_args.h — the property options shared by `lgelu verify` and
 * `lgelu encode`: a VNN-LIB file, or a robustness box around a test-set
 * image (--data/--index) or an input vector (--input), radius --eps, and
 * the margin. lg_verify_args_property fills an lg_prop the caller frees
 * with lg_prop_free. */
#ifndef LG_CLI_VERIFY_ARGS_H
#define LG_CLI_VERIFY_ARGS_H

#include "core/net.h"
#include "verify/prop.h"

typedef struct lg_verify_args {
    const char *vnnlib;   /* --vnnlib P */
    const char *data;     /* --data DIR */
    const char *input;    /* --input FILE (one input: .npy or text, cli/inputs.h) */
    long index;           /* --index I (LG_VA_UNSET unset; a negative value is refused with the data's range) */
    long label;           /* --label L for --input (−1: the network's prediction); set to the
                             label used once the robustness property is built */
    double eps;           /* --eps E (< 0 unset) */
    double margin;        /* --margin K */
    char instance[512];   /* name for reports: the vnnlib path or "index=I eps=E" */
} lg_verify_args;

#define LG_VA_UNSET (-(1L << 62))

void lg_verify_args_default(lg_verify_args *a);

/* Parse the value of --index: any integer is kept (its range is checked
 * against the test set once it is read, so --index -1 and --index 10000
 * name the same range); 0, or a usage error for `cmd` and 2. */
int lg_verify_args_index(const char *cmd, const char *val, lg_verify_args *a);

/* Check the combination of options: 0 ok, else prints a usage error for
 * `cmd` and returns 2. */
int lg_verify_args_check(const char *cmd, const lg_verify_args *a);

/* Build the property for net (loads data or the VNN-LIB file) and apply the
 * margin. LG_ERR_ARG means a bad option value (--index or --label out of
 * range, data that does not fit the network): the caller exits 2. */
lg_status lg_verify_args_property(lg_verify_args *a, const lg_net *net, lg_prop *prop);

#endif
