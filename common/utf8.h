/* utf8.h - UTF-8 validation for the names h5pack writes into files (converter) and into JSON (h5pack-stats):
 * both must be valid UTF-8, and both need to know where a byte that is not starts. */
#ifndef H5PACK_COMMON_UTF8_H
#define H5PACK_COMMON_UTF8_H

#include <stddef.h>

/* Length (1..4) of the valid UTF-8 sequence at P, or 0 when the byte at P starts none: a stray
 * continuation byte, an overlong form, a surrogate (U+D800..U+DFFF), beyond U+10FFFF, or a sequence cut
 * short (by a NUL too: P must be NUL-terminated or have 4 readable bytes). */
size_t h5pack_utf8_sequence_len(const unsigned char *p);

#endif
