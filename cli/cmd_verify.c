/* cmd_verify.c — `lgelu verify NET ...`: robust / violated / unknown. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "verify/bab_act.h"
#include "core/clock.h"
#include "core/json.h"
#include "cli/verify_args.h"
#include "core/idx.h"
#include "core/netfile.h"
#include "verify/transfer.h"
#include "verify/verify.h"
#include "onnx/load.h"
#include "onnx/onnx.h"

static void lg_verify_help(void)
{
    const lg_verify_opts d = lg_verify_opts_default();
    printf("usage: lgelu verify NET (--vnnlib P | [--data DIR] --index I --eps E | --input FILE [--label L] --eps E)\n"
           "                    [--solver z3|glpk|auto|none] [--z3-theory auto|exact|lp|lp-lemmas]\n"
           "                    [--timeout S] [--memory MB] [--tighten none|lp] [--refine auto|on|off]\n"
           "                    [--margin K] [--witness-tol T]\n"
           "                    [--ref SMOOTH_NET] [--seed S] [--no-attack] [-o FILE] [--json] [--verbose]\n"
           "                    [--bab auto|input|relu|none] [-j N] [--bab-nodes N] [--alpha-steps N]\n"
           "                    [--bab-branch fsb|babsr] [--no-beta] [--bab-group N] [--bab-root-alpha N]\n"
           "                    [--bab-order best|depth] [--bab-cuts on|off]\n"
           "                    [--bab-solver-relus N] [--progress]\n\n"
           "Verify a network NET (native .lgnet or ONNX) and print\n"
           "`robust`, `violated` or `unknown (<reason>)` with a short summary. `robust` is a proof;\n"
           "`violated` comes with a counterexample that passed the exact re-check (rational arithmetic);\n"
           "`violated (misclassified ...)` when the clean input of --index/--input is already one.\n"
           "Pipeline: symbolic bounds (CROWN/DeepPoly) -> proof from the bounds -> random sampling and\n"
           "PGD attack -> [LP tightening -> proof] -> branch and bound (sub-problems with few unstable\n"
           "ReLUs go to the complete back-end) -> re-check of every witness.\n"
           "Smooth networks (gelu, lgelu, swish, sigmoid, prelu) are verified as they are: certified\n"
           "linear relaxations in the bounds, the attack, input splitting (<= 16 inputs), and every\n"
           "witness certified by an MPFR enclosure. --solver z3|glpk and --tighten lp take\n"
           "piecewise-linear (relu/identity) networks only.\n"
           "Networks with product, softmax or layernorm nodes (ViTs, relu/identity activations) get\n"
           "CROWN bounds through the nodes' certified planes, the attack and input splitting; no\n"
           "back-end, no ReLU splitting yet (docs/DESIGN.md §3).\n\n"
           "property (one of):\n"
           "  --vnnlib P      a VNN-LIB property file (every case is checked; any violated => violated)\n"
           "  --index I       local robustness of test-set image I (label from the data) ...; a range\n"
           "                  A-B or a comma list of both (0-9,15,20-22) verifies each in one run: a line\n"
           "                  per instance and a summary (with --json one JSON line per instance)\n"
           "  --data DIR      ... from the IDX files in DIR (default %s)\n"
           "  --input FILE    local robustness around one input: a .npy array of shape (n_in,) or (1, n_in)\n"
           "                  (any dtype; float64 kept exactly), or text\n"
           "                  with n_in numbers (see 'lgelu eval --help')\n"
           "  --label L       label for --input (default: the network's prediction at the input)\n"
           "  --eps E         L-infinity radius of the box (clipped to [0,1]) for --index/--input, 0 <= E <= 1\n"
           "  --margin K      the label must beat every other output by more than K (default 0); with\n"
           "                  --vnnlib every constraint c.y + d <= 0 becomes c.y + d - K <= 0\n\n"
           "  --ref NET       decide the property for the (lgelu/gelu/swish/prelu) network NET that the ReLU\n"
           "                  network was substituted from: each constraint is tightened by the certified\n"
           "                  deviation (sum_j |c_j| e_j, i.e. 2*delta for robustness) on the box, so\n"
           "                  `robust` is a proof for NET; a counterexample is re-run through NET in double\n"
           "                  and only reported `violated` if it fools NET itself, else `unknown`\n\n"
           "options:\n"
           "  --solver NAME   auto (default: bounds, attack, branch and bound whose small sub-problems go\n"
           "                  to GLPK, then Z3; if still open, GLPK then Z3 on the whole case),\n"
           "                  glpk (certified MILP branch and bound: every pruned node closed by a checked\n"
           "                  LP certificate), z3 (SMT), none (bounds, attack and branch and bound only)\n"
           "  --z3-theory T   the linear arithmetic under Z3 (with --solver z3): exact (Z3's own QF_LRA in\n"
           "                  exact rationals), lp (Z3 decides the ReLU phases and the property's terms,\n"
           "                  lgelu's LP with a certified bound is the theory), auto (default: exact up\n"
           "                  to 4 inputs, lp above); the theory that ran is in `method` (z3-exact/z3-lp);\n"
           "                  lp-lemmas: the lp theory as lemmas on demand instead of Z3's user\n"
           "                  propagator (slower; kept for the comparison in benchmarks/Z3.md)\n"
           "  --timeout S     overall wall-clock limit in seconds (default %g; 0 = none), counted from\n"
           "                  before the files are read; honoured within about a second by every stage\n"
           "                  (back-ends run in a child killed 0.5 s after it); past it: unknown (timeout)\n"
           "  --memory MB     memory cap of every back-end call (Z3, GLPK): the child's address\n"
           "                  space (RLIMIT_AS) and the solver's own limit; and of branch and\n"
           "                  bound's open nodes (depth first past half of it); hitting it gives unknown\n"
           "  --witness-tol T opt-in VNN-COMP-style tolerance (its counterexample check uses 1e-4): a\n"
           "                  candidate that fails the exact witness gate (a box that holds no double, a\n"
           "                  rounding) but lies in the box and meets the property within T is reported\n"
           "                  as violated-within-tolerance (the result file: sat, its assignment and a\n"
           "                  '; lgelu:' note), never as violated (default 0: off)\n"
           "  --tighten M     none (default) or lp: after the attack, tighten every unstable neuron\n"
           "                  with two GLPK LPs (min/max; at most half the remaining time), then try\n"
           "                  the bounds proof again\n"
           "  --refine M      auto (default), on or off: before ReLU branch and bound, tighten the most\n"
           "                  unstable neurons of the first hidden layers by certified GLPK LPs with a\n"
           "                  few ReLU splits each (at most 30%% of the time left); auto: off for now\n"
           "                  (at 30 s it decided nothing more where measured)\n"
           "  --seed S        seed of the attack's random starts (default %lu)\n"
           "  --no-attack     skip sampling and PGD (to measure the back-end alone)\n"
           "  -o, --output FILE  write the VNN-COMP result file (unsat/sat + counterexample/unknown/\n"
           "                  timeout); checked before the run starts\n"
           "  --bab MODE      branch and bound: auto (default: input splitting when the network has at\n"
           "                  most 16 inputs, else ReLU splitting), input, relu, or none (no splitting:\n"
           "                  the back-end gets the whole case)\n"
           "  -j N            worker threads (default 0 = the number of cores); the\n"
           "                  verdict does not depend on N\n"
           "  --bab-nodes N   stop branch and bound after N nodes (answer unknown; default %ld)\n"
           "  --alpha-steps N optimised-slope (alpha-CROWN) steps per open node (default %d; 0 = off)\n"
           "  --bab-branch B  ReLU to split: fsb (default: filtered smart branching, the 8 best by the\n"
           "                  BaBSR score each bounded in both children) or babsr (the best score)\n"
           "  --no-beta       no split multipliers (beta-CROWN) in branch and bound: alpha only for\n"
           "                  ReLU splits, plain CROWN for activation splits of smooth networks\n"
           "  --bab-group N   branch-and-bound nodes bounded together in one batched back-substitution\n"
           "                  per worker (default %d; rows per call capped at 64 MB of scratch)\n"
           "  --bab-cuts on|off   ReLU branch and bound: learn cuts from refuted sub-problems (the\n"
           "                  splits their beta-CROWN bound used, verified on their own) and refute\n"
           "                  later sub-problems that contain one without bounding them (default off)\n"
           "  --bab-root-alpha N  ReLU branch and bound, and smooth networks: N alpha-CROWN steps\n"
           "                  tightening the hidden layers' pre-activation bounds at the root, within half\n"
           "                  of the time left (default: %d for ReLU splitting, off on conv networks;\n"
           "                  %d on smooth networks; 0 = off)\n"
           "  --bab-order O   smooth networks' activation splitting: depth (default: depth first) or\n"
           "                  best (the open node with the lowest bound first; more nodes open at once)\n"
           "  --bab-solver-relus N  hand a sub-problem to the back-end (glpk; z3 after it in auto mode)\n"
           "                  once at most N unstable ReLUs remain (default %d; 0 = never)\n"
           "  --json          print one JSON line: instance, solver, verdict, reason, misclassified,\n"
           "                  seconds, unstable, unstable_per_layer, nodes (back-end), bound_method, margin,\n"
           "                  method, label (robustness queries), with --ref also ref and delta, and bab, bab_nodes,\n"
           "                  bab_max_depth, seconds_bounds, seconds_solver, and the LP work (GLPK, Z3's\n"
           "                  lp theory): lps, seconds_lp, seconds_cert, lps_open\n"
           "  --verbose       solver output on stderr (progress lines are shown when stderr is a terminal)\n"
           "  --progress      progress lines on stderr even when it is not a terminal (logs)\n"
           "  -h, --help      show this help\n\n"
           "exit status: 0 for every verdict (including unknown), 1 on errors, 2 on bad usage.\n",
           LG_DATA_DEFAULT_DIR, d.timeout_s, (unsigned long)d.seed, (long)d.bab.max_nodes, d.bab.alpha_steps,
           d.bab.group, LG_BAB_ROOT_ALPHA_AUTO, LG_BAB_SMOOTH_ROOT_ALPHA, d.bab.solver_unstable);
    printf("\n%s", lg_cli_import_help);
}

/* What reading the network changed in the file's function (lg_onnx_import_note), copied after
 * the load: "" when the network verified is the file's exact function. */
