/* resume.c - the start position's checks and resolution (resume.h). */
#include "resume.h"

#include <stdio.h>
#include <string.h>

#include "order.h"

/* start_sample: the rest of the epoch from that position of its order, in this run's global batches. */
static int resolve_sample(const h5pack_config *cfg, reader_setup *s, char *err, size_t err_len)
{
    uint64_t batch = 0;
    int64_t origin = 0;
    int rc = h5pack_order_start(&s->op, cfg->start_sample, &batch, &origin);
    if (rc < 0) {
        snprintf(err, err_len, "start_sample = %llu: an epoch's order has %llu samples (0 .. %llu)",
                 (unsigned long long)cfg->start_sample, (unsigned long long)s->op.n_samples,
                 (unsigned long long)s->op.n_samples);
        return H5PACK_EINVAL;
    }
    if (rc == 1) { /* nothing of the epoch is left: the next one from its start */
        if (cfg->start_epoch == UINT64_MAX) {
            snprintf(err, err_len, "start_epoch = %llu: too large (nothing is left of it at start_sample %llu)",
                     (unsigned long long)cfg->start_epoch, (unsigned long long)cfg->start_sample);
            return H5PACK_EINVAL;
        }
        s->start_epoch = cfg->start_epoch + 1, s->start_batch = 0, s->start_echo = 0, s->start_origin = 0;
        return 0;
    }
    s->start_batch = batch, s->start_origin = origin;
    return 0;
}

int h5pack_reader_check_start(const h5pack_config *cfg, reader_setup *s, char *err, size_t err_len)
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
    if (cfg->start_sample && resolve_sample(cfg, s, err, err_len))
        return H5PACK_EINVAL;
    if (bpe && s->start_epoch > (UINT64_MAX - s->start_batch) / bpe) {
        snprintf(err, err_len, "start_epoch = %llu: too large (the position does not fit in 64 bits)",
                 (unsigned long long)s->start_epoch);
        return H5PACK_EINVAL;
    }
    return 0;
}
