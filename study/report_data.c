/* report_data.c — reading result rows and the statistics every part of the
 * report shares (report_internal.h): the model below report.c (which loads
 * the rows and calls the writers) and the writers (report_csv.c,
 * report_md.c, report_plot.c), so no writer reaches back into report.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "study/grid.h"
#include "study/report_internal.h"

const char *lg_rep_str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

double lg_rep_num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

int lg_rep_noise_count(int n)
{
    int k = (int)ceil(0.05 * n);
    return k > 2 ? k : 2;
}

static int lg_rep_dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double lg_rep_median(double *v, int n)
{
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, lg_rep_dcmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Row o belongs to group g and mode m. */
int lg_rep_mode(json_t *o)
{
    lg_study_mode m;
    return lg_study_mode_parse(lg_rep_str(o, "mode"), &m) == 0 ? (int)m : -1;
}

int lg_rep_row_in(const lg_rep *R, json_t *o, int g, lg_study_mode m)
{
    return !strcmp(lg_rep_str(o, "arch"), R->groups[g].arch) && !strcmp(lg_rep_str(o, "regime"), R->groups[g].regime) &&
           lg_rep_mode(o) == (int)m;
}

int lg_rep_solved_times(lg_rep *R, int g, lg_study_mode m, double *buf)
{
    int n = 0;
    size_t i;
    json_t *o;
    json_array_foreach(R->rows, i, o)
    {
        if (!lg_rep_row_in(R, o, g, m)) continue;
        const char *v = lg_rep_str(o, "verdict");
        if (strcmp(v, "robust") == 0 || strcmp(v, "violated") == 0) buf[n++] = lg_rep_num(o, "seconds");
    }
    lg_rep_median(buf, n); /* sorts */
    return n;
}

void lg_rep_arch_mode_stats(lg_rep *R, const char *arch, lg_study_mode m, double *buf, int *n, int *decided,
                            int *timeouts, double *median, double *mean)
{
    *n = *decided = *timeouts = 0;
    double sum = 0.0;
    size_t i;
    json_t *o;
    json_array_foreach(R->rows, i, o)
    {
        if (strcmp(lg_rep_str(o, "arch"), arch) || strcmp(lg_rep_str(o, "mode"), lg_study_mode_name(m))) continue;
        const char *v = lg_rep_str(o, "verdict");
        double s = lg_rep_num(o, "seconds");
        buf[(*n)++] = s;
        sum += s;
        *decided += strcmp(v, "robust") == 0 || strcmp(v, "violated") == 0;
        *timeouts += json_is_true(json_object_get(o, "timed_out"));
    }
    *mean = *n ? sum / *n : NAN;
    *median = lg_rep_median(buf, *n);
}

int lg_rep_arch_has_mode(const lg_rep *R, const char *arch, lg_study_mode m)
{
    for (int g = 0; g < R->n_groups; g++)
        if (strcmp(R->groups[g].arch, arch) == 0 && R->groups[g].mode[m].n > 0) return 1;
    return 0;
}
