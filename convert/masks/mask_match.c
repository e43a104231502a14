/* mask_match.c - images to masks by stem (mask_match.h). */
#include "mask_match.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mask.h"

#define MAX_DEPTH 256 /* deeper is a loop of symbolic links the ancestor check did not see */

typedef struct mask_file {
    char *rel;   /* path relative to MASK_DIR */
    size_t stem; /* length of the path without the extension */
    int used;    /* an image took it */
} mask_file;

typedef struct mask_list {
    mask_file *items;
    size_t count, cap;
} mask_list;

/* The dirs from MASK_DIR down: one met again is a loop of links. */
typedef struct dir_id {
    dev_t dev;
    ino_t ino;
    const struct dir_id *parent;
} dir_id;

/* Length of PATH without the last name's extension ("cat/001.png" -> 7; ".png" and "a.b/c" keep theirs). */
static size_t stem_length(const char *path)
{
    const char *name = strrchr(path, '/'), *dot;
    name = name ? name + 1 : path;
    dot = strrchr(name, '.');
    return dot && dot != name ? (size_t)(dot - path) : strlen(path);
}

static int list_add(mask_list *l, const char *rel)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        mask_file *grown = realloc(l->items, cap * sizeof *grown);
        if (!grown)
            return -1;
        l->items = grown, l->cap = cap;
    }
    char *copy = strdup(rel);
    if (!copy)
        return -1;
    l->items[l->count++] = (mask_file){.rel = copy, .stem = stem_length(copy)};
    return 0;
}

static void list_free(mask_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->items[i].rel);
    free(l->items);
}

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 2);
    if (s)
        snprintf(s, la + lb + 2, "%s%s%s", a, la ? "/" : "", b);
    return s;
}

static int on_path(const dir_id *d, const struct stat *st)
{
    for (; d; d = d->parent)
        if (d->dev == st->st_dev && d->ino == st->st_ino)
            return 1;
    return 0;
}

