/* test_reader_concurrent.c - independent readers used from different threads at the same time (the
 * API promises it): an uncompressed, a gzip (HDF5 calls under the chunk sources' lock) and an
 * old-format file with an unlimited dimension (opened through the chunk source's probe), each read by
 * its own thread for two epochs, every byte checked. */
#include <string.h>
#include <stdlib.h>
#include <stdio.h>

#include <pthread.h>

/* Opening the old-format file runs the probe in the helper process h5pack-isolate (posix_spawn, no fork:
 * reader/source/isolate.h), so all three readers are opened inside their threads at the same time, under
 * the sanitizers too. (When the probe forked, a child forked while another thread was inside ASan's or
 * TSan's malloc could hang there, and the readers had to be opened one after the other under them.) */

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

typedef struct job {
    char path[256];
    h5fix_file spec;
    h5pack_order order;
    int ok;
} job;

static int open_job(job *j, h5pack_reader **r)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.dtype = H5PACK_DTYPE_UINT8, c.output_layout = H5PACK_LAYOUT_AUTO;
    c.batch_size = 12, c.threads = 2, c.epochs = 2, c.order = j->order, c.seed = 5;
    c.cache_bytes = 3 * j->spec.k * j->spec.c * j->spec.h * j->spec.w;
    c.window = 1; /* explicit: the default window is the whole (small) file, more than the cache */
    *r = NULL;
    if (h5pack_open(j->path, &c, r) != H5PACK_OK) {
        fprintf(stderr, "%s\n", h5pack_last_error(*r));
        h5pack_close(*r);
        *r = NULL;
        return -1;
    }
    return 0;
}

static void *read_job(void *arg)
{
    job *j = arg;
    h5pack_reader *r = NULL;
    if (open_job(j, &r) != 0)
        return NULL;
    size_t img = (size_t)j->spec.c * j->spec.h * j->spec.w;
    uint8_t *want = malloc(img);
    uint64_t seen = 0;
    int bad = 0, rc;
    h5pack_batch b = H5PACK_BATCH_INIT;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        for (size_t i = 0; i < b.count; i++) {
            h5fix_image(&j->spec, b.indices[i], want);
            bad |= memcmp((const uint8_t *)b.data + i * img, want, img) != 0;
        }
        seen += b.count;
        h5pack_release(r, &b);
    }
    j->ok = rc == H5PACK_END && !bad && seen == 2 * j->spec.n;
    if (!j->ok)
        fprintf(stderr, "%s: rc %d, %llu samples, content %s: %s\n", j->path, rc, (unsigned long long)seen,
                bad ? "wrong" : "right", h5pack_last_error(r));
    free(want);
    h5pack_close(r);
    return NULL;
}

int main(void)
{
    job jobs[3] = {
        {.spec = {.n = 150, .c = 3, .h = 5, .w = 4, .k = 8, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw}, .order = H5PACK_ORDER_CHUNK},
        {.spec = {.n = 110, .c = 1, .h = 6, .w = 6, .k = 10, .gzip = 5, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw}, .order = H5PACK_ORDER_RANDOM},
        {.spec = {.n = 90, .c = 3, .h = 4, .w = 5, .k = 6, .resizable = 1, .old_format = 1, .pixel = h5fix_pixel_chw}, .order = H5PACK_ORDER_CHUNK},
    };
    const char *tags[3] = {"conc_plain", "conc_gzip", "conc_old"};
    for (int i = 0; i < 3; i++) {
        h5fix_local_name(jobs[i].path, sizeof jobs[i].path, tags[i]);
        CHECK_OK(h5fix_write(jobs[i].path, &jobs[i].spec));
    }
    for (int round = 0; round < 3; round++) {
        pthread_t t[3];
        for (int i = 0; i < 3; i++)
            CHECK_OK(pthread_create(&t[i], NULL, read_job, &jobs[i]));
        for (int i = 0; i < 3; i++)
            pthread_join(t[i], NULL);
        for (int i = 0; i < 3; i++)
            CHECK_MSG(jobs[i].ok, "round %d: %s read wrong", round, jobs[i].path);
    }
    for (int i = 0; i < 3; i++)
        remove(jobs[i].path);
    printf("reader concurrent: all checks passed\n");
    return 0;
}
