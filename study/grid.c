/* grid.c — parse the study's grid file with libinih (grid.h). */
#include "study/grid.h"

#include "core/arch.h"
#include "core/arch_vit.h"
#include "train/init.h"
#include "train/options.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/act.h"
#include "core/idx.h"
#include "train/loop.h"

static const char *const lg_study_mode_names[LG_STUDY_N_MODES] = {"auto", "z3", "glpk", "smooth", "direct"};

const char *lg_study_mode_name(lg_study_mode m)
{
    return (unsigned)m < LG_STUDY_N_MODES ? lg_study_mode_names[m] : "?";
}

int lg_study_mode_parse(const char *s, lg_study_mode *m)
{
    for (int i = 0; i < LG_STUDY_N_MODES; i++)
        if (strcmp(s, lg_study_mode_names[i]) == 0) {
            *m = (lg_study_mode)i;
            return 0;
        }
    return -1;
}

lg_study_train lg_study_train_default(void)
{
    lg_study_train t;
    memset(&t, 0, sizeof t);
    snprintf(t.act, sizeof t.act, "lgelu");
    snprintf(t.opt, sizeof t.opt, "sgd");
    snprintf(t.init, sizeof t.init, "he");
    t.anneal_start = 1.0;
    t.lambda_target = 159.57691216057307; /* 2/(0.005·√(2π)), the CLI default */
    t.epochs = 5;
    t.batch = 128;
    t.threads = 1;
    t.lr = 0.05;
    t.momentum = 0.9;
    t.wd = 0.0;
    t.t = 0.1;
    t.c = lg_train_opts_default().optim.c; /* the CLI's: λ (through s) learns at c·lr */
    t.rs = 0.0;
    t.rs_eps = lg_train_opts_default().rs_eps;
    return t;
}

/* A regime key kept until [train] is known: applied at the end. */
typedef struct lg_grid_pair {
    int regime;
    int line;
    char arch[LG_STUDY_NAME]; /* [arch NAME] pairs */
    char key[32];
    char value[256];
} lg_grid_pair;

typedef struct lg_grid_parse {
    lg_study_grid *g;
    const char *name;
    FILE *f;
    int line;                 /* line the reader returned last */
    int section_no;           /* section headers read so far */
    int *rsection;            /* [n_rnames] section number of each regime's header */
    char err[512];
    lg_study_train base;
    lg_grid_pair *pairs;
    int n_pairs, cap_pairs;
    char (*rnames)[LG_STUDY_NAME]; /* regime section names in file order */
    int n_rnames;
    unsigned seen;            /* bit per [study] key given */
    lg_grid_pair apairs[64];  /* [arch NAME] keys in file order */
    int n_apairs;
} lg_grid_parse;

/* inih reader: fgets that counts lines, so the handler can name the line. */
static char *lg_grid_reader(char *str, int num, void *stream)
{
    lg_grid_parse *P = stream;
    char *r = fgets(str, num, P->f);
    if (r) {
        P->line++;
        const char *p = r;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '[') P->section_no++;
    }
    return r;
}

#define LG_GRID_FAIL(P, sec, key, ...)                                                                          \
    do {                                                                                                        \
        int n_ = snprintf((P)->err, sizeof (P)->err, "%s:%d: [%s] %s: ", (P)->name, (P)->line, sec, key);     \
        if (n_ > 0 && (size_t)n_ < sizeof (P)->err) snprintf((P)->err + n_, sizeof (P)->err - (size_t)n_, __VA_ARGS__); \
        return 0;                                                                                               \
    } while (0)

static int lg_grid_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static int lg_grid_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno) return -1;
    *out = v;
    return 0;
}

/* Split a blank-separated list in place: up to cap tokens. Returns the count, −1 if more than cap. */
static int lg_grid_split(char *s, char **tok, int cap)
{
    int n = 0;
    for (char *p = strtok(s, " \t"); p; p = strtok(NULL, " \t")) {
        if (n >= cap) return -1;
        tok[n++] = p;
    }
    return n;
}

