/* test_sim_policies.c - the simulator's policies on small hand-checked traces (LRU, the HDF5 chunk
 * cache model: hash collisions, w0 preemption, one-step promotion, bypass of large chunks), and
 * Belady (the reader's planner) never loading more than LRU on random cases. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "order.h"
#include "plan.h"
#include "rng.h"
#include "sim_policies.h"

static int lru_misses(uint64_t slots, uint64_t n_chunks, const uint64_t *seq, size_t n)
{
    lru_sim *s = NULL;
    CHECK_OK(h5pack_lru_sim_create(slots, n_chunks, &s));
    int misses = 0;
    for (size_t i = 0; i < n; i++)
        misses += !h5pack_lru_sim_access(s, seq[i]);
    h5pack_lru_sim_free(s);
    return misses;
}

static void test_lru_traces(void)
{
    /* 2 slots: 0 1 0 2 (evicts 1) 1 (evicts 0) 0 (evicts 2) -> misses 0,1,2,1,0 = 5 of 6 */
    const uint64_t a[] = {0, 1, 0, 2, 1, 0};
    CHECK_EQ_INT(lru_misses(2, 3, a, 6), 5);
    /* 3 slots hold everything: only the first use of each chunk misses */
    CHECK_EQ_INT(lru_misses(3, 3, a, 6), 3);
    /* cyclic scan one larger than the cache: LRU misses every time */
    const uint64_t cyc[] = {0, 1, 2, 0, 1, 2, 0, 1, 2};
    CHECK_EQ_INT(lru_misses(2, 3, cyc, 9), 9);
    lru_sim *s = NULL;
    CHECK(h5pack_lru_sim_create(0, 3, &s) == H5PACK_EINVAL);
}

typedef struct h5trace {
    hdf5_sim *s;
    uint64_t bytes;
} h5trace;

static h5trace h5_new(uint64_t nbytes, uint64_t nslots, double w0, uint64_t chunk, int filtered)
{
    hdf5_sim_params p = {nbytes, nslots, w0, chunk, filtered};
    h5trace t = {NULL, 0};
    CHECK_OK(h5pack_hdf5_sim_create(&p, &t.s));
    return t;
}

/* reads of ACC bytes each of SEQ; returns the file reads */
static int h5_run(h5trace *t, const uint64_t *seq, size_t n, uint64_t acc, uint64_t stored)
{
    int reads = 0;
    for (size_t i = 0; i < n; i++)
        reads += h5pack_hdf5_sim_read(t->s, seq[i], acc, stored, &t->bytes);
    return reads;
}

static void test_hdf5_collisions(void)
{
    /* room for 4 chunks of 100 bytes but only 3 slots: chunks 0 and 3 share slot 0 */
    h5trace t = h5_new(400, 3, 0.75, 100, 0);
    const uint64_t seq[] = {0, 3, 0, 3, 1, 1};
    CHECK_EQ_INT(h5_run(&t, seq, 6, 10, 100), 5); /* 0,3,0,3 all miss (collide); 1 misses once */
    CHECK_EQ_U64(t.bytes, 500);
    CHECK_EQ_U64(h5pack_hdf5_sim_cached(t.s), 2);
    h5pack_hdf5_sim_free(t.s);
}

static void test_hdf5_w0(void)
{
    /* 2 chunks fit. Chunk 0 read fully (rd_count 0), chunk 1 partly. Loading chunk 2:
     * w0 = 1: pointer 0 walks first and preempts the fully read chunk 0, so 1 stays;
     * w0 = 0: pointer 1 starts at once and takes the head (chunk 0 as well: it is older)...
     * so make chunk 1 the head instead: read 1 partly first, then 0 fully. */
    const uint64_t seq[] = {1, 0, 2, 1};
    /* w0 = 1: fully read chunk 0 goes, 1 (partly read, at the head) survives: reads 1,0,2 = 3 */
    h5trace a = h5_new(200, 101, 1.0, 100, 0);
    CHECK_EQ_INT(h5pack_hdf5_sim_read(a.s, 1, 10, 100, &a.bytes), 1);
    CHECK_EQ_INT(h5pack_hdf5_sim_read(a.s, 0, 100, 100, &a.bytes), 1);
    CHECK_EQ_INT(h5pack_hdf5_sim_read(a.s, 2, 10, 100, &a.bytes), 1);
    CHECK_EQ_INT(h5pack_hdf5_sim_read(a.s, 1, 10, 100, &a.bytes), 0);
    h5pack_hdf5_sim_free(a.s);
    /* w0 = 0: the second pointer starts at the head at once and preempts chunk 1 (the head, tried
     * after pointer 0 found chunk 1 only partly read): then 1 misses again */
    h5trace b = h5_new(200, 101, 0.0, 100, 0);
    CHECK_EQ_INT(h5pack_hdf5_sim_read(b.s, 1, 10, 100, &b.bytes), 1);
    CHECK_EQ_INT(h5pack_hdf5_sim_read(b.s, 0, 100, 100, &b.bytes), 1);
    CHECK_EQ_INT(h5pack_hdf5_sim_read(b.s, 2, 10, 100, &b.bytes), 1);
    CHECK_EQ_INT(h5pack_hdf5_sim_read(b.s, 1, 10, 100, &b.bytes), 1);
    h5pack_hdf5_sim_free(b.s);
    (void)seq;
}

