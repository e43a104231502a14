/* patch_plan.c - Belady over the tile accesses (patch_plan.h). Each access carries the position of its
 * tile's next use in this epoch or the next (NEVER: none). A max-heap of (next use, tile) entries gives
 * the victim; entries go stale when their tile is used again or evicted and are skipped when popped, and
 * the heap is rebuilt from the cached tiles when stale entries pile up. */
#include "patch_plan.h"

#include <stdlib.h>
#include <string.h>

#define NEVER UINT64_MAX
#define NO_SLOT UINT32_MAX

typedef struct heap_entry {
    uint64_t key, tile;
} heap_entry;

/* One epoch's patches and accesses. */
typedef struct patch_epoch {
    uint64_t epoch;
    int valid;
    int64_t *where;
    uint64_t *acc, *batch_start, n_acc;
} patch_epoch;

struct patch_plan {
    const patch_windows *w;
    uint64_t n_tiles, epochs, batches, per_epoch;
    size_t slots, used;          /* slots allowed (grows), slots filled */
    patch_epoch cur, nxt;
    uint64_t base;               /* global position of cur's first access */
    uint64_t *next_use;          /* per access of cur */
    uint64_t batch;              /* next batch of cur */
    uint32_t *slot_of;           /* per tile: its slot, NO_SLOT when not cached */
    uint64_t *key_of;            /* per tile: next use, as last pushed */
    uint64_t *pinned;            /* per tile: 1 + global batch number of its latest use */
    uint64_t *seen;              /* per tile: 1 + epoch of its latest use */
    uint64_t *slot_tile;         /* per slot */
    uint64_t *stamp, stamp_next; /* patch_windows_accesses' scratch */
    heap_entry *heap, *aside;    /* aside: entries a victim search set aside (pinned by the batch) */
    size_t heap_n, heap_cap, aside_cap;
    patch_access *out;           /* the batch handed out */
    uint64_t batch_no;
};

static int epoch_alloc(patch_plan *p, patch_epoch *e)
{
    uint64_t max_acc = h5pack_patch_windows_max_accesses(p->w);
    e->where = malloc((p->per_epoch ? p->per_epoch : 1) * 3 * sizeof *e->where);
    e->acc = malloc((max_acc ? max_acc : 1) * sizeof *e->acc);
    e->batch_start = malloc((p->batches + 1) * sizeof *e->batch_start);
    return e->where && e->acc && e->batch_start ? 0 : H5PACK_ENOMEM;
}

static void epoch_fill(patch_plan *p, patch_epoch *e, uint64_t epoch)
{
    e->epoch = epoch;
    e->valid = p->epochs == 0 || epoch < p->epochs;
    e->n_acc = 0;
    if (!e->valid)
        return;
    h5pack_patch_windows_epoch(p->w, epoch, e->where);
    e->n_acc = h5pack_patch_windows_accesses(p->w, e->where, e->acc, e->batch_start, p->stamp, &p->stamp_next);
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
        if (p->slot_tile[s] != NEVER)
            heap_push(p, p->key_of[p->slot_tile[s]], p->slot_tile[s]);
}

/* ---- epochs -------------------------------------------------------------------------------------- */

/* next_use over cur + nxt, and the cached tiles' keys at cur's start. */
static void compute_next_uses(patch_plan *p)
{
    uint64_t base_nxt = p->base + p->cur.n_acc;
    for (size_t s = 0; s < p->used; s++)
        if (p->slot_tile[s] != NEVER)
            p->key_of[p->slot_tile[s]] = NEVER;
    /* key_of doubles as "first position from here on" while walking backwards */
    for (uint64_t j = p->nxt.n_acc; j-- > 0;)
        p->key_of[p->nxt.acc[j]] = base_nxt + j;
    for (uint64_t i = p->cur.n_acc; i-- > 0;) {
        uint64_t t = p->cur.acc[i];
        p->next_use[i] = p->key_of[t];
        p->key_of[t] = p->base + i;
    }
    heap_rebuild(p);
}

/* Moves to the next epoch: cur <- nxt, nxt <- the one after. */
static void advance_epoch(patch_plan *p)
{
    p->base += p->cur.n_acc;
    patch_epoch t = p->cur;
    p->cur = p->nxt, p->nxt = t;
    epoch_fill(p, &p->nxt, p->cur.epoch + 1);
    p->batch = 0;
    compute_next_uses(p);
}

/* ---- one access ---------------------------------------------------------------------------------- */

