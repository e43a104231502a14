/* resume.h - what identifies a run's stream (the order fingerprint) and where a resumed run starts
 * (docs/reader.md, "Exact resume" and "Distributed training"). */
#ifndef H5PACK_READER_RESUME_H
#define H5PACK_READER_RESUME_H

#include <stddef.h>
#include <stdint.h>

#include "chunksrc.h"
#include "h5pack.h"
#include "resolve.h"

/* Bumped whenever the order, the echo schedule or the augmentation draws change for the same settings:
 * a checkpoint taken with another algorithm then fails the fingerprint check instead of resuming wrong. */
#define H5PACK_ORDER_ALGORITHM 1

/* 64-bit hash of everything a rank's order and draws depend on: the algorithm, the file's geometry
 * (N, samples per chunk, C, H, W), seed, order, window (CHUNK only), world, batch size, drop_last, echo,
 * echo mode (echo > 1 only), crop kind, scale and ratio ranges (random resized crop only), flip and
 * padding. Not rank, threads, cache, prefetch, device, dtype, normalisation or output size: ranks with
 * different machines agree, and a changed setting of that kind resumes fine. */
uint64_t h5pack_order_fingerprint(const h5pack_config *cfg, const reader_setup *s, const source_geometry *g);

/* EINVAL with the reason in ERR for a start position outside the run: start_batch >= batches per
 * epoch, start_echo >= echo. A start_epoch at or past `epochs` is valid (nothing is left: H5PACK_END). */
int h5pack_reader_check_start(const h5pack_config *cfg, const reader_setup *s, char *err, size_t err_len);

#endif