/* Adds every file under ROOT/REL (REL "" for ROOT) to L. -1: out of memory, or ROOT itself unlistable. */
static int walk(const char *root, const char *rel, const dir_id *parent, int depth, mask_list *l, skip_list *skips)
{
    char *full = rel[0] ? join(root, rel) : strdup(root);
    DIR *dir = full ? opendir(full) : NULL;
    struct stat st;
    int rc = 0;
    if (!dir || fstat(dirfd(dir), &st) != 0) {
        char why[300];
        snprintf(why, sizeof why, "unreadable mask folder: %s", strerror(errno));
        rc = !full || !rel[0] ? -1 : skip_list_add(skips, full, why);
        if (dir)
            closedir(dir);
        free(full);
        return rc;
    }
    dir_id me = {st.st_dev, st.st_ino, parent};
    for (struct dirent *e; rc == 0 && (e = readdir(dir));) {
        if (e->d_name[0] == '.')
            continue;
        char *child_rel = join(rel, e->d_name), *child = child_rel ? join(root, child_rel) : NULL;
        if (!child) {
            free(child_rel);
            rc = -1;
            break;
        }
        if (stat(child, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (!on_path(&me, &st) && depth < MAX_DEPTH)
                rc = walk(root, child_rel, &me, depth + 1, l, skips);
        } else {
            rc = list_add(l, child_rel); /* broken links and the like are refused when probed */
        }
        free(child), free(child_rel);
    }
    closedir(dir);
    free(full);
    return rc;
}

/* By stem, then by path: the masks of one stem lie together. */
static int compare_masks(const void *a, const void *b)
{
    const mask_file *x = a, *y = b;
    size_t n = x->stem < y->stem ? x->stem : y->stem;
    int c = memcmp(x->rel, y->rel, n);
    if (c == 0 && x->stem != y->stem)
        return x->stem < y->stem ? -1 : 1;
    return c ? c : strcmp(x->rel, y->rel);
}

/* The first mask whose stem is STEM (LEN bytes) in the sorted list; *N how many share it. */
static mask_file *find_stem(const mask_list *l, const char *stem, size_t len, size_t *n)
{
    size_t lo = 0, hi = l->count;
    mask_file key = {.rel = (char *)stem, .stem = len};
    while (lo < hi) { /* the first item not below KEY's stem */
        size_t mid = (lo + hi) / 2;
        const mask_file *m = &l->items[mid];
        size_t k = m->stem < len ? m->stem : len;
        int c = memcmp(m->rel, key.rel, k);
        if (c < 0 || (c == 0 && m->stem < len))
            lo = mid + 1;
        else
            hi = mid;
    }
    *n = 0;
    while (lo + *n < l->count && l->items[lo + *n].stem == len && memcmp(l->items[lo + *n].rel, stem, len) == 0)
        (*n)++;
    return *n ? &l->items[lo] : NULL;
}

/* Why entry E has no usable mask (REASON set), or 0 with E's mask set and *BYTES raised to the mask's. */
static int pair_entry(const char *mask_dir, const mask_list *l, scan_entry *e, uint32_t *bytes, char *reason,
                      size_t len)
{
    size_t stem = stem_length(e->relpath), n = 0;
    mask_file *m = find_stem(l, e->relpath, stem, &n);
    for (size_t i = 0; i < n; i++)
        m[i].used = 1;
    if (n == 0) {
        snprintf(reason, len, "no mask: no file %.*s.* in %s", (int)stem, e->relpath, mask_dir);
        return -1;
    }
    if (n > 1) {
        snprintf(reason, len, "bad mask: %zu files in %s have the stem %.*s (%s, %s%s): keep one", n, mask_dir,
                 (int)stem, e->relpath, m[0].rel, m[1].rel, n > 2 ? ", ..." : "");
        return -1;
    }
    char why[400], *path = join(mask_dir, m->rel);
    uint32_t b = 0;
    if (!path || mask_probe(path, &b, why, sizeof why) != 0) {
        snprintf(reason, len, "bad mask: %s: %s", path ? path : m->rel, path ? why : "out of memory");
        free(path);
        return -1;
    }
    free(path);
    if (!(e->mask = strdup(m->rel)))
        return -1;
    *bytes = b > *bytes ? b : *bytes;
    return 0;
}

/* Keeps the entries that have a mask, in order; the others become skipped files. */
static int pair_all(const char *mask_dir, mask_list *l, scan_result *scan, uint32_t *bytes)
{
    size_t kept = 0;
    int rc = 0;
    for (size_t i = 0; i < scan->n_entries; i++) {
        scan_entry e = scan->entries[i];
        char reason[900];
        if (pair_entry(mask_dir, l, &e, bytes, reason, sizeof reason) == 0) {
            scan->entries[kept++] = e;
            continue;
        }
        if (rc == 0)
            rc = skip_list_add(&scan->skipped, e.name, reason);
        free(e.relpath), free(e.name), free(e.mask);
    }
    scan->n_entries = kept;
    return rc;
}

/* The masks no image took: skipped files too, named by their path under MASK_DIR. */
static int report_orphans(const char *mask_dir, const mask_list *l, skip_list *skips)
{
    for (size_t i = 0; i < l->count; i++) {
        const mask_file *m = &l->items[i];
        if (m->used)
            continue;
        char reason[600], *path = join(mask_dir, m->rel);
        snprintf(reason, sizeof reason, "mask without an image: no image to pack has the stem %.*s", (int)m->stem,
                 m->rel);
        int rc = path ? skip_list_add(skips, path, reason) : -1;
        free(path);
        if (rc != 0)
            return -1;
    }
    return 0;
}

int mask_match(const char *mask_dir, scan_result *scan, uint32_t *bytes, char *err, size_t err_len)
{
    mask_list l = {0};
    *bytes = 1;
    if (walk(mask_dir, "", NULL, 0, &l, &scan->skipped) != 0) {
        snprintf(err, err_len, "--masks %s: %s", mask_dir, errno ? strerror(errno) : "out of memory");
        list_free(&l);
        return -1;
    }
    qsort(l.items, l.count, sizeof *l.items, compare_masks);
    int rc = pair_all(mask_dir, &l, scan, bytes) == 0 && report_orphans(mask_dir, &l, &scan->skipped) == 0 ? 0 : -1;
    if (rc != 0)
        snprintf(err, err_len, "out of memory pairing images with the masks of %s", mask_dir);
    list_free(&l);
    return rc;
}
