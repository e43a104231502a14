/* echo_sched.h - which samples each delivery holds under sample-level echo (echo_mode "sample").
 *
 * An epoch has T fresh batches of B samples, read and copied to the device once each. Each fresh batch
 * t is delivered E times, as E deliveries (t, 0..E-1) like batch echo, but delivery (g, e) is composed:
 * for each lag d = 0..E-1 it takes part e of a fresh random permutation of fresh batch (g + d) mod Tf,
 * split into E parts (sizes B/E, the B mod E larger parts rotating with d so every delivery holds B).
 * So every sample of fresh batch t appears exactly once for each lag, in deliveries of the E different
 * groups t, t-1, ..., t-E+1 (mod Tf): E copies per epoch, in E different batches, each with its own
 * crop and flip draws; a delivery holds samples of E different fresh batches, so it holds a sample
 * twice only if the file row was drawn twice in the epoch (world padding).
 * The window of group g reads ahead: fresh batches g+1 .. g+E-1 must be ready when group g is
 * delivered (the ring holds them; nothing is read twice). At the end of the epoch the windows wrap to
 * its first E-1 fresh batches, which therefore stay in a pool (E-1 batches of device memory) until the
 * epoch ends: counts are exact per epoch, and no copy crosses an epoch boundary.
 * Tf = T, or T - 1 when the last batch is short (drop_last off): that batch is delivered E times as
 * batch echo. An epoch with Tf < E fresh batches is batch-echoed entirely. */
#ifndef H5PACK_READER_ECHO_SCHED_H
#define H5PACK_READER_ECHO_SCHED_H

#include <stddef.h>
#include <stdint.h>

typedef struct echo_sched {
    uint32_t echo;      /* E >= 2 */
    uint64_t batches;   /* T */
    uint64_t composed;  /* Tf, or 0 when the epoch is batch-echoed (Tf < E) */
    size_t batch_size;  /* B */
    uint64_t seed;
} echo_sched;

/* T batches per epoch of B samples, the last holding LAST_COUNT (B when full). */
void h5pack_echo_sched_init(echo_sched *s, uint32_t echo, uint64_t batches, size_t batch_size, size_t last_count,
                            uint64_t seed);

/* Pool entries needed: E - 1 (or 0 when no epoch is composed). */
int h5pack_echo_pool_batches(const echo_sched *s);

/* 1 when group G (epoch-local) is composed; 0 when it is batch-echoed. */
int h5pack_echo_composed(const echo_sched *s, uint64_t g);

/* Fresh batch (epoch-local) of lag D in group G's window: (g + d) mod Tf. */
uint64_t h5pack_echo_window(const echo_sched *s, uint64_t g, uint32_t d);

/* 1 when fresh batch T is read after its own group (the windows wrap to it): it goes to pool entry T. */
int h5pack_echo_pooled(const echo_sched *s, uint64_t t);

/* Delivery (G, E) of EPOCH, composed: for output position i, LAG[i] (its fresh batch is
 * h5pack_echo_window(g, lag)) and POS[i] its position in that fresh batch. PERM: B entries of scratch.
 * Returns the count (B). */
size_t h5pack_echo_compose(const echo_sched *s, uint64_t epoch, uint64_t g, uint32_t e, uint32_t *lag, uint32_t *pos,
                           uint32_t *perm);

#endif
