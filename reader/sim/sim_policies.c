/* sim_policies.c - LRU and the model of HDF5 1.10's chunk cache (behaviour described in sim_policies.h). */
#include "sim_policies.h"

#include <stdlib.h>

#include "h5pack.h"

#define NONE UINT64_MAX

/* ---- LRU: a doubly linked list over chunk ids, least recent at the head -------------------------- */

struct lru_sim {
    uint64_t slots, used, n_chunks;
    uint64_t head, tail;
    uint64_t *prev, *next; /* per chunk; valid while cached */
    uint8_t *cached;
};

int h5pack_lru_sim_create(uint64_t slots, uint64_t n_chunks, lru_sim **out)
{
    *out = NULL;
    if (slots == 0 || n_chunks == 0)
        return H5PACK_EINVAL;
    lru_sim *s = calloc(1, sizeof *s);
    if (!s)
        return H5PACK_ENOMEM;
    s->slots = slots;
    s->n_chunks = n_chunks;
    s->head = s->tail = NONE;
    s->prev = malloc(n_chunks * sizeof *s->prev);
    s->next = malloc(n_chunks * sizeof *s->next);
    s->cached = calloc(n_chunks, 1);
    if (!s->prev || !s->next || !s->cached) {
        h5pack_lru_sim_free(s);
        return H5PACK_ENOMEM;
    }
    *out = s;
    return 0;
}

static void lru_unlink(lru_sim *s, uint64_t c)
{
    if (s->prev[c] != NONE)
        s->next[s->prev[c]] = s->next[c];
    else
        s->head = s->next[c];
    if (s->next[c] != NONE)
        s->prev[s->next[c]] = s->prev[c];
    else
        s->tail = s->prev[c];
}

static void lru_append(lru_sim *s, uint64_t c)
{
    s->prev[c] = s->tail;
    s->next[c] = NONE;
    if (s->tail != NONE)
        s->next[s->tail] = c;
    else
        s->head = c;
    s->tail = c;
}

int h5pack_lru_sim_access(lru_sim *s, uint64_t chunk)
{
    if (s->cached[chunk]) {
        lru_unlink(s, chunk);
        lru_append(s, chunk);
        return 1;
    }
    if (s->used == s->slots) {
        uint64_t victim = s->head;
        lru_unlink(s, victim);
        s->cached[victim] = 0;
        s->used--;
    }
    lru_append(s, chunk);
    s->cached[chunk] = 1;
    s->used++;
    return 0;
}

void h5pack_lru_sim_free(lru_sim *s)
{
    if (!s)
        return;
    free(s->prev), free(s->next), free(s->cached);
    free(s);
}

/* ---- HDF5 model: entries indexed by hash slot, on a list whose head is preempted first ----------- */

struct hdf5_sim {
    hdf5_sim_params p;
    uint64_t *occupant;  /* chunk held by each slot, NONE when empty */
    uint64_t *rd_count;  /* bytes not yet read from the slot's chunk */
    uint64_t *prev, *next;
    uint64_t head, tail;
    uint64_t nused, nbytes_used;
};

