/* cmd_check.c — `lgelu check RELU_NET --ref NET (--data D | --inputs FILE)
 * --max-deviation D`: a CI gate. Passes (exit 0) when the certified bound
 * on ‖f_ReLU(x) − f_ref(x)‖∞ over every input's ε-ball is ≤ D (and, with
 * --no-class-change, no input changes its predicted class); fails (exit 1)
 * naming the worst input, and 1 as well on a failure while running (a
 * file that cannot be read); 2 on bad usage or a file that does not fit
 * (docs/USAGE.md "Exit status"). The per-input bound is the tightest the
 * project has (lg_transfer_box_delta, as `lgelu bound --symbolic`):
 * anneal/deviation.h with the ReLU net's symbolic (CROWN) pre-activation
 * bounds on the ball and the difference network's bound (verify/devnet.h),
 * never above the plain interval bound. The difference network costs most
 * of the time, so an input whose propagated bound alone is already within
 * the threshold keeps that bound unless --tightest asks for the tightest. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/deviation.h"
#include "cli/cmd.h"
#include "core/ball.h"
#include "core/clock.h"
#include "core/idx.h"
#include "core/json.h"
#include "cli/inputs.h"
#include "core/netfile.h"
#include "core/npy.h"
#include "verify/bounds.h"
#include "verify/transfer.h"

static void lg_check_help(void)
{
    printf("usage: lgelu check RELU_NET --ref NET [--data D | --inputs FILE] --max-deviation D\n"
           "                  [--eps E] [--n N] [--no-class-change] [--tightest] [--json] [--progress]\n\n"
           "CI gate for a ReLU-ized network. RELU_NET is the substitution ('lgelu relu') of NET, the\n"
           "lambda-GELU, GELU, Swish-beta or PReLU network before substitution (native or ONNX; same\n"
           "shapes and weights, relu exactly where NET has gelu/lgelu/swish/prelu, else refused). For\n"
           "every input x the check computes a certified upper bound on max |f_ReLU(x') - f_ref(x')|_inf\n"
           "over all x' in the L-inf ball of radius E around x, clipped to the input domain [0,1]: the\n"
           "deviation bound of anneal/deviation.h tightened with the ReLU net's symbolic (CROWN)\n"
           "pre-activation bounds on the ball, and per output the smaller of that and the CROWN bound of\n"
           "the two nets' difference network (verify/devnet.h), which also tightens the former (the\n"
           "bound of 'lgelu bound --symbolic'). The check passes\n"
           "when every bound is <= D. The difference network costs most of the time, so it runs only for\n"
           "the inputs whose propagated bound alone exceeds D (--tightest: for every input). Both nets are also run in double precision on each x to report the\n"
           "deviation actually observed and whether the predicted class (argmax) changes.\n\n"
           "options:\n"
           "  --ref NET            the reference network before substitution (required)\n"
           "  --data D             labelled data: a directory of Fashion-MNIST IDX files (its test split)\n"
           "                       or X.npy,y.npy (X of shape (n, n_in); see 'lgelu eval --help');\n"
           "                       default " LG_DATA_DEFAULT_DIR "\n"
           "  --inputs FILE        the inputs alone: a NumPy .npy array of shape (n, n_in) (or (n_in,): one input), float32 or\n"
           "                       float64 (or integer), C order; or text, one input per line, n_in\n"
           "                       numbers separated by spaces, tabs or commas ('#' comments; '-' = stdin)\n"
           "                       At most one of --data and --inputs. Every value must lie in [0,1].\n"
           "  --max-deviation D    the threshold on the certified bound, D >= 0 (required)\n"
           "  --eps E              radius of the L-inf ball around each input, 0 <= E <= 1 (default\n"
           "                       0.01; 0 checks the inputs themselves)\n"
           "  --n N                check only the first N inputs (default: all)\n"
           "  --no-class-change    also fail if the two nets predict different classes on any input\n"
           "  --tightest           the tightest bound for every input (the difference network on each), not\n"
           "                       just one within D: slower; the reported max and median, and the classes\n"
           "                       provably kept, can only get better\n"
           "  --json               print one JSON object (keys: pass, n, eps, max_deviation,\n"
           "                       no_class_change, bound_max, bound_median, observed_max, n_over,\n"
           "                       class_changes, certified_same_class, n_difference_network, worst, first_class_change,\n"
           "                       relu_net, ref) instead of text; worst and first_class_change are\n"
           "                       {index, bound, observed, class_ref, class_relu} or null\n"
           "  --progress           progress lines on stderr even when it is not a terminal (logs)\n"
           "  -h, --help           show this help\n\n"
           "Progress goes to stderr when it is a terminal. Cost: about 0.1-0.5 s per input for a\n"
           "784-256-256-10 network (mostly the difference network's CROWN run).\n\n"
           "exit status: 0 the check passed; 1 it failed (the worst input is named: its index, its\n"
           "certified bound and its observed deviation) or a file could not be read; 2 bad usage, a\n"
           "bad value or a file that does not fit (a network of the wrong kind, inputs of the wrong\n"
           "size).\n");
}

/* One input's outcome. */
typedef struct lg_check_row {
    double bound, observed;
    int class_ref, class_relu;
} lg_check_row;

