/* simulate.c - the replays of h5pack_sim_run(): the chunk accesses the reader would make (order.h) under
 * a cache policy, without reading image data. Belady runs the reader's own planner (plan.h), so its hits
 * are the reader's hits; LRU and the HDF5 model are in sim_policies.c. The chunks are the file's own or
 * what-if ones (sim_replay.h); the handle that prepares them is sim_handle.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "sim_policies.h"
#include "sim_replay.h"

uint64_t h5pack_sim_stored_bytes(const sim_space *sp, uint64_t chunk)
{
    if (chunk >= sp->n_chunks)
        return 0;
    if (sp->stored)
        return sp->stored[chunk];
    uint64_t first = chunk * sp->samples_per_chunk, left = sp->n_samples - first;
    uint64_t bytes = (left < sp->samples_per_chunk ? left : sp->samples_per_chunk) * sp->image_bytes;
    return sp->stored_ratio == 1.0 ? bytes : (uint64_t)llround((double)bytes * sp->stored_ratio);
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
            uint64_t stored = h5pack_sim_stored_bytes(&s->space, acc[i].chunk);
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
    w->seen = calloc(s->space.n_chunks ? s->space.n_chunks : 1, sizeof *w->seen);
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
            c->bytes_needed += h5pack_sim_stored_bytes(&s->space, ch);
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
        rc = h5pack_lru_sim_create(s->slots, s->space.n_chunks, &lru);
    for (uint64_t e = 0; rc == 0 && e < s->epochs; e++) {
        rc = walk_epoch(s, &w, e, c);
        for (uint64_t i = 0; rc == 0 && i < w.n_acc; i++) {
            c->accesses++;
            if (h5pack_lru_sim_access(lru, w.acc[i]))
                c->hits++;
            else
                c->misses++, c->bytes_read += h5pack_sim_stored_bytes(&s->space, w.acc[i]);
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
        uint64_t ch = w->samples[i] / s->space.samples_per_chunk;
        if (h5pack_hdf5_sim_read(h, ch, s->space.image_bytes, h5pack_sim_stored_bytes(&s->space, ch), &c->bytes_read))
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
        if (h5pack_hdf5_sieve_read(sv, w->samples[i] * s->space.image_bytes, s->space.image_bytes, &c->bytes_read))
            missed[w->samples[i] / s->space.samples_per_chunk] = stamp;
    count_uses(w, b, stamp, missed, c);
}

static int replay_hdf5(const sim_setup *s, sim_counts *c)
{
    hdf5_sim_params hp = {s->cache_bytes, s->hdf5_nslots ? s->hdf5_nslots : HDF5_SIM_DEFAULT_NSLOTS, s->hdf5_w0,
                          s->space.chunk_bytes, s->space.filtered};
    int contiguous = s->space.contiguous;
    hdf5_sieve sv;
    h5pack_hdf5_sieve_init(&sv, HDF5_SIM_DEFAULT_SIEVE, s->space.n_samples * s->space.image_bytes);
    epoch_walk w;
    hdf5_sim *h = NULL;
    uint64_t *missed = calloc(s->space.n_chunks ? s->space.n_chunks : 1, sizeof *missed), stamp = 0;
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

int h5pack_sim_replay(const sim_setup *s, sim_counts *c)
{
    if (s->policy == H5PACK_POLICY_BELADY)
        return replay_belady(s, c);
    if (s->policy == H5PACK_POLICY_LRU)
        return replay_lru(s, c);
    if (s->policy == H5PACK_POLICY_HDF5)
        return replay_hdf5(s, c);
    return H5PACK_EINVAL;
}
