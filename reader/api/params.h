/* params.h - the reader's parameter table (params.c, public as h5pack_param_table()). */
#ifndef H5PACK_READER_PARAMS_H
#define H5PACK_READER_PARAMS_H

#include <stddef.h>

#include "h5pack.h"

/* Every numeric field of CFG within its table bounds: 0, or H5PACK_EINVAL with "invalid configuration:
 * NAME must be ... (got V): DOC" in ERR. */
int h5pack_params_check(const h5pack_config *cfg, char *err, size_t err_len);

#endif
