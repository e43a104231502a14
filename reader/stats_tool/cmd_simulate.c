/* cmd_simulate.c - `h5pack-stats simulate FILE --cache LIST --order LIST --policy LIST`: every
 * combination through h5pack_simulate(), as a table or JSON rows, an optional plot, and advice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advice.h"
#include "args.h"
#include "commands.h"
#include "h5inspect.h"
#include "json.h"
#include "plot.h"

#define MAX_ITEMS 32

typedef struct sim_opts {
    const char *file;
    h5pack_config cfg;
    uint64_t caches[MAX_ITEMS];
    h5pack_order orders[3];
    h5pack_policy policies[3];
    int n_caches, n_orders, n_policies;
    uint64_t nslots;
    double w0;
    int json;
    const char *plot;
} sim_opts;

static int parse_cache_list(const char *text, sim_opts *o)
{
    char *store = NULL;
    const char *items[MAX_ITEMS];
    int n = split_list(text, &store, items, MAX_ITEMS);
    for (int i = 0; i < n; i++)
        if (h5pack_parse_size(items[i], &o->caches[i], NULL, 0) || o->caches[i] == 0)
            n = -1;
    free(store);
    o->n_caches = n;
    if (n < 0)
        fprintf(stderr, "h5pack-stats simulate: bad --cache list '%s' (e.g. 64M,256M,1G)\n", text);
    return n < 0 ? -1 : 0;
}

/* --order / --policy lists: names into codes through PARSE (order or policy). */
static int parse_name_list(const char *text, const char *what, int *n_out, void *codes, int is_order)
{
    char *store = NULL;
    const char *items[3];
    int n = split_list(text, &store, items, 3);
    for (int i = 0; i < n; i++) {
        int bad = is_order ? parse_order(items[i], &((h5pack_order *)codes)[i])
                           : parse_policy(items[i], &((h5pack_policy *)codes)[i]);
        if (bad)
            n = -1;
    }
    free(store);
    *n_out = n;
    if (n < 0)
        fprintf(stderr, "h5pack-stats simulate: bad %s list '%s' (%s)\n", what, text,
                is_order ? "of sequential,random,chunk" : "of belady,lru,hdf5");
    return n < 0 ? -1 : 0;
}

static int parse_sim_own(int argc, char **argv, int *i, sim_opts *o)
{
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    int takes_value = strcmp(a, "--cache") == 0 || strcmp(a, "--order") == 0 || strcmp(a, "--policy") == 0 ||
                      strcmp(a, "--nslots") == 0 || strcmp(a, "--w0") == 0 || strcmp(a, "--plot") == 0;
    if (!takes_value)
        return 0;
    if (!v)
        return usage_error("simulate", a), -1;
    ++*i;
    if (strcmp(a, "--cache") == 0)
        return parse_cache_list(v, o) ? -1 : 1;
    if (strcmp(a, "--order") == 0)
        return parse_name_list(v, "--order", &o->n_orders, o->orders, 1) ? -1 : 1;
    if (strcmp(a, "--policy") == 0)
        return parse_name_list(v, "--policy", &o->n_policies, o->policies, 0) ? -1 : 1;
    if (strcmp(a, "--plot") == 0)
        return o->plot = v, 1;
    if (strcmp(a, "--nslots") == 0 && parse_u64(v, 1, UINT32_MAX, &o->nslots) == 0)
        return 1;
    if (strcmp(a, "--w0") == 0 && parse_double(v, 0.0, 1.0, &o->w0) == 0)
        return 1;
    fprintf(stderr, "h5pack-stats simulate: bad value '%s' for %s (%s)\n", v, a,
            strcmp(a, "--w0") == 0 ? "a number in [0,1]" : "an integer >= 1");
    return -1;
}

static int parse_simulate(int argc, char **argv, sim_opts *o)
{
    memset(o, 0, sizeof *o);
    h5pack_config defaults = H5PACK_CONFIG_DEFAULTS;
    o->cfg = defaults;
    o->cfg.epochs = 1;
    o->orders[0] = H5PACK_ORDER_CHUNK, o->n_orders = 1;
    o->policies[0] = H5PACK_POLICY_BELADY, o->policies[1] = H5PACK_POLICY_LRU, o->policies[2] = H5PACK_POLICY_HDF5;
    o->n_policies = 3;
    o->nslots = 521, o->w0 = 0.75;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage_simulate(stdout), -1;
        int rc = parse_sim_own(argc, argv, &i, o);
        if (rc == 0)
            rc = parse_reader_option("simulate", argc, argv, &i, &o->cfg);
        if (rc < 0)
            return 1;
        if (rc > 0)
            continue;
        if (strcmp(argv[i], "--json") == 0)
            o->json = 1;
        else if (argv[i][0] == '-' || o->file)
            return usage_error("simulate", argv[i]);
        else
            o->file = argv[i];
    }
    if (!o->file)
        return usage_error("simulate", NULL);
    if (o->n_caches == 0) {
        fprintf(stderr, "h5pack-stats simulate: --cache LIST is required (e.g. --cache 64M,256M,1G)\n");
        return 1;
    }
    return 0;
}

static int run_rows(const sim_opts *o, sim_row *rows, int *n_rows)
{
    char err[1200];
    *n_rows = 0;
    for (int c = 0; c < o->n_caches; c++)
        for (int k = 0; k < o->n_orders; k++)
            for (int p = 0; p < o->n_policies; p++) {
                sim_row *r = &rows[(*n_rows)++];
                h5pack_config cfg = o->cfg;
                cfg.order = o->orders[k];
                cfg.cache_bytes = (size_t)o->caches[c];
                h5pack_sim_params sp = {o->policies[p], (size_t)o->caches[c], (size_t)o->nslots, o->w0};
                r->cache_bytes = o->caches[c], r->order = o->orders[k], r->policy = o->policies[p];
                int rc = h5pack_simulate(o->file, &cfg, &sp, &r->r, err, sizeof err);
                if (rc < 0) {
                    fprintf(stderr, "h5pack-stats simulate: %s\n", err[0] ? err : h5pack_strerror(rc));
                    return 2;
                }
            }
    return 0;
}

