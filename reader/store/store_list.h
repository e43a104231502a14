/* store_list.h - every transport a location can name, one line each: X(name) makes "name://..." open with
 * h5pack_store_<name>_ops (defined in store_<name>.c). The file store also opens plain paths. http, https
 * (both in store_http.c) and s3 need libcurl: a build without it defines them in store_http_none.c, which
 * refuses such locations naming the missing library. */
#ifndef H5PACK_STORE_STORE_LIST_H
#define H5PACK_STORE_STORE_LIST_H

#include "store.h"

#define H5PACK_STORES(X) X(file) X(mem) X(http) X(https) X(s3)

#define H5PACK_STORE_DECLARE(name) extern const store_ops h5pack_store_##name##_ops;
H5PACK_STORES(H5PACK_STORE_DECLARE)
#undef H5PACK_STORE_DECLARE

#endif
