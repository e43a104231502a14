/* order_arrange.h - the arrangement of one global batch (order.h): its real samples by window slot,
 * stable (so a rank's run of the arrangement comes from a band of slots: from chunks no other rank
 * reads, mostly), then the padding or wrapped entries in position order. */
#ifndef H5PACK_ORDER_ARRANGE_H
#define H5PACK_ORDER_ARRANGE_H

#include <stddef.h>
#include <stdint.h>

/* Scratch for batches of up to G entries (reused batch after batch: no allocation per batch). */
typedef struct arrange_scratch {
    uint32_t *idx, *tmp, *count;
    uint64_t *copy; /* a batch's samples, arranged in place from it (order_layout.c) */
} arrange_scratch;

/* 0 or H5PACK_ENOMEM; *A is freeable either way. */
int h5pack_arrange_init(arrange_scratch *a, uint64_t g);
void h5pack_arrange_free(arrange_scratch *a);

/* One global batch: the stream's entries at positions first .. first + size - 1. Positions within
 * 0 .. n-1 are real; the others (padding past the end, or before the start in batches a resumed layout
 * skips) take the sample at their position modulo n. */
typedef struct arrange_batch {
    const uint64_t *stream;
    const uint32_t *slots; /* each stream entry's window slot, or NULL: keep stream order */
    uint64_t n;            /* stream entries */
    int64_t first;
    uint64_t size;         /* <= the scratch's G */
    uint64_t n_slots;      /* slots are below it */
} arrange_batch;

/* Entries [FROM, FROM + COUNT) of AB's arrangement into OUT. */
void h5pack_arrange_take(const arrange_batch *ab, arrange_scratch *a, uint64_t from, uint64_t count,
                         uint64_t *out);

#endif
