/* api_structs.c - see api_structs.h; also h5pack_config_init() and h5pack_struct_fields(), the public
 * structs' field tables. */
#include "api_structs.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "resolve.h"

static _Thread_local char thread_error[512];

void h5pack_reader_set_thread_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(thread_error, sizeof thread_error, fmt, ap);
    va_end(ap);
}

const char *h5pack_reader_thread_error(void)
{
    return thread_error;
}

/* Static, so its padding is zero too: h5pack_config_init writes the same bytes on every call. */
static const h5pack_config config_defaults = H5PACK_CONFIG_DEFAULTS;

int h5pack_reader_config_in(const h5pack_config *cfg, h5pack_config *own, char *err, size_t err_len)
{
    memcpy(own, &config_defaults, sizeof *own);
    if (cfg && h5pack_abi_copy_in(own, cfg, &h5pack_abi_config, err, err_len))
        return H5PACK_EINVAL;
    return h5pack_reader_check_config(own, err, err_len);
}

H5PACK_API int h5pack_config_init(h5pack_config *cfg)
{
    if (!cfg) {
        h5pack_reader_set_thread_error("h5pack_config_init: cfg must not be NULL");
        return H5PACK_EINVAL;
    }
    char err[384];
    if (h5pack_abi_copy_out(cfg, &config_defaults, &h5pack_abi_config, err, sizeof err)) {
        /* struct_size is the one field the caller sets here: say so rather than "start from the macro". */
        h5pack_reader_set_thread_error("h5pack_config_init: cfg->struct_size is %zu: set it to sizeof(h5pack_config) "
                                       "(as the program was compiled) before the call",
                                       h5pack_abi_size(cfg));
        return H5PACK_EINVAL;
    }
    return H5PACK_OK;
}

/* ---- the public structs' fields (h5pack_struct_fields) --------------------------------------------- */

/* X(field, type, array suffix), in struct order, one list per public struct; TYPE is the field's C type
 * (checked below) and, with the suffix, the type text bindings read. Appending a field to a struct is one
 * line here: a field left out, in the wrong place or of another type does not compile, except one appended
 * into the struct's tail padding, which no compiler check can see (tests/python/abi_dump.c lists every
 * field apart, and test_abi.py compares the two). */
#define INFO_FIELDS(X)                                                                                         \
    X(struct_size, size_t, ) X(n_samples, uint64_t, ) X(channels, uint32_t, ) X(height, uint32_t, )             \
    X(width, uint32_t, ) X(input_layout, h5pack_layout, ) X(output_layout, h5pack_layout, )                     \
    X(dtype, h5pack_dtype, ) X(has_labels, int, ) X(n_classes, uint32_t, ) X(samples_per_chunk, uint64_t, )     \
    X(n_chunks, uint64_t, ) X(chunk_bytes, uint64_t, ) X(compressed, int, ) X(fast_path, int, )                 \
    X(cache_chunks, size_t, ) X(window, size_t, ) X(threads, int, ) X(samples_per_epoch, uint64_t, )            \
    X(batches_per_epoch, uint64_t, ) X(device, h5pack_device, ) X(device_name, char, [64])                      \
    X(device_bytes, uint64_t, ) X(pinned_bytes, uint64_t, ) X(mean, float, [H5PACK_MAX_CHANNELS])               \
    X(std, float, [H5PACK_MAX_CHANNELS]) X(crop, h5pack_crop, ) X(output_height, uint32_t, )                    \
    X(output_width, uint32_t, ) X(max_output_height, uint32_t, ) X(max_output_width, uint32_t, )                \
    X(echo_mode, h5pack_echo_mode, ) X(ring_slots, int, ) X(echo_pool_bytes, uint64_t, )                        \
    X(order_fingerprint, uint64_t, ) X(label_columns, uint32_t, ) X(label_rank, int, )                          \
    X(labels_are_float, int, ) X(several_sizes, int, ) X(patch_size, uint32_t, ) X(tile, uint32_t, )

