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

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "%s", h5fix_tmpdir("store"));
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    CHECK_OK(h5fix_write(file_in("plain"), &tf));
    test_locations(file_in("plain"));
    test_same_bytes(file_in("plain"));
    test_chunk_source();
    printf("store: locations, bytes and views of the file and memory stores, every read path through mem://\n");
    return 0;
}
