/* patch_plan.c - Belady over the tile accesses (patch_plan.h). Each access carries the position of its
 * tile's next use in this epoch or the next (NEVER: none). A max-heap of (next use, tile) entries gives
 * the victim; entries go stale when their tile is used again or evicted and are skipped when popped, and
 * the heap is rebuilt from the cached tiles when stale entries pile up. Memory follows the slots and the
 * two epochs' accesses, never the number of tiles in the file (tile_map.h). */
#include "patch_plan.h"

#include <stdlib.h>
#include <string.h>

#include "tile_map.h"

#define NEVER UINT64_MAX
#define NO_SLOT UINT32_MAX

typedef struct plan_slot {
    uint64_t tile;   /* NEVER: none yet */
    uint64_t key;    /* the tile's next use */
    uint64_t pinned; /* the batch number of its latest use */
} plan_slot;

typedef struct heap_entry {
    uint64_t key, tile;
} heap_entry;

/* One epoch's patches and accesses. */
typedef struct patch_epoch {
    uint64_t epoch;
    int valid;
    int64_t *where;
    uint64_t *acc, *batch_start, n_acc;
    size_t acc_cap;     /* acc grows as the accesses come (patch_windows_accesses) */
} patch_epoch;

struct patch_plan {
    const patch_windows *w;
    uint64_t epochs, batches, per_epoch;
    size_t slots, used, cap_slots; /* slots allowed (grows), slots filled, room in the per-slot arrays */
    patch_epoch cur, nxt;
    uint64_t base;               /* global position of cur's first access */
    uint64_t *next_use;          /* per access of cur */
    uint8_t *first;              /* per access of cur: the tile's first access in the epoch */
    size_t next_use_cap, first_cap; /* their room */
    uint64_t stamp;              /* the batch marks in scratch (patch_windows_accesses) */
    uint64_t batch;              /* next batch of cur */
    tile_map cached;             /* tile -> slot */
    tile_map scratch;            /* next uses: tile -> its first position from here on; batches: seen */
    size_t out_cap;
    plan_slot *slot;             /* per slot */
    heap_entry *heap, *aside;    /* aside: entries a victim search set aside (pinned by the batch) */
    size_t heap_n, heap_cap, aside_cap;
    patch_access *out;           /* the batch handed out */
    uint64_t batch_no;
    uint64_t skip;               /* resume: batches of the first epoch never planned */
};

static int epoch_alloc(patch_plan *p, patch_epoch *e)
{
    e->where = malloc((p->per_epoch ? p->per_epoch : 1) * 3 * sizeof *e->where);
    e->batch_start = malloc((p->batches + 1) * sizeof *e->batch_start);
    return e->where && e->batch_start ? 0 : H5PACK_ENOMEM;
}

static int epoch_fill(patch_plan *p, patch_epoch *e, uint64_t epoch)
{
    e->epoch = epoch;
    e->valid = p->epochs == 0 || epoch < p->epochs;
    e->n_acc = 0;
    if (!e->valid)
        return 0;
    if (h5pack_patch_windows_epoch(p->w, epoch, e->where))
        return H5PACK_ENOMEM;
    h5pack_tile_map_clear(&p->scratch);
    return h5pack_patch_windows_accesses(p->w, e->where, &e->acc, &e->acc_cap, e->batch_start, &p->scratch, &p->stamp,
                                         &e->n_acc);
}

/* ---- the heap ------------------------------------------------------------------------------------ */

static void heap_push(patch_plan *p, uint64_t key, uint64_t tile)
{
    if (p->heap_n == p->heap_cap) {
        size_t cap = p->heap_cap ? 2 * p->heap_cap : 64;
        heap_entry *h = realloc(p->heap, cap * sizeof *h);
        if (!h)
            return; /* the entry is lost: that tile is only evicted later than Belady would (see pop) */
        p->heap = h, p->heap_cap = cap;
    }
    size_t i = p->heap_n++;
    while (i > 0 && p->heap[(i - 1) / 2].key < key) {
        p->heap[i] = p->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    p->heap[i] = (heap_entry){key, tile};
}

static heap_entry heap_pop(patch_plan *p)
{
    heap_entry top = p->heap[0], last = p->heap[--p->heap_n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= p->heap_n)
            break;
        if (c + 1 < p->heap_n && p->heap[c + 1].key > p->heap[c].key)
            c++;
        if (p->heap[c].key <= last.key)
            break;
        p->heap[i] = p->heap[c];
        i = c;
    }
    if (p->heap_n)
        p->heap[i] = last;
    return top;
}

static void heap_rebuild(patch_plan *p)
{
    p->heap_n = 0;
    for (size_t s = 0; s < p->used; s++)
        if (p->slot[s].tile != NEVER)
            heap_push(p, p->slot[s].key, p->slot[s].tile);
}

/* ---- epochs -------------------------------------------------------------------------------------- */

