/* test_plan.c - the Belady plan of reader/plan/plan.h against an independent naive simulation
 * (naive_belady.h) on random small cases, plus the plan's bookkeeping (samples, generations, evicted,
 * first_in_epoch) and Belady <= LRU. No files, no threads. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "naive_belady.h"
#include "plan.h"
#include "rng.h"

typedef struct plan_run {
    plan_access *acc;
    uint64_t *samples;
    uint64_t n_acc, n_samples, batches, hits, misses;
} plan_run;

/* Plans RUN_EPOCHS epochs (planner epochs = EPOCHS_ARG: 0 = endless) and collects everything. */
static void run_planner(const order_params *p, size_t slots, uint64_t epochs_arg, uint64_t run_epochs,
                        plan_run *r)
{
    uint64_t per = h5pack_order_samples_per_epoch(p), nb = h5pack_order_batches_per_epoch(p);
    planner *pl = NULL;
    CHECK_OK(h5pack_planner_create(p, slots, epochs_arg, &pl));
    r->acc = malloc((per * run_epochs + 1) * sizeof *r->acc);
    r->samples = malloc((per * run_epochs + 1) * 8);
    r->n_acc = r->n_samples = r->batches = r->hits = r->misses = 0;
    uint64_t *s = malloc((p->batch_size + 1) * 8);
    plan_access *a = malloc((p->batch_size + 1) * sizeof *a);
    for (uint64_t b = 0; b < nb * run_epochs; b++) {
        size_t count = 0, n_acc = 0;
        uint64_t epoch = 99, index = 99;
        CHECK_EQ_INT(h5pack_planner_next(pl, s, &count, a, &n_acc, &epoch, &index), 1);
        CHECK_EQ_U64(epoch, b / nb);
        CHECK_EQ_U64(index, b % nb);
        CHECK(count >= 1 && count <= p->batch_size);
        CHECK(n_acc >= 1 && n_acc <= count);
        memcpy(r->samples + r->n_samples, s, count * 8);
        memcpy(r->acc + r->n_acc, a, n_acc * sizeof *a);
        r->n_samples += count, r->n_acc += n_acc, r->batches++;
        for (size_t i = 0; i < n_acc; i++)
            a[i].load ? r->misses++ : r->hits++;
    }
    if (epochs_arg) { /* the end: 0, and 0 again */
        size_t count, n_acc;
        uint64_t epoch, index;
        CHECK_EQ_INT(h5pack_planner_next(pl, s, &count, a, &n_acc, &epoch, &index), 0);
        CHECK_EQ_INT(h5pack_planner_next(pl, s, &count, a, &n_acc, &epoch, &index), 0);
    }
    free(s), free(a);
    h5pack_planner_free(pl);
}

