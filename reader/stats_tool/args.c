/* args.c - option parsing helpers (see args.h). */
#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Multiplier of a size suffix (case-insensitive; "B", "k", "KB", "KiB", ... all binary). 0 = unknown. */
static uint64_t suffix_multiplier(const char *s)
{
    static const char units[] = "kmgtp";
    if (*s == '\0' || strcasecmp(s, "b") == 0)
        return 1;
    const char *u = strchr(units, tolower((unsigned char)s[0]));
    if (!u)
        return 0;
    const char *rest = s + 1;
    if (*rest != '\0' && strcasecmp(rest, "b") != 0 && strcasecmp(rest, "ib") != 0)
        return 0;
    return (uint64_t)1 << (10 * (unsigned)(u - units + 1));
}

int parse_size(const char *text, uint64_t *out)
{
    if (!text || !*text || *text == '-' || *text == '+' || isspace((unsigned char)*text))
        return -1;
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    if (errno || end == text || !(v >= 0.0) || isinf(v) || isnan(v))
        return -1;
    uint64_t mult = suffix_multiplier(end);
    if (mult == 0)
        return -1;
    double bytes = v * (double)mult;
    if (bytes >= 18446744073709549568.0)
        return -1;
    *out = (uint64_t)(bytes + 0.5);
    return 0;
}

void format_size(uint64_t bytes, char *buf, size_t len)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 5)
        v /= 1024.0, u++;
    if (u == 0)
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    else if (v == floor(v))
        snprintf(buf, len, "%.0f %s", v, units[u]);
    else
        snprintf(buf, len, "%.3g %s", v, units[u]);
}

int parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    if (!text || !isdigit((unsigned char)*text))
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || *end != '\0' || v < min || v > max)
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
    if (strcmp(text, "sequential") == 0)
        *out = H5PACK_ORDER_SEQUENTIAL;
    else if (strcmp(text, "random") == 0)
        *out = H5PACK_ORDER_RANDOM;
    else if (strcmp(text, "chunk") == 0)
        *out = H5PACK_ORDER_CHUNK;
    else
        return -1;
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
    if (strcmp(text, "auto") == 0)
        *out = H5PACK_DEVICE_AUTO;
    else if (strcmp(text, "cpu") == 0)
        *out = H5PACK_DEVICE_CPU;
    else if (strcmp(text, "cuda") == 0)
        *out = H5PACK_DEVICE_CUDA;
    else
        return -1;
    return 0;
}

const char *order_name(h5pack_order o)
{
    return o == H5PACK_ORDER_SEQUENTIAL ? "sequential" : o == H5PACK_ORDER_RANDOM ? "random" : "chunk";
}

const char *policy_name(h5pack_policy p)
{
    return p == H5PACK_POLICY_BELADY ? "belady" : p == H5PACK_POLICY_LRU ? "lru" : "hdf5";
}
