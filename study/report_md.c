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
    "back-end only: Z3 on the same bounds, no quick proof, attack or branch and bound",
    "back-end only: GLPK MILP on the same bounds, no quick proof, attack or branch and bound",
    "the trained smooth net through its substitution (verify --ref: robust with margin 2 delta)",
    "the trained smooth net directly (its certified relaxations, α-CROWN, attack, branch and bound; DESIGN.md §3)"};

/* The theory under Z3 that ran in the z3 rows (verify --z3-theory), with its row count. */
static void lg_md_z3_theories(lg_rep *R, FILE *f)
{
    static const char *const what[][2] = {{"exact", "Z3's own linear arithmetic in exact rationals"},
                                          {"lp", "lgelu's certified LP as Z3's theory"},
                                          {"lp-lemmas", "lgelu's certified LP as lemmas"},
                                          {"none", "Z3 did not run: decided before it, e.g. a misclassified input"}};
    const char *k;
    json_t *v;
    int i = 0;
    fprintf(f, "; the theory that ran:");
    json_object_foreach(R->z3_theories, k, v)
    {
        const char *w = NULL;
        for (size_t j = 0; j < sizeof what / sizeof what[0]; j++)
            if (strcmp(k, what[j][0]) == 0) w = what[j][1];
        fprintf(f, "%s `%s`%s%s%s in %lld rows", i++ ? "," : "", k, w ? " (" : "", w ? w : "", w ? ")" : "",
                (long long)json_integer_value(v));
    }
    if (!i) fprintf(f, " none recorded");
}

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

/* 1 if mode statistics a beat b beyond run-to-run noise (report_internal.h): more instances decided by
 * the count rule, or, decided within it, a median time at least the ratio faster. */
static int lg_md_beats(const lg_rep_modest *a, const lg_rep_modest *b)
{
    int da = a->robust + a->violated, db = b->robust + b->violated;
    int noise = lg_rep_noise_count(a->n > b->n ? a->n : b->n);
    if (da - db >= noise) return 1;
    if (db - da >= noise || da == 0) return 0;
    return b->median_s >= LG_REP_NOISE_RATIO * fmax(a->median_s, 1e-9);
}

/* ", N of its ReLU-net `robust` verdicts contradicted on the smooth net" after a regime's name where the
 * smooth net has counterexamples to them: a regime's speed is no answer while its verdicts are wrong there. */
static void lg_md_contradicted(FILE *f, const lg_rep_groupst *G)
{
    if (G->smooth && G->false_robust)
        fprintf(f, " (but %d of its %d ReLU-net `robust` verdicts are contradicted by a smooth-net counterexample)",
                G->false_robust, G->relu_robust);
}

