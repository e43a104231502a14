/* mask_nearest_vbmi.c - mask rows picked with byte permutes (mask_nearest_vbmi.h). */
#include "mask_nearest_vbmi.h"

#include "env.h"

int h5pack_mask_vbmi_plan(const int32_t *cols, uint32_t out_w, uint32_t src_w, mask_vbmi_plan *plan)
{
    uint32_t blocks = (out_w + 63) / 64;
    if (out_w == 0 || blocks > MASK_VBMI_MAX_BLOCKS)
        return -1;
    plan->blocks = blocks, plan->out_w = out_w;
    for (uint32_t b = 0; b < blocks; b++) {
        uint32_t first = b * 64, n = out_w - first < 64 ? out_w - first : 64;
        int32_t lo = cols[first], hi = cols[first];
        for (uint32_t i = 1; i < n; i++) { /* increasing, or decreasing when flipped */
            lo = cols[first + i] < lo ? cols[first + i] : lo;
            hi = cols[first + i] > hi ? cols[first + i] : hi;
        }
        if (lo < 0 || (uint32_t)hi >= src_w || hi - lo >= 128)
            return -1;
        plan->base[b] = lo;
        plan->avail[b] = src_w - (uint32_t)lo;
        for (uint32_t i = 0; i < 64; i++)
            plan->index[b][i] = i < n ? (uint8_t)(cols[first + i] - lo) : 0;
    }
    return 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <stdatomic.h>

#define VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

int h5pack_mask_vbmi_supported(void)
{
    static _Atomic int known = -1;
    int v = atomic_load_explicit(&known, memory_order_relaxed);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vbmi") && !h5pack_env_flag("H5PACK_NO_AVX512");
        atomic_store_explicit(&known, v, memory_order_relaxed);
    }
    return v;
}

/* The first N of 64 bytes (all for N >= 64). */
static inline uint64_t first_bytes(uint32_t n)
{
    return n >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1);
}

VBMI void h5pack_mask_vbmi_row(const uint8_t *row, const mask_vbmi_plan *plan, uint8_t *out)
{
    for (uint32_t b = 0; b < plan->blocks; b++) {
        const uint8_t *src = row + plan->base[b];
        uint32_t avail = plan->avail[b];
        __m512i lo = _mm512_maskz_loadu_epi8(first_bytes(avail), src);
        __m512i hi = _mm512_maskz_loadu_epi8(first_bytes(avail > 64 ? avail - 64 : 0), src + 64);
        __m512i idx = _mm512_loadu_si512((const void *)plan->index[b]);
        __m512i picked = _mm512_permutex2var_epi8(lo, idx, hi);
        uint32_t first = b * 64, n = plan->out_w - first;
        _mm512_mask_storeu_epi8(out + first, first_bytes(n), picked);
    }
}
#else
int h5pack_mask_vbmi_supported(void)
{
    return 0;
}

void h5pack_mask_vbmi_row(const uint8_t *row, const mask_vbmi_plan *plan, uint8_t *out)
{
    (void)row, (void)plan, (void)out; /* never called: not supported */
}
#endif