static char lg_verify_net_note[700];
static int lg_verify_net_rounded;

/* net: the network verified (NULL when it could not be read), for the
 * summary's per-layer counts: "-" for a layer without ReLUs. */
static void lg_verify_print(const lg_verify_args *a, const lg_net *net, const char *solver, const lg_verify_report *r,
                            int json, const char *ref, double delta)
{
    if (json) {
        json_t *per = json_array();
        for (int k = 0; k < r->n_layers; k++) json_array_append_new(per, json_integer(r->unstable[k]));
        json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:o, s:i, s:o, s:I, s:s, s:o, s:s}", "instance", a->instance,
                              "solver", solver, "verdict", lg_verify_kind(r), "reason", r->how.reason,
                              "seconds", lg_json_num(r->seconds), "unstable", r->unstable_total,
                              "unstable_per_layer", per, "nodes", (json_int_t)r->nodes, "bound_method",
                              r->bound_method, "margin", lg_json_num(a->margin), "method", r->method);
        if (o && !a->vnnlib) json_object_set_new(o, "label", json_integer(a->label));
        if (o && lg_verify_net_note[0]) {
            json_object_set_new(o, "network_read", json_string(lg_verify_net_note));
            json_object_set_new(o, "network_rounded", json_boolean(lg_verify_net_rounded));
        }
        if (o) json_object_set_new(o, "misclassified", json_boolean(r->misclassified));
        if (o && ref) {
            json_object_set_new(o, "ref", json_string(ref));
            json_object_set_new(o, "delta", lg_json_num(delta));
        }
        if (o) {
            json_object_set_new(o, "bab", json_string(r->bab_mode ? r->bab_mode : "none"));
            json_object_set_new(o, "bab_nodes", json_integer(r->bab_nodes));
            json_object_set_new(o, "bab_max_depth", json_integer(r->bab_max_depth));
            json_object_set_new(o, "seconds_bounds", lg_json_num(r->t_bounds));
            json_object_set_new(o, "seconds_solver", lg_json_num(r->t_solver));
            json_object_set_new(o, "lps", json_integer(r->lp.n_lp));
            json_object_set_new(o, "seconds_lp", lg_json_num(r->lp.lp_seconds));
            json_object_set_new(o, "seconds_cert", lg_json_num(r->lp.cert_seconds));
            json_object_set_new(o, "lps_open", json_integer(r->lp.n_open));
        }
        if (lg_json_print_line(stdout, o)) fprintf(stderr, "lgelu verify: cannot print JSON (out of memory)\n");
        return;
    }
    if (r->how.why == LG_REASON_TOLERANCE && r->verdict == LG_VERDICT_UNKNOWN) printf("%s (%s)\n", lg_verify_kind(r), r->how.reason);
    else if (r->verdict == LG_VERDICT_UNKNOWN) printf("unknown (%s)\n", r->how.reason[0] ? r->how.reason : "undecided");
    else if (r->misclassified) printf("violated (misclassified: the clean input itself is a counterexample)\n");
    else printf("%s\n", lg_verdict_name(r->verdict));
    if (lg_verify_net_note[0])
        printf("  network read: %s%s\n", lg_verify_net_note,
               lg_verify_net_rounded ? " (the verdict is about this rounded network, not the file's exact function)"
                                     : "");
    if (ref)
        printf("  for the smooth network %s (certified deviation on the box: %.6g, margin used per\n"
               "  robustness term: %.6g)\n", ref, delta, 2 * delta);
    printf("  instance: %s\n  %s: %s (solver %s), %.3f s, %ld nodes\n", a->instance,
           r->verdict == LG_VERDICT_UNKNOWN ? "last tried" : "decided by", r->method[0] ? r->method : "-", solver,
           r->seconds, r->nodes);
    int n_relu = 0;
    for (int k = 0; net && k < net->n_layers && k < r->n_layers; k++) n_relu += net->layers[k].act == LG_ACT_RELU;
    if (r->misclassified || r->n_cases_bounded == 0)
        printf("  bounds: none computed (%s)\n", r->misclassified ? "the clean input is a counterexample"
                                                : r->verdict == LG_VERDICT_VIOLATED ? "the attack found a counterexample first"
                                                                                     : "the run stopped before any bound finished");
    else if (n_relu == 0)
        printf("  bounds: %s (no ReLU layer: smooth or linear activations only, none stable or unstable)\n",
               r->bound_method);
    else {
        printf("  bounds: %s, unstable ReLUs per layer:", r->bound_method);
        for (int k = 0; k < r->n_layers; k++)
            if (net->layers[k].act == LG_ACT_RELU) printf(" %d", r->unstable[k]);
            else printf(" -");
        printf(" (total %d)\n", r->unstable_total);
    }
    printf("  branch and bound: %s, %ld nodes, max depth %d; %.2f s in bounds, %.2f s in back-ends\n",
           r->bab_mode ? r->bab_mode : "none", r->bab_nodes, r->bab_max_depth, r->t_bounds, r->t_solver);
    if (r->lp.n_lp)
        printf("  glpk: %ld LPs, %.2f s in the simplex, %.2f s checking certificates, %ld left open (split or unknown)\n",
               r->lp.n_lp, r->lp.lp_seconds, r->lp.cert_seconds, r->lp.n_open);
    if (r->verdict == LG_VERDICT_VIOLATED) {
        int best = 0;
        for (int j = 1; j < r->n_out; j++)
            if (r->y[j] > r->y[best]) best = j;
        printf("  counterexample (case %d) passed the exact witness gate: top output %d = %.6g\n", r->violated_case, best,
               r->y[best]);
    }
}

