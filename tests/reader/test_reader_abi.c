/* test_reader_abi.c - the extensible-struct convention of h5pack.h ("Extensible structs"):
 *   - H5PACK_CONFIG_DEFAULTS against the defaults documented next to each field, and h5pack_config_init()
 *     writing the very same bytes;
 *   - the growth mechanism itself on a struct that gained a field (abi.h, v1 and v3 callers of a v2 library);
 *   - an old caller (struct_size = the first release's size): nothing read or written past it;
 *   - a newer caller (larger struct_size): a zero tail is accepted in a config and written zero in outputs,
 *     a non-zero config tail is refused ("built against a newer h5pack");
 *   - struct_size 0 (a memset struct) or garbage: H5PACK_EINVAL naming the struct and its macro, nothing
 *     written, no batch lost; cfg NULL still means the defaults;
 *   - the version: written once in the header, the same in the string, the library and CMake. */
#include <string.h>
#include <stdio.h>

#include <stddef.h>

#include "api_structs.h"
#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"
#include "h5pack_sim.h"

#define CANARY 0xA5
#define EXTRA 64 /* bytes after a struct in the test buffers */

static char path[256];
static const h5fix_file spec = {.n = 40, .c = 3, .h = 4, .w = 5, .k = 8, .layout_attr = "NCHW", .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .pixel = h5fix_pixel_chw};

/* A public struct in a buffer with room after it, everything CANARY but struct_size. */
#define SIZED_BUFFER(type, name)                        \
    union {                                             \
        type s;                                         \
        unsigned char b[sizeof(type) + EXTRA];          \
    } name;                                             \
    memset(&name, CANARY, sizeof name)

static void set_size(void *s, size_t n)
{
    memcpy(s, &n, sizeof n);
}

/* Bytes [from, to) of P all equal V. */
static int bytes_are(const unsigned char *p, size_t from, size_t to, unsigned char v)
{
    for (size_t i = from; i < to; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

static h5pack_config small_config(void)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = 8, c.threads = 1, c.prefetch = 2, c.epochs = 1;
    return c;
}

static h5pack_reader *open_ok(const h5pack_config *c)
{
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, c, &r);
    CHECK_MSG(rc == 0 && r, "open %s: %d %s", path, rc, h5pack_last_error(r));
    return r;
}

/* ---- defaults ---------------------------------------------------------------------------------- */

