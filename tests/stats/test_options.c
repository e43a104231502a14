/* test_options.c - h5pack-stats' options against the library's parameter table: every row of the option
 * map names parameters the table has, with a conversion that fits their type; each option accepts its
 * parameter's bounds and refuses one step beyond them, naming the flag, the parameter and the table's
 * range (so the CLI and h5pack_open() share one bounds rule); enum names are the table's. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "commands.h"
#include "option_map.h"
#include "param_table.h"

#define TWO_TO_THE_64 18446744073709551616.0

static const h5pack_config defaults = H5PACK_CONFIG_DEFAULTS;

static uint64_t read_integer(const h5pack_config *cfg, const h5pack_param *p)
{
    const unsigned char *at = (const unsigned char *)cfg + p->offset;
    uint64_t v = 0;
    if (p->type == H5PACK_PARAM_INT || p->type == H5PACK_PARAM_ENUM) {
        int i;
        memcpy(&i, at, sizeof i);
        return (uint64_t)i;
    }
    memcpy(&v, at, p->size); /* SIZE, U32, U64: the low bytes on a little-endian machine */
    return v;
}

static double read_real(const h5pack_config *cfg, const h5pack_param *p)
{
    double v;
    memcpy(&v, (const unsigned char *)cfg + p->offset, sizeof v);
    return v;
}

/* The largest value P's C type holds, and so the largest the table's max can mean. */
static uint64_t type_max(const h5pack_param *p)
{
    return p->type == H5PACK_PARAM_U32 ? UINT32_MAX
         : p->type == H5PACK_PARAM_SIZE ? SIZE_MAX
         : p->type == H5PACK_PARAM_U64 ? UINT64_MAX : INT_MAX;
}

static uint64_t table_max(const h5pack_param *p)
{
    return p->max >= TWO_TO_THE_64 || (uint64_t)p->max > type_max(p) ? type_max(p) : (uint64_t)p->max;
}

static int apply(const char *flag, const char *value, h5pack_config *cfg, char *why, size_t len)
{
    const option_alias *a = option_find(flag, OPTION_RUN);
    CHECK_MSG(a != NULL, "%s is not an option of run", flag);
    why[0] = '\0';
    return a ? option_apply(a, value, cfg, why, len) : -1;
}

/* FLAG VALUE refused, *CFG unchanged, and the message names the flag, PARAM and the range RANGE. */
static void check_refused(const char *flag, const char *value, const char *param, const char *range)
{
    h5pack_config cfg = defaults;
    char why[512];
    CHECK_MSG(apply(flag, value, &cfg, why, sizeof why) != 0, "%s %s accepted", flag, value);
    CHECK_MSG(memcmp(&cfg, &defaults, sizeof cfg) == 0, "%s %s changed the config", flag, value);
    CHECK_STR_CONTAINS(why, flag);
    CHECK_STR_CONTAINS(why, param);
    CHECK_STR_CONTAINS(why, range);
}

static void test_map_matches_table(void)
{
    size_t n;
    const option_alias *a = option_aliases(&n);
    CHECK(n > 20);
    for (size_t i = 0; i < n; i++) {
        const h5pack_param *p = param_find(a[i].param[0]);
        const h5pack_param *q = a[i].param[1] ? param_find(a[i].param[1]) : NULL;
        CHECK_MSG(p != NULL, "%s: no parameter %s in the table", a[i].flag, a[i].param[0]);
        CHECK_MSG((a[i].conversion == OPTION_PAIR) == (a[i].param[1] != NULL), "%s: a pair sets two", a[i].flag);
        CHECK_MSG(a[i].commands & OPTION_RUN, "%s: run takes every option of the map", a[i].flag);
        CHECK_MSG(option_find(a[i].flag, OPTION_RUN) == &a[i], "%s: listed twice", a[i].flag);
        if (!p)
            continue;
        switch (a[i].conversion) {
        case OPTION_FLAG: CHECK_MSG(p->type == H5PACK_PARAM_INT && p->max >= 1, "%s", a[i].flag); break;
        case OPTION_NAME: CHECK_MSG(p->type == H5PACK_PARAM_ENUM, "%s", a[i].flag); break;
        case OPTION_TEXT: CHECK_MSG(p->type == H5PACK_PARAM_STRING, "%s", a[i].flag); break;
        case OPTION_PLAIN: CHECK_MSG(param_is_integer(p) || param_is_real(p), "%s", a[i].flag); break;
        case OPTION_PAIR:
            CHECK_MSG(q && q->type == p->type && (param_is_integer(p) || param_is_real(p)), "%s", a[i].flag);
            break;
        default: CHECK_MSG(param_is_integer(p) && p->type != H5PACK_PARAM_ENUM, "%s", a[i].flag); break;
        }
    }
    CHECK(option_find("--crop", OPTION_SIMULATE) == NULL); /* simulate takes only the reader's own */
    CHECK(option_find("--batch", OPTION_SIMULATE) != NULL);
    CHECK(option_find("--cache", OPTION_SIMULATE) == NULL); /* simulate's --cache is a list of its own */
}

