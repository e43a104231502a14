/* chunksrc_probe.c - opens the file once in a forked child before opening it here (isolate.h: why, and
 * why the fork is safe). A file the child opened cleanly takes the same code paths here. The child also
 * looks up every chunk's stored size (that walks the whole chunk index, the metadata later reads depend
 * on) and sends the sizes back, so the parent never needs to ask again (up to PROBE_MAX_SIZES chunks;
 * beyond that the parent learns sizes as reads ask for them).
 *
 * When: files in the latest format (superblock version 2 or 3, what h5pack writes) checksum all their
 * metadata, so damage is caught by HDF5 itself: no probe, no fork. Older-format files (h5py's default,
 * superblock 0/1) and files whose superblock we cannot find are probed. H5PACK_PROBE=always probes
 * every file (a file crafted with valid checksums), H5PACK_PROBE=never none (debugging). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunksrc_impl.h"
#include "isolate.h"

#define PROBE_MAGIC 0x68357062u /* "h5pb" */
#define PROBE_BLOCK 4096           /* stored sizes per message block */
#define PROBE_MAX_SIZES ((uint64_t)1 << 20) /* the child learns at most this many (8 MiB); the rest lazily */

typedef struct probe_header {
    uint32_t magic;
    int32_t rc;
    uint64_t n_stored;
    char err[1024];
} probe_header;

/* What the probe's two sides share: the open's arguments (the child's copy) and the reply (the parent's). */
typedef struct probe_job {
    store *st;
    const char *path, *images, *labels;
    h5pack_layout hint;
    probe_header h;
    uint64_t *stored;
} probe_job;

/* Sends the sizes as they are learnt, a block at a time: the parent's timeout is for silence, so a
 * large index that takes long to walk is fine, and a walk stuck in a loop is caught. */
static int send_stored_sizes(int fd, chunk_source *s, uint64_t n)
{
    for (uint64_t first = 0; first < n; first += PROBE_BLOCK) {
        uint64_t end = first + PROBE_BLOCK < n ? first + PROBE_BLOCK : n;
        for (uint64_t i = first; i < end; i++) {
            uint64_t size; /* on failure the entry stays unknown: the read will report it, naming the chunk */
            (void)h5pack_chunksrc_query_stored_locked(s, i, &size);
        }
        if (h5pack_isolate_write(fd, s->stored + first, (end - first) * sizeof *s->stored) != 0)
            return -1;
    }
    return 0;
}

static void probe_child(int fd, void *ctx)
{
    probe_job *j = ctx;
    probe_header h;
    chunk_source *s = NULL;
    uint32_t trailer = PROBE_MAGIC;
    h5pack_h5_quiet q;
    memset(&h, 0, sizeof h);
    h.magic = PROBE_MAGIC;
    h5pack_h5_quiet_begin(&q);
    h.rc = h5pack_chunksrc_open_in_process(j->st, j->path, j->images, j->labels, j->hint, &s, h.err, sizeof h.err);
    if (h.rc == 0 && s->stored)
        h.n_stored = s->g.n_chunks < PROBE_MAX_SIZES ? s->g.n_chunks : PROBE_MAX_SIZES;
    if (h5pack_isolate_write(fd, &h, sizeof h) != 0 || (h.n_stored && send_stored_sizes(fd, s, h.n_stored) != 0))
        return;
    h5pack_isolate_write(fd, &trailer, sizeof trailer);
}

/* 1: header, sizes and trailer all arrived; 0: the reply ended early; -2: the child fell silent. */
static int probe_reply(int fd, int silence_ms, void *ctx)
{
    probe_job *j = ctx;
    size_t got;
    uint32_t trailer = 0;
    int rc = h5pack_isolate_read(fd, &j->h, sizeof j->h, &got, silence_ms);
    if (rc || got != sizeof j->h || j->h.magic != PROBE_MAGIC || j->h.n_stored > PROBE_MAX_SIZES)
        return rc == -2 ? -2 : 0;
    j->h.err[sizeof j->h.err - 1] = '\0';
    if (j->h.n_stored) {
        size_t bytes = j->h.n_stored * sizeof *j->stored;
        j->stored = malloc(bytes);
        if (!j->stored)
            return 0;
        rc = h5pack_isolate_read(fd, j->stored, bytes, &got, silence_ms);
        if (rc || got != bytes)
            return rc == -2 ? -2 : 0;
    }
    rc = h5pack_isolate_read(fd, &trailer, sizeof trailer, &got, silence_ms);
    if (rc == -2)
        return -2;
    return rc == 0 && got == sizeof trailer && trailer == PROBE_MAGIC;
}

int h5pack_chunksrc_probe(store *st, const char *path, const char *images, const char *labels, h5pack_layout hint,
                          uint64_t **stored, uint64_t *n_stored, char *err, size_t err_len)
{
    *stored = NULL;
    *n_stored = 0;
    if (!h5pack_isolate_wanted(st))
        return 0;
    probe_job j = {.st = st, .path = path, .images = images, .labels = labels, .hint = hint};
    int rc = h5pack_isolate_run(path, "reading the file's metadata", probe_child, probe_reply, &j, err, err_len);
    if (rc == 1) /* no child (no pipe, no fork): open without the probe */
        rc = 0;
    else if (rc == 0 && j.h.rc != 0) {
        if (err && err_len)
            snprintf(err, err_len, "%s", j.h.err);
        rc = j.h.rc;
    } else if (rc == 0) {
        *stored = j.stored;
        *n_stored = j.h.n_stored;
        j.stored = NULL;
    }
    free(j.stored);
    return rc;
}
