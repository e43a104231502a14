/* augment_kept_taps.c - one planner's store of random resized crops' taps per box length; see
 * augment_kept_taps.h. */
#include "augment_kept_taps.h"

#include <stdlib.h>
#include <string.h>

void h5pack_aug_shift_taps(const int32_t *from_pairs, const float *from_w, int32_t *to_pairs, float *to_w, uint32_t out,
                           uint32_t k, int32_t shift)
{
    for (uint32_t o = 0; o < out; o++)
        to_pairs[2 * o] = from_pairs[2 * o] + shift, to_pairs[2 * o + 1] = from_pairs[2 * o + 1];
    memcpy(to_w, from_w, (size_t)out * k * sizeof(float));
}

void h5pack_kept_taps_free(aug_kept_taps *kt)
{
    free(kt->at), free(kt->pairs), free(kt->w);
    memset(kt, 0, sizeof *kt);
}

int h5pack_kept_taps_shape(aug_kept_taps *kt, uint32_t out, uint32_t k, uint32_t max_length)
{
    if (kt->at && kt->out == out && kt->k == k && kt->lengths > max_length)
        return 0;
    h5pack_kept_taps_free(kt);
    size_t set_bytes = (size_t)out * (2 * sizeof(int32_t) + k * sizeof(float));
    kt->at = calloc((size_t)max_length + 1, sizeof *kt->at);
    if (!kt->at || set_bytes == 0)
        return kt->at ? 0 : -1;
    kt->out = out, kt->k = k, kt->lengths = max_length + 1;
    size_t cap = KEPT_TAPS_BUDGET / set_bytes;
    kt->cap = cap > max_length ? max_length : (uint32_t)cap;
    return 0;
}

int h5pack_kept_taps_get(const aug_kept_taps *kt, uint32_t length, uint32_t offset, int32_t *pairs, float *w)
{
    if (length >= kt->lengths || !kt->at[length])
        return 0;
    size_t set = kt->at[length] - 1;
    h5pack_aug_shift_taps(kt->pairs + set * kt->out * 2, kt->w + set * kt->out * kt->k, pairs, w, kt->out, kt->k,
                          (int32_t)offset);
    return 1;
}

/* Room for one more tap set (doubling up to the budget's cap). 0, or -1 when full or without memory. */
static int make_room(aug_kept_taps *kt)
{
    if (kt->used < kt->room)
        return 0;
    if (kt->room >= kt->cap)
        return -1;
    uint32_t room = kt->room ? kt->room * 2 : 16;
    room = room > kt->cap ? kt->cap : room;
    int32_t *pairs = realloc(kt->pairs, (size_t)room * kt->out * 2 * sizeof *pairs);
    if (!pairs)
        return -1;
    kt->pairs = pairs;
    float *w = realloc(kt->w, (size_t)room * kt->out * kt->k * sizeof *w);
    if (!w)
        return -1;
    kt->w = w, kt->room = room;
    return 0;
}

void h5pack_kept_taps_put(aug_kept_taps *kt, uint32_t length, uint32_t offset, const int32_t *pairs,
                          const float *w)
{
    if (length >= kt->lengths || kt->at[length] || make_room(kt) != 0)
        return;
    size_t set = kt->used;
    h5pack_aug_shift_taps(pairs, w, kt->pairs + set * kt->out * 2, kt->w + set * kt->out * kt->k, kt->out, kt->k,
                          -(int32_t)offset); /* kept relative to the box */
    kt->at[length] = ++kt->used;
}
