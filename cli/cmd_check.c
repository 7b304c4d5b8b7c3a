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
#include <pthread.h>
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
#include "verify/worklist.h"

static void lg_check_help(void)
{
    printf("usage: lgelu check RELU_NET --ref NET [--data D | --inputs FILE] --max-deviation D\n"
           "                  [--eps E] [--n N] [--no-class-change] [--tightest] [--json] [--progress]\n"
           "                  [--timeout T] [-j N]\n\n"
           "CI gate for a ReLU-ized network. RELU_NET is the substitution ('lgelu relu') of NET, the\n"
           "lambda-GELU, GELU, Swish-beta or PReLU network before substitution (native or ONNX; same\n"
           "shapes and weights, relu exactly where NET has gelu/lgelu/swish/prelu, else refused). For\n"
           "every input x the check computes a certified upper bound on max |f_ReLU(x') - f_ref(x')|_inf\n"
           "over all x' in the L-inf ball of radius E around x, clipped to the input domain [0,1], sound\n"
           "for the exact reals and for both nets' double-precision outputs (docs/DESIGN.md section 1,\n"
           "'Deviation bound'). Per output it takes the smallest of a cascade of bounds, cheap ones first:\n"
           "  1. the per-neuron gap propagated through the layers with the ReLU net's CROWN bounds;\n"
           "  2. CROWN on the two nets' difference network (verify/devnet.h; 'lgelu bound --symbolic');\n"
           "  3. the joint relaxation of the two nets' neurons (verify/devnet_joint.h);\n"
           "  4. the interval gradient of the substituted gaps (verify/devgrad.h; nets with attention,\n"
           "     where it is tighter);\n"
           "  5. alpha-CROWN on the difference network, then branch and bound on the ball (halving it\n"
           "     along the input that matters most) until the bound is within D, --timeout or 64 pieces.\n"
           "Each step runs only where the bound so far exceeds D (--tightest: step 2 on every input).\n"
           "The check passes when every bound is <= D. Both nets are also run in double precision on\n"
           "each x to report the deviation actually observed and whether the predicted class (argmax)\n"
           "changes.\n\n"
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
           "                       class_changes, certified_same_class, n_difference_network, n_timeout,\n"
           "                       worst, first_class_change, ratio_median, ratio_max (certified / observed\n"
           "                       per input, over the inputs observed to differ; null if none), n_refined,\n"
           "                       unrefined_max, unrefined_median (inputs whose bound the refinement\n"
           "                       lowered, and the bounds before it),\n"
           "                       relu_net, ref, stages: how many inputs took their bound from each\n"
           "                       step of the cascade, inputs: one object per input) instead of text;\n"
           "                       worst, first_class_change and each of inputs are {index, bound,\n"
           "                       observed, class_ref, class_relu, timed_out, stage} (the first two may\n"
           "                       be null); stage: the step that gave the bound, one of propagated (1.),\n"
           "                       difference_network (2.), pair (1. with the bounds of 2.), joint (3.),\n"
           "                       gradient (4.), refinement (5.), point (a point's exact enclosures)\n"
           "  --progress           progress lines on stderr even when it is not a terminal (logs)\n"
           "  --timeout T          seconds per input for the difference network (default 0: none); an\n"
           "                       input past them keeps its propagated bound (JSON n_timeout counts them;\n"
           "                       such an input passes only if that bound is within D); the refinement\n"
           "                       stops at them with the bound it reached\n"
           "  -j, --jobs N         check N inputs at a time, one thread each (default 1)\n"
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
    double unrefined; /* the bound before refinement (devnet.h want; = bound where none ran) */
    int class_ref, class_relu;
    int stage; /* the step of the cascade that gave the bound (lg_devnet_stage) */
    unsigned char devnet, timed_out, same; /* the difference network ran, past --timeout, class provably kept */
} lg_check_row;

static int lg_check_argmax(const double *y, int n)
{
    int b = 0;
    for (int j = 1; j < n; j++)
        if (y[j] > y[b]) b = j;
    return b;
}

/* One thread's workspace: the pair's deviation objects and buffers. */
typedef struct lg_check_ws {
    lg_dev dev;
    lg_devnet v;
    lg_bounds b;
    double *lo, *hi, *y, *yr, *scratch, *C, *dz, *lb;
} lg_check_ws;

/* The job: inputs X ([n][n_in]) and their rows, one workspace per thread. */
typedef struct lg_check_job {
    const lg_net *rn, *ref;
    const double *X;
    size_t n;
    double eps, enough, want, timeout;
    lg_check_row *rows;
    lg_check_ws *ws;
    pthread_mutex_t mu; /* guards done and meter */
    size_t done;
    lg_cli_meter meter;
} lg_check_job;

static void lg_check_ws_free(lg_check_ws *w)
{
    lg_bounds_free(&w->b);
    lg_devnet_free(&w->v);
    lg_dev_free(&w->dev);
    free(w->lo);
    free(w->y);
    free(w->scratch);
    free(w->C);
    memset(w, 0, sizeof *w);
}

static lg_status lg_check_ws_init(lg_check_ws *w, const lg_net *rn, const lg_net *ref, double want)
{
    size_t dim = (size_t)rn->n_in;
    int no = lg_net_n_out(rn);
    memset(w, 0, sizeof *w);
    w->lo = malloc(2 * dim * sizeof *w->lo);                   /* lo, hi [dim] each */
    w->y = malloc(2 * (size_t)no * sizeof *w->y);              /* y, yr [no] each */
    w->scratch = malloc(2 * (size_t)lg_net_max_width(ref) * sizeof *w->scratch);
    w->C = malloc(((size_t)no * (size_t)no + 2 * (size_t)no) * sizeof *w->C); /* [no−1][no] rows e_c − e_j; dz, lb */
    if (!w->lo || !w->y || !w->scratch || !w->C) return lg_fail(LG_ERR_NOMEM, "cannot allocate buffers");
    w->hi = w->lo + dim;
    w->yr = w->y + no;
    w->dz = w->C + (size_t)no * (size_t)no;
    w->lb = w->dz + no;
    lg_status st;
    if ((st = lg_dev_init(&w->dev, rn, ref)) != LG_OK) return st;
    if ((st = lg_devnet_init(&w->v, rn, ref)) != LG_OK) return st;
    w->v.want = want;
    return lg_bounds_init(&w->b, rn);
}

/* Bound, observed deviation and classes of row r (lg_worklist_run's item). */
static lg_status lg_check_one(void *ctx, int ri, int thread)
{
    lg_check_job *J = ctx;
    lg_check_ws *w = &J->ws[thread];
    const lg_net *rn = J->rn, *ref = J->ref;
    const size_t r = (size_t)ri, dim = (size_t)rn->n_in;
    const int no = lg_net_n_out(rn);
    const double *x = J->X + r * dim;
    double *lo = w->lo, *hi = w->hi, *y = w->y, *yr = w->yr, *C = w->C, *dz = w->dz, *lb = w->lb;
    lg_status st;
    lg_ball_boxes(x, dim, J->eps, 0.0, 1.0, lo, hi, NULL, NULL); /* outward (DESIGN.md §3) */
    lg_check_row *o = &J->rows[r];
    o->bound = INFINITY;
    o->devnet = o->timed_out = o->same = 0;
    o->stage = LG_DEVNET_STAGE_PROPAGATED;
    if ((J->enough >= 0 || J->timeout > 0) &&
        (st = lg_transfer_box_delta(&w->dev, NULL, rn, &w->b, lo, hi, &o->bound)) != LG_OK)
        return st;
    o->unrefined = o->bound;
    if (!(o->bound <= J->enough)) {
        lg_runctx rc = lg_runctx_start(J->timeout, 1, 0, 0.0);
        w->b.run = &rc;
        st = lg_transfer_box_delta(&w->dev, &w->v, rn, &w->b, lo, hi, &o->bound);
        w->b.run = NULL;
        o->devnet = 1;
        if (st == LG_OK) {
            o->unrefined = fmin(w->v.unrefined, o->unrefined);
            o->stage = w->v.stage;
        }
        if (st == LG_ERR_TIMEOUT) { /* keep the propagated bound; b gets its symbolic bounds back */
            o->timed_out = 1;
            st = lg_transfer_box_delta(&w->dev, NULL, rn, &w->b, lo, hi, &o->bound);
            o->unrefined = o->bound;
        }
        if (st != LG_OK) return st;
    }
    lg_net_forward(ref, x, y, w->scratch);
    lg_net_forward(rn, x, yr, w->scratch);
    o->observed = 0.0;
    for (int j = 0; j < no; j++) {
        double a = fabs(yr[j] - y[j]);
        if (a > o->observed || isnan(a)) o->observed = a;
    }
    if (!(o->observed <= o->bound))
        return lg_fail(LG_ERR_NUMERIC,
                       "internal error: input %zu: observed deviation %.17g exceeds the certified bound %.17g", r,
                       o->observed, o->bound);
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
        if ((st = lg_bounds_objective_lower(&w->b, rn, no - 1, C, dz, lb)) != LG_OK) return st;
        int kept = 1;
        for (int k = 0; k < no - 1; k++) kept &= lb[k] > 2.0 * o->bound;
        o->same = (unsigned char)kept;
    }
    pthread_mutex_lock(&J->mu);
    size_t done = ++J->done;
    lg_cli_progress(&J->meter, "check", "inputs", done, J->n);
    pthread_mutex_unlock(&J->mu);
    return LG_OK;
}

