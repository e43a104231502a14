/* option_map.h - the one map from h5pack-stats' options to the reader's parameters: each row is a flag,
 * the parameter(s) of h5pack_param_table() it sets and how its text becomes their value (the
 * conversion). The bounds and enum names are the table's (param_table.h): the map holds none, so an
 * option refuses exactly what h5pack_open() refuses for its parameter. `h5pack-stats options` prints the
 * map; options that set no parameter (simulate's lists, --policy, --json, output files) are not in it. */
#ifndef H5PACK_STATS_OPTION_MAP_H
#define H5PACK_STATS_OPTION_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "h5pack.h"

/* How an option's text becomes its parameter's value (the names are what `options` prints). */
typedef enum option_conversion {
    OPTION_FLAG,  /* "flag": takes no value, sets the parameter to 1 */
    OPTION_PLAIN, /* "plain": the number in the parameter's own unit (decimal digits, or a decimal number
                     for a real parameter) */
    OPTION_COUNT, /* "count": digits, or a count with the size rule's suffixes (4K = 4096; sizes.h) */
    OPTION_BYTES, /* "bytes": digits (bytes), or K/M/G/T with an optional B or iB (64M = 64 MiB) */
    OPTION_NAME,  /* "name": one of the enum's names in the table ('-' may stand for '_') */
    OPTION_TEXT,  /* "text": the text as given (a dataset or file name) */
    OPTION_PAIR   /* "pair": "A,B" sets the first parameter to A and the second to B, each as plain;
                     whole-number pairs also take "AxB" and "N" (both N) */
} option_conversion;

/* The commands that take an option. */
#define OPTION_RUN 1u
#define OPTION_SIMULATE 2u

typedef struct option_alias {
    const char *flag;
    const char *param[2]; /* the parameter set; a pair's second, else NULL */
    option_conversion conversion;
    unsigned commands; /* OPTION_RUN and / or OPTION_SIMULATE */
} option_alias;

/* Every row, in the order the help texts list them; *COUNT rows. */
const option_alias *option_aliases(size_t *count);

/* The row of FLAG when COMMAND takes it, else NULL. */
const option_alias *option_find(const char *flag, unsigned command);

/* "flag", "plain", "count", "bytes", "name", "text" or "pair". */
const char *option_conversion_name(option_conversion c);

/* "echo", or "scale_min,scale_max" for a pair: the parameter column of `options`. Static storage. */
const char *option_params_text(const option_alias *a);

/* Sets A's parameter(s) in *CFG from VALUE (NULL for a flag): 0, or -1 with *CFG unchanged and WHY =
 * "bad value '0' for --echo: echo must be 1 .. 4294967295" (the flag, the parameter, the table's
 * range, and the parser's words when VALUE is no number at all). */
int option_apply(const option_alias *a, const char *value, h5pack_config *cfg, char *why, size_t why_len);

/* Which rows were given on a command line (rules between options ask). */
typedef struct option_given {
    uint64_t rows;
} option_given;

void option_mark_given(option_given *g, const option_alias *a);
int option_was_given(const option_given *g, const char *flag);

#endif
