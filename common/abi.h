/* abi.h - the size-versioned struct convention of the public API (include/h5pack.h, "Extensible structs").
 *
 * Every public struct starts with `size_t struct_size`, set by its defaults or init macro to the sizeof
 * the caller was compiled with. Fields are only ever appended, so a struct from an older caller is a prefix
 * of the library's and one from a newer caller is the library's plus a tail it does not know. These calls
 * are the only places that reconcile the two sizes (as the Linux kernel's copy_struct_from_user does), so
 * no public call ever reads or writes past the caller's struct. */
#ifndef H5PACK_COMMON_ABI_H
#define H5PACK_COMMON_ABI_H

#include <stddef.h>

/* One public struct, as this library sees it. */
typedef struct h5pack_abi_desc {
    const char *name;  /* "h5pack_config": named in every message */
    const char *macro; /* "H5PACK_CONFIG_DEFAULTS": what the message tells the caller to start from */
    size_t own_size;   /* sizeof the struct in this library */
    size_t min_size;   /* its size in the first release (end of its last field then): smaller is refused */
} h5pack_abi_desc;

/* No struct will ever be this large: a struct_size above it is garbage (an uninitialised struct), and
 * refusing it keeps the library from writing far past the caller's memory. */
#define H5PACK_ABI_MAX_STRUCT_SIZE ((size_t)1 << 16)

/* The struct_size the caller's struct declares (its first member). */
size_t h5pack_abi_size(const void *caller);

/* Checks CALLER's struct_size: 0, below D->min_size or above H5PACK_ABI_MAX_STRUCT_SIZE is H5PACK_EINVAL
 * with a message in ERR naming the struct and its macro; else 0. Reads only the struct_size member. */
int h5pack_abi_check(const void *caller, const h5pack_abi_desc *d, char *err, size_t err_len);

/* Input struct: OWN (d->own_size bytes) already holds the library's defaults; the first struct_size bytes
 * of CALLER overwrite them, so fields an older caller does not know keep their defaults. Returns 0, or
 * H5PACK_EINVAL with ERR set (h5pack_abi_check fails, or a newer caller set fields beyond own_size: a
 * non-zero tail) and OWN untouched. own's struct_size is left as d->own_size. */
int h5pack_abi_copy_in(void *own, const void *caller, const h5pack_abi_desc *d, char *err, size_t err_len);

/* Output struct: writes min(struct_size, own_size) bytes of OWN to CALLER, keeps the caller's struct_size,
 * and zeroes the tail a newer caller has beyond own_size. Returns 0, or H5PACK_EINVAL with ERR set when
 * h5pack_abi_check fails (nothing written). */
int h5pack_abi_copy_out(void *caller, const void *own, const h5pack_abi_desc *d, char *err, size_t err_len);

#endif
