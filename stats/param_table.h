/* param_table.h - the library's parameter table (h5pack_param_table() in h5pack.h) as h5pack-stats reads
 * it: a row by name, the names of an enum, the range a value must be in, and a checked write of a value
 * into h5pack_config at the row's offset. The bounds and names are the table's only, so an option accepts
 * exactly the values h5pack_open() accepts for its parameter; rules across fields stay the library's. */
#ifndef H5PACK_STATS_PARAM_TABLE_H
#define H5PACK_STATS_PARAM_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "h5pack.h"

/* The row of parameter NAME, or NULL. */
const h5pack_param *param_find(const char *name);

/* Whether P holds a whole number (SIZE, U32, U64, INT, ENUM) or a real one (DOUBLE). */
int param_is_integer(const h5pack_param *p);
int param_is_real(const h5pack_param *p);

/* P's range as messages say it, after "P must be ": "1 .. 4294967295", "in [0, 1]" or "one of none,
 * random_resized or center". Writes BUF and returns it. */
const char *param_range_text(const h5pack_param *p, char *buf, size_t len);

/* Each writes a value into P's field of *CFG when P has that kind of value and the value is within
 * P's bounds: 0, or -1 (nothing written). */
int param_set_integer(h5pack_config *cfg, const h5pack_param *p, uint64_t v);
int param_set_real(h5pack_config *cfg, const h5pack_param *p, double v);
int param_set_name(h5pack_config *cfg, const h5pack_param *p, const char *name); /* '-' may stand for '_' */
int param_set_text(h5pack_config *cfg, const h5pack_param *p, const char *text); /* kept, not copied */

/* *OUT = the value of name TEXT ('-' may stand for '_') of h5pack_config's enum field FIELD; 0, or -1
 * for a name the field does not have. */
int param_enum_value(const char *field, const char *text, int *out);

/* The name of VALUE of enum field FIELD ("unknown" outside its range). Static storage. */
const char *param_enum_name(const char *field, int value);

/* "sequential, random or chunk": the names FIELD accepts, for messages. Static storage. */
const char *param_enum_choices(const char *field);

#endif
