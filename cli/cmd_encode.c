/* cmd_encode.c — `lgelu encode NET ... --format smt2|lp|vnnlib -o FILE`: the
 * verification query as SMT-LIB 2 or CPLEX LP text, with bounds, or an
 * --index/--input robustness property as a VNN-LIB file. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/verify_args.h"
#include "core/idx.h"
#include "core/netfile.h"
#include "verify/tnode_planes.h"
#include "verify/verify.h"
#include "verify/vnnlib.h"

static void lg_encode_help(void)
{
    printf("usage: lgelu encode NET (--vnnlib P | [--data DIR] --index I --eps E | --input FILE [--label L] --eps E)\n"
           "                    [--margin K] [--tighten none|lp] [--case C] --format smt2|lp|vnnlib -o FILE\n\n"
           "Compute pre-activation bounds of the piecewise-linear network NET over the property's input\n"
           "box and write the whole query (network, box, counterexample region, bounds; only unstable\n"
           "ReLUs get a case split / binary) as text for an external solver: SMT-LIB 2 (cvc5, z3, ...)\n"
           "or CPLEX LP (GLPK, CBC, HiGHS, Gurobi). The query is satisfiable iff a counterexample exists.\n"
           "--format vnnlib writes an --index/--input robustness property itself as a VNN-LIB file (every\n"
           "bound the exact decimal of the clipped box's end), for --vnnlib of verify, encode and cex or\n"
           "any other verifier.\n\n"
           "property (one of):\n"
           "  --vnnlib P      a VNN-LIB property file; one case is written (see --case)\n"
           "  --index I       local robustness of test-set image I ...\n"
           "  --data DIR      ... from the IDX files in DIR (default %s)\n"
           "  --input FILE    local robustness around one input (.npy, or text with n_in numbers)\n"
           "  --label L       label for --input (default: the network's prediction)\n"
           "  --eps E         L-infinity radius (clipped to [0,1]) for --index/--input, 0 <= E <= 1\n"
           "  --margin K      counterexample: the label does not beat some output by more than K (default 0)\n\n"
           "options:\n"
           "  --tighten M     none (default) or lp: tighten unstable neurons with GLPK LPs first\n"
           "  --case C        which case of a multi-case VNN-LIB property to write (default 0)\n"
           "  --format F      smt2, lp or vnnlib (required)\n"
           "  -o, --output F  output file (required; '-' for standard output)\n"
           "  -h, --help      show this help\n",
           LG_DATA_DEFAULT_DIR);
    printf("\n%s", lg_cli_import_help);
}

/* The options of one `encode` call (borrowed from argv). */
typedef struct {
    lg_verify_args a;
    lg_tighten tighten;
    const char *format, *out;
    long case_ix;
    int to_vnnlib;
} lg_enc_opts;

/* Parse argv into o; -1 when the call may go on, else the exit code (help: 0, usage: 2). */
static int lg_encode_parse(int argc, char **argv, lg_enc_opts *o)
{
    enum { O_VNN = 256, O_DATA, O_INDEX, O_EPS, O_INPUT, O_LABEL, O_TIGHTEN, O_MARGIN, O_FORMAT, O_CASE };
    static const struct option lo[] = {
        {"vnnlib", required_argument, 0, O_VNN},      {"data", required_argument, 0, O_DATA},
        {"index", required_argument, 0, O_INDEX},     {"eps", required_argument, 0, O_EPS},
        {"input", required_argument, 0, O_INPUT},     {"label", required_argument, 0, O_LABEL},
        {"tighten", required_argument, 0, O_TIGHTEN}, {"margin", required_argument, 0, O_MARGIN},
        {"format", required_argument, 0, O_FORMAT},   {"case", required_argument, 0, O_CASE},
        {"output", required_argument, 0, 'o'},        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    lg_verify_args *a = &o->a;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", lo, NULL)) != -1) {
        switch (c) {
        case O_VNN: a->vnnlib = optarg; break;
        case O_DATA: a->data = optarg; break;
        case O_INPUT: a->input = optarg; break;
        case O_INDEX:
            if (lg_verify_args_index(a, "encode", optarg)) return 2;
            break;
        case O_LABEL:
            if (lg_opt_int("encode", "label", optarg, 0, 1L << 20, &a->label)) return 2;
            break;
        case O_EPS:
            if (lg_opt_eps("encode", optarg, &a->eps)) return 2;
            break;
        case O_MARGIN:
            if (lg_opt_double("encode", "margin", optarg, -1e6, 1e6, &a->margin)) return 2;
            break;
        case O_CASE:
            if (lg_opt_int("encode", "case", optarg, 0, 1L << 30, &o->case_ix)) return 2;
            break;
        case O_TIGHTEN:
            if (strcmp(optarg, "none") == 0) o->tighten = LG_TIGHTEN_NONE;
            else if (strcmp(optarg, "lp") == 0) o->tighten = LG_TIGHTEN_LP;
            else return lg_cli_usage("encode", "--tighten: expected none or lp, got '%s'", optarg);
            break;
        case O_FORMAT:
            if (strcmp(optarg, "smt2") && strcmp(optarg, "lp") && strcmp(optarg, "vnnlib"))
                return lg_cli_usage("encode", "--format: expected smt2, lp or vnnlib, got '%s'", optarg);
            o->format = optarg;
            break;
        case 'o': o->out = optarg; break;
        case 'h': lg_encode_help(); return 0;
        default: return lg_cli_usage("encode", "unknown option");
        }
    }
    if (optind != argc - 1) return lg_cli_usage("encode", "expected exactly one network file");
    if (!o->format) return lg_cli_usage("encode", "--format smt2|lp|vnnlib is required");
    if (!o->out) return lg_cli_usage("encode", "-o FILE is required");
    if (lg_verify_args_check("encode", a)) return 2;
    o->to_vnnlib = strcmp(o->format, "vnnlib") == 0;
    if (o->to_vnnlib && a->vnnlib)
        return lg_cli_usage("encode", "--format vnnlib writes an --index/--input property; --vnnlib P already is one");
    if (lg_cli_check_output(o->out) != LG_OK) return lg_cli_usage("encode", "-o/--output: %s", lg_errmsg());
    return -1;
}

