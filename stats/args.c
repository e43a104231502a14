/* args.c - option parsing helpers (see args.h). */
#include "args.h"
#include "param_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (h5pack_parse_size(text, &v, NULL, 0) != H5PACK_SIZE_OK || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int parse_double(const char *text, double min, double max, double *out)
{
    if (!text || !*text)
        return -1;
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    if (errno || *end != '\0' || !(v >= min && v <= max))
        return -1;
    *out = v;
    return 0;
}

int split_list(const char *list, char **storage, const char **items, int max)
{
    *storage = list ? strdup(list) : NULL;
    if (!*storage)
        return -1;
    int n = 0;
    char *p = *storage;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (*p == '\0' || n == max)
            return -1;
        items[n++] = p;
        if (!comma)
            return n;
        p = comma + 1;
    }
}

int parse_order(const char *text, h5pack_order *out)
{
    int v;
    if (param_enum_value("order", text, &v))
        return -1;
    *out = (h5pack_order)v;
    return 0;
}

int parse_policy(const char *text, h5pack_policy *out)
{
    if (strcmp(text, "belady") == 0)
        *out = H5PACK_POLICY_BELADY;
    else if (strcmp(text, "lru") == 0)
        *out = H5PACK_POLICY_LRU;
    else if (strcmp(text, "hdf5") == 0)
        *out = H5PACK_POLICY_HDF5;
    else
        return -1;
    return 0;
}

int parse_device(const char *text, h5pack_device *out)
{
    int v;
    if (param_enum_value("device", text, &v))
        return -1;
    *out = (h5pack_device)v;
    return 0;
}

const char *order_name(h5pack_order o)
{
    return param_enum_name("order", (int)o);
}

const char *policy_name(h5pack_policy p)
{
    return p == H5PACK_POLICY_BELADY ? "belady" : p == H5PACK_POLICY_LRU ? "lru" : "hdf5";
}

void report_bad_value(const char *cmd, const char *opt, const char *value, const char *expected)
{
    fprintf(stderr, "h5pack-stats %s: bad value '%s' for %s (expected %s)\n", cmd, value, opt, expected);
}
