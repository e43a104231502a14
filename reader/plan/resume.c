/* resume.c - the order fingerprint and the start position's checks (resume.h). */
#include "resume.h"

#include <stdio.h>
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

uint64_t h5pack_order_fingerprint(const h5pack_config *cfg, const reader_setup *s, const source_geometry *g)
{
    const order_params *op = &s->op;
    fp_hash f = {0xCBF29CE484222325ull};
    put_u64(&f, H5PACK_ORDER_ALGORITHM);
    put_u64(&f, op->n_samples), put_u64(&f, op->samples_per_chunk);
    put_u64(&f, g->channels), put_u64(&f, g->height), put_u64(&f, g->width);
    put_u64(&f, op->seed), put_u64(&f, (uint64_t)op->kind);
    put_u64(&f, op->kind == H5PACK_ORDER_CHUNK ? op->window : 0); /* the other orders ignore it */
    put_u64(&f, op->world), put_u64(&f, op->batch_size), put_u64(&f, op->drop_last ? 1 : 0);
    put_u64(&f, cfg->echo), put_u64(&f, cfg->echo > 1 ? (uint64_t)cfg->echo_mode : 0);
    put_u64(&f, (uint64_t)cfg->crop);
    if (cfg->crop == H5PACK_CROP_RANDOM_RESIZED) {
        put_double(&f, cfg->scale_min), put_double(&f, cfg->scale_max);
        put_double(&f, cfg->ratio_min), put_double(&f, cfg->ratio_max);
    }
    put_u64(&f, cfg->random_flip ? 1 : 0), put_u64(&f, (uint64_t)(int64_t)cfg->random_crop_padding);
    return rng_mix64(f.h);
}

int h5pack_reader_check_start(const h5pack_config *cfg, const reader_setup *s, char *err, size_t err_len)
{
    uint64_t bpe = h5pack_order_batches_per_epoch(&s->op);
    if (cfg->start_batch > 0 && cfg->start_batch >= bpe) {
        snprintf(err, err_len, "start_batch = %llu: an epoch has %llu batches on this rank (0 .. %llu)",
                 (unsigned long long)cfg->start_batch, (unsigned long long)bpe,
                 (unsigned long long)(bpe ? bpe - 1 : 0));
        return H5PACK_EINVAL;
    }
    if (cfg->start_echo > 0 && cfg->start_echo >= cfg->echo) {
        snprintf(err, err_len, "start_echo = %u: each batch is delivered echo = %u times (0 .. %u)", cfg->start_echo,
                 cfg->echo, cfg->echo ? cfg->echo - 1 : 0);
        return H5PACK_EINVAL;
    }
    if (bpe && cfg->start_epoch > (UINT64_MAX - cfg->start_batch) / bpe) {
        snprintf(err, err_len, "start_epoch = %llu: too large (the position does not fit in 64 bits)",
                 (unsigned long long)cfg->start_epoch);
        return H5PACK_EINVAL;
    }
    return 0;
}
