/* stream_kinds.c - choosing a stream kind (H5PACK_STREAMS, stream.h), and the backend every kind makes. */
#include <stdio.h>

#include "stream.h"

#define LIST_STREAM(name) &h5pack_stream_##name##_ops,
static const stream_ops *const g_kinds[] = {H5PACK_STREAMS(LIST_STREAM)};
#undef LIST_STREAM

#define N_KINDS (sizeof g_kinds / sizeof g_kinds[0])

const stream_ops *h5pack_stream_for(const h5pack_config *cfg)
{
    for (size_t i = 0; i + 1 < N_KINDS; i++)
        if (g_kinds[i]->accepts(cfg))
            return g_kinds[i];
    return g_kinds[N_KINDS - 1]; /* the last kind takes what no other does */
}

const stream_ops *h5pack_stream_describing(const char *path, const h5pack_config *cfg)
{
    const stream_ops *kind = h5pack_stream_for(cfg);
    if (kind != g_kinds[N_KINDS - 1])
        return kind; /* asked for by the config */
    for (size_t i = 0; i < N_KINDS; i++)
        if (g_kinds[i]->reads_file && g_kinds[i]->reads_file(path))
            return g_kinds[i];
    return kind;
}

int h5pack_stream_make_backend(const h5pack_config *cfg, const backend_params *bp, backend **out, char *err,
                               size_t err_len)
{
    int use_cuda = cfg->device == H5PACK_DEVICE_CUDA ||
                   (cfg->device == H5PACK_DEVICE_AUTO && h5pack_backend_cuda_available(cfg->gpu_id));
    if (use_cuda)
        return h5pack_backend_cuda_create(bp, out, err, err_len);
    return h5pack_backend_cpu_create(bp, out, err, err_len);
}

void h5pack_stream_backend_info(const backend *be, h5pack_info *info)
{
    info->device = be->device;
    snprintf(info->device_name, sizeof info->device_name, "%s", be->name);
    be->ops->times((backend *)be, NULL, NULL, &info->device_bytes);
    info->pinned_bytes = be->pinned_bytes;
}