/* Every field of the plan against the naive simulation and order.h. */
static void compare_with_naive(const order_params *p, size_t slots, uint64_t epochs_arg, uint64_t run_epochs)
{
    plan_run r;
    run_planner(p, slots, epochs_arg, run_epochs, &r);
    naive_sim s;
    naive_belady(p, slots, run_epochs, epochs_arg ? run_epochs : run_epochs + 1, &s);
    CHECK_EQ_U64(r.n_acc, s.n);
    CHECK_EQ_U64(r.hits, s.hits);
    CHECK_EQ_U64(r.misses, s.misses);
    /* Every access hits or loads exactly as naive Belady; the slots may differ (the planner evicts the
     * doomed chunk used longest ago, with the same hits), but they are consistent: a hit finds its
     * chunk in its slot, a load names what its slot held, generations count the loads of each slot,
     * and free slots fill lowest first. */
    uint64_t *slot_chunk = malloc(slots * 8), *gen = calloc(slots, 8), n_chunks = h5pack_order_n_chunks(p);
    uint64_t *seen = calloc(n_chunks, 8), filled = 0;
    for (size_t i = 0; i < slots; i++)
        slot_chunk[i] = UINT64_MAX;
    for (uint64_t i = 0; i < r.n_acc; i++) {
        const plan_access *a = &r.acc[i];
        CHECK_EQ_U64(a->chunk, s.acc[i].chunk);
        CHECK_EQ_INT(a->load, s.acc[i].load);
        CHECK(a->slot < slots);
        CHECK_EQ_U64(a->evicted, a->load ? slot_chunk[a->slot] : UINT64_MAX);
        if (a->load && slot_chunk[a->slot] == UINT64_MAX)
            CHECK_EQ_U64(a->slot, filled++);
        if (!a->load)
            CHECK_EQ_U64(slot_chunk[a->slot], a->chunk); /* a hit finds its chunk in its slot */
        gen[a->slot] += (uint64_t)a->load;
        CHECK_EQ_U64(a->slot_gen, gen[a->slot]);
        slot_chunk[a->slot] = a->chunk;
        CHECK_EQ_INT(a->first_in_epoch, seen[a->chunk] != s.acc[i].epoch + 1);
        seen[a->chunk] = s.acc[i].epoch + 1;
    }
    /* the samples are exactly h5pack_order_epoch's */
    uint64_t per = h5pack_order_samples_per_epoch(p), *want = malloc((per + 1) * 8);
    for (uint64_t e = 0; e < run_epochs && h5pack_order_batches_per_epoch(p); e++) {
        CHECK_OK(h5pack_order_epoch(p, e, want));
        CHECK(memcmp(want, r.samples + e * per, per * 8) == 0);
    }
    free(want), free(slot_chunk), free(gen), free(seen);
    free(r.acc), free(r.samples);
    naive_free(&s);
}

static uint64_t lru_misses(const naive_sim *s, size_t slots)
{
    uint64_t *held = malloc(slots * 8), *last = malloc(slots * 8), misses = 0;
    size_t used = 0;
    for (uint64_t i = 0; i < s->n; i++) {
        size_t j = 0;
        while (j < used && held[j] != s->acc[i].chunk)
            j++;
        if (j == used) {
            misses++;
            if (used < slots)
                used++;
            else
                for (size_t v = j = 0; v < slots; v++)
                    j = last[v] < last[j] ? v : j;
            held[j] = s->acc[i].chunk;
        }
        last[j] = i;
    }
    free(held), free(last);
    return misses;
}

static void test_random_cases(void)
{
    rng_state r = {12345};
    for (int t = 0; t < 600; t++) {
        order_params p;
        p.kind = (h5pack_order)rng_below(&r, 3);
        p.n_samples = 1 + rng_below(&r, 150);
        p.samples_per_chunk = 1 + rng_below(&r, 12);
        p.window = 1 + rng_below(&r, 6);
        p.seed = rng_next(&r);
        p.world = 1 + (uint32_t)rng_below(&r, 3);
        p.rank = (uint32_t)rng_below(&r, p.world);
        p.drop_last = rng_below(&r, 4) == 0;
        p.batch_size = 1 + rng_below(&r, 30);
        size_t slots = 1 + rng_below(&r, 10);
        uint64_t epochs = 1 + rng_below(&r, 3);
        if (h5pack_order_batches_per_epoch(&p) == 0)
            continue;
        compare_with_naive(&p, slots, epochs, epochs);
        compare_with_naive(&p, slots, 0, epochs); /* endless: the next epoch is always visible */
        naive_sim s;
        naive_belady(&p, slots, epochs, epochs, &s);
        CHECK(s.misses <= lru_misses(&s, slots));
        naive_free(&s);
    }
}

