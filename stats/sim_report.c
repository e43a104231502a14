/* sim_report.c - table, JSON and plot of `h5pack-stats simulate` (see sim_report.h, docs/stats.md). */
#include "sim_report.h"

#include <stdio.h>
#include <string.h>

#include "args.h"
#include "json.h"
#include "plot.h"

static const char *layout_name(h5pack_layout l)
{
    return l == H5PACK_LAYOUT_NHWC ? "NHWC" : "NCHW";
}

/* "7 file", "16", "16 ~" (what-if with estimated stored sizes). */
static void chunk_text(const sim_report *r, int i, char *buf, size_t len)
{
    const h5pack_sim_result *s = &r->rows[i].r;
    int own = i % r->n_chunk_sizes == 0;
    snprintf(buf, len, "%llu%s", (unsigned long long)s->chunk_samples,
             own ? " file" : (s->stored_estimated ? " ~" : ""));
}

static void print_header(const sim_report *r)
{
    const h5pack_file_desc *d = r->desc;
    char cb[32];
    h5pack_format_bytes(d->chunk_bytes, cb, sizeof cb);
    if (d->several_sizes)
        printf("file: %s (%llu images of several sizes, up to %ux%ux%u HWC; runs of %llu images, at most %s, %s, "
               "%s read path)\n", r->file, (unsigned long long)d->n_samples, d->height, d->width, d->channels,
               (unsigned long long)d->samples_per_chunk, cb, d->n_filters ? d->filters : "no filters",
               h5pack_read_path_name(d->read_path));
    else
        printf("file: %s (%llu images of %ux%ux%u %s; %s of %llu images = %s, %s, %s read path)\n", r->file,
               (unsigned long long)d->n_samples, d->channels, d->height, d->width, layout_name(d->layout),
               d->chunked ? "chunks" : "no chunks: read units", (unsigned long long)d->samples_per_chunk, cb,
               d->n_filters ? d->filters : "no filters", h5pack_read_path_name(d->read_path));
    printf("batch %zu, %llu epoch(s), seed %llu, HDF5 model: nslots %llu, w0 %.2f\n\n", r->cfg->batch_size,
           (unsigned long long)(r->cfg->epochs == H5PACK_EPOCHS_ENDLESS ? 1 : r->cfg->epochs), (unsigned long long)r->cfg->seed,
           (unsigned long long)r->nslots, r->w0);
}

static void print_notes(const sim_report *r)
{
    int estimated = 0, chunk_order = 0, any_chunk = 0;
    for (int i = 0; i < r->n_rows; i++) {
        any_chunk |= r->rows[i].order == H5PACK_ORDER_CHUNK;
        estimated |= r->rows[i].r.stored_estimated;
        chunk_order |= r->rows[i].r.hypothetical && r->rows[i].order == H5PACK_ORDER_CHUNK;
    }
    const h5pack_file_desc *d = r->desc;
    if (r->n_chunk_sizes > 1)
        printf("\nchunk: images per chunk; \"file\" = the file's own chunks, the others are what-if chunks "
               "(nothing repacked).\n");
    if (estimated && d->stored_bytes)
        printf("~ stored sizes of what-if chunks estimated from the file's compression: %.2f:1 (%.4f stored "
               "bytes per image byte).\n",
               (double)(d->n_samples * d->image_bytes) / (double)d->stored_bytes,
               (double)d->stored_bytes / (double)(d->n_samples * d->image_bytes));
    if (chunk_order)
        printf("order chunk with what-if chunks: the shuffle the reader would draw for a file converted with "
               "them (its window counted in those chunks), not this file's sequence.\n");
    if (any_chunk && !r->cfg->window)
        printf("window: the chunk order's active chunks: 256 MiB of chunks (at least 16), shrunk to what the cache "
               "holds beside the chunks a batch starts, so that each chunk is read once per epoch "
               "(docs/tuning.md).\n");
}

void sim_report_table(const sim_report *r)
{
    int what_if = r->n_chunk_sizes > 1;
    print_header(r);
    printf("%-10s %-10s %-7s ", "cache", "order", "policy");
    if (what_if)
        printf("%-8s ", "chunk");
    printf("%10s %10s %10s %8s %11s %7s %7s\n", "uses", "hits", "misses", "hit_rate", "read", "amplif", "window");
    for (int i = 0; i < r->n_rows; i++) {
        const sim_row *row = &r->rows[i];
        char cs[32], rd[32], ch[32];
        h5pack_format_bytes(row->cache_bytes, cs, sizeof cs);
        h5pack_format_bytes(row->r.bytes_read, rd, sizeof rd);
        printf("%-10s %-10s %-7s ", cs, order_name(row->order), policy_name(row->policy));
        if (what_if) {
            chunk_text(r, i, ch, sizeof ch);
            printf("%-8s ", ch);
        }
        char win[24] = "-"; /* only the chunk order has one */
        if (row->order == H5PACK_ORDER_CHUNK)
            snprintf(win, sizeof win, "%zu", row->r.window);
        printf("%10llu %10llu %10llu %8.4f %11s %7.3f %7s\n", (unsigned long long)row->r.accesses,
               (unsigned long long)row->r.hits, (unsigned long long)row->r.misses, row->r.hit_rate, rd,
               row->r.read_amplification, win);
    }
    print_notes(r);
}

