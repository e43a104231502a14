/* param_names.c - names of the reader's enum parameters for h5pack-stats' options and output, read from
 * the library's parameter table (h5pack_param_table) rather than written again here. */
#include "param_names.h"

#include <stdio.h>
#include <string.h>

#define MAX_ENUM_FIELDS 16
#define MAX_NAMES 8

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
    size_t n;
    const h5pack_param *t = h5pack_param_table(&n);
    for (size_t i = 0; i < n && n_cached < MAX_ENUM_FIELDS; i++) {
        if (t[i].type != H5PACK_PARAM_ENUM || strcmp(t[i].name, field) != 0)
            continue;
        enum_names *e = &cache[n_cached++];
        e->field = t[i].name;
        snprintf(e->store, sizeof e->store, "%s", t[i].enum_names);
        for (char *p = e->store; p && e->n < MAX_NAMES; e->n++) {
            e->name[e->n] = p;
            p = strchr(p, ',');
            if (p)
                *p++ = '\0';
        }
        return e;
    }
    return NULL;
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
