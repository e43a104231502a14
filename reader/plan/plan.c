/* plan.c - the Belady (MIN) cache plan of plan.h, in two passes per epoch.
 *
 * Positions: every access gets a global position (accesses of all earlier epochs + its index in its
 * epoch). For the current epoch we precompute next_use[i]: the position of the next access of the same
 * chunk in the rest of this epoch or in the next one, else NEVER.
 *
 * Pass 1 (at the start of each epoch, over the whole epoch): Belady decides every hit and miss and which
 * chunk each miss evicts. A cached slot's key is the next use of the chunk it holds; a max-heap over
 * slots (ties on NEVER: the chunk used longest ago) gives the victim in O(log slots). At an epoch
 * boundary the keys of all cached chunks are recomputed, because chunks that looked "never used again"
 * may now appear in the newly visible epoch.
 *
 * Pass 2 (as batches are handed out): the same hits and misses, but each miss may evict another chunk
 * than pass 1's: any "doomed" chunk, one that pass 1 evicts later without using it before. Swapping the
 * eviction times of two such chunks changes no hit (neither is used in between), so the plan stays
 * exactly as good as Belady's. Among the doomed chunks the one used longest ago is taken: the reader's
 * workers, which load ahead of the batches being assembled, have most likely finished with it, so the load
 * can start at once (Belady alone tends to evict the chunk that died a moment ago, which holds up the load
 * until the batch using it last is assembled). Pass 2 also assigns the slots and their generations. */
#include "plan.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NEVER UINT64_MAX
#define HIT (UINT64_MAX - 1) /* victim[i] of a hit; NEVER there: a load into a free slot */

/* One epoch of this rank: its samples and its access sequence. */
typedef struct epoch_seq {
    uint64_t epoch;
    int valid;             /* 0 when the epoch is past the configured end */
    uint64_t n;            /* samples (a resumed epoch's last batch may hold another count) */
    uint64_t *samples;     /* n (room for batches_per_epoch * batch_size) */
    uint64_t *acc;         /* chunk of each access (n_acc used) */
    uint64_t *batch_start; /* batches_per_epoch + 1 */
    uint64_t n_acc;
} epoch_seq;

struct planner {
    order_params op;
    size_t slots;
    uint64_t epochs; /* 0 = endless */
    uint64_t n_chunks, per_epoch, batches_per_epoch; /* per_epoch: room for any epoch's samples */
    uint64_t start_epoch;  /* the first epoch: laid out from start_origin (order.h) */
    int64_t start_origin;
    int nxt_pending;       /* a resumed start: nxt is computed when cur ends (see planner_create_from) */
    /* pass 1 of a resumed start's epoch, where every chunk not used again has key NEVER: the heap is left
       alone (its entries are the used slots, in any order) while a dead chunk can be evicted: those wait
       in `dead` in the order of their last uses, which is Belady's choice among equal keys (heap_before);
       the first miss that finds none rebuilds the heap and goes on with it (lazy = 0) */
    int lazy;
    uint32_t *dead;        /* per chunk at most once: chunks whose last use in cur has been planned */
    size_t dead_head, dead_tail;
    epoch_seq cur, nxt;
    uint64_t base_cur;   /* global position of cur's first access */
    uint64_t *next_use;  /* per access of cur */
    uint64_t *first_pos; /* per chunk: scratch, then its first position from the start of cur */
    uint64_t batch;      /* next batch of cur to plan */
    int finished;
    /* resume: batches [skip_b0, skip_b1) of the first epoch are never planned, and their accesses
       [skip_a0, skip_a1) take no part in either pass (as if the epoch did not hold them) */
    uint64_t skip_b0, skip_b1, skip_a0, skip_a1;
    /* pass 1: Belady over cur */
    uint64_t *victim;    /* per access of cur: HIT, the chunk the load evicts, or NEVER (a free slot) */
    uint64_t *res_end;   /* per access of cur that loads: where pass 1 evicts that chunk again (NEVER: not in cur) */
    uint64_t *res_start; /* per chunk: the access of cur that loaded it, NEVER if cached since before cur */
    uint64_t *start_end; /* per chunk cached at cur's start: where pass 1 evicts it (NEVER: not in cur) */
    uint64_t *slot_chunk, *key;
    uint64_t *last_use;  /* per slot: position of the latest access to its chunk */
    uint32_t *chunk_slot; /* per chunk: slot + 1, 0 when not cached */
    size_t used;         /* slots filled so far (filled lowest first, never emptied) */
    uint32_t *heap;      /* slots ordered by key (max first) */
    uint32_t *heap_pos;  /* slot -> index in heap */
    /* pass 2: the handed-out plan */
    uint64_t *end;       /* per cached chunk: the position of the load that evicts it (NEVER: not in cur) */
    uint64_t *lastpos, *nextpos; /* per chunk: its latest access, and the next one after that */
    uint64_t *out_chunk, *slot_gen; /* per slot */
    uint32_t *out_slot;  /* per chunk: slot + 1, 0 when not cached */
    size_t out_used;
    uint32_t *doomed;    /* min-heap of doomed chunks by lastpos */
    uint32_t *doomed_pos; /* per chunk: index in `doomed` + 1, 0 when not doomed */
    size_t n_doomed;
    uint64_t *seen_epoch; /* per chunk: 1 + last epoch it was accessed in */
};