void sim_report_json(const sim_report *r)
{
    json_out j;
    json_init(&j, stdout);
    json_array_begin(&j, NULL);
    for (int i = 0; i < r->n_rows; i++) {
        const sim_row *row = &r->rows[i];
        json_object_begin(&j, NULL);
        json_u64(&j, "cache_bytes", row->cache_bytes);
        json_string(&j, "order", order_name(row->order));
        json_string(&j, "policy", policy_name(row->policy));
        json_u64(&j, "accesses", row->r.accesses);
        json_u64(&j, "hits", row->r.hits);
        json_u64(&j, "misses", row->r.misses);
        json_double(&j, "hit_rate", row->r.hit_rate);
        json_u64(&j, "bytes_read", row->r.bytes_read);
        json_double(&j, "read_amplification", row->r.read_amplification);
        json_u64(&j, "bytes_needed", row->r.bytes_needed);
        json_u64(&j, "chunk_samples", row->r.chunk_samples);
        json_u64(&j, "chunk_bytes", row->r.chunk_bytes);
        json_u64(&j, "n_chunks", row->r.n_chunks);
        json_u64(&j, "cache_chunks", row->r.cache_chunks);
        json_u64(&j, "window", row->r.window);
        json_bool(&j, "file_chunks", i % r->n_chunk_sizes == 0);
        json_bool(&j, "hypothetical", row->r.hypothetical);
        json_bool(&j, "stored_estimated", row->r.stored_estimated);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_finish(&j);
}

/* Position of row I's order among the orders of the rows before it (the order of --order). */
static int order_position(const sim_report *r, int i)
{
    int seen[3] = {-1, -1, -1}, n = 0;
    for (int k = 0; k <= i; k++) {
        int o = (int)r->rows[k].order, known = 0;
        for (int m = 0; m < n; m++)
            known |= seen[m] == o;
        if (!known && n < 3)
            seen[n++] = o;
    }
    for (int m = 0; m < n; m++)
        if (seen[m] == (int)r->rows[i].order)
            return m;
    return 0;
}

/* The series row I belongs to (order, policy and chunk position), created on first sight. */
static plot_series *series_of(const sim_report *r, int i, plot_series *s, int *n)
{
    const sim_row *row = &r->rows[i];
    int pos = i % r->n_chunk_sizes;
    char label[64];
    if (r->n_chunk_sizes > 1)
        snprintf(label, sizeof label, "%s / %s / %llu%s", order_name(row->order), policy_name(row->policy),
                 (unsigned long long)row->r.chunk_samples, pos == 0 ? " (file)" : "");
    else
        snprintf(label, sizeof label, "%s / %s", order_name(row->order), policy_name(row->policy));
    for (int k = 0; k < *n; k++)
        if (strcmp(s[k].label, label) == 0)
            return &s[k];
    if (*n >= PLOT_MAX_SERIES)
        return NULL;
    plot_series *p = &s[(*n)++];
    memset(p, 0, sizeof *p);
    snprintf(p->label, sizeof p->label, "%s", label);
    /* colour: the policy, or with what-if chunks the chunk size; dashes: the order, or then the policy */
    p->color = r->n_chunk_sizes > 1 ? pos : (int)row->policy;
    p->dash = r->n_chunk_sizes > 1 ? (int)row->policy : order_position(r, i);
    return p;
}

int sim_report_plot(const sim_report *r, const char *path, plot_axis y)
{
    plot_series series[PLOT_MAX_SERIES];
    int ns = 0;
    for (int i = 0; i < r->n_rows; i++) {
        plot_series *s = series_of(r, i, series, &ns);
        if (s && s->n < PLOT_MAX_POINTS) {
            s->x[s->n] = (double)r->rows[i].cache_bytes;
            s->y[s->n++] = y == PLOT_Y_RATE ? r->rows[i].r.hit_rate : (double)r->rows[i].r.bytes_read;
        }
    }
    char title[1200], err[1200];
    snprintf(title, sizeof title, "%s: %s (batch %zu)", y == PLOT_Y_RATE ? "chunk hit rate" : "bytes read", r->file,
             r->cfg->batch_size);
    if (plot_write(path, title, y, series, ns, err, sizeof err) != 0) {
        fprintf(stderr, "h5pack-stats simulate: %s\n", err);
        return -1;
    }
    return 0;
}