/* The output file out ("-": standard output) opened for writing. */
static lg_status lg_encode_open(const char *out, FILE **f)
{
    *f = strcmp(out, "-") == 0 ? stdout : fopen(out, "w");
    if (!*f) return lg_fail(LG_ERR_IO, "%s: cannot open for writing: %s", out, strerror(errno));
    return LG_OK;
}

/* Close (or flush, for standard output) the written file; *f is NULL afterwards. */
static lg_status lg_encode_close(FILE **f, const char *out)
{
    FILE *g = *f;
    *f = NULL;
    if (g != stdout) {
        if (fclose(g) != 0) return lg_fail(LG_ERR_IO, "%s: write error: %s", out, strerror(errno));
    } else if (fflush(stdout) != 0) {
        return lg_fail(LG_ERR_IO, "standard output: write error");
    }
    return LG_OK;
}

/* The VNN-LIB file's own property as SMT-LIB text (exact rationals), malloc'd into *text. */
static lg_status lg_encode_exact_smt(const char *vnnlib, char **text)
{
    size_t sz = 0;
    FILE *mf = open_memstream(text, &sz);
    if (!mf) return lg_fail(LG_ERR_NOMEM, "out of memory");
    lg_status st = lg_vnnlib_write_smt(vnnlib, mf);
    if (fclose(mf) != 0 && st == LG_OK) st = lg_fail(LG_ERR_NOMEM, "out of memory");
    return st;
}

/* One line naming what was written: on stdout, or on stderr when stdout holds the file. */
static void lg_encode_report(const lg_enc_opts *o, const lg_net *net, const lg_bounds *b)
{
    char what[128];
    if (o->to_vnnlib) snprintf(what, sizeof what, "VNN-LIB robustness property, label %ld", o->a.label);
    else {
        int u = 0;
        for (int k = 0; k < net->n_layers; k++) u += lg_bounds_unstable(b, net, k);
        snprintf(what, sizeof what, "%s, case %ld, %d unstable ReLUs", o->format, o->case_ix, u);
    }
    if (strcmp(o->out, "-") != 0) printf("wrote %s (%s)\n", o->out, what);
    else if (lg_cli_progress_enabled()) fprintf(stderr, "lgelu encode: wrote the standard output (%s)\n", what);
}

