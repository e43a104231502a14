/* scan.c - listing the images of SRC_DIR (ImageFolder or flat), sorted like torchvision. */
#include "scan.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utf8.h"

/* The directories from SRC_DIR down to the one being listed: a directory met again is a link loop. */
typedef struct ancestor {
    dev_t dev;
    ino_t ino;
    const struct ancestor *parent;
} ancestor;

/* One image file found under a class folder, before sorting. */
typedef struct found_file {
    char *dir;  /* relative directory ("" for SRC_DIR itself) */
    char *name; /* file name */
} found_file;

typedef struct found_list {
    found_file *items;
    size_t count, cap;
} found_list;

/* A name listed in a directory, with the type readdir gave (DT_UNKNOWN when the file system gives none). */
typedef struct dir_entry {
    char *name;
    unsigned char type;
} dir_entry;

typedef struct scan_ctx {
    const char *src;
    scan_result *res;
} scan_ctx;

int scan_has_image_extension(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name)
        return 0;
    return strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0 || strcasecmp(dot, ".png") == 0;
}

char *utf8_escape(const char *name, int *changed)
{
    size_t len = strlen(name);
    char *out = malloc(len * 4 + 1), *w = out;
    if (!out)
        return NULL;
    const unsigned char *p = (const unsigned char *)name;
    *changed = 0;
    while (*p) {
        size_t n = h5pack_utf8_sequence_len(p);
        if (n == 0) {
            w += sprintf(w, "\\x%02X", *p++);
            *changed = 1;
            continue;
        }
        memcpy(w, p, n);
        w += n;
        p += n;
    }
    *w = '\0';
    return out;
}

static char *join_path(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 2);
    if (!s)
        return NULL;
    if (la == 0) {
        memcpy(s, b, lb + 1);
        return s;
    }
    memcpy(s, a, la);
    s[la] = '/';
    memcpy(s + la + 1, b, lb + 1);
    return s;
}

static int add_warning(scan_result *r, const char *text)
{
    char **w = realloc(r->warnings, (r->n_warnings + 1) * sizeof *w);
    if (!w)
        return -1;
    r->warnings = w;
    if (!(w[r->n_warnings] = strdup(text)))
        return -1;
    r->n_warnings++;
    return 0;
}

/* Records REL (escaped) as skipped; SUFFIX "/" marks directories. */
static int add_skip(scan_result *r, const char *rel, const char *suffix, const char *reason)
{
    int changed;
    char *esc = utf8_escape(rel, &changed);
    if (!esc)
        return -1;
    char *name = malloc(strlen(esc) + strlen(suffix) + 1);
    int rc = -1;
    if (name) {
        sprintf(name, "%s%s", esc, suffix);
        rc = skip_list_add(&r->skipped, name, reason);
    }
    free(name);
    free(esc);
    return rc;
}

static int compare_entries(const void *a, const void *b)
{
    return strcmp(((const dir_entry *)a)->name, ((const dir_entry *)b)->name);
}

static void free_entries(dir_entry *entries, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(entries[i].name);
    free(entries);
}

/* The entries of directory PATH, without "." "..", and hidden names, sorted in byte order. */
static int list_directory(const char *path, dir_entry **entries_out, size_t *count_out)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    dir_entry *entries = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    while ((errno = 0, e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (count == cap) {
            cap = cap ? cap * 2 : 64;
            dir_entry *grown = realloc(entries, cap * sizeof *entries);
            if (!grown)
                goto fail;
            entries = grown;
        }
        if (!(entries[count].name = strdup(e->d_name)))
            goto fail;
        entries[count++].type = e->d_type;
    }
    if (errno != 0)
        goto fail;
    closedir(d);
    if (count > 1)
        qsort(entries, count, sizeof *entries, compare_entries);
    *entries_out = entries;
    *count_out = count;
    return 0;
fail:;
    int saved = errno ? errno : ENOMEM;
    free_entries(entries, count);
    closedir(d);
    errno = saved;
    return -1;
}

static void free_names(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

static int is_on_path(const ancestor *a, const struct stat *st)
{
    for (; a; a = a->parent)
        if (a->dev == st->st_dev && a->ino == st->st_ino)
            return 1;
    return 0;
}

/* stat() failed for FULL: a reason in words. */
static const char *stat_failure_reason(const char *full, int err, char *buf, size_t len)
{
    struct stat lst;
    if (err == ELOOP)
        return "symbolic link loop";
    if (err == ENOENT && lstat(full, &lst) == 0 && S_ISLNK(lst.st_mode))
        return "broken symbolic link";
    snprintf(buf, len, "cannot read: %s", strerror(err));
    return buf;
}

static int found_add(found_list *l, const char *dir, const char *name)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        found_file *grown = realloc(l->items, cap * sizeof *grown);
        if (!grown)
            return -1;
        l->items = grown;
        l->cap = cap;
    }
    found_file *f = &l->items[l->count];
    f->dir = strdup(dir);
    f->name = strdup(name);
    if (!f->dir || !f->name) {
        free(f->dir);
        free(f->name);
        return -1;
    }
    l->count++;
    return 0;
}

