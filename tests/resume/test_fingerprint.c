/* test_fingerprint.c - h5pack_info.order_fingerprint: the same for settings that do not change the
 * stream's order or draws, or that only split it (rank, threads, cache, prefetch, dtype, normalisation,
 * epochs, the start position, world and batch size: a checkpoint loads into any split, order.h),
 * different for each one that does (seed, window, order, drop_last, echo, echo mode, crop, flip,
 * padding, the file's geometry); h5pack_describe reports the same value without opening a reader. */
#include <unistd.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

static h5pack_config base_config(void)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = 16, c.threads = 1, c.cache_bytes = 64 << 20, c.seed = 7;
    c.world = 2, c.window = 4;
    return c;
}

static uint64_t fingerprint(const char *path, const h5pack_config *c)
{
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, c, &r);
    CHECK_MSG(rc == 0, "open %s: %s", path, h5pack_last_error(r));
    h5pack_info info = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &info));
    h5pack_close(r);
    h5pack_file_desc d = H5PACK_FILE_DESC_INIT;
    char err[512];
    CHECK_MSG(h5pack_describe(path, c, &d, err, sizeof err) == 0, "describe: %s", err);
    CHECK_EQ_U64(d.order_fingerprint, info.order_fingerprint);
    return info.order_fingerprint;
}

typedef void (*tweak_fn)(h5pack_config *c);
#define TWEAK(name, body)                \
    static void name(h5pack_config *c)  \
    {                                    \
        body;                            \
    }

TWEAK(t_rank, c->rank = 1)
TWEAK(t_threads, c->threads = 3)
TWEAK(t_cache, c->cache_bytes = 32 << 10)
TWEAK(t_prefetch, c->prefetch = 7)
TWEAK(t_dtype, c->dtype = H5PACK_DTYPE_UINT8)
TWEAK(t_norm, c->norm = H5PACK_NORM_NONE)
TWEAK(t_epochs, c->epochs = 5)
TWEAK(t_start, (c->start_epoch = 3, c->start_batch = 1))
TWEAK(t_start_sample, (c->start_epoch = 3, c->start_sample = 33))
TWEAK(t_world, c->world = 3)
TWEAK(t_batch, c->batch_size = 17)
TWEAK(t_split, (c->world = 4, c->batch_size = 8)) /* the same global batch, split otherwise */
TWEAK(t_echo_mode_alone, c->echo_mode = H5PACK_ECHO_SAMPLE) /* echo 1: sample echo delivers like batch echo */
TWEAK(t_scale_without_rrc, c->scale_min = 0.5)           /* no random resized crop: the range is unused */

TWEAK(t_seed, c->seed = 8)
TWEAK(t_window, c->window = 5)
TWEAK(t_order, c->order = H5PACK_ORDER_RANDOM)
TWEAK(t_drop_last, c->drop_last = 1)
TWEAK(t_echo, c->echo = 2)
TWEAK(t_echo_mode, (c->echo = 2, c->echo_mode = H5PACK_ECHO_SAMPLE))
TWEAK(t_crop, c->crop = H5PACK_CROP_RANDOM_RESIZED)
TWEAK(t_scale, (c->crop = H5PACK_CROP_RANDOM_RESIZED, c->scale_min = 0.5))
TWEAK(t_ratio, (c->crop = H5PACK_CROP_RANDOM_RESIZED, c->ratio_max = 1.5))
TWEAK(t_flip, c->random_flip = 1)
TWEAK(t_padding, c->random_crop_padding = 2)

int main(void)
{
    char a[256], b[256];
    h5fix_local_name(a, sizeof a, "fp_a");
    h5fix_local_name(b, sizeof b, "fp_b");
    const h5fix_file sa = {.n = 100, .c = 3, .h = 8, .w = 8, .k = 5, .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw};
    const h5fix_file sb = {.n = 100, .c = 3, .h = 8, .w = 8, .k = 4, .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw}; /* other chunks */
    CHECK_OK(h5fix_write(a, &sa));
    CHECK_OK(h5fix_write(b, &sb));
    h5pack_config c = base_config();
    uint64_t base = fingerprint(a, &c);
    CHECK(base != 0);
    const struct {
        const char *name;
        tweak_fn fn;
        int same;
    } tweaks[] = {
        {"rank", t_rank, 1}, {"threads", t_threads, 1}, {"cache", t_cache, 1}, {"prefetch", t_prefetch, 1},
        {"dtype", t_dtype, 1}, {"norm", t_norm, 1}, {"epochs", t_epochs, 1}, {"start position", t_start, 1},
        {"echo_mode with echo 1", t_echo_mode_alone, 1}, {"scale without the crop", t_scale_without_rrc, 1},
        {"start_sample", t_start_sample, 1}, {"world", t_world, 1}, {"batch_size", t_batch, 1},
        {"another split of the global batch", t_split, 1},
        {"seed", t_seed, 0}, {"window", t_window, 0}, {"order", t_order, 0},
        {"drop_last", t_drop_last, 0}, {"echo", t_echo, 0},
        {"echo_mode", t_echo_mode, 0}, {"crop", t_crop, 0}, {"scale", t_scale, 0}, {"ratio", t_ratio, 0},
        {"flip", t_flip, 0}, {"padding", t_padding, 0},
    };
    uint64_t seen[64];
    size_t n_seen = 0;
    for (size_t i = 0; i < sizeof tweaks / sizeof *tweaks; i++) {
        h5pack_config t = base_config();
        tweaks[i].fn(&t);
        uint64_t f = fingerprint(a, &t);
        CHECK_MSG((f == base) == tweaks[i].same, "%s: fingerprint %016llx vs %016llx, expected %s", tweaks[i].name,
                  (unsigned long long)f, (unsigned long long)base, tweaks[i].same ? "the same" : "a different one");
        if (!tweaks[i].same) { /* the differing ones differ from each other too */
            for (size_t k = 0; k < n_seen; k++)
                CHECK_MSG(seen[k] != f, "%s: fingerprint collides with another setting's", tweaks[i].name);
            seen[n_seen++] = f;
        }
    }
    /* the window is not part of the RANDOM order: changing it there changes nothing */
    h5pack_config r1 = base_config(), r2 = base_config();
    r1.order = r2.order = H5PACK_ORDER_RANDOM, r2.window = 9;
    CHECK_EQ_U64(fingerprint(a, &r1), fingerprint(a, &r2));
    /* the file's geometry: other chunks, same everything else */
    CHECK(fingerprint(b, &c) != base);
    unlink(a), unlink(b);
    return 0;
}
