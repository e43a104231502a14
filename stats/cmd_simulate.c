/* cmd_simulate.c - `h5pack-stats simulate FILE --cache LIST --order LIST --policy LIST --chunk LIST`:
 * the file is opened once (h5pack_sim_open) and every combination replayed on that handle, with the
 * file's own chunks and with what-if chunks of K images; printed as a table or JSON rows (sim_report.c),
 * an optional plot, and advice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "args.h"
#include "commands.h"
#include "h5pack_sim.h"
#include "plot.h"
#include "sim_report.h"

#define MAX_ITEMS 32
#define MAX_PLOTS 8

typedef struct sim_plot {
    const char *path;
    plot_axis y; /* --plot: hit rate; --plot-bytes: bytes read */
} sim_plot;

typedef struct sim_opts {
    const char *file;
    h5pack_config cfg;
    uint64_t caches[MAX_ITEMS];
    uint64_t chunks[MAX_ITEMS]; /* --chunk: what-if images per chunk */
    h5pack_order orders[3];
    h5pack_policy policies[3];
    int n_caches, n_chunks, n_orders, n_policies;
    uint64_t nslots;
    double w0;
    int json;
    sim_plot plots[MAX_PLOTS]; /* every --plot and --plot-bytes, in the order given */
    int n_plots;
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
        fprintf(stderr, "h5pack-stats simulate: bad --cache list '%s' (at most %d sizes above 0, e.g. 64M,256M,1G)\n", text,
                MAX_ITEMS);
    return n < 0 ? -1 : 0;
}

