/* report_md.c — REPORT.md and the summary table of a study report (report.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/arch.h"
#include "core/net.h"
#include "study/report_internal.h"

/* Input dimension of an architecture name ("784,256,10", "1x28x28,c8k3s2,10", "784,r256x2,10"); 0 if unparsable. */
static int lg_rep_arch_inputs(const char *arch)
{
    lg_arch a;
    if (lg_arch_parse(&a, arch) != LG_OK) return 0;
    int n = a.n_in;
    lg_arch_free(&a);
    return n;
}

static const char *const lg_md_modes_help[LG_STUDY_N_MODES] = {
    "full pipeline on the ReLU net (bounds, attack, branch and bound, GLPK then Z3)",
    "back-end only: Z3 (exact rationals) on the same bounds, no quick proof, attack or branch and bound",
    "back-end only: GLPK MILP on the same bounds, no quick proof, attack or branch and bound",
    "the trained smooth net through its substitution (verify --ref: robust with margin 2 delta)",
    "the trained smooth net directly (its certified relaxations, α-CROWN, attack, branch and bound; DESIGN.md §3)"};

/* "R/V/U" cell. */
static void lg_md_rvu(char *b, size_t n, const lg_rep_modest *S)
{
    if (!S->n) snprintf(b, n, "-");
    else snprintf(b, n, "%d/%d/%d %.3gs", S->robust, S->violated, S->unknown, S->median_s);
}

/* The two routes to the smooth net side by side: per group that ran both
 * `smooth` (ReLU substitution + 2Δ margin) and `direct`, how many
 * instances each decided and its median seconds. */
static void lg_md_direct(lg_rep *R, FILE *f)
{
    int any = 0;
    for (int g = 0; g < R->n_groups; g++) any |= R->groups[g].mode[LG_STUDY_SMOOTH].n && R->groups[g].mode[LG_STUDY_DIRECT].n;
    if (!any) return;
    fprintf(f, "\n## The smooth network: through its substitution (`smooth`) or directly (`direct`)\n\n"
               "Decided = robust + violated, both statements about the trained smooth net.\n\n"
               "| arch | regime | instances | smooth decided | direct decided | smooth median s | direct median s |\n"
               "|---|---|---|---|---|---|---|\n");
    for (int g = 0; g < R->n_groups; g++) {
        const lg_rep_groupst *G = &R->groups[g];
        const lg_rep_modest *S = &G->mode[LG_STUDY_SMOOTH], *D = &G->mode[LG_STUDY_DIRECT];
        if (!S->n || !D->n) continue;
        fprintf(f, "| %s | %s | %d | %d | %d | %.3g | %.3g |\n", G->arch, G->regime, D->n, S->robust + S->violated,
                D->robust + D->violated, S->median_s, D->median_s);
    }
}

/* The summary table (markdown; also what the CLI prints). */
static void lg_md_summary(lg_rep *R, FILE *f)
{
    fprintf(f, "| arch | regime | acc %% | ReLU acc %% | Δ global | Δ ball (median) |");
    for (int e = 0; e < R->n_eps; e++) fprintf(f, " unstable ε=%g |", R->eps[e]);
    for (int m = 0; m < LG_STUDY_N_MODES; m++)
        if (R->has_mode[m]) fprintf(f, " %s R/V/U median |", lg_study_mode_name((lg_study_mode)m));
    fprintf(f, "\n|---|---|---|---|---|---|");
    for (int e = 0; e < R->n_eps; e++) fprintf(f, "---|");
    for (int m = 0; m < LG_STUDY_N_MODES; m++)
        if (R->has_mode[m]) fprintf(f, "---|");
    fprintf(f, "\n");
    for (int g = 0; g < R->n_groups; g++) {
        lg_rep_groupst *G = &R->groups[g];
        fprintf(f, "| %s | %s | %.2f | %.2f | %.3g | %.3g |", G->arch, G->regime, 100 * G->acc_before,
                100 * G->acc_after, G->delta_global, G->delta_ball_median);
        for (int e = 0; e < R->n_eps; e++)
            fprintf(f, " %.1f |", G->unstable_n[e] ? G->unstable_sum[e] / G->unstable_n[e] : NAN);
        for (int m = 0; m < LG_STUDY_N_MODES; m++) {
            if (!R->has_mode[m]) continue;
            char c[64];
            lg_md_rvu(c, sizeof c, &G->mode[m]);
            fprintf(f, " %s |", c);
        }
        fprintf(f, "\n");
    }
}

