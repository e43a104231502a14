/*
 * An external program built against an installed h5pack (tests/package): checks that the header and the
 * library agree on the version, reads every sample of FILE once through the public API, and checks that
 * h5pack_describe and a simulation (h5pack_sim.h) agree with what the reader did.
 * Usage: consumer FILE.h5 N_SAMPLES
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <h5pack.h>
#include <h5pack_sim.h>

/* The file as described, and the Belady replay's hits and misses, equal what the reader did. */
static int same_as_simulation(const char *path, const h5pack_config *cfg, const h5pack_stats *st)
{
    char err[512];
    h5pack_file_desc d = H5PACK_FILE_DESC_INIT;
    if (h5pack_describe(path, cfg, &d, err, sizeof err) != 0) {
        fprintf(stderr, "describe: %s\n", err);
        return 0;
    }
    h5pack_sim_params p = H5PACK_SIM_PARAMS_DEFAULTS;
    p.cache_bytes = cfg->cache_bytes;
    h5pack_sim_result res = H5PACK_SIM_RESULT_INIT;
    if (h5pack_simulate(path, cfg, &p, &res, err, sizeof err) != 0) {
        fprintf(stderr, "simulate: %s\n", err);
        return 0;
    }
    if (res.hits != st->chunk_hits || res.misses != st->chunk_misses || d.n_samples != st->samples) {
        fprintf(stderr, "simulate %llu/%llu, reader %llu/%llu hits/misses; described %llu samples, read %llu\n",
                (unsigned long long)res.hits, (unsigned long long)res.misses, (unsigned long long)st->chunk_hits,
                (unsigned long long)st->chunk_misses, (unsigned long long)d.n_samples,
                (unsigned long long)st->samples);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: consumer FILE.h5 N_SAMPLES\n");
        return 2;
    }
    if (strcmp(h5pack_version_string(), H5PACK_VERSION_STRING) != 0) {
        fprintf(stderr, "header %s but library %s\n", H5PACK_VERSION_STRING, h5pack_version_string());
        return 1;
    }
    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
    cfg.batch_size = 4;
    cfg.epochs = 1;
    cfg.threads = 1;
    cfg.device = H5PACK_DEVICE_CPU;
    h5pack_reader *r = NULL;
    int rc = h5pack_open(argv[1], &cfg, &r);
    if (rc < 0) {
        fprintf(stderr, "open: %s\n", h5pack_last_error(r));
        h5pack_close(r);
        return 1;
    }
    h5pack_stats st = H5PACK_STATS_INIT;
    h5pack_batch b = H5PACK_BATCH_INIT;
    unsigned long long samples = 0;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        samples += b.count;
        h5pack_release(r, &b);
    }
    if (rc != H5PACK_END)
        fprintf(stderr, "next: %s\n", h5pack_last_error(r));
    int stats_rc = h5pack_stats_get(r, &st);
    h5pack_close(r);
    if (stats_rc != 0 || !same_as_simulation(argv[1], &cfg, &st))
        return 1;
    printf("h5pack %s: %llu samples read\n", h5pack_version_string(), samples);
    return rc == H5PACK_END && samples == strtoull(argv[2], NULL, 10) ? 0 : 1;
}
