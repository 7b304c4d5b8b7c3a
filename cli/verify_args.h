/* verify_args.h — the property options shared by `lgelu verify` and
 * `lgelu encode`: a VNN-LIB file, or a robustness box around a test-set
 * image (--data/--index) or an input vector (--input), radius --eps, and
 * the margin. lg_verify_args_property fills an lg_prop the caller frees
 * with lg_prop_free. */
#ifndef LG_CLI_VERIFY_ARGS_H
#define LG_CLI_VERIFY_ARGS_H

#include "core/idx.h"
#include "core/net.h"
#include "verify/prop.h"

typedef struct lg_verify_args {
    const char *vnnlib;   /* --vnnlib P */
    const char *data;     /* --data DIR */
    const char *input;    /* --input FILE (one input: .npy or text, cli/inputs.h) */
    long index;           /* --index I (LG_VA_UNSET unset; a negative value is refused with the data's range); in a batch, the instance being built */
    long *indices;        /* --index LIST (lg_verify_args_index): every index in the order given, owned */
    int n_indices;
    long label;           /* --label L for --input (−1: the network's prediction); set to the
                             label used once the robustness property is built */
    double eps;           /* --eps E (< 0 unset) */
    double margin;        /* --margin K */
    int for_ref;          /* --ref: the property is decided for another network than net, so no
                             constraint may lean on net's output bounds (verify/vnnlib.h) */
    char instance[512];   /* name for reports: the vnnlib path or "index=I eps=E" */
    lg_dataset ds;        /* the --data test split, loaded by the first --index property and kept */
    double *xd;           /* [ds.n][n_in] its points in double (cli/inputs.h lg_cli_data_rows), owned */
    int ds_loaded;
} lg_verify_args;

#define LG_VA_UNSET (-(1L << 62))

void lg_verify_args_default(lg_verify_args *a);
/* Release indices and the kept data set. */
void lg_verify_args_free(lg_verify_args *a);

/* Parse --index: an integer, a range A-B (A ≤ B) or a comma list of both
 * ("0-9,15,20-22"), at most LG_VERIFY_MAX_INDICES in all; one negative integer
 * is kept, so that its range check names the data set's range. Sets indices,
 * n_indices and index (the first). 0, or prints a usage error for `cmd` and
 * returns 2. */
#define LG_VERIFY_MAX_INDICES (1 << 20)
int lg_verify_args_index(lg_verify_args *a, const char *cmd, const char *spec);

/* Check the combination of options: 0 ok, else prints a usage error for
 * `cmd` and returns 2. */
int lg_verify_args_check(const char *cmd, const lg_verify_args *a);

/* Build the property for net (loads data or the VNN-LIB file) and apply the
 * margin. LG_ERR_ARG means a bad option value (--index or --label out of
 * range, data that does not fit the network): the caller exits 2. */
lg_status lg_verify_args_property(lg_verify_args *a, const lg_net *net, lg_prop *prop);

#endif