int h5pack_hdf5_sim_create(const hdf5_sim_params *p, hdf5_sim **out)
{
    *out = NULL;
    if (!p || p->chunk_bytes == 0 || !(p->w0 >= 0.0 && p->w0 <= 1.0))
        return H5PACK_EINVAL;
    hdf5_sim *s = calloc(1, sizeof *s);
    if (!s)
        return H5PACK_ENOMEM;
    s->p = *p;
    s->head = s->tail = NONE;
    size_t n = p->nslots ? (size_t)p->nslots : 1;
    s->occupant = malloc(n * sizeof *s->occupant);
    s->rd_count = calloc(n, sizeof *s->rd_count);
    s->prev = malloc(n * sizeof *s->prev);
    s->next = malloc(n * sizeof *s->next);
    if (!s->occupant || !s->rd_count || !s->prev || !s->next) {
        h5pack_hdf5_sim_free(s);
        return H5PACK_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        s->occupant[i] = NONE;
    *out = s;
    return 0;
}

/* H5D__chunk_cache_evict without the flush (read-only): unlink the entry and free its slot. */
static void hdf5_evict(hdf5_sim *s, uint64_t e)
{
    if (s->prev[e] != NONE)
        s->next[s->prev[e]] = s->next[e];
    else
        s->head = s->next[e];
    if (s->next[e] != NONE)
        s->prev[s->next[e]] = s->prev[e];
    else
        s->tail = s->prev[e];
    s->occupant[e] = NONE;
    s->nused--;
    s->nbytes_used -= s->p.chunk_bytes;
}

static int hdf5_over(const hdf5_sim *s, uint64_t size)
{
    return s->nbytes_used + size > s->p.nbytes_max;
}

/* H5D__chunk_cache_prune: pointer 0 walks from the head and preempts fully read entries; pointer 1
 * starts at the head after (int)(nused * w0) steps and preempts any entry. Both get a chance before
 * either advances. For reads only, HDF5's "completely read" test reduces to rd_count == 0. */
static void hdf5_prune(hdf5_sim *s, uint64_t size)
{
    long w = (long)((double)s->nused * s->p.w0);
    uint64_t p[2] = {s->head, NONE}, n[2];
    while ((p[0] != NONE || p[1] != NONE) && hdf5_over(s, size)) {
        if (w == 0)
            p[1] = s->head;
        for (int i = 0; i < 2; i++)
            n[i] = p[i] != NONE ? s->next[p[i]] : NONE;
        for (int i = 0; i < 2 && hdf5_over(s, size); i++) {
            uint64_t cur = NONE;
            if (i == 0 && p[0] != NONE && s->rd_count[p[0]] == 0)
                cur = p[0];
            else if (i == 1 && p[1] != NONE)
                cur = p[1];
            if (cur == NONE)
                continue;
            for (int j = 0; j < 2; j++) {
                if (p[j] == cur)
                    p[j] = NONE;
                if (n[j] == cur)
                    n[j] = s->next[cur];
            }
            hdf5_evict(s, cur);
        }
        p[0] = n[0], p[1] = n[1];
        w--;
    }
}

/* A hit moves the entry one place towards the tail (HDF5's "LRU" step). */
static void hdf5_promote(hdf5_sim *s, uint64_t e)
{
    uint64_t nx = s->next[e];
    if (nx == NONE)
        return;
    if (s->next[nx] != NONE)
        s->prev[s->next[nx]] = e;
    else
        s->tail = e;
    s->prev[nx] = s->prev[e];
    if (s->prev[e] != NONE)
        s->next[s->prev[e]] = nx;
    else
        s->head = nx;
    s->prev[e] = nx;
    s->next[e] = s->next[nx];
    s->next[nx] = e;
}

static void hdf5_insert(hdf5_sim *s, uint64_t idx, uint64_t chunk)
{
    if (s->occupant[idx] != NONE)
        hdf5_evict(s, idx); /* hash collision: the occupant goes, however recently used */
    hdf5_prune(s, s->p.chunk_bytes);
    s->occupant[idx] = chunk;
    s->rd_count[idx] = s->p.chunk_bytes;
    s->nused++;
    s->nbytes_used += s->p.chunk_bytes;
    s->prev[idx] = s->tail;
    s->next[idx] = NONE;
    if (s->tail != NONE)
        s->next[s->tail] = idx;
    else
        s->head = idx;
    s->tail = idx;
}

static void hdf5_unlock(hdf5_sim *s, uint64_t idx, uint64_t accessed)
{
    s->rd_count[idx] -= accessed < s->rd_count[idx] ? accessed : s->rd_count[idx];
}

int h5pack_hdf5_sim_read(hdf5_sim *s, uint64_t chunk, uint64_t accessed, uint64_t stored_bytes, uint64_t *bytes_read)
{
    int fits = s->p.nslots > 0 && s->p.chunk_bytes <= s->p.nbytes_max;
    if (!s->p.filtered && s->p.chunk_bytes > s->p.nbytes_max) {
        *bytes_read += accessed; /* H5D__chunk_cacheable says no: read the selection straight */
        return 1;
    }
    uint64_t idx = s->p.nslots ? chunk % s->p.nslots : 0;
    if (s->p.nslots > 0 && s->occupant[idx] == chunk) {
        hdf5_promote(s, idx);
        hdf5_unlock(s, idx, accessed);
        return 0;
    }
    *bytes_read += stored_bytes;
    if (fits) {
        hdf5_insert(s, idx, chunk);
        hdf5_unlock(s, idx, accessed);
    }
    return 1;
}

void h5pack_hdf5_sieve_init(hdf5_sieve *s, uint64_t sieve_bytes, uint64_t dataset_bytes)
{
    s->sieve_bytes = sieve_bytes, s->dataset_bytes = dataset_bytes;
    s->start = s->size = 0;
}

int h5pack_hdf5_sieve_read(hdf5_sieve *s, uint64_t offset, uint64_t len, uint64_t *bytes_read)
{
    if (s->size && offset >= s->start && offset + len <= s->start + s->size)
        return 0;
    if (len > s->sieve_bytes) {
        *bytes_read += len; /* too big for the buffer: read straight into the caller's memory */
        return 1;
    }
    uint64_t left = offset < s->dataset_bytes ? s->dataset_bytes - offset : 0;
    s->start = offset;
    s->size = left < s->sieve_bytes ? left : s->sieve_bytes;
    *bytes_read += s->size;
    return 1;
}

uint64_t h5pack_hdf5_sim_cached(const hdf5_sim *s)
{
    return s->nused;
}

void h5pack_hdf5_sim_free(hdf5_sim *s)
{
    if (!s)
        return;
    free(s->occupant), free(s->rd_count), free(s->prev), free(s->next);
    free(s);
}