/* One line per instance of a batch (--index LIST without --json). */
static void lg_verify_print_line(const lg_verify_args *a, const lg_verify_report *r)
{
    if (r->verdict == LG_VERDICT_UNKNOWN)
        printf("%s: %s (%s)", a->instance, lg_verify_kind(r), r->how.reason[0] ? r->how.reason : "undecided");
    else
        printf("%s: %s%s", a->instance, lg_verdict_name(r->verdict), r->misclassified ? " (misclassified)" : "");
    printf(", label %ld, %s %s, %.3f s\n", a->label, r->verdict == LG_VERDICT_UNKNOWN ? "last tried" : "decided by",
           r->method[0] ? r->method : "-", r->seconds);
}

enum { O_MEMORY = 200, O_VNN = 256, O_DATA, O_INDEX, O_EPS, O_INPUT, O_LABEL, O_SOLVER, O_TIMEOUT, O_TIGHTEN, O_REFINE, O_MARGIN, O_SEED,
       O_PROGRESS, O_JSON, O_VERBOSE, O_NOATK, O_REF, O_BAB, O_BAB_NODES, O_ALPHA, O_BAB_RELUS,
       O_BRANCH, O_NOBETA, O_BAB_GROUP, O_ROOT_ALPHA, O_Z3_THEORY, O_BAB_ORDER, O_WTOL, O_BAB_CUTS };
