/* store_http_ahead.c - the remote stores' read-ahead (store_http.h): the reader announces the chunk reads
 * it will make, in plan order (store.h, will_read), and one thread per object keeps many of them in flight
 * with libcurl's multi interface (its connections kept open between requests), so that a worker's read
 * finds its bytes fetched, or on their way, instead of paying a round trip of its own. Without it each
 * worker waited for its one request: 2 threads 20 ms from the data had 2 requests in flight.
 *
 * How many in flight (Little's law): the bytes per second reads take times a request's time (latency to
 * the first byte plus the transfer, both measured on every answer), over a request's bytes, doubled; at
 * least HTTP_AHEAD_MIN, at most HTTP_AHEAD_MAX or H5PACK_HTTP_INFLIGHT. How many bytes: what is in flight,
 * what was fetched but not yet read and the spare buffers stay within the budget the reader gives
 * (limit_views: its cache's size); a fetch that would pass it waits until reads take bytes out.
 *
 * Every fetch is judged as a worker's read is (store_http_get.c): the same retries and backoff, the ETag
 * and size compared, and a failure kept with its cause for the read that takes it. A read that finds its
 * range announced but not yet started requests it itself (one request either way). Announcements that no
 * read takes (the reader stopped early) are dropped once reads far past them came. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "errtext.h"
#include "h5pack.h"
#include "store_http.h"

#define AHEAD_ENTRIES 1024   /* announcements kept; later ones are dropped until reads take some */
#define AHEAD_STALE_GAP 512  /* an entry this many announcements older than one a read took is not read */
#define RATE_WINDOW_S 0.05   /* the reads' rate is measured over windows this long */
#define AHEAD_SPARES 64      /* buffers kept for the next fetches (a new one costs its page faults) */

enum { ENTRY_FREE, ENTRY_QUEUED, ENTRY_FLIGHT, ENTRY_RETRY, ENTRY_DONE, ENTRY_FAILED };

/* One announced range: its fetch and, until reads took all of it, its bytes. */
typedef struct ahead_entry {
    uint64_t offset, len, seq; /* seq: the announcement's number, in order */
    int state, tries, readers; /* readers: copying out of bytes now */
    int flight;                /* ENTRY_FLIGHT: its request in flights[] */
    double retry_at;           /* ENTRY_RETRY: when to try again (monotonic seconds) */
    uint8_t *bytes;            /* from its first try on; its cap bytes counted in held */
    uint64_t cap;
    uint64_t served;           /* bytes reads took */
    int rc;                    /* ENTRY_FAILED: the code, the message in err */
    char *err;
} ahead_entry;

