/* test_echo_sched.c - sample echo's composition (reader/plan/echo_sched.h) over whole epochs: every sample
 * of a composed fresh batch is delivered exactly E times per epoch, its copies in E different
 * deliveries of E different groups, every delivery holds B distinct samples from E different fresh
 * batches, windows read ahead at most E - 1 batches and wrap only to the pooled first E - 1, the same
 * seed gives the same composition and another epoch another one; short last batch and small epochs
 * fall back to batch echo. */
#include <stdlib.h>

#include "check.h"
#include "echo_sched.h"

/* Runs one epoch of T batches of B (last LAST) with echo E; checks the counts and spreads. */
static void check_epoch(uint32_t E, uint64_t T, size_t B, size_t last, uint64_t seed)
{
    echo_sched s;
    h5pack_echo_sched_init(&s, E, T, B, last, seed);
    uint64_t Tf = s.composed;
    uint32_t *count = calloc(T * B, sizeof *count), *lag = malloc(B * 4), *pos = malloc(B * 4), *perm = malloc(B * 4);
    uint64_t *last_group = malloc(T * B * sizeof *last_group);
    CHECK(count && lag && pos && perm && last_group);
    for (size_t k = 0; k < T * B; k++)
        last_group[k] = UINT64_MAX;
    for (uint64_t g = 0; g < T; g++) {
        size_t n_g = g + 1 == T ? last : B;
        for (uint32_t e = 0; e < E; e++) {
            if (!h5pack_echo_composed(&s, g)) { /* batch echo: the group's own samples */
                for (size_t i = 0; i < n_g; i++)
                    count[g * B + i]++;
                continue;
            }
            size_t n = h5pack_echo_compose(&s, 0, g, e, lag, pos, perm);
            CHECK_EQ_INT(n, B);
            uint32_t seen_lag = 0;
            for (size_t i = 0; i < n; i++) {
                uint64_t t = h5pack_echo_window(&s, g, lag[i]);
                CHECK(t < Tf && pos[i] < B);
                /* lookahead of at most E - 1, or a wrap to a pooled batch */
                CHECK(t >= g ? t - g < E : h5pack_echo_pooled(&s, t));
                seen_lag |= 1u << lag[i];
                size_t k = t * B + pos[i];
                count[k]++;
                CHECK_MSG(last_group[k] != g, "sample %zu twice in group %llu", k, (unsigned long long)g);
                last_group[k] = g;
            }
            CHECK_EQ_INT(seen_lag, (1u << E) - 1); /* parts of E different fresh batches */
        }
    }
    for (uint64_t t = 0; t < T; t++)
        for (size_t i = 0; i < (t + 1 == T ? last : B); i++)
            CHECK_MSG(count[t * B + i] == E, "sample %zu of batch %llu delivered %u times (E=%u T=%llu B=%zu)", i,
                      (unsigned long long)t, count[t * B + i], E, (unsigned long long)T, B);
    free(count), free(lag), free(pos), free(perm), free(last_group);
}

static void test_determinism(void)
{
    echo_sched s;
    h5pack_echo_sched_init(&s, 3, 10, 16, 16, 42);
    uint32_t a[16], b[16], c[16], pa[16], pb[16], pc[16], perm[16];
    h5pack_echo_compose(&s, 4, 2, 1, a, pa, perm);
    h5pack_echo_compose(&s, 4, 2, 1, b, pb, perm);
    h5pack_echo_compose(&s, 5, 2, 1, c, pc, perm);
    CHECK(memcmp(a, b, sizeof a) == 0 && memcmp(pa, pb, sizeof pa) == 0);
    CHECK_MSG(memcmp(a, c, sizeof a) != 0, "another epoch must compose other batches");
}

static void test_fallbacks(void)
{
    echo_sched s;
    h5pack_echo_sched_init(&s, 4, 3, 8, 8, 1); /* fewer batches than E: batch echo */
    CHECK(s.composed == 0 && h5pack_echo_pool_batches(&s) == 0 && !h5pack_echo_composed(&s, 0));
    h5pack_echo_sched_init(&s, 2, 5, 8, 3, 1); /* short last batch: batch-echoed, the rest composed */
    CHECK(s.composed == 4 && h5pack_echo_composed(&s, 3) && !h5pack_echo_composed(&s, 4));
    CHECK_EQ_INT(h5pack_echo_pool_batches(&s), 1);
    CHECK(h5pack_echo_pooled(&s, 0) && !h5pack_echo_pooled(&s, 1));
}

int main(void)
{
    check_epoch(2, 10, 8, 8, 1);
    check_epoch(3, 7, 10, 10, 2);   /* B not a multiple of E */
    check_epoch(4, 4, 9, 9, 3);     /* Tf == E: every window is the whole epoch */
    check_epoch(2, 9, 16, 5, 4);    /* short last batch */
    check_epoch(5, 3, 6, 6, 5);     /* too few batches: batch echo */
    check_epoch(8, 40, 64, 64, 6);
    test_determinism();
    test_fallbacks();
    printf("echo_sched: exact counts, spread copies, bounded lookahead\n");
    return 0;
}
