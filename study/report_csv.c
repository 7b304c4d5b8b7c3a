/* report_csv.c — the CSV files of a study report (report.h). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "core/csv.h"
#include "core/json.h"
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

/* Write the finished row r to f and empty it for the next one (core/csv.h:
 * RFC 4180 quoting, shortest round-trip numbers). */
static void lg_rep_row(FILE *f, lg_csv_row *r)
{
    const char *line = lg_csv_end(r);
    if (line) fputs(line, f);
    else fputs("\n", f); /* out of memory: an empty line rather than a partial one */
    lg_csv_row_clear(r);
}

/* values joined by ';' into one field */
static void lg_rep_list(lg_csv_row *r, const double *v, size_t n)
{
    char buf[4096] = "", num[LG_NUM_BUFSIZE];
    size_t len = 0;
    for (size_t k = 0; k < n && len + LG_NUM_BUFSIZE + 2 < sizeof buf; k++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", k ? ";" : "", lg_num_shortest(num, v[k]));
    lg_csv_str(r, buf);
}

lg_status lg_rep_write_csv(lg_rep *R)
{
    lg_status st = LG_OK;
    size_t i;
    json_t *o;
    lg_csv_row r = {0};
    FILE *f = lg_csv_open(R, "networks.csv", &st);
    if (!f) return st;
    fprintf(f, "arch,regime,seed,hash,acc_before,acc_after,delta_global,lambda_final,train_seconds\n");
    json_array_foreach(R->nets, i, o)
    {
        lg_csv_str(&r, lg_rep_str(o, "arch"));
        lg_csv_str(&r, lg_rep_str(o, "regime"));
        lg_csv_num(&r, lg_rep_num(o, "seed"));
        lg_csv_str(&r, lg_rep_str(o, "hash"));
        lg_csv_num(&r, lg_rep_num(o, "acc_before"));
        lg_csv_num(&r, lg_rep_num(o, "acc_after"));
        lg_csv_num(&r, lg_rep_num(o, "delta_global"));
        json_t *l = json_object_get(o, "lambda_final");
        char buf[4096] = "", num[LG_NUM_BUFSIZE];
        size_t len = 0;
        for (size_t k = 0; k < json_array_size(l) && len + LG_NUM_BUFSIZE + 2 < sizeof buf; k++) {
            json_t *x = json_array_get(l, k);
            const char *t = json_is_number(x) ? lg_num_shortest(num, json_number_value(x)) : "-";
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", k ? ";" : "", t);
        }
        lg_csv_str(&r, buf);
        lg_csv_num(&r, lg_rep_num(o, "train_seconds"));
        lg_rep_row(f, &r);
    }
    if ((st = lg_csv_close(f, "networks.csv")) != LG_OK) goto done;

    if (!(f = lg_csv_open(R, "modes.csv", &st))) goto done;
    fprintf(f, "arch,regime,mode,instances,robust,violated,unknown,timeouts,median_s,total_s,backend_nodes,"
               "stage_is_backend,misclassified\n");
    for (int g = 0; g < R->n_groups; g++)
        for (int m = 0; m < LG_STUDY_N_MODES; m++) {
            lg_rep_modest *S = &R->groups[g].mode[m];
            if (!S->n) continue;
            lg_csv_str(&r, R->groups[g].arch);
            lg_csv_str(&r, R->groups[g].regime);
            lg_csv_str(&r, lg_study_mode_name((lg_study_mode)m));
            lg_csv_int(&r, S->n);
            lg_csv_int(&r, S->robust);
            lg_csv_int(&r, S->violated);
            lg_csv_int(&r, S->unknown);
            lg_csv_int(&r, S->timeouts);
            lg_csv_num(&r, S->median_s);
            lg_csv_num(&r, S->total_s);
            lg_csv_int(&r, S->nodes);
            lg_csv_int(&r, S->stage_backend);
            lg_csv_int(&r, S->misclassified);
            lg_rep_row(f, &r);
        }
    if ((st = lg_csv_close(f, "modes.csv")) != LG_OK) goto done;

    if (!(f = lg_csv_open(R, "unstable.csv", &st))) goto done;
    fprintf(f, "arch,regime,eps,instances,mean_unstable,mean_unstable_per_layer\n");
    for (int g = 0; g < R->n_groups; g++)
        for (int e = 0; e < R->n_eps; e++) {
            lg_rep_groupst *G = &R->groups[g];
            if (!G->unstable_n[e]) continue;
            lg_csv_str(&r, G->arch);
            lg_csv_str(&r, G->regime);
            lg_csv_num(&r, R->eps[e]);
            lg_csv_int(&r, G->unstable_n[e]);
            lg_csv_num(&r, G->unstable_sum[e] / G->unstable_n[e]);
            double v[LG_REP_MAX_LAYERS];
            int n = G->n_layers < LG_REP_MAX_LAYERS ? G->n_layers : LG_REP_MAX_LAYERS;
            for (int k = 0; k < n; k++) v[k] = G->unstable_layer[e][k] / G->unstable_n[e];
            lg_rep_list(&r, v, (size_t)(n > 0 ? n : 0));
            lg_rep_row(f, &r);
        }
    if ((st = lg_csv_close(f, "unstable.csv")) != LG_OK) goto done;

    if (!(f = lg_csv_open(R, "transfer.csv", &st))) goto done;
    fprintf(f, "arch,regime,delta_global,delta_ball_median,delta_ball_max,auto_robust,auto_robust_smooth_robust,"
               "auto_robust_smooth_violated,auto_violated,auto_violated_fooling_smooth\n");
    for (int g = 0; g < R->n_groups; g++) {
        lg_rep_groupst *G = &R->groups[g];
        lg_csv_str(&r, G->arch);
        lg_csv_str(&r, G->regime);
        lg_csv_num(&r, G->delta_global);
        lg_csv_num(&r, G->delta_ball_median);
        lg_csv_num(&r, G->delta_ball_max);
        lg_csv_int(&r, G->relu_robust);
        lg_csv_int(&r, G->transfer_robust);
        lg_csv_int(&r, G->false_robust);
        lg_csv_int(&r, G->cex_n);
        lg_csv_int(&r, G->cex_fool);
        lg_rep_row(f, &r);
    }
    if ((st = lg_csv_close(f, "transfer.csv")) != LG_OK) goto done;

    if (!(f = lg_csv_open(R, "agreement.csv", &st))) goto done;
    fprintf(f, "arch,regime,pairs_both_decided,disagreements\n");
    for (int g = 0; g < R->n_groups; g++) {
        lg_csv_str(&r, R->groups[g].arch);
        lg_csv_str(&r, R->groups[g].regime);
        lg_csv_int(&r, R->groups[g].both_decided);
        lg_csv_int(&r, R->groups[g].disagree);
        lg_rep_row(f, &r);
    }
    if ((st = lg_csv_close(f, "agreement.csv")) != LG_OK) goto done;

    if (!(f = lg_csv_open(R, "lambda.csv", &st))) goto done;
    fprintf(f, "arch,regime,seed,epoch,layer,lambda\n");
    json_array_foreach(R->nets, i, o)
    {
        json_t *log = json_object_get(o, "lambda_log");
        for (size_t q = 0; q < json_array_size(log); q++) {
            json_t *row = json_array_get(log, q);
            for (size_t k = 1; k < json_array_size(row); k++) {
                lg_csv_str(&r, lg_rep_str(o, "arch"));
                lg_csv_str(&r, lg_rep_str(o, "regime"));
                lg_csv_num(&r, lg_rep_num(o, "seed"));
                lg_csv_num(&r, json_number_value(json_array_get(row, 0)));
                lg_csv_int(&r, (long long)(k - 1));
                lg_csv_num(&r, json_number_value(json_array_get(row, k)));
                lg_rep_row(f, &r);
            }
        }
    }
    st = lg_csv_close(f, "lambda.csv");
done:
    lg_csv_row_free(&r);
    return st;
}
