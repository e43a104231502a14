/* echo_sched.c - the composition of sample-echo deliveries; see echo_sched.h. */
#include "echo_sched.h"
#include "rng.h"

#define ECHO_STREAM 0xA076F1D3C9B2E485ull
#define MAX_ECHO 64 /* augment_config.c refuses more for sample echo */

static uint64_t composed_count(uint32_t echo, uint64_t batches, int last_short)
{
    uint64_t full = last_short && batches > 0 ? batches - 1 : batches;
    return echo >= 2 && full >= echo ? full : 0;
}

void h5pack_echo_sched_init(echo_sched *s, uint32_t echo, uint64_t batches, size_t batch_size, size_t last_count,
                            uint64_t seed)
{
    s->echo = echo, s->batches = batches, s->batch_size = batch_size, s->seed = seed;
    s->composed = composed_count(echo, batches, last_count < batch_size);
    s->first_position = 0;
    s->start_epoch = UINT64_MAX, s->start_composed = s->composed;
}

void h5pack_echo_sched_for(echo_sched *s, uint32_t echo, const order_params *op, uint64_t start_epoch,
                           int64_t start_origin)
{
    uint64_t g = h5pack_order_global_batch(op), T = h5pack_order_batches_per_epoch(op);
    s->echo = echo, s->batches = T, s->batch_size = (size_t)op->batch_size, s->seed = op->seed;
    s->composed = composed_count(echo, T, h5pack_order_last_real(op, 0) < g);
    s->first_position = (uint64_t)op->rank * op->batch_size;
    s->start_epoch = start_epoch;
    s->start_composed = composed_count(echo, T, h5pack_order_last_real(op, start_origin) < g);
}

echo_sched h5pack_echo_in_epoch(const echo_sched *s, uint64_t epoch)
{
    echo_sched v = *s;
    if (epoch == s->start_epoch)
        v.composed = s->start_composed;
    return v;
}

int h5pack_echo_pool_batches(const echo_sched *s)
{
    return s->composed || s->start_composed ? (int)s->echo - 1 : 0;
}

int h5pack_echo_composed(const echo_sched *s, uint64_t g)
{
    return s->composed && g < s->composed;
}

uint64_t h5pack_echo_window(const echo_sched *s, uint64_t g, uint32_t d)
{
    return (g + d) % s->composed;
}

int h5pack_echo_pooled(const echo_sched *s, uint64_t t)
{
    return s->composed && t + 1 < s->echo;
}

/* Block M's permutation of the lags 0..E-1 in group G of EPOCH (the same for the group's E deliveries). */
static void block_lags(const echo_sched *s, uint64_t epoch, uint64_t g, uint64_t m, uint32_t *pi)
{
    rng_state r = {rng_key(s->seed ^ ECHO_STREAM, epoch, g, m)};
    for (uint32_t u = 0; u < s->echo; u++)
        pi[u] = u;
    for (uint32_t u = s->echo - 1; u > 0; u--) {
        uint32_t v = (uint32_t)rng_below(&r, (uint64_t)u + 1), t = pi[u];
        pi[u] = pi[v], pi[v] = t;
    }
}

size_t h5pack_echo_compose(const echo_sched *s, uint64_t epoch, uint64_t g, uint32_t e, uint32_t *lag, uint32_t *pos,
                           uint32_t *perm)
{
    (void)perm;
    uint32_t pi[MAX_ECHO], E = s->echo;
    uint64_t block = UINT64_MAX;
    for (size_t i = 0; i < s->batch_size; i++) {
        uint64_t j = s->first_position + i; /* the global position: lags do not depend on the split */
        if (j / E != block)
            block_lags(s, epoch, g, block = j / E, pi);
        lag[i] = (pi[j % E] + e) % E;
        pos[i] = (uint32_t)i;
    }
    return s->batch_size;
}
