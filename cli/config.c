/* config.c — option defaults from a config file (config.h). */
#include "cli/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The argument vector built, its strings, and where each inserted entry came from. */
static char **lg_cfg_argv;
static char **lg_cfg_owned; /* [lg_cfg_n]: the inserted strings */
static int *lg_cfg_line;    /* [lg_cfg_n]: their lines */
static int lg_cfg_n;
static char *lg_cfg_path;

void lg_cli_config_free(void)
{
    for (int i = 0; i < lg_cfg_n; i++) free(lg_cfg_owned[i]);
    free(lg_cfg_owned);
    free(lg_cfg_line);
    free(lg_cfg_argv);
    free(lg_cfg_path);
    lg_cfg_owned = NULL, lg_cfg_line = NULL, lg_cfg_argv = NULL, lg_cfg_path = NULL;
    lg_cfg_n = 0;
}

const char *lg_cli_config_where(int i, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!lg_cfg_argv || i < 1 || i > lg_cfg_n) return buf;
    const char *s = lg_cfg_owned[i - 1];
    while (*s == '-') s++;
    size_t k = strcspn(s, "=");
    if (s - lg_cfg_owned[i - 1] == 1) k = 1; /* a short option: -j2 */
    snprintf(buf, n, " (from %s:%d, key %.*s)", lg_cfg_path, lg_cfg_line[i - 1], (int)k, s);
    return buf;
}

static char *lg_cfg_trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t l = strlen(s);
    while (l > 0 && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\r' || s[l - 1] == '\n')) s[--l] = '\0';
    return s;
}

static int lg_cfg_err(const char *path, int line, const char *fmt, const char *arg)
{
    fprintf(stderr, "lgelu: %s:%d: ", path, line);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return 2;
}

/* Add one option for key/value of line ln. 0, or 2 out of memory. */
static int lg_cfg_add(const char *key, const char *val, int ln)
{
    char **no = realloc(lg_cfg_owned, ((size_t)lg_cfg_n + 1) * sizeof *no);
    if (!no) return 2;
    lg_cfg_owned = no;
    int *nl = realloc(lg_cfg_line, ((size_t)lg_cfg_n + 1) * sizeof *nl);
    if (!nl) return 2;
    lg_cfg_line = nl;
    size_t n = strlen(key) + strlen(val) + 4;
    char *s = malloc(n);
    if (!s) return 2;
    if (key[1] == '\0') snprintf(s, n, "-%s%s", key, val); /* -j2, -v */
    else if (*val) snprintf(s, n, "--%s=%s", key, val);
    else snprintf(s, n, "--%s", key);
    lg_cfg_owned[lg_cfg_n] = s;
    lg_cfg_line[lg_cfg_n++] = ln;
    return 0;
}

/* Read path's entries for command cmd. 0, or 2 with a message. */
static int lg_cfg_read(const char *path, const char *cmd)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "lgelu: --config %s: cannot open: %s\n", path, strerror(errno));
        return 2;
    }
    char line[4096];
    int ln = 0, rc = 0, in_cmd = 1;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        ln++;
        if (!strchr(line, '\n') && !feof(f)) {
            rc = lg_cfg_err(path, ln, "a line longer than %s characters", "4094");
            break;
        }
        char *t = lg_cfg_trim(line);
        if (*t == '\0' || *t == '#' || *t == ';') continue;
        /* an inline comment: # or ; after a blank, outside quotes */
        for (char *c = t, q = 0; *c; c++) {
            if (q) q = *c == q ? 0 : q;
            else if (*c == '"' || *c == '\'') q = *c;
            else if ((*c == '#' || *c == ';') && (c[-1] == ' ' || c[-1] == '\t')) {
                *c = '\0';
                t = lg_cfg_trim(t);
                break;
            }
        }
        if (*t == '[') {
            char *e = strchr(t, ']');
            if (!e || e[1] != '\0' || e == t + 1) {
                rc = lg_cfg_err(path, ln, "expected a section [command], got '%s'", t);
                break;
            }
            *e = '\0';
            in_cmd = strcmp(lg_cfg_trim(t + 1), cmd) == 0;
            continue;
        }
        size_t k = strcspn(t, "=:");
        if (t[k] == '\0') {
            rc = lg_cfg_err(path, ln, "expected key = value or key: value, got '%s'", t);
            break;
        }
        t[k] = '\0';
        char *key = lg_cfg_trim(t), *val = lg_cfg_trim(t + k + 1);
        while (*key == '-') key++;
        if (*key == '\0' || strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != strlen(key)) {
            rc = lg_cfg_err(path, ln, "key '%s': expected an option name (letters, digits, -)", key);
            break;
        }
        if (strcmp(key, "config") == 0) {
            rc = lg_cfg_err(path, ln, "key '%s': a config file cannot name another one", key);
            break;
        }
        size_t vl = strlen(val);
        if (vl >= 2 && (val[0] == '"' || val[0] == '\'') && val[vl - 1] == val[0]) val[vl - 1] = '\0', val++;
        if (!in_cmd) continue;
        for (char *c = key; *c; c++)
            if (*c == '_') *c = '-'; /* timeout_scale as in YAML: --timeout-scale */
        if (!strcmp(val, "false") || !strcmp(val, "no") || !strcmp(val, "off")) continue;
        if (!strcmp(val, "true") || !strcmp(val, "yes") || !strcmp(val, "on")) val = "";
        if (lg_cfg_add(key, val, ln)) {
            fprintf(stderr, "lgelu: %s: out of memory\n", path);
            rc = 2;
        }
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "lgelu: --config %s: read error\n", path);
        rc = 2;
    }
    fclose(f);
    return rc;
}

int lg_cli_config_apply(int argc, char **argv, int *out_argc, char ***out_argv)
{
    *out_argc = argc;
    *out_argv = argv;
    int at = -1, width = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) break;
        if (strcmp(argv[i], "--config") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "lgelu %s: --config: expected a file\n", argv[0]);
                return 2;
            }
            at = i, width = 2, path = argv[i + 1];
        } else if (strncmp(argv[i], "--config=", 9) == 0) {
            at = i, width = 1, path = argv[i] + 9;
        }
    }
    if (at < 0) return 0;
    if (!(lg_cfg_path = strdup(path))) return 2;
    int rc = lg_cfg_read(path, argv[0]);
    if (rc) {
        lg_cli_config_free();
        return rc;
    }
    int n = argc - width + lg_cfg_n;
    if (!(lg_cfg_argv = malloc(((size_t)n + 1) * sizeof *lg_cfg_argv))) {
        lg_cli_config_free();
        return 2;
    }
    int j = 0;
    lg_cfg_argv[j++] = argv[0];
    for (int i = 0; i < lg_cfg_n; i++) lg_cfg_argv[j++] = lg_cfg_owned[i];
    for (int i = 1; i < argc; i++)
        if (i < at || i >= at + width) lg_cfg_argv[j++] = argv[i];
    lg_cfg_argv[j] = NULL;
    *out_argc = n;
    *out_argv = lg_cfg_argv;
    return 0;
}
