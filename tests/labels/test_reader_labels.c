/* test_reader_labels.c - labels (N,K) and float labels through the reader: every delivered batch holds, for
 * each of its indices, exactly the file's row (K int64 or float32 values), in every order, with batch and
 * sample echo, for each rank of world 2; h5pack_info and h5pack_describe give the label shape; class
 * counts follow docs/reader.md; label types the reader cannot use are refused naming the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

#define N 53
#define K_MAX 5

typedef struct label_case {
    const char *name;
    h5fix_type type; /* stored type */
    int rank;        /* 1: (N,), 2: (N,K) */
    uint32_t k;
    int is_float;
    int negatives;   /* single column: some values negative */
    int label_names; /* a label_names dataset (as h5pack --labels writes) */
    double big;      /* single column: every third label is BIG - i (ids, timestamps) */
    uint32_t n_classes; /* expected h5pack_info.n_classes */
} label_case;

/* The value of row I, column J in each case (exact in every stored type used). */
static double value_at(const label_case *c, uint64_t i, uint32_t j)
{
    if (c->is_float)
        return (double)i * 0.5 - (double)j * 0.25;
    if (c->k > 1)
        return ((i * 7 + j * 3) % 2) ? 1 : -1; /* CelebA-like 1/-1 */
    if (c->big != 0 && i % 3 == 0)
        return c->big - (double)i;
    return c->negatives ? (double)((int64_t)(i % 5) - 2) : (double)(i % 6);
}

static double case_value(const h5fix_file *f, uint64_t i, uint32_t j)
{
    return value_at(f->ctx, i, j);
}

/* N images (N,1,2,2) in chunks of 8 (HDF5's default file format), and the case's labels. */
static h5fix_file case_file(const label_case *c)
{
    static const char *const names[K_MAX] = {"Smiling", "Bald", "Young", "Male", "Eyeglasses"};
    h5fix_file f = {.n = N, .c = 1, .h = 2, .w = 2, .k = 8, .old_format = 1, .labels = 1, .label_type = c->type,
                    .label_columns = c->rank == 2 ? c->k : 0, .label = case_value, .ctx = c};
    f.label_names = c->label_names ? names : NULL;
    return f;
}

static const char *write_case(const label_case *c)
{
    static char path[256];
    snprintf(path, sizeof path, "labels_%s.h5", c->name);
    h5fix_file f = case_file(c);
    CHECK_OK(h5fix_write(path, &f));
    return path;
}

static void check_batch(const label_case *c, const h5pack_batch *b)
{
    CHECK_EQ_INT(b->label_columns, c->k);
    CHECK(c->is_float ? (b->labels_float && !b->labels) : (b->labels && !b->labels_float));
    for (size_t i = 0; i < b->count; i++)
        for (uint32_t j = 0; j < c->k; j++) {
            double want = value_at(c, b->indices[i], j);
            double got = c->is_float ? (double)b->labels_float[i * c->k + j] : (double)b->labels[i * c->k + j];
            if (got != want)
                CHECK_MSG(0, "%s: sample %llu column %u: %g, expected %g", c->name,
                          (unsigned long long)b->indices[i], j, got, want);
        }
}

static void check_info(const label_case *c, h5pack_reader *r)
{
    h5pack_info in = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &in));
    CHECK_EQ_INT(in.label_columns, c->k);
    CHECK_EQ_INT(in.label_rank, c->rank);
    CHECK_EQ_INT(in.labels_are_float, c->is_float);
    CHECK_EQ_INT(in.n_classes, c->n_classes);
}

/* Reads 2 epochs of PATH and checks every delivery; returns the deliveries seen. */
static size_t read_all(const label_case *c, const char *path, h5pack_order order, uint32_t echo,
                       h5pack_echo_mode mode, uint32_t rank)
{
    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
    cfg.batch_size = 8, cfg.order = order, cfg.echo = echo, cfg.echo_mode = mode, cfg.epochs = 2;
    cfg.world = 2, cfg.rank = rank, cfg.device = H5PACK_DEVICE_CPU, cfg.dtype = H5PACK_DTYPE_UINT8;
    cfg.threads = 2, cfg.seed = 7;
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, &cfg, &r);
    CHECK_MSG(rc == 0, "%s: %s", path, h5pack_last_error(r));
    check_info(c, r);
    h5pack_batch b = H5PACK_BATCH_INIT;
    size_t deliveries = 0;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        check_batch(c, &b);
        deliveries++;
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_MSG(rc == H5PACK_END, "%s: %s", path, h5pack_last_error(r));
    h5pack_close(r);
    return deliveries;
}

