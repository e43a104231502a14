/* view_budget.c - lent views counted by the 2 MiB units they touch (view_budget.h). */
#include "view_budget.h"

#include <stdlib.h>

int h5pack_view_budget_init(view_budget *b, uint64_t size, uint64_t limit)
{
    h5pack_view_budget_free(b);
    uint64_t n = (size + VIEW_UNIT_BYTES - 1) / VIEW_UNIT_BYTES;
    if (limit == 0 || n == 0)
        return 0;
    if (!(b->views = calloc((size_t)n, sizeof *b->views)))
        return -1;
    b->n_units = n, b->limit = limit;
    return 0;
}

void h5pack_view_budget_free(view_budget *b)
{
    free(b->views);
    *b = (view_budget){0};
}

/* Units [*first, *last] that [OFFSET, OFFSET + LEN) touches. */
static void units_of(uint64_t offset, uint64_t len, uint64_t *first, uint64_t *last)
{
    *first = offset / VIEW_UNIT_BYTES;
    *last = (offset + (len ? len : 1) - 1) / VIEW_UNIT_BYTES;
}

/* One view less on units [FIRST, LAST]; DROP for those left without one (NULL: none). */
static void release_units(view_budget *b, uint64_t first, uint64_t last,
                          void (*drop)(void *ctx, uint64_t offset, uint64_t len), void *ctx)
{
    for (uint64_t u = first; u <= last && u < b->n_units; u++)
        if (__atomic_sub_fetch(&b->views[u], 1, __ATOMIC_ACQ_REL) == 0) {
            __atomic_sub_fetch(&b->held, VIEW_UNIT_BYTES, __ATOMIC_ACQ_REL);
            if (drop)
                drop(ctx, u * VIEW_UNIT_BYTES, VIEW_UNIT_BYTES);
        }
}

int h5pack_view_budget_take(view_budget *b, uint64_t offset, uint64_t len)
{
    if (!b->views)
        return 0;
    uint64_t first, last;
    units_of(offset, len, &first, &last);
    for (uint64_t u = first; u <= last && u < b->n_units; u++)
        if (__atomic_fetch_add(&b->views[u], 1, __ATOMIC_ACQ_REL) == 0)
            __atomic_add_fetch(&b->held, VIEW_UNIT_BYTES, __ATOMIC_ACQ_REL);
    if (__atomic_load_n(&b->held, __ATOMIC_ACQUIRE) <= b->limit)
        return 0;
    release_units(b, first, last, NULL, NULL); /* its pages were not brought in: nothing to drop */
    return -1;
}

void h5pack_view_budget_give(view_budget *b, uint64_t offset, uint64_t len,
                             void (*drop)(void *ctx, uint64_t offset, uint64_t len), void *ctx)
{
    uint64_t first, last;
    units_of(offset, len, &first, &last);
    if (b->views)
        release_units(b, first, last, drop, ctx);
    else
        drop(ctx, offset, len);
}
