/* h5describe.c - HDF5 types and shapes as the short words our messages and reports use (see h5glue.h). */
#include <stdio.h>
#include <string.h>

#include "h5glue.h"

static const char *class_name(H5T_class_t cls)
{
    switch (cls) {
    case H5T_COMPOUND: return "compound";
    case H5T_ENUM: return "enum";
    case H5T_ARRAY: return "array";
    case H5T_VLEN: return "variable-length sequence";
    case H5T_OPAQUE: return "opaque";
    case H5T_BITFIELD: return "bitfield";
    case H5T_REFERENCE: return "reference";
    case H5T_TIME: return "time";
    default: return NULL;
    }
}

void h5pack_h5_type_name(hid_t type, char *buf, size_t len)
{
    H5T_class_t cls = H5Tget_class(type);
    size_t size = H5Tget_size(type);
    const char *name = class_name(cls);
    if (cls == H5T_INTEGER)
        snprintf(buf, len, "%sint%zu", H5Tget_sign(type) == H5T_SGN_2 ? "" : "u", size * 8);
    else if (cls == H5T_FLOAT)
        snprintf(buf, len, "float%zu", size * 8);
    else if (cls == H5T_STRING)
        snprintf(buf, len, "string (%s length)", H5Tis_variable_str(type) > 0 ? "variable" : "fixed");
    else if (name)
        snprintf(buf, len, "%s", name);
    else
        snprintf(buf, len, "unknown type (class %d, %zu bytes)", (int)cls, size);
}

void h5pack_h5_filter_append(H5Z_filter_t id, unsigned level, const char *name, char *buf, size_t len)
{
    char one[96];
    if (id == H5Z_FILTER_DEFLATE)
        snprintf(one, sizeof one, "deflate(%u)", level);
    else if (id == H5Z_FILTER_SHUFFLE)
        snprintf(one, sizeof one, "shuffle");
    else if (id == H5Z_FILTER_FLETCHER32)
        snprintf(one, sizeof one, "fletcher32");
    else
        snprintf(one, sizeof one, "%s(id %d)", name && name[0] ? name : "filter", (int)id);
    size_t used = strnlen(buf, len);
    if (used < len)
        snprintf(buf + used, len - used, "%s%s", used ? ", " : "", one);
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