static int lg_grid_arch(const char *s, lg_study_arch *a)
{
    memset(a, 0, sizeof *a);
    if (strlen(s) >= sizeof a->name) {
        lg_fail(LG_ERR_ARG, "longer than %d characters", LG_STUDY_NAME - 1);
        return -1;
    }
    snprintf(a->name, sizeof a->name, "%s", s);
    if (lg_arch_is_vit(s)) { /* a ViT (core/arch_vit.h): its input and its classes */
        lg_vit_spec v;
        if (lg_arch_vit_parse(&v, s) != LG_OK) return -1;
        a->dims[0] = v.C * v.H * v.W;
        a->dims[1] = v.n_out;
        a->n_dims = 2;
        return 0;
    }
    lg_arch ar;
    if (lg_arch_parse(&ar, s) != LG_OK) return -1;
    int n = ar.n_layers, bad = n + 1 > LG_STUDY_MAX_DIMS;
    a->dims[0] = ar.n_in;
    for (int k = 0; !bad && k < n; k++) a->dims[k + 1] = ar.specs[k].n_out;
    for (int k = 0; !bad && k <= n; k++) bad = a->dims[k] > 100000;
    lg_arch_free(&ar);
    if (bad) {
        lg_fail(LG_ERR_ARG, "more than %d layers or a layer wider than 100000", LG_STUDY_MAX_DIMS - 1);
        return -1;
    }
    a->n_dims = n + 1;
    return 0;
}

/* Set one training option from one value. Returns NULL or a problem description. */
static const char *lg_grid_train_set(lg_study_train *t, const char *key, const char *val)
{
    double d;
    long v;
    const char *why;
    if (strcmp(key, "act") == 0) {
        lg_act a;
        if (lg_act_parse(val, &a) != 0 || a == LG_ACT_IDENTITY || strlen(val) >= sizeof t->act)
            return "expected an activation name (lgelu, gelu, relu, ...)";
        snprintf(t->act, sizeof t->act, "%s", val);
    } else if (strcmp(key, "opt") == 0) {
        if (strcmp(val, "sgd") != 0 && strcmp(val, "adamw") != 0) return "expected sgd or adamw";
        snprintf(t->opt, sizeof t->opt, "%s", val);
    } else if (strcmp(key, "init") == 0) {
        lg_init_kind kind;
        if (lg_init_parse(val, &kind) != 0) return "expected he, xavier or torch";
        snprintf(t->init, sizeof t->init, "%s", lg_init_name(kind));
    } else if (strcmp(key, "anneal_start") == 0) {
        if (lg_grid_double(val, &d)) return "expected a number";
        if ((why = lg_train_opt_check(key, d))) return why;
        t->anneal_start = d;
    } else if (strcmp(key, "lambda_target") == 0) {
        if (lg_grid_double(val, &d)) return "expected a number";
        if ((why = lg_train_opt_check(key, d))) return why;
        t->lambda_target = d;
    } else if (strcmp(key, "lr") == 0) {
        if (lg_grid_double(val, &d)) return "expected a number";
        if ((why = lg_train_opt_check(key, d))) return why;
        t->lr = d;
    } else if (strcmp(key, "momentum") == 0) {
        if (lg_grid_double(val, &d)) return "expected a number";
        if ((why = lg_train_opt_check(key, d))) return why;
        t->momentum = d;
    } else if (strcmp(key, "wd") == 0) {
        if (lg_grid_double(val, &d)) return "expected a number";
        if ((why = lg_train_opt_check(key, d))) return why;
        t->wd = d;
    } else if (strcmp(key, "t") == 0) {
        if (lg_grid_double(val, &d)) return "expected a number";
        if ((why = lg_train_opt_check(key, d))) return why;
        t->t = d;
    } else if (strcmp(key, "c") == 0) {
        if (lg_grid_double(val, &d)) return "expected a number";
        if ((why = lg_train_opt_check(key, d))) return why;
        t->c = d;
    } else if (strcmp(key, "epochs") == 0 || strcmp(key, "batch") == 0 || strcmp(key, "threads") == 0 ||
               strcmp(key, "anneal_epochs") == 0) {
        if (lg_grid_long(val, &v)) return "expected an integer";
        if ((why = lg_train_opt_check(key, (double)v))) return why;
        if (key[0] == 'e') t->epochs = (int)v;
        else if (key[0] == 'b') t->batch = (int)v;
        else if (key[0] == 't') t->threads = (int)v;
        else t->anneal_epochs = (int)v;
    } else if (strcmp(key, "rs") == 0) {
        if (lg_grid_double(val, &d)) return "expected a number";
        if ((why = lg_train_opt_check(key, d))) return why;
        t->rs = d;
    } else if (strcmp(key, "rs_eps") == 0) {
        if (lg_grid_double(val, &d)) return "expected a number";
        if ((why = lg_train_opt_check(key, d))) return why;
        t->rs_eps = d;
    } else if (strcmp(key, "subset") == 0) {
        if (lg_grid_long(val, &v)) return "expected an integer (0 = all)";
        if ((why = lg_train_opt_check(key, (double)v))) return why;
        t->subset = v;
    } else {
        return "unknown key";
    }
    return NULL;
}

enum { SEEN_ARCHS = 1, SEEN_EPS = 2, SEEN_INPUTS = 4 };

