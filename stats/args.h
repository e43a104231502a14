/* args.h - option parsing helpers of h5pack-stats: counts, comma lists, names of orders, policies and
 * devices. Pure functions, no output: callers print the message. Sizes follow the project's one rule
 * (sizes.h: h5pack_parse_size, h5pack_format_bytes). */
#ifndef H5PACK_STATS_ARGS_H
#define H5PACK_STATS_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "h5pack_sim.h" /* h5pack_policy */
#include "sizes.h"

/* A count in [min, max], written as the size rule says ("256", "4K" = 4096). 0 or -1. */
int parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out);

/* Decimal floating point number in [min, max]. 0 or -1. */
int parse_double(const char *text, double min, double max, double *out);

/* Splits a comma separated LIST into at most MAX items (pointers into a copy owned by *STORAGE, which
 * the caller frees). Returns the number of items, or -1 (empty item, too many, no memory). */
int split_list(const char *list, char **storage, const char **items, int max);

int parse_order(const char *text, h5pack_order *out);
int parse_policy(const char *text, h5pack_policy *out);
int parse_device(const char *text, h5pack_device *out);

const char *order_name(h5pack_order o);
const char *policy_name(h5pack_policy p);

/* "h5pack-stats CMD: bad value 'VALUE' for OPT (expected EXPECTED)" on stderr. */
void report_bad_value(const char *cmd, const char *opt, const char *value, const char *expected);

#endif
