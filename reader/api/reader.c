/* reader.c - the public reader API of h5pack.h: open, next/release, stats, info, close, and the error
 * messages. What it reads (whole images, patches, ...) is the stream's business (stream.h): nothing here
 * asks what kind of file it has. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_structs.h"
#include "clock.h"
#include "errtext.h"
#include "h5pack.h"
#include "reader_impl.h"
#include "store.h"
#include "timeline.h"

static char *copy_string(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    return c ? memcpy(c, s, n) : NULL;
}

/* ---- open ---------------------------------------------------------------------------------------- */

/* Everything after the config check; on failure r->err names the file and the reason. */
static int open_reader(h5pack_reader *r, const char *path)
{
    int rc = h5pack_stream_for(&r->cfg)->open(path, &r->cfg, &r->stream, &r->info, r->err, ERR_LEN);
    if (rc)
        return rc;
    /* the config's path is the caller's string: the timeline resolves and copies it now */
    rc = h5pack_timeline_open(&r->cfg, r->stream, r->t_open, &r->timeline, r->err, ERR_LEN);
    r->cfg.timeline_path = NULL;
    return rc;
}

/* Frees what open_reader built, keeping the reader itself and its message. */
static void release_resources(h5pack_reader *r)
{
    h5pack_timeline_close(r->timeline); /* its last row reads the stream */
    r->timeline = NULL;
    if (r->stream)
        r->stream->ops->close(r->stream);
    r->stream = NULL;
}

/* WHAT (the file, or the call) and why, for h5pack_last_error(NULL). */
static int fail_without_reader(int rc, const char *what, const char *why)
{
    h5pack_reader_set_thread_error("%s: %s", what, why);
    return rc;
}

H5PACK_API int h5pack_open(const char *path, const h5pack_config *cfg, h5pack_reader **out)
{
    if (!out)
        return fail_without_reader(H5PACK_EINVAL, "h5pack_open", "out must not be NULL");
    *out = NULL;
    if (!path || !path[0])
        return fail_without_reader(H5PACK_EINVAL, "h5pack_open", "no file name given");
    h5pack_config own;
    char err[ERR_LEN] = "";
    int rc = h5pack_reader_config_in(cfg, &own, err, sizeof err);
    if (rc)
        return fail_without_reader(rc, path, err);
    h5pack_reader *r = calloc(1, sizeof *r);
    if (!r)
        return fail_without_reader(H5PACK_ENOMEM, path, "out of memory");
    r->t_open = h5pack_clock_s();
    r->pid = getpid();
    r->cfg = own;
    r->err = calloc(1, ERR_LEN);
    r->images_name = copy_string(own.images_dataset);
    r->labels_name = copy_string(own.labels_dataset);
    r->masks_name = copy_string(own.masks_dataset);
    r->cfg.images_dataset = r->images_name, r->cfg.labels_dataset = r->labels_name;
    r->cfg.masks_dataset = r->masks_name;
    if (!r->err || !r->images_name || (own.labels_dataset && !r->labels_name) ||
        (own.masks_dataset && !r->masks_name)) {
        free(r->err), free(r->images_name), free(r->labels_name), free(r->masks_name), free(r);
        return fail_without_reader(H5PACK_ENOMEM, path, "out of memory");
    }
    rc = open_reader(r, path);
    if (rc) {
        release_resources(r);
        r->open_rc = rc;
        if (!r->err[0])
            snprintf(r->err, ERR_LEN, "%s", h5pack_strerror(rc));
        if (!strstr(r->err, path)) { /* every open error names the file */
            char detail[ERR_LEN];
            memcpy(detail, r->err, sizeof detail);
            int room = (int)(ERR_LEN / 2); /* the reason keeps at least half the buffer */
            snprintf(r->err, ERR_LEN, "%.*s: %.*s", room - 3, path, room, detail);
        }
        h5pack_reader_set_thread_error("%s", r->err);
    }
    *out = r;
    return rc;
}

