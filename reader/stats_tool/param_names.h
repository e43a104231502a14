/* param_names.h - the reader's enum parameters by name, from h5pack_param_table(): the names options
 * accept and output prints are the library's. */
#ifndef H5PACK_STATS_PARAM_NAMES_H
#define H5PACK_STATS_PARAM_NAMES_H

#include "h5pack.h"

/* *OUT = the value of name TEXT ('-' may stand for '_') of h5pack_config's enum field FIELD; 0, or -1
 * for a name the field does not have. */
int param_enum_value(const char *field, const char *text, int *out);

/* The name of VALUE of enum field FIELD ("unknown" outside its range). Static storage. */
const char *param_enum_name(const char *field, int value);

/* "sequential, random or chunk": the names FIELD accepts, for messages. Static storage. */
const char *param_enum_choices(const char *field);

#endif
