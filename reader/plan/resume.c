/* resume.c - the start position's checks (resume.h). */
#include "resume.h"

#include <stdio.h>
#include <string.h>

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
