/* halfbits.h - float32 -> float16 / bfloat16 bit patterns, round to nearest, ties to even, as one
 * implementation for the host (value tables, the CPU resampling) and the GPU kernels, so that 16-bit
 * outputs are bit-identical on both. */
#ifndef H5PACK_READER_HALFBITS_H
#define H5PACK_READER_HALFBITS_H

#include <stdint.h>
#include <string.h>

#include "rng.h" /* H5PACK_HD */

H5PACK_HD uint32_t h5pack_float_bits(float f)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

/* IEEE binary16. Handles NaN (quiet, sign kept), overflow to infinity, subnormals and zero. */
H5PACK_HD uint16_t h5pack_float_to_half_bits(float f)
{
    uint32_t x = h5pack_float_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t exp = (x >> 23) & 0xFFu, mant = x & 0x7FFFFFu;
    if (exp == 0xFF) /* inf or NaN */
        return (uint16_t)(sign | 0x7C00u | (mant ? 0x200u | (mant >> 13) : 0));
    int e = (int)exp - 127 + 15; /* biased half exponent */
    if (e >= 31)
        return (uint16_t)(sign | 0x7C00u);
    uint32_t m = mant | 0x800000u; /* 24-bit significand with the implicit one */
    int shift = 13;                /* bits dropped for a normal half */
    if (e <= 0) {                  /* subnormal half (or rounds to zero) */
        shift = 14 - e;
        if (shift > 25)
            return sign;
        e = 0;
    }
    uint32_t kept = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (kept & 1)))
        kept++;
    /* For normals, kept includes the implicit bit (0x400): adding (e-1)<<10 gives the right exponent,
     * and a carry out of the significand moves into the exponent (up to infinity) by itself. */
    uint32_t bits = e > 0 ? ((uint32_t)(e - 1) << 10) + kept : kept;
    return (uint16_t)(sign | bits);
}

H5PACK_HD uint16_t h5pack_float_to_bfloat16_bits(float f)
{
    uint32_t x = h5pack_float_bits(f);
    if ((x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu)) /* NaN: keep it a (quiet) NaN */
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7FFFu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

#endif