/* Bound, observed deviation and classes for every row of X ([n][n_in]) on
 * n_threads threads (inputs in any order, each row its own result). */
/* enough ≥ 0: an input whose propagated bound is ≤ enough keeps it (the
 * difference network runs for the others; their rows say so); enough
 * < 0: the tightest bound for every input. want: the difference network's
 * bound is refined where it exceeds it (devnet.h). */
/* timeout > 0: the difference network's seconds per input; past them the input keeps its
 * propagated bound (its row's timed_out). */
static lg_status lg_check_rows(const lg_net *rn, const lg_net *ref, const double *X, size_t n, double eps,
                               double enough, double want, double timeout, int n_threads, lg_check_row *rows)
{
    if (n_threads < 1) n_threads = 1;
    if ((size_t)n_threads > n) n_threads = (int)n;
    lg_check_job J = {rn, ref, X, n, eps, enough, want, timeout, rows, NULL, PTHREAD_MUTEX_INITIALIZER, 0,
                      {lg_now(), 0}};
    lg_status st = LG_OK;
    J.ws = calloc((size_t)n_threads, sizeof *J.ws);
    if (!J.ws) return lg_fail(LG_ERR_NOMEM, "cannot allocate buffers");
    for (int t = 0; t < n_threads && st == LG_OK; t++) st = lg_check_ws_init(&J.ws[t], rn, ref, want);
    if (st == LG_OK) st = lg_worklist_run((int)n, n_threads, lg_check_one, &J);
    for (int t = 0; t < n_threads; t++) lg_check_ws_free(&J.ws[t]);
    free(J.ws);
    pthread_mutex_destroy(&J.mu);
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
    return json_pack("{s:I, s:o, s:o, s:i, s:i, s:b, s:s}", "index", (json_int_t)i, "bound",
                     lg_json_num(o->bound), "observed", lg_json_num(o->observed), "class_ref", o->class_ref,
                     "class_relu", o->class_relu, "timed_out", o->timed_out, "stage", lg_devnet_stage_name(o->stage));
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

/* The options of one `check` call (paths borrowed from argv). */
typedef struct {
    const char *ref_path, *data, *inputs;
    double eps, maxdev, timeout;
    long nmax, jobs;
    int nocc, tightest, json;
} lg_check_opts;

/* Parse argv into o; -1 when the call may go on, else the exit code (help: 0, usage: 2). */
static int lg_check_parse(int argc, char **argv, lg_check_opts *o)
{
    enum { O_REF = 256, O_DATA, O_INPUTS, O_EPS, O_MAXDEV, O_NOCC, O_TIGHT, O_JSON, O_N, O_PROGRESS, O_TIMEOUT };
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
                                       {"timeout", required_argument, 0, O_TIMEOUT},
                                       {"jobs", required_argument, 0, 'j'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hj:", lo, NULL)) != -1) {
        switch (c) {
        case O_REF: o->ref_path = optarg; break;
        case O_DATA: o->data = optarg; break;
        case O_INPUTS: o->inputs = optarg; break;
        case O_EPS:
            if (lg_opt_eps("check", optarg, &o->eps)) return 2;
            break;
        case O_MAXDEV:
            if (lg_opt_double("check", "max-deviation", optarg, 0.0, 1e300, &o->maxdev)) return 2;
            break;
        case O_N:
            if (lg_opt_int("check", "n", optarg, 1, 1000000000L, &o->nmax)) return 2;
            break;
        case O_NOCC: o->nocc = 1; break;
        case O_TIGHT: o->tightest = 1; break;
        case O_JSON: o->json = 1; break;
        case O_PROGRESS: lg_cli_progress_force(); break;
        case O_TIMEOUT:
            if (lg_opt_double("check", "timeout", optarg, 0.0, 1e9, &o->timeout)) return 2;
            break;
        case 'j':
            if (lg_opt_int("check", "jobs", optarg, 1, 256, &o->jobs)) return 2;
            break;
        case 'h': lg_check_help(); return 0;
        default: return lg_cli_usage("check", "unknown option");
        }
    }
    if (optind != argc - 1) return lg_cli_usage("check", "expected exactly one network file (the ReLU net)");
    if (!o->ref_path) return lg_cli_usage("check", "missing --ref NET (the network before substitution)");
    if (o->data && o->inputs) return lg_cli_usage("check", "give at most one of --data D and --inputs FILE");
    if (!o->inputs && !o->data) o->data = LG_DATA_DEFAULT_DIR;
    if (o->maxdev < 0) return lg_cli_usage("check", "missing --max-deviation D");
    return -1;
}

/* What the report says about the n rows. */
typedef struct {
    size_t n, certified_same, n_devnet, n_timeout, n_over, class_changes, n_refined, nr;
    long worst, first_cc;
    double obs_max, median, unref_max, unref_med, ratio_med, ratio_max;
    int pass;
} lg_check_sum;

static double lg_check_median(const double *s, size_t n)
{
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* The summary of rows[0..n) (n ≥ 1); sorted [n] is scratch. */
static void lg_check_summarise(const lg_check_row *rows, size_t n, const lg_check_opts *o, double *sorted,
                               lg_check_sum *S)
{
    memset(S, 0, sizeof *S);
    S->n = n;
    S->first_cc = -1;
    for (size_t i = 0; i < n; i++) {
        S->certified_same += rows[i].same;
        S->n_devnet += rows[i].devnet;
        S->n_timeout += rows[i].timed_out;
        if (rows[i].bound > rows[S->worst].bound) S->worst = (long)i;
        S->n_over += rows[i].bound > o->maxdev;
        if (rows[i].observed > S->obs_max) S->obs_max = rows[i].observed;
        if (rows[i].class_ref != rows[i].class_relu) {
            S->class_changes++;
            if (S->first_cc < 0) S->first_cc = (long)i;
        }
        sorted[i] = rows[i].bound;
    }
    qsort(sorted, n, sizeof *sorted, lg_check_cmp);
    S->median = lg_check_median(sorted, n);
    for (size_t i = 0; i < n; i++) {
        S->n_refined += rows[i].unrefined > rows[i].bound;
        sorted[i] = rows[i].unrefined;
    }
    qsort(sorted, n, sizeof *sorted, lg_check_cmp);
    S->unref_max = sorted[n - 1];
    S->unref_med = lg_check_median(sorted, n);
    /* certified / observed per input (inputs with an observed deviation > 0) */
    size_t nr = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].observed > 0) sorted[nr++] = rows[i].bound / rows[i].observed;
    qsort(sorted, nr, sizeof *sorted, lg_check_cmp);
    S->nr = nr;
    S->ratio_med = nr == 0 ? NAN : lg_check_median(sorted, nr);
    S->ratio_max = nr == 0 ? NAN : sorted[nr - 1];
    S->pass = S->n_over == 0 && !(o->nocc && S->class_changes > 0);
}

