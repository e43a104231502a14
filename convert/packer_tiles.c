/* packer_tiles.c - `h5pack --tiles`: every image into its own tiled dataset, each decoded band by band
 * (tiles/tile_pack.h), so memory holds a band and a tile per thread whatever the images' sizes. -j N
 * threads pack N images at once: a thread takes the next image in packed order and writes it as
 * tiles/p<position>; at the end the kept images are renamed tiles/<index> in packed order (a rename is a
 * link operation: no pixel moves). Skips, names, labels and the report are the other storages'. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "packer_impl.h"
#include "safeout.h"
#include "tile_pack.h"

/* What became of the image at one position of the packed order. */
typedef struct tile_result {
    tile_outcome outcome;
    tile_image image;
    char why[640];
} tile_result;

/* The threads' shared state. */
typedef struct tile_run {
    pack_ctx *c;
    h5out_geometry g;
    tile_result *results;  /* per position */
    _Atomic size_t next;   /* the next position to take */
    _Atomic size_t done;   /* positions finished (progress) */
    _Atomic int stop;      /* an output failure, or a skip under --strict */
    pthread_mutex_t lock;  /* the first failure's message */
    char err[640];
    int failed;
} tile_run;

/* The file's geometry: channels, tile, filters (sizes come from the images). */
static h5out_geometry tiled_geometry(const pack_ctx *c)
{
    return (h5out_geometry){.n = c->scan.n_entries, .channels = c->o->channels, .nhwc = 1, .tile = c->o->tile,
                            .gzip_level = c->o->compress == COMPRESS_GZIP ? c->o->gzip_level : 0,
                            .checksum = c->o->checksum};
}

static void temp_name(size_t pos, char *name, size_t len)
{
    snprintf(name, len, "p%zu", pos);
}

/* The image at POS, packed as tiles/p<POS> (or skipped, with the reason). */
static void pack_position(tile_run *r, size_t pos)
{
    pack_ctx *c = r->c;
    tile_result *res = &r->results[pos];
    const scan_entry *e = &c->scan.entries[c->order[pos]];
    char name[32], err[640] = "";
    char *path = malloc(strlen(c->o->src_dir) + strlen(e->relpath) + 2);
    temp_name(pos, name, sizeof name);
    if (path) {
        sprintf(path, "%s/%s", c->o->src_dir, e->relpath);
        res->outcome = tile_pack_image(c->out, &r->g, name, path, &c->job.opts, &res->image, res->why,
                                       sizeof res->why, err, sizeof err);
        free(path);
    } else {
        res->outcome = TILE_FAILED;
        snprintf(err, sizeof err, "out of memory");
    }
    if (res->outcome == TILE_FAILED || (res->outcome == TILE_SKIPPED && c->o->strict))
        atomic_store(&r->stop, 1);
    if (res->outcome == TILE_FAILED) {
        pthread_mutex_lock(&r->lock);
        if (!r->failed)
            r->failed = 1, memcpy(r->err, err, sizeof err);
        pthread_mutex_unlock(&r->lock);
    }
}

static void *tile_worker(void *arg)
{
    tile_run *r = arg;
    size_t n = r->c->scan.n_entries;
    for (;;) {
        size_t pos = atomic_fetch_add(&r->next, 1);
        if (pos >= n || atomic_load(&r->stop))
            break;
        pack_position(r, pos);
        atomic_fetch_add(&r->done, 1);
    }
    return NULL;
}

