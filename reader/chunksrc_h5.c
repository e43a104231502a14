/* chunksrc_h5.c - small HDF5 helpers for the chunk source: quiet error stacks turned into message text,
 * type and shape names for error messages, path checks and attribute reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunksrc_impl.h"

static pthread_mutex_t g_h5_lock = PTHREAD_MUTEX_INITIALIZER;

void h5pack_h5_lock_global(void)
{
    pthread_mutex_lock(&g_h5_lock);
}

void h5pack_h5_unlock_global(void)
{
    pthread_mutex_unlock(&g_h5_lock);
}

void h5pack_h5_enter(h5_quiet *q)
{
    pthread_mutex_lock(&g_h5_lock);
    h5pack_h5_quiet_begin(q);
}

void h5pack_h5_leave(const h5_quiet *q)
{
    h5pack_h5_quiet_end(q);
    pthread_mutex_unlock(&g_h5_lock);
}

void h5pack_h5_quiet_begin(h5_quiet *q)
{
    q->func = NULL;
    q->data = NULL;
    H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void h5pack_h5_quiet_end(const h5_quiet *q)
{
    H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

typedef struct error_walk {
    char inner[256], outer[256];
    int io;
} error_walk;

/* Upward walk: n == 0 is the innermost error (where it was detected), the last one the API call. */
static herr_t collect_error(unsigned n, const H5E_error2_t *e, void *data)
{
    error_walk *w = data;
    const char *desc = e->desc ? e->desc : "";
    if (n == 0)
        snprintf(w->inner, sizeof w->inner, "%s", desc);
    snprintf(w->outer, sizeof w->outer, "%s", desc);
    if (n == 0)
        w->io = e->maj_num == H5E_IO; /* a failed system read, not a checksum or filter failure */
    return 0;
}

static void walk_errors(error_walk *w)
{
    memset(w, 0, sizeof *w);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_error, w);
}

void h5pack_h5_error_text(char *buf, size_t len)
{
    error_walk w;
    walk_errors(&w);
    if (!w.inner[0] && !w.outer[0])
        snprintf(buf, len, "no detail from HDF5");
    else if (!strcmp(w.inner, w.outer))
        snprintf(buf, len, "%s", w.inner);
    else
        snprintf(buf, len, "%s: %s", w.outer, w.inner);
}

int h5pack_h5_error_is_io(void)
{
    error_walk w;
    walk_errors(&w);
    return w.io;
}

static const char *integer_name(size_t size, int is_signed)
{
    static const char *const names[2][4] = {{"uint8", "uint16", "uint32", "uint64"},
                                            {"int8", "int16", "int32", "int64"}};
    int idx = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
    return idx < 0 ? NULL : names[is_signed ? 1 : 0][idx];
}

void h5pack_h5_type_name(hid_t type, char *buf, size_t len)
{
    H5T_class_t cls = H5Tget_class(type);
    size_t size = H5Tget_size(type);
    const char *name = NULL;
    switch (cls) {
    case H5T_INTEGER:
        name = integer_name(size, H5Tget_sign(type) == H5T_SGN_2);
        break;
    case H5T_FLOAT:
        snprintf(buf, len, "float%zu", size * 8);
        return;
    case H5T_STRING: name = "string"; break;
    case H5T_COMPOUND: name = "compound"; break;
    case H5T_ENUM: name = "enum"; break;
    case H5T_ARRAY: name = "array"; break;
    case H5T_VLEN: name = "variable-length sequence"; break;
    case H5T_OPAQUE: name = "opaque"; break;
    case H5T_BITFIELD: name = "bitfield"; break;
    case H5T_REFERENCE: name = "reference"; break;
    case H5T_TIME: name = "time"; break;
    default: break;
    }
    if (name)
        snprintf(buf, len, "%s", name);
    else
        snprintf(buf, len, "unknown type (class %d, %zu bytes)", (int)cls, size);
}

void h5pack_h5_dims_text(const hsize_t *dims, int rank, char *buf, size_t len)
{
    size_t used = 0;
    if (len == 0)
        return;
    buf[0] = '\0';
    for (int i = 0; i < rank && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%llu", i ? "," : "(", (unsigned long long)dims[i]);
        if (n < 0)
            return;
        used += (size_t)n;
    }
    if (used < len)
        snprintf(buf + used, len - used, rank ? ")" : "()");
}

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
    hid_t attr = -1, type = -1, space = -1;
    int rc = -1;
    buf[0] = '\0';
    if (H5Aexists(obj, name) <= 0)
        return 0;
    attr = H5Aopen(obj, name, H5P_DEFAULT);
    type = attr >= 0 ? H5Aget_type(attr) : -1;
    space = attr >= 0 ? H5Aget_space(attr) : -1;
    if (type < 0 || space < 0 || H5Tget_class(type) != H5T_STRING || H5Sget_simple_extent_npoints(space) != 1)
        goto done;
    rc = H5Tis_variable_str(type) > 0 ? read_vlen_string(attr, type, buf, len)
                                       : read_fixed_string(attr, type, buf, len);
done:
    if (space >= 0)
        H5Sclose(space);
    if (type >= 0)
        H5Tclose(type);
    if (attr >= 0)
        H5Aclose(attr);
    return rc;
}

int h5pack_h5_read_doubles_attr(hid_t obj, const char *name, double *out, size_t n)
{
    hid_t attr = -1, type = -1, space = -1;
    int rc = 0;
    if (H5Aexists(obj, name) <= 0)
        return 0;
    attr = H5Aopen(obj, name, H5P_DEFAULT);
    type = attr >= 0 ? H5Aget_type(attr) : -1;
    space = attr >= 0 ? H5Aget_space(attr) : -1;
    if (type < 0 || space < 0)
        goto done;
    H5T_class_t cls = H5Tget_class(type);
    if ((cls != H5T_FLOAT && cls != H5T_INTEGER) || H5Sget_simple_extent_npoints(space) != (hssize_t)n)
        goto done;
    rc = H5Aread(attr, H5T_NATIVE_DOUBLE, out) >= 0;
done:
    if (space >= 0)
        H5Sclose(space);
    if (type >= 0)
        H5Tclose(type);
    if (attr >= 0)
        H5Aclose(attr);
    return rc;
}
