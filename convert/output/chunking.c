/* chunking.c - the chunk shape rule: whole images, about CHUNK_TARGET_BYTES, aligned with the batch. */
#include "chunking.h"

#include <inttypes.h>
#include <stdio.h>

#include "sizes.h"

/* Largest divisor of BATCH that is <= LIMIT (>= 1). */
static uint64_t largest_divisor_at_most(uint64_t batch, uint64_t limit)
{
    for (uint64_t d = limit; d > 1; d--)
        if (batch % d == 0)
            return d;
    return 1;
}

static int choose_requested(uint64_t image_bytes, uint64_t n_images, uint64_t requested, uint64_t max_k,
                            chunk_choice *out, char *err, size_t err_len)
{
    /* The limit applies to the chunk actually made: K reduced to N can still be over it. */
    uint64_t k = requested < n_images ? requested : n_images;
    if (k > max_k) {
        snprintf(err, err_len,
                 "--chunk %" PRIu64 ": a chunk would hold %" PRIu64 " bytes; HDF5 allows at most %" PRIu64
                 " (use --chunk %" PRIu64 " or less)",
                 requested, k * image_bytes, (uint64_t)CHUNK_MAX_BYTES, max_k);
        return -1;
    }
    out->images = requested;
    snprintf(out->reason, sizeof out->reason, "set by --chunk %" PRIu64, requested);
    if (requested > n_images) {
        out->images = n_images;
        snprintf(out->reason, sizeof out->reason,
                 "set by --chunk %" PRIu64 ", reduced to the %" PRIu64 " images of the file", requested,
                 n_images);
    }
    return 0;
}

static void choose_auto(uint64_t image_bytes, uint64_t n_images, uint64_t batch, uint64_t max_k,
                        chunk_choice *out)
{
    char target[32], per_image[32];
    h5pack_format_bytes(CHUNK_TARGET_BYTES, target, sizeof target);
    h5pack_format_bytes(image_bytes, per_image, sizeof per_image);
    uint64_t fit = CHUNK_TARGET_BYTES / image_bytes;
    uint64_t k0 = fit < 1 ? 1 : fit > batch ? batch : fit;
    uint64_t d = largest_divisor_at_most(batch, k0);
    uint64_t k = (2 * d >= k0) ? d : k0;
    int n = snprintf(out->reason, sizeof out->reason, "auto: %s target / %s per image = %" PRIu64 " image%s",
                     target, per_image, fit, fit == 1 ? "" : "s");
    if (fit < 1)
        n += snprintf(out->reason + n, sizeof out->reason - n, " (an image is above the target: 1 per chunk)");
    else if (fit > batch)
        n += snprintf(out->reason + n, sizeof out->reason - n, ", capped at --batch %" PRIu64, batch);
    if (k == d && d != k0)
        n += snprintf(out->reason + n, sizeof out->reason - n,
                      "; %" PRIu64 " = largest divisor of --batch %" PRIu64 " not above it, so batches start "
                      "on chunk boundaries", d, batch);
    if (k > max_k) {
        k = max_k;
        n += snprintf(out->reason + n, sizeof out->reason - n, "; reduced to %" PRIu64 " by HDF5's chunk limit", k);
    }
    if (k > n_images) {
        k = n_images;
        snprintf(out->reason + n, sizeof out->reason - n, "; reduced to the %" PRIu64 " images of the file", k);
    }
    out->images = k;
}

int choose_chunk(uint64_t image_bytes, uint64_t n_images, uint64_t batch, uint64_t requested,
                 chunk_choice *out, char *err, size_t err_len)
{
    out->target_bytes = CHUNK_TARGET_BYTES;
    if (image_bytes == 0 || n_images == 0 || batch == 0) {
        snprintf(err, err_len, "nothing to chunk (image bytes %" PRIu64 ", images %" PRIu64 ")", image_bytes,
                 n_images);
        return -1;
    }
    if (image_bytes > CHUNK_MAX_BYTES) {
        snprintf(err, err_len, "one image is %" PRIu64 " bytes: above HDF5's chunk limit of %" PRIu64
                 " bytes (use a smaller --size)", image_bytes, (uint64_t)CHUNK_MAX_BYTES);
        return -1;
    }
    uint64_t max_k = CHUNK_MAX_BYTES / image_bytes;
    if (requested)
        return choose_requested(image_bytes, n_images, requested, max_k, out, err, err_len);
    choose_auto(image_bytes, n_images, batch, max_k, out);
    return 0;
}

int choose_chunk_bytes(uint64_t total_bytes, uint64_t n_images, uint64_t requested, chunk_choice *out, char *err,
                       size_t err_len)
{
    char target[32], mean[32], chunk[32];
    out->target_bytes = CHUNK_TARGET_BYTES;
    if (total_bytes == 0 || n_images == 0) {
        snprintf(err, err_len, "nothing to chunk (%" PRIu64 " bytes in %" PRIu64 " images)", total_bytes, n_images);
        return -1;
    }
    uint64_t mean_bytes = (total_bytes + n_images - 1) / n_images;
    uint64_t bytes = requested ? requested * mean_bytes : CHUNK_TARGET_BYTES;
    if (requested && bytes / requested != mean_bytes) /* overflow */
        bytes = UINT64_MAX;
    h5pack_format_bytes(CHUNK_TARGET_BYTES, target, sizeof target);
    h5pack_format_bytes(mean_bytes, mean, sizeof mean);
    int n = requested ? snprintf(out->reason, sizeof out->reason, "set by --chunk %" PRIu64 ": %" PRIu64
                                 " x %s (the mean image)", requested, requested, mean)
                      : snprintf(out->reason, sizeof out->reason, "auto: %s of the byte store per chunk (images of "
                                 "several sizes, %s on average); the reader reads runs of whole images of about "
                                 "this size", target, mean);
    if (bytes > CHUNK_MAX_BYTES) {
        bytes = CHUNK_MAX_BYTES;
        n += snprintf(out->reason + n, sizeof out->reason - n, "; reduced by HDF5's chunk limit");
    }
    if (bytes > total_bytes) {
        bytes = total_bytes;
        h5pack_format_bytes(bytes, chunk, sizeof chunk);
        n += snprintf(out->reason + n, sizeof out->reason - n, "; reduced to the file's %s", chunk);
    }
    /* Spread over as many chunks, evenly: the last chunk, allocated whole, then wastes < 1 byte per chunk. */
    uint64_t chunks = (total_bytes + bytes - 1) / bytes, even = (total_bytes + chunks - 1) / chunks;
    if (even != bytes) {
        h5pack_format_bytes(even, chunk, sizeof chunk);
        snprintf(out->reason + n, sizeof out->reason - n, "; evened out to %s so that %" PRIu64 " chunk%s hold the "
                 "file's bytes exactly", chunk, chunks, chunks == 1 ? "" : "s");
        bytes = even;
    }
    out->images = 0;
    out->bytes = bytes;
    return 0;
}