struct http_ahead {
    http_remote *r;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t landed;     /* an entry left flight: for the reads that wait on it */
    CURLM *multi;
    ahead_entry e[AHEAD_ENTRIES]; /* entry of seq s: e[s % AHEAD_ENTRIES]; live: seq in [head, tail) */
    uint64_t head, tail, taken_seq;
    http_request flights[HTTP_AHEAD_MAX];
    int flight_used[HTTP_AHEAD_MAX];
    int in_flight, cap, stop;
    uint64_t held, budget;     /* held: bytes of the entries' buffers; with the spares', within budget */
    struct { uint8_t *p; uint64_t cap; } spares[AHEAD_SPARES];
    int n_spares;
    uint64_t spare_bytes;
    double latency_s, transfer_s; /* averages over answers (per request: first byte, then the body) */
    double request_bytes;      /* average bytes of a request */
    double take_rate;          /* bytes per second reads take, averaged over windows */
    double window_start;
    uint64_t window_bytes;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Requests to keep in flight now (Little's law): the bytes reads take per second times a request's time,
 * over the bytes of a request, doubled so that the reads are never what waits (while the read-ahead is
 * what holds them back, their rate is what it fetches, and the doubling grows it round trip by round
 * trip, up to the cap and the budget). Before anything was measured: twice the minimum. */
static int in_flight_target(const http_ahead *a)
{
    double n = 2.0 * HTTP_AHEAD_MIN;
    if (a->take_rate > 0 && a->request_bytes > 0)
        n = ceil(2.0 * a->take_rate * (a->latency_s + a->transfer_s) / a->request_bytes);
    int lo = HTTP_AHEAD_MIN < a->cap ? HTTP_AHEAD_MIN : a->cap;
    return n > (double)a->cap ? a->cap : n < (double)lo ? lo : (int)n;
}

/* Reads took LEN more bytes: the rate over windows of RATE_WINDOW_S, averaged. */
static void note_taken(http_ahead *a, uint64_t len)
{
    double now = now_s();
    if (a->window_start == 0)
        a->window_start = now;
    a->window_bytes += len;
    if (now - a->window_start < RATE_WINDOW_S)
        return;
    double rate = (double)a->window_bytes / (now - a->window_start);
    a->take_rate = a->take_rate > 0 ? a->take_rate + 0.5 * (rate - a->take_rate) : rate;
    a->window_start = now, a->window_bytes = 0;
}

static void note_timing(http_ahead *a, const http_request *q)
{
    double latency = q->first_byte_s, transfer = q->total_s - q->first_byte_s;
    if (q->total_s <= 0 || transfer < 0)
        return;
    if (transfer < 1e-5)
        transfer = 1e-5;
    if (a->transfer_s <= 0)
        a->latency_s = latency, a->transfer_s = transfer, a->request_bytes = (double)q->cap;
    a->latency_s += 0.2 * (latency - a->latency_s);
    a->transfer_s += 0.2 * (transfer - a->transfer_s);
    a->request_bytes += 0.2 * ((double)q->cap - a->request_bytes);
}

/* A buffer for LEN bytes (its size in *CAP): a spare one not much larger, else a new one, spares freed
 * first as far as the budget asks. NULL without memory. Caller holds the lock. */
static uint8_t *buffer_get(http_ahead *a, uint64_t len, uint64_t *cap)
{
    for (int i = 0; i < a->n_spares; i++)
        if (a->spares[i].cap >= len && a->spares[i].cap <= 2 * len) {
            uint8_t *p = a->spares[i].p;
            *cap = a->spares[i].cap;
            a->spare_bytes -= *cap;
            a->spares[i] = a->spares[--a->n_spares];
            return p;
        }
    while (a->n_spares > 0 && a->held + a->spare_bytes + len > a->budget) {
        a->n_spares--;
        a->spare_bytes -= a->spares[a->n_spares].cap;
        free(a->spares[a->n_spares].p);
    }
    *cap = len;
    return malloc(len);
}

/* P (CAP bytes) is no longer used: kept as a spare while the budget has room, else freed. */
static void buffer_put(http_ahead *a, uint8_t *p, uint64_t cap)
{
    if (p && a->n_spares < AHEAD_SPARES && a->held + a->spare_bytes + cap <= a->budget) {
        a->spares[a->n_spares].p = p, a->spares[a->n_spares].cap = cap;
        a->n_spares++, a->spare_bytes += cap;
    } else {
        free(p);
    }
}

/* Frees E's bytes and the entry; moves head past freed entries; wakes the reads that wait on it (they
 * request it themselves then). Caller holds the lock. */
static void release(http_ahead *a, ahead_entry *e)
{
    pthread_cond_broadcast(&a->landed);
    if (e->bytes) {
        a->held -= e->cap;
        buffer_put(a, e->bytes, e->cap);
    }
    free(e->err);
    *e = (ahead_entry){.state = ENTRY_FREE};
    while (a->head < a->tail && a->e[a->head % AHEAD_ENTRIES].state == ENTRY_FREE)
        a->head++;
}

/* Entries far behind the newest read are not going to be read (the reader stopped, or read elsewhere). */
static void drop_stale(http_ahead *a)
{
    for (uint64_t s = a->head; s < a->tail && s + AHEAD_STALE_GAP < a->taken_seq; s++) {
        ahead_entry *e = &a->e[s % AHEAD_ENTRIES];
        if (e->state != ENTRY_FREE && e->state != ENTRY_FLIGHT && e->state != ENTRY_RETRY && e->readers == 0)
            release(a, e);
    }
}

/* ---- the thread: starting fetches, judging answers ------------------------------------------------ */

static int free_flight(const http_ahead *a)
{
    for (int i = 0; i < HTTP_AHEAD_MAX; i++)
        if (!a->flight_used[i])
            return i;
    return -1;
}

/* Starts E's next try: a request into its bytes, added to the multi handle. Caller holds the lock, which
 * is let go while the request is made (signing, the pool). 0, or -1: E was dropped or failed. */
static int start(http_ahead *a, ahead_entry *e)
{
    int f = free_flight(a);
    if (f < 0)
        return -1;
    if (!e->bytes) {
        if (!(e->bytes = buffer_get(a, e->len, &e->cap))) { /* no room: the worker reads it into its own buffer */
            release(a, e);
            return -1;
        }
        a->held += e->cap;
    }
    e->state = ENTRY_FLIGHT, e->flight = f, e->tries++;
    a->flight_used[f] = 1, a->in_flight++;
    http_request *q = &a->flights[f];
    pthread_mutex_unlock(&a->lock);
    int rc = h5pack_http_request_start(a->r, q, "GET", e->offset, e->len, e->bytes);
    if (rc == 0 && curl_multi_add_handle(a->multi, q->h) != CURLM_OK) {
        h5pack_http_request_end(q, CURLE_OUT_OF_MEMORY);
        rc = -1;
    }
    pthread_mutex_lock(&a->lock);
    if (rc == 0)
        return 0;
    a->flight_used[f] = 0, a->in_flight--;
    release(a, e); /* the worker's own read reports why (signing, memory) */
    pthread_cond_broadcast(&a->landed);
    return -1;
}

/* Whether E's turn has come: queued, or its backoff over. */
static int due(const ahead_entry *e, double now)
{
    return e->state == ENTRY_QUEUED || (e->state == ENTRY_RETRY && now >= e->retry_at);
}

/* Starts what is due, in announcement order, within the target and the budget. Caller holds the lock. */
static void start_due(http_ahead *a)
{
    double now = now_s();
    int target = in_flight_target(a);
    for (uint64_t s = a->head; s < a->tail && a->in_flight < target && !a->stop; s++) {
        ahead_entry *e = &a->e[s % AHEAD_ENTRIES];
        if (!due(e, now))
            continue;
        if (atomic_load(&a->r->changed)) { /* the reads report it; no request for them */
            release(a, e);
            continue;
        }
        if (!e->bytes && a->held + e->len > a->budget)
            break; /* in order: a later, smaller one would take bytes the next read needs */
        start(a, e);
    }
}

/* The entry whose request is Q. */
static ahead_entry *entry_of(http_ahead *a, const http_request *q)
{
    int f = (int)(q - a->flights);
    for (uint64_t s = a->head; s < a->tail; s++)
        if (a->e[s % AHEAD_ENTRIES].state == ENTRY_FLIGHT && a->e[s % AHEAD_ENTRIES].flight == f)
            return &a->e[s % AHEAD_ENTRIES];
    return NULL;
}

/* Q's transfer ended with RESULT: its entry is done, waits to be tried again, or failed for good. */
static void finish(http_ahead *a, http_request *q, CURLcode result)
{
    curl_multi_remove_handle(a->multi, q->h);
    h5pack_http_request_end(q, result);
    pthread_mutex_lock(&a->lock);
    ahead_entry *e = entry_of(a, q);
    pthread_mutex_unlock(&a->lock);
    if (!e)
        return; /* cannot be: every request in flight is an entry's */
    char cause[512];
    int again = 0; /* judged without the lock: it may mark the object changed (R's lock) */
    int rc = h5pack_http_judge_get(a->r, e->offset, (size_t)e->len, &q->a, cause, sizeof cause, &again);
    pthread_mutex_lock(&a->lock);
    a->flight_used[e->flight] = 0, a->in_flight--;
    if (rc == 0) {
        note_timing(a, q);
        e->state = ENTRY_DONE;
    } else if (again && e->tries <= a->r->cfg.retries) {
        e->state = ENTRY_RETRY;
        e->retry_at = now_s() + h5pack_http_backoff_s(a->r, e->tries);
    } else {
        char msg[640];
        e->rc = h5pack_http_get_failed(rc, e->offset, (size_t)e->len, cause, e->tries, msg, sizeof msg);
        e->err = strdup(msg);
        e->state = ENTRY_FAILED;
        a->held -= e->cap;
        buffer_put(a, e->bytes, e->cap);
        e->bytes = NULL;
    }
    pthread_cond_broadcast(&a->landed);
    pthread_mutex_unlock(&a->lock);
}

/* How long the thread may sleep: until the next retry is due, else until woken (1 s at most). */
static int sleep_ms(http_ahead *a)
{
    double now = now_s(), until = now + 1.0;
    pthread_mutex_lock(&a->lock);
    for (uint64_t s = a->head; s < a->tail; s++) {
        const ahead_entry *e = &a->e[s % AHEAD_ENTRIES];
        if (e->state == ENTRY_RETRY && e->retry_at < until)
            until = e->retry_at;
    }
    pthread_mutex_unlock(&a->lock);
    return until <= now ? 0 : (int)((until - now) * 1000.0) + 1;
}

static void *ahead_main(void *arg)
{
    http_ahead *a = arg;
    pthread_mutex_lock(&a->lock);
    while (!a->stop) {
        start_due(a);
        pthread_mutex_unlock(&a->lock);
        int running = 0, left = 0;
        curl_multi_perform(a->multi, &running);
        CURLMsg *m;
        while ((m = curl_multi_info_read(a->multi, &left)) != NULL) {
            http_request *q = NULL;
            if (m->msg == CURLMSG_DONE && curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&q) == CURLE_OK &&
                q)
                finish(a, q, m->data.result);
        }
        curl_multi_poll(a->multi, NULL, 0, sleep_ms(a), NULL);
        pthread_mutex_lock(&a->lock);
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

/* ---- made on the first announcement, ended at close ----------------------------------------------- */

static http_ahead *ahead_new(http_remote *r)
{
    http_ahead *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->r = r, a->cap = r->cfg.in_flight, a->budget = r->ahead_budget;
    if (!(a->multi = curl_multi_init())) {
        free(a);
        return NULL;
    }
    curl_multi_setopt(a->multi, CURLMOPT_MAXCONNECTS, (long)HTTP_AHEAD_MAX); /* connections kept open */
    if (pthread_mutex_init(&a->lock, NULL) != 0 || pthread_cond_init(&a->landed, NULL) != 0 ||
        pthread_create(&a->thread, NULL, ahead_main, a) != 0) { /* (a failed init is not destroyed: none leaks) */
        curl_multi_cleanup(a->multi);
        free(a);
        return NULL;
    }
    return a;
}

void h5pack_http_ahead_free(http_remote *r)
{
    http_ahead *a = r->ahead;
    if (!a)
        return;
    pthread_mutex_lock(&a->lock);
    a->stop = 1;
    pthread_mutex_unlock(&a->lock);
    curl_multi_wakeup(a->multi);
    pthread_join(a->thread, NULL);
    for (int f = 0; f < HTTP_AHEAD_MAX; f++)
        if (a->flight_used[f]) {
            curl_multi_remove_handle(a->multi, a->flights[f].h);
            h5pack_http_request_end(&a->flights[f], CURLE_ABORTED_BY_CALLBACK);
        }
    for (int i = 0; i < AHEAD_ENTRIES; i++)
        free(a->e[i].bytes), free(a->e[i].err);
    for (int i = 0; i < a->n_spares; i++)
        free(a->spares[i].p);
    curl_multi_cleanup(a->multi);
    pthread_cond_destroy(&a->landed);
    pthread_mutex_destroy(&a->lock);
    free(a);
    r->ahead = NULL;
}

/* ---- the store API's side ------------------------------------------------------------------------ */

void h5pack_http_store_limit(store *s, uint64_t bytes)
{
    ((http_remote *)s)->ahead_budget = bytes;
}

unsigned h5pack_http_store_reads_ahead(const store *s)
{
    const http_remote *r = (const http_remote *)s;
    return r->ahead_budget > 0 ? (unsigned)r->cfg.in_flight : 0;
}

/* Called by the reader's planning, one thread at a time; the read-ahead is made on the first call. */
void h5pack_http_store_will_read(store *s, uint64_t offset, uint64_t len)
{
    http_remote *r = (http_remote *)s;
    if (r->ahead_budget == 0 || len > r->ahead_budget || atomic_load(&r->changed))
        return;
    pthread_mutex_lock(&r->lock); /* made once: reads look at r->ahead under this lock too */
    if (!r->ahead && r->cfg.in_flight > 0)
        r->ahead = ahead_new(r);
    http_ahead *a = r->ahead;
    pthread_mutex_unlock(&r->lock);
    if (!a)
        return;
    pthread_mutex_lock(&a->lock);
    int room = a->tail - a->head < AHEAD_ENTRIES;
    if (room)
        a->e[a->tail % AHEAD_ENTRIES] = (ahead_entry){.offset = offset, .len = len, .seq = a->tail, .state = ENTRY_QUEUED};
    a->tail += room;
    pthread_mutex_unlock(&a->lock);
    if (room)
        curl_multi_wakeup(a->multi);
}

/* The oldest live entry that holds [OFFSET, OFFSET + LEN) whole. Caller holds the lock. */
static ahead_entry *find(http_ahead *a, uint64_t offset, uint64_t len)
{
    for (uint64_t s = a->head; s < a->tail; s++) {
        ahead_entry *e = &a->e[s % AHEAD_ENTRIES];
        if (e->state != ENTRY_FREE && e->offset <= offset && offset + len <= e->offset + e->len)
            return e;
    }
    return NULL;
}

/* A read took LEN bytes of E: E goes once reads took all of it. Caller holds the lock. */
static void served(http_ahead *a, ahead_entry *e, uint64_t len)
{
    e->served += len;
    note_taken(a, len);
    if (e->seq > a->taken_seq)
        a->taken_seq = e->seq;
    if (e->served >= e->len && e->readers == 0)
        release(a, e);
    drop_stale(a);
}

int h5pack_http_ahead_take(http_remote *r, uint64_t offset, void *dst, size_t len, int *rc, char *err,
                           size_t err_len)
{
    pthread_mutex_lock(&r->lock);
    http_ahead *a = r->ahead;
    pthread_mutex_unlock(&r->lock);
    if (!a || len == 0)
        return 0;
    pthread_mutex_lock(&a->lock);
    ahead_entry *e;
    while ((e = find(a, offset, len)) != NULL && (e->state == ENTRY_FLIGHT || e->state == ENTRY_RETRY))
        pthread_cond_wait(&a->landed, &a->lock); /* then looked up again: it may have gone meanwhile */
    if (e && e->state == ENTRY_QUEUED) { /* not started: the worker's own request, now */
        release(a, e);
        e = NULL;
    }
    if (!e) {
        pthread_mutex_unlock(&a->lock);
        return 0;
    }
    if (e->state == ENTRY_FAILED) {
        *rc = h5pack_errf(e->rc, err, err_len, "%s", e->err ? e->err : h5pack_strerror(e->rc));
    } else { /* copied without the lock: the entry stays while it has readers */
        e->readers++;
        pthread_mutex_unlock(&a->lock);
        memcpy(dst, e->bytes + (offset - e->offset), len);
        pthread_mutex_lock(&a->lock);
        e->readers--;
        *rc = 0;
    }
    served(a, e, len);
    pthread_mutex_unlock(&a->lock);
    curl_multi_wakeup(a->multi); /* bytes went out of the budget */
    return 1;
}
