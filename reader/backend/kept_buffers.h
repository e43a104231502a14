/* kept_buffers.h - the large host buffers of closed readers (rings of batches), kept for the next reader
 * that asks for the same sizes, as PyTorch's caching allocators keep freed blocks.
 *
 * Why: fresh memory costs the kernel a fault and a zeroing per page before the first byte is written, and
 * on virtual machines that hand freed memory back to their host, another fault there: a new reader's
 * 200 MB ring of patches cost 6-16% of a pass over a 20,000^2 image and made passes 2x apart in speed on
 * the development VM (docs/performance.md, "Patches"). A loop that opens a reader per file, per epoch or
 * per validation run reuses the same ring instead.
 *
 * Bounded by what readers used: a request that no kept buffer matches exactly frees every kept buffer
 * before the new one is allocated, so the process never holds a ring for reuse beside a ring of other
 * sizes. h5pack_trim() (public) frees them now; H5PACK_NO_KEEP=1 turns keeping off. Thread-safe. */
#ifndef H5PACK_KEPT_BUFFERS_H
#define H5PACK_KEPT_BUFFERS_H

#include <stddef.h>

/* Buffers below this are never kept (malloc serves them well). */
#define KEPT_MIN_BYTES ((size_t)8 << 20)

/* A kept buffer of exactly BYTES, removed from the kept ones; NULL when there is none (for BYTES of at
 * least KEPT_MIN_BYTES every kept buffer has then been freed). */
void *h5pack_kept_take(size_t bytes);

/* Keeps P (BYTES, from posix_memalign or malloc) for a later h5pack_kept_take, or frees it. NULL is a
 * no-op. */
void h5pack_kept_give(void *p, size_t bytes);

#endif
