/* test_store - the store layer (store.h, stored.h): a location opens with the store its scheme names (a
 * plain path with the file store; an unknown scheme is refused naming it and the known ones); the file and
 * memory stores give the same bytes, views, superblock version and end-of-object errors; and the chunk
 * source reads every path (implicit, gzip located and not, h5py's split chunks, fletcher32 through HDF5,
 * contiguous) through mem:// exactly as H5Dread reads the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "chunk_compare.h"
#include "store.h"

static char g_dir[512];

static const char *file_in(const char *name)
{
    static char path[768];
    snprintf(path, sizeof path, "%s/%s.h5", g_dir, name);
    return path;
}

static void test_locations(const char *path)
{
    char loc[1024], err[512];
    store *st = NULL;
    CHECK_OK(h5pack_store_open(path, &st, err, sizeof err));
    CHECK(strcmp(st->ops->name, "file") == 0);
    h5pack_store_close(st);
    snprintf(loc, sizeof loc, "file://%s", path);
    CHECK_OK(h5pack_store_open(loc, &st, err, sizeof err));
    CHECK(strcmp(st->ops->name, "file") == 0);
    h5pack_store_close(st);
    snprintf(loc, sizeof loc, "mem://%s", path);
    CHECK_OK(h5pack_store_open(loc, &st, err, sizeof err));
    CHECK(strcmp(st->ops->name, "mem") == 0);
    h5pack_store_close(st);

    CHECK_EQ_INT(h5pack_store_open("nope://bucket/key.h5", &st, err, sizeof err), H5PACK_EINVAL);
    CHECK(st == NULL);
    CHECK_STR_CONTAINS(err, "nope://");
    CHECK_STR_CONTAINS(err, "file://, mem://");
    snprintf(loc, sizeof loc, "mem://%s/missing.h5", g_dir);
    CHECK_EQ_INT(h5pack_store_open(loc, &st, err, sizeof err), H5PACK_ENOTFOUND);
    CHECK_STR_CONTAINS(err, loc);
    snprintf(loc, sizeof loc, "%s/missing.h5", g_dir);
    CHECK_EQ_INT(h5pack_store_open(loc, &st, err, sizeof err), H5PACK_ENOTFOUND);
    CHECK_EQ_INT(h5pack_store_open(g_dir, &st, err, sizeof err), H5PACK_EFORMAT); /* a folder */
    CHECK_STR_CONTAINS(err, "a folder, not a file");
}

/* Every byte, a view of every byte, the superblock and the end: the same from both stores. */
static void test_same_bytes(const char *path)
{
    char loc[1024], err[512];
    store *a = NULL, *b = NULL;
    snprintf(loc, sizeof loc, "mem://%s", path);
    CHECK_OK(h5pack_store_open(path, &a, err, sizeof err));
    CHECK_OK(h5pack_store_open(loc, &b, err, sizeof err));
    CHECK_EQ_U64(a->size, b->size);
    uint8_t *x = malloc(a->size), *y = malloc(b->size);
    CHECK(x && y);
    CHECK_OK(h5pack_store_read(a, 0, x, a->size, "all", err, sizeof err));
    CHECK_OK(h5pack_store_read(b, 0, y, b->size, "all", err, sizeof err));
    CHECK(memcmp(x, y, a->size) == 0);
    for (store *s = a; s; s = s == a ? b : NULL) {
        const uint8_t *v = h5pack_store_view(s, 100, a->size - 100);
        CHECK_MSG(v && memcmp(v, x + 100, a->size - 100) == 0, "%s: view of the file", s->ops->name);
        CHECK(h5pack_store_view(s, a->size - 10, 11) == NULL); /* past the end: no view */
        CHECK_EQ_INT(h5pack_store_superblock_version(s), 3);   /* h5fixture writes the latest format */
        uint8_t byte;
        CHECK_EQ_INT(h5pack_store_read(s, a->size, &byte, 1, "one past the end", err, sizeof err), H5PACK_ECORRUPT);
        CHECK_STR_CONTAINS(err, s->location);
        CHECK_STR_CONTAINS(err, "one past the end");
        h5pack_store_unview(s, 100, a->size - 100); /* gives pages back; the bytes stay readable */
        CHECK(memcmp(h5pack_store_view(s, 0, a->size), x, a->size) == 0);
    }
    free(x), free(y);
    h5pack_store_close(a), h5pack_store_close(b);
}

/* The chunk source on mem://PATH reads what H5Dread reads from PATH, on path WANT. */
static void check_through_memory(const char *name, const h5fix_file *tf, h5pack_read_path want)
{
    const char *path = file_in(name);
    char loc[1024], err[512];
    CHECK_OK(h5fix_write(path, tf));
    snprintf(loc, sizeof loc, "mem://%s", path);
    chunk_source *s = NULL;
    CHECK_MSG(h5pack_chunksrc_open(loc, "images", "labels", H5PACK_LAYOUT_AUTO, &s, err, sizeof err) == 0, "%s: %s",
              name, err);
    CHECK_MSG(h5pack_chunksrc_geometry(s)->path == want, "%s: path %s, expected %s", name,
              h5pack_read_path_name(h5pack_chunksrc_geometry(s)->path), h5pack_read_path_name(want));
    CHECK_OK(test_compare_all_chunks(s, path, "images", 1));
    if (want == H5PACK_READ_IMPLICIT) /* a memory store lends every uncompressed chunk */
        CHECK(h5pack_chunksrc_is_mapped(s));
    h5pack_chunksrc_close(s);
}

