/* resume.h - where a resumed run starts (docs/reader.md, "Exact resume"); what identifies its stream is
 * fingerprint.h's. */
#ifndef H5PACK_READER_RESUME_H
#define H5PACK_READER_RESUME_H

#include <stddef.h>
#include <stdint.h>

#include "chunksrc.h"
#include "h5pack.h"
#include "resolve.h"

/* EINVAL with the reason in ERR for a start position outside the run: start_batch >= batches per
 * epoch, start_echo >= echo. A start_epoch at or past `epochs` is valid (nothing is left: H5PACK_END). */
int h5pack_reader_check_start(const h5pack_config *cfg, const reader_setup *s, char *err, size_t err_len);

#endif