/* ---- the consumer's calls ------------------------------------------------------------------------ */

H5PACK_API const char *h5pack_timeline_path(const h5pack_reader *r)
{
    return r ? h5pack_timeline_file(r->timeline) : NULL;
}

H5PACK_API const char *h5pack_last_error(const h5pack_reader *r)
{
    return r ? r->err : h5pack_reader_thread_error();
}

static int check_usable(h5pack_reader *r)
{
    if (!r) {
        h5pack_reader_set_thread_error("h5pack: the reader is NULL");
        return H5PACK_EINVAL;
    }
    if (r->open_rc < 0 || !r->stream) /* the open failed: r->err keeps its reason */
        return H5PACK_ESTATE;
    if (getpid() != r->pid) { /* fork() copies the reader but not its threads: next would wait forever */
        snprintf(r->err, ERR_LEN,
                 "this reader was opened in process %d and this is a fork() of it (%d): its worker threads "
                 "are not here; open the reader in this process (e.g. in a DataLoader worker_init_fn)",
                 (int)r->pid, (int)getpid());
        return H5PACK_ESTATE;
    }
    return 0;
}

/* A batch read from a file that changed since open (truncated, rewritten) may hold zeros or another
 * file's bytes: it goes back to the ring and the change is the error. */
static int refuse_if_file_changed(h5pack_reader *r, h5pack_batch *b)
{
    int rc = h5pack_store_check(r->stream->st, r->err, ERR_LEN);
    if (rc) {
        char ignored[ERR_LEN];
        r->stream->ops->release(r->stream, &b->token, ignored, sizeof ignored);
    }
    return rc;
}

H5PACK_API int h5pack_next(h5pack_reader *r, h5pack_batch *batch)
{
    int rc = check_usable(r);
    if (rc)
        return rc;
    if (!batch) {
        snprintf(r->err, ERR_LEN, "h5pack_next: batch must not be NULL");
        return H5PACK_EINVAL;
    }
    /* Checked before a batch is taken from the ring: one the caller cannot receive would be lost. */
    if ((rc = h5pack_abi_check(batch, &h5pack_abi_batch, r->err, ERR_LEN)))
        return rc;
    h5pack_batch own;
    h5pack_timeline_enter(r->timeline);
    rc = r->stream->ops->next(r->stream, &own, r->err, ERR_LEN);
    if (rc == H5PACK_OK)
        rc = refuse_if_file_changed(r, &own);
    h5pack_timeline_leave(r->timeline, rc == H5PACK_OK ? &own : NULL);
    if (rc != H5PACK_OK) /* a cleared batch (token 0): h5pack_release rejects it cleanly */
        memset(&own, 0, sizeof own);
    own.struct_size = sizeof own;
    h5pack_abi_copy_out(batch, &own, &h5pack_abi_batch, r->err, ERR_LEN); /* cannot fail: checked */
    return rc;
}

H5PACK_API int h5pack_set_output_size(h5pack_reader *r, uint32_t height, uint32_t width)
{
    int rc = check_usable(r);
    if (rc)
        return rc;
    return r->stream->ops->set_output_size(r->stream, height, width, r->err, ERR_LEN);
}

H5PACK_API int h5pack_release(h5pack_reader *r, h5pack_batch *batch)
{
    int rc = check_usable(r);
    if (rc)
        return rc;
    if (!batch) {
        snprintf(r->err, ERR_LEN, "h5pack_release: batch must not be NULL");
        return H5PACK_EINVAL;
    }
    if ((rc = h5pack_abi_check(batch, &h5pack_abi_batch, r->err, ERR_LEN)))
        return rc;
    return r->stream->ops->release(r->stream, &batch->token, r->err, ERR_LEN); /* token: in every release */
}

/* Memory a stream's backend handed over; owns it until h5pack_detached_free. */
struct h5pack_detached {
    backend_detached mem;
};