/* Parse a blank-separated list of modes into modes[] (*n of them). NULL or a problem. */
static const char *lg_grid_modes(const char *value, lg_study_mode *modes, int *n, char *bad, size_t nbad)
{
    char buf[256], *tok[LG_STUDY_N_MODES + 1];
    if (strlen(value) >= sizeof buf) return "value too long";
    snprintf(buf, sizeof buf, "%s", value);
    int nt = lg_grid_split(buf, tok, LG_STUDY_N_MODES + 1);
    if (nt == 0) return "empty list";
    *n = 0;
    for (int i = 0; i < nt && i < LG_STUDY_N_MODES + 1; i++) {
        lg_study_mode m;
        snprintf(bad, nbad, "%s", tok[i]);
        if (lg_study_mode_parse(tok[i], &m) != 0) return "is not a mode (auto, z3, glpk, smooth, direct)";
        for (int j = 0; j < *n; j++)
            if (modes[j] == m) return "is given twice";
        if (*n == LG_STUDY_N_MODES) return "is one mode too many";
        modes[(*n)++] = m;
    }
    return NULL;
}

static int lg_grid_study_key(lg_grid_parse *P, const char *key, const char *value)
{
    lg_study_grid *g = P->g;
    char buf[1024], *tok[256];
    if (strlen(value) >= sizeof buf) LG_GRID_FAIL(P, "study", key, "value too long");
    snprintf(buf, sizeof buf, "%s", value);
    int n = lg_grid_split(buf, tok, 256);
    if (n < 0) LG_GRID_FAIL(P, "study", key, "more than 256 values");
    if (strcmp(key, "data") == 0) {
        if (n != 1 || strlen(tok[0]) >= sizeof g->data) LG_GRID_FAIL(P, "study", key, "expected one directory");
        snprintf(g->data, sizeof g->data, "%s", tok[0]);
        return 1;
    }
    if (strcmp(key, "timeout") == 0 || strcmp(key, "inputs") == 0 || strcmp(key, "input_offset") == 0) {
        double d;
        if (n != 1 || lg_grid_double(tok[0], &d)) LG_GRID_FAIL(P, "study", key, "expected one number");
        if (key[0] == 't') {
            if (d <= 0) LG_GRID_FAIL(P, "study", key, "expected seconds > 0");
            g->timeout = d;
        } else if (d != floor(d) || d < (key[5] == '_' ? 0 : 1) || d > 100000) {
            LG_GRID_FAIL(P, "study", key, "expected an integer in [%d, 100000]", key[5] == '_' ? 0 : 1);
        } else if (key[5] == '_') {
            g->input_offset = (int)d;
        } else {
            g->n_inputs = (int)d;
            P->seen |= SEEN_INPUTS;
        }
        return 1;
    }
    if (strcmp(key, "z3_theory") == 0) {
        if (n != 1 || !(g->z3_row = lg_solver_theory(lg_solver_z3, tok[0])))
            LG_GRID_FAIL(P, "study", key, "expected one of auto, exact, lp, lp-lemmas");
        snprintf(g->z3_theory, sizeof g->z3_theory, "%s", tok[0]);
        return 1;
    }
    if (n == 0) LG_GRID_FAIL(P, "study", key, "empty list");
    if (strcmp(key, "archs") == 0) {
        lg_study_arch *a = realloc(g->archs, (size_t)(g->n_archs + n) * sizeof *a);
        if (!a) LG_GRID_FAIL(P, "study", key, "out of memory");
        g->archs = a;
        for (int i = 0; i < n; i++)
            if (lg_grid_arch(tok[i], &g->archs[g->n_archs++]) != 0)
                LG_GRID_FAIL(P, "study", key, "'%s' is not an architecture (docs/USAGE.md \"Architectures\"): %s", tok[i],
                             lg_errmsg());
        P->seen |= SEEN_ARCHS;
    } else if (strcmp(key, "seeds") == 0) {
        long *s = realloc(g->seeds, (size_t)(g->n_seeds + n) * sizeof *s);
        if (!s) LG_GRID_FAIL(P, "study", key, "out of memory");
        g->seeds = s;
        for (int i = 0; i < n; i++) {
            long v;
            if (lg_grid_long(tok[i], &v) || v < 0 || v > 2147483647L)
                LG_GRID_FAIL(P, "study", key, "'%s' is not a seed (integer in [0, 2^31))", tok[i]);
            g->seeds[g->n_seeds++] = v;
        }
    } else if (strcmp(key, "eps") == 0) {
        double *e = realloc(g->eps, (size_t)(g->n_eps + n) * sizeof *e);
        if (!e) LG_GRID_FAIL(P, "study", key, "out of memory");
        g->eps = e;
        for (int i = 0; i < n; i++) {
            double v;
            if (lg_grid_double(tok[i], &v) || v < 0 || v > 1)
                LG_GRID_FAIL(P, "study", key, "'%s' is not a radius in [0, 1]", tok[i]);
            g->eps[g->n_eps++] = v;
        }
        P->seen |= SEEN_EPS;
    } else if (strcmp(key, "modes") == 0) {
        char bad[64];
        const char *why = lg_grid_modes(value, g->modes, &g->n_modes, bad, sizeof bad);
        if (why) LG_GRID_FAIL(P, "study", key, "'%s' %s", bad, why);
    } else {
        LG_GRID_FAIL(P, "study", key, "unknown key (archs, seeds, eps, inputs, input_offset, modes, timeout, data, z3_theory)");
    }
    return 1;
}