static void test_hdf5_promotion(void)
{
    /* 2 chunks fit, w0 = 0 (plain list order). 0 then 1 loaded: list 0,1. A hit on 0 moves it one
     * place towards the tail: list 1,0. Loading 2 preempts the head: 1. */
    h5trace t = h5_new(200, 101, 0.0, 100, 0);
    const uint64_t seq[] = {0, 1, 0, 2};
    CHECK_EQ_INT(h5_run(&t, seq, 4, 10, 100), 3);
    CHECK_EQ_INT(h5pack_hdf5_sim_read(t.s, 0, 10, 100, &t.bytes), 0); /* 0 survived */
    CHECK_EQ_INT(h5pack_hdf5_sim_read(t.s, 1, 10, 100, &t.bytes), 1); /* 1 was preempted */
    h5pack_hdf5_sim_free(t.s);
}

static void test_hdf5_bypass(void)
{
    /* unfiltered chunk of 1000 bytes, cache of 999: every read goes straight to the file and reads only
     * the requested bytes; nothing is ever cached */
    h5trace u = h5_new(999, 521, 0.75, 1000, 0);
    const uint64_t seq[] = {0, 0, 0, 1};
    CHECK_EQ_INT(h5_run(&u, seq, 4, 250, 1000), 4);
    CHECK_EQ_U64(u.bytes, 1000);
    CHECK_EQ_U64(h5pack_hdf5_sim_cached(u.s), 0);
    h5pack_hdf5_sim_free(u.s);
    /* filtered: the whole stored chunk is read and decoded for every read */
    h5trace f = h5_new(999, 521, 0.75, 1000, 1);
    CHECK_EQ_INT(h5_run(&f, seq, 4, 250, 300), 4);
    CHECK_EQ_U64(f.bytes, 1200);
    h5pack_hdf5_sim_free(f.s);
    /* nslots 0: nothing is cached, every read loads the stored chunk */
    h5trace z = h5_new(1 << 20, 0, 0.75, 1000, 0);
    CHECK_EQ_INT(h5_run(&z, seq, 4, 250, 1000), 4);
    h5pack_hdf5_sim_free(z.s);
}

/* Belady (the planner) never loads more than LRU of the same size, on the same access sequence. */
static void test_belady_not_below_lru(void)
{
    rng_state r = {12345};
    for (int trial = 0; trial < 60; trial++) {
        order_params op = {(h5pack_order)rng_below(&r, 3), 20 + rng_below(&r, 300), 1 + rng_below(&r, 9),
                           1 + rng_below(&r, 6), rng_next(&r), 0, 1, 0, 1 + rng_below(&r, 40)};
        uint64_t slots = 1 + rng_below(&r, 12), epochs = 1 + rng_below(&r, 3);
        planner *p = NULL;
        CHECK_OK(h5pack_planner_create(&op, (size_t)slots, epochs, &p));
        lru_sim *l = NULL;
        CHECK_OK(h5pack_lru_sim_create(slots, h5pack_order_n_chunks(&op), &l));
        uint64_t *samples = malloc(op.batch_size * sizeof *samples);
        plan_access *acc = malloc(op.batch_size * sizeof *acc);
        size_t count, n_acc;
        uint64_t epoch, batch, belady_loads = 0, lru_loads = 0, uses = 0;
        while (h5pack_planner_next(p, samples, &count, acc, &n_acc, &epoch, &batch) == 1)
            for (size_t i = 0; i < n_acc; i++, uses++) {
                belady_loads += (uint64_t)acc[i].load;
                lru_loads += (uint64_t)!h5pack_lru_sim_access(l, acc[i].chunk);
            }
        CHECK_MSG(belady_loads <= lru_loads, "trial %d: belady %llu loads > lru %llu", trial,
                  (unsigned long long)belady_loads, (unsigned long long)lru_loads);
        CHECK(uses > 0);
        free(samples), free(acc);
        h5pack_lru_sim_free(l);
        h5pack_planner_free(p);
    }
}

int main(void)
{
    test_lru_traces();
    test_hdf5_collisions();
    test_hdf5_w0();
    test_hdf5_promotion();
    test_hdf5_bypass();
    test_belady_not_below_lru();
    return 0;
}