#define CROP_BOX_FIELDS(X)                                                                                     \
    X(y, int32_t, ) X(x, int32_t, ) X(height, int32_t, ) X(width, int32_t, ) X(flip, int32_t, )

#define BATCH_FIELDS(X)                                                                                        \
    X(struct_size, size_t, ) X(data, const void *, ) X(labels, const int64_t *, )                               \
    X(labels_device, const int64_t *, ) X(indices, const uint64_t *, ) X(count, size_t, ) X(bytes, size_t, )    \
    X(epoch, uint64_t, ) X(index, uint64_t, ) X(echo, uint32_t, ) X(on_device, int, ) X(cuda_event, void *, )   \
    X(token, uint64_t, ) X(boxes, const h5pack_crop_box *, ) X(height, uint32_t, ) X(width, uint32_t, )         \
    X(label_columns, uint32_t, ) X(labels_float, const float *, ) X(labels_float_device, const float *, )       \
    X(where, const int64_t *, ) X(masks, const void *, ) X(masks_device, const void *, )                          \
    X(mask_dtype, h5pack_mask_dtype, ) X(mask_bytes, size_t, )

#define STATS_FIELDS(X)                                                                                        \
    X(struct_size, size_t, ) X(samples, uint64_t, ) X(batches, uint64_t, ) X(batches_fresh, uint64_t, )         \
    X(batches_echoed, uint64_t, ) X(epochs_completed, uint64_t, ) X(chunk_hits, uint64_t, )                     \
    X(chunk_misses, uint64_t, ) X(bytes_read, uint64_t, ) X(bytes_inflated, uint64_t, )                         \
    X(bytes_needed, uint64_t, ) X(read_amplification, double, ) X(hit_rate, double, ) X(elapsed_s, double, )    \
    X(stall_s, double, ) X(busy_read_s, double, ) X(busy_inflate_s, double, ) X(busy_assemble_s, double, )      \
    X(busy_convert_s, double, ) X(busy_copy_s, double, ) X(device_bytes, uint64_t, )                            \
    X(cache_bytes_used, uint64_t, )

#define FILE_DESC_FIELDS(X)                                                                                    \
    X(struct_size, size_t, ) X(format_version, int, ) X(file_bytes, uint64_t, ) X(n_samples, uint64_t, )        \
    X(channels, uint32_t, ) X(height, uint32_t, ) X(width, uint32_t, ) X(layout, h5pack_layout, )               \
    X(image_bytes, uint64_t, ) X(chunked, int, ) X(samples_per_chunk, uint64_t, ) X(n_chunks, uint64_t, )       \
    X(chunk_bytes, uint64_t, ) X(stored_bytes, uint64_t, ) X(compressed, int, ) X(n_filters, int, )             \
    X(filters, char, [128]) X(read_path, h5pack_read_path, ) X(fast_path, int, ) X(mapped, int, )               \
    X(has_labels, int, ) X(n_classes, uint32_t, ) X(has_pixel_stats, int, )                                     \
    X(mean, double, [H5PACK_MAX_CHANNELS]) X(std, double, [H5PACK_MAX_CHANNELS])                                \
    X(output_layout, h5pack_layout, ) X(dtype, h5pack_dtype, ) X(cache_chunks, size_t, ) X(window, size_t, )    \
    X(threads, int, ) X(samples_per_epoch, uint64_t, ) X(batches_per_epoch, uint64_t, )                         \
    X(chunks_per_slab, uint64_t, ) X(order_fingerprint, uint64_t, ) X(label_columns, uint32_t, )                \
    X(label_rank, int, ) X(labels_are_float, int, ) X(chunk_order_cache_min, uint64_t, )                        \
    X(several_sizes, int, ) X(tile, uint32_t, )

#define SIM_PARAMS_FIELDS(X)                                                                                   \
    X(struct_size, size_t, ) X(policy, h5pack_policy, ) X(cache_bytes, size_t, ) X(hdf5_nslots, size_t, )      \
    X(hdf5_w0, double, ) X(order, int, ) X(chunk_samples, uint64_t, )

