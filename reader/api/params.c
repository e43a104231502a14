/* params.c - every reader parameter (an h5pack_config field) described once: type, bounds, enum names
 * and a one-line doc (h5pack_param_table() in h5pack.h). From this table come the range checks at open
 * (h5pack_params_check), the names bindings and tools show, and the Python binding's copy of the
 * struct. Adding a field: the struct and H5PACK_CONFIG_DEFAULTS in h5pack.h, one X(...) line here, and
 * the code that uses it (docs/design.md, "Adding a reader parameter"). */
#include "params.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cpus.h"

#define U32_MAX_D 4294967295.0
#define SIZE_MAX_D 18446744073709551615.0 /* rounded up by the double: checks use <= on the value as double */
#define INT_MAX_D 2147483647.0

/* An ENUM row's bounds and names come from the enum's list in h5pack.h (H5PACK_<G>_MAP). */
#define LAST(g) (H5PACK_ENUM_COUNT(H5PACK_##g##_MAP) - 1)
#define NAMES(g) H5PACK_ENUM_NAMES(H5PACK_##g##_MAP)

/* X(name, type, min, max, enum names, doc), in struct order. */
#define H5PACK_PARAMS(X)                                                                                         \
    X(images_dataset, STRING, 0, 0, NULL, "path of the 4-D uint8 image dataset")                                 \
    X(labels_dataset, STRING, 0, 0, NULL, "path of the labels; NULL or \"\" = none")                            \
    X(input_layout, ENUM, 0, LAST(LAYOUT), NAMES(LAYOUT),                                                        \
      "layout of the stored images (auto: attribute or shape)")                                                  \
    X(batch_size, SIZE, 1, 2147483648.0, NULL, "images per batch")                                              \
    X(cache_bytes, SIZE, 1, SIZE_MAX_D, NULL, "bytes of decompressed chunks the cache holds")                   \
    X(order, ENUM, 0, LAST(ORDER), NAMES(ORDER), "the shuffle order")                                           \
    X(window, SIZE, 0, SIZE_MAX_D, NULL, "chunks in the chunk order's window (0 = derived from the cache)")      \
    X(seed, U64, 0, 18446744073709551615.0, NULL, "seed of every shuffle and augmentation draw")                 \
    X(rank, U32, 0, U32_MAX_D, NULL, "this process's rank (< world)")                                           \
    X(world, U32, 1, U32_MAX_D, NULL, "ranks sharing one global order")                                         \
    X(drop_last, INT, 0, 1, NULL, "1: drop the short last batch")                                               \
    X(echo, U32, 1, U32_MAX_D, NULL, "deliveries of each batch (batch echoing; 1 = off)")                       \
    X(epochs, U64, 1, 18446744073709551615.0, NULL, "epochs to run (18446744073709551615 = endless)")           \
    X(threads, INT, 0, H5PACK_MAX_THREADS, NULL, "worker threads (0 = the CPUs this process may use)")          \
    X(prefetch, INT, 1, 1024, NULL, "batch buffers in the ring")                                                \
    X(device, ENUM, 0, LAST(DEVICE), NAMES(DEVICE), "where batches are delivered")                              \
    X(gpu_id, INT, 0, INT_MAX_D, NULL, "CUDA device ordinal")                                                   \
    X(device_memory_limit, SIZE, 0, SIZE_MAX_D, NULL, "cap on the reader's device memory (0 = none)")           \
    X(dtype, ENUM, 0, LAST(DTYPE), NAMES(DTYPE), "element type of the delivered images")                        \
    X(output_layout, ENUM, 0, LAST(LAYOUT), NAMES(LAYOUT), "layout of the delivered images (auto: as stored)") \
    X(norm, ENUM, 0, LAST(NORM), NAMES(NORM), "normalisation")                                                  \
    X(mean, FLOATS, 0, 0, NULL, "per-channel mean in [0,1] units (norm custom)")                                \
    X(std, FLOATS, 0, 0, NULL, "per-channel std in [0,1] units (norm custom)")                                  \
    X(random_flip, INT, 0, 1, NULL, "1: flip each image horizontally with probability 1/2")                     \
    X(random_crop_padding, INT, 0, 65535, NULL, "pad by P and crop the stored size at random")                  \
    X(cuda_stream, POINTER, 0, 0, NULL, "cudaStream_t the batches are ordered on (NULL: the reader's)")         \
    X(crop, ENUM, 0, LAST(CROP), NAMES(CROP), "resizing crop")                                                  \
    X(output_height, U32, 0, 65536, NULL, "with a crop: height delivered (0 = stored)")                         \
    X(output_width, U32, 0, 65536, NULL, "with a crop: width delivered (0 = stored)")                           \
    X(max_output_height, U32, 0, 65536, NULL, "largest height h5pack_set_output_size may set")                  \
    X(max_output_width, U32, 0, 65536, NULL, "largest width h5pack_set_output_size may set")                    \
    X(scale_min, DOUBLE, 0, 1e9, NULL, "random resized crop: smallest area fraction")                           \
    X(scale_max, DOUBLE, 0, 1e9, NULL, "random resized crop: largest area fraction")                            \
    X(ratio_min, DOUBLE, 0, 1e9, NULL, "random resized crop: smallest aspect ratio (w/h)")                      \
    X(ratio_max, DOUBLE, 0, 1e9, NULL, "random resized crop: largest aspect ratio (w/h)")                       \
    X(center_ratio, DOUBLE, 0, 1, NULL, "centre crop: fraction of the shorter side")                            \
    X(echo_mode, ENUM, 0, LAST(ECHO_MODE), NAMES(ECHO_MODE), "what echo repeats")                               \
    X(start_epoch, U64, 0, 18446744073709551615.0, NULL, "resume: epoch of the first delivery")                 \
    X(start_batch, U64, 0, 18446744073709551615.0, NULL, "resume: batch of the first delivery")                 \
    X(start_echo, U32, 0, U32_MAX_D, NULL, "resume: echo of the first delivery")                                \
    X(timeline_path, STRING, 0, 0, NULL, "CSV timeline file (NULL: $H5PACK_TIMELINE; \"\": none)")              \
    X(timeline_interval_s, DOUBLE, 0, 86400, NULL, "seconds between timeline rows (0 = 1 s)")                   \
    X(timeline_append, INT, 0, 1, NULL, "1: continue an existing timeline file")                                \
    X(patch_size, U32, 0, 65535, NULL, "patches of S x S from a file of images in tiles (0 = whole images)")       \
    X(patch_overlap, U32, 0, 65534, NULL, "pixels neighbouring sliding windows share (< patch_size)")             \
    X(patch_mode, ENUM, 0, LAST(PATCH_MODE), NAMES(PATCH_MODE),                                                 \
      "patches: every window (inference) or random ones (training)")                                            \
    X(patches_per_epoch, U64, 0, 18446744073709551615.0, NULL, "random patches per epoch (0 = a grid's worth)") \
    X(start_sample, U64, 0, 18446744073709551615.0, NULL, "resume: position in the epoch's order, any world")  \
    X(masks_dataset, STRING, 0, 0, NULL, "path of the masks delivered with the images; NULL or \"\" = none")    \
    X(mask_dtype, ENUM, 0, LAST(MASK_DTYPE), NAMES(MASK_DTYPE), "element type of the delivered masks")