static int lg_check_argmax(const double *y, int n)
{
    int b = 0;
    for (int j = 1; j < n; j++)
        if (y[j] > y[b]) b = j;
    return b;
}

/* Bound, observed deviation and classes for every row of X ([n][n_in]). */
/* enough ≥ 0: an input whose propagated bound is ≤ enough keeps it (the
 * difference network runs for the others; *n_devnet counts them); enough
 * < 0: the tightest bound for every input. */
static lg_status lg_check_rows(const lg_net *rn, const lg_net *ref, const double *X, size_t n, double eps,
                               double enough, lg_check_row *rows, size_t *certified_same, size_t *n_devnet)
{
    size_t dim = (size_t)rn->n_in;
    int no = lg_net_n_out(rn);
    lg_dev dev = {0};
    lg_devnet v = {0};
    lg_bounds b = {0};
    double *lo = malloc(2 * dim * sizeof *lo), *hi = lo ? lo + dim : NULL; /* [dim] each */
    double *y = malloc(2 * (size_t)no * sizeof *y), *yr = y ? y + no : NULL; /* [no] each */
    double *scratch = malloc(2 * (size_t)lg_net_max_width(ref) * sizeof *scratch);
    double *C = malloc(((size_t)no * (size_t)no + 2 * (size_t)no) * sizeof *C); /* [no−1][no] rows e_c − e_j */
    double *dz = C ? C + (size_t)no * (size_t)no : NULL, *lb = dz ? dz + no : NULL; /* [no] each */
    lg_cli_meter meter = {lg_now(), 0};
    lg_status st;
    if (!lo || !y || !scratch || !C) {
        st = lg_fail(LG_ERR_NOMEM, "cannot allocate buffers");
        goto fail;
    }
    if ((st = lg_dev_init(&dev, rn, ref)) != LG_OK) goto fail;
    if ((st = lg_devnet_init(&v, rn, ref)) != LG_OK) goto fail;
    if ((st = lg_bounds_init(&b, rn)) != LG_OK) goto fail;
    *certified_same = *n_devnet = 0;
    for (size_t r = 0; r < n; r++) {
        const double *x = X + r * dim;
        lg_ball_boxes(x, dim, eps, 0.0, 1.0, lo, hi, NULL, NULL); /* outward (DESIGN.md §3) */
        lg_check_row *o = &rows[r];
        o->bound = INFINITY;
        if (enough >= 0 && (st = lg_transfer_box_delta(&dev, NULL, rn, &b, lo, hi, &o->bound)) != LG_OK) goto fail;
        if (!(o->bound <= enough)) {
            if ((st = lg_transfer_box_delta(&dev, &v, rn, &b, lo, hi, &o->bound)) != LG_OK) goto fail;
            ++*n_devnet;
        }
        lg_net_forward(ref, x, y, scratch);
        lg_net_forward(rn, x, yr, scratch);
        o->observed = 0.0;
        for (int j = 0; j < no; j++) {
            double a = fabs(yr[j] - y[j]);
            if (a > o->observed || isnan(a)) o->observed = a;
        }
        if (!(o->observed <= o->bound)) {
            st = lg_fail(LG_ERR_NUMERIC,
                         "internal error: input %zu: observed deviation %.17g exceeds the certified bound %.17g", r,
                         o->observed, o->bound);
            goto fail;
        }
        o->class_ref = lg_check_argmax(y, no);
        o->class_relu = lg_check_argmax(yr, no);
        double second = -HUGE_VAL;
        for (int j = 0; j < no; j++)
            if (j != o->class_ref && y[j] > second) second = y[j];
        /* class kept on the whole ball, proved: a sound lower bound lb_j of the ReLU net's margin
         * y_c − y_j over the ball (b holds its symbolic bounds there) with lb_j > 2·bound gives
         * ref's margin ≥ lb_j − 2·bound > 0 at every point; the centre's margin is only the filter */
        if (no > 1 && y[o->class_ref] - second > 2.0 * o->bound) {
            for (int j = 0, k = 0; j < no; j++) {
                if (j == o->class_ref) continue;
                for (int i = 0; i < no; i++) C[(size_t)k * (size_t)no + (size_t)i] = 0.0;
                C[(size_t)k * (size_t)no + (size_t)o->class_ref] = 1.0;
                C[(size_t)k * (size_t)no + (size_t)j] = -1.0;
                dz[k++] = 0.0;
            }
            if ((st = lg_bounds_objective_lower(&b, rn, no - 1, C, dz, lb)) != LG_OK) goto fail;
            int kept = 1;
            for (int k = 0; k < no - 1; k++) kept &= lb[k] > 2.0 * o->bound;
            *certified_same += kept;
        }
        if (r % 16 == 15 || r + 1 == n) lg_cli_progress(&meter, "check", "inputs", r + 1, n);
    }
fail:
    lg_bounds_free(&b);
    lg_devnet_free(&v);
    lg_dev_free(&dev);
    free(lo);
    free(y);
    free(scratch);
    free(C);
    return st;
}

