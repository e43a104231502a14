/* h5attr.c - link checks and small attribute reads with HDF5 (see h5glue.h). The caller is quiet
 * (h5pack_h5_enter or h5pack_h5_quiet_begin): absent attributes are normal here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5glue.h"

int h5pack_h5_path_exists(hid_t loc, const char *path)
{
    char partial[1024];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof partial)
        return 0;
    /* H5Lexists fails on "a/b" when "a" is missing: check each prefix in turn. */
    for (size_t i = 1; i <= n; i++) {
        if (i < n && path[i] != '/')
            continue;
        memcpy(partial, path, i);
        partial[i] = '\0';
        if (!strcmp(partial, "/"))
            continue;
        if (H5Lexists(loc, partial, H5P_DEFAULT) <= 0)
            return 0;
    }
    return 1;
}

/* An open attribute with its type and dataspace; every id -1 when absent or unreadable. */
typedef struct attr_handle {
    hid_t attr, type, space;
} attr_handle;

/* 1 opened, 0 absent, -1 present but its type or shape cannot be read. */
static int attr_open(hid_t obj, const char *name, attr_handle *h)
{
    h->attr = h->type = h->space = -1;
    if (H5Aexists(obj, name) <= 0)
        return 0;
    h->attr = H5Aopen(obj, name, H5P_DEFAULT);
    h->type = h->attr >= 0 ? H5Aget_type(h->attr) : -1;
    h->space = h->attr >= 0 ? H5Aget_space(h->attr) : -1;
    return h->type >= 0 && h->space >= 0 ? 1 : -1;
}

static void attr_close(attr_handle *h)
{
    if (h->space >= 0)
        H5Sclose(h->space);
    if (h->type >= 0)
        H5Tclose(h->type);
    if (h->attr >= 0)
        H5Aclose(h->attr);
}

static int read_vlen_string(hid_t attr, hid_t type, char *buf, size_t len)
{
    char *value = NULL;
    hid_t mem = H5Tcopy(H5T_C_S1);
    int rc = -1;
    if (mem < 0)
        return -1;
    if (H5Tset_size(mem, H5T_VARIABLE) >= 0 && H5Tset_cset(mem, H5Tget_cset(type)) >= 0 &&
        H5Aread(attr, mem, &value) >= 0) {
        snprintf(buf, len, "%s", value ? value : "");
        rc = 1;
    }
    if (value)
        H5free_memory(value);
    H5Tclose(mem);
    return rc;
}

static int read_fixed_string(hid_t attr, hid_t type, char *buf, size_t len)
{
    size_t size = H5Tget_size(type);
    char *tmp = size > 0 && size < 65536 ? calloc(1, size + 1) : NULL;
    int rc = -1;
    if (!tmp)
        return -1;
    if (H5Aread(attr, type, tmp) >= 0) {
        snprintf(buf, len, "%s", tmp); /* stops at the first NUL; space padding is trimmed below */
        rc = 1;
    }
    free(tmp);
    for (size_t n = strlen(buf); n > 0 && buf[n - 1] == ' '; n--)
        buf[n - 1] = '\0';
    return rc;
}

int h5pack_h5_read_string_attr(hid_t obj, const char *name, char *buf, size_t len)
{
    attr_handle h;
    buf[0] = '\0';
    int rc = attr_open(obj, name, &h);
    if (rc > 0) {
        if (H5Tget_class(h.type) != H5T_STRING || H5Sget_simple_extent_npoints(h.space) != 1)
            rc = -1;
        else
            rc = H5Tis_variable_str(h.type) > 0 ? read_vlen_string(h.attr, h.type, buf, len)
                                                 : read_fixed_string(h.attr, h.type, buf, len);
    }
    attr_close(&h);
    return rc;
}

int h5pack_h5_read_doubles_attr(hid_t obj, const char *name, double *out, size_t n)
{
    attr_handle h;
    int rc = attr_open(obj, name, &h) > 0;
    if (rc) {
        H5T_class_t cls = H5Tget_class(h.type);
        rc = (cls == H5T_FLOAT || cls == H5T_INTEGER) && H5Sget_simple_extent_npoints(h.space) == (hssize_t)n &&
             H5Aread(h.attr, H5T_NATIVE_DOUBLE, out) >= 0;
    }
    attr_close(&h);
    return rc;
}

int h5pack_h5_read_int_attr(hid_t obj, const char *name, int64_t *out, char *why, size_t why_len)
{
    attr_handle h;
    char tname[64];
    int rc = attr_open(obj, name, &h);
    if (rc < 0)
        snprintf(why, why_len, "cannot be read");
    if (rc <= 0) {
        attr_close(&h);
        return rc;
    }
    hssize_t n = H5Sget_simple_extent_npoints(h.space);
    h5pack_h5_type_name(h.type, tname, sizeof tname);
    if (H5Tget_class(h.type) != H5T_INTEGER)
        snprintf(why, why_len, "holds %s, not an integer", tname);
    else if (n != 1)
        snprintf(why, why_len, "holds %lld values, not one", (long long)n);
    else if (H5Aread(h.attr, H5T_NATIVE_INT64, out) < 0)
        snprintf(why, why_len, "cannot be read as a 64-bit integer (%s)", tname);
    else
        rc = 2;
    attr_close(&h);
    return rc == 2 ? 1 : -1;
}
