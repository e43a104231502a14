/* packorder.h - the order in which the scanned images are packed: shuffled by a seed (default) so that no
 * chunk holds a single class, or the sorted order (--keep-order). */
#ifndef H5PACK_PACKORDER_H
#define H5PACK_PACKORDER_H

#include <stddef.h>
#include <stdint.h>

/* A permutation of 0..N-1 (malloc'ed, NULL when out of memory): position p packs scanned entry
 * perm[p]. Fisher-Yates driven by splitmix64(SEED) (common/rng.h, the reader's generator): the same
 * on every platform and thread count. */
size_t *pack_order(size_t n, uint64_t seed, int keep_order);

#endif