/* A whole-number option: its table's min and max accepted as written, one beyond either refused. */
static void check_integer_bounds(const option_alias *a, const h5pack_param *p)
{
    uint64_t lo = p->min > 0 ? (uint64_t)p->min : 0, hi = table_max(p);
    char text[32], range[64], why[512];
    snprintf(range, sizeof range, "%llu .. %llu", (unsigned long long)lo, (unsigned long long)hi);
    uint64_t ends[2] = {lo, hi};
    for (int k = 0; k < 2; k++) {
        h5pack_config cfg = defaults;
        snprintf(text, sizeof text, "%llu", (unsigned long long)ends[k]);
        CHECK_MSG(option_apply(a, text, &cfg, why, sizeof why) == 0, "%s %s refused: %s", a->flag, text, why);
        CHECK_MSG(read_integer(&cfg, p) == ends[k], "%s %s: %s not set", a->flag, text, p->name);
    }
    if (lo > 0) {
        snprintf(text, sizeof text, "%llu", (unsigned long long)(lo - 1));
        check_refused(a->flag, text, p->name, range);
    }
    if (hi < UINT64_MAX) {
        snprintf(text, sizeof text, "%llu", (unsigned long long)hi + 1);
        check_refused(a->flag, text, p->name, range);
    } else {
        check_refused(a->flag, "18446744073709551616", p->name, range); /* the parser's own limit */
    }
}

static void check_real_bounds(const option_alias *a, const h5pack_param *p)
{
    char text[64], range[64], why[512];
    snprintf(range, sizeof range, "in [%g, %g]", p->min, p->max);
    double ends[2] = {p->min, p->max};
    for (int k = 0; k < 2; k++) {
        h5pack_config cfg = defaults;
        snprintf(text, sizeof text, "%.17g", ends[k]);
        CHECK_MSG(option_apply(a, text, &cfg, why, sizeof why) == 0, "%s %s refused: %s", a->flag, text, why);
        CHECK_MSG(read_real(&cfg, p) == ends[k], "%s %s: %s not set", a->flag, text, p->name);
    }
    snprintf(text, sizeof text, "%.17g", p->min - 1);
    check_refused(a->flag, text, p->name, range);
    snprintf(text, sizeof text, "%.17g", p->max * 2 + 1);
    check_refused(a->flag, text, p->name, range);
    check_refused(a->flag, "nan", p->name, range);
}

/* Every enum name of the table accepted as its index; a name it lacks refused with the list. */
static void check_names(const option_alias *a, const h5pack_param *p)
{
    char why[512];
    for (int v = 0; v <= (int)p->max; v++) {
        h5pack_config cfg = defaults;
        const char *name = param_enum_name(p->name, v);
        CHECK_MSG(option_apply(a, name, &cfg, why, sizeof why) == 0, "%s %s refused: %s", a->flag, name, why);
        CHECK_MSG(read_integer(&cfg, p) == (uint64_t)v, "%s %s: not value %d", a->flag, name, v);
    }
    check_refused(a->flag, "no-such-name", p->name, param_enum_choices(p->name));
}

