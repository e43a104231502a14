/* json.h - a small streaming JSON writer for h5pack-stats --json (valid JSON by construction: commas,
 * string escapes, non-finite numbers as null). Not thread-safe; one writer per output. */
#ifndef H5PACK_STATS_JSON_H
#define H5PACK_STATS_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

typedef struct json_out {
    FILE *f;
    int depth;
    int count[JSON_MAX_DEPTH];  /* values written at each open level */
    int inline_[JSON_MAX_DEPTH]; /* level written on one line (arrays of numbers) */
} json_out;

void json_init(json_out *j, FILE *f);
/* KEY is the member name inside an object, NULL inside an array or at the top. */
void json_object_begin(json_out *j, const char *key);
void json_object_end(json_out *j);
void json_array_begin(json_out *j, const char *key);
void json_array_end(json_out *j);
/* An array written on one line: [1, 2, 3]. Only scalars inside. */
void json_inline_array_begin(json_out *j, const char *key);
void json_string(json_out *j, const char *key, const char *value); /* NULL value -> null */
void json_u64(json_out *j, const char *key, uint64_t value);
void json_i64(json_out *j, const char *key, int64_t value);
void json_double(json_out *j, const char *key, double value);
void json_bool(json_out *j, const char *key, int value);
/* Ends the document with a newline. */
void json_finish(json_out *j);

#endif
