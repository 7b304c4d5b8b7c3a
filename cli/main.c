/* main.c — the lgelu executable: dispatch to one subcommand per file. */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/config.h"
#include "core/linalg.h"
#include "core/version.h"

static const lg_cmd lg_cmds[] = {
    {"info", lg_cmd_info, "print architecture, activations and λ per layer of a network"},
    {"eval", lg_cmd_eval, "test accuracy of a network on a dataset, or outputs for given inputs"},
    {"train", lg_cmd_train, "train a λ-GELU, GELU or ReLU network on Fashion-MNIST (optionally annealing λ)"},
    {"anneal", lg_cmd_anneal, "keep training a gelu/lgelu network while λ moves linearly to λ_target"},
    {"relu", lg_cmd_relu, "substitute ReLU for every gelu/lgelu activation (weights kept bit-identical)"},
    {"check", lg_cmd_check, "CI gate: exit 0 iff the certified ReLU-vs-reference deviation on every input ball is <= D"},
    {"bound", lg_cmd_bound, "certified bound on |f_ReLU(x) - f_ref(x)| globally and on eps-balls of test inputs"},
    {"export", lg_cmd_export, "write a network as ONNX"},
    {"verify", lg_cmd_verify, "verify a network (ReLU, smooth or mixed): robust, violated (re-checked) or unknown"},
    {"encode", lg_cmd_encode, "write a verification query as SMT-LIB 2 or CPLEX LP text"},
    {"cex", lg_cmd_cex, "re-check an external solver's model of an encoded query; write the VNN-COMP result"},
    {"bench", lg_cmd_bench, "run a VNN-COMP benchmark folder (instances.csv): result files and a summary"},
    {"study", lg_cmd_study, "run a study grid: train, substitute, certify and verify every instance (resumable)"},
    {"study-report", lg_cmd_study_report, "REPORT.md, CSVs and plots from a study directory"},
    {"study-merge", lg_cmd_study_merge, "join the directories of study shards (--shard K/N) into one"},
};

static void lg_main_usage(FILE *f)
{
    fprintf(f, "usage: lgelu <command> [options]\n\n"
               "lgelu trains λ-GELU networks, anneals them to ReLU and verifies them.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof lg_cmds / sizeof lg_cmds[0]; i++)
        fprintf(f, "  %-10s %s\n", lg_cmds[i].name, lg_cmds[i].summary);
    fprintf(f, "\n'lgelu <command> --help' explains every option of a command;\n"
               "'lgelu <command> --config FILE ...' reads option defaults from FILE (key = value lines,\n"
               "[command] sections; the command line overrides them; docs/USAGE.md \"Config files\");\n"
               "'lgelu --version' prints the version and the commit it was built from.\n\n%s",
            lg_cli_import_help);
}

int main(int argc, char **argv)
{
    /* One BLAS thread unless a command asks for more (train --threads): the
     * verification paths fork solver children and run their own worker
     * threads, and OpenBLAS's thread pool is neither fork- nor nesting-safe. */
    lg_blas_set_threads(1);
    if (argc < 2) {
        lg_main_usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        lg_main_usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("lgelu %s (commit %s)\n", lg_version(), lg_commit());
        return 0;
    }
    for (size_t i = 0; i < sizeof lg_cmds / sizeof lg_cmds[0]; i++)
        if (strcmp(argv[1], lg_cmds[i].name) == 0) {
            int n;
            char **v;
            int rc = lg_cli_config_apply(argc - 1, argv + 1, &n, &v); /* --config FILE: option defaults */
            if (rc) return rc;
            lg_cli_import_opts(&n, v); /* --drop-final-softmax, --round-weights: every network read */
            rc = lg_cmds[i].run(n, v);
            lg_cli_config_free();
            return rc;
        }
    fprintf(stderr, "lgelu: unknown command '%s'\n", argv[1]);
    lg_main_usage(stderr);
    return 2;
}
