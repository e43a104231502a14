/* param_table.c - the library's parameter table seen from h5pack-stats (see param_table.h): nothing about
 * a parameter's bounds or names is written here again. */
#include "param_table.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define TWO_TO_THE_64 18446744073709551616.0 /* a table max this high (UINT64_MAX as a double) bounds nothing */
#define MAX_ENUM_FIELDS 16
#define MAX_NAMES 8

const h5pack_param *param_find(const char *name)
{
    size_t n;
    const h5pack_param *t = h5pack_param_table(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0)
            return &t[i];
    return NULL;
}

int param_is_integer(const h5pack_param *p)
{
    return p->type == H5PACK_PARAM_SIZE || p->type == H5PACK_PARAM_U32 || p->type == H5PACK_PARAM_U64 ||
           p->type == H5PACK_PARAM_INT || p->type == H5PACK_PARAM_ENUM;
}

int param_is_real(const h5pack_param *p)
{
    return p->type == H5PACK_PARAM_DOUBLE;
}

/* The largest value P's C type holds. */
static uint64_t type_max(const h5pack_param *p)
{
    switch (p->type) {
    case H5PACK_PARAM_SIZE: return SIZE_MAX;
    case H5PACK_PARAM_U32: return UINT32_MAX;
    case H5PACK_PARAM_U64: return UINT64_MAX;
    default: return INT_MAX; /* INT, ENUM */
    }
}

/* The largest value P accepts: the table's max, within what its type holds. */
static uint64_t integer_max(const h5pack_param *p)
{
    uint64_t hold = type_max(p);
    if (p->max >= TWO_TO_THE_64)
        return hold;
    uint64_t table = p->max < 0 ? 0 : (uint64_t)p->max;
    return table < hold ? table : hold;
}

static uint64_t integer_min(const h5pack_param *p)
{
    return p->min <= 0 ? 0 : (uint64_t)p->min;
}

const char *param_range_text(const h5pack_param *p, char *buf, size_t len)
{
    if (p->type == H5PACK_PARAM_ENUM)
        snprintf(buf, len, "one of %s", param_enum_choices(p->name));
    else if (param_is_real(p))
        snprintf(buf, len, "in [%g, %g]", p->min, p->max);
    else
        snprintf(buf, len, "%llu .. %llu", (unsigned long long)integer_min(p), (unsigned long long)integer_max(p));
    return buf;
}

static void store(h5pack_config *cfg, const h5pack_param *p, const void *value)
{
    memcpy((unsigned char *)cfg + p->offset, value, p->size);
}

int param_set_integer(h5pack_config *cfg, const h5pack_param *p, uint64_t v)
{
    if (!param_is_integer(p) || v < integer_min(p) || v > integer_max(p))
        return -1;
    size_t as_size = (size_t)v;
    uint32_t as_u32 = (uint32_t)v;
    int as_int = (int)v;
    const void *value = p->type == H5PACK_PARAM_SIZE ? (const void *)&as_size
                        : p->type == H5PACK_PARAM_U32 ? (const void *)&as_u32
                        : p->type == H5PACK_PARAM_U64 ? (const void *)&v
                                                      : (const void *)&as_int;
    store(cfg, p, value);
    return 0;
}

int param_set_real(h5pack_config *cfg, const h5pack_param *p, double v)
{
    if (!param_is_real(p) || !(v >= p->min && v <= p->max)) /* NaN fails both */
        return -1;
    store(cfg, p, &v);
    return 0;
}

int param_set_name(h5pack_config *cfg, const h5pack_param *p, const char *name)
{
    int v;
    if (p->type != H5PACK_PARAM_ENUM || param_enum_value(p->name, name, &v))
        return -1;
    return param_set_integer(cfg, p, (uint64_t)v);
}

int param_set_text(h5pack_config *cfg, const h5pack_param *p, const char *text)
{
    if (p->type != H5PACK_PARAM_STRING)
        return -1;
    store(cfg, p, &text);
    return 0;
}

/* One enum field's names, split once from the table's "a,b,c". */
typedef struct enum_names {
    const char *field;
    int n;
    char store[160];
    const char *name[MAX_NAMES];
} enum_names;

static enum_names cache[MAX_ENUM_FIELDS];
static int n_cached;

static const enum_names *names_of(const char *field)
{
    for (int i = 0; i < n_cached; i++)
        if (strcmp(cache[i].field, field) == 0)
            return &cache[i];
    const h5pack_param *p = param_find(field);
    if (!p || p->type != H5PACK_PARAM_ENUM || n_cached == MAX_ENUM_FIELDS)
        return NULL;
    enum_names *e = &cache[n_cached++];
    e->field = p->name;
    snprintf(e->store, sizeof e->store, "%s", p->enum_names);
    for (char *c = e->store; c && e->n < MAX_NAMES; e->n++) {
        e->name[e->n] = c;
        c = strchr(c, ',');
        if (c)
            *c++ = '\0';
    }
    return e;
}

int param_enum_value(const char *field, const char *text, int *out)
{
    const enum_names *e = names_of(field);
    for (int i = 0; e && i < e->n; i++) {
        size_t k = 0; /* '-' for '_' is accepted too: random-resized */
        while (text[k] && (text[k] == e->name[i][k] || (text[k] == '-' && e->name[i][k] == '_')))
            k++;
        if (text[k] == '\0' && e->name[i][k] == '\0') {
            *out = i;
            return 0;
        }
    }
    return -1;
}

const char *param_enum_name(const char *field, int value)
{
    const enum_names *e = names_of(field);
    return e && value >= 0 && value < e->n ? e->name[value] : "unknown";
}

const char *param_enum_choices(const char *field)
{
    static char buf[MAX_ENUM_FIELDS][200];
    const enum_names *e = names_of(field);
    if (!e)
        return "";
    char *b = buf[e - cache];
    size_t used = 0;
    b[0] = '\0';
    for (int i = 0; i < e->n; i++)
        used += (size_t)snprintf(b + used, sizeof buf[0] - used, "%s%s", e->name[i],
                                 i + 2 < e->n ? ", " : i + 2 == e->n ? " or " : "");
    return b;
}