static const struct option lg_verify_long[] = {
    {"vnnlib", required_argument, 0, O_VNN},   {"data", required_argument, 0, O_DATA},
    {"index", required_argument, 0, O_INDEX},  {"eps", required_argument, 0, O_EPS},
    {"input", required_argument, 0, O_INPUT},  {"label", required_argument, 0, O_LABEL},
    {"solver", required_argument, 0, O_SOLVER}, {"timeout", required_argument, 0, O_TIMEOUT},
    {"z3-theory", required_argument, 0, O_Z3_THEORY},
    {"memory", required_argument, 0, O_MEMORY}, {"witness-tol", required_argument, 0, O_WTOL},
    {"tighten", required_argument, 0, O_TIGHTEN}, {"refine", required_argument, 0, O_REFINE}, {"margin", required_argument, 0, O_MARGIN},
    {"seed", required_argument, 0, O_SEED},    {"output", required_argument, 0, 'o'},
    {"progress", no_argument, 0, O_PROGRESS},
    {"json", no_argument, 0, O_JSON},          {"verbose", no_argument, 0, O_VERBOSE},
    {"ref", required_argument, 0, O_REF},      {"no-attack", no_argument, 0, O_NOATK},
    {"bab", required_argument, 0, O_BAB},      {"bab-nodes", required_argument, 0, O_BAB_NODES},
    {"alpha-steps", required_argument, 0, O_ALPHA}, {"bab-solver-relus", required_argument, 0, O_BAB_RELUS},
    {"bab-branch", required_argument, 0, O_BRANCH}, {"no-beta", no_argument, 0, O_NOBETA},
    {"bab-group", required_argument, 0, O_BAB_GROUP}, {"bab-root-alpha", required_argument, 0, O_ROOT_ALPHA},
    {"bab-order", required_argument, 0, O_BAB_ORDER}, {"bab-cuts", required_argument, 0, O_BAB_CUTS},
    {"help", no_argument, 0, 'h'},             {0, 0, 0, 0}};

