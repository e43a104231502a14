/* skips.h - the list of files left out of a conversion, each with its reason. The reason is written as
 * "CATEGORY" or "CATEGORY: detail"; the summary groups by CATEGORY. */
#ifndef H5PACK_SKIPS_H
#define H5PACK_SKIPS_H

#include <stddef.h>

typedef struct skip_list {
    char **names;   /* paths relative to SRC_DIR, valid UTF-8 (invalid bytes escaped as \xNN) */
    char **reasons;
    size_t count, cap;
} skip_list;

/* Copies NAME and REASON. Returns 0, or -1 when out of memory. */
int skip_list_add(skip_list *l, const char *name, const char *reason);

/* Appends every entry of SRC to DST (copies). */
int skip_list_append(skip_list *dst, const skip_list *src);

void skip_list_free(skip_list *l);

/* Length of the category part of REASON (up to ": " or the end). */
size_t skip_reason_category_len(const char *reason);

#endif