/* Index of the best group of arch by score (higher is better); −1 if none. */
static int lg_md_best(lg_rep *R, const char *arch, double (*score)(const lg_rep_groupst *, int), int arg)
{
    int best = -1;
    double bs = -INFINITY;
    for (int g = 0; g < R->n_groups; g++) {
        if (strcmp(R->groups[g].arch, arch) != 0) continue;
        double s = score(&R->groups[g], arg);
        if (isfinite(s) && s > bs) bs = s, best = g;
    }
    return best;
}

static double lg_sc_decided(const lg_rep_groupst *G, int m)
{
    const lg_rep_modest *S = &G->mode[m];
    if (!S->n) return NAN;
    /* decided fraction first, then less total time */
    return (double)(S->robust + S->violated) / S->n - 1e-9 * S->total_s;
}
static double lg_sc_unstable(const lg_rep_groupst *G, int e)
{
    return G->unstable_n[e] ? -G->unstable_sum[e] / G->unstable_n[e] : NAN;
}
static double lg_sc_acc(const lg_rep_groupst *G, int unused)
{
    (void)unused;
    return G->acc_after;
}
static double lg_sc_transfer(const lg_rep_groupst *G, int unused)
{
    (void)unused;
    return G->relu_robust && G->smooth ? (double)G->transfer_robust / G->relu_robust : NAN;
}

