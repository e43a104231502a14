/* fuzz_reader_open.c - libFuzzer target: arbitrary bytes as an HDF5 file -> h5pack_chunksrc_open -> read the
 * first chunks. Whatever the bytes, the reader must return an error code or data, never crash, hang or
 * leak. Seeds in tests/fuzz/corpus/reader_open/ (small files of every read path, and of images of several
 * sizes: c-ragged-*). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunksrc.h"

/* HDF5 1.10.8 leaks internal structures (metadata cache entries, layout messages) when it meets damaged
 * metadata, and then cannot shut down ("HDF5: infinite loop closing library" at exit). Every such stack
 * lies inside libhdf5; LeakSanitizer (ASan builds) reads this hook, so only this program ignores them:
 * the tests on well-formed files run without it and still catch our own leaks. */
const char *__lsan_default_suppressions(void);
/* Exported: the sanitizer runtime looks this hook up dynamically (the build hides symbols by default). */
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void)
{
    return "leak:libhdf5\n";
}

/* Chunks larger than this are not read (a damaged header can claim gigabytes). */
#define FUZZ_MAX_CHUNK_BYTES ((uint64_t)64 << 20)

static const char *scratch_file(void)
{
    static char path[256];
    if (!path[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/h5pack-fuzz-reader-%d.h5", base && base[0] ? base : "/tmp", (int)getpid());
    }
    return path;
}

static int write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = size ? fwrite(data, 1, size, f) : 0;
    return fclose(f) == 0 && n == size ? 0 : -1;
}

static void read_first_chunks(chunk_source *s)
{
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    if (g->chunk_bytes == 0 || g->chunk_bytes > FUZZ_MAX_CHUNK_BYTES)
        return;
    uint8_t *buf = malloc(g->chunk_bytes);
    chunksrc_scratch *sc = h5pack_chunksrc_scratch_new(s);
    char err[512];
    for (uint64_t c = 0; buf && sc && c < g->n_chunks && c < 3; c++) {
        chunk_read_cost cost = {0, 0, 0, 0};
        (void)h5pack_chunksrc_stored_bytes(s, c);
        (void)h5pack_chunksrc_read(s, c, buf, sc, &cost, err, sizeof err);
    }
    h5pack_chunksrc_scratch_free(sc);
    free(buf);
}

/* A damaged old-format file can send HDF5 into an endless loop; the open probe (h5pack_chunksrc_probe.c) gives
 * up on a child silent this long. The default (20 s) suits slow disks; the corpus files are tiny. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("H5PACK_PROBE_TIMEOUT", "5", 0);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = scratch_file();
    char err[1024];
    chunk_source *s = NULL;
    if (write_file(path, data, size) != 0)
        return 0;
    if (h5pack_chunksrc_open(path, "images", "labels", H5PACK_LAYOUT_AUTO, &s, err, sizeof err) == 0) {
        read_first_chunks(s);
        h5pack_chunksrc_close(s);
    }
    unlink(path);
    return 0;
}
