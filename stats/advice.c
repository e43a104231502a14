/* advice.c - plain-language advice from the measured (run) or simulated numbers (see advice.h). */
#include "advice.h"

#include <stdarg.h>
#include <string.h>

#include "args.h"

void advice_add(advice *a, const char *fmt, ...)
{
    if (a->n >= ADVICE_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->line[a->n++], sizeof a->line[0], fmt, ap);
    va_end(ap);
}

void advice_print(const advice *a, FILE *f)
{
    if (a->n == 0)
        return;
    fprintf(f, "\nadvice:\n");
    for (int i = 0; i < a->n; i++)
        fprintf(f, "  - %s\n", a->line[i]);
}

static const char *size_text(uint64_t bytes, char *buf, size_t len)
{
    h5pack_format_bytes(bytes, buf, len);
    return buf;
}

/* ---- run ------------------------------------------------------------------------------------------ */

static void advise_waiting(const run_facts *f, double step_ms, advice *a)
{
    double pct = 100.0 * f->stall_fraction;
    if (step_ms <= 0.0) {
        advice_add(a, "The consumer did no work per batch (--step-ms 0), so it always waits and %.0f samples/s is the "
                      "reader's top speed. Give your training step time with --step-ms to see whether the reader "
                      "keeps up with it.",
                   f->loop_s > 0 ? (double)f->st.samples / f->loop_s : 0.0);
        return;
    }
    if (f->stall_fraction < 0.02) {
        advice_add(a, "The training loop waited for data %.1f%% of the time%s: the input pipeline keeps up, and "
                      "batch echoing would not make training faster.", pct, f->steady ? " after the first epoch" : "");
        return;
    }
    /* what the workers spent their time on: getting the images (read, inflate, copy out of the cache), which
     * an echo does not repeat, or converting them (normalise, crop), which every echo does again */
    const h5pack_stats *st = &f->st;
    double getting = st->busy_read_s + st->busy_inflate_s + st->busy_assemble_s, converting = st->busy_convert_s;
    char more[600] = "";
    if (st->bytes_read > 0 && getting >= converting) {
        snprintf(more, sizeof more, " The workers spent %.1f s getting images (reading %s%s, copying) and %.1f s "
                 "converting them: getting them is the bottleneck.", getting, size_text(st->bytes_read, (char[32]){0}, 32),
                 f->info.compressed ? ", inflating" : "", converting);
        if (f->cfg.echo <= 1)
            snprintf(more + strlen(more), sizeof more - strlen(more),
                     " Batch echoing (--echo 2) uses each batch twice and halves that work per step.");
        if (f->info.compressed)
            snprintf(more + strlen(more), sizeof more - strlen(more), " gzip chunks cost CPU to inflate; an "
                     "uncompressed file (h5pack --compress none) reads faster if disk space allows.");
    } else {
        snprintf(more, sizeof more, " The workers spent %.1f s converting images (normalising%s) and %.1f s getting "
                 "them (reading %s): converting is the bottleneck, which an echo repeats, so echo would not help.",
                 converting, f->cfg.crop ? ", cropping" : "", getting, size_text(st->bytes_read, (char[32]){0}, 32));
        if (f->info.device == H5PACK_DEVICE_CPU)
            snprintf(more + strlen(more), sizeof more - strlen(more), " The GPU does it (--device cuda) when "
                     "there is one.");
    }
    if (f->info.threads < f->cores)
        snprintf(more + strlen(more), sizeof more - strlen(more), " More worker threads (--threads %d) add "
                 "capacity for both.", f->cores);
    advice_add(a, "The training loop waited for data %.0f%% of the time%s: %s.%s", pct,
               f->steady ? " after the first epoch" : "",
               f->stall_fraction >= 0.10 ? "the input pipeline is the bottleneck" : "close to input-bound", more);
}

/* Chunks a batch of BATCH images may start in the chunk order: the part of the cache the derived window
 * leaves free (docs/tuning.md; the reader's rule is h5pack_reader_derived_window in reader/plan/resolve.c, which
 * this program, using the public API only, cannot call). */
