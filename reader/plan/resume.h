/* resume.h - where a resumed run starts (docs/reader.md, "Exact resume"); what identifies its stream is
 * fingerprint.h's. */
#ifndef H5PACK_READER_RESUME_H
#define H5PACK_READER_RESUME_H

#include <stddef.h>
#include <stdint.h>

#include "chunksrc.h"
#include "h5pack.h"
#include "resolve.h"

/* Checks the start position of CFG and writes it, resolved, into S (start_epoch, start_batch, start_echo,
 * start_origin): start_sample becomes the batch and layout h5pack_order_start gives (the next epoch's
 * start when nothing of its epoch is left). EINVAL with the reason in ERR for a start outside the run:
 * start_batch >= batches per epoch, start_sample > samples in the file, start_echo >= echo. A start_epoch
 * at or past `epochs` is valid (nothing is left: H5PACK_END). */
int h5pack_reader_check_start(const h5pack_config *cfg, reader_setup *s, char *err, size_t err_len);

#endif