static int parse_chunk_list(const char *text, sim_opts *o)
{
    char *store = NULL;
    const char *items[MAX_ITEMS];
    int n = split_list(text, &store, items, MAX_ITEMS);
    for (int i = 0; i < n; i++)
        if (parse_u64(items[i], 1, UINT32_MAX, &o->chunks[i]))
            n = -1;
    free(store);
    o->n_chunks = n;
    if (n < 0)
        fprintf(stderr, "h5pack-stats simulate: bad --chunk list '%s' (at most %d counts of images per chunk, e.g. 4,16,64)\n",
                text, MAX_ITEMS);
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

/* Repeated --plot / --plot-bytes each write their own file; the format is checked before any work. */
static int add_plot(sim_opts *o, const char *path, plot_axis y)
{
    char err[1200];
    if (o->n_plots == MAX_PLOTS) {
        fprintf(stderr, "h5pack-stats simulate: at most %d plots (--plot and --plot-bytes together)\n", MAX_PLOTS);
        return -1;
    }
    if (plot_format_of(path, err, sizeof err) < 0) {
        fprintf(stderr, "h5pack-stats simulate: %s\n", err);
        return -1;
    }
    o->plots[o->n_plots++] = (sim_plot){.path = path, .y = y};
    return 0;
}

static int parse_sim_own(int argc, char **argv, int *i, sim_opts *o)
{
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    int takes_value = strcmp(a, "--cache") == 0 || strcmp(a, "--order") == 0 || strcmp(a, "--policy") == 0 ||
                      strcmp(a, "--nslots") == 0 || strcmp(a, "--w0") == 0 || strcmp(a, "--plot") == 0 ||
                      strcmp(a, "--plot-bytes") == 0 || strcmp(a, "--chunk") == 0;
    if (!takes_value)
        return 0;
    if (!v)
        return usage_error("simulate", a), -1;
    ++*i;
    if (strcmp(a, "--cache") == 0)
        return parse_cache_list(v, o) ? -1 : 1;
    if (strcmp(a, "--chunk") == 0)
        return parse_chunk_list(v, o) ? -1 : 1;
    if (strcmp(a, "--order") == 0)
        return parse_name_list(v, "--order", &o->n_orders, o->orders, 1) ? -1 : 1;
    if (strcmp(a, "--policy") == 0)
        return parse_name_list(v, "--policy", &o->n_policies, o->policies, 0) ? -1 : 1;
    if (strcmp(a, "--plot") == 0 || strcmp(a, "--plot-bytes") == 0)
        return add_plot(o, v, strcmp(a, "--plot") == 0 ? PLOT_Y_RATE : PLOT_Y_BYTES) ? -1 : 1;
    if (strcmp(a, "--nslots") == 0 && parse_u64(v, 1, H5PACK_SIM_MAX_NSLOTS, &o->nslots) == 0)
        return 1;
    if (strcmp(a, "--w0") == 0 && parse_double(v, 0.0, 1.0, &o->w0) == 0)
        return 1;
    report_bad_value("simulate", a, v, strcmp(a, "--w0") == 0 ? "a number in [0,1]" : "an integer 1 .. 16777216");
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
    option_given given = {0};
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage_simulate(stdout), -1;
        int rc = parse_sim_own(argc, argv, &i, o);
        if (rc == 0)
            rc = parse_reader_option("simulate", OPTION_SIMULATE, argc, argv, &i, &o->cfg, &given);
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
    if (check_reader_options("simulate", &o->cfg))
        return 1;
    int lines = o->n_orders * o->n_policies * (1 + o->n_chunks);
    if (o->n_plots && lines > PLOT_MAX_SERIES) {
        fprintf(stderr, "h5pack-stats simulate: the plot would have %d lines (orders x policies x chunk sizes), "
                        "at most %d: shorten --order, --policy or --chunk\n", lines, PLOT_MAX_SERIES);
        return 1;
    }
    return 0;
}

/* Every cache x order x policy x chunk (the file's own first, then each --chunk) on one handle. */
static int run_rows(const sim_opts *o, h5pack_sim *sim, sim_row *rows, int *n_rows)
{
    *n_rows = 0;
    for (int c = 0; c < o->n_caches; c++)
        for (int k = 0; k < o->n_orders; k++)
            for (int p = 0; p < o->n_policies; p++)
                for (int ch = 0; ch <= o->n_chunks; ch++) {
                    sim_row *r = &rows[(*n_rows)++];
                    h5pack_sim_params sp = H5PACK_SIM_PARAMS_DEFAULTS;
                    sp.policy = o->policies[p], sp.cache_bytes = (size_t)o->caches[c], sp.order = (int)o->orders[k];
                    sp.hdf5_nslots = (size_t)o->nslots, sp.hdf5_w0 = o->w0;
                    sp.chunk_samples = ch ? o->chunks[ch - 1] : 0;
                    h5pack_sim_result init = H5PACK_SIM_RESULT_INIT;
                    r->cache_bytes = o->caches[c], r->order = o->orders[k], r->policy = o->policies[p];
                    r->r = init;
                    int rc = h5pack_sim_run(sim, &sp, &r->r);
                    if (rc < 0) {
                        const char *msg = h5pack_sim_last_error(sim);
                        fprintf(stderr, "h5pack-stats simulate: %s\n", msg[0] ? msg : h5pack_strerror(rc));
                        return 2;
                    }
                }
    return 0;
}

/* The advice is about the file as it is: the rows of its own chunks (the first of every 1 + n_chunks). */
static void simulate_advice(const sim_opts *o, const h5pack_file_desc *d, const sim_row *rows, int n, advice *a)
{
    sim_row *own = malloc((size_t)(n ? n : 1) * sizeof *own);
    int n_own = 0;
    for (int i = 0; own && i < n; i += 1 + o->n_chunks)
        own[n_own++] = rows[i];
    /* threads: the reader's own default when --threads is not given (h5pack_describe derived it) */
    sim_facts f = {.rows = own, .n_rows = n_own, .threads = d->threads, .window = o->cfg.window,
                   .batch = o->cfg.batch_size, .nslots = o->nslots, .w0 = o->w0};
    if (d->chunked) {
        f.chunk_bytes = d->chunk_bytes, f.n_chunks = d->n_chunks, f.samples_per_chunk = d->samples_per_chunk;
        f.image_bytes = d->image_bytes;
    }
    if (own)
        advise_simulate(&f, a);
    free(own);
}

static int simulate_file(const sim_opts *o, h5pack_sim *sim)
{
    h5pack_file_desc desc = H5PACK_FILE_DESC_INIT;
    int cap = o->n_caches * o->n_orders * o->n_policies * (1 + o->n_chunks), n = 0;
    sim_row *rows = calloc((size_t)cap, sizeof *rows);
    if (!rows) {
        fprintf(stderr, "h5pack-stats simulate: out of memory\n");
        return 2;
    }
    int rc = h5pack_sim_describe(sim, &desc) < 0 ? 2 : run_rows(o, sim, rows, &n);
    sim_report rep = {.file = o->file, .cfg = &o->cfg, .desc = &desc, .rows = rows, .n_rows = n,
                      .n_chunk_sizes = 1 + o->n_chunks, .nslots = o->nslots, .w0 = o->w0};
    if (rc == 0) {
        advice adv = {.n = 0};
        simulate_advice(o, &desc, rows, n, &adv);
        if (o->json) {
            sim_report_json(&rep);
            advice_print(&adv, stderr); /* stdout stays one JSON document */
        } else {
            sim_report_table(&rep);
            advice_print(&adv, stdout);
        }
        for (int p = 0; p < o->n_plots; p++)
            if (sim_report_plot(&rep, o->plots[p].path, o->plots[p].y) != 0)
                rc = 2;
            else if (!o->json)
                printf("%splot written to %s\n", p ? "" : "\n", o->plots[p].path);
    }
    free(rows);
    return rc;
}

int cmd_simulate(int argc, char **argv)
{
    sim_opts o;
    int rc = parse_simulate(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    h5pack_sim *sim = NULL;
    if (h5pack_sim_open(o.file, &o.cfg, &sim) < 0) {
        fprintf(stderr, "h5pack-stats simulate: %s\n", h5pack_sim_last_error(sim));
        h5pack_sim_close(sim);
        return 2;
    }
    rc = simulate_file(&o, sim);
    h5pack_sim_close(sim);
    return rc;
}
