/* label_match.c - rows of the --labels table to scanned images, by relative path or unique bare name. */
#include "label_match.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_INDEX SIZE_MAX

/* Open-addressing string map to an index (NO_INDEX: free slot). A second index records a collision of
 * bare names (an ambiguous name keeps its first two images, for the message). */
typedef struct name_map {
    const char **names;
    size_t *first, *second;
    size_t mask;
} name_map;

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int map_init(name_map *m, size_t count)
{
    size_t cap = 16;
    while (cap < count * 2)
        cap *= 2;
    m->mask = cap - 1;
    m->names = calloc(cap, sizeof *m->names);
    m->first = malloc(cap * sizeof *m->first);
    m->second = malloc(cap * sizeof *m->second);
    if (!m->names || !m->first || !m->second)
        return -1;
    for (size_t i = 0; i < cap; i++)
        m->first[i] = m->second[i] = NO_INDEX;
    return 0;
}

static void map_free(name_map *m)
{
    free(m->names), free(m->first), free(m->second);
}

/* The slot of NAME: its own, or the free one where it would go. */
static size_t map_slot(const name_map *m, const char *name)
{
    size_t i = (size_t)hash_name(name) & m->mask;
    while (m->names[i] && strcmp(m->names[i], name) != 0)
        i = (i + 1) & m->mask;
    return i;
}

