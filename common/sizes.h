/* sizes.h - the one rule for sizes and counts typed by people (docs/reader.md, "Sizes and counts"): the
 * h5pack command line, h5pack-stats, the samples and (mirrored line for line) python/h5pack/_convert.py.
 *
 *   "4096", "64K", "64KB", "64KiB", "64k", "1.5G", "2t", "100B"
 *   K, M, G, T = 1024, 1024^2, 1024^3, 1024^4, with or without a following B or iB, in any case; a plain
 *   number (or one ending in B) is that many bytes or items. A fraction needs a unit ("1.5G"; at most
 *   H5PACK_SIZE_MAX_DECIMALS digits after the point) and is rounded down to a whole number.
 *   Rejected: empty, signs, spaces, other suffixes, exponents, values above 2^64-1.
 *
 * The table tests/common/sizes.txt is run through this parser and through the Python one. */
#ifndef H5PACK_COMMON_SIZES_H
#define H5PACK_COMMON_SIZES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define H5PACK_SIZE_MAX_DECIMALS 9

/* Why a size was rejected; h5pack_size_error_name gives the words tests and messages use. */
typedef enum h5pack_size_status {
    H5PACK_SIZE_OK = 0,
    H5PACK_SIZE_EMPTY,    /* "" */
    H5PACK_SIZE_NEGATIVE, /* "-1K" */
    H5PACK_SIZE_SYNTAX,   /* "+5", " 64M", "1.K", ".5K", "K" */
    H5PACK_SIZE_SUFFIX,   /* "64X", "64MiBs", "5iB", "1e9", "64 M" */
    H5PACK_SIZE_FRACTION, /* "1.5" or "1.5B" (no unit), more than H5PACK_SIZE_MAX_DECIMALS decimals */
    H5PACK_SIZE_OVERFLOW  /* above 2^64-1 */
} h5pack_size_status;

/* Parses TEXT (see above) into *OUT. Returns H5PACK_SIZE_OK, or the reason, with words about it in WHY
 * (may be NULL) that follow "bad value 'TEXT': ", e.g. "unknown suffix 'X' (use K, M, G or T, optionally
 * followed by B or iB)". */
h5pack_size_status h5pack_parse_size(const char *text, uint64_t *out, char *why, size_t why_len);

/* Plain decimal digits only (seeds, ranks: numbers that are not amounts): 0, or -1 with WHY. */
int h5pack_parse_uint(const char *text, uint64_t *out, char *why, size_t why_len);

/* "empty", "negative", "syntax", "suffix", "fraction", "overflow" ("ok" for H5PACK_SIZE_OK). */
const char *h5pack_size_error_name(h5pack_size_status status);

/* Bytes for people, in binary units with up to three significant digits: "512 B", "64 MiB", "1.5 GiB",
 * "230 KiB", "12.3 MiB". Always fits in 16 bytes. */
void h5pack_format_bytes(uint64_t bytes, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