static uint64_t chunks_per_batch(uint64_t batch, uint64_t samples_per_chunk)
{
    uint64_t k = samples_per_chunk ? samples_per_chunk : 1;
    return (batch + k - 1) / k + 1;
}

static void advise_rereads(const run_facts *f, advice *a)
{
    const h5pack_info *in = &f->info;
    double amp = f->st.read_amplification;
    char s1[32];
    if (f->st.bytes_needed == 0)
        return;
    if (amp <= 1.01) {
        /* below 1: chunks kept in the cache from one epoch to the next were not read again */
        advice_add(a, "Each chunk needed was read at most once per epoch (read amplification %.2f%s): the cache "
                      "(%zu chunks of %s) is large enough for this order.", amp,
                   amp < 0.99 ? ", below 1 because chunks stayed cached across epochs" : "", in->cache_chunks,
                   size_text(in->chunk_bytes, s1, sizeof s1));
        return;
    }
    uint64_t whole = in->n_chunks * in->chunk_bytes;
    if (f->cfg.order == H5PACK_ORDER_RANDOM) {
        advice_add(a, "Random order draws each batch from all over the file, so chunks of %llu images were read "
                      "%.2f times each per epoch. Use --order chunk (each chunk read once per epoch, shuffled "
                      "within a window), or a cache that holds the whole dataset: --cache %s.",
                   (unsigned long long)in->samples_per_chunk, amp, size_text(whole, s1, sizeof s1));
    } else if (f->cfg.order == H5PACK_ORDER_CHUNK && f->cfg.window) {
        uint64_t held = in->window + chunks_per_batch(f->cfg.batch_size, in->samples_per_chunk);
        advice_add(a, "The cache holds %zu chunks but --window %zu plus the chunks a batch starts needs %llu: "
                      "chunks were read %.2f times each per epoch. Leave --window out (the default window follows "
                      "the cache and reads each chunk once), or use --cache %s or more.",
                   in->cache_chunks, in->window, (unsigned long long)held, amp,
                   size_text(held * in->chunk_bytes, s1, sizeof s1));
    } else {
        advice_add(a, "Chunks were read %.2f times each per epoch: a larger cache (--cache, the whole dataset is "
                      "%s) would cut the re-reads.", amp, size_text(whole, s1, sizeof s1));
    }
}

static void advise_window(const run_facts *f, advice *a)
{
    const h5pack_info *in = &f->info;
    char s1[32], s2[32];
    if (in->chunk_bytes > f->cfg.cache_bytes && in->n_chunks > 1) /* one chunk: the one kept is the file */
        advice_add(a, "One chunk (%s) is larger than the cache (%s); the reader still keeps one chunk, but a cache "
                      "of several chunks (or smaller chunks: h5pack --chunk K) is needed for any reuse.",
                   size_text(in->chunk_bytes, s1, sizeof s1), size_text(f->cfg.cache_bytes, s2, sizeof s2));
    if (f->cfg.order == H5PACK_ORDER_CHUNK && !in->patch_size && in->window < 16 && in->n_chunks > in->window) {
        uint64_t want = (16 + chunks_per_batch(f->cfg.batch_size, in->samples_per_chunk)) * in->chunk_bytes;
        advice_add(a, "The chunk order's window is only %zu chunk(s)%s: each stretch of batches comes from few "
                      "chunks, which weakens shuffling. --cache %s or more gives a window of 16 (every chunk is still "
                      "read once per epoch).",
                   in->window, f->cfg.window ? " (--window)" : ", what the cache leaves beside one batch's chunks",
                   size_text(want, s1, sizeof s1));
    }
}

void advise_run(const run_facts *f, advice *a)
{
    advise_waiting(f, f->step_ms, a);
    advise_rereads(f, a);
    advise_window(f, a);
}

/* ---- simulate ------------------------------------------------------------------------------------- */

