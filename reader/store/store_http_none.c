/* store_http_none.c - http://, https:// and s3:// in a libh5pack built without libcurl (or OpenSSL's
 * libcrypto): the schemes stay known, so such a location is refused with what the build lacks, not with
 * "no store reads s3:// locations" as if the name were mistyped. The build takes this file instead of
 * store_http*.c and store_s3*.c when it does not find the libraries (reader/CMakeLists.txt). */
#include "errtext.h"
#include "h5pack.h"
#include "store_list.h"

static int refuse(const char *location, store **out, char *err, size_t err_len)
{
    (void)location;
    *out = NULL;
    return h5pack_errf(H5PACK_EINVAL, err, err_len, "this libh5pack was built without libcurl, which remote "
                       "locations need: install libcurl4-openssl-dev (it brings OpenSSL's libcrypto) and build "
                       "h5pack again (docs/reader.md, \"Object storage and HTTPS\")");
}

#define REFUSED_STORE(scheme) \
    const store_ops h5pack_store_##scheme##_ops = {.name = #scheme, .open = refuse};
REFUSED_STORE(http)
REFUSED_STORE(https)
REFUSED_STORE(s3)
