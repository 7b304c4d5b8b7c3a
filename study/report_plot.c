/* report_plot.c — gnuplot plots of a study report (report.h): cactus plot
 * per architecture and mode, accuracy before/after substitution, unstable
 * ReLUs per regime and ε, λ per layer over training. Each plot is a .dat
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

/* Write plots/<name>.gp (PNG + SVG of body) and run gnuplot; 0 if rendered. */
static int lg_plot_render(lg_rep *R, const char *name, const char *body)
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
               "set terminal pngcairo size 960,600 noenhanced\nset output '%s/plots/%s.png'\nload '%s'\n"
               "set terminal svg size 960,600 noenhanced\nset output '%s/plots/%s.svg'\nload '%s'\nunset output\n",
            R->dir, name, bpath, R->dir, name, bpath);
    fclose(f);
    snprintf(cmd, sizeof cmd, "gnuplot '%s' 2>>'%s/plots/gnuplot.log'", path, R->dir);
    return system(cmd) == 0 ? 0 : -1;
}

lg_status lg_rep_write_plots(lg_rep *R)
{
    char dir[4200], path[4800], tag[LG_STUDY_NAME], name[200];
    snprintf(dir, sizeof dir, "%s/plots", R->dir);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return lg_fail(LG_ERR_IO, "%s: %s", dir, strerror(errno));
    size_t cap = json_array_size(R->rows) + 1;
    double *buf = malloc(cap * sizeof *buf);
    char *body = malloc(1 << 16);
    char *titles = malloc(1 << 14);
    lg_status st = LG_OK;
    if (!buf || !body || !titles) {
        st = lg_fail(LG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    int ok = 1, tried = 0;
    for (int g0 = 0; g0 < R->n_groups; g0++) {
        const char *arch = R->groups[g0].arch;
        int first = 1;
        for (int h = 0; h < g0; h++) first &= strcmp(R->groups[h].arch, arch) != 0;
        if (!first) continue;
        lg_plot_tag(tag, sizeof tag, arch);
        /* cactus per mode: sorted solved times, one block per regime */
        for (int m = 0; m < LG_STUDY_N_MODES; m++) {
            if (!lg_rep_arch_has_mode(R, arch, (lg_study_mode)m)) continue;
            snprintf(name, sizeof name, "cactus_%s_%s", tag, lg_study_mode_name((lg_study_mode)m));
            snprintf(path, sizeof path, "%s/%s.dat", dir, name);
            FILE *f = fopen(path, "w");
            if (!f) {
                st = lg_fail(LG_ERR_IO, "%s: %s", path, strerror(errno));
                goto fail;
            }
            int nb = 0;
            titles[0] = '\0';
            for (int g = 0; g < R->n_groups; g++) {
                if (strcmp(R->groups[g].arch, arch) != 0) continue;
                int n = lg_rep_solved_times(R, g, (lg_study_mode)m, buf);
                if (n == 0) continue; /* nothing decided: no curve */
                fprintf(f, "# %s\n", R->groups[g].regime);
                for (int k = 0; k < n; k++) fprintf(f, "%d %.6g\n", k + 1, fmax(buf[k], 1e-4));
                fprintf(f, "\n\n");
                size_t tl = strlen(titles);
                snprintf(titles + tl, (1 << 14) - tl, "%s%s", nb ? " " : "", R->groups[g].regime);
                nb++;
            }
            fclose(f);
            if (nb == 0)
                snprintf(body, 1 << 16,
                         "set title 'cactus: %s, mode %s: no instance decided'\nset xrange [0:1]\nset yrange [0:1]\n"
                         "set label 'no instance decided by any regime' at graph 0.3, graph 0.5\nplot -1 notitle\n",
                         arch, lg_study_mode_name((lg_study_mode)m));
            else
            snprintf(body, 1 << 16,
                     "set title 'cactus: %s, mode %s (instances decided vs seconds per instance)'\n"
                     "set xlabel 'instances decided'\nset ylabel 'seconds (log)'\nset logscale y\n"
                     "set key outside right\nset grid\ntitles = '%s'\n"
                     "plot for [i=1:%d] '%s' index (i-1) using 1:2 with steps lw 2 title word(titles, i)\n",
                     arch, lg_study_mode_name((lg_study_mode)m), titles, nb, path);
            tried++;
            ok &= lg_plot_render(R, name, body) == 0;
        }
        /* accuracy and unstable ReLUs per regime */
        snprintf(name, sizeof name, "accuracy_%s", tag);
        snprintf(path, sizeof path, "%s/%s.dat", dir, name);
        FILE *f = fopen(path, "w");
        if (!f) {
            st = lg_fail(LG_ERR_IO, "%s: %s", path, strerror(errno));
            goto fail;
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
                 "set title 'test accuracy (%%) of %s: trained net and its ReLU substitution'\n"
                 "set style data histograms\nset style fill solid 0.8\nset xtics rotate by -30\nset key top right\n"
                 "set yrange [0:*]\nset grid ytics\n"
                 "plot '%s' using 2:xtic(1) title 'trained (smooth)', '' using 3 title 'after ReLU substitution'\n",
                 arch, path);
        tried++;
        ok &= lg_plot_render(R, name, body) == 0;
        char name2[200];
        snprintf(name2, sizeof name2, "unstable_%s", tag);
        int len = snprintf(body, 1 << 16,
                           "set title 'mean unstable ReLUs per instance (%s, symbolic bounds)'\n"
                           "set style data histograms\nset style fill solid 0.8\nset xtics rotate by -30\n"
                           "set key top right\nset yrange [0:*]\nset grid ytics\nplot ",
                           arch);
        for (int e = 0; e < R->n_eps; e++)
            len += snprintf(body + len, (size_t)(1 << 16) - (size_t)len, "%s'%s' using %d%s title 'eps %g'",
                            e ? ", " : "", path, 5 + e, e ? "" : ":xtic(1)", R->eps[e]);
        snprintf(body + len, (size_t)(1 << 16) - (size_t)len, "\n");
        tried++;
        ok &= lg_plot_render(R, name2, body) == 0;
        /* λ per layer over training (first seed of each regime with a log) */
        snprintf(name, sizeof name, "lambda_%s", tag);
        snprintf(path, sizeof path, "%s/%s.dat", dir, name);
        if (!(f = fopen(path, "w"))) {
            st = lg_fail(LG_ERR_IO, "%s: %s", path, strerror(errno));
            goto fail;
        }
        int nb = 0;
        titles[0] = '\0';
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
            if (dup) continue;
            json_t *log = json_object_get(o, "lambda_log");
            size_t nl = json_array_size(json_array_get(log, 0));
            for (size_t k = 1; k < nl; k++) {
                fprintf(f, "# %s layer %zu\n", lg_rep_str(o, "regime"), k - 1);
                for (size_t r = 0; r < json_array_size(log); r++) {
                    json_t *row = json_array_get(log, r);
                    fprintf(f, "%g %.6g\n", json_number_value(json_array_get(row, 0)),
                            json_number_value(json_array_get(row, k)));
                }
                fprintf(f, "\n\n");
                size_t tl = strlen(titles);
                snprintf(titles + tl, (1 << 14) - tl, "%s%s:L%zu", nb ? " " : "", lg_rep_str(o, "regime"), k - 1);
                nb++;
            }
        }
        fclose(f);
        if (nb) {
            snprintf(body, 1 << 16,
                     "set title 'lambda per hidden layer over training (%s, first seed; log scale)'\n"
                     "set xlabel 'epoch'\nset ylabel 'lambda'\nset logscale y\nset key outside right\nset grid\n"
                     "titles = '%s'\n"
                     "plot for [i=1:%d] '%s' index (i-1) using 1:2 with linespoints title word(titles, i)\n",
                     arch, titles, nb, path);
            tried++;
            ok &= lg_plot_render(R, name, body) == 0;
        }
    }
    R->plots = tried > 0 && ok;
fail:
    free(buf);
    free(body);
    free(titles);
    return st;
}
