/* skips.c - the list of skipped files with their reasons. */
#include "skips.h"

#include <stdlib.h>
#include <string.h>

int skip_list_add(skip_list *l, const char *name, const char *reason)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **names = realloc(l->names, cap * sizeof *names);
        if (!names)
            return -1;
        l->names = names;
        char **reasons = realloc(l->reasons, cap * sizeof *reasons);
        if (!reasons)
            return -1;
        l->reasons = reasons;
        l->cap = cap;
    }
    char *n = strdup(name), *r = strdup(reason);
    if (!n || !r) {
        free(n);
        free(r);
        return -1;
    }
    l->names[l->count] = n;
    l->reasons[l->count] = r;
    l->count++;
    return 0;
}

int skip_list_append(skip_list *dst, const skip_list *src)
{
    for (size_t i = 0; i < src->count; i++)
        if (skip_list_add(dst, src->names[i], src->reasons[i]) != 0)
            return -1;
    return 0;
}

void skip_list_free(skip_list *l)
{
    for (size_t i = 0; i < l->count; i++) {
        free(l->names[i]);
        free(l->reasons[i]);
    }
    free(l->names);
    free(l->reasons);
    memset(l, 0, sizeof *l);
}

size_t skip_reason_category_len(const char *reason)
{
    const char *colon = strstr(reason, ": ");
    return colon ? (size_t)(colon - reason) : strlen(reason);
}