static const sim_row *find_row(const sim_facts *f, uint64_t cache, h5pack_order o, h5pack_policy p)
{
    for (int i = 0; i < f->n_rows; i++)
        if (f->rows[i].cache_bytes == cache && f->rows[i].order == o && f->rows[i].policy == p)
            return &f->rows[i];
    return NULL;
}

/* The window the chunk order should mix at least (docs/reader.md): 16 chunks, or every chunk of a smaller
 * file. A derived window under it is what a small cache costs in shuffling, not in bytes. */
static uint64_t window_wanted(const sim_facts *f)
{
    return f->n_chunks && f->n_chunks < 16 ? f->n_chunks : 16;
}

/* Whether row R shuffles as well as the order promises: for the chunk order, a window of window_wanted. */
static int shuffles_fully(const sim_facts *f, const sim_row *r)
{
    return r->order != H5PACK_ORDER_CHUNK || r->r.window >= window_wanted(f);
}

/* A listed cache that reads each chunk once but mixes fewer chunks than wanted, the largest such. */
static void advise_narrow_window(const sim_facts *f, h5pack_order o, const sim_row *enough, advice *a)
{
    const sim_row *narrow = NULL;
    for (int i = 0; i < f->n_rows; i++) {
        const sim_row *r = &f->rows[i];
        if (r->order == o && r->policy == H5PACK_POLICY_BELADY && !shuffles_fully(f, r) &&
            (!narrow || r->cache_bytes > narrow->cache_bytes))
            narrow = r;
    }
    char s1[32], s2[32];
    if (narrow)
        advice_add(a, "order chunk: smaller caches read each chunk once too, but mix fewer chunks: %s gives a window "
                      "of %zu chunk(s) (%llu wanted), so consecutive batches share chunks and shuffling weakens%s%s.",
                   size_text(narrow->cache_bytes, s1, sizeof s1), narrow->r.window,
                   (unsigned long long)window_wanted(f), enough ? "; take at least " : "",
                   enough ? size_text(enough->cache_bytes, s2, sizeof s2) : "");
}

/* Smallest listed cache where Belady reads each chunk once per epoch, for order O, and (chunk order) mixes
 * the window wanted. */
static void advise_enough_cache(const sim_facts *f, h5pack_order o, advice *a)
{
    const sim_row *best = NULL, *enough = NULL;
    for (int i = 0; i < f->n_rows; i++) {
        const sim_row *r = &f->rows[i];
        if (r->order != o || r->policy != H5PACK_POLICY_BELADY)
            continue;
        if (!best || r->r.read_amplification < best->r.read_amplification)
            best = r;
        if (r->r.read_amplification <= 1.01 && shuffles_fully(f, r) && (!enough || r->cache_bytes < enough->cache_bytes))
            enough = r;
    }
    char s1[32], s2[32];
    if (o == H5PACK_ORDER_CHUNK && !f->window)
        advise_narrow_window(f, o, enough, a);
    if (enough) {
        advice_add(a, "order %s: a cache of %s already reads each chunk at most once per epoch (read amplification "
                      "%.2f; hit rate %.3f%s). More cache only keeps chunks across epochs%s.", order_name(o),
                   size_text(enough->cache_bytes, s1, sizeof s1), enough->r.read_amplification, enough->r.hit_rate,
                   enough->r.hit_rate == 0.0 ? ": each chunk is used by one batch only, so there is nothing to hit" : "",
                   o == H5PACK_ORDER_CHUNK ? " and widens the chunk order's window (better shuffling)" : "");
    } else if (best && best->r.read_amplification > 1.01) {
        uint64_t need = f->n_chunks * f->chunk_bytes; /* the chunk order only re-reads with an explicit --window */
        if (o == H5PACK_ORDER_CHUNK && f->window && f->window < f->n_chunks)
            need = (f->window + chunks_per_batch(f->batch, f->samples_per_chunk)) * f->chunk_bytes;
        advice_add(a, "order %s: even %s reads chunks %.2f times per epoch. Reading each chunk once needs about "
                      "%s of cache%s.", order_name(o), size_text(best->cache_bytes, s1, sizeof s1),
                   best->r.read_amplification, size_text(need, s2, sizeof s2),
                   o == H5PACK_ORDER_RANDOM ? " (the whole dataset), or --order chunk" : "");
    }
}

