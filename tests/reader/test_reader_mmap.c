/* test_reader_mmap.c - the zero-copy path through the whole reader: an uncompressed file (implicit chunk
 * index, and contiguous) read with the mapping (the default) and with H5PACK_NO_MMAP=1 gives the same
 * batches (indices and bytes, checked against the written pixels too) and the same plan counters (hits,
 * misses, bytes read and needed); the file shows in /proc/self/maps only while a mapped reader is open. */
#include <string.h>
#include <stdlib.h>
#include <stdio.h>

#include <stdint.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"
#include "rng.h"

typedef struct run_digest {
    uint64_t batches, samples, hash;
    h5pack_stats st;
    int mapped_seen; /* the file was in /proc/self/maps while the reader was open */
} run_digest;

static int file_is_mapped(const char *name)
{
    char line[1024];
    int found = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, name) != NULL;
    fclose(f);
    return found;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull;
}

/* Checks every image of the uint8 batch B against the file's pattern and folds it into H. */
static uint64_t digest_batch(const h5fix_file *sp, const h5pack_batch *b, uint8_t *want, uint64_t h)
{
    size_t img = (size_t)sp->c * sp->h * sp->w;
    const uint8_t *d = b->data;
    for (size_t i = 0; i < b->count; i++) {
        h5fix_image(sp, b->indices[i], want);
        CHECK_MSG(memcmp(d + i * img, want, img) == 0, "sample %llu: wrong pixels", (unsigned long long)b->indices[i]);
        h = mix(h, b->indices[i]);
        for (size_t j = 0; j < img; j++)
            h = mix(h, d[i * img + j]);
    }
    return h;
}

static run_digest run(const char *path, const h5fix_file *sp, const h5pack_config *cfg, int mapped)
{
    run_digest r = {.hash = 0xcbf29ce484222325ull, .st = H5PACK_STATS_INIT};
    if (mapped)
        unsetenv("H5PACK_NO_MMAP");
    else
        setenv("H5PACK_NO_MMAP", "1", 1);
    h5pack_reader *rd = NULL;
    int rc = h5pack_open(path, cfg, &rd);
    unsetenv("H5PACK_NO_MMAP");
    CHECK_MSG(rc == 0, "%s", h5pack_last_error(rd));
    r.mapped_seen = file_is_mapped(path);
    uint8_t *want = malloc((size_t)sp->c * sp->h * sp->w);
    h5pack_batch b = H5PACK_BATCH_INIT;
    while ((rc = h5pack_next(rd, &b)) == H5PACK_OK) {
        r.hash = digest_batch(sp, &b, want, mix(r.hash, b.epoch * 1000003 + b.index));
        r.batches++, r.samples += b.count;
        CHECK_OK(h5pack_release(rd, &b));
    }
    CHECK_MSG(rc == H5PACK_END, "next: %d %s", rc, h5pack_last_error(rd));
    CHECK_OK(h5pack_stats_get(rd, &r.st));
    h5pack_close(rd);
    CHECK(!file_is_mapped(path)); /* unmapped at close */
    free(want);
    return r;
}

static void compare_case(rng_state *g, int t, int contiguous)
{
    h5fix_file sp = {.n = 20 + rng_below(g, 200), .c = 1 + (uint32_t)rng_below(g, 3), .h = 3, .w = 5,
                     .k = 1 + rng_below(g, 12), .nhwc = (int)rng_below(g, 2), .pixel = h5fix_pixel_chw};
    if (contiguous) /* as h5py writes it: no layout attribute, and (3, 5, C) would not be inferred as NHWC */
        sp.nhwc = 0, sp.contiguous = 1, sp.old_format = 1;
    else
        sp.layout_attr = sp.nhwc ? "NHWC" : "NCHW";
    char path[256];
    h5fix_local_name(path, sizeof path, contiguous ? "mmap_contig" : "mmap");
    CHECK_OK(h5fix_write(path, &sp));
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.dtype = H5PACK_DTYPE_UINT8, c.output_layout = H5PACK_LAYOUT_AUTO;
    c.order = (h5pack_order)rng_below(g, 3);
    c.batch_size = 1 + rng_below(g, 24);
    c.threads = 1 + (int)rng_below(g, 3);
    c.epochs = 1 + rng_below(g, 3);
    c.seed = rng_next(g);
    c.cache_bytes = (1 + rng_below(g, 6)) * sp.k * sp.c * sp.h * sp.w; /* contiguous: at least one chunk */
    c.window = 1 + rng_below(g, 4); /* explicit: the default (the whole small file) needs a larger cache */
    run_digest m = run(path, &sp, &c, 1), p = run(path, &sp, &c, 0);
    CHECK_MSG(m.mapped_seen && !p.mapped_seen, "case %d: mapped %d / %d", t, m.mapped_seen, p.mapped_seen);
    CHECK_EQ_U64(m.batches, p.batches);
    CHECK_EQ_U64(m.samples, p.samples);
    CHECK_MSG(m.hash == p.hash, "case %d: batches differ between the mapping and pread", t);
    CHECK_EQ_U64(m.st.chunk_hits, p.st.chunk_hits);
    CHECK_EQ_U64(m.st.chunk_misses, p.st.chunk_misses);
    CHECK_EQ_U64(m.st.bytes_read, p.st.bytes_read);
    CHECK_EQ_U64(m.st.bytes_needed, p.st.bytes_needed);
    CHECK_EQ_U64(m.st.bytes_inflated, 0);
    CHECK_EQ_U64(p.st.bytes_inflated, 0);
    CHECK(m.st.chunk_misses > 0 && m.st.bytes_read > 0);
    remove(path);
}

int main(void)
{
    rng_state g = {4242};
    for (int t = 0; t < 24; t++)
        compare_case(&g, t, t % 3 == 2);
    printf("reader mmap: mapped and pread readers agree\n");
    return 0;
}
