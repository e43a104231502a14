/* chunksrc_probe.c - opens the file once in the helper process before opening it here (isolate.h: why
 * another process, and which). A file the helper opened cleanly takes the same code paths here. The
 * helper also looks up every chunk's stored size (that walks the whole chunk index, the metadata later
 * reads depend on) and sends the sizes back, so this process never needs to ask again (up to
 * PROBE_MAX_SIZES chunks; beyond that the reader learns sizes as reads ask for them).
 *
 * When: files in the latest format (superblock version 2 or 3, what h5pack writes) checksum all their
 * metadata, so damage is caught by HDF5 itself: no probe. Older-format files (h5py's default, superblock
 * 0/1) and files whose superblock we cannot find are probed. H5PACK_PROBE=always probes every file (a
 * file crafted with valid checksums), H5PACK_PROBE=never none (debugging).
 *
 * The job "probe": arguments LOCATION SIZE IMAGES HINT [LABELS] (no LABELS: NULL); reply: a probe_header,
 * its n_stored sizes, PROBE_MAGIC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunksrc_impl.h"
#include "isolate.h"

#define PROBE_MAGIC 0x68357062u /* "h5pb" */
#define PROBE_BLOCK 4096           /* stored sizes per message block */
#define PROBE_MAX_SIZES ((uint64_t)1 << 20) /* the helper learns at most this many (8 MiB); the rest lazily */

typedef struct probe_header {
    uint32_t magic;
    int32_t rc;
    uint64_t n_stored;
    char err[1024];
} probe_header;

/* This process's side: the reply as it arrives. */
typedef struct probe_job {
    probe_header h;
    uint64_t *stored;
} probe_job;

/* Sends the sizes as they are learnt, a block at a time: the waiting side's limit is on silence, so a
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

void h5pack_chunksrc_probe_job(int fd, int n, char **args)
{
    probe_header h;
    chunk_source *s = NULL;
    store *st = NULL;
    uint32_t trailer = PROBE_MAGIC;
    h5pack_h5_quiet q;
    if (n < 4 || n > 5)
        _exit(2);
    const char *path = args[0], *images = args[2], *labels = n > 4 ? args[4] : NULL;
    h5pack_layout hint = (h5pack_layout)(unsigned)h5pack_isolate_arg_u64(args[3]);
    memset(&h, 0, sizeof h);
    h.magic = PROBE_MAGIC;
    h5pack_h5_quiet_begin(&q);
    h.rc = h5pack_isolate_open_store(path, args[1], &st, h.err, sizeof h.err);
    if (h.rc == 0)
        h.rc = h5pack_chunksrc_open_in_process(st, path, images, labels, hint, &s, h.err, sizeof h.err);
    if (h.rc == 0 && s->stored)
        h.n_stored = s->g.n_chunks < PROBE_MAX_SIZES ? s->g.n_chunks : PROBE_MAX_SIZES;
    if (h5pack_isolate_write(fd, &h, sizeof h) != 0 || (h.n_stored && send_stored_sizes(fd, s, h.n_stored) != 0))
        return;
    h5pack_isolate_write(fd, &trailer, sizeof trailer);
}

/* 1: header, sizes and trailer all arrived; 0: the reply ended early; -2: the helper fell silent. */
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
    probe_job j = {.stored = NULL};
    char size[24], layout[16];
    snprintf(size, sizeof size, "%llu", (unsigned long long)st->size);
    snprintf(layout, sizeof layout, "%u", (unsigned)hint);
    const char *args[] = {"probe", path, size, images, layout, labels, NULL}; /* labels NULL ends them early */
    int rc = h5pack_isolate_run(path, "reading the file's metadata", args, probe_reply, &j, err, err_len);
    if (rc == 1) /* no helper: open without the probe */
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
