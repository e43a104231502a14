/* resize_cache.c - per-thread reuse of a fit's coefficient tables. A converter thread fits many images
 * of the same few source sizes to one target, and the tables cost about a tenth of a fit: the last table
 * of each axis is kept (key: the resize_axis_init arguments) and freed when the thread exits. Without a
 * cache (no memory, no thread key) the caller gets tables of its own. */
#include "resize_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct cached_axis {
    uint32_t in, resized, offset, out;
    int valid;
    axis_coeffs ax;
} cached_axis;

typedef struct fit_cache {
    cached_axis h, v;
} fit_cache;

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static int cache_key_ok; /* written once under cache_once */

static void cache_destroy(void *p)
{
    fit_cache *c = p;
    resize_axis_free(&c->h.ax);
    resize_axis_free(&c->v.ax);
    free(c);
}

static void cache_key_create(void)
{
    cache_key_ok = pthread_key_create(&cache_key, cache_destroy) == 0;
}

/* This thread's cache, or NULL (no memory, no key). */
static fit_cache *thread_cache(void)
{
    if (pthread_once(&cache_once, cache_key_create) != 0 || !cache_key_ok)
        return NULL;
    fit_cache *c = pthread_getspecific(cache_key);
    if (!c && (c = calloc(1, sizeof *c)) != NULL && pthread_setspecific(cache_key, c) != 0) {
        free(c);
        c = NULL;
    }
    return c;
}

/* SLOT's table for these resize_axis_init arguments (recomputed when they changed), with the 16-bit
 * weight pairs when WANT_PAIRS. */
static int axis_get(cached_axis *slot, uint32_t in, uint32_t resized, uint32_t offset, uint32_t out, int want_pairs)
{
    if (!slot->valid || slot->in != in || slot->resized != resized || slot->offset != offset || slot->out != out) {
        resize_axis_free(&slot->ax);
        memset(slot, 0, sizeof *slot);
        if (resize_axis_init(&slot->ax, in, resized, offset, out) != 0) {
            resize_axis_free(&slot->ax);
            memset(slot, 0, sizeof *slot);
            return -1;
        }
        slot->in = in;
        slot->resized = resized;
        slot->offset = offset;
        slot->out = out;
        slot->valid = 1;
    }
    return want_pairs && !slot->ax.pairs ? resize_axis_split_pairs(&slot->ax) : 0;
}

int resize_tables_get(resize_tables *t, const fit_geometry *g, uint32_t src_w, uint32_t src_h, int want_pairs_h,
                      int want_pairs_v)
{
    memset(t, 0, sizeof *t);
    fit_cache own = {0}, *cache = thread_cache();
    fit_cache *c = cache ? cache : &own;
    int rc = axis_get(&c->h, src_w, g->rw, g->ox, g->ww, want_pairs_h);
    if (rc == 0)
        rc = axis_get(&c->v, src_h, g->rh, g->oy, g->wh, want_pairs_v);
    if (!cache) { /* the tables now belong to T */
        t->own_h = own.h.ax;
        t->own_v = own.v.ax;
        t->owned = 1;
    }
    t->h = cache ? &c->h.ax : &t->own_h;
    t->v = cache ? &c->v.ax : &t->own_v;
    if (rc != 0)
        resize_tables_release(t);
    return rc;
}

void resize_tables_release(resize_tables *t)
{
    if (t->owned) {
        resize_axis_free(&t->own_h);
        resize_axis_free(&t->own_v);
    }
    memset(t, 0, sizeof *t);
}