/* A regular file: an image candidate, or skipped. Whether it can be read is found out by the decoder's
 * open (an unreadable file is skipped there: "cannot open: Permission denied"), not by an access() call
 * here: one system call less per image on the scan, which runs before any decoding starts. */
static int visit_file(scan_ctx *c, const char *rel, const char *dir, const char *name, found_list *found)
{
    if (!scan_has_image_extension(name))
        return add_skip(c->res, rel, "", "unsupported format: extension is not .jpg, .jpeg or .png");
    return found_add(found, dir, name);
}

static int walk_directory(scan_ctx *c, const char *rel_dir, const ancestor *parent, found_list *found);

/* One entry E of directory REL_DIR: file, subdirectory (recursed into when RECURSE) or skipped. A regular
 * file as readdir reports it needs no stat (one system call less per image); links, folders and unknown
 * types are looked at with stat, which follows links. */
static int visit_entry(scan_ctx *c, const char *rel_dir, const dir_entry *e, const ancestor *parent, int recurse,
                       found_list *found)
{
    char buf[256];
    int rc = -1;
    const char *name = e->name;
    char *rel = join_path(rel_dir, name);
    char *full = rel ? join_path(c->src, rel) : NULL;
    struct stat st;
    if (!full)
        goto done;
    if (e->type == DT_REG) {
        rc = visit_file(c, rel, rel_dir, name, found);
    } else if (stat(full, &st) != 0) {
        rc = add_skip(c->res, rel, "", stat_failure_reason(full, errno, buf, sizeof buf));
    } else if (S_ISDIR(st.st_mode)) {
        if (scan_has_image_extension(name))
            rc = add_skip(c->res, rel, "/", "is a directory, not an image file");
        else if (!recurse)
            rc = add_skip(c->res, rel, "/", "folder below a flat folder's level ignored");
        else if (is_on_path(parent, &st))
            rc = add_skip(c->res, rel, "/", "symbolic link loop (folder already on the path)");
        else {
            ancestor me = {st.st_dev, st.st_ino, parent};
            rc = walk_directory(c, rel, &me, found);
        }
    } else if (S_ISREG(st.st_mode)) {
        rc = visit_file(c, rel, rel_dir, name, found);
    } else {
        rc = add_skip(c->res, rel, "", "not a regular file");
    }
done:
    free(full);
    free(rel);
    return rc;
}

static int walk_directory(scan_ctx *c, const char *rel_dir, const ancestor *parent, found_list *found)
{
    dir_entry *names = NULL;
    char buf[256];
    size_t count = 0;
    char *full = join_path(c->src, rel_dir);
    if (!full)
        return -1;
    if (list_directory(full, &names, &count) != 0) {
        snprintf(buf, sizeof buf, "cannot list folder: %s", strerror(errno));
        free(full);
        return add_skip(c->res, rel_dir, "/", buf);
    }
    free(full);
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++)
        rc = visit_entry(c, rel_dir, &names[i], parent, 1, found);
    free_entries(names, count);
    return rc;
}

/* Like sorted(os.walk(...)): by directory path, then by file name. */
static int compare_found(const void *a, const void *b)
{
    const found_file *x = a, *y = b;
    int d = strcmp(x->dir, y->dir);
    return d ? d : strcmp(x->name, y->name);
}

static int append_entries(scan_result *r, found_list *found, uint32_t label)
{
    if (found->count > 1)
        qsort(found->items, found->count, sizeof *found->items, compare_found);
    scan_entry *grown = realloc(r->entries, (r->n_entries + found->count + 1) * sizeof *grown);
    if (!grown)
        return -1;
    r->entries = grown;
    for (size_t i = 0; i < found->count; i++) {
        scan_entry *e = &r->entries[r->n_entries];
        int changed;
        *e = (scan_entry){.label = label}; /* no label row, no mask until they are matched */
        e->relpath = join_path(found->items[i].dir, found->items[i].name);
        e->name = e->relpath ? utf8_escape(e->relpath, &changed) : NULL;
        if (!e->name) {
            free(e->relpath);
            return -1;
        }
        r->n_entries++;
    }
    return 0;
}

