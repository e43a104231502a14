/* sim_handle.c - the h5pack_sim handle of h5pack_sim.h: opens the file once with the reader's own open
 * (chunksrc.h: same checks, same probe, same read path), keeps its geometry and every chunk's stored
 * size, closes it, and then replays any number of cache scenarios (simulate.c) without touching the file
 * again. h5pack_simulate() is one open, one run, one close. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_structs.h"
#include "chunksrc.h"
#include "params.h"
#include "describe.h"
#include "errtext.h"
#include "h5pack_sim.h"
#include "resolve.h"
#include "sim_replay.h"

#define ERR_LEN 1024

struct h5pack_sim {
    char *path;
    h5pack_config cfg;    /* the caller's; the dataset name pointers are cleared after open */
    source_geometry g;    /* the file's, as the reader's open found it */
    uint64_t *stored;     /* stored bytes of each of the file's chunks */
    double stored_ratio;  /* stored bytes / image bytes of the whole dataset (1 without filters) */
    h5pack_file_desc desc;
    int open_rc;          /* < 0: the open failed; only last_error and close are usable */
    char err[ERR_LEN];
};

/* Detail of the last failed h5pack_sim_open() in this thread (the API promises it for sim == NULL). */
static _Thread_local char last_open_error[ERR_LEN];

/* Copies the caller's params over the defaults (ABI convention) and checks them. */
static int check_params(const h5pack_sim_params *in, h5pack_sim_params *p, char *err, size_t len)
{
    const h5pack_sim_params defaults = H5PACK_SIM_PARAMS_DEFAULTS;
    *p = defaults;
    if (!in)
        return h5pack_errf(H5PACK_EINVAL, err, len, "h5pack_sim_params: NULL");
    if (h5pack_abi_copy_in(p, in, &h5pack_abi_sim_params, err, len) < 0)
        return H5PACK_EINVAL;
    if ((int)p->policy < H5PACK_POLICY_BELADY || (int)p->policy > H5PACK_POLICY_HDF5)
        return h5pack_errf(H5PACK_EINVAL, err, len, "h5pack_sim_params: unknown policy %d", (int)p->policy);
    if (p->order != H5PACK_SIM_ORDER_CONFIG && (unsigned)p->order >= H5PACK_ENUM_COUNT(H5PACK_ORDER_MAP))
        return h5pack_errf(H5PACK_EINVAL, err, len, "h5pack_sim_params: unknown order %d", p->order);
    if (p->policy == H5PACK_POLICY_HDF5 && p->hdf5_nslots > H5PACK_SIM_MAX_NSLOTS)
        return h5pack_errf(H5PACK_EINVAL, err, len, "h5pack_sim_params: hdf5_nslots must be at most %d (got %zu)",
                        H5PACK_SIM_MAX_NSLOTS, p->hdf5_nslots);
    if (p->policy == H5PACK_POLICY_HDF5 && !(p->hdf5_w0 >= 0.0 && p->hdf5_w0 <= 1.0))
        return h5pack_errf(H5PACK_EINVAL, err, len, "h5pack_sim_params: HDF5 w0 must be in [0,1] (got %g)", p->hdf5_w0);
    return 0;
}

/* ---- open ------------------------------------------------------------------------------------------- */

static int load_file(h5pack_sim *sim)
{
    const h5pack_config *cfg = &sim->cfg;
    const char *labels = cfg->labels_dataset && cfg->labels_dataset[0] ? cfg->labels_dataset : NULL;
    chunk_source *src = NULL;
    int rc = h5pack_chunksrc_open(sim->path, cfg->images_dataset, labels, cfg->input_layout, &src, sim->err,
                                  sizeof sim->err);
    if (rc < 0)
        return rc;
    sim->g = *h5pack_chunksrc_geometry(src);
    sim->stored = malloc((sim->g.n_chunks ? sim->g.n_chunks : 1) * sizeof *sim->stored);
    if (!sim->stored)
        rc = h5pack_errf(H5PACK_ENOMEM, sim->err, sizeof sim->err, "out of memory for %llu chunk sizes",
                      (unsigned long long)sim->g.n_chunks);
    if (rc == 0)
        rc = h5pack_describe_source(src, cfg, &sim->desc, sim->stored, sim->err, sizeof sim->err);
    h5pack_chunksrc_close(src);
    if (rc < 0)
        return rc;
    uint64_t image_total = sim->g.pixel_bytes;
    sim->stored_ratio = 1.0;
    if (sim->g.n_filters > 0 && sim->desc.stored_bytes > 0)
        sim->stored_ratio = (double)sim->desc.stored_bytes / (double)image_total;
    sim->cfg.images_dataset = sim->cfg.labels_dataset = sim->cfg.masks_dataset = NULL; /* the caller's strings: not kept */
    return 0;
}