/* ---- pass 1's max-heap of slots keyed by next use ---------------------------------------------- */

/* A goes before B: further next use; among equal keys (only NEVER can tie) the chunk whose last use is
 * earliest (positions are unique): it leaves the chunks used last, which the reader may still be copying
 * from, in the cache, and pass 2 only swaps among chunks that pass 1 evicts. */
static int heap_before(const planner *p, uint32_t a, uint32_t b)
{
    return p->key[a] > p->key[b] || (p->key[a] == p->key[b] && p->last_use[a] < p->last_use[b]);
}

static void heap_swap(planner *p, size_t i, size_t j)
{
    uint32_t t = p->heap[i];
    p->heap[i] = p->heap[j];
    p->heap[j] = t;
    p->heap_pos[p->heap[i]] = (uint32_t)i;
    p->heap_pos[p->heap[j]] = (uint32_t)j;
}

static void heap_up(planner *p, size_t i)
{
    while (i > 0 && heap_before(p, p->heap[i], p->heap[(i - 1) / 2])) {
        heap_swap(p, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_down(planner *p, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < p->used && heap_before(p, p->heap[l], p->heap[best]))
            best = l;
        if (r < p->used && heap_before(p, p->heap[r], p->heap[best]))
            best = r;
        if (best == i)
            return;
        heap_swap(p, i, best);
        i = best;
    }
}

static void heap_fix(planner *p, uint32_t slot)
{
    heap_up(p, p->heap_pos[slot]);
    heap_down(p, p->heap_pos[slot]);
}

static void heap_rebuild(planner *p)
{
    for (size_t i = p->used / 2; i-- > 0;)
        heap_down(p, i);
}

/* ---- pass 2's min-heap of doomed chunks keyed by their last use -------------------------------- */

static void doomed_swap(planner *p, size_t i, size_t j)
{
    uint32_t t = p->doomed[i];
    p->doomed[i] = p->doomed[j];
    p->doomed[j] = t;
    p->doomed_pos[p->doomed[i]] = (uint32_t)i + 1;
    p->doomed_pos[p->doomed[j]] = (uint32_t)j + 1;
}

static void doomed_sift(planner *p, size_t i)
{
    while (i > 0 && p->lastpos[p->doomed[i]] < p->lastpos[p->doomed[(i - 1) / 2]]) {
        doomed_swap(p, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < p->n_doomed && p->lastpos[p->doomed[l]] < p->lastpos[p->doomed[best]])
            best = l;
        if (r < p->n_doomed && p->lastpos[p->doomed[r]] < p->lastpos[p->doomed[best]])
            best = r;
        if (best == i)
            return;
        doomed_swap(p, i, best);
        i = best;
    }
}

static void doomed_add(planner *p, uint64_t c)
{
    p->doomed[p->n_doomed] = (uint32_t)c;
    p->doomed_pos[c] = (uint32_t)++p->n_doomed;
    doomed_sift(p, p->n_doomed - 1);
}

static void doomed_remove(planner *p, uint64_t c)
{
    size_t i = p->doomed_pos[c] - 1;
    p->doomed_pos[c] = 0;
    if (i != --p->n_doomed) {
        p->doomed[i] = p->doomed[p->n_doomed];
        p->doomed_pos[p->doomed[i]] = (uint32_t)i + 1;
        doomed_sift(p, i);
    }
}

/* ---- epochs ------------------------------------------------------------------------------------ */

static int epoch_alloc(epoch_seq *s, const planner *p)
{
    s->samples = malloc((p->per_epoch ? p->per_epoch : 1) * sizeof *s->samples);
    s->acc = malloc((p->per_epoch ? p->per_epoch : 1) * sizeof *s->acc);
    s->batch_start = malloc((p->batches_per_epoch + 1) * sizeof *s->batch_start);
    return s->samples && s->acc && s->batch_start ? 0 : H5PACK_ENOMEM;
}

static void epoch_free(epoch_seq *s)
{
    free(s->samples), free(s->acc), free(s->batch_start);
}

/* Fills S with epoch E (or marks it invalid past the configured end). */
static int epoch_compute(planner *p, epoch_seq *s, uint64_t e)
{
    s->epoch = e;
    s->valid = p->epochs == 0 || e < p->epochs;
    s->n_acc = s->n = 0;
    if (!s->valid)
        return 0;
    int first = e == p->start_epoch; /* a resumed start's epoch: its skipped batches are not built */
    int rc = h5pack_order_epoch_part(&p->op, e, first ? p->start_origin : 0, first ? p->skip_b0 : 0,
                                     first ? p->skip_b1 : 0, s->samples, &s->n);
    if (rc)
        return rc;
    s->n_acc = h5pack_order_accesses_part(&p->op, s->samples, s->n, first ? p->skip_b0 : 0, first ? p->skip_b1 : 0,
                                          s->acc, s->batch_start);
    return s->n_acc == 0 && s->n > 0 ? H5PACK_ENOMEM : 0; /* at least the last batch has accesses */
}

typedef struct epoch_job {
    planner *p;
    epoch_seq *s;
    uint64_t e;
    int rc;
} epoch_job;

static void *epoch_job_main(void *arg)
{
    epoch_job *j = arg;
    j->rc = epoch_compute(j->p, j->s, j->e);
    return NULL;
}

/* Epochs E (cur) and E + 1 (nxt) at once, on two threads when a thread starts: the two orders are most
 * of what a (resumed) start costs. */
static int compute_first_two(planner *p, uint64_t e)
{
    epoch_job next = {p, &p->nxt, e + 1, 0};
    pthread_t helper;
    int threaded = pthread_create(&helper, NULL, epoch_job_main, &next) == 0;
    int rc = epoch_compute(p, &p->cur, e);
    if (threaded)
        pthread_join(helper, NULL);
    else
        epoch_job_main(&next);
    return rc ? rc : next.rc;
}

/* next_use of cur's accesses over cur + nxt, and the keys of every cached chunk at cur's start. */
static void compute_next_uses(planner *p)
{
    uint64_t base_nxt = p->base_cur + p->cur.n_acc;
    for (uint64_t c = 0; c < p->n_chunks; c++)
        p->first_pos[c] = NEVER;
    for (uint64_t j = p->nxt.n_acc; j-- > 0;)
        p->first_pos[p->nxt.acc[j]] = base_nxt + j;
    for (uint64_t i = p->cur.n_acc; i-- > 0;) {
        if (i >= p->skip_a0 && i < p->skip_a1)
            continue;
        p->next_use[i] = p->first_pos[p->cur.acc[i]];
        p->first_pos[p->cur.acc[i]] = p->base_cur + i;
    }
    for (size_t s = 0; s < p->used; s++)
        p->key[s] = p->first_pos[p->slot_chunk[s]];
    heap_rebuild(p);
}

/* ---- pass 1: Belady over the whole current epoch ------------------------------------------------ */

static void belady_step(planner *p, uint64_t i)
{
    uint64_t c = p->cur.acc[i], pos = p->base_cur + i;
    if (p->chunk_slot[c]) { /* hit */
        uint32_t s = p->chunk_slot[c] - 1;
        p->key[s] = p->next_use[i];
        p->last_use[s] = pos;
        heap_fix(p, s);
        p->victim[i] = HIT;
        return;
    }
    uint32_t s;
    p->victim[i] = NEVER;
    p->res_end[i] = NEVER;
    if (p->used < p->slots) { /* a free slot: lowest index first */
        s = (uint32_t)p->used;
        p->heap[p->used] = s;
        p->heap_pos[s] = (uint32_t)p->used;
        p->used++;
        p->key[s] = p->next_use[i];
        p->last_use[s] = pos;
        heap_up(p, p->heap_pos[s]);
    } else { /* evict the chunk used furthest in the future */
        s = p->heap[0];
        uint64_t v = p->slot_chunk[s];
        p->victim[i] = v;
        p->chunk_slot[v] = 0;
        if (p->res_start[v] != NEVER)
            p->res_end[p->res_start[v]] = pos;
        else
            p->start_end[v] = pos;
        p->key[s] = p->next_use[i];
        p->last_use[s] = pos;
        heap_down(p, 0);
    }
    p->slot_chunk[s] = c;
    p->chunk_slot[c] = s + 1;
    p->res_start[c] = i;
}

/* A miss of belady_step, lazily: a dead chunk's slot, or 0 when none is left (the heap takes over). */
static int lazy_victim(planner *p, uint32_t *slot)
{
    if (p->dead_head == p->dead_tail)
        return 0;
    *slot = p->chunk_slot[p->dead[p->dead_head++]] - 1;
    return 1;
}

/* belady_step without the heap (see `lazy`): the same decisions while dead chunks are there to evict. */
static void lazy_step(planner *p, uint64_t i)
{
    uint64_t c = p->cur.acc[i], pos = p->base_cur + i;
    uint32_t s;
    if (p->chunk_slot[c]) { /* hit */
        s = p->chunk_slot[c] - 1;
        p->victim[i] = HIT;
    } else if (p->used < p->slots) { /* a free slot: lowest index first */
        s = (uint32_t)p->used;
        p->heap[s] = s, p->heap_pos[s] = s;
        p->used++;
        p->victim[i] = NEVER, p->res_end[i] = NEVER;
    } else if (lazy_victim(p, &s)) { /* the dead chunk used longest ago */
        uint64_t v = p->slot_chunk[s];
        p->victim[i] = v, p->res_end[i] = NEVER;
        p->chunk_slot[v] = 0;
        if (p->res_start[v] != NEVER)
            p->res_end[p->res_start[v]] = pos;
        else
            p->start_end[v] = pos;
    } else { /* every cached chunk is used again: Belady's heap from here on */
        p->lazy = 0;
        heap_rebuild(p);
        belady_step(p, i);
        return;
    }
    p->key[s] = p->next_use[i];
    p->last_use[s] = pos;
    if (p->victim[i] != HIT) {
        p->slot_chunk[s] = c;
        p->chunk_slot[c] = s + 1;
        p->res_start[c] = i;
    }
    if (p->key[s] == NEVER)
        p->dead[p->dead_tail++] = (uint32_t)c;
}

/* Pass 1 over cur, then pass 2's view of the chunks cached at cur's start (the same chunks as pass 1's:
 * pass 2's swaps all resolve within an epoch). */
static void plan_epoch(planner *p)
{
    for (size_t s = 0; s < p->used; s++) {
        p->res_start[p->slot_chunk[s]] = NEVER;
        p->start_end[p->slot_chunk[s]] = NEVER;
    }
    /* lazy only where every key past cur is NEVER (nxt not looked at) and nothing is cached yet */
    p->lazy = p->nxt_pending && p->used == 0;
    p->dead_head = p->dead_tail = 0;
    for (uint64_t i = 0; i < p->cur.n_acc; i++)
        if (i < p->skip_a0 || i >= p->skip_a1) {
            if (p->lazy)
                lazy_step(p, i);
            else
                belady_step(p, i);
        }
    if (p->lazy) /* the heap is whole again for the next epoch's keys */
        heap_rebuild(p), p->lazy = 0;
    for (size_t s = 0; s < p->out_used; s++) {
        uint64_t c = p->out_chunk[s];
        p->end[c] = p->start_end[c];
        p->nextpos[c] = p->first_pos[c];
        if (p->end[c] != NEVER && p->nextpos[c] > p->end[c] && !p->doomed_pos[c])
            doomed_add(p, c);
    }
}

/* Makes the next epoch current and looks one further ahead. Returns 1 when there is no next epoch. */
static int advance_epoch(planner *p)
{
    uint64_t e = p->cur.epoch + 1;
    if (p->epochs && e >= p->epochs)
        return 1;
    p->base_cur += p->cur.n_acc;
    int rc;
    if (p->nxt_pending) { /* a resumed start computed one epoch: both now */
        p->nxt_pending = 0;
        rc = compute_first_two(p, e);
    } else {
        epoch_seq t = p->cur;
        p->cur = p->nxt;
        p->nxt = t;
        rc = epoch_compute(p, &p->nxt, e + 1);
    }
    if (rc)
        return rc;
    p->skip_a0 = p->skip_a1 = p->skip_b0 = p->skip_b1 = 0; /* only the first epoch skips */
    compute_next_uses(p);
    plan_epoch(p);
    p->batch = 0;
    return 0;
}

/* ---- pass 2: the plan handed out ---------------------------------------------------------------- */

/* The chunk the load at I evicts: pass 1's (or the one an earlier swap moved to I), or, when that is
 * not the doomed chunk used longest ago, that one, whose eviction time pass 1's victim takes over. */
static uint64_t choose_victim(planner *p, uint64_t i)
{
    uint64_t d = p->victim[i];
    if (p->n_doomed == 0)
        return d;
    uint64_t m = p->doomed[0];
    if (m == d || p->end[m] >= p->nextpos[d]) /* d must not be used before m's eviction time */
        return d;
    p->victim[p->end[m] - p->base_cur] = d;
    p->end[d] = p->end[m];
    return m;
}

static void emit_access(planner *p, uint64_t i, plan_access *a)
{
    uint64_t c = p->cur.acc[i], pos = p->base_cur + i;
    a->chunk = c;
    a->first_in_epoch = p->seen_epoch[c] != p->cur.epoch + 1;
    p->seen_epoch[c] = p->cur.epoch + 1;
    a->evicted = UINT64_MAX;
    if (p->victim[i] == HIT) {
        uint32_t s = p->out_slot[c] - 1;
        a->slot = s, a->load = 0, a->slot_gen = p->slot_gen[s];
    } else {
        uint32_t s;
        if (p->victim[i] == NEVER) { /* a free slot, lowest first (pass 1 fills them at the same accesses) */
            s = (uint32_t)p->out_used++;
        } else {
            uint64_t v = choose_victim(p, i);
            doomed_remove(p, v); /* a victim is always doomed: no use before its eviction */
            s = p->out_slot[v] - 1;
            p->out_slot[v] = 0;
            a->evicted = v;
        }
        p->out_chunk[s] = c;
        p->out_slot[c] = s + 1;
        p->end[c] = p->res_end[i];
        a->slot = s, a->load = 1, a->slot_gen = ++p->slot_gen[s];
    }
    p->lastpos[c] = pos;
    p->nextpos[c] = p->next_use[i];
    if (p->end[c] != NEVER && p->nextpos[c] > p->end[c])
        doomed_add(p, c); /* its last use before pass 1 evicts it */
}

int h5pack_planner_next(planner *p, uint64_t *samples, size_t *count, plan_access *acc, size_t *n_acc, uint64_t *epoch,
                 uint64_t *batch_index)
{
    if (p->finished || p->batches_per_epoch == 0 || !p->cur.valid)
        return 0;
    if (p->batch == p->skip_b0 && p->skip_b1 > p->skip_b0)
        p->batch = p->skip_b1;
    if (p->batch == p->batches_per_epoch) {
        int rc = advance_epoch(p);
        if (rc) {
            p->finished = 1;
            return rc > 0 ? 0 : rc;
        }
    }
    uint64_t b = p->batch++, bs = p->op.batch_size;
    uint64_t first = b * bs, end = first + bs < p->cur.n ? first + bs : p->cur.n;
    memcpy(samples, p->cur.samples + first, (end - first) * sizeof *samples);
    *count = (size_t)(end - first);
    uint64_t a0 = p->cur.batch_start[b], a1 = p->cur.batch_start[b + 1];
    for (uint64_t i = a0; i < a1; i++)
        emit_access(p, i, &acc[i - a0]);
    *n_acc = (size_t)(a1 - a0);
    *epoch = p->cur.epoch;
    *batch_index = b;
    return 1;
}

/* ---- life cycle -------------------------------------------------------------------------------- */

static int planner_alloc(planner *p)
{
    size_t nc = (size_t)p->n_chunks, per = p->per_epoch ? (size_t)p->per_epoch : 1;
    void **per_access[] = {(void **)&p->next_use, (void **)&p->victim, (void **)&p->res_end};
    void **per_chunk[] = {(void **)&p->first_pos, (void **)&p->res_start, (void **)&p->start_end,
                          (void **)&p->end, (void **)&p->lastpos, (void **)&p->nextpos, (void **)&p->seen_epoch};
    void **per_slot[] = {(void **)&p->slot_chunk, (void **)&p->key, (void **)&p->last_use, (void **)&p->out_chunk,
                         (void **)&p->slot_gen};
    for (size_t i = 0; i < sizeof per_access / sizeof *per_access; i++)
        if (!(*per_access[i] = malloc(per * sizeof(uint64_t))))
            return H5PACK_ENOMEM;
    for (size_t i = 0; i < sizeof per_chunk / sizeof *per_chunk; i++)
        if (!(*per_chunk[i] = calloc(nc, sizeof(uint64_t))))
            return H5PACK_ENOMEM;
    for (size_t i = 0; i < sizeof per_slot / sizeof *per_slot; i++)
        if (!(*per_slot[i] = calloc(p->slots, sizeof(uint64_t))))
            return H5PACK_ENOMEM;
    p->chunk_slot = calloc(nc, sizeof *p->chunk_slot);
    p->out_slot = calloc(nc, sizeof *p->out_slot);
    p->doomed_pos = calloc(nc, sizeof *p->doomed_pos);
    p->dead = malloc((nc ? nc : 1) * sizeof *p->dead);
    p->doomed = calloc(p->slots, sizeof *p->doomed);
    p->heap = calloc(p->slots, sizeof *p->heap);
    p->heap_pos = calloc(p->slots, sizeof *p->heap_pos);
    if (!p->chunk_slot || !p->out_slot || !p->doomed_pos || !p->doomed || !p->heap || !p->heap_pos || !p->dead)
        return H5PACK_ENOMEM;
    if (epoch_alloc(&p->cur, p) || epoch_alloc(&p->nxt, p))
        return H5PACK_ENOMEM;
    return 0;
}

int h5pack_planner_create(const order_params *op, size_t slots, uint64_t epochs, planner **out)
{
    return h5pack_planner_create_at(op, slots, epochs, 0, 0, 0, out);
}

int h5pack_planner_create_at(const order_params *op, size_t slots, uint64_t epochs, uint64_t start_epoch,
                             uint64_t skip_from, uint64_t skip_to, planner **out)
{
    plan_start start = {start_epoch, 0, skip_from, skip_to};
    return h5pack_planner_create_from(op, slots, epochs, &start, out);
}

int h5pack_planner_create_from(const order_params *op, size_t slots, uint64_t epochs, const plan_start *start,
                               planner **out)
{
    *out = NULL;
    uint64_t skip_from = start->skip_from, skip_to = start->skip_to;
    if (h5pack_order_check(op) || slots == 0 || h5pack_order_n_chunks(op) > UINT32_MAX - 1 || skip_from > skip_to ||
        (skip_to > skip_from && skip_to >= h5pack_order_batches_per_epoch(op)) || start->epoch == UINT64_MAX)
        return H5PACK_EINVAL;
    planner *p = calloc(1, sizeof *p);
    if (!p)
        return H5PACK_ENOMEM;
    p->op = *op;
    /* More slots than chunks never change the plan (nothing is ever evicted then; free slots fill
     * lowest first either way): hold only as many as there are chunks. */
    p->slots = slots < h5pack_order_n_chunks(op) ? slots : (size_t)h5pack_order_n_chunks(op);
    p->epochs = epochs;
    p->n_chunks = h5pack_order_n_chunks(op);
    p->batches_per_epoch = h5pack_order_batches_per_epoch(op);
    p->per_epoch = p->batches_per_epoch * op->batch_size;
    p->start_epoch = start->epoch, p->start_origin = start->origin;
    if (skip_to > skip_from)
        p->skip_b0 = skip_from, p->skip_b1 = skip_to;
    /* A resumed start computes its own epoch alone, and its plan does not look into the next one: a
     * chunk not used again in it counts as never used again. Its hits are Belady's all the same (a chunk
     * needed later in the epoch is never evicted while a dead one is cached); the next epoch may miss a
     * few chunks the lookahead would have kept. What a resume costs is then one epoch's order and plan:
     * the first batch comes that much sooner. A start at epoch 0, batch 0 plans exactly as always (the
     * simulator's counts). */
    int resumed = start->epoch > 0 || skip_to > 0 || start->origin != 0;
    int rc = planner_alloc(p);
    if (rc == 0 && resumed) {
        rc = epoch_compute(p, &p->cur, start->epoch);
        p->nxt_pending = p->cur.valid;
    } else if (rc == 0) {
        rc = compute_first_two(p, start->epoch);
    }
    if (rc)
        goto fail;
    if (skip_to > skip_from)
        p->skip_a0 = p->cur.batch_start[skip_from], p->skip_a1 = p->cur.batch_start[skip_to];
    compute_next_uses(p);
    plan_epoch(p);
    *out = p;
    return 0;
fail:
    h5pack_planner_free(p);
    return rc;
}

void h5pack_planner_free(planner *p)
{
    if (!p)
        return;
    epoch_free(&p->cur), epoch_free(&p->nxt);
    free(p->next_use), free(p->victim), free(p->res_end);
    free(p->first_pos), free(p->res_start), free(p->start_end), free(p->end), free(p->lastpos), free(p->nextpos);
    free(p->seen_epoch);
    free(p->slot_chunk), free(p->key), free(p->last_use), free(p->out_chunk), free(p->slot_gen);
    free(p->chunk_slot), free(p->out_slot), free(p->doomed_pos), free(p->doomed), free(p->heap), free(p->heap_pos);
    free(p->dead);
    free(p);
}