static void lg_md_reading(lg_rep *R, FILE *f)
{
    fprintf(f, "## Reading (generated)\n\n");
    for (int g0 = 0; g0 < R->n_groups; g0++) {
        const char *arch = R->groups[g0].arch;
        int first = 1;
        for (int h = 0; h < g0; h++) first &= strcmp(R->groups[h].arch, arch) != 0;
        if (!first) continue;
        fprintf(f, "**%s**\n\n", arch);
        int base = -1;
        for (int g = 0; g < R->n_groups; g++)
            if (strcmp(R->groups[g].arch, arch) == 0 && strcmp(R->groups[g].regime, "gelu_swap") == 0) base = g;
        for (int m = 0; m < LG_STUDY_N_MODES; m++) {
            if (!lg_rep_arch_has_mode(R, arch, (lg_study_mode)m)) continue;
            int b = lg_md_best(R, arch, lg_sc_decided, m);
            if (b < 0) continue;
            const lg_rep_modest *S = &R->groups[b].mode[m];
            /* regimes that decided the same fraction: a tie is said as one, with the spread of times */
            int n_reg = 0, n_tie = 0, fast = -1, slow = -1;
            double frac = S->n ? (double)(S->robust + S->violated) / S->n : 0.0;
            for (int g = 0; g < R->n_groups; g++) {
                const lg_rep_modest *T = &R->groups[g].mode[m];
                if (strcmp(R->groups[g].arch, arch) != 0 || !T->n) continue;
                n_reg++;
                if ((double)(T->robust + T->violated) / T->n != frac) continue;
                n_tie++;
                if (fast < 0 || T->median_s < R->groups[fast].mode[m].median_s) fast = g;
                if (slow < 0 || T->median_s > R->groups[slow].mode[m].median_s) slow = g;
            }
            if (n_tie > 1 && S->robust + S->violated > 0) {
                fprintf(f, "- %s: %s %d regimes decided %.1f%% of their instances; median seconds per instance from "
                           "%.3g (**%s**) to %.3g (%s)",
                        lg_study_mode_name((lg_study_mode)m), n_tie == n_reg ? "all" : "a tie of", n_tie,
                        100.0 * frac, R->groups[fast].mode[m].median_s, R->groups[fast].regime,
                        R->groups[slow].mode[m].median_s, R->groups[slow].regime);
                if (base >= 0 && base != fast && base != slow) {
                    const lg_rep_modest *B = &R->groups[base].mode[m];
                    fprintf(f, "; the direct swap gelu_swap decided %d of %d (median %.3g s)", B->robust + B->violated,
                            B->n, B->median_s);
                }
                fprintf(f, ".\n");
                continue;
            }
            if (S->robust + S->violated == 0) {
                fprintf(f, "- %s: no regime had an instance decided (every instance unknown; %d timeouts of %d "
                           "for %s).\n",
                        lg_study_mode_name((lg_study_mode)m), S->timeouts, S->n, R->groups[b].regime);
                continue;
            }
            fprintf(f, "- %s: most instances decided by **%s** (%d of %d, median %.3g s, total %.1f s)",
                    lg_study_mode_name((lg_study_mode)m), R->groups[b].regime, S->robust + S->violated, S->n,
                    S->median_s, S->total_s);
            if (base >= 0 && base != b) {
                const lg_rep_modest *B = &R->groups[base].mode[m];
                fprintf(f, "; the direct swap gelu_swap decided %d of %d (median %.3g s, total %.1f s)",
                        B->robust + B->violated, B->n, B->median_s, B->total_s);
            }
            fprintf(f, ".\n");
        }
        for (int e = 0; e < R->n_eps; e++) {
            int b = lg_md_best(R, arch, lg_sc_unstable, e);
            if (b < 0) continue;
            fprintf(f, "- fewest unstable ReLUs at ε = %g: **%s** (%.1f per instance)", R->eps[e],
                    R->groups[b].regime, R->groups[b].unstable_sum[e] / R->groups[b].unstable_n[e]);
            if (base >= 0 && base != b && R->groups[base].unstable_n[e])
                fprintf(f, "; gelu_swap %.1f", R->groups[base].unstable_sum[e] / R->groups[base].unstable_n[e]);
            fprintf(f, ".\n");
        }
        int b = lg_md_best(R, arch, lg_sc_acc, 0);
        if (b >= 0)
            fprintf(f, "- best accuracy after substitution: **%s** (%.2f%%, %.2f%% before).\n", R->groups[b].regime,
                    100 * R->groups[b].acc_after, 100 * R->groups[b].acc_before);
        b = lg_md_best(R, arch, lg_sc_transfer, 0);
        if (b >= 0)
            fprintf(f, "- best transfer of ReLU-net `robust` to the smooth net: **%s** (%d of %d).\n",
                    R->groups[b].regime, R->groups[b].transfer_robust, R->groups[b].relu_robust);
        for (int g = 0; g < R->n_groups; g++) {
            lg_rep_groupst *G = &R->groups[g];
            if (strcmp(G->arch, arch) != 0 || !G->smooth) continue;
            if (G->false_robust || G->cex_fool < G->cex_n)
                fprintf(f, "- %s: %d ReLU-net `robust` verdicts contradicted by a smooth-net counterexample; %d of %d "
                           "ReLU-net counterexamples fool the smooth net.\n",
                        G->regime, G->false_robust, G->cex_fool, G->cex_n);
        }
        fprintf(f, "\n");
    }
    if (R->n_disagree)
        fprintf(f, "**Solver disagreements (robust vs violated on the same ReLU net): %d — a soundness bug, see "
                   "below.**\n\n", R->n_disagree);
    else
        fprintf(f, "No two ReLU-net modes disagreed (robust vs violated) on any instance.\n\n");
}