#define SIM_RESULT_FIELDS(X)                                                                                   \
    X(struct_size, size_t, ) X(accesses, uint64_t, ) X(hits, uint64_t, ) X(misses, uint64_t, )                  \
    X(hit_rate, double, ) X(bytes_read, uint64_t, ) X(read_amplification, double, ) X(bytes_needed, uint64_t, ) \
    X(order, h5pack_order, ) X(chunk_samples, uint64_t, ) X(chunk_bytes, uint64_t, ) X(n_chunks, uint64_t, )    \
    X(cache_chunks, size_t, ) X(window, size_t, ) X(hypothetical, int, ) X(stored_estimated, int, )

#define QUOTE_(x) #x
#define EXPAND_AND_QUOTE_(x) QUOTE_(x)

/* For the struct S_ (defined around each use): its rows, and the checks that keep its list true. A copy
 * of the struct made from the list must have its size and every offset (no field missing, added or out
 * of order), and each field the list's type (a pointer to it is a pointer to TYPE SUFFIX). */
#define ROW(name, type, suffix)                                                                                \
    {#name, #type EXPAND_AND_QUOTE_(suffix), offsetof(S_, name), sizeof(((S_ *)0)->name)},
#define MIRROR_MEMBER(name, type, suffix) type(name) suffix;
#define CHECK_FIELD(name, type, suffix)                                                                        \
    _Static_assert(_Generic(&((S_ *)0)->name, type(*) suffix: 1, default: 0), #name ": not " #type #suffix);     \
    _Static_assert(offsetof(mirror_t, name) == offsetof(S_, name), #name ": not where its list puts it");
#define FIELD_TABLE(tag, list)                                                                                 \
    static const h5pack_struct_field tag##_fields[] = {list(ROW)};                                             \
    __attribute__((unused)) static void tag##_list_is_true(void)                                               \
    {                                                                                                          \
        typedef struct { list(MIRROR_MEMBER) } mirror_t;                                                       \
        _Static_assert(sizeof(mirror_t) == sizeof(S_), EXPAND_AND_QUOTE_(S_) ": a field is not in its list");  \
        list(CHECK_FIELD)                                                                                      \
    }

#define S_ h5pack_info
FIELD_TABLE(info, INFO_FIELDS)
#undef S_
#define S_ h5pack_crop_box
FIELD_TABLE(crop_box, CROP_BOX_FIELDS)
#undef S_
#define S_ h5pack_batch
FIELD_TABLE(batch, BATCH_FIELDS)
#undef S_
#define S_ h5pack_stats
FIELD_TABLE(stats, STATS_FIELDS)
#undef S_
#define S_ h5pack_file_desc
FIELD_TABLE(file_desc, FILE_DESC_FIELDS)
#undef S_
#define S_ h5pack_sim_params
FIELD_TABLE(sim_params, SIM_PARAMS_FIELDS)
#undef S_
#define S_ h5pack_sim_result
FIELD_TABLE(sim_result, SIM_RESULT_FIELDS)
#undef S_

#define STRUCT_ENTRY(tag) {"h5pack_" #tag, tag##_fields, sizeof tag##_fields / sizeof tag##_fields[0]},
static const struct {
    const char *name;
    const h5pack_struct_field *fields;
    size_t count;
} public_structs[] = {STRUCT_ENTRY(info) STRUCT_ENTRY(crop_box) STRUCT_ENTRY(batch) STRUCT_ENTRY(stats)
                          STRUCT_ENTRY(file_desc) STRUCT_ENTRY(sim_params) STRUCT_ENTRY(sim_result)};

H5PACK_API const h5pack_struct_field *h5pack_struct_fields(const char *struct_name, size_t *count)
{
    for (size_t i = 0; struct_name && i < sizeof public_structs / sizeof public_structs[0]; i++) {
        if (strcmp(public_structs[i].name, struct_name) == 0) {
            if (count)
                *count = public_structs[i].count;
            return public_structs[i].fields;
        }
    }
    if (count)
        *count = 0;
    return NULL;
}