static lg_status lg_check_print_json(const lg_check_row *rows, const lg_check_sum *S, const lg_check_opts *o,
                                     const char *relu_path)
{
    json_t *j = json_pack(
        "{s:b, s:I, s:o, s:o, s:b, s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:I, s:o, s:o, s:s, s:s}",
        "pass", S->pass, "n", (json_int_t)S->n, "eps", lg_json_num(o->eps), "max_deviation", lg_json_num(o->maxdev),
        "no_class_change", o->nocc, "bound_max", lg_json_num(rows[S->worst].bound), "bound_median",
        lg_json_num(S->median), "observed_max", lg_json_num(S->obs_max), "n_over", (json_int_t)S->n_over,
        "class_changes", (json_int_t)S->class_changes, "certified_same_class", (json_int_t)S->certified_same,
        "n_difference_network", (json_int_t)S->n_devnet, "n_timeout", (json_int_t)S->n_timeout, "worst",
        lg_check_row_json(rows, S->worst), "first_class_change", lg_check_row_json(rows, S->first_cc),
        "ratio_median", lg_json_num(S->ratio_med), "ratio_max", lg_json_num(S->ratio_max), "n_refined",
        (json_int_t)S->n_refined, "unrefined_max", lg_json_num(S->unref_max), "unrefined_median",
        lg_json_num(S->unref_med), "relu_net", relu_path, "ref", o->ref_path);
    /* per input, and how many inputs each step of the cascade gave the bound */
    json_t *stages = json_object(), *inputs = json_array();
    size_t count[LG_DEVNET_N_STAGES] = {0};
    for (size_t i = 0; i < S->n; i++) {
        if (rows[i].stage >= 0 && rows[i].stage < LG_DEVNET_N_STAGES) count[rows[i].stage]++;
        if (inputs) json_array_append_new(inputs, lg_check_row_json(rows, (long)i));
    }
    for (int k = 0; k < LG_DEVNET_N_STAGES && stages; k++)
        json_object_set_new(stages, lg_devnet_stage_name(k), json_integer((json_int_t)count[k]));
    if (j && stages && inputs) {
        json_object_set_new(j, "stages", stages);
        json_object_set_new(j, "inputs", inputs);
    } else {
        json_decref(stages);
        json_decref(inputs);
        json_decref(j);
        j = NULL;
    }
    char *s = j ? lg_json_dumps(j, 0) : NULL;
    json_decref(j);
    if (!s) return lg_fail(LG_ERR_NOMEM, "cannot format the JSON result");
    printf("%s\n", s);
    free(s);
    return LG_OK;
}