/* The options of the search: limits, the seed, the back-end and the bounds. 0 when c is one
 * and its value is good, 2 after a usage message, -1 when c is not one of them. */
static int lg_verify_opt_search(int c, const char *arg, lg_verify_opts *o, const char **z3_theory)
{
    long v;
    switch (c) {
    case O_TIMEOUT:
        if (lg_opt_double("verify", "timeout", arg, 0, 1e7, &o->timeout_s)) return 2;
        return 0;
    case O_WTOL:
        if (lg_opt_double("verify", "witness-tol", arg, 0, 1, &o->witness_tol)) return 2;
        return 0;
    case O_MEMORY:
        if (lg_opt_double("verify", "memory", arg, 16, 1e9, &o->memory_mb)) return 2;
        return 0;
    case O_SEED:
        if (lg_opt_int("verify", "seed", arg, 0, 2147483647L, &v)) return 2;
        o->seed = (unsigned long)v;
        return 0;
    case O_SOLVER:
        if (lg_solver_parse(arg, &o->solver) != LG_OK) return lg_cli_usage("verify", "--solver: %s", lg_errmsg());
        return 0;
    case O_Z3_THEORY:
        if (!lg_solver_theory(lg_solver_z3, arg)) {
            char names[64];
            return lg_cli_usage("verify", "--z3-theory: expected %s, got '%s'",
                                lg_solver_theory_names(lg_solver_z3, names, sizeof names), arg);
        }
        *z3_theory = arg;
        return 0;
    case O_TIGHTEN:
        if (strcmp(arg, "none") == 0) o->tighten = LG_TIGHTEN_NONE;
        else if (strcmp(arg, "lp") == 0) o->tighten = LG_TIGHTEN_LP;
        else return lg_cli_usage("verify", "--tighten: expected none or lp, got '%s'", arg);
        return 0;
    case O_REFINE:
        if (strcmp(arg, "auto") == 0) o->refine = LG_REFINE_AUTO;
        else if (strcmp(arg, "on") == 0) o->refine = LG_REFINE_ON;
        else if (strcmp(arg, "off") == 0) o->refine = LG_REFINE_OFF;
        else return lg_cli_usage("verify", "--refine: expected auto, on or off, got '%s'", arg);
        return 0;
    default: return -1;
    }
}

