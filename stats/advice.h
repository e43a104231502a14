/* advice.h - the plain-language advice printed at the end of `run` and `simulate`: what the numbers
 * mean and which cache size, chunk size, order or echo factor would change them. */
#ifndef H5PACK_STATS_ADVICE_H
#define H5PACK_STATS_ADVICE_H

#include <stdint.h>
#include <stdio.h>

#include "h5pack_sim.h"

#define ADVICE_MAX 12

typedef struct advice {
    char line[ADVICE_MAX][600];
    int n;
} advice;

void advice_add(advice *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void advice_print(const advice *a, FILE *f);

typedef struct run_facts {
    h5pack_info info;
    h5pack_config cfg;
    h5pack_stats st;
    double loop_s;         /* consumer loop wall time */
    double stall_fraction; /* st.stall_s / loop_s; with several epochs, of the epochs after the first
                              (the first also warms the cache and the threads up) */
    int steady;            /* 1: stall_fraction leaves the first epoch out */
    int cores;
    double step_ms;        /* simulated training time per batch (--step-ms) */
} run_facts;

void advise_run(const run_facts *f, advice *a);

typedef struct sim_row {
    uint64_t cache_bytes;
    h5pack_order order;
    h5pack_policy policy;
    h5pack_sim_result r;
} sim_row;

typedef struct sim_facts {
    const sim_row *rows;
    int n_rows;
    uint64_t chunk_bytes, n_chunks, samples_per_chunk, image_bytes; /* 0 when unknown */
    int threads;
    size_t window; /* --window, 0 = derived */
    uint64_t batch;
    uint64_t nslots;
    double w0;
} sim_facts;

void advise_simulate(const sim_facts *f, advice *a);

#endif