static uint64_t next_prime(uint64_t n)
{
    for (;; n++) {
        int prime = n >= 2;
        for (uint64_t d = 2; prime && d * d <= n; d++)
            prime = n % d != 0;
        if (prime)
            return n;
    }
}

static void advise_hdf5(const sim_facts *f, h5pack_order o, advice *a)
{
    uint64_t largest = 0, smallest = UINT64_MAX;
    for (int i = 0; i < f->n_rows; i++)
        if (f->rows[i].order == o && f->rows[i].policy == H5PACK_POLICY_HDF5) {
            largest = f->rows[i].cache_bytes > largest ? f->rows[i].cache_bytes : largest;
            smallest = f->rows[i].cache_bytes < smallest ? f->rows[i].cache_bytes : smallest;
        }
    const sim_row *h = find_row(f, largest, o, H5PACK_POLICY_HDF5), *b = find_row(f, largest, o, H5PACK_POLICY_BELADY);
    char s1[32], s2[32];
    if (h && b && b->r.bytes_read > 0)
        advice_add(a, "order %s, %s cache: HDF5's own chunk cache (what h5py gets with rdcc_nbytes=%llu, "
                      "rdcc_nslots=%llu, rdcc_w0=%.2f) reads %.1fx the bytes h5pack reads (hit rate %.3f vs %.3f).",
                   order_name(o), size_text(largest, s1, sizeof s1), (unsigned long long)largest,
                   (unsigned long long)f->nslots, f->w0, (double)h->r.bytes_read / (double)b->r.bytes_read,
                   h->r.hit_rate, b->r.hit_rate);
    if (h && f->chunk_bytes > smallest)
        advice_add(a, "A chunk (%s) is larger than a %s cache: HDF5 then bypasses its cache and reads every "
                      "sample from the file.", size_text(f->chunk_bytes, s1, sizeof s1),
                   size_text(smallest, s2, sizeof s2));
}

/* HDF5's hash slots: a slot holds one chunk, so far fewer slots than cached chunks means collisions. */
static void advise_nslots(const sim_facts *f, advice *a)
{
    uint64_t largest = 0;
    int any = 0;
    for (int i = 0; i < f->n_rows; i++)
        if (f->rows[i].policy == H5PACK_POLICY_HDF5) {
            any = 1;
            largest = f->rows[i].cache_bytes > largest ? f->rows[i].cache_bytes : largest;
        }
    uint64_t fit = f->chunk_bytes ? largest / f->chunk_bytes : 0;
    if (f->n_chunks && fit > f->n_chunks)
        fit = f->n_chunks; /* a cache never holds more chunks than the file has */
    if (f->n_chunks && f->nslots >= f->n_chunks)
        return; /* every chunk has a slot of its own (i mod nslots = i): no collision is possible */
    if (any && fit > 1 && f->nslots < 10 * fit)
        advice_add(a, "HDF5 puts chunk i in hash slot i mod nslots and a slot holds one chunk: with %llu slots for "
                      "up to %llu cached chunks, collisions evict chunks early. Use a prime near 100x the chunks "
                      "that fit: rdcc_nslots=%llu (try it here with --nslots %llu).", (unsigned long long)f->nslots,
                   (unsigned long long)fit, (unsigned long long)next_prime(100 * fit),
                   (unsigned long long)next_prime(100 * fit));
}

void advise_simulate(const sim_facts *f, advice *a)
{
    const h5pack_order orders[] = {H5PACK_ORDER_SEQUENTIAL, H5PACK_ORDER_RANDOM, H5PACK_ORDER_CHUNK};
    for (int k = 0; k < 3; k++) {
        int present = 0;
        for (int i = 0; i < f->n_rows; i++)
            present |= f->rows[i].order == orders[k];
        if (!present)
            continue;
        advise_enough_cache(f, orders[k], a);
        advise_hdf5(f, orders[k], a);
    }
    advise_nslots(f, a);
}
