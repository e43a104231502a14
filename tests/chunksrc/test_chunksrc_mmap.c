/* test_chunksrc_mmap.c - the zero-copy path (h5pack_chunksrc_map.c): uncompressed implicit and contiguous files
 * are mapped unless H5PACK_NO_MMAP=1, compressed ones never; every mapped chunk holds the same bytes as
 * h5pack_chunksrc_read of the same chunk through pread, with the same bytes_read, also after
 * h5pack_chunksrc_map_release dropped its pages from the page tables; and a file truncated after
 * open makes h5pack_chunksrc_map decline the chunks beyond the new end (no SIGBUS) while h5pack_chunksrc_read reports
 * the truncation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "chunksrc_impl.h" /* base_addr: where to cut the file */
#include "chunk_compare.h"

static chunk_source *open_source(const char *path, int mapped)
{
    char err[1024];
    chunk_source *s = NULL;
    if (mapped)
        unsetenv("H5PACK_NO_MMAP");
    else
        setenv("H5PACK_NO_MMAP", "1", 1);
    int rc = h5pack_chunksrc_open(path, "images", "labels", H5PACK_LAYOUT_AUTO, &s, err, sizeof err);
    unsetenv("H5PACK_NO_MMAP");
    CHECK_MSG(rc == 0, "%s: open returned %d: %s", path, rc, err);
    return s;
}

static const char *write_case(const char *name, const h5fix_file *tf)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/%s.h5", h5fix_tmpdir("chunksrc-mmap"), name);
    CHECK_OK(h5fix_write(path, tf));
    return path;
}

/* Mapped and pread sources of the same file agree on every chunk, bytes and cost. */
static void check_same_bytes(const char *name, const h5fix_file *tf, h5pack_read_path want_path)
{
    const char *path = write_case(name, tf);
    chunk_source *m = open_source(path, 1), *p = open_source(path, 0);
    const source_geometry *g = h5pack_chunksrc_geometry(m);
    CHECK_EQ_INT(g->path, want_path);
    CHECK(h5pack_chunksrc_is_mapped(m));
    CHECK(!h5pack_chunksrc_is_mapped(p));
    uint8_t *buf = malloc(g->chunk_bytes);
    CHECK(buf != NULL);
    char err[1024];
    for (uint64_t c = 0; c < g->n_chunks; c++) {
        chunk_read_cost cm = {0}, cp = {0};
        const uint8_t *data = NULL;
        uint64_t len = h5pack_chunksrc_chunk_samples(m, c) * g->image_bytes;
        CHECK_EQ_INT(h5pack_chunksrc_map(p, c, &data, &cp), CHUNKSRC_NOT_MAPPED);
        CHECK_EQ_INT(h5pack_chunksrc_map(m, c, &data, &cm), 0);
        CHECK_OK(h5pack_chunksrc_read(p, c, buf, NULL, &cp, err, sizeof err));
        CHECK_MSG(memcmp(data, buf, len) == 0, "%s: chunk %llu differs between the mapping and pread", name,
                  (unsigned long long)c);
        CHECK_EQ_U64(data[len - 1], h5fix_pixel_rows(NULL, c * g->samples_per_chunk + len / g->image_bytes - 1, g->image_bytes - 1));
        h5pack_chunksrc_map_release(m, data); /* the pages leave the page tables; the pointer still reads them */
        CHECK_MSG(memcmp(data, buf, len) == 0, "%s: chunk %llu differs after its release", name, (unsigned long long)c);
        h5pack_chunksrc_map_release(m, data + 1); /* not a chunk start: ignored */
        h5pack_chunksrc_map_release(p, buf);      /* not mapped: ignored */
        CHECK_EQ_U64(cm.bytes_read, cp.bytes_read);
        CHECK_EQ_U64(cm.bytes_read, len);
    }
    CHECK_EQ_INT(h5pack_chunksrc_map(m, g->n_chunks, &(const uint8_t *){NULL}, NULL), CHUNKSRC_NOT_MAPPED);
    printf("%-12s %llu chunks: mapped bytes and costs equal pread's\n", name, (unsigned long long)g->n_chunks);
    free(buf);
    h5pack_chunksrc_close(m);
    h5pack_chunksrc_close(p);
}

static void test_compressed_not_mapped(void)
{
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    tf.gzip = 4;
    chunk_source *s = open_source(write_case("gzip", &tf), 1);
    CHECK(!h5pack_chunksrc_is_mapped(s));
    const uint8_t *data = NULL;
    CHECK_EQ_INT(h5pack_chunksrc_map(s, 0, &data, NULL), CHUNKSRC_NOT_MAPPED);
    h5pack_chunksrc_close(s);
}

/* Truncated under the mapping after open: touching the lost pages would raise SIGBUS; h5pack_chunksrc_map must
 * decline them (chunks still whole in the file keep working) and h5pack_chunksrc_read must report the loss. */
static void test_truncated_after_open(void)
{
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    tf.n = 4000, tf.h = 16, tf.w = 16, tf.k = 64; /* 63 chunks of 48 KiB: the cut falls inside the data */
    const char *path = write_case("truncated", &tf);
    chunk_source *s = open_source(path, 1);
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    CHECK(h5pack_chunksrc_is_mapped(s));
    uint64_t cut_chunk = g->n_chunks / 2;
    /* a few pages into chunk cut_chunk: it and every later chunk lose pages */
    off_t cut = (off_t)(s->base_addr + cut_chunk * g->chunk_bytes + 3 * 4096 + 100);
    CHECK_OK(truncate(path, cut));
    const uint8_t *data = NULL;
    char err[1024];
    uint8_t *buf = malloc(g->chunk_bytes);
    CHECK_EQ_INT(h5pack_chunksrc_map(s, 0, &data, NULL), 0);
    CHECK_EQ_U64(data[0], h5fix_pixel_rows(NULL, 0, 0));
    CHECK_EQ_INT(h5pack_chunksrc_map(s, cut_chunk, &data, NULL), CHUNKSRC_NOT_MAPPED);
    CHECK_EQ_INT(h5pack_chunksrc_map(s, g->n_chunks - 1, &data, NULL), CHUNKSRC_NOT_MAPPED);
    int rc = h5pack_chunksrc_read(s, cut_chunk, buf, NULL, NULL, err, sizeof err);
    CHECK_EQ_INT(rc, H5PACK_ECORRUPT);
    CHECK_MSG(strstr(err, "truncated") != NULL, "unexpected error text: %s", err);
    printf("truncated after open: chunk 0 mapped, chunk %llu declined, pread says: %s\n",
           (unsigned long long)cut_chunk, err);
    free(buf);
    h5pack_chunksrc_close(s);
}

int main(void)
{
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    check_same_bytes("implicit", &tf, H5PACK_READ_IMPLICIT);
    tf.nhwc = 1;
    check_same_bytes("implicit_nhwc", &tf, H5PACK_READ_IMPLICIT);
    tf = CHUNKSRC_TEST_FILE;
    tf.contiguous = 1, tf.old_format = 1;
    check_same_bytes("contiguous", &tf, H5PACK_READ_CONTIGUOUS);
    tf.userblock = 512;
    check_same_bytes("userblock", &tf, H5PACK_READ_CONTIGUOUS);
    test_compressed_not_mapped();
    test_truncated_after_open();
    printf("chunksrc mmap: all checks passed\n");
    return 0;
}
