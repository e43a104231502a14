/* error.c - error texts and versions: the parts of the API that need no reader (h5pack_config_init is in
 * api_structs.c). */
#include <string.h>

#include "h5pack.h"

H5PACK_API const char *h5pack_strerror(int code)
{
    switch (code) {
#define H5PACK_ERROR_CASE_(name, value, text) \
    case value:                               \
        return text;
        H5PACK_ERROR_MAP(H5PACK_ERROR_CASE_)
#undef H5PACK_ERROR_CASE_
    }
    return "unknown error";
}

H5PACK_API const char *h5pack_version_string(void)
{
    return H5PACK_VERSION_STRING;
}
