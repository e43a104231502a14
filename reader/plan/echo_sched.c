/* echo_sched.c - the composition of sample-echo deliveries; see echo_sched.h. */
#include "echo_sched.h"
#include "rng.h"

#define ECHO_STREAM 0xA076F1D3C9B2E485ull

void h5pack_echo_sched_init(echo_sched *s, uint32_t echo, uint64_t batches, size_t batch_size, size_t last_count,
                            uint64_t seed)
{
    s->echo = echo, s->batches = batches, s->batch_size = batch_size, s->seed = seed;
    uint64_t full = last_count < batch_size && batches > 0 ? batches - 1 : batches;
    s->composed = echo >= 2 && full >= echo ? full : 0;
}

int h5pack_echo_pool_batches(const echo_sched *s)
{
    return s->composed ? (int)s->echo - 1 : 0;
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

/* Size of part Q of lag D's permutation: B / E, plus one for B mod E of the parts, rotating with D. */
static size_t part_size(const echo_sched *s, uint32_t q, uint32_t d)
{
    size_t base = s->batch_size / s->echo, extra = s->batch_size % s->echo;
    return base + ((q + d) % s->echo < extra ? 1 : 0);
}

size_t h5pack_echo_compose(const echo_sched *s, uint64_t epoch, uint64_t g, uint32_t e, uint32_t *lag, uint32_t *pos,
                           uint32_t *perm)
{
    size_t n = 0, B = s->batch_size;
    for (uint32_t d = 0; d < s->echo; d++) {
        uint64_t t = h5pack_echo_window(s, g, d);
        /* the permutation of fresh batch t for lag d: the same for all E deliveries of the group */
        rng_state r = {rng_key(s->seed ^ ECHO_STREAM, epoch, t, d)};
        for (uint32_t i = 0; i < B; i++)
            perm[i] = i;
        for (size_t i = B - 1; i > 0; i--) {
            size_t j = (size_t)rng_below(&r, i + 1);
            uint32_t tmp = perm[i];
            perm[i] = perm[j], perm[j] = tmp;
        }
        size_t start = 0;
        for (uint32_t q = 0; q < e; q++)
            start += part_size(s, q, d);
        for (size_t k = 0; k < part_size(s, e, d); k++)
            lag[n] = d, pos[n] = perm[start + k], n++;
    }
    return n;
}