static void lg_check_print_text(const lg_check_row *rows, const lg_check_sum *S, const lg_check_opts *o)
{
    size_t n = S->n;
    long worst = S->worst, first_cc = S->first_cc;
    printf("%s: certified |f_ReLU - f_ref|_inf on eps = %g balls of %zu inputs: max %.6g, median %.6g "
           "(threshold %g)\n",
           S->pass ? "PASS" : "FAIL", o->eps, n, rows[worst].bound, S->median, o->maxdev);
    printf("  inputs over the threshold: %zu of %zu\n", S->n_over, n);
    if (S->nr) printf("  certified / observed per input: median %.6g, max %.6g\n", S->ratio_med, S->ratio_max);
    if (S->n_refined)
        printf("  refined (alpha-CROWN, branch and bound) on %zu inputs; before it: max %.6g, median %.6g\n",
               S->n_refined, S->unref_max, S->unref_med);
    printf("  worst input: #%ld, certified bound %.6g, observed deviation %.6g, class %d (ref) / %d (relu)\n", worst,
           rows[worst].bound, rows[worst].observed, rows[worst].class_ref, rows[worst].class_relu);
    printf("  observed max deviation: %.6g; class changes: %zu of %zu%s\n", S->obs_max, S->class_changes, n,
           o->nocc ? " (--no-class-change)" : "");
    if (first_cc >= 0)
        printf("  first class change: input #%ld, class %d (ref) -> %d (relu), certified bound %.6g, observed %.6g\n",
               first_cc, rows[first_cc].class_ref, rows[first_cc].class_relu, rows[first_cc].bound,
               rows[first_cc].observed);
    printf("  class provably kept on the ball (ReLU margin lower bound > 2 x bound): %zu of %zu\n", S->certified_same,
           n);
    printf("  difference network run on %zu of %zu inputs%s\n", S->n_devnet, n,
           o->tightest           ? " (--tightest)"
           : S->n_devnet == n    ? " (no input's propagated bound alone is within the threshold)"
           : S->n_devnet == 0    ? " (every input's propagated bound alone is within the threshold)"
                                 : " (the others' propagated bound alone is within the threshold)");
    if (S->n_timeout) printf("  past --timeout (propagated bound kept): %zu of %zu inputs\n", S->n_timeout, n);
}

