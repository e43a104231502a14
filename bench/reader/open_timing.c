/* open_timing.c - measures (not a test) how long h5pack_chunksrc_open takes on files with many chunks,
 * and what learning every chunk's stored size costs. Usage: open_timing [DIR]
 * Files: 20,000 implicit chunks; 2,000 and 10,000 gzip chunks in the latest format (no probe) and in the
 * default format (v1 B-tree index, probed in a child that also learns all stored sizes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunksrc.h"
#include "clock.h"
#include "h5fixture.h"

static void measure(const char *dir, const char *name, const h5fix_file *tf)
{
    char path[700], err[1024];
    snprintf(path, sizeof path, "%s/%s.h5", dir, name);
    if (h5fix_write(path, tf) != 0)
        exit(1);
    double best_open = 1e9, sizes_s = 0, first_read = 0;
    uint64_t n_chunks = 0, total = 0;
    int path_id = -1;
    for (int rep = 0; rep < 3; rep++) {
        chunk_source *s = NULL;
        double t0 = h5pack_clock_s();
        if (h5pack_chunksrc_open(path, "images", "labels", H5PACK_LAYOUT_AUTO, &s, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            exit(1);
        }
        double t1 = h5pack_clock_s();
        const source_geometry *g = h5pack_chunksrc_geometry(s);
        uint8_t *buf = malloc(g->chunk_bytes);
        h5pack_chunksrc_read(s, 0, buf, NULL, NULL, err, sizeof err);
        double t2 = h5pack_clock_s();
        total = 0;
        for (uint64_t c = 0; c < g->n_chunks; c++)
            total += h5pack_chunksrc_stored_bytes(s, c);
        double t3 = h5pack_clock_s();
        if (t1 - t0 < best_open) {
            best_open = t1 - t0;
            first_read = t2 - t1;
            sizes_s = t3 - t2;
        }
        n_chunks = g->n_chunks;
        path_id = (int)g->path;
        free(buf);
        h5pack_chunksrc_close(s);
    }
    printf("%-28s path %d  %6llu chunks  open %8.2f ms  first read %6.3f ms  all stored sizes %8.3f ms "
           "(%.3f us/chunk, %llu bytes)\n",
           name, path_id, (unsigned long long)n_chunks, best_open * 1e3, first_read * 1e3, sizes_s * 1e3,
           sizes_s * 1e6 / (double)n_chunks, (unsigned long long)total);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : h5fix_tmpdir("chunksrc-timing");
    h5fix_file tf = {.n = 20000, .c = 3, .h = 8, .w = 8, .k = 1, .early_alloc = 1};
    measure(dir, "implicit-20000", &tf);
    tf.n = 2000;
    tf.gzip = 4;
    measure(dir, "gzip-latest-2000", &tf);
    tf.n = 10000;
    measure(dir, "gzip-latest-10000", &tf);
    tf.resizable = 1, tf.old_format = 1; /* as h5py writes it */
    tf.n = 2000;
    measure(dir, "gzip-btree-probed-2000", &tf);
    tf.n = 10000;
    measure(dir, "gzip-btree-probed-10000", &tf);
    return 0;
}