lg_status lg_rep_write_md(lg_rep *R, FILE *out)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/REPORT.md", R->dir);
    FILE *f = fopen(path, "w");
    if (!f) return lg_fail(LG_ERR_IO, "%s: %s", path, strerror(errno));
    fprintf(f, "# Study report\n\nGenerated by `lgelu study-report` from `results.jsonl` (%zu instance rows) and "
               "`networks.jsonl` (%zu networks).\n\n",
            json_array_size(R->rows), json_array_size(R->nets));
    fprintf(f, "Made by:");
    const char *vk;
    json_t *vv;
    int nv = 0;
    json_object_foreach(R->versions, vk, vv) fprintf(f, "%s %s (%lld rows of results.jsonl)", nv++ ? ";" : "", vk,
                                                     (long long)json_integer_value(vv));
    fprintf(f, ".%s\n\n", nv > 1 ?  " **Rows of more than one build are mixed here.**" : "");
    if (R->n_superseded || R->n_nets_superseded)
        fprintf(f, "%d instance rows and %d network rows were superseded by a later row of the same instance or "
                   "network (a `--force` re-run with another grid or version); only the latest of each is "
                   "counted.\n\n",
                R->n_superseded, R->n_nets_superseded);
    fprintf(f, "Modes:\n");
    for (int m = 0; m < LG_STUDY_N_MODES; m++)
        if (R->has_mode[m]) fprintf(f, "- `%s`: %s\n", lg_study_mode_name((lg_study_mode)m), lg_md_modes_help[m]);
    fprintf(f, "\nR/V/U = robust / violated / unknown (timeouts included in unknown); times are seconds per "
               "instance. Accuracies are means over seeds on the whole test set; Δ is the certified bound on "
               "‖f_ReLU − f_smooth‖∞ (global: over the input box [0,1]^n; ball: on each ε-ball, median).\n\n");
    fprintf(f, "## Summary\n\n");
    lg_md_summary(R, f);
    fprintf(f, "\n## Verdicts and time per mode\n\n| arch | regime | mode | instances | robust | violated | unknown "
               "(timeouts) | median s | total s | back-end nodes | stage = back-end |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int g = 0; g < R->n_groups; g++)
        for (int m = 0; m < LG_STUDY_N_MODES; m++) {
            lg_rep_modest *S = &R->groups[g].mode[m];
            if (!S->n) continue;
            char sb[32] = "-";
            if (m == LG_STUDY_Z3 || m == LG_STUDY_GLPK) snprintf(sb, sizeof sb, "%d", S->stage_backend);
            fprintf(f, "| %s | %s | %s | %d | %d | %d | %d (%d) | %.3g | %.1f | %ld | %s |\n", R->groups[g].arch,
                    R->groups[g].regime, lg_study_mode_name((lg_study_mode)m), S->n, S->robust, S->violated,
                    S->unknown, S->timeouts, S->median_s, S->total_s, S->nodes, sb);
        }
    lg_md_direct(R, f);
    /* per architecture, every regime together: how each mode's time grows with the problem */
    int n_arch = 0;
    for (int g0 = 0; g0 < R->n_groups; g0++) {
        int first = 1;
        for (int h = 0; h < g0; h++) first &= strcmp(R->groups[h].arch, R->groups[g0].arch) != 0;
        n_arch += first;
    }
    double *tb = n_arch > 1 ? malloc((json_array_size(R->rows) + 1) * sizeof *tb) : NULL;
    if (tb) {
        fprintf(f, "\n## Time per architecture and mode\n\nEvery regime together: decided / instances (timeouts), "
                   "median and mean seconds per instance (a timeout counts its full time); the architectures in grid "
                   "order, so an input-size sweep reads as how each back-end's time grows with the problem.\n\n"
                   "| arch | inputs |");
        for (int m = 0; m < LG_STUDY_N_MODES; m++)
            if (R->has_mode[m]) fprintf(f, " %s decided | median s | mean s |", lg_study_mode_name((lg_study_mode)m));
        fprintf(f, "\n|---|---|");
        for (int m = 0; m < LG_STUDY_N_MODES; m++)
            if (R->has_mode[m]) fprintf(f, "---|---|---|");
        fprintf(f, "\n");
        for (int g0 = 0; g0 < R->n_groups; g0++) {
            const char *arch = R->groups[g0].arch;
            int first = 1;
            for (int h = 0; h < g0; h++) first &= strcmp(R->groups[h].arch, arch) != 0;
            if (!first) continue;
            fprintf(f, "| %s | %d |", arch, lg_rep_arch_inputs(arch));
            for (int m = 0; m < LG_STUDY_N_MODES; m++) {
                if (!R->has_mode[m]) continue;
                int n, dec, to;
                double med, mean;
                lg_rep_arch_mode_stats(R, arch, (lg_study_mode)m, tb, &n, &dec, &to, &med, &mean);
                if (n) fprintf(f, " %d / %d (%d) | %.3g | %.3g |", dec, n, to, med, mean);
                else fprintf(f, " - | - | - |");
            }
            fprintf(f, "\n");
        }
        free(tb);
    }
    fprintf(f, "\n## Transfer to the smooth network (question 2)\n\n"
               "ReLU robust = `auto` rows robust; of which the smooth net is proved robust (`smooth` mode, margin "
               "2Δ), and of which the smooth net has a counterexample (`smooth` mode violated: a contradicted "
               "ReLU `robust`, the false-robust count). ReLU counterexamples = violated rows of auto/z3/glpk; "
               "fooling = also misclassified by the smooth net (double forward pass).\n\n"
               "| arch | regime | Δ global | Δ ball median | Δ ball max | ReLU robust | transfers | false robust | "
               "ReLU cex | fooling smooth |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (int g = 0; g < R->n_groups; g++) {
        lg_rep_groupst *G = &R->groups[g];
        if (!G->smooth) {
            fprintf(f, "| %s | %s | - | - | - | %d | (same net) | - | %d | - |\n", G->arch, G->regime, G->relu_robust,
                    G->cex_n);
            continue;
        }
        fprintf(f, "| %s | %s | %.3g | %.3g | %.3g | %d | %d | %d | %d | %d |\n", G->arch, G->regime, G->delta_global,
                G->delta_ball_median, G->delta_ball_max, G->relu_robust, G->transfer_robust, G->false_robust,
                G->cex_n, G->cex_fool);
    }
    fprintf(f, "\n## Solver agreement\n\nPairs of ReLU-net modes (auto, z3, glpk) that both decided an instance, and "
               "how many of them disagree.\n\n| arch | regime | pairs decided | disagreements |\n|---|---|---|---|\n");
    for (int g = 0; g < R->n_groups; g++)
        fprintf(f, "| %s | %s | %d | %d |\n", R->groups[g].arch, R->groups[g].regime, R->groups[g].both_decided,
                R->groups[g].disagree);
    for (int i = 0; i < R->n_disagree; i++) fprintf(f, "%s- %s\n", i ? "" : "\n", R->disagree[i]);
    fprintf(f, "\n");
    lg_md_reading(R, f);
    fprintf(f, "## Plots\n\n");
    if (!R->plots)
        fprintf(f, "gnuplot was not available or failed (see plots/gnuplot.log); the data and scripts are in "
                   "plots/*.dat and plots/*.gp.\n\n");
    for (int g0 = 0; g0 < R->n_groups; g0++) {
        const char *arch = R->groups[g0].arch;
        int first = 1;
        for (int h = 0; h < g0; h++) first &= strcmp(R->groups[h].arch, arch) != 0;
        if (!first) continue;
        char tag[LG_STUDY_NAME];
        snprintf(tag, sizeof tag, "%s", arch);
        for (char *p = tag; *p; p++)
            if (*p == ',') *p = '-';
        for (int m = 0; m < LG_STUDY_N_MODES; m++)
            if (lg_rep_arch_has_mode(R, arch, (lg_study_mode)m))
                fprintf(f, "![cactus %s %s](plots/cactus_%s_%s.png)\n", arch, lg_study_mode_name((lg_study_mode)m), tag,
                        lg_study_mode_name((lg_study_mode)m));
        fprintf(f, "![accuracy %s](plots/accuracy_%s.png)\n![unstable %s](plots/unstable_%s.png)\n"
                   "![unstable ReLUs vs seconds %s](plots/unstable_time_%s.png)\n",
                arch, tag, arch, tag, arch, tag);
        int smooth = 0;
        for (int g = 0; g < R->n_groups; g++) smooth |= !strcmp(R->groups[g].arch, arch) && R->groups[g].smooth;
        if (smooth) fprintf(f, "![lambda %s](plots/lambda_%s.png)\n", arch, tag);
        fprintf(f, "\n");
    }
    if (n_arch > 1) fprintf(f, "![time per architecture](plots/arch_time.png)\n\n");
    fprintf(f, "CSV files: networks.csv, modes.csv, unstable.csv, transfer.csv, agreement.csv, lambda.csv.\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return lg_fail(LG_ERR_IO, "%s: write error", path);
    if (out) {
        fprintf(out, "\n");
        lg_md_summary(R, out);
        fprintf(out, "\nR/V/U = robust/violated/unknown, median seconds per instance. Report: %s\n", path);
    }
    return LG_OK;
}
