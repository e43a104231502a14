/* clock.h - the monotonic clock every part measures time with (stats, stall time, progress). */
#ifndef H5PACK_COMMON_CLOCK_H
#define H5PACK_COMMON_CLOCK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" { /* the CUDA backend (C++) times its launches with it */
#endif

/* Nanoseconds / seconds of CLOCK_MONOTONIC: only differences are meaningful. Thread-safe. */
uint64_t h5pack_clock_ns(void);
double h5pack_clock_s(void);

#ifdef __cplusplus
}
#endif

#endif