static void check_describe(const label_case *c, const char *path)
{
    h5pack_file_desc d = H5PACK_FILE_DESC_INIT;
    char err[512];
    CHECK_OK(h5pack_describe(path, NULL, &d, err, sizeof err));
    CHECK_EQ_INT(d.label_columns, c->k);
    CHECK_EQ_INT(d.label_rank, c->rank);
    CHECK_EQ_INT(d.labels_are_float, c->is_float);
    CHECK_EQ_INT(d.n_classes, c->n_classes);
}

static void run_case(const label_case *c)
{
    const char *path = write_case(c);
    check_describe(c, path);
    for (uint32_t rank = 0; rank < 2; rank++) {
        size_t per_epoch = (N + 1) / 2 / 8 + 1; /* 27 samples per rank: 4 batches */
        CHECK_EQ_U64(read_all(c, path, H5PACK_ORDER_CHUNK, 1, H5PACK_ECHO_BATCH, rank), 2 * per_epoch);
        CHECK_EQ_U64(read_all(c, path, H5PACK_ORDER_RANDOM, 2, H5PACK_ECHO_BATCH, rank), 4 * per_epoch);
        CHECK(read_all(c, path, H5PACK_ORDER_RANDOM, 2, H5PACK_ECHO_SAMPLE, rank) >= 4 * per_epoch - 2);
    }
    printf("ok: %s\n", c->name);
}

/* Label datasets the reader cannot deliver ((N,) strings, (N,2,2), no values written): refused at open,
 * naming the file and the reason. */
static void check_refused(const char *name, h5fix_type type, int rank, const char *what)
{
    char path[64];
    const label_case c = {.name = name, .type = type, .rank = 1, .k = 1};
    h5fix_file f = case_file(&c);
    if (rank == 3)
        f.label_columns = 2, f.label_rank = 3;
    snprintf(path, sizeof path, "labels_bad_%s.h5", name);
    CHECK_OK(h5fix_write(path, &f));
    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
    cfg.device = H5PACK_DEVICE_CPU, cfg.batch_size = 8;
    h5pack_reader *r = NULL;
    CHECK_EQ_INT(h5pack_open(path, &cfg, &r), H5PACK_EFORMAT);
    CHECK_STR_CONTAINS(h5pack_last_error(r), path);
    CHECK_STR_CONTAINS(h5pack_last_error(r), what);
    printf("ok: %s refused: %s\n", name, h5pack_last_error(r));
    h5pack_close(r);
}

/* Without label_names, single-column integers are class indices: one of 2^31 - 1 or more is refused. */
static void check_class_label_too_large(void)
{
    const label_case c = {.name = "class_too_large", .type = H5FIX_INT64, .rank = 1, .k = 1, .big = 3e9};
    const char *path = write_case(&c);
    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
    cfg.device = H5PACK_DEVICE_CPU, cfg.batch_size = 8;
    h5pack_reader *r = NULL;
    CHECK_EQ_INT(h5pack_open(path, &cfg, &r), H5PACK_EFORMAT);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "label 3000000000 is too large");
    h5pack_close(r);
}

int main(void)
{
    const label_case cases[] = {
        {.name = "int8_NK", .type = H5FIX_INT8, .rank = 2, .k = 5, .label_names = 1, .n_classes = 0},
        {.name = "float32_NK", .type = H5FIX_FLOAT32, .rank = 2, .k = 3, .is_float = 1, .n_classes = 0},
        {.name = "float64_N", .type = H5FIX_FLOAT64, .rank = 1, .k = 1, .is_float = 1, .n_classes = 0},
        {.name = "uint16_N", .type = H5FIX_UINT16, .rank = 1, .k = 1, .n_classes = 6},
        {.name = "int8_N_neg", .type = H5FIX_INT8, .rank = 1, .k = 1, .negatives = 1, .label_names = 1,
         .n_classes = 0},
        {.name = "int32_N1", .type = H5FIX_INT32, .rank = 2, .k = 1, .n_classes = 6},
        /* a CSV column of ids: values, not class indices (the converter stores uint32 / int64) */
        {.name = "uint32_N_ids", .type = H5FIX_UINT32, .rank = 1, .k = 1, .label_names = 1, .big = 4294967295.0,
         .n_classes = 0},
        {.name = "int64_N_ids", .type = H5FIX_INT64, .rank = 1, .k = 1, .label_names = 1, .big = 1.7e12,
         .n_classes = 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
    check_class_label_too_large();
    check_refused("string", H5FIX_STRING4, 1, "expected integers or floats");
    check_refused("rank3", H5FIX_INT8, 3, "expected (N,) or (N,K)");
    printf("all reader label checks passed\n");
    return 0;
}