/* The options of branch and bound, as lg_verify_opt_search. */
static int lg_verify_opt_bab(int c, const char *arg, lg_verify_opts *o)
{
    long v;
    switch (c) {
    case O_BAB:
        if (lg_bab_mode_parse(arg, &o->bab.mode) != LG_OK)
            return lg_cli_usage("verify", "--bab: expected auto, input, relu or none, got '%s'", arg);
        return 0;
    case 'j':
        if (lg_opt_int("verify", "-j", arg, 0, 1024, &v)) return 2;
        o->bab.threads = (int)v;
        return 0;
    case O_BAB_NODES:
        if (lg_opt_int("verify", "bab-nodes", arg, 1, 1L << 40, &v)) return 2;
        o->bab.max_nodes = v;
        return 0;
    case O_ALPHA:
        if (lg_opt_int("verify", "alpha-steps", arg, 0, 10000, &v)) return 2;
        o->bab.alpha_steps = (int)v;
        return 0;
    case O_BAB_RELUS:
        if (lg_opt_int("verify", "bab-solver-relus", arg, 0, 100000, &v)) return 2;
        o->bab.solver_unstable = (int)v;
        return 0;
    case O_BRANCH:
        if (strcmp(arg, "fsb") == 0) o->bab.branch = LG_BAB_BRANCH_FSB;
        else if (strcmp(arg, "babsr") == 0) o->bab.branch = LG_BAB_BRANCH_BABSR;
        else return lg_cli_usage("verify", "--bab-branch: expected fsb or babsr, got '%s'", arg);
        return 0;
    case O_NOBETA: o->bab.beta = 0; return 0;
    case O_BAB_CUTS:
        if (strcmp(arg, "on") == 0) o->bab.cuts = 1;
        else if (strcmp(arg, "off") == 0) o->bab.cuts = 0;
        else return lg_cli_usage("verify", "--bab-cuts: expected on or off, got '%s'", arg);
        return 0;
    case O_BAB_ORDER: {
        lg_bab_act_order ord;
        if (lg_bab_act_order_parse(arg, &ord) != LG_OK)
            return lg_cli_usage("verify", "--bab-order: expected best or depth, got '%s'", arg);
        o->bab.act_order = (int)ord;
        return 0;
    }
    case O_ROOT_ALPHA:
        if (lg_opt_int("verify", "bab-root-alpha", arg, 0, 10000, &v)) return 2;
        o->bab.root_alpha_steps = (int)v;
        return 0;
    case O_BAB_GROUP:
        if (lg_opt_int("verify", "bab-group", arg, 1, 1024, &v)) return 2;
        o->bab.group = (int)v;
        return 0;
    default: return -1;
    }
}

