/* test_resume_plan.c - the plan of a resumed start (reader/plan/plan.c, h5pack_planner_create_from): for
 * random orders, windows, worlds, batches, caches and start positions (start_batch, and start_sample of
 * another global batch: a layout with an origin), the batches planned hold the samples of the resumed
 * layout (h5pack_order_epoch_at) and then of the following epochs (h5pack_order_epoch); and in the resumed
 * epoch every hit and miss is Belady's over the rest of that epoch with nothing looked up beyond it, as an
 * independent naive simulation here decides them (the planner's heapless pass for such an epoch must
 * agree with it, also when it falls back to its heap). No file, no thread. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "order.h"
#include "plan.h"
#include "rng.h"

#define NEVER UINT64_MAX

/* Belady over ACC[0..n) alone (nothing after it): loads into SLOTS, the victim the cached chunk used
 * furthest ahead, never-again ones first and among those the one used longest ago; free slots first. */
static void naive_loads(const uint64_t *acc, uint64_t n, size_t slots, int *load)
{
    uint64_t *held = malloc(slots * 8), *last = malloc(slots * 8);
    size_t used = 0;
    for (uint64_t i = 0; i < n; i++) {
        size_t at = slots;
        for (size_t j = 0; j < used; j++)
            if (held[j] == acc[i])
                at = j;
        load[i] = at == slots;
        if (!load[i]) {
            last[at] = i;
            continue;
        }
        if (used < slots) {
            held[used] = acc[i], last[used++] = i;
            continue;
        }
        size_t victim = 0;
        uint64_t best_next = 0, best_last = 0;
        for (size_t j = 0; j < used; j++) {
            uint64_t next = NEVER;
            for (uint64_t k = i + 1; k < n && next == NEVER; k++)
                if (acc[k] == held[j])
                    next = k;
            if (j == 0 || next > best_next || (next == best_next && last[j] < best_last))
                victim = j, best_next = next, best_last = last[j];
        }
        held[victim] = acc[i], last[victim] = i;
    }
    free(held), free(last);
}

static void check_one(rng_state *r, int t)
{
    order_params op = {(h5pack_order)(rng_below(r, 2) ? H5PACK_ORDER_CHUNK : H5PACK_ORDER_RANDOM),
                       60 + rng_below(r, 400), 1 + rng_below(r, 8), 1 + rng_below(r, 12), rng_next(r), 0,
                       1 + (uint32_t)rng_below(r, 3), (int)rng_below(r, 4) == 0, 2 + rng_below(r, 12)};
    op.rank = (uint32_t)rng_below(r, op.world);
    uint64_t bpe = h5pack_order_batches_per_epoch(&op), g = h5pack_order_global_batch(&op);
    if (bpe < 2)
        return;
    size_t slots = 1 + (size_t)rng_below(r, 24);
    uint64_t start = 1, sample = rng_below(r, 2) ? rng_below(r, op.n_samples) : rng_below(r, bpe) * g, batch;
    int64_t origin;
    if (h5pack_order_start(&op, sample, &batch, &origin) != 0 || batch == 0)
        return; /* nothing left, or a start at the epoch's first batch (no skip: not this test's) */
    /* what the resumed epoch must hold, and its accesses from the start batch on */
    uint64_t cap = bpe * op.batch_size, count, *samples = malloc(cap * 8), *acc = malloc(cap * 8);
    uint64_t *starts = malloc((bpe + 1) * 8);
    CHECK_OK(h5pack_order_epoch_at(&op, start, origin, samples, &count));
    h5pack_order_accesses(&op, samples, count, acc, starts);
    uint64_t first = starts[batch], n = starts[bpe] - first;
    int *want = malloc((n + 1) * sizeof *want);
    naive_loads(acc + first, n, slots, want);
    plan_start at = {start, origin, 0, batch}; /* batches 0 .. batch - 1 skipped */
    planner *p = NULL;
    CHECK_OK(h5pack_planner_create_from(&op, slots, start + 3, &at, &p));
    uint64_t *got = malloc(op.batch_size * 8), *next_epoch = malloc(cap * 8);
    plan_access *pa = malloc(op.batch_size * sizeof *pa);
    uint64_t k = 0, e, b, delivered = 0;
    size_t cnt, na;
    while (h5pack_planner_next(p, got, &cnt, pa, &na, &e, &b) == 1) {
        if (e == start) { /* the resumed layout, its hits and misses Belady's within the epoch */
            CHECK_MSG(b >= batch && memcmp(got, samples + b * op.batch_size, cnt * 8) == 0,
                      "case %d: batch %llu of the resumed epoch", t, (unsigned long long)b);
            for (size_t i = 0; i < na; i++, k++)
                CHECK_MSG(pa[i].load == want[k], "case %d: access %llu %s, Belady %s", t, (unsigned long long)k,
                          pa[i].load ? "loads" : "hits", want[k] ? "loads" : "hits");
        } else { /* later epochs: their own layout */
            CHECK_OK(h5pack_order_epoch(&op, e, next_epoch));
            CHECK_MSG(memcmp(got, next_epoch + b * op.batch_size, cnt * 8) == 0, "case %d: epoch %llu batch %llu",
                      t, (unsigned long long)e, (unsigned long long)b);
        }
        delivered++;
    }
    CHECK_EQ_U64(k, n);
    CHECK_EQ_U64(delivered, (bpe - batch) + 2 * bpe);
    h5pack_planner_free(p);
    free(samples), free(acc), free(starts), free(want), free(got), free(next_epoch), free(pa);
}

int main(void)
{
    rng_state r = {2024};
    for (int t = 0; t < 400; t++)
        check_one(&r, t);
    printf("resume_plan: resumed starts plan their layout, Belady within the epoch\n");
    return 0;
}
