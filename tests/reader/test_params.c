/* test_params.c - the parameter table (h5pack_param_table, reader/api/params.c) describes h5pack_config as
 * compiled: rows in struct order without overlap, covering every field (the bytes not covered are
 * struct_size and padding), sizes matching the types, enum names matching the bounds, every default
 * within its bounds; and the open-time check rejects each numeric field just past a bound with a
 * message naming the field and the value. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "h5pack.h"
#include "params.h"

static size_t type_size(h5pack_param_type t)
{
    switch (t) {
    case H5PACK_PARAM_SIZE: return sizeof(size_t);
    case H5PACK_PARAM_U32: return sizeof(uint32_t);
    case H5PACK_PARAM_U64: return sizeof(uint64_t);
    case H5PACK_PARAM_INT:
    case H5PACK_PARAM_ENUM: return sizeof(int);
    case H5PACK_PARAM_DOUBLE: return sizeof(double);
    case H5PACK_PARAM_FLOATS: return sizeof(float) * H5PACK_MAX_CHANNELS;
    default: return sizeof(void *);
    }
}

static void test_layout(const h5pack_param *t, size_t n)
{
    size_t end = sizeof(size_t), covered = sizeof(size_t); /* struct_size comes first */
    for (size_t i = 0; i < n; i++) {
        CHECK_MSG(t[i].offset >= end, "%s overlaps the field before it", t[i].name);
        CHECK_MSG(t[i].offset - end < 8, "%s: a gap of %zu bytes before it (a field missing from the table?)",
                  t[i].name, t[i].offset - end);
        CHECK_MSG(t[i].size == type_size(t[i].type), "%s: size %zu for its type", t[i].name, t[i].size);
        CHECK(t[i].doc && t[i].doc[0]);
        end = t[i].offset + t[i].size, covered += t[i].size;
    }
    CHECK_MSG(sizeof(h5pack_config) - end < 8, "fields after %s are missing from the table", t[n - 1].name);
    CHECK_MSG(sizeof(h5pack_config) - covered < 8 * 4, "%zu of %zu bytes not described", sizeof(h5pack_config) - covered,
              sizeof(h5pack_config));
}

static void test_enums_and_defaults(const h5pack_param *t, size_t n)
{
    h5pack_config d = H5PACK_CONFIG_DEFAULTS;
    char err[512];
    CHECK_OK(h5pack_params_check(&d, err, sizeof err));
    for (size_t i = 0; i < n; i++) {
        if (t[i].type != H5PACK_PARAM_ENUM) {
            CHECK_MSG(t[i].enum_names == NULL, "%s has names but is not an enum", t[i].name);
            continue;
        }
        int names = 1;
        for (const char *c = t[i].enum_names; *c; c++)
            names += *c == ',';
        CHECK_MSG(t[i].min == 0 && t[i].max == names - 1, "%s: %d names for 0 .. %g", t[i].name, names, t[i].max);
    }
}

/* Sets numeric field P of CFG to V (integers: V must fit the type). */
static void set_value(h5pack_config *cfg, const h5pack_param *p, double v)
{
    unsigned char *at = (unsigned char *)cfg + p->offset;
    if (p->type == H5PACK_PARAM_DOUBLE) {
        memcpy(at, &v, sizeof v);
    } else if (p->type == H5PACK_PARAM_INT || p->type == H5PACK_PARAM_ENUM) {
        int x = (int)v;
        memcpy(at, &x, sizeof x);
    } else if (p->type == H5PACK_PARAM_U32) {
        uint32_t x = (uint32_t)v;
        memcpy(at, &x, sizeof x);
    } else {
        uint64_t x = (uint64_t)v;
        memcpy(at, &x, p->size);
    }
}

static int representable(const h5pack_param *p, double v)
{
    if (p->type == H5PACK_PARAM_DOUBLE)
        return 1;
    if (p->type == H5PACK_PARAM_INT || p->type == H5PACK_PARAM_ENUM)
        return v >= -2147483648.0 && v <= 2147483647.0;
    if (p->type == H5PACK_PARAM_U32)
        return v >= 0 && v <= 4294967295.0;
    return v >= 0 && v < 18446744073709551615.0 && (p->size == 8 || v <= 4294967295.0);
}

static void test_bounds_rejected(const h5pack_param *t, size_t n)
{
    int tried = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i].type > H5PACK_PARAM_DOUBLE)
            continue;
        double step = t[i].type == H5PACK_PARAM_DOUBLE ? fmax(1e-6, fabs(t[i].max) * 1e-9) : 1.0;
        const double outside[2] = {t[i].min - step, t[i].max + step};
        for (int k = 0; k < 2; k++) {
            if (!representable(&t[i], outside[k]))
                continue;
            h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
            set_value(&cfg, &t[i], outside[k]);
            char err[512];
            CHECK_MSG(h5pack_params_check(&cfg, err, sizeof err) == H5PACK_EINVAL, "%s = %g accepted", t[i].name,
                      outside[k]);
            CHECK_STR_CONTAINS(err, t[i].name);
            CHECK_STR_CONTAINS(err, "(got ");
            tried++;
        }
    }
    CHECK_MSG(tried > 30, "only %d bounds could be tried", tried);
    printf("params: %d out-of-range values rejected, each naming its field\n", tried);
}

int main(void)
{
    size_t n = 0;
    const h5pack_param *t = h5pack_param_table(&n);
    CHECK(t != NULL && n > 40);
    test_layout(t, n);
    test_enums_and_defaults(t, n);
    test_bounds_rejected(t, n);
    printf("params: %zu fields of h5pack_config described\n", n);
    return 0;
}