/* The values written next to each field in h5pack.h (and in docs/reader.md's table). */
static void check_documented_defaults(const h5pack_config *c)
{
    CHECK_EQ_U64(c->struct_size, sizeof(h5pack_config));
    CHECK(c->images_dataset && strcmp(c->images_dataset, "images") == 0);
    CHECK(c->labels_dataset && strcmp(c->labels_dataset, "labels") == 0);
    CHECK_EQ_INT(c->input_layout, H5PACK_LAYOUT_AUTO);
    CHECK_EQ_U64(c->batch_size, 256);
    CHECK_EQ_U64(c->cache_bytes, (uint64_t)1 << 30);
    CHECK_EQ_INT(c->order, H5PACK_ORDER_CHUNK);
    CHECK_EQ_U64(c->window, 0);
    CHECK_EQ_U64(c->seed, 0);
    CHECK_EQ_U64(c->rank, 0);
    CHECK_EQ_U64(c->world, 1);
    CHECK_EQ_INT(c->drop_last, 0);
    CHECK_EQ_U64(c->echo, 1);
    CHECK_EQ_U64(c->epochs, H5PACK_EPOCHS_ENDLESS);
    CHECK_EQ_INT(c->threads, 0);
    CHECK_EQ_INT(c->prefetch, 4);
    CHECK_EQ_INT(c->device, H5PACK_DEVICE_AUTO);
    CHECK_EQ_INT(c->gpu_id, 0);
    CHECK_EQ_U64(c->device_memory_limit, 0);
    CHECK_EQ_INT(c->dtype, H5PACK_DTYPE_FLOAT32);
    CHECK_EQ_INT(c->output_layout, H5PACK_LAYOUT_NCHW);
    CHECK_EQ_INT(c->norm, H5PACK_NORM_IMAGENET);
    for (int i = 0; i < H5PACK_MAX_CHANNELS; i++) {
        CHECK(c->mean[i] == 0.0f);
        CHECK(c->std[i] == 1.0f);
    }
    CHECK_EQ_INT(c->random_flip, 0);
    CHECK_EQ_INT(c->random_crop_padding, 0);
    CHECK(c->cuda_stream == NULL);
    CHECK_EQ_INT(c->crop, H5PACK_CROP_NONE);
    CHECK_EQ_U64(c->output_height, 0);
    CHECK_EQ_U64(c->output_width, 0);
    CHECK_EQ_U64(c->max_output_height, 0);
    CHECK_EQ_U64(c->max_output_width, 0);
    CHECK(c->scale_min == 0.08 && c->scale_max == 1.0);
    CHECK(c->ratio_min == 0.75 && c->ratio_max == 4.0 / 3.0);
    CHECK(c->center_ratio == 0.875);
    CHECK_EQ_INT(c->echo_mode, H5PACK_ECHO_BATCH);
    CHECK_EQ_U64(c->start_epoch, 0);
    CHECK_EQ_U64(c->start_batch, 0);
    CHECK_EQ_U64(c->start_echo, 0);
    CHECK(c->timeline_path == NULL);
    CHECK(c->timeline_interval_s == 0.0);
    CHECK(c->timeline_append == 0);
    CHECK(c->masks_dataset == NULL);
    CHECK_EQ_INT(c->mask_dtype, H5PACK_MASK_DTYPE_UINT8);
}

static void test_defaults(void)
{
    h5pack_config m = H5PACK_CONFIG_DEFAULTS;
    check_documented_defaults(&m);

    h5pack_config got;
    memset(&got, CANARY, sizeof got);
    got.struct_size = sizeof got;
    CHECK_OK(h5pack_config_init(&got));
    check_documented_defaults(&got);
    /* Every byte, padding included (a static object's padding is zero, and the library's defaults are one),
     * but the two string pointers: equal strings, yet literals of two objects need not share an address
     * (ASan keeps them apart). */
    static const h5pack_config want = H5PACK_CONFIG_DEFAULTS;
    h5pack_config same;
    memcpy(&same, &got, sizeof same); /* the padding too */
    same.images_dataset = want.images_dataset, same.labels_dataset = want.labels_dataset;
    CHECK(memcmp(&same, &want, sizeof same) == 0);
}

/* ---- the mechanism, on a struct that grew ------------------------------------------------------ */

typedef struct demo_v1 {
    size_t struct_size;
    int32_t a, b;
} demo_v1;

typedef struct demo_v2 { /* what "this library" knows: v1 plus one appended field */
    size_t struct_size;
    int32_t a, b;
    int64_t added;
} demo_v2;

typedef struct demo_v3 { /* a newer caller's */
    size_t struct_size;
    int32_t a, b;
    int64_t added, newer;
} demo_v3;

static const h5pack_abi_desc demo = {"demo", "DEMO_DEFAULTS", sizeof(demo_v2), sizeof(demo_v1)};