static void print_table(const sim_opts *o, const sim_row *rows, int n)
{
    printf("file: %s (batch %zu, %llu epoch(s), seed %llu, HDF5 model: nslots %llu, w0 %.2f)\n\n", o->file,
           o->cfg.batch_size, (unsigned long long)o->cfg.epochs, (unsigned long long)o->cfg.seed,
           (unsigned long long)o->nslots, o->w0);
    printf("%-10s %-10s %-7s %10s %10s %10s %8s %11s %7s\n", "cache", "order", "policy", "uses", "hits", "misses",
           "hit_rate", "read", "amplif");
    for (int i = 0; i < n; i++) {
        char cs[32], rd[32];
        h5pack_format_bytes(rows[i].cache_bytes, cs, sizeof cs);
        h5pack_format_bytes(rows[i].r.bytes_read, rd, sizeof rd);
        printf("%-10s %-10s %-7s %10llu %10llu %10llu %8.4f %11s %7.3f\n", cs, order_name(rows[i].order),
               policy_name(rows[i].policy), (unsigned long long)rows[i].r.accesses,
               (unsigned long long)rows[i].r.hits, (unsigned long long)rows[i].r.misses, rows[i].r.hit_rate, rd,
               rows[i].r.read_amplification);
    }
}

static void print_json(const sim_row *rows, int n)
{
    json_out j;
    json_init(&j, stdout);
    json_array_begin(&j, NULL);
    for (int i = 0; i < n; i++) {
        json_object_begin(&j, NULL);
        json_u64(&j, "cache_bytes", rows[i].cache_bytes);
        json_string(&j, "order", order_name(rows[i].order));
        json_string(&j, "policy", policy_name(rows[i].policy));
        json_u64(&j, "accesses", rows[i].r.accesses);
        json_u64(&j, "hits", rows[i].r.hits);
        json_u64(&j, "misses", rows[i].r.misses);
        json_double(&j, "hit_rate", rows[i].r.hit_rate);
        json_u64(&j, "bytes_read", rows[i].r.bytes_read);
        json_double(&j, "read_amplification", rows[i].r.read_amplification);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_finish(&j);
}

/* One series per (order, policy), points in the order of --cache. */
static int write_plot(const sim_opts *o, const sim_row *rows, int n)
{
    plot_series series[9];
    int ns = 0;
    for (int k = 0; k < o->n_orders; k++)
        for (int p = 0; p < o->n_policies; p++) {
            plot_series *s = &series[ns++];
            memset(s, 0, sizeof *s);
            snprintf(s->label, sizeof s->label, "%s / %s", order_name(o->orders[k]), policy_name(o->policies[p]));
            s->color = (int)o->policies[p], s->dash = k;
            for (int i = 0; i < n && s->n < PLOT_MAX_POINTS; i++)
                if (rows[i].order == o->orders[k] && rows[i].policy == o->policies[p]) {
                    s->x[s->n] = (double)rows[i].cache_bytes;
                    s->y[s->n++] = rows[i].r.hit_rate;
                }
        }
    char title[1200], err[1200];
    snprintf(title, sizeof title, "chunk hit rate: %s (batch %zu)", o->file, o->cfg.batch_size);
    if (plot_write(o->plot, title, series, ns, err, sizeof err) != 0) {
        fprintf(stderr, "h5pack-stats simulate: %s\n", err);
        return 2;
    }
    if (!o->json)
        printf("\nplot written to %s\n", o->plot);
    return 0;
}

static void simulate_advice(const sim_opts *o, const sim_row *rows, int n, advice *a)
{
    sim_facts f = {rows, n, 0, 0, 0, 0, o->cfg.threads, o->cfg.window, o->nslots, o->w0};
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (f.threads <= 0)
        f.threads = cores > 0 ? (int)cores : 1;
    file_report r;
    char err[1200];
    if (inspect_file(o->file, o->cfg.images_dataset, &r, err, sizeof err) == 0) {
        const ds_report *d = report_dataset(&r, o->cfg.images_dataset);
        if (d && strcmp(d->layout, "chunked") == 0 && d->chunk[0]) {
            f.chunk_bytes = d->chunk_bytes, f.n_chunks = d->n_chunks, f.samples_per_chunk = d->chunk[0];
            f.image_bytes = d->chunk_bytes / d->chunk[0];
        }
        report_free(&r);
    }
    advise_simulate(&f, a);
}

int cmd_simulate(int argc, char **argv)
{
    sim_opts o;
    int rc = parse_simulate(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    int cap = o.n_caches * o.n_orders * o.n_policies, n = 0;
    sim_row *rows = calloc((size_t)cap, sizeof *rows);
    if (!rows) {
        fprintf(stderr, "h5pack-stats simulate: out of memory\n");
        return 2;
    }
    rc = run_rows(&o, rows, &n);
    if (rc == 0) {
        advice adv = {.n = 0};
        simulate_advice(&o, rows, n, &adv);
        if (o.json) {
            print_json(rows, n);
            advice_print(&adv, stderr); /* stdout stays one JSON document */
        } else {
            print_table(&o, rows, n);
            advice_print(&adv, stdout);
        }
        if (o.plot)
            rc = write_plot(&o, rows, n);
    }
    free(rows);
    return rc;
}