int lg_cmd_encode(int argc, char **argv)
{
    lg_enc_opts o = {.tighten = LG_TIGHTEN_NONE};
    lg_verify_args_default(&o.a);
    int prc = lg_encode_parse(argc, argv, &o);
    if (prc >= 0) return prc;
    const lg_verify_args *a = &o.a;
    const lg_solver_ops *ops = o.to_vnnlib ? NULL : lg_solver_find(o.format);
    if (!o.to_vnnlib && (!ops || !ops->write)) {
        fprintf(stderr, "lgelu encode: no writer for format '%s' in this build\n", o.format);
        return 1;
    }
    lg_net net;
    lg_prop prop = {0};
    lg_bounds b = {0};
    lg_term *kept = NULL;
    char *exact_text = NULL;
    lg_problem p;
    lg_trelax trelax = {0};
    FILE *f = NULL;
    int rc = 1;
    const long case_ix = o.case_ix;
    lg_status st = lg_cli_load_lowered(&net, argv[optind], 0);
    if (st != LG_OK) return lg_cli_fail("encode", st);
    /* conv layers are encoded row by row (core/linop.h): only the kernel's nonzeros */
    int tnet = lg_net_first_tnode(&net) >= 0; /* Transformer nodes: written relaxed (tnode_planes.h) */
    if (!o.to_vnnlib && (st = tnet ? lg_tnode_relax_check(&net) : lg_bounds_check_net(&net)) != LG_OK) {
        if (st != LG_ERR_UNSUPPORTED) goto fail;
        rc = lg_cli_usage("encode", "%s: %s", argv[optind], lg_errmsg()); /* a network of the wrong kind */
        goto done;
    }
    if ((st = lg_verify_args_property(&o.a, &net, &prop)) != LG_OK) {
        if (st == LG_ERR_ARG) { /* a bad --index/--label value */
            rc = lg_cli_usage("encode", "%s", lg_errmsg());
            goto done;
        }
        goto fail;
    }
    if (prop.n_cases == 0) {
        rc = lg_cli_usage("encode", "%s: every input box is empty: no point can violate the property (lgelu verify "
                          "answers robust); there is no query to write", a->vnnlib ? a->vnnlib : "the property");
        goto done;
    }
    if (o.to_vnnlib) { /* the property itself, for --vnnlib of any verifier */
        char note[700];
        snprintf(note, sizeof note,
                 "local robustness: %s, label %ld, margin %.17g\nwritten by lgelu encode --format vnnlib: every "
                 "bound is exact (the L-infinity ball clipped to [0, 1])",
                 a->instance, a->label, a->margin);
        if ((st = lg_encode_open(o.out, &f)) != LG_OK) goto fail;
        if ((st = lg_vnnlib_write_robustness(f, prop.center, net.n_in, a->eps, 0.0, 1.0, (int)a->label,
                                             lg_net_n_out(&net), a->margin, note)) != LG_OK)
            goto fail;
        goto close;
    }
    if (case_ix >= prop.n_cases) {
        rc = lg_cli_usage("encode", "--case: expected an integer in [0, %d] (the property has %d case%s), got %ld",
                          prop.n_cases - 1, prop.n_cases, prop.n_cases == 1 ? "" : "s", case_ix);
        goto done;
    }
    if (prop.n_cases > 1)
        fprintf(stderr, "lgelu encode: the property has %d cases; writing case %ld only (choose with --case)\n",
                prop.n_cases, case_ix);
    if ((st = lg_verify_prepare(&net, &prop, (int)case_ix, o.tighten, NULL, &b, &kept, &p, NULL)) != LG_OK)
        goto fail;
    if (p.n_terms < prop.cases[case_ix].n_terms && lg_cli_progress_enabled())
        fprintf(stderr, "lgelu encode: bounds refute %d of %d terms; the file still holds all of them\n",
                prop.cases[case_ix].n_terms - p.n_terms, prop.cases[case_ix].n_terms);
    /* the file is the complete query: every term, the bounds as extra facts */
    p.n_terms = prop.cases[case_ix].n_terms;
    p.terms = prop.cases[case_ix].terms;
    p.rounded = lg_prop_rounded(&prop, (int)case_ix);
    /* the exact property for SMT-LIB: the file's own numbers as rationals (one case, no margin) */
    if (a->vnnlib && prop.n_cases == 1 && a->margin == 0 && strcmp(o.format, "smt2") == 0) {
        if ((st = lg_encode_exact_smt(a->vnnlib, &exact_text)) != LG_OK) goto fail;
        p.property_smt = exact_text;
    }
    if (tnet) {
        if (!lg_bounds_finite(&b)) {
            rc = lg_cli_usage("encode", "%s: the bounds overflow (a bound is infinite): there is no relaxation to "
                              "write", argv[optind]);
            goto done;
        }
        if ((st = lg_tnode_relax_build(&net, &b, &trelax)) != LG_OK) goto fail;
        p.trelax = &trelax;
    }
    if ((st = lg_encode_open(o.out, &f)) != LG_OK) goto fail;
    if ((st = ops->write(&p, f)) != LG_OK) goto fail;
close:
    if ((st = lg_encode_close(&f, o.out)) != LG_OK) goto fail;
    lg_encode_report(&o, &net, &b);
    rc = 0;
fail:
    if (rc) rc = lg_cli_fail("encode", st);
done:
    if (f && f != stdout) fclose(f);
    free(kept);
    free(exact_text);
    lg_trelax_free(&trelax);
    lg_bounds_free(&b);
    lg_prop_free(&prop);
    lg_verify_args_free(&o.a);
    lg_net_free(&net);
    return rc;
}