H5PACK_API int h5pack_detach(h5pack_reader *r, const h5pack_batch *batch, h5pack_detached **out, int *copied)
{
    int rc = check_usable(r), copy = 0;
    if (rc)
        return rc;
    if (!batch || !out) {
        snprintf(r->err, ERR_LEN, "h5pack_detach: batch and out must not be NULL");
        return H5PACK_EINVAL;
    }
    *out = NULL;
    if ((rc = h5pack_abi_check(batch, &h5pack_abi_batch, r->err, ERR_LEN)))
        return rc;
    if (!r->stream->ops->detach) {
        snprintf(r->err, ERR_LEN, "h5pack_detach: batches of %s cannot be handed over yet", r->stream->ops->name);
        return H5PACK_ESTATE;
    }
    h5pack_detached *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(r->err, ERR_LEN, "h5pack_detach: out of memory");
        return H5PACK_ENOMEM;
    }
    rc = r->stream->ops->detach(r->stream, batch->token, &d->mem, &copy, r->err, ERR_LEN);
    if (rc) {
        free(d);
        return rc;
    }
    if (copied)
        *copied = copy;
    *out = d;
    return H5PACK_OK;
}

H5PACK_API void *h5pack_detached_data(const h5pack_detached *d)
{
    return d ? d->mem.mem : NULL;
}

H5PACK_API size_t h5pack_detached_bytes(const h5pack_detached *d)
{
    return d ? d->mem.bytes : 0;
}

H5PACK_API void h5pack_detached_free(h5pack_detached *d)
{
    if (!d)
        return;
    if (d->mem.free_fn)
        d->mem.free_fn(&d->mem);
    free(d);
}

H5PACK_API int h5pack_stats_get(const h5pack_reader *r, h5pack_stats *stats)
{
    if (!r || !stats || r->open_rc < 0 || !r->stream)
        return !r || !stats ? H5PACK_EINVAL : H5PACK_ESTATE;
    if (h5pack_abi_check(stats, &h5pack_abi_stats, r->err, ERR_LEN))
        return H5PACK_EINVAL;
    h5pack_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    r->stream->ops->stats(r->stream, &st);
    st.read_amplification = st.bytes_needed ? (double)st.bytes_read / (double)st.bytes_needed : 0.0;
    uint64_t uses = st.chunk_hits + st.chunk_misses;
    st.hit_rate = uses ? (double)st.chunk_hits / (double)uses : 0.0;
    st.elapsed_s = h5pack_clock_s() - r->t_open;
    return h5pack_abi_copy_out(stats, &st, &h5pack_abi_stats, r->err, ERR_LEN);
}

H5PACK_API int h5pack_info_get(const h5pack_reader *r, h5pack_info *info)
{
    if (!r || !info || r->open_rc < 0 || !r->stream)
        return !r || !info ? H5PACK_EINVAL : H5PACK_ESTATE;
    return h5pack_abi_copy_out(info, &r->info, &h5pack_abi_info, r->err, ERR_LEN);
}

H5PACK_API int h5pack_image_shape(const h5pack_reader *r, uint64_t i, uint32_t *height, uint32_t *width)
{
    if (!r || !height || !width)
        return H5PACK_EINVAL;
    if (r->open_rc < 0 || !r->stream)
        return H5PACK_ESTATE;
    if (i >= r->info.n_samples) {
        snprintf(r->err, ERR_LEN, "h5pack_image_shape: image %llu of %llu", (unsigned long long)i,
                 (unsigned long long)r->info.n_samples);
        return H5PACK_EINVAL;
    }
    r->stream->ops->image_shape(r->stream, i, height, width);
    return H5PACK_OK;
}

H5PACK_API void h5pack_close(h5pack_reader *r)
{
    if (!r)
        return;
    if (r->pid && getpid() != r->pid)
        return; /* a fork's copy: its threads are the parent's, not to be joined here; left to the exit */
    release_resources(r);
    free(r->images_name), free(r->labels_name), free(r->masks_name);
    free(r->err);
    free(r);
}
