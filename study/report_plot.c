/* report_plot.c — gnuplot plots of a study report (report.h): cactus plot
 * per architecture and mode, accuracy before/after substitution, unstable
 * ReLUs per regime and ε, unstable ReLUs against verification time (a panel
 * per mode), λ per layer over training (a panel per regime). Each plot is a .dat
 * file, a .gp body and a driver that renders it as PNG and SVG. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "study/report_internal.h"

/* "784,256,10" → "784-256-10" (file names). */
static void lg_plot_tag(char *dst, size_t n, const char *arch)
{
    snprintf(dst, n, "%s", arch);
    for (char *p = dst; *p; p++)
        if (*p == ',') *p = '-';
}

/* Write plots/<name>.gp (PNG + SVG of body, w × h pixels) and run gnuplot; 0 if rendered. */
static int lg_plot_render_size(lg_rep *R, const char *name, const char *body, int w, int h)
{
    char path[4400], bpath[4400], cmd[9200];
    snprintf(bpath, sizeof bpath, "%s/plots/%s.body.gp", R->dir, name);
    snprintf(path, sizeof path, "%s/plots/%s.gp", R->dir, name);
    FILE *f = fopen(bpath, "w");
    if (!f) return -1;
    fputs(body, f);
    fclose(f);
    if (!(f = fopen(path, "w"))) return -1;
    fprintf(f, "set termoption noenhanced\n"
               "set terminal pngcairo size %d,%d noenhanced\nset output '%s/plots/%s.png'\nload '%s'\n"
               "set terminal svg size %d,%d noenhanced\nset output '%s/plots/%s.svg'\nload '%s'\nunset output\n",
            w, h, R->dir, name, bpath, w, h, R->dir, name, bpath);
    fclose(f);
    snprintf(cmd, sizeof cmd, "gnuplot '%s' 2>>'%s/plots/gnuplot.log'", path, R->dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int lg_plot_render(lg_rep *R, const char *name, const char *body)
{
    return lg_plot_render_size(R, name, body, 960, 600);
}

/* Columns and rows of a grid of n panels (near square). */
static void lg_plot_layout(int n, int *cols, int *rows)
{
    int c = 1;
    while (c * c < n) c++;
    *cols = c;
    *rows = (n + c - 1) / c;
}

/* Unstable ReLUs (symbolic bounds) against verification seconds, one panel per mode of arch: every row a
 * point, decided and unknown (timeouts included) apart. 0 rendered, −1 not, −2 I/O error (message set). */
static int lg_plot_unstable_time(lg_rep *R, const char *arch, const char *tag, char *body, size_t cap)
{
    char name[200], path[4800];
    snprintf(name, sizeof name, "unstable_time_%s", tag);
    snprintf(path, sizeof path, "%s/plots/%s.dat", R->dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        lg_fail(LG_ERR_IO, "%s: %s", path, strerror(errno));
        return -2;
    }
    int np = 0, block = 0, modes[LG_STUDY_N_MODES];
    for (int m = 0; m < LG_STUDY_N_MODES; m++) {
        if (!lg_rep_arch_has_mode(R, arch, (lg_study_mode)m)) continue;
        modes[np++] = m;
        for (int decided = 1; decided >= 0; decided--) {
            fprintf(f, "# %s %s\n", lg_study_mode_name((lg_study_mode)m), decided ? "decided" : "unknown");
            size_t i;
            json_t *o;
            json_array_foreach(R->rows, i, o)
            {
                if (strcmp(lg_rep_str(o, "arch"), arch) || strcmp(lg_rep_str(o, "mode"), lg_study_mode_name((lg_study_mode)m)))
                    continue;
                const char *v = lg_rep_str(o, "verdict");
                int d = strcmp(v, "robust") == 0 || strcmp(v, "violated") == 0;
                if (d != decided) continue;
                fprintf(f, "%g %.6g\n", lg_rep_num(o, "unstable_total"), fmax(lg_rep_num(o, "seconds"), 1e-4));
            }
            fprintf(f, "0 NaN\n\n\n"); /* never an empty block: gnuplot's index counts stay fixed */
            block++;
        }
    }
    fclose(f);
    if (np == 0) return -1;
    int cols, rows;
    lg_plot_layout(np, &cols, &rows);
    int len = snprintf(body, cap,
                       "set multiplot layout %d,%d title \"unstable ReLUs vs seconds, %s\\na point per instance\"\n"
                       "set logscale y\nset grid\nset xrange [-1:*]\nset xlabel 'unstable ReLUs'\nset ylabel 'seconds (log)'\n"
                       "set key top left\n",
                       rows, cols, arch);
    for (int k = 0; k < np && len > 0 && (size_t)len < cap; k++)
        len += snprintf(body + len, cap - (size_t)len,
                        "set title 'mode %s'\nplot '%s' index %d using 1:2 with points pt 7 ps 0.5 title 'decided', "
                        "'' index %d using 1:2 with points pt 6 ps 0.5 title 'unknown'\n",
                        lg_study_mode_name((lg_study_mode)modes[k]), path, 2 * k, 2 * k + 1);
    if (len > 0 && (size_t)len < cap) snprintf(body + len, cap - (size_t)len, "unset multiplot\n");
    return lg_plot_render_size(R, name, body, cols > 1 ? 480 * cols : 960, 400 * rows + 40) == 0 ? 0 : -1;
}

/* The plots' shared state: the folder, scratch, and how many were made. */
typedef struct lg_plots {
    lg_rep *R;
    char dir[4200];
    double *buf;   /* [rows + 1] times */
    char *body;    /* [1 << 16] a gnuplot script */
    char *titles;  /* [1 << 14] a plot command's curves */
    int ok, tried; /* every render succeeded; renders tried */
} lg_plots;

/* One render (its status rc) counted. */
static void lg_plot_count(lg_plots *P, int rc)
{
    P->tried++;
    P->ok &= rc == 0;
}

/* Cactus per mode of arch: sorted solved times, one block per regime. */
static lg_status lg_plot_cactus(lg_plots *P, const char *arch, const char *tag)
{
    lg_rep *R = P->R;
    const char *dir = P->dir;
    char path[4800], name[200], *body = P->body, *titles = P->titles;
    double *buf = P->buf;
    for (int m = 0; m < LG_STUDY_N_MODES; m++) {
        if (!lg_rep_arch_has_mode(R, arch, (lg_study_mode)m)) continue;
        snprintf(name, sizeof name, "cactus_%s_%s", tag, lg_study_mode_name((lg_study_mode)m));
        snprintf(path, sizeof path, "%s/%s.dat", dir, name);
        FILE *f = fopen(path, "w");
        if (!f) {
            return lg_fail(LG_ERR_IO, "%s: %s", path, strerror(errno));
        }
        /* one colour per regime, the same in every mode's plot: the regime's place among the arch's */
        int nb = 0, max_n = 0, pos = 0, len = 0;
        char *plot = titles; /* the plot command's curves */
        plot[0] = '\0';
        for (int g = 0; g < R->n_groups; g++) {
            if (strcmp(R->groups[g].arch, arch) != 0) continue;
            pos++;
            int n = lg_rep_solved_times(R, g, (lg_study_mode)m, buf);
            if (n == 0) continue; /* nothing decided: no curve */
            fprintf(f, "# %s\n", R->groups[g].regime);
            for (int k = 0; k < n; k++) fprintf(f, "%d %.6g\n", k + 1, fmax(buf[k], 1e-4));
            fprintf(f, "\n\n");
            if (n > max_n) max_n = n;
            if (len >= 0 && len < (1 << 14))
                len += snprintf(plot + len, (size_t)(1 << 14) - (size_t)len,
                                "%s'%s' index %d using 1:2 with steps lw 2 lc %d title '%s'", nb ? ", " : "", path,
                                nb, pos, R->groups[g].regime);
            nb++;
        }
        fclose(f);
        /* integer ticks on the instance axis: a step of 1, 2, 5, 10, ... giving at most 10 ticks */
        int step = 1;
        for (int dec = 1; max_n / step > 10; dec *= 10)
            step = max_n / (2 * dec) <= 10 ? 2 * dec : max_n / (5 * dec) <= 10 ? 5 * dec : 10 * dec;
        if (nb == 0)
            snprintf(body, 1 << 16,
                     "set title \"cactus: %s, mode %s\\nno instance decided by any regime\"\n"
                     "set xrange [0:1]\nset yrange [0:1]\nunset xtics\nunset ytics\nplot -1 notitle\n",
                     arch, lg_study_mode_name((lg_study_mode)m));
        else
            snprintf(body, 1 << 16,
                     "set title \"cactus: %s, mode %s\\ninstances decided vs seconds per instance\"\n"
                     "set xlabel 'instances decided'\nset ylabel 'seconds (log)'\nset logscale y\n"
                     "set xrange [0:%d]\nset xtics %d\nset mxtics 1\nset format x '%%.0f'\n"
                     "set key outside right\nset grid\nplot %s\n",
                     arch, lg_study_mode_name((lg_study_mode)m), max_n + 1, step, plot);
        lg_plot_count(P, lg_plot_render(R, name, body));
    }
    return LG_OK;
}

/* Accuracy and unstable ReLUs per regime of arch. */
static lg_status lg_plot_accuracy(lg_plots *P, const char *arch, const char *tag)
{
    lg_rep *R = P->R;
    const char *dir = P->dir;
    char path[4800], name[200], *body = P->body;
    snprintf(name, sizeof name, "accuracy_%s", tag);
    snprintf(path, sizeof path, "%s/%s.dat", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        return lg_fail(LG_ERR_IO, "%s: %s", path, strerror(errno));
    }
    fprintf(f, "# regime before after drop");
    for (int e = 0; e < R->n_eps; e++) fprintf(f, " unstable_eps%g", R->eps[e]);
    fprintf(f, "\n");
    for (int g = 0; g < R->n_groups; g++) {
        lg_rep_groupst *G = &R->groups[g];
        if (strcmp(G->arch, arch) != 0) continue;
        fprintf(f, "%s %.4f %.4f %.4f", G->regime, 100 * G->acc_before, 100 * G->acc_after,
                100 * (G->acc_before - G->acc_after));
        for (int e = 0; e < R->n_eps; e++)
            fprintf(f, " %.3f", G->unstable_n[e] ? G->unstable_sum[e] / G->unstable_n[e] : 0.0);
        fprintf(f, "\n");
    }
    fclose(f);
    snprintf(body, 1 << 16,
             "set title \"test accuracy (%%%%) of %s\\ntrained net and its ReLU substitution\"\n"
             "set style data histograms\nset style fill solid 0.8\nset xtics rotate by -30\nset key top right\n"
             "set yrange [0:*]\nset grid ytics\n"
             "plot '%s' using 2:xtic(1) title 'trained (smooth)', '' using 3 title 'after ReLU substitution'\n",
             arch, path);
    lg_plot_count(P, lg_plot_render(R, name, body));
    char name2[200];
    snprintf(name2, sizeof name2, "unstable_%s", tag);
    int len = snprintf(body, 1 << 16,
                       "set title \"mean unstable ReLUs per instance, %s\\nsymbolic bounds\"\n"
                       "set style data histograms\nset style fill solid 0.8\nset xtics rotate by -30\n"
                       "set key top right\nset yrange [0:*]\nset grid ytics\nplot ",
                       arch);
    for (int e = 0; e < R->n_eps; e++)
        len += snprintf(body + len, (size_t)(1 << 16) - (size_t)len, "%s'%s' using %d%s title 'eps %g'",
                        e ? ", " : "", path, 5 + e, e ? "" : ":xtic(1)", R->eps[e]);
    snprintf(body + len, (size_t)(1 << 16) - (size_t)len, "\n");
    lg_plot_count(P, lg_plot_render(R, name2, body));
    return LG_OK;
}

/* λ per layer over training (first seed of each regime with a log): small
 * multiples, a panel per regime. */
static lg_status lg_plot_lambda(lg_plots *P, const char *arch, const char *tag)
{
    lg_rep *R = P->R;
    const char *dir = P->dir;
    char path[4800], name[200], *body = P->body;
    FILE *f;
    snprintf(name, sizeof name, "lambda_%s", tag);
    snprintf(path, sizeof path, "%s/%s.dat", dir, name);
    if (!(f = fopen(path, "w"))) {
        return lg_fail(LG_ERR_IO, "%s: %s", path, strerror(errno));
    }
    int nb = 0, npan = 0;
    int pan_first[LG_REP_MAX_GROUPS], pan_n[LG_REP_MAX_GROUPS];
    const char *pan_name[LG_REP_MAX_GROUPS];
    size_t i;
    json_t *o;
    json_array_foreach(R->nets, i, o)
    {
        if (strcmp(lg_rep_str(o, "arch"), arch) != 0 || !json_is_true(json_object_get(o, "smooth"))) continue;
        int dup = 0; /* first seed only */
        for (size_t j = 0; j < i; j++) {
            json_t *p = json_array_get(R->nets, j);
            dup |= strcmp(lg_rep_str(p, "arch"), arch) == 0 &&
                   strcmp(lg_rep_str(p, "regime"), lg_rep_str(o, "regime")) == 0;
        }
        if (dup || npan == LG_REP_MAX_GROUPS) continue;
        json_t *log = json_object_get(o, "lambda_log");
        size_t nl = json_array_size(json_array_get(log, 0));
        if (nl < 2) continue;
        pan_first[npan] = nb;
        pan_n[npan] = (int)nl - 1;
        pan_name[npan++] = lg_rep_str(o, "regime");
        for (size_t k = 1; k < nl; k++) {
            fprintf(f, "# %s layer %zu\n", lg_rep_str(o, "regime"), k - 1);
            for (size_t r = 0; r < json_array_size(log); r++) {
                json_t *row = json_array_get(log, r);
                fprintf(f, "%g %.6g\n", json_number_value(json_array_get(row, 0)),
                        json_number_value(json_array_get(row, k)));
            }
            fprintf(f, "\n\n");
            nb++;
        }
    }
    fclose(f);
    if (npan) {
        int cols, rows;
        lg_plot_layout(npan, &cols, &rows);
        int ln = snprintf(body, 1 << 16,
                           "set multiplot layout %d,%d title \"lambda per hidden layer over training, %s\\n"
                           "first seed, log scale, a panel per regime\"\n"
                           "set xlabel 'epoch'\nset logscale y\nset grid\nset key top left\n",
                           rows, cols, arch);
        for (int k = 0; k < npan && ln > 0 && ln < (1 << 16); k++)
            ln += snprintf(body + ln, (size_t)(1 << 16) - (size_t)ln,
                            "set title '%s'\nplot for [i=%d:%d] '%s' index i using 1:2 with linespoints pt 7 "
                            "ps 0.4 title sprintf('layer %%d', i - %d)\n",
                            pan_name[k], pan_first[k], pan_first[k] + pan_n[k] - 1, path, pan_first[k]);
        if (ln > 0 && ln < (1 << 16)) snprintf(body + ln, (size_t)(1 << 16) - (size_t)ln, "unset multiplot\n");
        lg_plot_count(P, lg_plot_render_size(R, name, body, cols > 2 ? 360 * cols : 960, 280 * rows + 40));
    }
    return LG_OK;
}

/* Median seconds per instance by architecture (grid order), a line per
 * mode: the input-size sweep's plot (with more than one architecture). */
static lg_status lg_plot_arch_time(lg_plots *P)
{
    lg_rep *R = P->R;
    const char *dir = P->dir;
    char path[4800], *body = P->body;
    double *buf = P->buf;
    int n_arch = 0;
    const char *archs[LG_REP_MAX_GROUPS];
    for (int g0 = 0; g0 < R->n_groups; g0++) {
        int first = 1;
        for (int h = 0; h < g0; h++) first &= strcmp(R->groups[h].arch, R->groups[g0].arch) != 0;
        if (first) archs[n_arch++] = R->groups[g0].arch;
    }
    if (n_arch > 1) {
        snprintf(path, sizeof path, "%s/arch_time.dat", dir);
        FILE *f = fopen(path, "w");
        if (!f) {
            return lg_fail(LG_ERR_IO, "%s: %s", path, strerror(errno));
        }
        fprintf(f, "# arch_index arch");
        for (int m = 0; m < LG_STUDY_N_MODES; m++) fprintf(f, " median_s_%s", lg_study_mode_name((lg_study_mode)m));
        fprintf(f, "\n");
        for (int a = 0; a < n_arch; a++) {
            fprintf(f, "%d %s", a, archs[a]);
            for (int m = 0; m < LG_STUDY_N_MODES; m++) {
                int n, dec, to;
                double med, mean;
                lg_rep_arch_mode_stats(R, archs[a], (lg_study_mode)m, buf, &n, &dec, &to, &med, &mean);
                fprintf(f, " %.6g", n ? fmax(med, 1e-4) : NAN);
            }
            fprintf(f, "\n");
        }
        fclose(f);
        int len = snprintf(body, 1 << 16,
                           "set title \"median seconds per instance by architecture\\nevery regime, a line per mode\"\n"
                           "set logscale y\nset grid\nset ylabel 'seconds (log)'\nset xtics rotate by -20\n"
                           "set key outside right\nset offsets 0.2, 0.2, 0, 0\nplot ");
        int k = 0;
        for (int m = 0; m < LG_STUDY_N_MODES; m++)
            if (R->has_mode[m])
                len += snprintf(body + len, (size_t)(1 << 16) - (size_t)len,
                                "%s'%s' using 1:%d:xtic(2) with linespoints lw 2 pt 7 title '%s'", k++ ? ", " : "",
                                path, 3 + m, lg_study_mode_name((lg_study_mode)m));
        snprintf(body + len, (size_t)(1 << 16) - (size_t)len, "\n");
        lg_plot_count(P, lg_plot_render(R, "arch_time", body));
    }
    return LG_OK;
}

lg_status lg_rep_write_plots(lg_rep *R)
{
    lg_plots P = {.R = R, .ok = 1};
    char tag[LG_STUDY_NAME];
    snprintf(P.dir, sizeof P.dir, "%s/plots", R->dir);
    if (mkdir(P.dir, 0755) != 0 && errno != EEXIST) return lg_fail(LG_ERR_IO, "%s: %s", P.dir, strerror(errno));
    P.buf = malloc((json_array_size(R->rows) + 1) * sizeof *P.buf);
    P.body = malloc(1 << 16);
    P.titles = malloc(1 << 14);
    lg_status st = LG_OK;
    if (!P.buf || !P.body || !P.titles) {
        st = lg_fail(LG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (int g0 = 0; g0 < R->n_groups; g0++) { /* each architecture once */
        const char *arch = R->groups[g0].arch;
        int first = 1;
        for (int h = 0; h < g0; h++) first &= strcmp(R->groups[h].arch, arch) != 0;
        if (!first) continue;
        lg_plot_tag(tag, sizeof tag, arch);
        if ((st = lg_plot_cactus(&P, arch, tag)) != LG_OK || (st = lg_plot_accuracy(&P, arch, tag)) != LG_OK) goto fail;
        /* unstable ReLUs against verification time, a panel per mode */
        int ut = lg_plot_unstable_time(R, arch, tag, P.body, 1 << 16);
        if (ut == -2) {
            st = LG_ERR_IO;
            goto fail;
        }
        lg_plot_count(&P, ut);
        if ((st = lg_plot_lambda(&P, arch, tag)) != LG_OK) goto fail;
    }
    if ((st = lg_plot_arch_time(&P)) != LG_OK) goto fail;
    R->plots = P.tried > 0 && P.ok;
fail:
    free(P.buf);
    free(P.body);
    free(P.titles);
    return st;
}