static int lg_grid_handler(void *user, const char *section, const char *key, const char *value)
{
    lg_grid_parse *P = user;
    if (!key) { /* INI_CALL_HANDLER_ON_NEW_SECTION builds: nothing to do */
        return 1;
    }
    if (strcmp(section, "study") == 0) return lg_grid_study_key(P, key, value);
    if (strcmp(section, "train") == 0) {
        const char *why = lg_grid_train_set(&P->base, key, value);
        if (why) LG_GRID_FAIL(P, "train", key, "'%s': %s", value, why);
        return 1;
    }
    if (strncmp(section, "regime ", 7) == 0) {
        const char *rn = section + 7;
        while (*rn == ' ') rn++;
        if (!*rn || strlen(rn) >= LG_STUDY_NAME - 24 || strpbrk(rn, " \t|/\"\\"))
            LG_GRID_FAIL(P, section, key, "regime names are 1 to %d characters without blanks, '|', '/', quotes",
                         LG_STUDY_NAME - 25);
        int r = P->n_rnames - 1;
        if (r < 0 || P->rsection[r] != P->section_no) { /* a new [regime ...] header */
            for (int i = 0; i < P->n_rnames; i++)
                if (strcmp(P->rnames[i], rn) == 0) LG_GRID_FAIL(P, section, key, "regime '%s' defined twice", rn);
            void *nr = realloc(P->rnames, (size_t)(P->n_rnames + 1) * sizeof *P->rnames);
            if (!nr) LG_GRID_FAIL(P, section, key, "out of memory");
            P->rnames = nr;
            int *ns = realloc(P->rsection, (size_t)(P->n_rnames + 1) * sizeof *ns);
            if (!ns) LG_GRID_FAIL(P, section, key, "out of memory");
            P->rsection = ns;
            r = P->n_rnames++;
            snprintf(P->rnames[r], LG_STUDY_NAME, "%s", rn);
            P->rsection[r] = P->section_no;
        }
        if (P->n_pairs == P->cap_pairs) {
            int cap = P->cap_pairs ? 2 * P->cap_pairs : 32;
            void *np = realloc(P->pairs, (size_t)cap * sizeof *P->pairs);
            if (!np) LG_GRID_FAIL(P, section, key, "out of memory");
            P->pairs = np;
            P->cap_pairs = cap;
        }
        lg_grid_pair *q = &P->pairs[P->n_pairs++];
        q->regime = r;
        q->line = P->line;
        if (strlen(key) >= sizeof q->key || strlen(value) >= sizeof q->value)
            LG_GRID_FAIL(P, section, key, "key or value too long");
        snprintf(q->key, sizeof q->key, "%s", key);
        snprintf(q->value, sizeof q->value, "%s", value);
        return 1;
    }
    if (strncmp(section, "arch ", 5) == 0) { /* kept until [study] archs is known: applied at the end */
        const char *an = section + 5;
        while (*an == ' ') an++;
        if (strcmp(key, "modes") != 0 && strcmp(key, "timeout") != 0 && strcmp(key, "regimes") != 0)
            LG_GRID_FAIL(P, section, key, "unknown key (modes, timeout, regimes)");
        if (P->n_apairs == (int)(sizeof P->apairs / sizeof *P->apairs))
            LG_GRID_FAIL(P, section, key, "too many [arch] keys");
        lg_grid_pair *q = &P->apairs[P->n_apairs++];
        q->line = P->line;
        if (strlen(an) >= sizeof q->arch || strlen(key) >= sizeof q->key || strlen(value) >= sizeof q->value)
            LG_GRID_FAIL(P, section, key, "name, key or value too long");
        snprintf(q->arch, sizeof q->arch, "%s", an);
        snprintf(q->key, sizeof q->key, "%s", key);
        snprintf(q->value, sizeof q->value, "%s", value);
        return 1;
    }
    LG_GRID_FAIL(P, section, key, "unknown section (expected [study], [train], [regime NAME] or [arch NAME])");
}