/* The slot for a miss: a free one, else the furthest-used tile not pinned by this batch, else a new one. */
static uint32_t victim_slot(patch_plan *p, uint64_t stamp, uint64_t *evicted)
{
    *evicted = NEVER;
    if (p->used < p->slots)
        return (uint32_t)p->used++;
    size_t aside = 0;
    uint32_t slot = NO_SLOT;
    while (p->heap_n > 0) {
        heap_entry e = heap_pop(p);
        if (p->slot_of[e.tile] == NO_SLOT || p->key_of[e.tile] != e.key)
            continue; /* stale */
        if (p->pinned[e.tile] == stamp) { /* the batch needs it: pushed back below */
            if (aside == p->aside_cap) {
                size_t cap = p->aside_cap ? 2 * p->aside_cap : 64;
                heap_entry *a = realloc(p->aside, cap * sizeof *a);
                if (!a)
                    break;
                p->aside = a, p->aside_cap = cap;
            }
            p->aside[aside++] = e;
            continue;
        }
        slot = p->slot_of[e.tile];
        p->slot_of[e.tile] = NO_SLOT;
        *evicted = e.tile;
        break;
    }
    for (size_t k = 0; k < aside; k++)
        heap_push(p, p->aside[k].key, p->aside[k].tile);
    if (slot != NO_SLOT)
        return slot;
    p->slots++; /* every cached tile serves this batch */
    uint64_t *grown = realloc(p->slot_tile, p->slots * sizeof *grown);
    if (!grown)
        return NO_SLOT;
    p->slot_tile = grown;
    return (uint32_t)p->used++;
}

static int plan_access(patch_plan *p, uint64_t i, uint64_t stamp, patch_access *a)
{
    uint64_t t = p->cur.acc[i], nu = p->next_use[i];
    a->tile = t;
    a->first_in_epoch = p->seen[t] != p->cur.epoch + 1;
    p->seen[t] = p->cur.epoch + 1;
    a->load = p->slot_of[t] == NO_SLOT;
    if (a->load) {
        uint64_t evicted;
        uint32_t s = victim_slot(p, stamp, &evicted);
        if (s == NO_SLOT)
            return H5PACK_ENOMEM;
        p->slot_of[t] = s, p->slot_tile[s] = t;
    }
    a->slot = p->slot_of[t];
    p->pinned[t] = stamp;
    p->key_of[t] = nu;
    heap_push(p, nu, t);
    if (p->heap_n > 8 * (p->used + 64))
        heap_rebuild(p);
    return 0;
}

int h5pack_patch_plan_next(patch_plan *p, patch_planned *out)
{
    if (p->batch == p->batches)
        advance_epoch(p);
    if (!p->cur.valid)
        return 0;
    uint64_t b = p->batch++, a0 = p->cur.batch_start[b], a1 = p->cur.batch_start[b + 1];
    uint64_t stamp = ++p->batch_no;
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

int h5pack_patch_plan_create(const patch_windows *w, uint64_t n_tiles, size_t slots, uint64_t epochs, patch_plan **out)
{
    *out = NULL;
    patch_plan *p = calloc(1, sizeof *p);
    if (!p)
        return H5PACK_ENOMEM;
    p->w = w, p->n_tiles = n_tiles, p->epochs = epochs, p->slots = slots ? slots : 1;
    p->batches = h5pack_patch_windows_batches(w), p->per_epoch = h5pack_patch_windows_per_epoch(w);
    size_t nt = (size_t)(n_tiles ? n_tiles : 1);
    p->slot_of = malloc(nt * sizeof *p->slot_of), p->key_of = malloc(nt * sizeof *p->key_of);
    p->pinned = calloc(nt, sizeof *p->pinned), p->seen = calloc(nt, sizeof *p->seen);
    p->stamp = calloc(nt, sizeof *p->stamp);
    p->slot_tile = malloc(p->slots * sizeof *p->slot_tile);
    p->out = malloc(h5pack_patch_windows_batch_size(w) * h5pack_patch_windows_max_tiles(w) * sizeof *p->out);
    p->next_use = malloc((h5pack_patch_windows_max_accesses(w) + 1) * sizeof *p->next_use);
    if (!p->slot_of || !p->key_of || !p->pinned || !p->seen || !p->stamp || !p->slot_tile || !p->out ||
        !p->next_use || epoch_alloc(p, &p->cur) || epoch_alloc(p, &p->nxt)) {
        h5pack_patch_plan_free(p);
        return H5PACK_ENOMEM;
    }
    for (size_t t = 0; t < nt; t++)
        p->slot_of[t] = NO_SLOT, p->key_of[t] = NEVER;
    /* cur starts as an empty "epoch -1" so that the first call advances into epoch 0 */
    epoch_fill(p, &p->nxt, 0);
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
    free(p->next_use), free(p->slot_of), free(p->key_of), free(p->pinned), free(p->seen), free(p->stamp);
    free(p->slot_tile), free(p->heap), free(p->aside), free(p->out);
    free(p);
}
