/* option_map.c - h5pack-stats' options onto the reader's parameters (see option_map.h): the map, and what
 * each conversion does with an option's text. Bounds and names come from the parameter table. */
#include "option_map.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "param_table.h"
#include "sizes.h"

#define BOTH (OPTION_RUN | OPTION_SIMULATE)
#define ONE(name) {name, NULL}
#define TWO(first, second) {first, second}

/* simulate takes lists of caches and orders (cmd_simulate.c): its --cache and --order are not these. */
static const option_alias aliases[] = {
    {"--cache", ONE("cache_bytes"), OPTION_BYTES, OPTION_RUN},
    {"--order", ONE("order"), OPTION_NAME, OPTION_RUN},
    {"--echo", ONE("echo"), OPTION_COUNT, BOTH},
    {"--echo-mode", ONE("echo_mode"), OPTION_NAME, OPTION_RUN},
    {"--device", ONE("device"), OPTION_NAME, BOTH},
    {"--batch", ONE("batch_size"), OPTION_COUNT, BOTH},
    {"--window", ONE("window"), OPTION_COUNT, BOTH},
    {"--epochs", ONE("epochs"), OPTION_COUNT, BOTH},
    {"--threads", ONE("threads"), OPTION_COUNT, BOTH},
    {"--seed", ONE("seed"), OPTION_PLAIN, BOTH}, /* a seed is a name, not an amount: no 4K */
    {"--rank", ONE("rank"), OPTION_COUNT, BOTH},
    {"--world", ONE("world"), OPTION_COUNT, BOTH},
    {"--drop-last", ONE("drop_last"), OPTION_FLAG, BOTH},
    {"--images", ONE("images_dataset"), OPTION_TEXT, BOTH},
    {"--labels", ONE("labels_dataset"), OPTION_TEXT, BOTH},
    {"--crop", ONE("crop"), OPTION_NAME, OPTION_RUN},
    {"--output-size", TWO("output_height", "output_width"), OPTION_PAIR, OPTION_RUN},
    {"--scale", TWO("scale_min", "scale_max"), OPTION_PAIR, OPTION_RUN},
    {"--ratio", TWO("ratio_min", "ratio_max"), OPTION_PAIR, OPTION_RUN},
    {"--center-ratio", ONE("center_ratio"), OPTION_PLAIN, OPTION_RUN},
    {"--flip", ONE("random_flip"), OPTION_FLAG, OPTION_RUN},
    {"--crop-padding", ONE("random_crop_padding"), OPTION_PLAIN, OPTION_RUN},
    {"--patch", ONE("patch_size"), OPTION_PLAIN, OPTION_RUN},
    {"--overlap", ONE("patch_overlap"), OPTION_PLAIN, OPTION_RUN},
    {"--patch-mode", ONE("patch_mode"), OPTION_NAME, OPTION_RUN},
    {"--patches-per-epoch", ONE("patches_per_epoch"), OPTION_PLAIN, OPTION_RUN},
    {"--timeline", ONE("timeline_path"), OPTION_TEXT, OPTION_RUN},
    {"--interval", ONE("timeline_interval_s"), OPTION_PLAIN, OPTION_RUN},
    {"--masks", ONE("masks_dataset"), OPTION_TEXT, OPTION_RUN},
    {"--mask-dtype", ONE("mask_dtype"), OPTION_NAME, OPTION_RUN},
};
#define N_ALIASES (sizeof aliases / sizeof aliases[0])
_Static_assert(N_ALIASES <= 64, "option_given keeps one bit per row");

const option_alias *option_aliases(size_t *count)
{
    *count = N_ALIASES;
    return aliases;
}

const option_alias *option_find(const char *flag, unsigned command)
{
    for (size_t i = 0; i < N_ALIASES; i++)
        if ((aliases[i].commands & command) && strcmp(aliases[i].flag, flag) == 0)
            return &aliases[i];
    return NULL;
}

const char *option_conversion_name(option_conversion c)
{
    static const char *const names[] = {"flag", "plain", "count", "bytes", "name", "text", "pair"};
    return (unsigned)c < sizeof names / sizeof names[0] ? names[c] : "unknown";
}

const char *option_params_text(const option_alias *a)
{
    static char buf[128];
    snprintf(buf, sizeof buf, "%s%s%s", a->param[0], a->param[1] ? "," : "", a->param[1] ? a->param[1] : "");
    return buf;
}

void option_mark_given(option_given *g, const option_alias *a)
{
    g->rows |= (uint64_t)1 << (a - aliases);
}

int option_was_given(const option_given *g, const char *flag)
{
    for (size_t i = 0; i < N_ALIASES; i++)
        if (strcmp(aliases[i].flag, flag) == 0)
            return (g->rows >> i) & 1;
    return 0;
}

/* ---- conversions ---------------------------------------------------------------------------------- */

