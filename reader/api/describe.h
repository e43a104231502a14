/* describe.h - h5pack_describe() from an open chunk source, shared with the simulator's handle (which
 * opens the file once and keeps what the description and the replays need). */
#ifndef H5PACK_DESCRIBE_H
#define H5PACK_DESCRIBE_H

#include <stddef.h>
#include <stdint.h>

#include "chunksrc.h"
#include "h5pack.h"
#include "resolve.h"

/* The fields h5pack_info and h5pack_file_desc share, with one meaning: h5pack_open fills them from the
 * description of its own source (reader.c), so the two can never give different answers. */
#define H5PACK_SHARED_FILE_FIELDS(X)                                                                   \
    X(n_samples) X(channels) X(height) X(width) X(output_layout) X(dtype) X(has_labels) X(n_classes)    \
    X(label_columns) X(label_rank) X(labels_are_float) X(samples_per_chunk) X(n_chunks) X(chunk_bytes) \
    X(compressed) X(fast_path) X(cache_chunks) X(window) X(threads) X(samples_per_epoch)               \
    X(batches_per_epoch) X(order_fingerprint) X(several_sizes)

/* Fills *OUT from SRC opened with CFG and its resolved setup RS, all but stored_bytes (which costs a
 * look at every chunk). */
void h5pack_describe_opened(const chunk_source *src, const h5pack_config *cfg, const reader_setup *rs,
                            h5pack_file_desc *out);

/* Fills *OUT (the library's own struct: struct_size is set) from SRC and CFG (already checked). When
 * STORED is not NULL it receives every chunk's stored size (geometry n_chunks entries). Returns 0, or
 * EINVAL (CFG leaves no batch) with the reason in ERR. */
int h5pack_describe_source(const chunk_source *src, const h5pack_config *cfg, h5pack_file_desc *out, uint64_t *stored,
                           char *err, size_t err_len);

#endif