static void test_chunk_source(void)
{
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    check_through_memory("implicit", &tf, H5PACK_READ_IMPLICIT);
    tf.gzip = 4;
    check_through_memory("gzip", &tf, H5PACK_READ_RAW_DEFLATE);
    CHUNKSRC_AS_H5PY(tf);
    check_through_memory("gzip-h5py", &tf, H5PACK_READ_RAW_DEFLATE);
    tf = CHUNKSRC_TEST_FILE;
    CHUNKSRC_AS_H5PY(tf);
    tf.chunk[0] = 7, tf.chunk[1] = 2, tf.chunk[2] = 3, tf.chunk[3] = 4; /* h5py's chunks=True split images */
    check_through_memory("split", &tf, H5PACK_READ_LOCATED);
    tf = CHUNKSRC_TEST_FILE;
    tf.fletcher32 = 1;
    check_through_memory("fletcher32", &tf, H5PACK_READ_HDF5);
    tf = CHUNKSRC_TEST_FILE;
    tf.contiguous = 1;
    check_through_memory("contiguous", &tf, H5PACK_READ_CONTIGUOUS);
}

/* Rss (KiB) of the mapping of the file named NAME in /proc/self/smaps, -1 without one. */
static long mapping_rss_kib(const char *name)
{
    char line[1024];
    long rss = -1;
    int in_it = 0;
    FILE *f = fopen("/proc/self/smaps", "r");
    CHECK(f != NULL);
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2)
            in_it = strstr(line, name) != NULL;
        else if (in_it && !strncmp(line, "Rss:", 4))
            rss = strtol(line + 4, NULL, 10);
    }
    fclose(f);
    return rss;
}

/* A limit on what lent views hold (view_budget.h): views are counted by the 2 MiB units they touch, one
 * past the limit is refused (the caller reads instead), and a unit's pages leave when its last view ends. */
static void test_view_limit(void)
{
    const char *path = file_in("views");
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    static uint8_t block[1 << 20];
    for (int i = 0; i < 8; i++) { /* 8 MiB = 4 units */
        memset(block, i + 1, sizeof block);
        CHECK(fwrite(block, 1, sizeof block, f) == sizeof block);
    }
    CHECK_OK(fclose(f));
    char err[512];
    store *st = NULL;
    CHECK_OK(h5pack_store_open(path, &st, err, sizeof err));
    if (!h5pack_store_has_views(st)) { /* H5PACK_NO_MMAP, or a kernel without MADV_POPULATE_READ */
        printf("view limit: skipped (no views here)\n");
        h5pack_store_close(st);
        return;
    }
    const uint64_t MiB = 1 << 20;
    h5pack_store_limit_views(st, 4 * MiB); /* two units */
    const uint8_t *a = h5pack_store_view(st, 100, MiB);         /* unit 0 */
    const uint8_t *b = h5pack_store_view(st, MiB, 200);         /* unit 0 again: free */
    const uint8_t *c = h5pack_store_view(st, 2 * MiB + 7, 300); /* unit 1 */
    CHECK(a && b && c && a[0] == 1 && b[0] == 2 && c[0] == 3);
    CHECK_MSG(h5pack_store_view(st, 4 * MiB, 10) == NULL, "a third unit past the limit is refused");
    CHECK_MSG(h5pack_store_view(st, 2 * MiB - 5, 10) != NULL, "a view across units 0 and 1, both held, is free");
    h5pack_store_unview(st, 2 * MiB - 5, 10);
    CHECK_MSG(h5pack_store_view(st, 4 * MiB - 5, 10) == NULL, "one reaching unit 2 is not");
    h5pack_store_unview(st, 100, MiB);
    h5pack_store_unview(st, MiB, 200); /* unit 0 has no view left: its pages go */
    const uint8_t *d = h5pack_store_view(st, 4 * MiB, 10); /* unit 2: room again */
    CHECK_MSG(d && d[0] == 5, "after unit 0 went, unit 2 is lent");
    h5pack_store_unview(st, 4 * MiB, 10);
    h5pack_store_unview(st, 2 * MiB + 7, 300);
    long rss = mapping_rss_kib("views.h5");
    CHECK_MSG(rss >= 0 && rss <= 8, "every view ended: %ld KiB of the map still resident", rss);
    h5pack_store_close(st);
    printf("view limit: 2 units lent, a third refused, lent again once one was given back, %ld KiB left\n", rss);
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "%s", h5fix_tmpdir("store"));
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    CHECK_OK(h5fix_write(file_in("plain"), &tf));
    test_locations(file_in("plain"));
    test_same_bytes(file_in("plain"));
    test_chunk_source();
    test_view_limit();
    printf("store: locations, bytes and views of the file and memory stores, every read path through mem://\n");
    return 0;
}