static void found_clear(found_list *l)
{
    for (size_t i = 0; i < l->count; i++) {
        free(l->items[i].dir);
        free(l->items[i].name);
    }
    l->count = 0;
}

static int is_directory(const char *src, const dir_entry *e)
{
    struct stat st;
    if (e->type == DT_REG)
        return 0;
    char *full = join_path(src, e->name);
    int yes = full && stat(full, &st) == 0 && S_ISDIR(st.st_mode);
    free(full);
    return yes;
}

/* A top-level name is a class when it is a folder not named like an image. */
static int is_class_folder(const char *src, const dir_entry *e)
{
    return !scan_has_image_extension(e->name) && is_directory(src, e);
}

static int add_class(scan_result *r, const char *name)
{
    int changed;
    char **grown = realloc(r->classes, (r->n_classes + 1) * sizeof *grown);
    if (!grown)
        return -1;
    r->classes = grown;
    if (!(grown[r->n_classes] = utf8_escape(name, &changed)))
        return -1;
    r->n_classes++;
    return 0;
}

static int scan_class(scan_ctx *c, const dir_entry *e, const ancestor *root, found_list *found)
{
    char msg[512];
    size_t before = c->res->n_entries;
    uint32_t label = (uint32_t)c->res->n_classes;
    if (add_class(c->res, e->name) != 0 || visit_entry(c, "", e, root, 1, found) != 0)
        return -1;
    if (append_entries(c->res, found, label) != 0)
        return -1;
    found_clear(found);
    if (c->res->n_entries == before) {
        snprintf(msg, sizeof msg, "class folder '%s' holds no images: it keeps its class index, with no samples (with --labels: ignored)",
                 c->res->classes[label]);
        return add_warning(c->res, msg);
    }
    return 0;
}

/* Why a top-level entry that is no folder is skipped beside class folders: a link that leads nowhere
 * says so (it may have been meant as a class folder), anything else is not inside a class folder. */
static int skip_top_level_file(scan_ctx *c, const dir_entry *e)
{
    struct stat st;
    char buf[256];
    const char *why = "not inside a class folder (SRC_DIR has class folders)";
    char *full = e->type == DT_REG ? NULL : join_path(c->src, e->name);
    if (full && stat(full, &st) != 0)
        why = stat_failure_reason(full, errno, buf, sizeof buf);
    int rc = add_skip(c->res, e->name, "", why);
    free(full);
    return rc;
}

static int scan_top_level(scan_ctx *c, dir_entry *names, size_t count, const ancestor *root)
{
    found_list found = {0};
    int rc = 0;
    for (size_t i = 0; i < count && !c->res->has_classes; i++)
        c->res->has_classes = is_class_folder(c->src, &names[i]);
    for (size_t i = 0; i < count && rc == 0; i++) {
        if (!c->res->has_classes)
            rc = visit_entry(c, "", &names[i], root, 0, &found);
        else if (is_class_folder(c->src, &names[i]))
            rc = scan_class(c, &names[i], root, &found);
        else if (is_directory(c->src, &names[i]))
            rc = visit_entry(c, "", &names[i], root, 0, &found); /* a folder named like an image */
        else
            rc = skip_top_level_file(c, &names[i]);
    }
    if (rc == 0 && !c->res->has_classes)
        rc = append_entries(c->res, &found, 0);
    found_clear(&found);
    free(found.items);
    return rc;
}

int scan_source(const char *src_dir, scan_result *out, char *err, size_t err_len)
{
    struct stat st;
    dir_entry *names = NULL;
    size_t count = 0;
    memset(out, 0, sizeof *out);
    if (stat(src_dir, &st) != 0) {
        snprintf(err, err_len, "%s: %s", src_dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, err_len, "%s: not a folder", src_dir);
        return -1;
    }
    if (list_directory(src_dir, &names, &count) != 0) {
        snprintf(err, err_len, "%s: cannot list folder: %s", src_dir, strerror(errno));
        return -1;
    }
    scan_ctx c = {src_dir, out};
    ancestor root = {st.st_dev, st.st_ino, NULL};
    int rc = scan_top_level(&c, names, count, &root);
    free_entries(names, count);
    if (rc != 0) {
        snprintf(err, err_len, "%s: out of memory while scanning", src_dir);
        scan_free(out);
    }
    return rc;
}

void scan_free(scan_result *r)
{
    for (size_t i = 0; i < r->n_entries; i++) {
        free(r->entries[i].relpath);
        free(r->entries[i].name);
        free(r->entries[i].mask);
    }
    free(r->entries);
    free_names(r->classes, r->n_classes);
    free_names(r->warnings, r->n_warnings);
    skip_list_free(&r->skipped);
    memset(r, 0, sizeof *r);
}
