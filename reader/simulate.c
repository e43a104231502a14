/* simulate.c - h5pack_simulate(): replays the chunk accesses the reader would make (order.h) under a
 * cache policy, without reading image data. Belady runs the reader's own planner (plan.h), so its hits
 * are the reader's hits; LRU and the HDF5 model are in sim_policies.c. */
#include <hdf5.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunksrc.h"
#include "chunksrc_impl.h" /* h5pack_h5_enter / h5pack_h5_leave */
#include "h5pack.h"
#include "order.h"
#include "plan.h"
#include "resolve.h"
#include "sim_policies.h"

/* Everything a replay needs, derived once from the file and the config. */
typedef struct sim_setup {
    order_params op;
    uint64_t slots;  /* chunks the cache holds */
    uint64_t epochs;
    const source_geometry *g;
    chunk_source *src;
    int filtered;    /* the images dataset has a filter pipeline (for the HDF5 model) */
} sim_setup;

typedef struct sim_counts {
    uint64_t accesses, hits, misses, bytes_read, bytes_needed;
} sim_counts;

static int sim_fail(char *err, size_t len, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int sim_fail(char *err, size_t len, int code, const char *fmt, ...)
{
    if (err && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Whether the dataset has any filter: HDF5 then always goes through its chunk cache (and decodes whole
 * chunks), which the model needs to know. The chunk source does not say, so ask HDF5 - inside h5pack_h5_enter,
 * like every HDF5 call of the library: the open probe forks while holding that lock, and a call from
 * here in another thread at that moment could leave HDF5's own lock taken in the child. */
static int dataset_filtered(const char *path, const char *images)
{
    h5pack_h5_quiet q;
    h5pack_h5_enter(&q);
    int n = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, images, H5P_DEFAULT) : -1;
    hid_t dcpl = d >= 0 ? H5Dget_create_plist(d) : -1;
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED)
        n = H5Pget_nfilters(dcpl);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (d >= 0)
        H5Dclose(d);
    if (f >= 0)
        H5Fclose(f);
    h5pack_h5_leave(&q);
    return n > 0;
}

/* Puts "PATH: " in front of a message that lacks the file name. Returns CODE. */
static int prefix_path(const char *path, char *err, size_t err_len, int code)
{
    if (err && err_len) {
        char *msg = strdup(err);
        if (msg)
            snprintf(err, err_len, "%s: %s", path, msg);
        free(msg);
    }
    return code;
}

/* The reader's own rules (resolve.h) turn the config into slots, window and order, with the simulated
 * cache size in place of cfg->cache_bytes. */
static int setup_open(const char *path, const h5pack_config *cfg, const h5pack_sim_params *sim, sim_setup *s,
                      char *err, size_t err_len)
{
    memset(s, 0, sizeof *s);
    int rc = h5pack_reader_check_config(cfg, err, err_len);
    if (rc < 0)
        return prefix_path(path, err, err_len, rc);
    rc = h5pack_chunksrc_open(path, cfg->images_dataset, cfg->labels_dataset, cfg->input_layout, &s->src, err, err_len);
    if (rc < 0)
        return rc;
    s->g = h5pack_chunksrc_geometry(s->src);
    h5pack_config sized = *cfg;
    sized.cache_bytes = sim->cache_bytes;
    reader_setup rs;
    rc = h5pack_reader_resolve_setup(&sized, s->g, &rs, err, err_len);
    if (rc < 0)
        return prefix_path(path, err, err_len, rc);
    s->op = rs.op;
    s->slots = rs.slots;
    s->epochs = cfg->epochs ? cfg->epochs : 1;
    s->filtered = dataset_filtered(path, cfg->images_dataset);
    return 0;
}

/* ---- Belady: the reader's planner ------------------------------------------------------------------ */

static int replay_belady(const sim_setup *s, sim_counts *c)
{
    size_t bs = s->op.batch_size;
    uint64_t *samples = malloc(bs * sizeof *samples);
    plan_access *acc = malloc(bs * sizeof *acc);
    planner *p = NULL;
    int rc = samples && acc ? h5pack_planner_create(&s->op, (size_t)s->slots, s->epochs, &p) : H5PACK_ENOMEM;
    while (rc == 0) {
        size_t count = 0, n_acc = 0;
        uint64_t epoch = 0, batch = 0;
        int more = h5pack_planner_next(p, samples, &count, acc, &n_acc, &epoch, &batch);
        if (more <= 0) {
            rc = more;
            break;
        }
        for (size_t i = 0; i < n_acc; i++) {
            uint64_t stored = h5pack_chunksrc_stored_bytes(s->src, acc[i].chunk);
            c->accesses++;
            if (acc[i].load)
                c->misses++, c->bytes_read += stored;
            else
                c->hits++;
            if (acc[i].first_in_epoch)
                c->bytes_needed += stored;
        }
    }
    h5pack_planner_free(p);
    free(samples), free(acc);
    return rc;
}

/* ---- LRU and HDF5: walk the epochs' samples and accesses ------------------------------------------ */

typedef struct epoch_walk {
    uint64_t *samples, *acc, *batch_start, *seen; /* seen[chunk]: 1 + last epoch that needed it */
    uint64_t n_samples, n_acc, n_batches;
} epoch_walk;

static void walk_free(epoch_walk *w)
{
    free(w->samples), free(w->acc), free(w->batch_start), free(w->seen);
}

static int walk_alloc(const sim_setup *s, epoch_walk *w)
{
    memset(w, 0, sizeof *w);
    uint64_t n = h5pack_order_samples_per_epoch(&s->op), nb = h5pack_order_batches_per_epoch(&s->op);
    w->samples = malloc((n ? n : 1) * sizeof *w->samples);
    w->acc = malloc((n ? n : 1) * sizeof *w->acc);
    w->batch_start = malloc((nb + 1) * sizeof *w->batch_start);
    w->seen = calloc(s->g->n_chunks ? s->g->n_chunks : 1, sizeof *w->seen);
    w->n_samples = n;
    w->n_batches = nb;
    return w->samples && w->acc && w->batch_start && w->seen ? 0 : H5PACK_ENOMEM;
}

/* Computes epoch E's samples and accesses, and adds the stored bytes of its distinct chunks. */
static int walk_epoch(const sim_setup *s, epoch_walk *w, uint64_t e, sim_counts *c)
{
    if (w->n_samples == 0) {
        w->n_acc = 0;
        memset(w->batch_start, 0, (w->n_batches + 1) * sizeof *w->batch_start);
        return 0;
    }
    int rc = h5pack_order_epoch(&s->op, e, w->samples);
    if (rc < 0)
        return rc;
    w->n_acc = h5pack_order_accesses(&s->op, w->samples, w->n_samples, w->acc, w->batch_start);
    if (w->n_acc == 0)
        return H5PACK_ENOMEM;
    for (uint64_t i = 0; i < w->n_acc; i++) {
        uint64_t ch = w->acc[i];
        if (w->seen[ch] != e + 1) {
            w->seen[ch] = e + 1;
            c->bytes_needed += h5pack_chunksrc_stored_bytes(s->src, ch);
        }
    }
    return 0;
}

static int replay_lru(const sim_setup *s, sim_counts *c)
{
    epoch_walk w;
    lru_sim *lru = NULL;
    int rc = walk_alloc(s, &w);
    if (rc == 0)
        rc = h5pack_lru_sim_create(s->slots, s->g->n_chunks, &lru);
    for (uint64_t e = 0; rc == 0 && e < s->epochs; e++) {
        rc = walk_epoch(s, &w, e, c);
        for (uint64_t i = 0; rc == 0 && i < w.n_acc; i++) {
            c->accesses++;
            if (h5pack_lru_sim_access(lru, w.acc[i]))
                c->hits++;
            else
                c->misses++, c->bytes_read += h5pack_chunksrc_stored_bytes(s->src, w.acc[i]);
        }
    }
    h5pack_lru_sim_free(lru);
    walk_free(&w);
    return rc;
}

/* A chunk use of batch B is a hit when none of the batch's reads of that chunk went to the file
 * (MISSED[chunk] == STAMP marks those that did). */
static void count_uses(const epoch_walk *w, uint64_t b, uint64_t stamp, const uint64_t *missed, sim_counts *c)
{
    for (uint64_t a = w->batch_start[b]; a < w->batch_start[b + 1]; a++) {
        c->accesses++;
        if (missed[w->acc[a]] == stamp)
            c->misses++;
        else
            c->hits++;
    }
}

/* HDF5 reads sample by sample (one H5Dread each, as h5py's __getitem__ does). A chunk use of a batch is
 * a hit when none of the batch's reads of that chunk went to the file. */
static void hdf5_batch(const sim_setup *s, hdf5_sim *h, const epoch_walk *w, uint64_t b, uint64_t stamp,
                       uint64_t *missed, sim_counts *c)
{
    uint64_t first = b * s->op.batch_size, end = first + s->op.batch_size;
    if (end > w->n_samples)
        end = w->n_samples;
    for (uint64_t i = first; i < end; i++) {
        uint64_t ch = w->samples[i] / s->g->samples_per_chunk;
        if (h5pack_hdf5_sim_read(h, ch, s->g->image_bytes, h5pack_chunksrc_stored_bytes(s->src, ch), &c->bytes_read))
            missed[ch] = stamp;
    }
    count_uses(w, b, stamp, missed, c);
}

/* A contiguous dataset has no chunk cache: HDF5 reads each image through its 64 KiB data sieve. */
static void hdf5_contiguous_batch(const sim_setup *s, hdf5_sieve *sv, const epoch_walk *w, uint64_t b,
                                  uint64_t stamp, uint64_t *missed, sim_counts *c)
{
    uint64_t first = b * s->op.batch_size, end = first + s->op.batch_size;
    if (end > w->n_samples)
        end = w->n_samples;
    for (uint64_t i = first; i < end; i++)
        if (h5pack_hdf5_sieve_read(sv, w->samples[i] * s->g->image_bytes, s->g->image_bytes, &c->bytes_read))
            missed[w->samples[i] / s->g->samples_per_chunk] = stamp;
    count_uses(w, b, stamp, missed, c);
}

static int replay_hdf5(const sim_setup *s, const h5pack_sim_params *sim, sim_counts *c)
{
    hdf5_sim_params hp = {sim->cache_bytes, sim->hdf5_nslots ? sim->hdf5_nslots : HDF5_SIM_DEFAULT_NSLOTS,
                          sim->hdf5_w0, s->g->chunk_bytes, s->filtered};
    int contiguous = s->g->path == CHUNKSRC_CONTIGUOUS;
    hdf5_sieve sv;
    h5pack_hdf5_sieve_init(&sv, HDF5_SIM_DEFAULT_SIEVE, s->g->n_samples * s->g->image_bytes);
    epoch_walk w;
    hdf5_sim *h = NULL;
    uint64_t *missed = calloc(s->g->n_chunks ? s->g->n_chunks : 1, sizeof *missed), stamp = 0;
    int rc = missed ? walk_alloc(s, &w) : H5PACK_ENOMEM;
    if (rc == 0 && !contiguous)
        rc = h5pack_hdf5_sim_create(&hp, &h);
    for (uint64_t e = 0; rc == 0 && e < s->epochs; e++) {
        rc = walk_epoch(s, &w, e, c);
        for (uint64_t b = 0; rc == 0 && b < w.n_batches; b++) {
            if (contiguous)
                hdf5_contiguous_batch(s, &sv, &w, b, ++stamp, missed, c);
            else
                hdf5_batch(s, h, &w, b, ++stamp, missed, c);
        }
    }
    h5pack_hdf5_sim_free(h);
    if (missed)
        walk_free(&w);
    free(missed);
    return rc;
}

/* ---- the public entry point ------------------------------------------------------------------------- */

static void fill_result(const sim_counts *c, h5pack_sim_result *r)
{
    r->accesses = c->accesses;
    r->hits = c->hits;
    r->misses = c->misses;
    r->hit_rate = c->accesses ? (double)c->hits / (double)c->accesses : 0.0;
    r->bytes_read = c->bytes_read;
    r->read_amplification = c->bytes_needed ? (double)c->bytes_read / (double)c->bytes_needed : 0.0;
}

H5PACK_API int h5pack_simulate(const char *path, const h5pack_config *cfg, const h5pack_sim_params *sim,
                               h5pack_sim_result *result, char *errbuf, size_t errbuf_len)
{
    if (errbuf && errbuf_len)
        errbuf[0] = '\0';
    if (!path || !sim || !result)
        return sim_fail(errbuf, errbuf_len, H5PACK_EINVAL, "h5pack_simulate: path, sim and result are required");
    if (sim->policy == H5PACK_POLICY_HDF5 && !(sim->hdf5_w0 >= 0.0 && sim->hdf5_w0 <= 1.0))
        return sim_fail(errbuf, errbuf_len, H5PACK_EINVAL, "%s: HDF5 w0 must be in [0,1] (got %g)", path,
                        sim->hdf5_w0);
    h5pack_config defaults = H5PACK_CONFIG_DEFAULTS;
    if (!cfg)
        cfg = &defaults;
    memset(result, 0, sizeof *result);
    sim_setup s;
    sim_counts c = {0};
    int rc = setup_open(path, cfg, sim, &s, errbuf, errbuf_len);
    if (rc == 0) {
        if (sim->policy == H5PACK_POLICY_BELADY)
            rc = replay_belady(&s, &c);
        else if (sim->policy == H5PACK_POLICY_LRU)
            rc = replay_lru(&s, &c);
        else if (sim->policy == H5PACK_POLICY_HDF5)
            rc = replay_hdf5(&s, sim, &c);
        else
            rc = sim_fail(errbuf, errbuf_len, H5PACK_EINVAL, "%s: unknown policy %d", path, (int)sim->policy);
        if (rc < 0 && errbuf && errbuf_len && !errbuf[0])
            snprintf(errbuf, errbuf_len, "%s: simulation failed: %s", path, h5pack_strerror(rc));
    }
    h5pack_chunksrc_close(s.src);
    if (rc == 0)
        fill_result(&c, result);
    return rc;
}
