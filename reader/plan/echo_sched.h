/* echo_sched.h - which samples each delivery holds under sample-level echo (echo_mode "sample").
 *
 * An epoch has T fresh batches, read and copied to the device once each. Each fresh batch t is delivered
 * E times, as E deliveries (t, 0..E-1) like batch echo, but delivery (g, e) is composed: every position
 * keeps its place and takes its sample from one of the group's E fresh batches, (g + lag) mod Tf. The
 * lags are dealt per aligned block of E positions of the GLOBAL batch (order.h: positions count across
 * the ranks, rank r's outputs are positions r*B ..): block m of group g draws a permutation pi of
 * 0..E-1 (keyed by seed, epoch, g, m) and position j = m*E + u takes lag (pi[u] + e) mod E. So position
 * j of fresh batch t is delivered once for each lag, in groups t, t-1, ..., t-E+1 (mod Tf): E copies
 * per epoch, in E different batches, each with its own crop and flip draws; a delivery holds about G/E
 * samples of each of E fresh batches (exactly, per block of E), and a sample twice only if the file row
 * was drawn twice in the epoch (padding). Because no sample changes position, every rank composes from
 * its own fresh batches alone, and the global deliveries depend on the global batch G, not on how it is
 * split into ranks (the whole order's promise, order.h).
 * The window of group g reads ahead: fresh batches g+1 .. g+E-1 must be ready when group g is
 * delivered (the ring holds them; nothing is read twice). At the end of the epoch the windows wrap to
 * its first E-1 fresh batches, which therefore stay in a pool (E-1 batches of device memory) until the
 * epoch ends: counts are exact per epoch, and no copy crosses an epoch boundary.
 * Tf = T, or T - 1 when the epoch's last global batch is short (fewer real samples than G, whatever the
 * padding makes of the ranks' batches; a resumed epoch's layout decides for that epoch): that batch is
 * delivered E times as batch echo. An epoch with Tf < E fresh batches is batch-echoed entirely. */
#ifndef H5PACK_READER_ECHO_SCHED_H
#define H5PACK_READER_ECHO_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "order.h"

typedef struct echo_sched {
    uint32_t echo;            /* E >= 2 */
    uint64_t batches;         /* T */
    uint64_t composed;        /* Tf, or 0 when the epoch is batch-echoed (Tf < E) */
    size_t batch_size;        /* B */
    uint64_t seed;
    uint64_t first_position;  /* global position of this rank's first output: rank * B */
    uint64_t start_epoch;     /* an epoch laid out otherwise (a resumed one), or UINT64_MAX */
    uint64_t start_composed;  /* its Tf (as composed) */
} echo_sched;

/* One rank of world 1: T batches per epoch of B samples, the last holding LAST_COUNT (B when full). */
void h5pack_echo_sched_init(echo_sched *s, uint32_t echo, uint64_t batches, size_t batch_size, size_t last_count,
                            uint64_t seed);

/* The schedule of OP's rank, its run starting at epoch START_EPOCH laid out from START_ORIGIN
 * (h5pack_order_start; 0: the epoch's own). */
void h5pack_echo_sched_for(echo_sched *s, uint32_t echo, const order_params *op, uint64_t start_epoch,
                           int64_t start_origin);

/* S as it applies to EPOCH (its composed count); the functions below take such a view. */
echo_sched h5pack_echo_in_epoch(const echo_sched *s, uint64_t epoch);

/* Pool entries needed: E - 1 (or 0 when no epoch is composed). */
int h5pack_echo_pool_batches(const echo_sched *s);

/* 1 when group G (epoch-local) is composed; 0 when it is batch-echoed. */
int h5pack_echo_composed(const echo_sched *s, uint64_t g);

/* Fresh batch (epoch-local) of lag D in group G's window: (g + d) mod Tf. */
uint64_t h5pack_echo_window(const echo_sched *s, uint64_t g, uint32_t d);

/* 1 when fresh batch T is read after its own group (the windows wrap to it): it goes to pool entry T. */
int h5pack_echo_pooled(const echo_sched *s, uint64_t t);

/* Delivery (G, E) of EPOCH, composed: for output position i, LAG[i] (its fresh batch is
 * h5pack_echo_window(g, lag)) and POS[i] its position in that fresh batch (i: positions are kept).
 * PERM: unused (kept for the callers' scratch). Returns the count (B). */
size_t h5pack_echo_compose(const echo_sched *s, uint64_t epoch, uint64_t g, uint32_t e, uint32_t *lag, uint32_t *pos,
                           uint32_t *perm);

#endif
