/* cache.h - the chunk cache: `slots` buffers of chunk_bytes, allocated once, whose contents follow the
 * Belady plan (plan.h). Each load into a slot starts a new generation of it. A slot holds its chunk in
 * its own buffer, or a pointer the load lent it (zero-copy: see cache_load_fn).
 *
 * Execution rules, which let many workers carry out the sequential plan without changing what hits:
 *   - a load of generation g into slot s waits until every planned use of generation g-1 is finished;
 *   - a use of (s, g) (every access, hit or miss, uses its generation) waits until g is loaded.
 * A load can thus run long before its own use (loading ahead), by another worker. Waiting calls only wait
 * on accesses planned before their own, so with batches planned in ticket order nothing can deadlock;
 * the TRY_ONLY forms never wait. h5pack_cache_planned() runs under the caller's planning lock (in plan
 * order); the other calls are thread-safe. */
#ifndef H5PACK_CACHE_H
#define H5PACK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"

typedef struct chunk_cache chunk_cache;

/* Reads CHUNK into DST (the slot's own buffer, chunk_bytes of room) and sets *DATA to DST; a load that
 * can lend the chunk's bytes instead of copying them (a mapped file) points *DATA at them instead: they
 * must stay valid until h5pack_cache_free. On entry *DATA is what the slot held until now (DST, or bytes an
 * earlier load lent: nobody uses them any more, the loader may let go of them). WORKER is the calling worker's own state. Returns 0 or a negative h5pack
 * code with the reason in ERR. */
typedef int (*cache_load_fn)(void *ctx, void *worker, uint64_t chunk, uint8_t *dst, const uint8_t **data, char *err,
                             size_t err_len);

int h5pack_cache_create(size_t slots, size_t chunk_bytes, cache_load_fn load, void *ctx, chunk_cache **out);
void h5pack_cache_free(chunk_cache *c);

size_t h5pack_cache_slot_count(const chunk_cache *c);

/* Bookkeeping in plan order (caller serialises): returns the number of uses of the slot's previous
 * generation that a load must wait for (0 for a hit). */
uint64_t h5pack_cache_planned(chunk_cache *c, const plan_access *a);

/* A call with TRY_ONLY: the access would have to wait; nothing was done. */
#define CACHE_WOULD_WAIT 1

/* Every access is a use of its slot's generation; a load access (a->load) first loads it. The two steps
 * can be run apart (by different workers, the load long before the use: loading ahead) or together
 * (h5pack_cache_acquire). */

/* Whether load access A could start now: its slot holds the previous generation and that generation's
 * WAIT_USERS planned uses (from h5pack_cache_planned) are finished. */
int h5pack_cache_load_ready(chunk_cache *c, const plan_access *a, uint64_t wait_users);

/* The load of access A: waits for the previous generation's users (with TRY_ONLY: CACHE_WOULD_WAIT
 * instead), then loads the chunk with the load function outside any lock. Returns 0, the load's error
 * (which every use of the generation then reports), H5PACK_ESTATE after h5pack_cache_stop(), or
 * CACHE_WOULD_WAIT. No h5pack_cache_finish is due for it: the access's use is a separate step. */
int h5pack_cache_load(chunk_cache *c, const plan_access *a, uint64_t wait_users, int try_only, void *worker,
                      char *err, size_t err_len);

/* The use of access A: waits until its generation is loaded (with TRY_ONLY: CACHE_WOULD_WAIT instead).
 * *DATA points at the chunk's bytes until h5pack_cache_finish(), due after every call that did not answer
 * CACHE_WOULD_WAIT, even a failed one. Returns 0, the load's error, or H5PACK_ESTATE after stop. */
int h5pack_cache_use(chunk_cache *c, const plan_access *a, int try_only, const uint8_t **data, char *err,
                     size_t err_len);

/* Load (for a load access) and use in one call; TRY_ONLY answers CACHE_WOULD_WAIT when either step would
 * wait (then nothing was done). A finish is due otherwise, as after h5pack_cache_use. */
int h5pack_cache_acquire(chunk_cache *c, const plan_access *a, uint64_t wait_users, int try_only, void *worker,
                  const uint8_t **data, char *err, size_t err_len);

/* The access on SLOT is done with the data (call it after every h5pack_cache_acquire that did not answer
 * CACHE_WOULD_WAIT, even a failed one). */
void h5pack_cache_finish(chunk_cache *c, uint32_t slot);

/* Wakes every waiter; h5pack_cache_acquire returns H5PACK_ESTATE from then on. */
void h5pack_cache_stop(chunk_cache *c);

#endif