#define FIELD_SIZE(name) sizeof(((h5pack_config *)0)->name)
#define ROW(name, type, lo, hi, names, doc)                                                                     \
    {#name, H5PACK_PARAM_##type, offsetof(h5pack_config, name), FIELD_SIZE(name), (double)(lo), (double)(hi),    \
     names, doc},
static const h5pack_param params[] = {H5PACK_PARAMS(ROW)};
#undef ROW

/* The table's "value i is the i-th name" and the ABI hold when each list's values count 0, 1, 2, ... down
 * its rows: every row's value is checked against its position. */
#define POSITION_(group, name, ...) POSITION_##group##_##name,
#define AT_POSITION_(group, name, value, ...)                                                                   \
    _Static_assert((value) == POSITION_##group##_##name, "H5PACK_" #group "_" #name " is not row " #value);
#define COUNTS_DOWN_ITS_ROWS(map) enum { map(POSITION_) }; map(AT_POSITION_)
COUNTS_DOWN_ITS_ROWS(H5PACK_ORDER_MAP)
COUNTS_DOWN_ITS_ROWS(H5PACK_DEVICE_MAP)
COUNTS_DOWN_ITS_ROWS(H5PACK_DTYPE_MAP)
COUNTS_DOWN_ITS_ROWS(H5PACK_LAYOUT_MAP)
COUNTS_DOWN_ITS_ROWS(H5PACK_NORM_MAP)
COUNTS_DOWN_ITS_ROWS(H5PACK_CROP_MAP)
COUNTS_DOWN_ITS_ROWS(H5PACK_ECHO_MODE_MAP)
COUNTS_DOWN_ITS_ROWS(H5PACK_PATCH_MODE_MAP)
COUNTS_DOWN_ITS_ROWS(H5PACK_MASK_DTYPE_MAP)

H5PACK_API const h5pack_param *h5pack_param_table(size_t *count)
{
    if (count)
        *count = sizeof params / sizeof params[0];
    return params;
}

/* Numeric field P of CFG: its value as a double (exact for every value the bounds can reject) and, in
 * TEXT, exactly as stored (integers in full, doubles with %g). */
static double read_field(const h5pack_config *cfg, const h5pack_param *p, char *text, size_t len)
{
    const unsigned char *at = (const unsigned char *)cfg + p->offset;
    if (p->type == H5PACK_PARAM_DOUBLE) {
        double v;
        memcpy(&v, at, sizeof v);
        snprintf(text, len, "%g", v);
        return v;
    }
    if (p->type == H5PACK_PARAM_INT || p->type == H5PACK_PARAM_ENUM) {
        int v;
        memcpy(&v, at, sizeof v);
        snprintf(text, len, "%d", v);
        return (double)v;
    }
    uint64_t v = 0; /* SIZE, U32, U64: the low bytes on a little-endian machine */
    memcpy(&v, at, p->size);
    snprintf(text, len, "%llu", (unsigned long long)v);
    return (double)v;
}

static int numeric(h5pack_param_type t)
{
    return t <= H5PACK_PARAM_DOUBLE;
}

/* "must be one of sequential/random/chunk (0 .. 2)" or "must be 1 .. 1024" for field P. */
static void range_text(const h5pack_param *p, char *buf, size_t len)
{
    if (p->type == H5PACK_PARAM_ENUM) {
        char names[160];
        snprintf(names, sizeof names, "%s", p->enum_names);
        for (char *c = names; *c; c++)
            if (*c == ',')
                *c = '/';
        snprintf(buf, len, "must be one of %s (0 .. %.0f)", names, p->max);
    } else if (p->type == H5PACK_PARAM_DOUBLE) {
        snprintf(buf, len, "must be in [%g, %g]", p->min, p->max);
    } else if (p->max >= 18446744073709551615.0) { /* UINT64_MAX as a double is 2^64: say it exactly */
        snprintf(buf, len, "must be %.0f .. %llu", p->min, (unsigned long long)UINT64_MAX);
    } else {
        snprintf(buf, len, "must be %.0f .. %.0f", p->min, p->max);
    }
}

int h5pack_params_check(const h5pack_config *cfg, char *err, size_t err_len)
{
    size_t n;
    const h5pack_param *t = h5pack_param_table(&n);
    for (size_t i = 0; i < n; i++) {
        if (!numeric(t[i].type))
            continue;
        char range[200], got[32];
        double v = read_field(cfg, &t[i], got, sizeof got);
        if (v >= t[i].min && v <= t[i].max) /* NaN fails both */
            continue;
        range_text(&t[i], range, sizeof range);
        snprintf(err, err_len, "invalid configuration: %s %s (got %s): %s", t[i].name, range, got, t[i].doc);
        return H5PACK_EINVAL;
    }
    return H5PACK_OK;
}
