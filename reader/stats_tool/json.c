/* json.c - streaming JSON writer (see json.h). */
#include "json.h"

#include <inttypes.h>
#include <math.h>

void json_init(json_out *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->count[0] = 0;
    j->inline_[0] = 0;
}

/* Length of the valid UTF-8 sequence starting at P (1..4), or 0 if it is not one (JSON must be UTF-8). */
static int utf8_sequence_length(const unsigned char *p)
{
    int n = p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 && p[0] <= 0xDF ? 2 : 0;
    if (p[0] >= 0xF5)
        n = 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if ((n == 3 && p[0] == 0xE0 && p[1] < 0xA0) || (n == 3 && p[0] == 0xED && p[1] >= 0xA0) ||
        (n == 4 && p[0] == 0xF0 && p[1] < 0x90) || (n == 4 && p[0] == 0xF4 && p[1] >= 0x90))
        return 0; /* overlong, surrogate, or beyond U+10FFFF */
    return n;
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
            int n = utf8_sequence_length(p);
            if (n == 0) {
                fputs("\\ufffd", f); /* a byte that is not UTF-8 (e.g. a Latin-1 name): replacement char */
            } else {
                fwrite(p, 1, (size_t)n, f);
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
    if (isfinite(value))
        fprintf(j->f, "%.6g", value);
    else
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