static int lg_check_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static json_t *lg_check_row_json(const lg_check_row *rows, long i)
{
    if (i < 0) return json_null();
    const lg_check_row *o = &rows[i];
    return json_pack("{s:I, s:o, s:o, s:i, s:i}", "index", (json_int_t)i, "bound", lg_json_num(o->bound), "observed",
                     lg_json_num(o->observed),
                     "class_ref", o->class_ref, "class_relu", o->class_relu);
}

/* Load the inputs: --inputs FILE or the --data spec (test split). */
static lg_status lg_check_load(const char *inputs, const char *data, int n_in, double **X, size_t *n)
{
    if (inputs) return lg_cli_inputs_read(inputs, n_in, X, n);
    lg_dataset ds;
    lg_status st = lg_cli_data_rows(&ds, X, data, "test", n_in, "the networks");
    if (st != LG_OK) return st;
    *n = ds.n;
    lg_dataset_free(&ds);
    return LG_OK;
}

int lg_cmd_check(int argc, char **argv)
{
    enum { O_REF = 256, O_DATA, O_INPUTS, O_EPS, O_MAXDEV, O_NOCC, O_TIGHT, O_JSON, O_N, O_PROGRESS };
    static const struct option lo[] = {{"ref", required_argument, 0, O_REF},
                                       {"data", required_argument, 0, O_DATA},
                                       {"inputs", required_argument, 0, O_INPUTS},
                                       {"eps", required_argument, 0, O_EPS},
                                       {"max-deviation", required_argument, 0, O_MAXDEV},
                                       {"no-class-change", no_argument, 0, O_NOCC},
                                       {"tightest", no_argument, 0, O_TIGHT},
                                       {"json", no_argument, 0, O_JSON},
                                       {"n", required_argument, 0, O_N},
                                       {"progress", no_argument, 0, O_PROGRESS},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    const char *ref_path = NULL, *data = NULL, *inputs = NULL;
    double eps = 0.01, maxdev = -1.0;
    long nmax = -1;
    int nocc = 0, tightest = 0, json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case O_REF: ref_path = optarg; break;
        case O_DATA: data = optarg; break;
        case O_INPUTS: inputs = optarg; break;
        case O_EPS:
            if (lg_opt_eps("check", optarg, &eps)) return 2;
            break;
        case O_MAXDEV:
            if (lg_opt_double("check", "max-deviation", optarg, 0.0, 1e300, &maxdev)) return 2;
            break;
        case O_N:
            if (lg_opt_int("check", "n", optarg, 1, 1000000000L, &nmax)) return 2;
            break;
        case O_NOCC: nocc = 1; break;
        case O_TIGHT: tightest = 1; break;
        case O_JSON: json = 1; break;
        case O_PROGRESS: lg_cli_progress_force(); break;
        case 'h': lg_check_help(); return 0;
        default: return lg_cli_usage("check", "unknown option");
        }
    }
    if (optind != argc - 1) return lg_cli_usage("check", "expected exactly one network file (the ReLU net)");
    if (!ref_path) return lg_cli_usage("check", "missing --ref NET (the network before substitution)");
    if (data && inputs) return lg_cli_usage("check", "give at most one of --data D and --inputs FILE");
    if (!inputs && !data) data = LG_DATA_DEFAULT_DIR;
    if (maxdev < 0) return lg_cli_usage("check", "missing --max-deviation D");

    lg_net rn = {0}, ref = {0};
    double *X = NULL, *sorted = NULL;
    lg_check_row *rows = NULL;
    size_t n = 0, certified_same = 0, n_devnet = 0;
    int rc = 1;
    lg_status st = LG_OK;
    if ((st = lg_cli_load_lowered(&rn, argv[optind], 1)) != LG_OK) goto fail;
    if ((st = lg_cli_load_lowered(&ref, ref_path, 1)) != LG_OK) goto fail;
    if ((st = lg_dev_check_pair(&rn, &ref)) != LG_OK) goto fail;
    if ((st = lg_check_load(inputs, data, rn.n_in, &X, &n)) != LG_OK) goto fail;
    if (nmax > 0 && (size_t)nmax < n) n = (size_t)nmax;
    if (n == 0) {
        st = lg_fail(LG_ERR_ARG, "%s: no inputs", inputs ? inputs : data);
        goto fail;
    }
    for (size_t i = 0; i < n * (size_t)rn.n_in; i++)
        if (!(X[i] >= 0.0 && X[i] <= 1.0)) {
            st = lg_fail(LG_ERR_ARG, "%s: input %zu, feature %zu is %g; inputs must lie in the domain [0,1]",
                         inputs ? inputs : data, i / (size_t)rn.n_in, i % (size_t)rn.n_in, X[i]);
            goto fail;
        }
    rows = malloc(n * sizeof *rows);
    sorted = malloc(n * sizeof *sorted);
    if (!rows || !sorted) {
        st = lg_fail(LG_ERR_NOMEM, "cannot allocate results for %zu inputs", n);
        goto fail;
    }
    if ((st = lg_check_rows(&rn, &ref, X, n, eps, tightest ? -1.0 : maxdev, rows, &certified_same, &n_devnet)) != LG_OK)
        goto fail; /* never a pass */
    long worst = 0, first_cc = -1;
    size_t n_over = 0, class_changes = 0;
    double obs_max = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].bound > rows[worst].bound) worst = (long)i;
        n_over += rows[i].bound > maxdev;
        if (rows[i].observed > obs_max) obs_max = rows[i].observed;
        if (rows[i].class_ref != rows[i].class_relu) {
            class_changes++;
            if (first_cc < 0) first_cc = (long)i;
        }
        sorted[i] = rows[i].bound;
    }
    qsort(sorted, n, sizeof *sorted, lg_check_cmp);
    double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    int pass = n_over == 0 && !(nocc && class_changes > 0);
    if (json) {
        json_t *o = json_pack("{s:b, s:I, s:o, s:o, s:b, s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:o, s:o, s:s, s:s}", "pass",
                              pass, "n", (json_int_t)n, "eps", lg_json_num(eps), "max_deviation", lg_json_num(maxdev),
                              "no_class_change", nocc, "bound_max", lg_json_num(rows[worst].bound), "bound_median",
                              lg_json_num(median), "observed_max", lg_json_num(obs_max),
                              "n_over", (json_int_t)n_over, "class_changes", (json_int_t)class_changes,
                              "certified_same_class", (json_int_t)certified_same, "n_difference_network",
                              (json_int_t)n_devnet, "worst",
                              lg_check_row_json(rows, worst), "first_class_change", lg_check_row_json(rows, first_cc),
                              "relu_net", argv[optind], "ref", ref_path);
        char *s = o ? lg_json_dumps(o, 0) : NULL;
        json_decref(o);
        if (!s) {
            st = lg_fail(LG_ERR_NOMEM, "cannot format the JSON result");
            goto fail;
        }
        printf("%s\n", s);
        free(s);
    } else {
        printf("%s: certified |f_ReLU - f_ref|_inf on eps = %g balls of %zu inputs: max %.6g, median %.6g "
               "(threshold %g)\n",
               pass ? "PASS" : "FAIL", eps, n, rows[worst].bound, median, maxdev);
        printf("  inputs over the threshold: %zu of %zu\n", n_over, n);
        printf("  worst input: #%ld, certified bound %.6g, observed deviation %.6g, class %d (ref) / %d (relu)\n",
               worst, rows[worst].bound, rows[worst].observed, rows[worst].class_ref, rows[worst].class_relu);
        printf("  observed max deviation: %.6g; class changes: %zu of %zu%s\n", obs_max, class_changes, n,
               nocc ? " (--no-class-change)" : "");
        if (first_cc >= 0)
            printf("  first class change: input #%ld, class %d (ref) -> %d (relu), certified bound %.6g, observed %.6g\n",
                   first_cc, rows[first_cc].class_ref, rows[first_cc].class_relu, rows[first_cc].bound,
                   rows[first_cc].observed);
        printf("  class provably kept on the ball (ReLU margin lower bound > 2 x bound): %zu of %zu\n", certified_same, n);
        printf("  difference network run on %zu of %zu inputs%s\n", n_devnet, n,
               tightest ? " (--tightest)"
               : n_devnet == n ? " (no input's propagated bound alone is within the threshold)"
               : n_devnet == 0 ? " (every input's propagated bound alone is within the threshold)"
                               : " (the others' propagated bound alone is within the threshold)");
    }
    fflush(stdout);
    if (!pass) {
        if (n_over)
            fprintf(stderr, "lgelu check: FAIL: input #%ld: certified bound %.6g > --max-deviation %g (observed %.6g)\n",
                    worst, rows[worst].bound, maxdev, rows[worst].observed);
        else
            fprintf(stderr, "lgelu check: FAIL: input #%ld changes its class %d -> %d (certified bound %.6g, observed %.6g)\n",
                    first_cc, rows[first_cc].class_ref, rows[first_cc].class_relu, rows[first_cc].bound,
                    rows[first_cc].observed);
    }
    rc = pass ? 0 : 1;
fail:
    if (rc && st != LG_OK) rc = lg_cli_fail("check", st);
    free(X);
    free(rows);
    free(sorted);
    lg_net_free(&ref);
    lg_net_free(&rn);
    return rc;
}
