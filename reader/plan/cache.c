/* cache.c - chunk slots with generations (rules in cache.h). One mutex guards the execution state of
 * every slot; each slot has its own condition variable, so a finished load or use wakes only the workers
 * waiting on that slot. The planned-user counters are touched only in plan order, under the caller's
 * planning lock. */
#include "cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct cache_slot {
    uint64_t gen;       /* generation in the buffer (or being loaded); 0 = never loaded */
    int state;          /* 1 loaded, 0 loading, < 0 the load's error code */
    uint64_t done;      /* finished uses of `gen` */
    uint64_t planned;   /* plan side: uses planned so far of the newest planned generation */
    const uint8_t *data; /* the chunk's bytes: the slot's buffer, or what the load lent */
    pthread_cond_t cv;
} cache_slot;

struct chunk_cache {
    size_t n_slots, chunk_bytes;
    uint8_t *data;
    cache_slot *slots;
    size_t cv_inited;
    pthread_mutex_t lock;
    int stopped;
    cache_load_fn load;
    void *ctx;
};

int h5pack_cache_create(size_t slots, size_t chunk_bytes, cache_load_fn load, void *ctx, chunk_cache **out)
{
    *out = NULL;
    if (slots == 0 || chunk_bytes == 0 || slots > SIZE_MAX / chunk_bytes)
        return H5PACK_EINVAL;
    chunk_cache *c = calloc(1, sizeof *c);
    if (!c)
        return H5PACK_ENOMEM;
    c->n_slots = slots, c->chunk_bytes = chunk_bytes, c->load = load, c->ctx = ctx;
    pthread_mutex_init(&c->lock, NULL);
    c->slots = calloc(slots, sizeof *c->slots);
    c->data = malloc(slots * chunk_bytes);
    if (!c->slots || !c->data)
        goto fail;
    for (; c->cv_inited < slots; c->cv_inited++) {
        c->slots[c->cv_inited].state = 1; /* generation 0: empty, "loaded", no users */
        c->slots[c->cv_inited].data = c->data + c->cv_inited * chunk_bytes;
        if (pthread_cond_init(&c->slots[c->cv_inited].cv, NULL))
            goto fail;
    }
    *out = c;
    return 0;
fail:
    h5pack_cache_free(c);
    return H5PACK_ENOMEM;
}

void h5pack_cache_free(chunk_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->cv_inited; i++)
        pthread_cond_destroy(&c->slots[i].cv);
    pthread_mutex_destroy(&c->lock);
    free(c->slots), free(c->data), free(c);
}

size_t h5pack_cache_slot_count(const chunk_cache *c)
{
    return c->n_slots;
}

uint64_t h5pack_cache_planned(chunk_cache *c, const plan_access *a)
{
    cache_slot *s = &c->slots[a->slot];
    if (!a->load) {
        s->planned++;
        return 0;
    }
    uint64_t previous_users = s->planned;
    s->planned = 1; /* the load itself uses the new generation */
    return previous_users;
}

/* Whether access A could go ahead now without waiting: a load needs the previous generation in place
 * and all its planned uses finished; a hit needs its generation loaded. */
static int ready_now(const cache_slot *s, const plan_access *a, uint64_t wait_users)
{
    if (a->load)
        return s->gen + 1 == a->slot_gen && s->state != 0 && s->done >= wait_users;
    return s->gen == a->slot_gen && s->state != 0;
}

static int wait_for_previous_users(chunk_cache *c, cache_slot *s, const plan_access *a, uint64_t wait_users)
{
    while (!c->stopped && !ready_now(s, a, wait_users))
        pthread_cond_wait(&s->cv, &c->lock);
    return c->stopped ? H5PACK_ESTATE : 0;
}

static int load_into_slot(chunk_cache *c, cache_slot *s, const plan_access *a, void *worker, char *err,
                          size_t err_len)
{
    uint8_t *own = c->data + (size_t)a->slot * c->chunk_bytes;
    const uint8_t *data = s->data; /* the previous generation's bytes: its users are all done */
    s->gen = a->slot_gen, s->state = 0, s->done = 0;
    pthread_mutex_unlock(&c->lock);
    int rc = c->load(c->ctx, worker, a->chunk, own, &data, err, err_len);
    pthread_mutex_lock(&c->lock);
    s->data = data;
    s->state = rc < 0 ? rc : 1;
    pthread_cond_broadcast(&s->cv);
    return rc < 0 ? rc : 0;
}

static int wait_until_loaded(chunk_cache *c, cache_slot *s, const plan_access *a, char *err, size_t err_len)
{
    while (!c->stopped && !ready_now(s, a, 0))
        pthread_cond_wait(&s->cv, &c->lock);
    if (c->stopped)
        return H5PACK_ESTATE;
    if (s->state < 0) {
        if (err && err_len)
            snprintf(err, err_len, "chunk %llu could not be loaded (see the earlier error)",
                     (unsigned long long)a->chunk);
        return s->state;
    }
    return 0;
}

int h5pack_cache_load_ready(chunk_cache *c, const plan_access *a, uint64_t wait_users)
{
    pthread_mutex_lock(&c->lock);
    int ready = !c->stopped && ready_now(&c->slots[a->slot], a, wait_users);
    pthread_mutex_unlock(&c->lock);
    return ready;
}

int h5pack_cache_load(chunk_cache *c, const plan_access *a, uint64_t wait_users, int try_only, void *worker,
                      char *err, size_t err_len)
{
    cache_slot *s = &c->slots[a->slot];
    pthread_mutex_lock(&c->lock);
    int rc;
    if (try_only && !c->stopped && !ready_now(s, a, wait_users))
        rc = CACHE_WOULD_WAIT;
    else if ((rc = wait_for_previous_users(c, s, a, wait_users)) == 0)
        rc = load_into_slot(c, s, a, worker, err, err_len);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int h5pack_cache_use(chunk_cache *c, const plan_access *a, int try_only, const uint8_t **data, char *err,
                     size_t err_len)
{
    cache_slot *s = &c->slots[a->slot];
    plan_access use = *a;
    use.load = 0; /* the use waits for the generation itself, whatever kind of access it belongs to */
    pthread_mutex_lock(&c->lock);
    int rc = try_only && !c->stopped && !ready_now(s, &use, 0) ? CACHE_WOULD_WAIT
                                                                 : wait_until_loaded(c, s, &use, err, err_len);
    *data = s->data; /* read under the lock: the load that set it finished before */
    pthread_mutex_unlock(&c->lock);
    return rc;
}

int h5pack_cache_acquire(chunk_cache *c, const plan_access *a, uint64_t wait_users, int try_only, void *worker,
                  const uint8_t **data, char *err, size_t err_len)
{
    if (a->load) {
        int rc = h5pack_cache_load(c, a, wait_users, try_only, worker, err, err_len);
        if (rc == CACHE_WOULD_WAIT)
            return rc;
        if (rc < 0) { /* keep the load's own message (the use would only point back at it) */
            *data = NULL;
            return rc;
        }
    }
    return h5pack_cache_use(c, a, a->load ? 0 : try_only, data, err, err_len);
}

void h5pack_cache_finish(chunk_cache *c, uint32_t slot)
{
    cache_slot *s = &c->slots[slot];
    pthread_mutex_lock(&c->lock);
    s->done++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&c->lock);
}

void h5pack_cache_stop(chunk_cache *c)
{
    pthread_mutex_lock(&c->lock);
    c->stopped = 1;
    for (size_t i = 0; i < c->n_slots; i++)
        pthread_cond_broadcast(&c->slots[i].cv);
    pthread_mutex_unlock(&c->lock);
}