/* The reason for a FAIL on stderr. */
static void lg_check_print_fail(const lg_check_row *rows, const lg_check_sum *S, const lg_check_opts *o)
{
    long worst = S->worst, first_cc = S->first_cc;
    if (S->n_over)
        fprintf(stderr, "lgelu check: FAIL: input #%ld: certified bound %.6g > --max-deviation %g (observed %.6g)%s\n",
                worst, rows[worst].bound, o->maxdev, rows[worst].observed,
                rows[worst].timed_out ? "; its bound did not finish within --timeout (the propagated bound)" : "");
    else
        fprintf(stderr, "lgelu check: FAIL: input #%ld changes its class %d -> %d (certified bound %.6g, observed %.6g)\n",
                first_cc, rows[first_cc].class_ref, rows[first_cc].class_relu, rows[first_cc].bound,
                rows[first_cc].observed);
}

/* The inputs' values must lie in [0, 1]. */
static lg_status lg_check_domain(const double *X, size_t n, int n_in, const char *what)
{
    for (size_t i = 0; i < n * (size_t)n_in; i++)
        if (!(X[i] >= 0.0 && X[i] <= 1.0))
            return lg_fail(LG_ERR_ARG, "%s: input %zu, feature %zu is %g; inputs must lie in the domain [0,1]", what,
                           i / (size_t)n_in, i % (size_t)n_in, X[i]);
    return LG_OK;
}

