/* ring_memory.h - the CPU backend's host memory: its buffers (aligned, on huge pages when large), the
 * large ones of closed readers kept for the next reader, and the per-slot buffers of a ring, one of which
 * h5pack_detach hands over to the caller (backend.h, `detach`).
 *
 * Kept buffers: the large host buffers of closed readers (rings of batches) are kept for the next reader
 * that asks for the same sizes, as PyTorch's caching allocators keep freed blocks. Why: fresh memory costs
 * the kernel a fault and a zeroing per page before the first byte is written, and on virtual machines that
 * hand freed memory back to their host, another fault there: a new reader's 200 MB ring of patches cost
 * 6-16% of a pass over a 20,000^2 image and made passes 2x apart in speed on the development VM
 * (docs/performance.md, "Patches"). A loop that opens a reader per file, per epoch or per validation run
 * reuses the same ring instead. Bounded by what readers used: a request that no kept buffer matches
 * exactly frees every kept buffer before the new one is allocated, so the process never holds a ring for
 * reuse beside a ring of other sizes. h5pack_trim() (public) frees them now; H5PACK_NO_KEEP=1 turns keeping
 * off. Thread-safe.
 *
 * Rings: the slots' buffers of one kind (the uint8 inputs, or the outputs) are parts of one block, a kept
 * buffer when one fits, given back to the kept ones at close. A detach hands the slot's part over as it is
 * (no copy) and gives the slot memory of its own; the block lives on, counted, until the reader and every
 * part it handed over have let go. So that the reader never holds more memory than its ring, the pages of
 * a part nobody uses any more (handed over and freed, or the reader's own at close while parts are out) go
 * back to the system, and a block that outlived its reader is freed rather than kept (memory the caller
 * owned never serves another reader). Threads: alloc, detach and free of a ring from one thread at a time
 * (the backend's owner: detach runs on the consumer while the slot is delivered, so no worker reads its
 * pointer); the memory handed over is freed from any thread. */
#ifndef H5PACK_RING_MEMORY_H
#define H5PACK_RING_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

/* ---- buffers, and the kept ones -------------------------------------------------------------------- */

/* Buffers below this are never kept (malloc serves them well). */
#define KEPT_MIN_BYTES ((size_t)8 << 20)

/* A kept buffer of exactly BYTES, removed from the kept ones; NULL when there is none (for BYTES of at
 * least KEPT_MIN_BYTES every kept buffer has then been freed). */
void *h5pack_kept_take(size_t bytes);

/* Keeps P (BYTES, from posix_memalign or malloc) for a later h5pack_kept_take, or frees it. NULL is a
 * no-op. */
void h5pack_kept_give(void *p, size_t bytes);

/* BYTES of new memory, 64-byte aligned, and huge-page aligned (with the hint) when large. */
void *h5pack_ring_alloc_aligned(size_t bytes);

/* A buffer of BYTES: a kept one of that size (its pages already there), else new. */
void *h5pack_ring_alloc(size_t bytes);

/* ---- a ring's per-slot buffers -------------------------------------------------------------------- */

typedef struct ring_block ring_block;

typedef struct ring_memory {
    ring_block *block; /* NULL: none of this kind */
    uint8_t **at;      /* per slot: its buffer */
    uint8_t *own;      /* per slot: 1 when at[slot] is its own allocation (after a detach), not the block's */
    int slots;
    size_t slot_bytes;
} ring_memory;

/* SLOTS buffers of SLOT_BYTES (a multiple of 64) in one block; 0, or -1 without memory (then
 * h5pack_ring_memory_free cleans up). */
int h5pack_ring_memory_alloc(ring_memory *m, int slots, size_t slot_bytes);

/* Gives the memory back: the block to the kept buffers when no part of it is out, else to its last part. */
void h5pack_ring_memory_free(ring_memory *m);

/* SLOT's buffer to *OUT (freed with out->free_fn(out), any thread, any time); the slot gets a new buffer,
 * holding a copy of the old one's values with KEEP_VALUES (the reader reads them again). 0, or -1 without
 * memory (nothing changed). */
int h5pack_ring_memory_detach(ring_memory *m, int slot, int keep_values, backend_detached *out);

#endif
