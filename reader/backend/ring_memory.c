/* ring_memory.c - see ring_memory.h. */
#include "ring_memory.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "env.h"
#include "h5pack.h"

/* ---- the kept buffers ---------------------------------------------------------------------------- */

#define KEPT_MAX 16 /* buffers: a reader has at most three large ones (inputs, outputs, pool) */

typedef struct kept {
    void *p;
    size_t bytes;
} kept;

static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static kept kept_list[KEPT_MAX];
static int kept_n;

/* Frees every kept buffer; the caller holds kept_mu. */
static void free_all_locked(void)
{
    for (int i = 0; i < kept_n; i++)
        free(kept_list[i].p);
    kept_n = 0;
}

void *h5pack_kept_take(size_t bytes)
{
    void *p = NULL;
    if (bytes < KEPT_MIN_BYTES)
        return NULL;
    pthread_mutex_lock(&kept_mu);
    for (int i = 0; i < kept_n && !p; i++)
        if (kept_list[i].bytes == bytes) {
            p = kept_list[i].p;
            kept_list[i] = kept_list[--kept_n];
        }
    if (!p)
        free_all_locked();
    pthread_mutex_unlock(&kept_mu);
    return p;
}

void h5pack_kept_give(void *p, size_t bytes)
{
    if (!p)
        return;
    int keep = bytes >= KEPT_MIN_BYTES && !h5pack_env_flag("H5PACK_NO_KEEP");
    pthread_mutex_lock(&kept_mu);
    if (keep && kept_n < KEPT_MAX) {
        kept_list[kept_n++] = (kept){p, bytes};
        p = NULL;
    }
    pthread_mutex_unlock(&kept_mu);
    free(p);
}

void h5pack_trim(void)
{
    pthread_mutex_lock(&kept_mu);
    free_all_locked();
    pthread_mutex_unlock(&kept_mu);
}

/* fork() while another thread holds the lock would leave it locked in the child for good */
static void lock_for_fork(void)
{
    pthread_mutex_lock(&kept_mu);
}

static void unlock_after_fork(void)
{
    pthread_mutex_unlock(&kept_mu);
}

__attribute__((constructor)) static void guard_fork(void)
{
    pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork);
}

/* At exit or unload: nothing kept is left behind for leak checkers to report. */
__attribute__((destructor)) static void free_kept_at_unload(void)
{
    h5pack_trim();
}

/* ---- buffers and rings --------------------------------------------------------------------------- */

#define RING_ALIGN 64

/* One allocation for every slot's buffer of a kind. REFS counts its holders: the reader until its close,
 * and each part handed over until it is freed. */
struct ring_block {
    uint8_t *mem;
    size_t bytes;
    _Atomic int refs;
};

/* Buffers of at least HUGE_MIN bytes are aligned to huge pages and asked for them (Linux THP in
 * "madvise" mode, the common default): a float32 batch of 256 CelebA images is 119 MB, 29,000 small
 * pages whose first-touch faults and TLB misses otherwise cost the first epoch about a third more. */
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_MIN KEPT_MIN_BYTES /* so a kept buffer is always huge-page aligned */

void *h5pack_ring_alloc_aligned(size_t bytes)
{
    void *ptr = NULL;
    size_t align = bytes >= HUGE_MIN ? HUGE_PAGE : RING_ALIGN;
    if (posix_memalign(&ptr, align, bytes ? bytes : RING_ALIGN) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (bytes >= HUGE_MIN) /* a hint: without THP the buffer simply keeps small pages */
        (void)madvise(ptr, bytes, MADV_HUGEPAGE);
#endif
    return ptr;
}

void *h5pack_ring_alloc(size_t bytes)
{
    void *ptr = h5pack_kept_take(bytes);
    return ptr ? ptr : h5pack_ring_alloc_aligned(bytes);
}

/* The pages wholly inside [P, P + BYTES) go back to the system (read as zeros if touched again): a part of
 * a block that lives on, used by nobody. Memory stays allocated; only its pages are returned. */
static void release_pages(uint8_t *p, size_t bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        return;
    uintptr_t mask = (uintptr_t)page - 1;
    uintptr_t start = ((uintptr_t)p + mask) & ~mask, end = ((uintptr_t)p + bytes) & ~mask;
    if (end > start)
        (void)madvise((void *)start, end - start, MADV_DONTNEED);
}

/* One holder lets go; the last one frees the block: kept for the next reader when that is the reader
 * itself (BY_READER; the ring as any reader leaves it), freed when a part handed over outlived the reader
 * (memory the caller owned is never kept for another reader). */
static void block_drop(ring_block *b, int by_reader)
{
    if (atomic_fetch_sub(&b->refs, 1) != 1)
        return;
    if (by_reader)
        h5pack_kept_give(b->mem, b->bytes);
    else
        free(b->mem);
    free(b);
}

/* free_fn of a part of a block. */
static void part_free(const backend_detached *d)
{
    ring_block *b = d->owner;
    if (atomic_load(&b->refs) > 1) /* others keep the block: this part's pages are nobody's now */
        release_pages(d->mem, d->bytes);
    block_drop(b, 0);
}

/* free_fn of a slot's own buffer (one a detach had given it). */
static void own_free(const backend_detached *d)
{
    free(d->mem);
}

int h5pack_ring_memory_alloc(ring_memory *m, int slots, size_t slot_bytes)
{
    memset(m, 0, sizeof *m);
    m->slots = slots, m->slot_bytes = slot_bytes;
    m->at = calloc((size_t)slots, sizeof *m->at);
    m->own = calloc((size_t)slots, 1);
    ring_block *b = calloc(1, sizeof *b);
    if (!m->at || !m->own || !b || !(b->mem = h5pack_ring_alloc((size_t)slots * slot_bytes))) {
        free(b);
        return -1;
    }
    b->bytes = (size_t)slots * slot_bytes;
    atomic_init(&b->refs, 1);
    m->block = b;
    for (int i = 0; i < slots; i++)
        m->at[i] = b->mem + (size_t)i * slot_bytes;
    return 0;
}

void h5pack_ring_memory_free(ring_memory *m)
{
    for (int i = 0; m->at && m->own && i < m->slots; i++)
        if (m->own[i])
            free(m->at[i]);
    if (m->block) {
        if (atomic_load(&m->block->refs) > 1) /* parts are out: the reader's own parts are nobody's now */
            for (int i = 0; i < m->slots; i++)
                if (!m->own[i])
                    release_pages(m->at[i], m->slot_bytes);
        block_drop(m->block, 1);
    }
    free(m->at), free(m->own);
    memset(m, 0, sizeof *m);
}

int h5pack_ring_memory_detach(ring_memory *m, int slot, int keep_values, backend_detached *out)
{
    uint8_t *fresh = h5pack_ring_alloc_aligned(m->slot_bytes);
    if (!fresh)
        return -1;
    if (keep_values)
        memcpy(fresh, m->at[slot], m->slot_bytes);
    *out = (backend_detached){.mem = m->at[slot], .bytes = m->slot_bytes, .free_fn = own_free};
    if (!m->own[slot]) { /* a part of the block: the block stays until this part is freed too */
        atomic_fetch_add(&m->block->refs, 1);
        out->owner = m->block, out->free_fn = part_free;
    }
    m->at[slot] = fresh, m->own[slot] = 1;
    return 0;
}
