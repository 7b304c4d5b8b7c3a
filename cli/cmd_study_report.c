/* cmd_study_report.c — `lgelu study-report DIR` and `lgelu study-merge OUT DIR...` (study/report.h). */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "study/report.h"

int lg_cmd_study_report(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("usage: lgelu study-report DIR\n\n"
               "Write DIR/REPORT.md (summary, verdicts and time per mode, transfer to the smooth network, solver\n"
               "agreement, a generated reading), DIR/*.csv and DIR/plots/ (gnuplot PNG and SVG: cactus plot per\n"
               "architecture and mode, accuracy, unstable ReLUs, lambda over training) from the results of\n"
               "`lgelu study`, and print the summary table.\n");
        return 0;
    }
    if (argc != 2 || argv[1][0] == '-') return lg_cli_usage("study-report", "expected exactly one study directory");
    lg_status st = lg_study_report(argv[1], stdout);
    return st == LG_OK ? 0 : lg_cli_fail("study-report", st);
}

int lg_cmd_study_merge(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("usage: lgelu study-merge OUT DIR...\n\n"
               "Join the results.jsonl and networks.jsonl of the shard directories DIR... (from\n"
               "`lgelu study GRID --shard K/N --out DIR`) into OUT: one row per instance; rows OUT already\n"
               "has are kept; the same instance with different verdicts in two inputs is an error.\n"
               "Then `lgelu study-report OUT`.\n");
        return 0;
    }
    if (argc < 3) return lg_cli_usage("study-merge", "expected OUT and at least one shard directory");
    long n = 0;
    lg_status st = lg_study_merge(argv[1], (const char *const *)(argv + 2), argc - 2, &n);
    if (st != LG_OK) return lg_cli_fail("study-merge", st);
    printf("study-merge: %ld instance rows in %s/results.jsonl (from %d directories)\n", n, argv[1], argc - 2);
    return 0;
}