/* Build the regimes: base + each regime's pairs, list keys expanded. 0 or −1 with P->err set. */
static int lg_grid_regimes(lg_grid_parse *P)
{
    lg_study_grid *g = P->g;
    for (int r = 0; r < P->n_rnames; r++) {
        lg_study_train t = P->base;
        double starts[16], targets[16];
        int ns = 0, nt = 0;
        for (int i = 0; i < P->n_pairs; i++) {
            lg_grid_pair *q = &P->pairs[i];
            if (q->regime != r) continue;
            P->line = q->line;
            char sec[LG_STUDY_NAME + 8];
            snprintf(sec, sizeof sec, "regime %s", P->rnames[r]);
            int is_s = strcmp(q->key, "anneal_start") == 0, is_t = strcmp(q->key, "lambda_target") == 0;
            if (is_s || is_t) {
                char buf[256], *tok[16];
                snprintf(buf, sizeof buf, "%s", q->value);
                int n = lg_grid_split(buf, tok, 16);
                if (n <= 0 || (is_s ? ns : nt) + n > 16) {
                    snprintf(P->err, sizeof P->err, "%s:%d: [%s] %s: expected 1 to 16 values", P->name, q->line, sec,
                             q->key);
                    return -1;
                }
                for (int k = 0; k < n; k++) {
                    lg_study_train tmp = t;
                    const char *why = lg_grid_train_set(&tmp, q->key, tok[k]);
                    if (why) {
                        snprintf(P->err, sizeof P->err, "%s:%d: [%s] %s: '%s': %s", P->name, q->line, sec, q->key,
                                 tok[k], why);
                        return -1;
                    }
                    if (is_s) starts[ns++] = tmp.anneal_start;
                    else targets[nt++] = tmp.lambda_target;
                }
                continue;
            }
            const char *why = lg_grid_train_set(&t, q->key, q->value);
            if (why) {
                snprintf(P->err, sizeof P->err, "%s:%d: [%s] %s: '%s': %s", P->name, q->line, sec, q->key, q->value,
                         why);
                return -1;
            }
        }
        if (ns == 0) starts[ns++] = t.anneal_start;
        if (nt == 0) targets[nt++] = t.lambda_target;
        int expand = ns > 1 || nt > 1;
        lg_study_regime *nr = realloc(g->regimes, (size_t)(g->n_regimes + ns * nt) * sizeof *nr);
        if (!nr) {
            snprintf(P->err, sizeof P->err, "%s: out of memory", P->name);
            return -1;
        }
        g->regimes = nr;
        for (int a = 0; a < ns; a++)
            for (int b = 0; b < nt; b++) {
                lg_study_regime *R = &g->regimes[g->n_regimes++];
                R->tr = t;
                R->tr.anneal_start = starts[a];
                R->tr.lambda_target = targets[b];
                if (expand) snprintf(R->name, sizeof R->name, "%s_s%g_l%g", P->rnames[r], starts[a], targets[b]);
                else snprintf(R->name, sizeof R->name, "%s", P->rnames[r]);
            }
    }
    return 0;
}