static void test_growth_mechanism(void)
{
    char err[256];
    const demo_v2 defaults = {sizeof(demo_v2), 10, 20, 7};
    /* v1 caller, input: its fields are taken, the one it does not know keeps its default. */
    demo_v2 own = defaults;
    demo_v1 old = {sizeof old, 1, 2};
    CHECK_OK(h5pack_abi_copy_in(&own, &old, &demo, err, sizeof err));
    CHECK(own.struct_size == sizeof own && own.a == 1 && own.b == 2 && own.added == 7);
    /* v1 caller, output: nothing written past its struct. */
    SIZED_BUFFER(demo_v1, out1);
    set_size(&out1, sizeof(demo_v1));
    CHECK_OK(h5pack_abi_copy_out(&out1, &own, &demo, err, sizeof err));
    CHECK(out1.s.struct_size == sizeof(demo_v1) && out1.s.a == 1 && out1.s.b == 2);
    CHECK(bytes_are(out1.b, sizeof(demo_v1), sizeof out1, CANARY));
    /* v3 caller, input: a zero tail is fine, a set field this library does not know is refused. */
    demo_v3 newer = {sizeof newer, 3, 4, 5, 0};
    own = defaults;
    CHECK_OK(h5pack_abi_copy_in(&own, &newer, &demo, err, sizeof err));
    CHECK(own.struct_size == sizeof own && own.a == 3 && own.b == 4 && own.added == 5);
    newer.newer = 1;
    own = defaults;
    CHECK_EQ_INT(h5pack_abi_copy_in(&own, &newer, &demo, err, sizeof err), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(err, "built against a newer h5pack");
    CHECK(own.a == 10 && own.added == 7); /* untouched */
    /* v3 caller, output: the field this library does not know comes back zero, nothing past it is written. */
    SIZED_BUFFER(demo_v3, out3);
    set_size(&out3, sizeof(demo_v3));
    CHECK_OK(h5pack_abi_copy_out(&out3, &defaults, &demo, err, sizeof err));
    CHECK(out3.s.struct_size == sizeof(demo_v3) && out3.s.a == 10 && out3.s.added == 7 && out3.s.newer == 0);
    CHECK(bytes_are(out3.b, sizeof(demo_v3), sizeof out3, CANARY));
    /* Below the first release's size: refused, nothing written. */
    SIZED_BUFFER(demo_v1, small);
    set_size(&small, sizeof(demo_v1) - 1);
    CHECK_EQ_INT(h5pack_abi_copy_out(&small, &defaults, &demo, err, sizeof err), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(err, "demo.struct_size is");
    CHECK_STR_CONTAINS(err, "DEMO_DEFAULTS");
    CHECK(bytes_are(small.b, sizeof(size_t), sizeof small, CANARY));
}

/* ---- old callers: struct_size = the first release's size --------------------------------------- */

#define END_OF(type, last) (offsetof(type, last) + sizeof(((type *)0)->last))

static void test_old_caller(void)
{
    /* The first release's sizes end at these fields, forever. */
    CHECK_EQ_U64(H5PACK_CONFIG_MIN_SIZE, END_OF(h5pack_config, cuda_stream));
    CHECK_EQ_U64(H5PACK_INFO_MIN_SIZE, END_OF(h5pack_info, std));
    CHECK_EQ_U64(H5PACK_STATS_MIN_SIZE, END_OF(h5pack_stats, cache_bytes_used));
    CHECK_EQ_U64(H5PACK_BATCH_MIN_SIZE, END_OF(h5pack_batch, token));
    CHECK_EQ_U64(H5PACK_FILE_DESC_MIN_SIZE, END_OF(h5pack_file_desc, batches_per_epoch));
    CHECK_EQ_U64(H5PACK_SIM_PARAMS_MIN_SIZE, END_OF(h5pack_sim_params, chunk_samples));
    CHECK_EQ_U64(H5PACK_SIM_RESULT_MIN_SIZE, END_OF(h5pack_sim_result, stored_estimated));

    /* Config: the bytes after its struct_size are not read (they would be a non-zero "newer" tail). */
    SIZED_BUFFER(h5pack_config, cfg);
    cfg.s = small_config();
    set_size(&cfg, H5PACK_CONFIG_MIN_SIZE);
    h5pack_reader *r = open_ok(&cfg.s);

    SIZED_BUFFER(h5pack_info, info);
    set_size(&info, H5PACK_INFO_MIN_SIZE);
    CHECK_OK(h5pack_info_get(r, &info.s));
    CHECK_EQ_U64(info.s.struct_size, H5PACK_INFO_MIN_SIZE);
    CHECK_EQ_U64(info.s.n_samples, spec.n);
    CHECK(info.s.channels == spec.c && info.s.height == spec.h && info.s.width == spec.w);
    CHECK(info.s.std[0] > 0.2f && info.s.std[0] < 0.3f); /* ImageNet's: the last first-release field */
    CHECK(bytes_are(info.b, H5PACK_INFO_MIN_SIZE, sizeof info, CANARY));

    SIZED_BUFFER(h5pack_batch, b);
    set_size(&b, H5PACK_BATCH_MIN_SIZE);
    CHECK_OK(h5pack_next(r, &b.s));
    CHECK(b.s.count == 8 && b.s.data && b.s.token != 0);
    CHECK(bytes_are(b.b, H5PACK_BATCH_MIN_SIZE, sizeof b, CANARY));
    CHECK_OK(h5pack_release(r, &b.s));
    CHECK(b.s.token == 0);
    CHECK(bytes_are(b.b, H5PACK_BATCH_MIN_SIZE, sizeof b, CANARY));

    SIZED_BUFFER(h5pack_stats, st);
    set_size(&st, H5PACK_STATS_MIN_SIZE);
    CHECK_OK(h5pack_stats_get(r, &st.s));
    CHECK_EQ_U64(st.s.samples, 8);
    CHECK_EQ_U64(st.s.batches, 1);
    CHECK(bytes_are(st.b, H5PACK_STATS_MIN_SIZE, sizeof st, CANARY));
    h5pack_close(r);
}

/* ---- newer callers: struct_size beyond this library's ------------------------------------------ */

#define NEWER 16 /* bytes a newer header appended */

static void test_newer_caller(void)
{
    SIZED_BUFFER(h5pack_config, cfg);
    cfg.s = small_config();
    set_size(&cfg, sizeof(h5pack_config) + NEWER);
    memset(cfg.b + sizeof(h5pack_config), 0, NEWER); /* fields this library does not know, left at 0 */
    h5pack_reader *r = open_ok(&cfg.s);

    SIZED_BUFFER(h5pack_info, info);
    set_size(&info, sizeof(h5pack_info) + NEWER);
    CHECK_OK(h5pack_info_get(r, &info.s));
    CHECK_EQ_U64(info.s.struct_size, sizeof(h5pack_info) + NEWER);
    CHECK_EQ_U64(info.s.n_samples, spec.n);
    CHECK(bytes_are(info.b, sizeof(h5pack_info), sizeof(h5pack_info) + NEWER, 0));
    CHECK(bytes_are(info.b, sizeof(h5pack_info) + NEWER, sizeof info, CANARY));

    SIZED_BUFFER(h5pack_batch, b);
    set_size(&b, sizeof(h5pack_batch) + NEWER);
    CHECK_OK(h5pack_next(r, &b.s));
    CHECK(b.s.count == 8 && b.s.token != 0);
    CHECK(bytes_are(b.b, sizeof(h5pack_batch), sizeof(h5pack_batch) + NEWER, 0));
    CHECK(bytes_are(b.b, sizeof(h5pack_batch) + NEWER, sizeof b, CANARY));
    CHECK_OK(h5pack_release(r, &b.s));

    SIZED_BUFFER(h5pack_stats, st);
    set_size(&st, sizeof(h5pack_stats) + NEWER);
    CHECK_OK(h5pack_stats_get(r, &st.s));
    CHECK_EQ_U64(st.s.batches, 1);
    CHECK(bytes_are(st.b, sizeof(h5pack_stats), sizeof(h5pack_stats) + NEWER, 0));
    CHECK(bytes_are(st.b, sizeof(h5pack_stats) + NEWER, sizeof st, CANARY));
    h5pack_close(r);

    /* h5pack_config_init fills what it knows and zeroes the rest of a newer caller's struct. */
    SIZED_BUFFER(h5pack_config, init);
    set_size(&init, sizeof(h5pack_config) + NEWER);
    CHECK_OK(h5pack_config_init(&init.s));
    CHECK_EQ_U64(init.s.struct_size, sizeof(h5pack_config) + NEWER);
    CHECK_EQ_U64(init.s.batch_size, 256);
    CHECK(bytes_are(init.b, sizeof(h5pack_config), sizeof(h5pack_config) + NEWER, 0));
    CHECK(bytes_are(init.b, sizeof(h5pack_config) + NEWER, sizeof init, CANARY));

    /* A field this library does not know, set: refused, no reader. */
    cfg.b[sizeof(h5pack_config) + NEWER - 1] = 1;
    r = NULL;
    CHECK_EQ_INT(h5pack_open(path, &cfg.s, &r), H5PACK_EINVAL);
    CHECK(r == NULL);
    CHECK_STR_CONTAINS(h5pack_last_error(NULL), path);
    CHECK_STR_CONTAINS(h5pack_last_error(NULL), "h5pack_config");
    CHECK_STR_CONTAINS(h5pack_last_error(NULL), "built against a newer h5pack");
}

/* ---- struct_size 0 or garbage ------------------------------------------------------------------ */

static void test_unset_config(void)
{
    h5pack_config z;
    memset(&z, 0, sizeof z); /* "all fields 0" is not a configuration */
    h5pack_reader *r = NULL;
    CHECK_EQ_INT(h5pack_open(path, &z, &r), H5PACK_EINVAL);
    CHECK(r == NULL);
    CHECK_STR_CONTAINS(h5pack_last_error(NULL), path);
    CHECK_STR_CONTAINS(h5pack_last_error(NULL), "h5pack_config.struct_size is 0");
    CHECK_STR_CONTAINS(h5pack_last_error(NULL), "start from H5PACK_CONFIG_DEFAULTS");
    /* The other entry points that take a config refuse it the same way. */
    char err[512] = "";
    h5pack_file_desc d = H5PACK_FILE_DESC_INIT;
    CHECK_EQ_INT(h5pack_describe(path, &z, &d, err, sizeof err), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(err, "h5pack_config.struct_size is 0");
    h5pack_sim *sim = NULL;
    CHECK_EQ_INT(h5pack_sim_open(path, &z, &sim), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_sim_last_error(sim), "h5pack_config.struct_size is 0");
    h5pack_sim_close(sim);

    z = small_config();
    set_size(&z, H5PACK_CONFIG_MIN_SIZE - 1);
    CHECK_EQ_INT(h5pack_open(path, &z, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(NULL), "smaller than any h5pack release's h5pack_config");
    set_size(&z, (size_t)1 << 40); /* garbage: refused before anything is read past the struct */
    CHECK_EQ_INT(h5pack_open(path, &z, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(NULL), "not the size of a h5pack_config");

    /* h5pack_config_init needs struct_size set, and writes nothing without it. */
    memset(&z, 0, sizeof z);
    CHECK_EQ_INT(h5pack_config_init(&z), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(NULL), "set it to sizeof(h5pack_config)");
    CHECK(bytes_are((const unsigned char *)&z, 0, sizeof z, 0));
    CHECK_EQ_INT(h5pack_config_init(NULL), H5PACK_EINVAL);

    /* cfg NULL still means the defaults (the file has "images" and "labels"). */
    CHECK_OK(h5pack_open(path, NULL, &r));
    h5pack_info info = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &info));
    CHECK_EQ_U64(info.n_samples, spec.n);
    CHECK(info.has_labels && info.dtype == H5PACK_DTYPE_FLOAT32 && info.output_layout == H5PACK_LAYOUT_NCHW);
    h5pack_close(r);
}

/* An output struct whose struct_size is SIZE: refused with a message naming NAME and MACRO, untouched. */
#define CHECK_OUTPUT_REFUSED(type, call, r, size, name, macro)                 \
    do {                                                                       \
        SIZED_BUFFER(type, buf_);                                              \
        set_size(&buf_, (size));                                               \
        CHECK_EQ_INT(call((r), &buf_.s), H5PACK_EINVAL);                       \
        CHECK_STR_CONTAINS(h5pack_last_error(r), name ".struct_size is");      \
        CHECK_STR_CONTAINS(h5pack_last_error(r), macro);                       \
        CHECK_EQ_U64(buf_.s.struct_size, (size));                              \
        CHECK(bytes_are(buf_.b, sizeof(size_t), sizeof buf_, CANARY));         \
    } while (0)

static void test_unset_outputs(void)
{
    h5pack_config c = small_config();
    h5pack_reader *r = open_ok(&c);
    const size_t bad[] = {0, sizeof(size_t), H5PACK_BATCH_MIN_SIZE - 1, (size_t)1 << 40};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_OUTPUT_REFUSED(h5pack_batch, h5pack_next, r, bad[i], "h5pack_batch", "H5PACK_BATCH_INIT");
        CHECK_OUTPUT_REFUSED(h5pack_batch, h5pack_release, r, bad[i], "h5pack_batch", "H5PACK_BATCH_INIT");
        CHECK_OUTPUT_REFUSED(h5pack_info, h5pack_info_get, r, bad[i], "h5pack_info", "H5PACK_INFO_INIT");
        CHECK_OUTPUT_REFUSED(h5pack_stats, h5pack_stats_get, r, bad[i], "h5pack_stats", "H5PACK_STATS_INIT");
    }
    CHECK_STR_CONTAINS(h5pack_last_error(r), "is 1099511627776, not the size of a h5pack_stats");
    /* The refused h5pack_next calls lost no batch: the first one delivered is still batch 0. */
    h5pack_batch b = H5PACK_BATCH_INIT;
    CHECK_OK(h5pack_next(r, &b));
    CHECK(b.epoch == 0 && b.index == 0 && b.echo == 0);
    CHECK_OK(h5pack_release(r, &b));
    h5pack_stats st = H5PACK_STATS_INIT;
    CHECK_OK(h5pack_stats_get(r, &st));
    CHECK_EQ_U64(st.batches, 1);
    h5pack_close(r);
}

/* ---- the version ------------------------------------------------------------------------------- */

static void test_version(void)
{
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", H5PACK_VERSION_MAJOR, H5PACK_VERSION_MINOR, H5PACK_VERSION_PATCH);
    CHECK_MSG(strcmp(H5PACK_VERSION_STRING, want) == 0, "%s vs %s", H5PACK_VERSION_STRING, want);
    CHECK_MSG(strcmp(h5pack_version_string(), want) == 0, "%s vs %s", h5pack_version_string(), want);
    CHECK_EQ_INT(H5PACK_VERSION_NUMBER, H5PACK_VERSION_MAJOR * 10000 + H5PACK_VERSION_MINOR * 100 + H5PACK_VERSION_PATCH);
    /* CMake's project(VERSION) is read from the header's three numbers. */
    CHECK_MSG(strcmp(H5PACK_TEST_CMAKE_VERSION, want) == 0, "CMake %s vs header %s", H5PACK_TEST_CMAKE_VERSION, want);
}

int main(void)
{
    h5fix_local_name(path, sizeof path, "abi");
    CHECK_OK(h5fix_write(path, &spec));
    test_defaults();
    test_growth_mechanism();
    test_old_caller();
    test_newer_caller();
    test_unset_config();
    test_unset_outputs();
    test_version();
    remove(path);
    printf("reader abi: all checks passed\n");
    return 0;
}