/* The instances of the run, one per index (or the one property), each verified against net
 * (or transferred from ref), printed and written to out; a batch ends with its totals. 0 when
 * done, an exit code after a usage message, −1 on a failure (*st). prop and r are the
 * caller's, freed by it on a failure. */
static int lg_verify_runs(lg_verify_args *a, lg_net *net, lg_net *ref, const char *ref_path, const lg_verify_opts *o,
                          lg_runctx *run, const char *out, int json, lg_prop *prop, lg_verify_report *r, lg_status *st)
{
    int batch = a->n_indices > 1, n_runs = a->n_indices > 0 ? a->n_indices : 1;
    int n_verdict[3] = {0}, n_mis = 0, n_timeout = 0;
    double seconds = 0, delta = 0;
    for (int k = 0; k < n_runs; k++) {
        if (a->indices) a->index = a->indices[k];
        if ((*st = lg_verify_args_property(a, net, prop)) != LG_OK) {
            if (*st == LG_ERR_ARG) return lg_cli_usage("verify", "%s", lg_errmsg()); /* a bad --index/--label value */
            return -1;
        }
        if (k == 0 && batch) { /* every index of the batch is checked before the first run */
            for (int i = 1; i < a->n_indices; i++)
                if (a->indices[i] < 0 || (size_t)a->indices[i] >= a->ds.n)
                    return lg_cli_usage("verify",
                                        "--index: expected integers in [0, %zu] (the test set of %s has %zu examples), "
                                        "got %ld",
                                        a->ds.n ? a->ds.n - 1 : 0, a->data, a->ds.n, a->indices[i]);
        }
        delta = 0;
        if (k > 0) *run = lg_runctx_start(o->timeout_s, o->seed, o->verbose, o->memory_mb); /* per instance */
        if (ref_path) {
            if ((*st = lg_verify_transfer(net, ref, prop, o, r, &delta)) != LG_OK) return -1;
        } else if ((*st = lg_verify_run_in(net, prop, o, run, r)) != LG_OK) {
            return -1;
        }
        if (batch && !json) lg_verify_print_line(a, r);
        else lg_verify_print(a, net, lg_solver_pick_name(&o->solver), r, json, ref_path, delta);
        fflush(stdout);
        r->net_note = lg_verify_net_note;
        if (out && (*st = lg_verify_write_result_path(r, out)) != LG_OK) return -1;
        n_verdict[r->verdict]++;
        n_mis += r->misclassified;
        n_timeout += r->verdict == LG_VERDICT_UNKNOWN && r->how.timed_out;
        seconds += r->seconds;
        lg_verify_report_free(r);
        lg_prop_free(prop);
    }
    if (batch && !json)
        printf("%d instances: %d robust, %d violated (%d of them misclassified), %d unknown (%d timeouts); %.2f s\n",
               n_runs, n_verdict[LG_VERDICT_ROBUST], n_verdict[LG_VERDICT_VIOLATED], n_mis,
               n_verdict[LG_VERDICT_UNKNOWN], n_timeout, seconds);
    return 0;
}

