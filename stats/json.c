/* json.c - streaming JSON writer (see json.h). */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "utf8.h"

void json_init(json_out *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->count[0] = 0;
    j->inline_[0] = 0;
}

static void write_escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else if (*p < 0x80)
            fputc(*p, f);
        else {
            size_t n = h5pack_utf8_sequence_len(p); /* JSON must be UTF-8 */
            if (n == 0) {
                fputs("\\ufffd", f); /* a byte that is not UTF-8 (e.g. a Latin-1 name): replacement char */
            } else {
                fwrite(p, 1, n, f);
                p += n - 1;
            }
        }
    }
    fputc('"', f);
}

/* Comma, newline + indent, and "key": before a value. */
static void value_prefix(json_out *j, const char *key)
{
    if (j->count[j->depth]++ > 0)
        fputs(j->inline_[j->depth] ? ", " : ",", j->f);
    if (j->depth > 0 && !j->inline_[j->depth]) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    if (key) {
        write_escaped(j->f, key);
        fputs(": ", j->f);
    }
}

static void open_level(json_out *j, const char *key, char c, int one_line)
{
    value_prefix(j, key);
    fputc(c, j->f);
    if (j->depth + 1 < JSON_MAX_DEPTH) {
        j->count[++j->depth] = 0;
        j->inline_[j->depth] = one_line;
    }
}

static void close_level(json_out *j, char c)
{
    int had = j->count[j->depth] > 0 && !j->inline_[j->depth];
    if (j->depth > 0)
        j->depth--;
    if (had) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    fputc(c, j->f);
}

void json_object_begin(json_out *j, const char *key) { open_level(j, key, '{', 0); }
void json_object_end(json_out *j) { close_level(j, '}'); }
void json_array_begin(json_out *j, const char *key) { open_level(j, key, '[', 0); }
void json_inline_array_begin(json_out *j, const char *key) { open_level(j, key, '[', 1); }
void json_array_end(json_out *j) { close_level(j, ']'); }

void json_string(json_out *j, const char *key, const char *value)
{
    value_prefix(j, key);
    if (value)
        write_escaped(j->f, value);
    else
        fputs("null", j->f);
}

void json_u64(json_out *j, const char *key, uint64_t value)
{
    value_prefix(j, key);
    fprintf(j->f, "%" PRIu64, value);
}

void json_i64(json_out *j, const char *key, int64_t value)
{
    value_prefix(j, key);
    fprintf(j->f, "%" PRId64, value);
}

void json_double(json_out *j, const char *key, double value)
{
    value_prefix(j, key);
    if (isfinite(value)) { /* the shortest text that reads back as the same double (a config's 4/3 too) */
        char text[32];
        for (int digits = 6; digits <= 17; digits++) {
            snprintf(text, sizeof text, "%.*g", digits, value);
            if (strtod(text, NULL) == value)
                break;
        }
        fputs(text, j->f);
    } else
        fputs("null", j->f);
}

void json_bool(json_out *j, const char *key, int value)
{
    value_prefix(j, key);
    fputs(value ? "true" : "false", j->f);
}

void json_finish(json_out *j)
{
    fputc('\n', j->f);
    fflush(j->f);
}