/* The regime of arch that beats every other one in mode m beyond noise, or −1. */
static int lg_md_winner(lg_rep *R, const char *arch, int m)
{
    for (int w = 0; w < R->n_groups; w++) {
        if (strcmp(R->groups[w].arch, arch) || !R->groups[w].mode[m].n) continue;
        int all = 1;
        for (int g = 0; g < R->n_groups && all; g++)
            if (g != w && !strcmp(R->groups[g].arch, arch) && R->groups[g].mode[m].n)
                all = lg_md_beats(&R->groups[w].mode[m], &R->groups[g].mode[m]);
        if (all) return w;
    }
    return -1;
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
            const char *mn = lg_study_mode_name((lg_study_mode)m);
            if (S->robust + S->violated == 0) {
                fprintf(f, "- %s: no regime had an instance decided (every instance unknown; %d timeouts of %d "
                           "for %s).\n",
                        mn, S->timeouts, S->n, R->groups[b].regime);
                continue;
            }
            int w = lg_md_winner(R, arch, m);
            if (w >= 0) {
                fprintf(f, "- %s: most instances decided by **%s**, beyond run-to-run noise (%d of %d, median %.3g s, "
                           "total %.1f s)",
                        mn, R->groups[w].regime, S->robust + S->violated, S->n, S->median_s, S->total_s);
                lg_md_contradicted(f, &R->groups[w]);
            } else { /* the regimes the best does not clearly beat: said as a tie, no bold */
                fprintf(f, "- %s: no clear winner; within run-to-run noise of each other:", mn);
                int k = 0;
                for (int g = 0; g < R->n_groups; g++) {
                    const lg_rep_modest *T = &R->groups[g].mode[m];
                    if (strcmp(R->groups[g].arch, arch) != 0 || !T->n || (g != b && lg_md_beats(S, T))) continue;
                    fprintf(f, "%s %s (%d of %d, median %.3g s)", k++ ? "," : "", R->groups[g].regime,
                            T->robust + T->violated, T->n, T->median_s);
                    lg_md_contradicted(f, &R->groups[g]);
                }
            }
            int listed = base >= 0 && (w >= 0 ? base == w : (base == b || !lg_md_beats(S, &R->groups[base].mode[m])));
            if (base >= 0 && !listed && R->groups[base].mode[m].n) {
                const lg_rep_modest *B = &R->groups[base].mode[m];
                fprintf(f, "; the direct swap gelu_swap decided %d of %d (median %.3g s, total %.1f s)",
                        B->robust + B->violated, B->n, B->median_s, B->total_s);
            }
            fprintf(f, ".\n");
        }
        for (int e = 0; e < R->n_eps; e++) {
            int b = lg_md_best(R, arch, lg_sc_unstable, e);
            if (b < 0) continue;
            double ub = R->groups[b].unstable_sum[e] / R->groups[b].unstable_n[e];
            int near = -1; /* another regime within the ratio: no winner */
            for (int g = 0; g < R->n_groups && near < 0; g++)
                if (g != b && !strcmp(R->groups[g].arch, arch) && R->groups[g].unstable_n[e] &&
                    R->groups[g].unstable_sum[e] / R->groups[g].unstable_n[e] < LG_REP_NOISE_RATIO * ub)
                    near = g;
            if (near < 0)
                fprintf(f, "- fewest unstable ReLUs at ε = %g: **%s** (%.1f per instance)", R->eps[e],
                        R->groups[b].regime, ub);
            else
                fprintf(f, "- fewest unstable ReLUs at ε = %g: %s (%.1f per instance), within run-to-run noise of %s "
                           "(%.1f)",
                        R->eps[e], R->groups[b].regime, ub, R->groups[near].regime,
                        R->groups[near].unstable_sum[e] / R->groups[near].unstable_n[e]);
            if (base >= 0 && base != b && base != near && R->groups[base].unstable_n[e])
                fprintf(f, "; gelu_swap %.1f", R->groups[base].unstable_sum[e] / R->groups[base].unstable_n[e]);
            fprintf(f, ".\n");
        }
        int b = lg_md_best(R, arch, lg_sc_acc, 0);
        if (b >= 0) {
            int near = -1;
            for (int g = 0; g < R->n_groups && near < 0; g++)
                if (g != b && !strcmp(R->groups[g].arch, arch) && isfinite(R->groups[g].acc_after) &&
                    100 * (R->groups[b].acc_after - R->groups[g].acc_after) < LG_REP_NOISE_ACC)
                    near = g;
            if (near < 0)
                fprintf(f, "- best accuracy after substitution: **%s** (%.2f%%, %.2f%% before).\n",
                        R->groups[b].regime, 100 * R->groups[b].acc_after, 100 * R->groups[b].acc_before);
            else
                fprintf(f, "- best accuracy after substitution: %s (%.2f%%, %.2f%% before), within run-to-run noise "
                           "of %s (%.2f%%).\n",
                        R->groups[b].regime, 100 * R->groups[b].acc_after, 100 * R->groups[b].acc_before,
                        R->groups[near].regime, 100 * R->groups[near].acc_after);
        }
        b = lg_md_best(R, arch, lg_sc_transfer, 0);
        if (b >= 0) {
            int near = -1;
            for (int g = 0; g < R->n_groups && near < 0; g++) {
                const lg_rep_groupst *G = &R->groups[g];
                if (g == b || strcmp(G->arch, arch) || !G->smooth || !G->relu_robust) continue;
                int n = G->relu_robust > R->groups[b].relu_robust ? G->relu_robust : R->groups[b].relu_robust;
                if (R->groups[b].transfer_robust - G->transfer_robust < lg_rep_noise_count(n)) near = g;
            }
            if (near < 0)
                fprintf(f, "- best transfer of ReLU-net `robust` to the smooth net: **%s** (%d of %d).\n",
                        R->groups[b].regime, R->groups[b].transfer_robust, R->groups[b].relu_robust);
            else
                fprintf(f, "- best transfer of ReLU-net `robust` to the smooth net: %s (%d of %d), within run-to-run "
                           "noise of %s (%d of %d).\n",
                        R->groups[b].regime, R->groups[b].transfer_robust, R->groups[b].relu_robust,
                        R->groups[near].regime, R->groups[near].transfer_robust, R->groups[near].relu_robust);
        }
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