/* Hand-checked counts on the sequential order. */
static void test_sequential_cycles(void)
{
    /* 6 chunks of 1 sample, batch 1, 2 epochs, 2 slots: sequence 0..5 0..5. Epoch 0 loads all 6 and
     * keeps chunk 0 (used soonest in epoch 1) beside the newest; epoch 1 hits 0, loads 1..4, hits 5. */
    order_params p = {H5PACK_ORDER_SEQUENTIAL, 6, 1, 1, 0, 0, 1, 0, 1};
    plan_run r;
    run_planner(&p, 2, 2, 2, &r);
    CHECK_EQ_U64(r.misses, 10);
    CHECK_EQ_U64(r.hits, 2);
    free(r.acc), free(r.samples);
    /* cache holding everything: one load per chunk, ever */
    run_planner(&p, 6, 0, 3, &r);
    CHECK_EQ_U64(r.misses, 6);
    free(r.acc), free(r.samples);
    /* a cache of far more slots than chunks (1 GiB of 48-byte chunks): same plan, no huge allocation */
    run_planner(&p, (size_t)1 << 40, 0, 3, &r);
    CHECK_EQ_U64(r.misses, 6);
    for (uint64_t i = 0; i < r.n_acc; i++)
        CHECK(r.acc[i].slot < 6);
    free(r.acc), free(r.samples);
}

/* Loads (with an eviction) whose victim was used within the last NEAR accesses: for the planner's accesses
 * ACC, or naive Belady's when ACC is NULL. */
static uint64_t near_victims(const plan_access *acc, const naive_sim *s, uint64_t near, size_t slots,
                             uint64_t n_chunks)
{
    uint64_t *held = malloc(slots * 8), *last = calloc(n_chunks, 8), count = 0;
    for (size_t j = 0; j < slots; j++)
        held[j] = UINT64_MAX;
    for (uint64_t i = 0; i < s->n; i++) {
        uint64_t slot = acc ? acc[i].slot : s->acc[i].slot, chunk = s->acc[i].chunk;
        int load = acc ? acc[i].load : (int)s->acc[i].load;
        if (load && held[slot] != UINT64_MAX && i - last[held[slot]] < near)
            count++;
        held[slot] = chunk;
        last[chunk] = i;
    }
    free(held), free(last);
    return count;
}

/* The planner evicts, among the chunks Belady evicts later without a use in between, the one used
 * longest ago: with the chunk order, Belady alone often evicts the chunk that died a moment ago
 * (furthest next use, in the next epoch), which the reader's workers may not be done with yet. A swap of
 * eviction times keeps the sum of the gaps; what changes is how many loads must wait on a recent use. */
static void test_victims_used_long_ago(void)
{
    order_params p = {H5PACK_ORDER_CHUNK, 2000, 10, 8, 99, 0, 1, 0, 16};
    size_t slots = 8 + 8;
    plan_run r;
    run_planner(&p, slots, 3, 3, &r);
    naive_sim s;
    naive_belady(&p, slots, 3, 3, &s);
    CHECK_EQ_U64(r.misses, s.misses);
    const uint64_t near = 8; /* about one batch of accesses here (a window of 8 chunks) */
    uint64_t planner = near_victims(r.acc, &s, near, slots, 200), naive = near_victims(NULL, &s, near, slots, 200);
    printf("loads whose victim was used in the last %llu accesses: planner %llu, plain Belady %llu (of %llu)\n",
           (unsigned long long)near, (unsigned long long)planner, (unsigned long long)naive,
           (unsigned long long)r.misses);
    CHECK(planner * 2 < naive);
    free(r.acc), free(r.samples);
    naive_free(&s);
}

static void test_bad_arguments(void)
{
    order_params p = {H5PACK_ORDER_CHUNK, 10, 2, 2, 0, 0, 1, 0, 4};
    planner *pl = (planner *)&p;
    CHECK_EQ_INT(h5pack_planner_create(&p, 0, 1, &pl), H5PACK_EINVAL);
    CHECK(pl == NULL);
    p.world = 0;
    CHECK_EQ_INT(h5pack_planner_create(&p, 4, 1, &pl), H5PACK_EINVAL);
    h5pack_planner_free(NULL);
}

int main(void)
{
    test_sequential_cycles();
    test_bad_arguments();
    test_victims_used_long_ago();
    test_random_cases();
    printf("plan: all checks passed\n");
    return 0;
}