/* The refusal: the flag, the parameter and its range from the table, and REASON when the parser had one. */
static int refuse(const option_alias *a, const h5pack_param *p, const char *value, const char *reason, char *why,
                  size_t len)
{
    char range[200];
    param_range_text(p, range, sizeof range);
    if (reason && reason[0])
        snprintf(why, len, "bad value '%s' for %s: %s; %s must be %s", value, a->flag, reason, p->name, range);
    else
        snprintf(why, len, "bad value '%s' for %s: %s must be %s", value, a->flag, p->name, range);
    return -1;
}

static int parse_real(const char *text, double *out)
{
    char *end = NULL;
    errno = 0;
    *out = strtod(text, &end);
    return end == text || *end != '\0' || errno == ERANGE ? -1 : 0;
}

/* TEXT, a number written as CONVERSION, into P's field; REASON gets the parser's words when TEXT is no
 * number (and stays empty when the number is outside P's range). */
static int set_number(h5pack_config *cfg, const h5pack_param *p, option_conversion conversion, const char *text,
                      char *reason, size_t len)
{
    reason[0] = '\0';
    if (param_is_real(p)) {
        double v;
        if (parse_real(text, &v))
            return snprintf(reason, len, "not a number"), -1;
        return param_set_real(cfg, p, v);
    }
    uint64_t v = 0;
    int bad = conversion == OPTION_PLAIN ? h5pack_parse_uint(text, &v, reason, len) != 0
                                         : h5pack_parse_size(text, &v, reason, len) != H5PACK_SIZE_OK;
    return bad ? -1 : param_set_integer(cfg, p, v);
}

static int apply_number(const option_alias *a, const h5pack_param *p, const char *value, h5pack_config *cfg,
                        char *why, size_t len)
{
    char reason[160];
    if (set_number(cfg, p, a->conversion, value, reason, sizeof reason))
        return refuse(a, p, value, reason, why, len);
    return 0;
}

/* "A,B" (whole numbers also "AxB", or "N" for both): each half as plain, against its own parameter. */
static int apply_pair(const option_alias *a, const h5pack_param *p[2], const char *value, h5pack_config *cfg,
                      char *why, size_t len)
{
    int whole = param_is_integer(p[0]);
    const char *sep = strchr(value, ',');
    if (!sep && whole)
        sep = strchr(value, 'x');
    char first[64];
    size_t n = sep ? (size_t)(sep - value) : strlen(value);
    if ((!sep && !whole) || n >= sizeof first) {
        snprintf(why, len, "bad value '%s' for %s: expected %s (%s, %s)", value, a->flag,
                 whole ? "N, HxW or H,W" : "MIN,MAX", p[0]->name, p[1]->name);
        return -1;
    }
    memcpy(first, value, n);
    first[n] = '\0';
    const char *half[2] = {first, sep ? sep + 1 : first};
    char reason[160];
    for (int k = 0; k < 2; k++)
        if (set_number(cfg, p[k], OPTION_PLAIN, half[k], reason, sizeof reason))
            return refuse(a, p[k], value, reason, why, len);
    return 0;
}

/* A's parameters, as rows of the table: 0, or -1 when one is not there (a map out of step with it). */
static int lookup(const option_alias *a, const h5pack_param *p[2], char *why, size_t len)
{
    for (int k = 0; k < 2; k++) {
        p[k] = a->param[k] ? param_find(a->param[k]) : NULL;
        if (a->param[k] && !p[k]) {
            snprintf(why, len, "%s: the library has no parameter '%s' (h5pack-stats and libh5pack differ)",
                     a->flag, a->param[k]);
            return -1;
        }
    }
    return 0;
}

int option_apply(const option_alias *a, const char *value, h5pack_config *cfg, char *why, size_t why_len)
{
    const h5pack_param *p[2];
    if (lookup(a, p, why, why_len))
        return -1;
    h5pack_config next = *cfg; /* a pair may fail half way: nothing changes until both are good */
    int rc = 0;
    switch (a->conversion) {
    case OPTION_FLAG:
        rc = param_set_integer(&next, p[0], 1) ? refuse(a, p[0], a->flag, NULL, why, why_len) : 0;
        break;
    case OPTION_NAME:
        rc = param_set_name(&next, p[0], value) ? refuse(a, p[0], value, NULL, why, why_len) : 0;
        break;
    case OPTION_TEXT:
        rc = param_set_text(&next, p[0], value) ? refuse(a, p[0], value, NULL, why, why_len) : 0;
        break;
    case OPTION_PAIR:
        rc = apply_pair(a, p, value, &next, why, why_len);
        break;
    default: /* PLAIN, COUNT, BYTES */
        rc = apply_number(a, p[0], value, &next, why, why_len);
        break;
    }
    if (rc == 0)
        *cfg = next;
    return rc;
}