static lg_status lg_grid_run(lg_study_grid *g, FILE *f, const char *name)
{
    memset(g, 0, sizeof *g);
    snprintf(g->data, sizeof g->data, "%s", LG_DATA_DEFAULT_DIR);
    g->timeout = 30.0;
    snprintf(g->z3_theory, sizeof g->z3_theory, "auto");
    g->z3_row = lg_solver_theory(lg_solver_z3, g->z3_theory);
    lg_grid_parse P;
    memset(&P, 0, sizeof P);
    P.g = g;
    P.name = name;
    P.f = f;
    P.base = lg_study_train_default();
    lg_status st = LG_OK;
    int rc = ini_parse_stream(lg_grid_reader, &P, lg_grid_handler, &P);
    if (rc != 0) {
        if (!P.err[0]) snprintf(P.err, sizeof P.err, "%s:%d: syntax error (expected [section] or key = value)", name, rc);
        st = lg_fail(LG_ERR_FORMAT, "%s", P.err);
        goto fail;
    }
    if (!(P.seen & SEEN_ARCHS) || !(P.seen & SEEN_EPS) || !(P.seen & SEEN_INPUTS)) {
        st = lg_fail(LG_ERR_FORMAT, "%s: [study] needs the keys archs, eps and inputs (missing: %s%s%s)", name,
                     P.seen & SEEN_ARCHS ? "" : "archs ", P.seen & SEEN_EPS ? "" : "eps ",
                     P.seen & SEEN_INPUTS ? "" : "inputs");
        goto fail;
    }
    for (int i = 0; i < P.n_apairs; i++) { /* [arch NAME] overrides */
        const lg_grid_pair *q = &P.apairs[i];
        lg_study_arch *a = NULL;
        for (int j = 0; j < g->n_archs && !a; j++)
            if (strcmp(g->archs[j].name, q->arch) == 0) a = &g->archs[j];
        if (!a) {
            st = lg_fail(LG_ERR_FORMAT, "%s:%d: [arch %s] %s: '%s' is not one of [study] archs", name, q->line, q->arch,
                         q->key, q->arch);
            goto fail;
        }
        if (q->key[0] == 'r') {
            if (strlen(q->value) >= sizeof a->regimes) {
                st = lg_fail(LG_ERR_FORMAT, "%s:%d: [arch %s] regimes: longer than %zu characters", name, q->line,
                             q->arch, sizeof a->regimes - 1);
                goto fail;
            }
            snprintf(a->regimes, sizeof a->regimes, "%s", q->value);
        } else if (q->key[0] == 'm') {
            char bad[64];
            const char *why = lg_grid_modes(q->value, a->modes, &a->n_modes, bad, sizeof bad);
            if (why) {
                st = lg_fail(LG_ERR_FORMAT, "%s:%d: [arch %s] modes: '%s' %s", name, q->line, q->arch, bad, why);
                goto fail;
            }
        } else if (lg_grid_double(q->value, &a->timeout) || a->timeout <= 0) {
            st = lg_fail(LG_ERR_FORMAT, "%s:%d: [arch %s] timeout: '%s': expected seconds > 0", name, q->line, q->arch,
                         q->value);
            goto fail;
        }
    }
    if (P.n_rnames == 0) {
        st = lg_fail(LG_ERR_FORMAT, "%s: no [regime NAME] section", name);
        goto fail;
    }
    if (lg_grid_regimes(&P) != 0) {
        st = lg_fail(LG_ERR_FORMAT, "%s", P.err);
        goto fail;
    }
    for (int i = 0; i < g->n_regimes; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(g->regimes[i].name, g->regimes[j].name) == 0) {
                st = lg_fail(LG_ERR_FORMAT, "%s: two regimes are named '%s'", name, g->regimes[i].name);
                goto fail;
            }
    if (g->n_seeds == 0) {
        g->seeds = malloc(sizeof *g->seeds);
        if (!g->seeds) {
            st = lg_fail(LG_ERR_NOMEM, "out of memory");
            goto fail;
        }
        g->seeds[g->n_seeds++] = 1;
    }
    if (g->n_modes == 0)
        for (int m = 0; m < LG_STUDY_N_MODES; m++) g->modes[g->n_modes++] = (lg_study_mode)m;
fail:
    free(P.pairs);
    free(P.rnames);
    free(P.rsection);
    if (st != LG_OK) lg_study_grid_free(g);
    return st;
}

lg_status lg_study_grid_load(lg_study_grid *g, const char *path)
{
    memset(g, 0, sizeof *g);
    FILE *f = fopen(path, "r");
    if (!f) return lg_fail(LG_ERR_IO, "%s: cannot open the grid file: %s", path, strerror(errno));
    lg_status st = lg_grid_run(g, f, path);
    fclose(f);
    return st;
}

lg_status lg_study_grid_parse(lg_study_grid *g, const char *text, const char *name)
{
    memset(g, 0, sizeof *g);
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    if (!f) return lg_fail(LG_ERR_NOMEM, "cannot open the grid text");
    lg_status st = lg_grid_run(g, f, name);
    fclose(f);
    return st;
}

int lg_study_arch_modes(const lg_study_grid *g, const lg_study_arch *a, const lg_study_mode **modes)
{
    *modes = a->n_modes > 0 ? a->modes : g->modes;
    return a->n_modes > 0 ? a->n_modes : g->n_modes;
}

double lg_study_arch_timeout(const lg_study_grid *g, const lg_study_arch *a)
{
    return a->timeout > 0 ? a->timeout : g->timeout;
}

int lg_study_arch_has_regime(const lg_study_arch *a, const char *regime)
{
    const char *p = a->regimes;
    int any = 0;
    while (*p) {
        while (*p == ' ' || *p == '\t') p++;
        size_t n = strcspn(p, " \t");
        if (n == 0) break;
        any = 1;
        if (strncmp(regime, p, n) == 0 && (regime[n] == '\0' || regime[n] == '_')) return 1;
        p += n;
    }
    return !any;
}

