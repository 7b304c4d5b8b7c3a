/* soundfuzz_main.c — lgelu_soundfuzz: the differential soundness fuzzer as a
 * long-running command (docs/TESTING.md "Differential soundness fuzzer").
 *
 *   lgelu_soundfuzz [--seed S] [--hours H | --cases N] [--start I]
 *                   [--case I [--dump DIR] [--print]] [--solver LIST] [--bab LIST]
 *                   [--timeout T] [--verbose]
 *
 * Runs cases start, start+1, ... of seed S until N cases or H hours, prints
 * every wrong verdict with a reproducer, a progress line a minute and a
 * summary with cases/hour. Exit status 1 if any run was wrong or an error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen_fuzz.h"
#include "core/clock.h"
#include "soundfuzz.h"
#include "verify/verify.h"


static int usage(void)
{
    fprintf(stderr, "usage: lgelu_soundfuzz [--seed S] [--hours H | --cases N] [--start I]\n"
                    "                       [--case I [--dump DIR] [--print]] [--solver auto,glpk,z3,none,glpk-only,z3-lp]\n"
                    "                       [--bab none,input,relu,auto] [--timeout T] [--refine auto|on|off] [--cuts on|off] [--verbose]\n");
    return 2;
}

int main(int argc, char **argv)
{
    unsigned long seed = 1;
    double hours = 0;
    long n_cases = 100, start = 0, one = -1;
    const char *dump = NULL;
    int print = 0;
    lg_fuzz_opts o = lg_fuzz_opts_default();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--print")) {
            print = 1;
            continue;
        }
        if (!strcmp(a, "--verbose")) {
            o.verbose = 1;
            continue;
        }
        if (!v) return usage();
        i++;
        if (!strcmp(a, "--seed"))
            seed = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--hours"))
            hours = atof(v), n_cases = -1;
        else if (!strcmp(a, "--cases"))
            n_cases = atol(v);
        else if (!strcmp(a, "--start"))
            start = atol(v);
        else if (!strcmp(a, "--case"))
            one = atol(v);
        else if (!strcmp(a, "--dump"))
            dump = v;
        else if (!strcmp(a, "--timeout"))
            o.timeout_s = atof(v);
        else if (!strcmp(a, "--cuts")) {
            if (!strcmp(v, "on")) o.cuts = 1;
            else if (!strcmp(v, "off")) o.cuts = 0;
            else return usage();
        }
        else if (!strcmp(a, "--refine")) {
            if (!strcmp(v, "auto")) o.refine = LG_REFINE_AUTO;
            else if (!strcmp(v, "on")) o.refine = LG_REFINE_ON;
            else if (!strcmp(v, "off")) o.refine = LG_REFINE_OFF;
            else return usage();
        }
        else if (!strcmp(a, "--solver") || !strcmp(a, "--bab")) {
            if (lg_fuzz_opts_select(&o, !strcmp(a, "--bab"), v)) {
                fprintf(stderr, "%s\n", lg_errmsg());
                return 2;
            }
        } else
            return usage();
    }
    if (one >= 0) start = one, n_cases = 1, hours = 0;
    lg_fuzz_stats s;
    memset(&s, 0, sizeof s);
    double t0 = lg_now(), last = t0;
    long bad = 0;
    for (long idx = start; n_cases < 0 || idx < start + n_cases; idx++) {
        if (n_cases < 0 && lg_now() - t0 >= hours * 3600.0) break;
        lg_fuzz_case fc;
        double tc = lg_now();
        lg_status st = lg_fuzz_case_make(&fc, seed, idx);
        s.t_oracle += lg_now() - tc;
        if (st) {
            fprintf(stderr, "soundfuzz: case %ld: %s\n", idx, lg_errmsg());
            return 1;
        }
        if (print) lg_fuzz_case_print(&fc, stdout);
        if (dump) {
            if (lg_fuzz_case_dump(&fc, dump)) {
                fprintf(stderr, "soundfuzz: %s\n", lg_errmsg());
                lg_fuzz_case_free(&fc);
                return 1;
            }
            printf("soundfuzz: wrote %s/net.lgnet and %s/prop.vnnlib; run: build/lgelu verify %s/net.lgnet "
                   "--vnnlib %s/prop.vnnlib --solver S --bab B%s\n",
                   dump, dump, dump, dump, idx % 2 ? " --no-attack" : "");
        }
        bad += lg_fuzz_run_case(&fc, &o, &s, stdout);
        lg_fuzz_case_free(&fc);
        if (one < 0 && idx % 50 == 49) bad += lg_fuzz_onnx_fold(seed, idx / 50, 20, &s, stdout); /* foldable ONNX graphs */
        if (one < 0 && idx % 50 == 24) bad += lg_fuzz_pool(seed, idx / 50, 8, &o, &s, stdout); /* MaxPool graphs */
        if (one < 0 && idx % 10 == 7) bad += lg_fuzz_tnet(seed, idx / 10, 2, &o, &s, stdout); /* attention blocks */
        if (lg_now() - last >= 60.0) {
            last = lg_now();
            lg_fuzz_stats_print(&s, last - t0, stdout);
            fflush(stdout);
        }
    }
    lg_fuzz_stats_print(&s, lg_now() - t0, stdout);
    return bad ? 1 : 0;
}
