/* patch_pipe_impl.h - state shared by patch_pipe.c (life cycle, consumer) and patch_fill.c (the
 * planning thread's loads and assembly). Internal. One lock guards the ring's states; a batch's contents
 * belong to the planning thread while FILLING and to the consumer once READY.
 *
 * The planning thread overlaps two batches: one pool job assembles batch k and loads the tiles of batch
 * k + 1 (planned just before). The plan never evicts a tile of the batch it plans nor of the one before
 * (patch_plan.h), so those loads cannot touch a tile that batch k's assembly reads. */
#ifndef H5PACK_PATCH_PIPE_IMPL_H
#define H5PACK_PATCH_PIPE_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "chunksrc.h"
#include "patch_pipe.h"
#include "patch_plan.h"
#include "patch_pool.h"
#include "tile_map.h"

enum patch_state { PATCH_FREE, PATCH_FILLING, PATCH_READY, PATCH_DELIVERED };

typedef struct patch_counts {
    uint64_t hits, misses, bytes_read, bytes_inflated, bytes_needed;
    double read_s, inflate_s, assemble_s;
} patch_counts;

/* One slot of the tile cache. */
typedef struct cache_slot {
    uint8_t *buf;          /* its own tile buffer (T x T x C), allocated on its first pread */
    const uint8_t *data;   /* its tile's bytes: buf, or lent by the mapping */
    uint64_t lent;         /* the mapped tile it lends, UINT64_MAX for none */
    uint64_t stored;       /* the bytes its tile's read took from the file (stats) */
} cache_slot;

/* A planned batch between its plan and its submit (two of them: the one assembled, the one loaded). Its
 * plan is copied out of the planner, which reuses its own buffers for the next batch. */
typedef struct fill_state {
    uint64_t epoch, index;
    size_t count, n_acc, n_loads;
    int64_t *where;         /* batch_size x 3 */
    patch_access *acc;      /* its distinct tiles */
    patch_access *loads;    /* those it must read */
    size_t cap;             /* room in acc and in loads */
    tile_map slots;         /* its tiles -> their slots (read-only while assembling) */
    patch_counts counts;    /* its reads */
    int rc;                 /* a failed load: the batch delivers this error */
    char err[384];
} fill_state;

typedef struct patch_entry {
    int state;
    uint64_t ticket, epoch, index, token;
    size_t count;
    int64_t *where;     /* batch_size x 3 */
    uint64_t *indices;  /* batch_size: each patch's image */
    int detached;       /* consumer: the delivery under `token` handed its memory over (h5pack_detach) */
    int rc;
    char err[384];
    patch_counts counts;
} patch_entry;

struct patch_pipe {
    patch_pipe_params pp;
    const tile_geometry *g;
    size_t batch_size, patch_bytes, label_bytes;
    uint32_t S;              /* patch side */
    const uint8_t *labels;   /* N rows, NULL without labels */
    patch_plan *plan;
    cache_slot *slots;       /* per cache slot (the plan's numbering), grown as the plan fills slots */
    size_t slot_n;
    patch_pool *pool;        /* the threads of the loads and the assembly */
    fill_state fs[2];        /* batch k in fs[k % 2] */
    /* the pool's current job: assemble ASSEMBLING (NULL: none), then load LOADING's tiles (NULL: none) */
    fill_state *assembling, *loading;
    int load_failed;
    uint8_t *fill_in;        /* the backend's uint8 input of its slot, or NULL (CPU one-pass) */
    void *fill_out;          /* the CPU backend's output of its slot (one-pass), or NULL */
    uint64_t fill_key;
    tile_scratch **scratch;  /* per thread */
    chunk_read_cost *cost;   /* per thread, summed into a batch's counts */
    double *assemble_s;      /* per thread: seconds assembling patches in the current job */
    uint8_t *assemble_buf;   /* per thread: one patch, for the CPU backend's one-pass conversion */
    uint64_t *tile_list;     /* per thread: the tiles of one patch */
    const struct backend_conv *one_pass; /* the CPU backend converts each patch as it is assembled */
    patch_entry *ring;       /* prefetch entries: ticket t in ring[t % prefetch] */
    pthread_t thread;
    int started;
    _Atomic int stop;
    pthread_mutex_t lock;
    pthread_cond_t freed, ready;
    uint64_t end_ticket;     /* tickets planned in all (valid once `ended`) */
    int ended;
    /* consumer side */
    uint64_t next_ticket, token_tag, deliveries;
    int failed;
    char failed_err[384];
    patch_counts delivered;
    uint64_t samples, batches, epochs_completed;
    double stall_s;
};

/* The planning thread (patch_fill.c). */
void *h5pack_patch_fill_main(void *arg);

#endif