/* Runs THREADS workers (the calling thread shows progress meanwhile); 0, or -1 when one could not start. */
static int run_workers(tile_run *r, int threads)
{
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    int started = 0;
    while (t && started < threads && pthread_create(&t[started], NULL, tile_worker, r) == 0)
        started++;
    if (started < threads)
        atomic_store(&r->stop, 1);
    size_t n = r->c->scan.n_entries;
    while (started > 0 && atomic_load(&r->done) < n && !atomic_load(&r->stop)) {
        progress_update(&r->c->prog, atomic_load(&r->done), n, r->c->pres.converted);
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    free(t);
    return started == threads ? 0 : -1;
}

/* Records image POS as kept: its row, shape and sums. */
static void keep(pack_ctx *c, size_t pos, const tile_image *t)
{
    pipeline_result *r = &c->pres;
    r->kept[r->converted] = c->order[pos];
    r->shapes[2 * r->converted] = t->height, r->shapes[2 * r->converted + 1] = t->width;
    r->converted++;
    r->pixels += (uint64_t)t->height * t->width;
    for (uint32_t ch = 0; ch < c->o->channels; ch++)
        r->sum[ch] += t->sum[ch], r->sum_sq[ch] += t->sum_sq[ch];
    c->job.height = t->height > c->job.height ? t->height : c->job.height; /* the largest, for the attributes */
    c->job.width = t->width > c->job.width ? t->width : c->job.width;
}

/* In packed order: kept images renamed to their index, skips listed; --strict stops at the first skip. */
static pack_status collect(tile_run *r, char *err, size_t len)
{
    pack_ctx *c = r->c;
    for (size_t pos = 0; pos < c->scan.n_entries; pos++) {
        tile_result *res = &r->results[pos];
        const scan_entry *e = &c->scan.entries[c->order[pos]];
        char name[32];
        temp_name(pos, name, sizeof name);
        if (res->outcome == TILE_PACKED) {
            if (h5out_tile_rename(c->out, name, c->pres.converted, err, len) != 0)
                return PACK_ERROR;
            keep(c, pos, &res->image);
        } else if (res->outcome == TILE_SKIPPED && c->o->strict) {
            snprintf(err, len, "--strict: %s: %s", e->name, res->why);
            return PACK_STRICT;
        } else if (res->outcome == TILE_SKIPPED && skip_list_add(&c->pres.skipped, e->name, res->why) != 0) {
            snprintf(err, len, "out of memory");
            return PACK_ERROR;
        }
    }
    return PACK_OK;
}

static pack_status pack_all(pack_ctx *c, tile_run *r, char *err, size_t len)
{
    size_t n = c->scan.n_entries;
    int threads = c->rep->threads < 1 ? 1 : c->rep->threads;
    if ((size_t)threads > n)
        threads = n ? (int)n : 1;
    for (size_t pos = 0; pos < n; pos++)
        r->results[pos].outcome = TILE_FAILED; /* a position no thread reached (a stop) */
    progress_init(&c->prog, c->o->verbosity >= 1);
    int started = run_workers(r, threads);
    progress_finish(&c->prog);
    if (r->failed) {
        snprintf(err, len, "%s", r->err);
        return PACK_ERROR;
    }
    if (started != 0) {
        snprintf(err, len, "cannot start %d packing threads", threads);
        return PACK_ERROR;
    }
    pack_status st = collect(r, err, len);
    if (st == PACK_OK && c->pres.converted == 0) {
        snprintf(err, len, "no image could be converted (%zu skipped)", c->pres.skipped.count);
        st = PACK_ERROR;
    }
    return st;
}

pack_status pack_tiles(pack_ctx *c, char *err, size_t len)
{
    size_t n = c->scan.n_entries;
    tile_run r = {.c = c, .g = tiled_geometry(c)};
    if (safeout_create_temp(c->o->out_path, c->temp[0], TEMP_PATH_LEN, err, len) != 0)
        return PACK_ERROR;
    c->have_temp[0] = 1;
    if (h5out_create_tiled(c->temp[0], &r.g, &c->out, err, len) != 0)
        return PACK_ERROR;
    c->pres.kept = malloc((n ? n : 1) * sizeof *c->pres.kept);
    c->pres.shapes = malloc((n ? n : 1) * 2 * sizeof *c->pres.shapes);
    r.results = calloc(n ? n : 1, sizeof *r.results);
    if (!c->pres.kept || !c->pres.shapes || !r.results) {
        free(r.results);
        snprintf(err, len, "out of memory");
        return PACK_ERROR;
    }
    c->job.height = c->job.width = 0;
    pthread_mutex_init(&r.lock, NULL);
    pack_status st = pack_all(c, &r, err, len);
    pthread_mutex_destroy(&r.lock);
    free(r.results);
    c->pres.chunks_written = 0, c->pres.bytes_written = h5out_images_storage(c->out);
    h5out_set_largest(c->out, c->job.height, c->job.width); /* the attributes height and width */
    return st;
}
