/*
 * An external program built against an installed h5pack (tests/package): checks that the header and the
 * library agree on the version, and reads every sample of FILE once through the public API.
 * Usage: consumer FILE.h5 N_SAMPLES
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <h5pack.h>

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
    h5pack_batch b = H5PACK_BATCH_INIT;
    unsigned long long samples = 0;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        samples += b.count;
        h5pack_release(r, &b);
    }
    if (rc != H5PACK_END)
        fprintf(stderr, "next: %s\n", h5pack_last_error(r));
    h5pack_close(r);
    printf("h5pack %s: %llu samples read\n", h5pack_version_string(), samples);
    return rc == H5PACK_END && samples == strtoull(argv[2], NULL, 10) ? 0 : 1;
}