int lg_cmd_check(int argc, char **argv)
{
    lg_check_opts o = {.eps = 0.01, .maxdev = -1.0, .nmax = -1, .jobs = 1};
    int prc = lg_check_parse(argc, argv, &o);
    if (prc >= 0) return prc;
    lg_net rn = {0}, ref = {0};
    double *X = NULL, *sorted = NULL;
    lg_check_row *rows = NULL;
    size_t n = 0;
    int rc = 1;
    lg_status st = LG_OK;
    const char *src = o.inputs ? o.inputs : o.data;
    if ((st = lg_cli_load_lowered(&rn, argv[optind], 1)) != LG_OK) goto fail;
    if ((st = lg_cli_load_lowered(&ref, o.ref_path, 1)) != LG_OK) goto fail;
    if ((st = lg_dev_check_pair(&rn, &ref)) != LG_OK) goto fail;
    if ((st = lg_check_load(o.inputs, o.data, rn.n_in, &X, &n)) != LG_OK) goto fail;
    if (o.nmax > 0 && (size_t)o.nmax < n) n = (size_t)o.nmax;
    if (n == 0) {
        st = lg_fail(LG_ERR_ARG, "%s: no inputs", src);
        goto fail;
    }
    if ((st = lg_check_domain(X, n, rn.n_in, src)) != LG_OK) goto fail;
    rows = malloc(n * sizeof *rows);
    sorted = malloc(n * sizeof *sorted);
    if (!rows || !sorted) {
        st = lg_fail(LG_ERR_NOMEM, "cannot allocate results for %zu inputs", n);
        goto fail;
    }
    if ((st = lg_check_rows(&rn, &ref, X, n, o.eps, o.tightest ? -1.0 : o.maxdev, o.maxdev, o.timeout, (int)o.jobs,
                            rows)) != LG_OK)
        goto fail; /* never a pass */
    lg_check_sum S;
    lg_check_summarise(rows, n, &o, sorted, &S);
    if (o.json) {
        if ((st = lg_check_print_json(rows, &S, &o, argv[optind])) != LG_OK) goto fail;
    } else {
        lg_check_print_text(rows, &S, &o);
    }
    fflush(stdout);
    if (!S.pass) lg_check_print_fail(rows, &S, &o);
    rc = S.pass ? 0 : 1;
fail:
    if (rc && st != LG_OK) rc = lg_cli_fail("check", st);
    free(X);
    free(rows);
    free(sorted);
    lg_net_free(&ref);
    lg_net_free(&rn);
    return rc;
}