void lg_study_grid_free(lg_study_grid *g)
{
    free(g->archs);
    free(g->regimes);
    free(g->seeds);
    free(g->eps);
    memset(g, 0, sizeof *g);
}

/* FNV-1a over bytes. */
static uint64_t lg_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

uint64_t lg_study_train_hash(const lg_study_train *tr, const lg_study_arch *a, long seed)
{
    /* a canonical text of the options, so struct padding never enters the hash */
    char buf[512];
    int n = snprintf(buf, sizeof buf,
                     "v1 arch=%s act=%s start=%.17g target=%.17g aepochs=%d epochs=%d batch=%d threads=%d opt=%s "
                     "lr=%.17g mom=%.17g wd=%.17g t=%.17g c=%.17g subset=%ld seed=%ld",
                     a->name, tr->act, tr->anneal_start, tr->anneal_start < 1.0 || tr->anneal_epochs > 0 ?
                     tr->lambda_target : 0.0, tr->anneal_epochs, tr->epochs, tr->batch, tr->threads, tr->opt,
                     tr->lr, tr->momentum, tr->wd, tr->t, tr->c, tr->subset, seed);
    if (n > 0 && (size_t)n < sizeof buf && tr->rs > 0) /* only then: the networks of earlier grids keep their hash */
        n += snprintf(buf + n, sizeof buf - (size_t)n, " rs=%.17g rs_eps=%.17g", tr->rs, tr->rs_eps);
    if (n > 0 && (size_t)n < sizeof buf && strcmp(tr->init, "he") != 0) /* likewise */
        n += snprintf(buf + n, sizeof buf - (size_t)n, " init=%s", tr->init);
    return lg_fnv(1469598103934665603ULL, buf, n > 0 && (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* ---- what changed between two grids ---- */

typedef struct lg_gd_item {
    char name[LG_STUDY_NAME + 32]; /* "[regime relu] epochs" */
    char value[512];
} lg_gd_item;

typedef struct lg_gd_list {
    lg_gd_item *v;
    int n, cap;
} lg_gd_list;

static void lg_gd_add(lg_gd_list *L, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void lg_gd_add(lg_gd_list *L, const char *name, const char *fmt, ...)
{
    if (L->n == L->cap) {
        int cap = L->cap ? 2 * L->cap : 64;
        lg_gd_item *v = realloc(L->v, (size_t)cap * sizeof *v);
        if (!v) return;
        L->v = v;
        L->cap = cap;
    }
    lg_gd_item *it = &L->v[L->n++];
    snprintf(it->name, sizeof it->name, "%s", name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->value, sizeof it->value, fmt, ap);
    va_end(ap);
}

static void lg_gd_modes(char *b, size_t n, const lg_study_mode *m, int k)
{
    b[0] = '\0';
    for (int i = 0; i < k; i++) {
        size_t l = strlen(b);
        snprintf(b + l, n - l, "%s%s", i ? " " : "", lg_study_mode_name(m[i]));
    }
}

/* The settings of g that decide its rows, as (name, value) items in a fixed order. */
static void lg_gd_items(const lg_study_grid *g, lg_gd_list *L)
{
    char b[512];
    lg_gd_add(L, "[study] data", "%s", g->data);
    b[0] = '\0';
    for (int i = 0; i < g->n_archs; i++) {
        size_t l = strlen(b);
        snprintf(b + l, sizeof b - l, "%s%s", i ? " " : "", g->archs[i].name);
    }
    lg_gd_add(L, "[study] archs", "%s", b);
    b[0] = '\0';
    for (int i = 0; i < g->n_seeds; i++) {
        size_t l = strlen(b);
        snprintf(b + l, sizeof b - l, "%s%ld", i ? " " : "", g->seeds[i]);
    }
    lg_gd_add(L, "[study] seeds", "%s", b);
    b[0] = '\0';
    for (int i = 0; i < g->n_eps; i++) {
        size_t l = strlen(b);
        snprintf(b + l, sizeof b - l, "%s%.15g", i ? " " : "", g->eps[i]);
    }
    lg_gd_add(L, "[study] eps", "%s", b);
    lg_gd_add(L, "[study] inputs", "%d", g->n_inputs);
    lg_gd_add(L, "[study] input_offset", "%d", g->input_offset);
    lg_gd_modes(b, sizeof b, g->modes, g->n_modes);
    lg_gd_add(L, "[study] modes", "%s", b);
    lg_gd_add(L, "[study] timeout", "%.15g", g->timeout);
    lg_gd_add(L, "[study] z3_theory", "%s", g->z3_theory);
    for (int i = 0; i < g->n_archs; i++) {
        const lg_study_arch *a = &g->archs[i];
        char nm[LG_STUDY_NAME + 32];
        if (a->n_modes) {
            lg_gd_modes(b, sizeof b, a->modes, a->n_modes);
            snprintf(nm, sizeof nm, "[arch %s] modes", a->name);
            lg_gd_add(L, nm, "%s", b);
        }
        if (a->timeout > 0) {
            snprintf(nm, sizeof nm, "[arch %s] timeout", a->name);
            lg_gd_add(L, nm, "%.15g", a->timeout);
        }
        if (a->regimes[0]) {
            snprintf(nm, sizeof nm, "[arch %s] regimes", a->name);
            lg_gd_add(L, nm, "%s", a->regimes);
        }
    }
    for (int r = 0; r < g->n_regimes; r++) {
        const lg_study_train *t = &g->regimes[r].tr;
        char p[LG_STUDY_NAME + 16], nm[LG_STUDY_NAME + 32];
        snprintf(p, sizeof p, "[regime %s]", g->regimes[r].name);
        lg_gd_add(L, p, "present");
#define LG_GD(key, fmt, val)                                  \
    do {                                                      \
        snprintf(nm, sizeof nm, "%s %s", p, key);             \
        lg_gd_add(L, nm, fmt, val);                           \
    } while (0)
        LG_GD("act", "%s", t->act);
        LG_GD("anneal_start", "%.15g", t->anneal_start);
        LG_GD("lambda_target", "%.15g", t->lambda_target);
        LG_GD("anneal_epochs", "%d", t->anneal_epochs);
        LG_GD("epochs", "%d", t->epochs);
        LG_GD("batch", "%d", t->batch);
        LG_GD("threads", "%d", t->threads);
        LG_GD("opt", "%s", t->opt);
        LG_GD("init", "%s", t->init);
        LG_GD("lr", "%.15g", t->lr);
        LG_GD("momentum", "%.15g", t->momentum);
        LG_GD("wd", "%.15g", t->wd);
        LG_GD("t", "%.15g", t->t);
        LG_GD("c", "%.15g", t->c);
        LG_GD("subset", "%ld", t->subset);
        LG_GD("rs", "%.15g", t->rs);
        LG_GD("rs_eps", "%.15g", t->rs_eps);
#undef LG_GD
    }
}

static const lg_gd_item *lg_gd_find(const lg_gd_list *L, const char *name)
{
    for (int i = 0; i < L->n; i++)
        if (strcmp(L->v[i].name, name) == 0) return &L->v[i];
    return NULL;
}

/* 1 if name belongs to a regime section (prefix "[regime X] ") that has no "[regime X]" item in L. */
static int lg_gd_regime_absent(const lg_gd_list *L, const char *name)
{
    if (strncmp(name, "[regime ", 8) != 0) return 0;
    const char *e = strchr(name, ']');
    if (!e || !e[1]) return 0;
    char sec[LG_STUDY_NAME + 16];
    snprintf(sec, sizeof sec, "%.*s", (int)(e - name + 1), name);
    return lg_gd_find(L, sec) == NULL;
}

static void lg_gd_out(char *buf, size_t n, int *count, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void lg_gd_out(char *buf, size_t n, int *count, const char *fmt, ...)
{
    size_t l = strlen(buf);
    if (l + 8 < n) {
        if ((*count)++) l += (size_t)snprintf(buf + l, n - l, "; ");
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(buf + l, n - l, fmt, ap);
        va_end(ap);
        if (w < 0 || (size_t)w >= n - l) snprintf(buf + n - 4, 4, "...");
    } else {
        (*count)++;
    }
}

int lg_study_grid_diff(const lg_study_grid *old, const lg_study_grid *g, char *buf, size_t n)
{
    lg_gd_list A = {0}, B = {0};
    lg_gd_items(old, &A);
    lg_gd_items(g, &B);
    int count = 0;
    if (n) buf[0] = '\0';
    for (int i = 0; i < A.n; i++) {
        const lg_gd_item *b = lg_gd_find(&B, A.v[i].name);
        if (!b) {
            if (lg_gd_regime_absent(&B, A.v[i].name)) continue; /* said once, as "[regime x] removed" */
            lg_gd_out(buf, n, &count, "%s removed", A.v[i].name);
        } else if (strcmp(A.v[i].value, b->value) != 0) {
            lg_gd_out(buf, n, &count, "%s: %s -> %s", A.v[i].name, A.v[i].value, b->value);
        }
    }
    for (int i = 0; i < B.n; i++)
        if (!lg_gd_find(&A, B.v[i].name) && !lg_gd_regime_absent(&A, B.v[i].name))
            lg_gd_out(buf, n, &count, "%s added", B.v[i].name);
    free(A.v);
    free(B.v);
    return count;
}
