/* token.h - h5pack_batch.token, as both pipelines (images: pipeline.c; patches: reader/patch/patch_pipe.c)
 * make and check it: reader tag (16 bits, never 0) | delivery number (38) | ring slot (10). The slot makes
 * release O(1); the delivery number makes a stale copy of an earlier batch in the same slot fail to match;
 * the tag, drawn per pipeline, makes another reader's batch recognisable. */
#ifndef H5PACK_TOKEN_H
#define H5PACK_TOKEN_H

#include <stdint.h>

#define H5PACK_TOKEN_SLOT_BITS 10
#define H5PACK_TOKEN_TAG_SHIFT 48
#define H5PACK_TOKEN_MAX_SLOTS (1 << H5PACK_TOKEN_SLOT_BITS)

/* A new pipeline's tag, already shifted into place: a different one for each pipeline opened in the
 * process (until 65535 have been). */
uint64_t h5pack_token_new_tag(void);

/* The token of delivery number SERIAL (only its low 38 bits count) in ring SLOT under TAG. */
static inline uint64_t h5pack_token_make(uint64_t tag, uint64_t serial, int slot)
{
    const uint64_t serial_mask = ((uint64_t)1 << (H5PACK_TOKEN_TAG_SHIFT - H5PACK_TOKEN_SLOT_BITS)) - 1;
    return tag | (serial & serial_mask) << H5PACK_TOKEN_SLOT_BITS | (uint64_t)slot;
}

static inline uint64_t h5pack_token_slot(uint64_t token)
{
    return token & (H5PACK_TOKEN_MAX_SLOTS - 1);
}

static inline int h5pack_token_has_tag(uint64_t token, uint64_t tag)
{
    return token >> H5PACK_TOKEN_TAG_SHIFT << H5PACK_TOKEN_TAG_SHIFT == tag;
}

#endif
