/* cmd_study.c — `lgelu study GRID`: run a study grid in-process (study/run.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "study/grid.h"
#include "study/run.h"

static void lg_study_help(void)
{
    printf("usage: lgelu study GRID [--out DIR] [-j N] [--shard K/N] [--cache DIR] [--force] [--quiet]\n\n"
           "Run the study described by the grid file GRID (INI; see benchmarks/small.ini and README \"The\n"
           "study\"): train or reuse every network (cached by a hash of its training options), substitute\n"
           "ReLU, certify the deviation, and verify every (network, test input, eps, mode) instance.\n"
           "Modes: auto (the full pipeline), z3 and glpk (back-end only: same bounds, no quick proof, no\n"
           "attack, no branch and bound), smooth (the trained smooth net, as `verify --ref`).\n"
           "One JSON line per finished instance is appended to DIR/results.jsonl (networks to\n"
           "DIR/networks.jsonl); re-running the same command resumes and never duplicates a row. A row's\n"
           "key holds the network's training hash, the verification settings and lgelu's version, so rows of\n"
           "different recipes never share one; a re-run whose grid differs from DIR/grid.ini, or into rows\n"
           "of another lgelu version, is refused, naming what changed.\n\n"
           "options:\n"
           "  --out DIR      output directory (default out/study)\n"
           "  -j N           worker threads (default 1)\n"
           "  --shard K/N    run only shard K of N (instance p belongs to shard p mod N + 1); join the\n"
           "                 shards' directories with `lgelu study-merge`\n"
           "  --cache DIR    network cache (default DIR/nets; shards on a shared file system may share one)\n"
           "  --force        run although DIR/grid.ini or the rows' version differ: adds only the rows whose\n"
           "                 key is new (the earlier grid is kept as DIR/grid-N.ini; the report counts the\n"
           "                 latest row of each instance)\n"
           "  --quiet        no per-network lines\n"
           "  -h, --help     show this help\n\n"
           "Then: `lgelu study-report DIR` writes DIR/REPORT.md, CSVs and plots.\n");
}

int lg_cmd_study(int argc, char **argv)
{
    enum { O_OUT = 256, O_SHARD, O_CACHE, O_QUIET, O_FORCE };
    static const struct option lo[] = {{"out", required_argument, 0, O_OUT},     {"shard", required_argument, 0, O_SHARD},
                                       {"cache", required_argument, 0, O_CACHE}, {"quiet", no_argument, 0, O_QUIET},
                                       {"force", no_argument, 0, O_FORCE},
                                       {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
    lg_study_opts o = lg_study_opts_default();
    o.progress = lg_cli_progress_enabled();
    o.log = stdout;
    int c;
    long v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hj:", lo, NULL)) != -1) {
        switch (c) {
        case O_OUT: o.out_dir = optarg; break;
        case O_CACHE: o.cache_dir = optarg; break;
        case O_QUIET: o.log = NULL; break;
        case O_FORCE: o.force = 1; break;
        case O_SHARD:
            if (lg_study_shard_parse(optarg, &o.shard_k, &o.shard_n) != 0)
                return lg_cli_usage("study", "--shard: expected K/N with 1 <= K <= N, got '%s'", optarg);
            break;
        case 'j':
            if (lg_opt_int("study", "j", optarg, 1, 256, &v)) return 2;
            o.jobs = (int)v;
            break;
        case 'h': lg_study_help(); return 0;
        default: return lg_cli_usage("study", "unknown option");
        }
    }
    if (optind != argc - 1) return lg_cli_usage("study", "expected exactly one grid file");
    lg_study_grid g;
    lg_status st = lg_study_grid_load(&g, argv[optind]);
    if (st != LG_OK) return lg_cli_fail("study", st);
    lg_study_stats s;
    o.grid_path = argv[optind];
    st = lg_study_run(&g, &o, &s);
    lg_study_grid_free(&g);
    if (st != LG_OK) return lg_cli_fail("study", st);
    printf("study: shard %d/%d: %ld instances, %ld already done, %ld run now in %.1f s (%d networks); results in "
           "%s/results.jsonl\n",
           o.shard_k, o.shard_n, s.n_instances, s.n_skipped, s.n_run, s.seconds, s.n_nets, o.out_dir);
    return 0;
}