/* Adds NAME -> INDEX; a name already there keeps its first index and records INDEX as second. */
static void map_add(name_map *m, const char *name, size_t index)
{
    size_t i = map_slot(m, name);
    if (!m->names[i]) {
        m->names[i] = name;
        m->first[i] = index;
    } else if (m->second[i] == NO_INDEX) {
        m->second[i] = index;
    }
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

typedef struct match_ctx {
    const label_table *t;
    scan_result *scan;
    name_map paths, bases;
    name_map skipped; /* the files the scan skipped, by path: a row naming one is no bare name */
    name_map rows;    /* every row's key: duplicates, and whether an image has a row of its own */
    size_t *row_of; /* per entry: its row, NO_INDEX until matched */
    char *err;
    size_t err_len;
} match_ctx;

static int build_maps(match_ctx *c)
{
    size_t n = c->scan->n_entries;
    const skip_list *sk = &c->scan->skipped;
    if (map_init(&c->paths, n) != 0 || map_init(&c->bases, n) != 0 ||
        map_init(&c->skipped, sk->count) != 0 || map_init(&c->rows, c->t->n_rows) != 0 ||
        !(c->row_of = malloc((n ? n : 1) * sizeof *c->row_of)))
        return -1;
    for (size_t r = 0; r < c->t->n_rows; r++)
        map_add(&c->rows, c->t->keys[r], r);
    for (size_t i = 0; i < sk->count; i++)
        map_add(&c->skipped, sk->names[i], i);
    for (size_t i = 0; i < n; i++) {
        c->row_of[i] = NO_INDEX;
        map_add(&c->paths, c->scan->entries[i].relpath, i);
        map_add(&c->bases, base_name(c->scan->entries[i].relpath), i);
    }
    return 0;
}

/* The first packed image whose bare name is KEY and that has no row of its own, or NO_INDEX. Only for
 * keys that are also a skipped file's path (rare): a walk over the images. */
static size_t unrowed_with_bare_name(const match_ctx *c, const char *key)
{
    if (c->bases.first[map_slot(&c->bases, key)] == NO_INDEX)
        return NO_INDEX;
    for (size_t i = 0; i < c->scan->n_entries; i++) {
        const char *path = c->scan->entries[i].relpath;
        if (strcmp(base_name(path), key) == 0 && !c->rows.names[map_slot(&c->rows, path)])
            return i;
    }
    return NO_INDEX;
}

/* Row R's key is the path of a file the scan skipped (a top-level image beside class folders, say). It
 * names that file (no image: 0, *ENTRY NO_INDEX) when every packed image with that bare name has a row of
 * its own (or there is none); else it could mean either, which is the ambiguity error (-1). */
static int skipped_path(match_ctx *c, size_t r, size_t skip, size_t *entry)
{
    const char *key = c->t->keys[r];
    size_t bare = unrowed_with_bare_name(c, key);
    *entry = NO_INDEX;
    if (bare == NO_INDEX)
        return 0;
    snprintf(c->err, c->err_len, "%s:%zu:1: '%s' is the path of a file that is not packed (%s) and the bare name "
             "of %s: write that image's path, or drop the row", c->t->path, c->t->lines[r], key,
             c->scan->skipped.reasons[skip], c->scan->entries[bare].name);
    return -1;
}

/* The entry row R names (NO_INDEX: none), or -1 for an ambiguous bare name. */
static int find_entry(match_ctx *c, size_t r, size_t *entry)
{
    const char *key = c->t->keys[r];
    size_t s = map_slot(&c->paths, key);
    *entry = c->paths.first[s];
    if (*entry != NO_INDEX || strchr(key, '/'))
        return 0;
    size_t skip = c->skipped.first[map_slot(&c->skipped, key)];
    if (skip != NO_INDEX)
        return skipped_path(c, r, skip, entry);
    s = map_slot(&c->bases, key);
    *entry = c->bases.first[s];
    if (c->bases.second[s] == NO_INDEX)
        return 0;
    snprintf(c->err, c->err_len, "%s:%zu:1: bare name '%s' fits several images (%s, %s, ...): write the path "
             "relative to SRC_DIR", c->t->path, c->t->lines[r], key, c->scan->entries[*entry].name,
             c->scan->entries[c->bases.second[s]].name);
    return -1;
}

/* Row R is a later row of a key an earlier row has (rows are matched in order: reported at the second). */
static int check_duplicate_key(match_ctx *c, size_t r)
{
    size_t first = c->rows.first[map_slot(&c->rows, c->t->keys[r])];
    if (first == r)
        return 0;
    snprintf(c->err, c->err_len, "%s:%zu: duplicate row for '%s' (first on line %zu)", c->t->path, c->t->lines[r],
             c->t->keys[r], c->t->lines[first]);
    return -1;
}

static int add_orphan(label_orphans *o, size_t row)
{
    size_t *grown = realloc(o->rows, (o->count + 1) * sizeof *grown);
    if (!grown)
        return -1;
    o->rows = grown;
    o->rows[o->count++] = row;
    return 0;
}

static int match_rows(match_ctx *c, label_orphans *orphans)
{
    for (size_t r = 0; r < c->t->n_rows; r++) {
        size_t e;
        if (check_duplicate_key(c, r) != 0 || find_entry(c, r, &e) != 0)
            return -1;
        if (e == NO_INDEX) {
            if (add_orphan(orphans, r) != 0)
                return snprintf(c->err, c->err_len, "out of memory"), -1;
        } else if (c->row_of[e] != NO_INDEX) {
            snprintf(c->err, c->err_len, "%s:%zu: row '%s' names the same image as line %zu (%s)", c->t->path,
                     c->t->lines[r], c->t->keys[r], c->t->lines[c->row_of[e]], c->scan->entries[e].name);
            return -1;
        } else {
            c->row_of[e] = r;
        }
    }
    return 0;
}

/* Keeps the matched entries in order; the others become skipped files. */
static int drop_unmatched(match_ctx *c)
{
    scan_result *s = c->scan;
    size_t kept = 0;
    int rc = 0;
    for (size_t i = 0; i < s->n_entries; i++) {
        scan_entry e = s->entries[i];
        if (c->row_of[i] != NO_INDEX) {
            e.label_row = c->row_of[i];
            s->entries[kept++] = e;
            continue;
        }
        if (rc == 0)
            rc = skip_list_add(&s->skipped, e.name, "no label row");
        free(e.relpath), free(e.name);
    }
    s->n_entries = kept;
    return rc;
}

int label_match(const label_table *t, scan_result *scan, label_orphans *orphans, char *err, size_t err_len)
{
    match_ctx c = {.t = t, .scan = scan, .err = err, .err_len = err_len};
    int rc = -1;
    memset(orphans, 0, sizeof *orphans);
    if (build_maps(&c) != 0)
        snprintf(err, err_len, "out of memory matching %zu label rows", t->n_rows);
    else if (match_rows(&c, orphans) == 0)
        rc = drop_unmatched(&c) == 0 ? 0 : (snprintf(err, err_len, "out of memory"), -1);
    map_free(&c.paths), map_free(&c.bases), map_free(&c.skipped), map_free(&c.rows);
    free(c.row_of);
    if (rc != 0)
        label_orphans_free(orphans);
    return rc;
}

void label_orphans_free(label_orphans *o)
{
    free(o->rows);
    memset(o, 0, sizeof *o);
}
