/* api_structs.c - see api_structs.h; also h5pack_config_init(). */
#include "api_structs.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "resolve.h"

static _Thread_local char thread_error[512];

void h5pack_reader_set_thread_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(thread_error, sizeof thread_error, fmt, ap);
    va_end(ap);
}

const char *h5pack_reader_thread_error(void)
{
    return thread_error;
}

/* Static, so its padding is zero too: h5pack_config_init writes the same bytes on every call. */
static const h5pack_config config_defaults = H5PACK_CONFIG_DEFAULTS;

int h5pack_reader_config_in(const h5pack_config *cfg, h5pack_config *own, char *err, size_t err_len)
{
    memcpy(own, &config_defaults, sizeof *own);
    if (cfg && h5pack_abi_copy_in(own, cfg, &h5pack_abi_config, err, err_len))
        return H5PACK_EINVAL;
    return h5pack_reader_check_config(own, err, err_len);
}

H5PACK_API int h5pack_config_init(h5pack_config *cfg)
{
    if (!cfg) {
        h5pack_reader_set_thread_error("h5pack_config_init: cfg must not be NULL");
        return H5PACK_EINVAL;
    }
    char err[384];
    if (h5pack_abi_copy_out(cfg, &config_defaults, &h5pack_abi_config, err, sizeof err)) {
        /* struct_size is the one field the caller sets here: say so rather than "start from the macro". */
        h5pack_reader_set_thread_error("h5pack_config_init: cfg->struct_size is %zu: set it to sizeof(h5pack_config) "
                                       "(as the program was compiled) before the call",
                                       h5pack_abi_size(cfg));
        return H5PACK_EINVAL;
    }
    return H5PACK_OK;
}
