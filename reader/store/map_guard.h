/* map_guard.h - a mapped file that shrinks under the reader must not kill the process. Touching a mapped
 * page past the file's new end raises SIGBUS; the mapped path checks the pages when it lends them
 * (MADV_POPULATE_READ), but a batch copied later out of a cache slot, or a truncation between the check
 * and the copy, still touches them. A guarded map's SIGBUS is caught: the pages from the file's new end
 * (or the faulting page) to the end of the map are replaced by zero pages (the copy completes, with
 * zeros), and the guard records the hit; h5pack_next then refuses the batch (store.h,
 * h5pack_store_check), naming the file.
 *
 * The handler is installed once, at the first guard, and chains to the one it replaced for every other
 * SIGBUS (a fault elsewhere still kills the process as before). A SIGBUS the process sends itself while
 * a map is guarded and no handler came before ours is returned from: that is a handler installed later
 * (Python's faulthandler) re-raising a fault after it restored ours, and the fault then recurs here. */
#ifndef H5PACK_STORE_MAP_GUARD_H
#define H5PACK_STORE_MAP_GUARD_H

#include <stddef.h>

/* Guards [MAP, MAP + LEN) (page-aligned, as mmap returns it), the map of the file open as FD (open until
 * the guard ends): a guard number >= 0, or -1 when every guard is taken or the handler cannot be
 * installed (the caller then does not map). */
int h5pack_map_guard_add(const void *map, size_t len, int fd);

/* 1 when a SIGBUS hit guard G (its map now ends in zero pages), else 0. */
int h5pack_map_guard_hit(int g);

/* Ends guard G (before the map is unmapped). */
void h5pack_map_guard_remove(int g);

#endif
