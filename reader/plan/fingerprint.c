/* fingerprint.c - the stream fingerprint (fingerprint.h). */
#include "fingerprint.h"

#include <string.h>

#include "rng.h"

/* FNV-1a over the little-endian bytes of each value, finished by splitmix64 (the result is a well-mixed
 * 64-bit number even for settings that differ in one low bit). */
typedef struct fp_hash {
    uint64_t h;
} fp_hash;

static void put_u64(fp_hash *f, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        f->h ^= (v >> (8 * i)) & 0xFF;
        f->h *= 0x100000001B3ull;
    }
}

static void put_double(fp_hash *f, double v)
{
    uint64_t bits;
    v = v == 0.0 ? 0.0 : v; /* -0.0 and 0.0 draw the same */
    memcpy(&bits, &v, sizeof bits);
    put_u64(f, bits);
}

static void put_augmentation(fp_hash *f, const h5pack_config *cfg)
{
    put_u64(f, cfg->echo), put_u64(f, cfg->echo > 1 ? (uint64_t)cfg->echo_mode : 0);
    put_u64(f, (uint64_t)cfg->crop);
    if (cfg->crop == H5PACK_CROP_RANDOM_RESIZED) {
        put_double(f, cfg->scale_min), put_double(f, cfg->scale_max);
        put_double(f, cfg->ratio_min), put_double(f, cfg->ratio_max);
    }
    put_u64(f, cfg->random_flip ? 1 : 0), put_u64(f, (uint64_t)(int64_t)cfg->random_crop_padding);
}

/* Patches only: their epochs are split by rank (patch_windows.c), so world and batch size enter. */
static void put_patches(fp_hash *f, const h5pack_config *cfg, const fingerprint_facts *x)
{
    if (!cfg->patch_size)
        return;
    put_u64(f, cfg->world), put_u64(f, cfg->batch_size);
    put_u64(f, cfg->patch_size), put_u64(f, cfg->patch_overlap), put_u64(f, (uint64_t)cfg->patch_mode);
    put_u64(f, cfg->patches_per_epoch);
    for (uint64_t i = 0; i < x->n_sizes; i++) {
        uint32_t h, w;
        x->size_of(x->ctx, i, &h, &w);
        put_u64(f, ((uint64_t)h << 32) | w);
    }
}

uint64_t h5pack_fingerprint(const h5pack_config *cfg, const fingerprint_facts *x)
{
    fp_hash f = {0xCBF29CE484222325ull};
    put_u64(&f, H5PACK_ORDER_ALGORITHM);
    put_u64(&f, x->n_samples), put_u64(&f, x->samples_per_chunk);
    put_u64(&f, x->channels), put_u64(&f, x->height), put_u64(&f, x->width);
    put_u64(&f, cfg->seed), put_u64(&f, (uint64_t)cfg->order);
    put_u64(&f, cfg->order == H5PACK_ORDER_CHUNK ? x->window : 0); /* the other orders ignore it */
    put_u64(&f, cfg->drop_last ? 1 : 0); /* not world or batch_size: any split resumes (order.h) */
    put_augmentation(&f, cfg);
    put_patches(&f, cfg, x);
    return rng_mix64(f.h);
}
