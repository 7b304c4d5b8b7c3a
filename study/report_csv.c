/* report_csv.c — the CSV files of a study report (report.h). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "study/report_internal.h"

static FILE *lg_csv_open(lg_rep *R, const char *name, lg_status *st)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", R->dir, name);
    FILE *f = fopen(path, "w");
    if (!f) *st = lg_fail(LG_ERR_IO, "%s: %s", path, strerror(errno));
    return f;
}

static lg_status lg_csv_close(FILE *f, const char *name)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return lg_fail(LG_ERR_IO, "%s: write error", name);
    return LG_OK;
}

lg_status lg_rep_write_csv(lg_rep *R)
{
    lg_status st = LG_OK;
    size_t i;
    json_t *o;
    FILE *f = lg_csv_open(R, "networks.csv", &st);
    if (!f) return st;
    fprintf(f, "arch,regime,seed,hash,acc_before,acc_after,delta_global,lambda_final,train_seconds\n");
    json_array_foreach(R->nets, i, o)
    {
        fprintf(f, "\"%s\",%s,%.0f,%s,%.6f,%.6f,%.9g,", lg_rep_str(o, "arch"), lg_rep_str(o, "regime"),
                lg_rep_num(o, "seed"), lg_rep_str(o, "hash"), lg_rep_num(o, "acc_before"), lg_rep_num(o, "acc_after"),
                lg_rep_num(o, "delta_global"));
        json_t *l = json_object_get(o, "lambda_final");
        for (size_t k = 0; k < json_array_size(l); k++) {
            json_t *v = json_array_get(l, k);
            if (json_is_number(v)) fprintf(f, "%s%.6g", k ? ";" : "", json_number_value(v));
            else fprintf(f, "%s-", k ? ";" : "");
        }
        fprintf(f, ",%.1f\n", lg_rep_num(o, "train_seconds"));
    }
    if ((st = lg_csv_close(f, "networks.csv")) != LG_OK) return st;

    if (!(f = lg_csv_open(R, "modes.csv", &st))) return st;
    fprintf(f, "arch,regime,mode,instances,robust,violated,unknown,timeouts,median_s,total_s,backend_nodes,"
               "stage_is_backend\n");
    for (int g = 0; g < R->n_groups; g++)
        for (int m = 0; m < LG_STUDY_N_MODES; m++) {
            lg_rep_modest *S = &R->groups[g].mode[m];
            if (!S->n) continue;
            fprintf(f, "\"%s\",%s,%s,%d,%d,%d,%d,%d,%.4f,%.3f,%ld,%d\n", R->groups[g].arch, R->groups[g].regime,
                    lg_study_mode_name((lg_study_mode)m), S->n, S->robust, S->violated, S->unknown, S->timeouts,
                    S->median_s, S->total_s, S->nodes, S->stage_backend);
        }
    if ((st = lg_csv_close(f, "modes.csv")) != LG_OK) return st;

    if (!(f = lg_csv_open(R, "unstable.csv", &st))) return st;
    fprintf(f, "arch,regime,eps,instances,mean_unstable,mean_unstable_per_layer\n");
    for (int g = 0; g < R->n_groups; g++)
        for (int e = 0; e < R->n_eps; e++) {
            lg_rep_groupst *G = &R->groups[g];
            if (!G->unstable_n[e]) continue;
            fprintf(f, "\"%s\",%s,%g,%d,%.3f,", G->arch, G->regime, R->eps[e], G->unstable_n[e],
                    G->unstable_sum[e] / G->unstable_n[e]);
            for (int k = 0; k < G->n_layers && k < LG_REP_MAX_LAYERS; k++)
                fprintf(f, "%s%.3f", k ? ";" : "", G->unstable_layer[e][k] / G->unstable_n[e]);
            fprintf(f, "\n");
        }
    if ((st = lg_csv_close(f, "unstable.csv")) != LG_OK) return st;

    if (!(f = lg_csv_open(R, "transfer.csv", &st))) return st;
    fprintf(f, "arch,regime,delta_global,delta_ball_median,delta_ball_max,relu_robust,transfer_robust,"
               "false_robust,relu_cex,relu_cex_fooling_smooth\n");
    for (int g = 0; g < R->n_groups; g++) {
        lg_rep_groupst *G = &R->groups[g];
        fprintf(f, "\"%s\",%s,%.9g,%.9g,%.9g,%d,%d,%d,%d,%d\n", G->arch, G->regime, G->delta_global,
                G->delta_ball_median, G->delta_ball_max, G->relu_robust, G->transfer_robust, G->false_robust, G->cex_n,
                G->cex_fool);
    }
    if ((st = lg_csv_close(f, "transfer.csv")) != LG_OK) return st;

    if (!(f = lg_csv_open(R, "agreement.csv", &st))) return st;
    fprintf(f, "arch,regime,pairs_both_decided,disagreements\n");
    for (int g = 0; g < R->n_groups; g++)
        fprintf(f, "\"%s\",%s,%d,%d\n", R->groups[g].arch, R->groups[g].regime, R->groups[g].both_decided,
                R->groups[g].disagree);
    if ((st = lg_csv_close(f, "agreement.csv")) != LG_OK) return st;

    if (!(f = lg_csv_open(R, "lambda.csv", &st))) return st;
    fprintf(f, "arch,regime,seed,epoch,layer,lambda\n");
    json_array_foreach(R->nets, i, o)
    {
        json_t *log = json_object_get(o, "lambda_log");
        for (size_t r = 0; r < json_array_size(log); r++) {
            json_t *row = json_array_get(log, r);
            for (size_t k = 1; k < json_array_size(row); k++)
                fprintf(f, "\"%s\",%s,%.0f,%g,%zu,%.9g\n", lg_rep_str(o, "arch"), lg_rep_str(o, "regime"),
                        lg_rep_num(o, "seed"), json_number_value(json_array_get(row, 0)), k - 1,
                        json_number_value(json_array_get(row, k)));
        }
    }
    return lg_csv_close(f, "lambda.csv");
}
