/* results.h — the study's JSON-lines files (results.jsonl, networks.jsonl).
 *
 * Every line is one JSON object (jansson) with a string field "key" that
 * identifies it. An instance's key is its cell "regime|arch|seed|input|eps|mode"
 * followed by "|hash|settings|lgelu VERSION": the network's training hash,
 * the verification settings of its mode (lg_study_verify_settings) and
 * lgelu's version, so rows of different networks, settings or versions never
 * share a key and a resume never takes one for another. A network's key is
 * "regime|arch|seed|hash|lgelu VERSION". lg_study_log_open reads the keys already
 * present (so a resumed run skips them and never writes a key twice), cuts a
 * torn last line left by a kill, and appends new objects as one write of the
 * whole line followed by fsync (core/atomic.h). Appends are serialised by a
 * mutex, so worker threads share one log.
 *
 * Ownership: the log owns its descriptor and key set; lg_study_log_close
 * releases them. lg_study_rows_read returns a new jansson array the caller
 * json_decref()s.
 */
#ifndef LG_STUDY_RESULTS_H
#define LG_STUDY_RESULTS_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>

#include "core/status.h"
#include "study/grid.h"

typedef struct lg_study_log {
    int fd;
    char *path;
    char **keys;        /* sorted */
    int n_keys, cap_keys;
    pthread_mutex_t mu;
    int mu_init;
} lg_study_log;

/* Open (create) path for appending; load its keys. */
lg_status lg_study_log_open(lg_study_log *L, const char *path);
/* 1 if key is present. */
int lg_study_log_has(lg_study_log *L, const char *key);
/* Append obj (must have a string "key"); LG_OK without writing if the key is
 * already present (*written = 0), else *written = 1. written may be NULL. */
lg_status lg_study_log_append(lg_study_log *L, json_t *obj, int *written);
void lg_study_log_close(lg_study_log *L);

/* All objects of a JSON-lines file, in file order (a torn last line is
 * ignored); if path is missing, path.gz is read instead (an archived study
 * directory); neither gives an empty array. Errors name the line. */
lg_status lg_study_rows_read(const char *path, json_t **rows);

/* Keys (see above). The cell names an instance of the grid whatever network,
 * settings or version ran it (the report keeps the last row of each cell). */
void lg_study_key_cell(char *buf, size_t n, const char *regime, const char *arch, long seed, int input, double eps,
                       lg_study_mode mode);
void lg_study_key_instance(char *buf, size_t n, const char *regime, const char *arch, long seed, int input,
                           double eps, lg_study_mode mode, uint64_t hash, const char *settings);
void lg_study_key_net(char *buf, size_t n, const char *regime, const char *arch, long seed, uint64_t hash);

#endif