int lg_cmd_verify(int argc, char **argv)
{
    lg_verify_args a;
    lg_verify_args_default(&a);
    lg_verify_opts o = lg_verify_opts_default();
    const char *out = NULL, *ref_path = NULL, *z3_theory = "auto";
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hj:o:", lg_verify_long, NULL)) != -1) {
        int got = lg_verify_opt_search(c, optarg, &o, &z3_theory);
        if (got < 0) got = lg_verify_opt_bab(c, optarg, &o);
        if (got > 0) return got;
        if (got == 0) continue;
        switch (c) {
        case O_VNN: a.vnnlib = optarg; break;
        case O_DATA: a.data = optarg; break;
        case O_INPUT: a.input = optarg; break;
        case O_INDEX:
            if (lg_verify_args_index(&a, "verify", optarg)) return 2;
            break;
        case O_LABEL:
            if (lg_opt_int("verify", "label", optarg, 0, 1L << 20, &a.label)) return 2;
            break;
        case O_EPS:
            if (lg_opt_eps("verify", optarg, &a.eps)) return 2;
            break;
        case O_MARGIN:
            if (lg_opt_double("verify", "margin", optarg, -1e6, 1e6, &a.margin)) return 2;
            break;
        case 'o': out = optarg; break;
        case O_PROGRESS: lg_cli_progress_force(); break;
        case O_REF: ref_path = optarg, a.for_ref = 1; break;
        case O_JSON: json = 1; break;
        case O_VERBOSE: o.verbose = 2; break;
        case O_NOATK: o.attack = 0; break;
        case 'h': lg_verify_help(); return 0;
        default: return lg_cli_usage("verify", "unknown option");
        }
    }
    int rc = 2;
    if (optind != argc - 1) {
        rc = lg_cli_usage("verify", "expected exactly one network file");
        goto usage;
    }
    if (lg_verify_args_check("verify", &a)) goto usage;
    if (a.n_indices > 1 && out) {
        rc = lg_cli_usage("verify", "-o/--output writes the result file of one instance; give one --index");
        goto usage;
    }
    if (lg_cli_check_output(out) != LG_OK) {
        rc = lg_cli_usage("verify", "-o/--output: %s", lg_errmsg());
        goto usage;
    }
    if (!o.verbose && lg_cli_progress_enabled()) o.verbose = 1; /* progress lines only */
    if (o.solver.mode == LG_SOLVER_ONE && o.solver.row->theories) /* the back-end's row of that theory */
        o.solver.row = lg_solver_theory(o.solver.row, z3_theory);
    lg_net net, ref = {0};
    lg_prop prop = {0};
    lg_verify_report r = {0};
    rc = 1;
    /* the run's one deadline starts before the network and the property are read: their
     * time counts against --timeout (a run past it answers timeout) */
    double t0 = lg_now();
    lg_runctx run = lg_runctx_start(o.timeout_s, o.seed, o.verbose, o.memory_mb);
    lg_status st = lg_net_load_in(&net, argv[optind], &run);
    if (st == LG_ERR_TIMEOUT) { /* the import itself ran past the deadline */
        snprintf(a.instance, sizeof a.instance, "%s", a.vnnlib ? a.vnnlib : argv[optind]);
        lg_outcome_unknown(&r.how, LG_REASON_TIMEOUT, 1, "timeout");
        r.bound_method = "symbolic";
        r.seconds = lg_now() - t0;
        lg_verify_print(&a, NULL, lg_solver_pick_name(&o.solver), &r, json, ref_path, 0);
        if (out && (st = lg_verify_write_result_path(&r, out)) != LG_OK) goto fail;
        rc = 0;
        goto done;
    }
    if (st != LG_OK) {
        lg_verify_args_free(&a);
        return lg_cli_fail("verify", st);
    }
    snprintf(lg_verify_net_note, sizeof lg_verify_net_note, "%s", lg_onnx_import_note());
    lg_verify_net_rounded = lg_onnx_import_rounded();
    if (ref_path && (st = lg_net_load(&ref, ref_path)) != LG_OK) goto fail;
    int got = lg_verify_runs(&a, &net, &ref, ref_path, &o, &run, out, json, &prop, &r, &st);
    if (got < 0) goto fail;
    if (got > 0) {
        rc = got;
        goto done;
    }
    rc = 0;
fail:
    if (rc) rc = lg_cli_fail("verify", st);
done:
    lg_verify_report_free(&r);
    lg_prop_free(&prop);
    lg_net_free(&ref);
    lg_net_free(&net);
usage:
    lg_verify_args_free(&a);
    return rc;
}