static void test_bounds_from_table(void)
{
    size_t n;
    const option_alias *a = option_aliases(&n);
    for (size_t i = 0; i < n; i++) {
        const h5pack_param *p = param_find(a[i].param[0]);
        if (!p || a[i].conversion == OPTION_PAIR || a[i].conversion == OPTION_FLAG || a[i].conversion == OPTION_TEXT)
            continue;
        if (a[i].conversion == OPTION_NAME)
            check_names(&a[i], p);
        else if (param_is_real(p))
            check_real_bounds(&a[i], p);
        else
            check_integer_bounds(&a[i], p);
    }
}

/* The cases issue 40 names: one bounds rule, the table's (not 1..1000 for --echo). */
static void test_echo_and_crop(void)
{
    h5pack_config cfg = defaults;
    char why[512];
    check_refused("--echo", "0", "echo", "1 .. 4294967295");
    check_refused("--echo", "4294967296", "echo", "1 .. 4294967295");
    CHECK(apply("--echo", "4294967295", &cfg, why, sizeof why) == 0 && cfg.echo == 4294967295u);
    CHECK(apply("--echo", "4K", &cfg, why, sizeof why) == 0 && cfg.echo == 4096); /* a count */
    check_refused("--crop", "random", "crop", "one of none, random_resized or center");
    CHECK(apply("--crop", "random-resized", &cfg, why, sizeof why) == 0 && cfg.crop == H5PACK_CROP_RANDOM_RESIZED);
    check_refused("--seed", "4K", "seed", "not a whole number"); /* a seed is no amount */
    check_refused("--cache", "1X", "cache_bytes", "unknown suffix 'X'");
    CHECK(apply("--cache", "64M", &cfg, why, sizeof why) == 0 && cfg.cache_bytes == (size_t)64 << 20);
}

static void test_pairs_and_flags(void)
{
    h5pack_config cfg = defaults;
    char why[512];
    CHECK(apply("--output-size", "160x224", &cfg, why, sizeof why) == 0);
    CHECK(cfg.output_height == 160 && cfg.output_width == 224);
    CHECK(apply("--output-size", "96", &cfg, why, sizeof why) == 0); /* a square */
    CHECK(cfg.output_height == 96 && cfg.output_width == 96);
    CHECK(apply("--output-size", "65536,0", &cfg, why, sizeof why) == 0 && cfg.output_width == 0);
    check_refused("--output-size", "8,65537", "output_width", "0 .. 65536");
    CHECK(apply("--scale", "0.25,0.75", &cfg, why, sizeof why) == 0 && cfg.scale_min == 0.25 && cfg.scale_max == 0.75);
    check_refused("--scale", "0.5", "scale_max", "MIN,MAX");
    check_refused("--scale", "0.5,2e9", "scale_max", "in [0, 1e+09]");
    check_refused("--ratio", "-1,1", "ratio_min", "in [0, 1e+09]");
    CHECK(apply("--flip", NULL, &cfg, why, sizeof why) == 0 && cfg.random_flip == 1);
    CHECK(apply("--drop-last", NULL, &cfg, why, sizeof why) == 0 && cfg.drop_last == 1);
    CHECK(apply("--labels", "", &cfg, why, sizeof why) == 0 && cfg.labels_dataset && !cfg.labels_dataset[0]);
}

/* The command line: a run-only option is not simulate's, a missing value is refused, given is recorded. */
static void test_command_line(void)
{
    char *argv[] = {"--crop", "center", "--batch"};
    h5pack_config cfg = defaults;
    option_given given = {0};
    int i = 0;
    CHECK_EQ_INT(parse_reader_option("simulate", OPTION_SIMULATE, 3, argv, &i, &cfg, &given), 0);
    CHECK_EQ_INT(parse_reader_option("run", OPTION_RUN, 3, argv, &i, &cfg, &given), 1);
    CHECK(i == 1 && cfg.crop == H5PACK_CROP_CENTER && option_was_given(&given, "--crop"));
    CHECK(!option_was_given(&given, "--scale"));
    i = 2;
    CHECK_EQ_INT(parse_reader_option("run", OPTION_RUN, 3, argv, &i, &cfg, &given), -1);
}

int main(void)
{
    test_map_matches_table();
    test_bounds_from_table();
    test_echo_and_crop();
    test_pairs_and_flags();
    test_command_line();
    return 0;
}
