/* mask_match.h - pairing the scanned images with their masks (--masks MASK_DIR).
 *
 * The rule: MASK_DIR mirrors SRC_DIR's relative paths by stem, the path without the file name's
 * extension: SRC_DIR/cat/001.jpg pairs with MASK_DIR/cat/001.png (or any MASK_DIR/cat/001.EXT). MASK_DIR is
 * walked like SRC_DIR (recursively, symbolic links followed, names starting with '.' ignored), every file
 * a candidate. An image without a mask, an image whose stem two files of MASK_DIR share, an image whose mask
 * is no usable PNG (mask_probe) and a mask file without an image become skipped files with the reason;
 * the mask without an image is named by its path under MASK_DIR as given. */
#ifndef H5PACK_MASK_MATCH_H
#define H5PACK_MASK_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "scan.h"

/* Sets every kept entry's mask (its path relative to MASK_DIR), moves the others to scan->skipped and
 * adds the masks without an image there too. *BYTES: 2 when a kept mask is 16-bit, else 1 (the masks
 * dataset's type). Returns 0, or -1 with ERR set (MASK_DIR cannot be listed, out of memory). */
int mask_match(const char *mask_dir, scan_result *scan, uint32_t *bytes, char *err, size_t err_len);

#endif
