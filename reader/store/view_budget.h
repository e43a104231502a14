/* view_budget.h - what lent views of a mapped file cost in resident memory, held under a limit.
 *
 * A view's pages enter the process's page tables when populated, and Linux maps a page-cache folio
 * whole: a file written or read ahead in 2 MiB folios (h5pack --tiles writes them; cp and large
 * read-aheads make them too) costs 2 MiB of RSS for each view that touches a folio, however small the
 * view. The cache's lent chunks then held several times the cache (a 64 MiB cache of 192 KiB tiles:
 * 190-250 MiB of file pages). The budget counts views by the 2 MiB units of the file they touch (one
 * count per unit), refuses a view that would take the units held past the limit (the caller then reads
 * into its own buffer), and hands back a unit (drops its pages) when its last view ends.
 *
 * Thread rules: take and give from any thread at once (atomic counts); init and free from one. */
#ifndef H5PACK_STORE_VIEW_BUDGET_H
#define H5PACK_STORE_VIEW_BUDGET_H

#include <stdint.h>

#define VIEW_UNIT_BYTES (2ull << 20)

typedef struct view_budget {
    uint32_t *views; /* per unit of the object: the views that touch it; NULL: no limit */
    uint64_t n_units;
    uint64_t limit;  /* bytes of units held at most */
    uint64_t held;   /* bytes of units with views (atomic) */
} view_budget;

/* A limit of LIMIT bytes for the views of an object of SIZE bytes: 0, or -1 without memory (no limit then). */
int h5pack_view_budget_init(view_budget *b, uint64_t size, uint64_t limit);
void h5pack_view_budget_free(view_budget *b);

/* Counts a view of [OFFSET, OFFSET + LEN): 0, or -1 when it would take the units held past the limit
 * (nothing counted then). Always 0 without a limit. */
int h5pack_view_budget_take(view_budget *b, uint64_t offset, uint64_t len);

/* Ends a view that take counted; DROP(CTX, unit_offset, unit_len) for each unit it was the last view of. */
void h5pack_view_budget_give(view_budget *b, uint64_t offset, uint64_t len,
                             void (*drop)(void *ctx, uint64_t offset, uint64_t len), void *ctx);

#endif
