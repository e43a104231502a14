/* clock.c - see clock.h. */
#include "clock.h"

#include <time.h>

uint64_t h5pack_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double h5pack_clock_s(void)
{
    return (double)h5pack_clock_ns() * 1e-9;
}
