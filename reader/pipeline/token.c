/* token.c - see token.h. */
#include "token.h"

#include <stdatomic.h>

uint64_t h5pack_token_new_tag(void)
{
    static _Atomic uint32_t counter;
    return ((uint64_t)(atomic_fetch_add(&counter, 1) % 0xFFFFu) + 1) << H5PACK_TOKEN_TAG_SHIFT;
}