/* Bytes of one sample in the model: images of several sizes count their mean image. */
static uint64_t sample_bytes(const source_geometry *g)
{
    return g->several_sizes && g->n_samples ? g->pixel_bytes / g->n_samples : g->image_bytes;
}

/* The message names the file (as every open error of the reader does). */
static void prefix_path(h5pack_sim *sim)
{
    if (!sim->err[0])
        snprintf(sim->err, sizeof sim->err, "%s", h5pack_strerror(sim->open_rc));
    if (strstr(sim->err, sim->path))
        return;
    char detail[ERR_LEN];
    memcpy(detail, sim->err, sizeof detail);
    int room = ERR_LEN / 2;
    snprintf(sim->err, sizeof sim->err, "%.*s: %.*s", room - 3, sim->path, room, detail);
}

static int fail_without_handle(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_without_handle(int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    h5pack_verrf(rc, last_open_error, sizeof last_open_error, fmt, ap);
    va_end(ap);
    return rc;
}

H5PACK_API int h5pack_sim_open(const char *path, const h5pack_config *cfg, h5pack_sim **out)
{
    char msg[512] = "";
    if (!out)
        return fail_without_handle(H5PACK_EINVAL, "h5pack_sim_open: out must not be NULL");
    *out = NULL;
    if (!path || !path[0])
        return fail_without_handle(H5PACK_EINVAL, "h5pack_sim_open: no file name given");
    h5pack_config own_cfg; /* the caller's over the defaults (cfg NULL: the defaults), checked */
    int rc = h5pack_reader_config_in(cfg, &own_cfg, msg, sizeof msg);
    if (rc < 0)
        return fail_without_handle(rc, "%s: %s", path, msg);
    h5pack_sim *sim = calloc(1, sizeof *sim);
    if (!sim || !(sim->path = strdup(path))) {
        free(sim);
        return fail_without_handle(H5PACK_ENOMEM, "%s: out of memory", path);
    }
    sim->cfg = own_cfg;
    rc = load_file(sim);
    if (rc < 0) {
        sim->open_rc = rc;
        prefix_path(sim);
        snprintf(last_open_error, sizeof last_open_error, "%s", sim->err);
    }
    *out = sim;
    return rc;
}

/* ---- runs ------------------------------------------------------------------------------------------- */

/* The chunks of run P: the file's own, or what-if chunks of K images (see h5pack_sim_run). Sets the
 * geometry the reader's rules then size the cache and window with. */
static void choose_space(const h5pack_sim *sim, const h5pack_sim_params *p, source_geometry *g, sim_space *sp,
                         h5pack_sim_result *r)
{
    *g = sim->g;
    uint64_t k = p->chunk_samples < g->n_samples ? p->chunk_samples : g->n_samples;
    r->hypothetical = k != 0 && !(g->chunked && k == g->samples_per_chunk);
    sp->stored = sim->stored;
    sp->stored_ratio = sim->stored_ratio;
    sp->contiguous = g->path == H5PACK_READ_CONTIGUOUS;
    sp->filtered = g->n_filters > 0;
    if (r->hypothetical) {
        g->samples_per_chunk = k;
        g->n_chunks = (g->n_samples + k - 1) / k;
        g->chunk_bytes = k * sample_bytes(g);
        sp->stored = NULL;
        sp->contiguous = 0; /* chunked, as h5pack --chunk K would write it */
        r->stored_estimated = sp->filtered;
    }
    sp->n_samples = g->n_samples, sp->image_bytes = sample_bytes(g);
    sp->samples_per_chunk = g->samples_per_chunk, sp->n_chunks = g->n_chunks, sp->chunk_bytes = g->chunk_bytes;
}

static int prepare_run(h5pack_sim *sim, const h5pack_sim_params *p, sim_setup *s, h5pack_sim_result *r)
{
    h5pack_config cfg = sim->cfg;
    cfg.cache_bytes = p->cache_bytes;
    if (p->order != H5PACK_SIM_ORDER_CONFIG)
        cfg.order = (h5pack_order)p->order;
    source_geometry g;
    memset(s, 0, sizeof *s);
    choose_space(sim, p, &g, &s->space, r);
    reader_setup rs;
    char msg[512] = "";
    int rc = h5pack_reader_resolve_setup(&cfg, &g, &rs, msg, sizeof msg);
    if (rc < 0)
        return h5pack_errf(rc, sim->err, sizeof sim->err, "%s: %s", sim->path, msg);
    s->op = rs.op;
    s->slots = rs.slots;
    s->epochs = cfg.epochs == H5PACK_EPOCHS_ENDLESS ? 1 : cfg.epochs; /* endless: one epoch tells the rest */
    s->policy = p->policy;
    s->cache_bytes = p->cache_bytes, s->hdf5_nslots = p->hdf5_nslots, s->hdf5_w0 = p->hdf5_w0;
    r->order = cfg.order;
    r->chunk_samples = g.samples_per_chunk, r->chunk_bytes = g.chunk_bytes, r->n_chunks = g.n_chunks;
    r->cache_chunks = rs.slots_allocated;
    r->window = (size_t)rs.op.window;
    return 0;
}

static void fill_counts(const sim_counts *c, h5pack_sim_result *r)
{
    r->accesses = c->accesses;
    r->hits = c->hits;
    r->misses = c->misses;
    r->hit_rate = c->accesses ? (double)c->hits / (double)c->accesses : 0.0;
    r->bytes_read = c->bytes_read;
    r->bytes_needed = c->bytes_needed;
    r->read_amplification = c->bytes_needed ? (double)c->bytes_read / (double)c->bytes_needed : 0.0;
}

H5PACK_API int h5pack_sim_run(h5pack_sim *sim, const h5pack_sim_params *params, h5pack_sim_result *result)
{
    if (!sim)
        return H5PACK_EINVAL;
    if (sim->open_rc < 0) /* the open failed: err keeps its reason */
        return H5PACK_ESTATE;
    sim->err[0] = '\0';
    if (!result)
        return h5pack_errf(H5PACK_EINVAL, sim->err, sizeof sim->err, "h5pack_sim_run: result must not be NULL");
    if (h5pack_abi_check(result, &h5pack_abi_sim_result, sim->err, sizeof sim->err))
        return H5PACK_EINVAL;
    h5pack_sim_params p;
    sim_setup s;
    sim_counts c = {0};
    h5pack_sim_result own = H5PACK_SIM_RESULT_INIT;
    int rc = check_params(params, &p, sim->err, sizeof sim->err);
    if (rc == 0)
        rc = prepare_run(sim, &p, &s, &own);
    if (rc == 0 && (rc = h5pack_sim_replay(&s, &c)) < 0)
        h5pack_errf(rc, sim->err, sizeof sim->err, "%s: simulation failed: %s", sim->path, h5pack_strerror(rc));
    if (rc < 0)
        return rc;
    fill_counts(&c, &own);
    return h5pack_abi_copy_out(result, &own, &h5pack_abi_sim_result, sim->err, sizeof sim->err);
}

H5PACK_API int h5pack_sim_describe(const h5pack_sim *sim, h5pack_file_desc *desc)
{
    if (!sim || !desc)
        return H5PACK_EINVAL;
    if (sim->open_rc < 0)
        return H5PACK_ESTATE;
    char why[256]; /* sim is const here: the refusal is the return code only */
    return h5pack_abi_copy_out(desc, &sim->desc, &h5pack_abi_file_desc, why, sizeof why);
}

H5PACK_API const char *h5pack_sim_last_error(const h5pack_sim *sim)
{
    return sim ? sim->err : last_open_error;
}

H5PACK_API void h5pack_sim_close(h5pack_sim *sim)
{
    if (!sim)
        return;
    free(sim->stored);
    free(sim->path);
    free(sim);
}

/* ---- one-shot ---------------------------------------------------------------------------------------- */

H5PACK_API int h5pack_simulate(const char *path, const h5pack_config *cfg, const h5pack_sim_params *params,
                               h5pack_sim_result *result, char *errbuf, size_t errbuf_len)
{
    h5pack_sim_params p;
    if (errbuf && errbuf_len)
        errbuf[0] = '\0';
    if (!path || !result)
        return h5pack_errf(H5PACK_EINVAL, errbuf, errbuf_len,
                           "h5pack_simulate: path, params and result are required");
    int rc = check_params(params, &p, errbuf, errbuf_len); /* before the file: bad params are named first */
    if (rc < 0)
        return rc;
    h5pack_sim *sim = NULL;
    rc = h5pack_sim_open(path, cfg, &sim);
    if (rc == 0)
        rc = h5pack_sim_run(sim, params, result);
    if (rc < 0)
        h5pack_errf(rc, errbuf, errbuf_len, "%s", h5pack_sim_last_error(sim));
    h5pack_sim_close(sim);
    return rc;
}