/* Room for N entries in *ARRAY (of SIZE bytes each, *CAP now); 0 or ENOMEM. */
static int reserve(void **array, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap)
        return 0;
    size_t grown = *cap ? *cap : 1024;
    while (grown < n)
        grown *= 2;
    void *a = realloc(*array, grown * size);
    if (!a)
        return H5PACK_ENOMEM;
    *array = a, *cap = grown;
    return 0;
}

/* next_use and first of cur's accesses over cur + nxt, and the cached tiles' keys at cur's start. */
static int compute_next_uses(patch_plan *p)
{
    uint64_t base_nxt = p->base + p->cur.n_acc, pos;
    if (reserve((void **)&p->next_use, &p->next_use_cap, (size_t)p->cur.n_acc, sizeof *p->next_use) ||
        reserve((void **)&p->first, &p->first_cap, (size_t)p->cur.n_acc, sizeof *p->first))
        return H5PACK_ENOMEM;
    tile_map *first_pos = &p->scratch; /* walking backwards: each tile's first position from here on */
    h5pack_tile_map_clear(first_pos);
    for (uint64_t j = p->nxt.n_acc; j-- > 0;)
        if (h5pack_tile_map_put(first_pos, p->nxt.acc[j], base_nxt + j))
            return H5PACK_ENOMEM;
    for (uint64_t i = p->cur.n_acc; i-- > 0;) {
        uint64_t t = p->cur.acc[i];
        p->next_use[i] = h5pack_tile_map_get(first_pos, t, &pos) ? pos : NEVER;
        if (h5pack_tile_map_put(first_pos, t, p->base + i))
            return H5PACK_ENOMEM;
    }
    for (uint64_t i = 0; i < p->cur.n_acc; i++) /* now each tile's first position in cur */
        p->first[i] = h5pack_tile_map_get(first_pos, p->cur.acc[i], &pos) && pos == p->base + i;
    for (size_t s = 0; s < p->used; s++)
        if (p->slot[s].tile != NEVER)
            p->slot[s].key = h5pack_tile_map_get(first_pos, p->slot[s].tile, &pos) ? pos : NEVER;
    heap_rebuild(p);
    return 0;
}

/* Moves to the next epoch: cur <- nxt, nxt <- the one after. */
static int advance_epoch(patch_plan *p)
{
    p->base += p->cur.n_acc;
    patch_epoch t = p->cur;
    p->cur = p->nxt, p->nxt = t;
    p->batch = 0;
    int rc = epoch_fill(p, &p->nxt, p->cur.epoch + 1);
    return rc ? rc : compute_next_uses(p);
}

/* ---- one access ---------------------------------------------------------------------------------- */

/* Keeps ENTRY aside for the victim search (pushed back afterwards); 0 or ENOMEM. */
static int set_aside(patch_plan *p, size_t n, heap_entry entry)
{
    if (n == p->aside_cap) {
        size_t cap = p->aside_cap ? 2 * p->aside_cap : 64;
        heap_entry *a = realloc(p->aside, cap * sizeof *a);
        if (!a)
            return H5PACK_ENOMEM;
        p->aside = a, p->aside_cap = cap;
    }
    p->aside[n] = entry;
    return 0;
}

/* The cached tile with the furthest next use that neither batch STAMP nor the one before uses, evicted:
 * its slot, or NO_SLOT. */
static uint32_t evict_furthest(patch_plan *p, uint64_t stamp)
{
    size_t aside = 0;
    uint32_t slot = NO_SLOT;
    while (p->heap_n > 0) {
        heap_entry e = heap_pop(p);
        uint64_t s;
        if (!h5pack_tile_map_get(&p->cached, e.tile, &s) || p->slot[s].key != e.key)
            continue; /* stale */
        if (p->slot[s].pinned + 1 >= stamp) { /* this batch or the one before uses it (patch_plan.h) */
            if (set_aside(p, aside, e))
                break;
            aside++;
            continue;
        }
        h5pack_tile_map_remove(&p->cached, e.tile);
        slot = (uint32_t)s;
        break;
    }
    for (size_t k = 0; k < aside; k++)
        heap_push(p, p->aside[k].key, p->aside[k].tile);
    return slot;
}

/* The next unused slot, the per-slot arrays grown for it: its number, or NO_SLOT without memory. */
static uint32_t fill_slot(patch_plan *p)
{
    if (p->used == p->cap_slots) {
        plan_slot *grown = realloc(p->slot, 2 * p->cap_slots * sizeof *grown);
        if (!grown)
            return NO_SLOT;
        p->slot = grown, p->cap_slots *= 2;
    }
    p->slot[p->used] = (plan_slot){NEVER, NEVER, 0};
    return (uint32_t)p->used++;
}

/* The slot for a miss: a free one, else the furthest-used tile not pinned by this batch or the one before,
 * else one more (every cached tile serves one of them). */
static uint32_t victim_slot(patch_plan *p, uint64_t stamp)
{
    if (p->used < p->slots)
        return fill_slot(p);
    uint32_t slot = evict_furthest(p, stamp);
    if (slot != NO_SLOT)
        return slot;
    p->slots++;
    return fill_slot(p);
}

