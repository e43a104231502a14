/* params.h - the reader's parameter table (params.c, public as h5pack_param_table()) and what it takes
 * from the enum lists of h5pack.h (H5PACK_ORDER_MAP, H5PACK_DTYPE_MAP, ...). */
#ifndef H5PACK_READER_PARAMS_H
#define H5PACK_READER_PARAMS_H

#include <stddef.h>

#include "h5pack.h"

/* Every numeric field of CFG within its table bounds: 0, or H5PACK_EINVAL with "invalid configuration:
 * NAME must be ... (got V): DOC" in ERR. */
int h5pack_params_check(const h5pack_config *cfg, char *err, size_t err_len);

/* The number of values of the enum made by list MAP: its values are 0 .. count - 1. */
#define H5PACK_ENUM_COUNT(map) (0 map(H5PACK_ENUM_ONE_))
#define H5PACK_ENUM_ONE_(...) +1

/* The names of list MAP's values, comma-separated in value order ("nchw,nhwc,auto"): every name follows
 * a comma, and the string starts after the first. */
#define H5PACK_ENUM_NAMES(map) (map(H5PACK_ENUM_COMMA_NAME_) + 1)
#define H5PACK_ENUM_COMMA_NAME_(group, name, value, ...) "," H5PACK_ENUM_FIRST_(__VA_ARGS__, 0)
#define H5PACK_ENUM_FIRST_(first, ...) first

#endif
