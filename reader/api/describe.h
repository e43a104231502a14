/* describe.h - h5pack_describe() from an open chunk source, shared with the simulator's handle (which
 * opens the file once and keeps what the description and the replays need). */
#ifndef H5PACK_DESCRIBE_H
#define H5PACK_DESCRIBE_H

#include <stddef.h>
#include <stdint.h>

#include "chunksrc.h"
#include "h5pack.h"

/* Fills *OUT (the library's own struct: struct_size is set) from SRC and CFG (already checked). When
 * STORED is not NULL it receives every chunk's stored size (geometry n_chunks entries). Returns 0, or
 * EINVAL (CFG leaves no batch) with the reason in ERR. */
int h5pack_describe_source(const chunk_source *src, const h5pack_config *cfg, h5pack_file_desc *out, uint64_t *stored,
                           char *err, size_t err_len);

#endif