/* The one-paragraph answer on top: per architecture, the best annealed regime (smooth, not gelu_swap, by
 * the auto mode) against the direct swap gelu_swap — speed (noise-aware), unstable ReLUs, transfer of
 * `robust` to the smooth net, accuracy — all from the numbers below. */
static void lg_md_answer(lg_rep *R, FILE *f)
{
    fprintf(f, "**Answer (generated from the tables below).**");
    for (int g0 = 0; g0 < R->n_groups; g0++) {
        const char *arch = R->groups[g0].arch;
        int first = 1;
        for (int h = 0; h < g0; h++) first &= strcmp(R->groups[h].arch, arch) != 0;
        if (!first) continue;
        int m = LG_STUDY_AUTO;
        while (m < LG_STUDY_N_MODES && !lg_rep_arch_has_mode(R, arch, (lg_study_mode)m)) m++;
        if (m == LG_STUDY_N_MODES) continue;
        const char *mn = lg_study_mode_name((lg_study_mode)m);
        int base = -1, ann = -1, mis = 0;
        double best = -INFINITY;
        for (int g = 0; g < R->n_groups; g++) {
            const lg_rep_groupst *G = &R->groups[g];
            if (strcmp(G->arch, arch)) continue;
            mis += G->mode[m].misclassified;
            if (!strcmp(G->regime, "gelu_swap")) base = g;
            else if (G->annealed && G->mode[m].n && lg_sc_decided(G, m) > best) best = lg_sc_decided(G, m), ann = g;
        }
        fprintf(f, " On %s", arch);
        if (base < 0 || ann < 0 || !R->groups[base].mode[m].n) {
            int w = lg_md_winner(R, arch, m), b = lg_md_best(R, arch, lg_sc_decided, m);
            const lg_rep_modest *S = &R->groups[b].mode[m];
            fprintf(f, ", `%s` decided the most instances with %s (%d of %d, median %.3g s)%s", mn,
                    R->groups[b].regime, S->robust + S->violated, S->n, S->median_s,
                    w >= 0 ? ", beyond run-to-run noise" : ", within run-to-run noise of another regime");
            lg_md_contradicted(f, &R->groups[b]);
            fprintf(f, ".");
        } else {
            const lg_rep_groupst *A = &R->groups[ann], *B = &R->groups[base];
            const lg_rep_modest *SA = &A->mode[m], *SB = &B->mode[m];
            int da = SA->robust + SA->violated, db = SB->robust + SB->violated;
            if (lg_md_beats(SA, SB))
                fprintf(f, ", annealing (best: %s) makes the ReLU net faster to verify: `%s` decided %d of %d against "
                           "the direct swap's %d of %d (median %.3g s vs %.3g s)",
                        A->regime, mn, da, SA->n, db, SB->n, SA->median_s, SB->median_s);
            else if (lg_md_beats(SB, SA))
                fprintf(f, ", annealing does not make the ReLU net faster to verify: `%s` decided %d of %d for the "
                           "direct swap gelu_swap against %d of %d for the best annealed regime %s (median %.3g s vs "
                           "%.3g s)",
                        mn, db, SB->n, da, SA->n, A->regime, SB->median_s, SA->median_s);
            else
                fprintf(f, ", annealing does not make the ReLU net faster to verify: `%s` decided %d of %d for the best "
                           "annealed regime %s and %d of %d for the direct swap gelu_swap, within run-to-run noise "
                           "(median %.3g s vs %.3g s)",
                        mn, da, SA->n, A->regime, db, SB->n, SA->median_s, SB->median_s);
            if (R->n_eps && A->unstable_n[0] && B->unstable_n[0])
                fprintf(f, "; unstable ReLUs per instance at ε = %g: %.1f vs %.1f", R->eps[0],
                        A->unstable_sum[0] / A->unstable_n[0], B->unstable_sum[0] / B->unstable_n[0]);
            if (A->relu_robust || B->relu_robust)
                fprintf(f, "; ReLU `robust` verdicts that transfer to the smooth net: %d of %d vs %d of %d",
                        A->transfer_robust, A->relu_robust, B->transfer_robust, B->relu_robust);
            if (A->false_robust || B->false_robust)
                fprintf(f, "; contradicted by a smooth-net counterexample: %d vs %d", A->false_robust, B->false_robust);
            fprintf(f, "; accuracy after substitution %.2f%% vs %.2f%% (before: %.2f%% vs %.2f%%).",
                    100 * A->acc_after, 100 * B->acc_after, 100 * A->acc_before, 100 * B->acc_before);
        }
        if (mis) fprintf(f, " %d `%s` instances were misclassified already (violated, counted apart).", mis, mn);
    }
    fprintf(f, " Run-to-run noise: docs/STUDY.md \"Reading the report\".\n\n");
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
    lg_md_answer(R, f);
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
    for (int m = 0; m < LG_STUDY_N_MODES; m++) {
        if (!R->has_mode[m]) continue;
        fprintf(f, "- `%s`: %s", lg_study_mode_name((lg_study_mode)m), lg_md_modes_help[m]);
        if (m == LG_STUDY_Z3) lg_md_z3_theories(R, f);
        fprintf(f, "\n");
    }
    fprintf(f, "\nR/V/U = robust / violated / unknown (timeouts included in unknown); times are seconds per "
               "instance. Accuracies are means over seeds on the whole test set; Δ is the certified bound on "
               "‖f_ReLU − f_smooth‖∞ (global: over the input box [0,1]^n; ball: on each ε-ball, median).\n\n");
    fprintf(f, "## Summary\n\n");
    lg_md_summary(R, f);
    fprintf(f, "\n## Verdicts and time per mode\n\nviolated includes the misclassified instances (the clean input is "
               "already a counterexample; nothing else ran), also counted apart as ERAN and alpha-beta-CROWN do.\n\n"
               "| arch | regime | mode | instances | robust | violated | of which misclassified | unknown "
               "(timeouts) | median s | total s | back-end nodes | stage = back-end |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int g = 0; g < R->n_groups; g++)
        for (int m = 0; m < LG_STUDY_N_MODES; m++) {
            lg_rep_modest *S = &R->groups[g].mode[m];
            if (!S->n) continue;
            char sb[32] = "-";
            if (m == LG_STUDY_Z3 || m == LG_STUDY_GLPK) snprintf(sb, sizeof sb, "%d", S->stage_backend);
            fprintf(f, "| %s | %s | %s | %d | %d | %d | %d | %d (%d) | %.3g | %.1f | %ld | %s |\n", R->groups[g].arch,
                    R->groups[g].regime, lg_study_mode_name((lg_study_mode)m), S->n, S->robust, S->violated,
                    S->misclassified, S->unknown, S->timeouts, S->median_s, S->total_s, S->nodes, sb);
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
               "Every count is over the same rows: the `auto` mode's, on the ReLU net. auto robust = those rows "
               "robust; of which smooth robust = the smooth net is proved robust too (`smooth` mode, margin 2Δ); "
               "of which smooth violated = the smooth net has a counterexample (a contradicted ReLU `robust`, the "
               "false-robust count). auto violated = those rows violated; of which fooling smooth = the ReLU "
               "net's counterexample also fools the smooth net (certified by the witness gate).\n\n"
               "| arch | regime | Δ global | Δ ball median | Δ ball max | auto robust | of which smooth robust | "
               "of which smooth violated | auto violated | of which fooling smooth |\n"
               "|---|---|---|---|---|---|---|---|---|---|\n");
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
