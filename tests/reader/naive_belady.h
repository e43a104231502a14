/* naive_belady.h - an independent, deliberately simple Belady (MIN) simulation for the tests: for every
 * miss with a full cache it scans the future accesses of each cached chunk (O(n * slots) per miss).
 * Same definition as reader/plan/plan.h: next use looked up in the rest of the epoch, then in the next epoch
 * (when there is one); never used again counts as furthest; ties go to the chunk used longest ago; free slots fill
 * lowest first. Shares nothing with reader/plan/plan.c but order.h's access sequence. */
#ifndef H5PACK_TESTS_NAIVE_BELADY_H
#define H5PACK_TESTS_NAIVE_BELADY_H

#include <stdint.h>
#include <stdlib.h>

#include "order.h"

typedef struct naive_access {
    uint64_t chunk, epoch, slot, gen;
    int load;
} naive_access;

typedef struct naive_sim {
    naive_access *acc; /* every access of every simulated epoch, in order */
    uint64_t n, hits, misses;
    uint64_t *epoch_end; /* epoch_end[e] = index after the last access of epoch e */
} naive_sim;

/* The access sequence of EPOCHS epochs (all batches of each epoch). */
static inline void naive_sequence(const order_params *p, uint64_t epochs, naive_sim *s)
{
    uint64_t per = h5pack_order_samples_per_epoch(p), nb = h5pack_order_batches_per_epoch(p);
    uint64_t *samples = malloc((per + 1) * 8), *acc = malloc((per + 1) * 8), *starts = malloc((nb + 1) * 8);
    s->acc = malloc((per * epochs + 1) * sizeof *s->acc);
    s->epoch_end = malloc((epochs + 1) * 8);
    s->n = s->hits = s->misses = 0;
    for (uint64_t e = 0; e < epochs; e++) {
        uint64_t na = 0;
        if (nb > 0) {
            if (h5pack_order_epoch(p, e, samples) != 0)
                abort();
            na = h5pack_order_accesses(p, samples, per, acc, starts);
        }
        for (uint64_t i = 0; i < na; i++) {
            s->acc[s->n].chunk = acc[i];
            s->acc[s->n++].epoch = e;
        }
        s->epoch_end[e] = s->n;
    }
    free(samples), free(acc), free(starts);
}

/* Next position after POS where CHUNK is used, within the current and the next visible epoch. */
static inline uint64_t naive_next_use(const naive_sim *s, uint64_t pos, uint64_t chunk, uint64_t visible_epochs)
{
    uint64_t e = s->acc[pos].epoch;
    uint64_t limit = e + 1 < visible_epochs ? s->epoch_end[e + 1] : s->epoch_end[e];
    for (uint64_t j = pos + 1; j < limit; j++)
        if (s->acc[j].chunk == chunk)
            return j;
    return UINT64_MAX;
}

/* Runs the simulation over the first RUN_EPOCHS epochs; VISIBLE_EPOCHS (>= RUN_EPOCHS) epochs were
 * generated (one more than run for an endless reader, whose next epoch always exists). */
static inline void naive_belady(const order_params *p, size_t slots, uint64_t run_epochs, uint64_t visible_epochs,
                                naive_sim *s)
{
    naive_sequence(p, visible_epochs, s);
    uint64_t n_run = run_epochs ? s->epoch_end[run_epochs - 1] : 0;
    uint64_t *held = malloc(slots * 8), *gen = calloc(slots, 8), *last = calloc(slots, 8);
    size_t used = 0;
    for (uint64_t i = 0; i < n_run; i++) {
        naive_access *a = &s->acc[i];
        size_t hit = slots;
        for (size_t j = 0; j < used; j++)
            if (held[j] == a->chunk)
                hit = j;
        if (hit < slots) {
            a->slot = hit, a->load = 0, a->gen = gen[hit], s->hits++;
            last[hit] = i;
            continue;
        }
        size_t victim = used;
        if (used == slots) {
            uint64_t furthest = 0;
            victim = 0;
            for (size_t j = 0; j < slots; j++) {
                uint64_t nu = naive_next_use(s, i, held[j], visible_epochs);
                if (j == 0 || nu > furthest || (nu == furthest && last[j] < last[victim]))
                    furthest = nu, victim = j;
            }
        } else {
            used++;
        }
        held[victim] = a->chunk;
        last[victim] = i;
        a->slot = victim, a->load = 1, a->gen = ++gen[victim], s->misses++;
    }
    s->n = n_run;
    free(held), free(gen), free(last);
}

static inline void naive_free(naive_sim *s)
{
    free(s->acc), free(s->epoch_end);
}

#endif
