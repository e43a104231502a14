/* dlpack_release.c - h5pack_dlpack_mark_released(): the DLManagedTensor deleter of the bindings' DLPack
 * export (python/h5pack/_dlpack.py), in C so that no interpreter code runs wherever a framework calls it. */
#include <stdint.h>

#include "h5pack.h"

/* DLPack 0.8's DLManagedTensor up to manager_ctx: the DLTensor (data, device, ndim, dtype, shape,
 * strides, byte_offset), then the context. Only the layout matters here; the binding fills the struct. */
typedef struct dl_tensor_layout {
    void *data;
    int32_t device_type, device_id;
    int32_t ndim;
    uint8_t code, bits;
    uint16_t lanes;
    int64_t *shape, *strides;
    uint64_t byte_offset;
} dl_tensor_layout;

typedef struct dl_managed_layout {
    dl_tensor_layout dl_tensor;
    void *manager_ctx;
    void (*deleter)(void *self);
} dl_managed_layout;

H5PACK_API void h5pack_dlpack_mark_released(void *managed_tensor)
{
    if (!managed_tensor)
        return;
    dl_managed_layout *m = managed_tensor;
    if (m->manager_ctx)
        __atomic_store_n((uint64_t *)m->manager_ctx, 1, __ATOMIC_RELEASE);
}