static int plan_access(patch_plan *p, uint64_t i, uint64_t stamp, patch_access *a)
{
    uint64_t t = p->cur.acc[i], nu = p->next_use[i], s;
    a->tile = t;
    a->first_in_epoch = p->first[i];
    a->load = !h5pack_tile_map_get(&p->cached, t, &s);
    if (a->load) {
        s = victim_slot(p, stamp);
        if (s == NO_SLOT || h5pack_tile_map_put(&p->cached, t, s))
            return H5PACK_ENOMEM;
        p->slot[s].tile = t;
    }
    a->slot = (uint32_t)s;
    p->slot[s].pinned = stamp, p->slot[s].key = nu;
    heap_push(p, nu, t);
    if (p->heap_n > 8 * (p->used + 64))
        heap_rebuild(p);
    return 0;
}

/* A resumed epoch's first access of each tile from batch SKIP on (the accesses before it never happen). */
static void first_from(patch_plan *p, uint64_t skip)
{
    tile_map *seen = &p->scratch;
    uint64_t v;
    h5pack_tile_map_clear(seen);
    for (uint64_t i = p->cur.batch_start[skip]; i < p->cur.n_acc; i++)
        p->first[i] = !h5pack_tile_map_get(seen, p->cur.acc[i], &v) && h5pack_tile_map_put(seen, p->cur.acc[i], 1) == 0;
}

int h5pack_patch_plan_next(patch_plan *p, patch_planned *out)
{
    if (p->batch == p->batches) {
        if (advance_epoch(p))
            return H5PACK_ENOMEM;
        if (p->skip && p->cur.valid)
            first_from(p, p->skip);
        p->batch = p->skip, p->skip = 0; /* their accesses only ever appear as next uses: never cached */
    }
    if (!p->cur.valid)
        return 0;
    uint64_t b = p->batch++, a0 = p->cur.batch_start[b], a1 = p->cur.batch_start[b + 1];
    uint64_t stamp = ++p->batch_no, s;
    if (reserve((void **)&p->out, &p->out_cap, (size_t)(a1 - a0), sizeof *p->out))
        return H5PACK_ENOMEM;
    for (uint64_t i = a0; i < a1; i++) /* the batch's cached tiles are pinned before any of its loads */
        if (h5pack_tile_map_get(&p->cached, p->cur.acc[i], &s))
            p->slot[s].pinned = stamp;
    for (uint64_t i = a0; i < a1; i++)
        if (plan_access(p, i, stamp, &p->out[i - a0]))
            return H5PACK_ENOMEM;
    size_t bs = h5pack_patch_windows_batch_size(p->w);
    uint64_t first = b * bs;
    out->epoch = p->cur.epoch, out->index = b;
    out->count = (size_t)(first + bs <= p->per_epoch ? bs : p->per_epoch - first);
    out->where = p->cur.where + 3 * first;
    out->acc = p->out, out->n_acc = (size_t)(a1 - a0);
    return 1;
}

size_t h5pack_patch_plan_slots(const patch_plan *p)
{
    return p->used;
}

int h5pack_patch_plan_create(const patch_windows *w, size_t slots, uint64_t epochs, uint64_t start_epoch,
                             uint64_t start_batch, patch_plan **out)
{
    *out = NULL;
    patch_plan *p = calloc(1, sizeof *p);
    if (!p)
        return H5PACK_ENOMEM;
    p->w = w, p->epochs = epochs, p->slots = slots ? slots : 1, p->skip = start_batch;
    p->batches = h5pack_patch_windows_batches(w), p->per_epoch = h5pack_patch_windows_per_epoch(w);
    size_t start = p->slots < 4096 ? p->slots : 4096; /* the per-slot arrays grow as slots are filled */
    p->slot = malloc(start * sizeof *p->slot);
    if (!p->slot || h5pack_tile_map_init(&p->cached, start) ||
        h5pack_tile_map_init(&p->scratch, 1024) || epoch_alloc(p, &p->cur) || epoch_alloc(p, &p->nxt)) {
        h5pack_patch_plan_free(p);
        return H5PACK_ENOMEM;
    }
    p->cap_slots = start;
    /* cur starts as an empty epoch before the first so that the first call advances into START_EPOCH */
    if (epoch_fill(p, &p->nxt, start_epoch)) {
        h5pack_patch_plan_free(p);
        return H5PACK_ENOMEM;
    }
    p->cur.valid = 1, p->cur.epoch = UINT64_MAX, p->cur.n_acc = 0;
    p->batch = p->batches;
    *out = p;
    return 0;
}

void h5pack_patch_plan_free(patch_plan *p)
{
    if (!p)
        return;
    patch_epoch *e[2] = {&p->cur, &p->nxt};
    for (int k = 0; k < 2; k++)
        free(e[k]->where), free(e[k]->acc), free(e[k]->batch_start);
    h5pack_tile_map_free(&p->cached), h5pack_tile_map_free(&p->scratch);
    free(p->next_use), free(p->first), free(p->slot);
    free(p->heap), free(p->aside), free(p->out);
    free(p);
}
