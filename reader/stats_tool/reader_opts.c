/* reader_opts.c - the options run and simulate share, mapped onto h5pack_config (see commands.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "param_names.h"
#include "commands.h"

static int bad_value(const char *cmd, const char *opt, const char *value, const char *expected)
{
    fprintf(stderr, "h5pack-stats %s: bad value '%s' for %s (expected %s)\n", cmd, value, opt, expected);
    return -1;
}

/* WHY: the size parser's words about VALUE. */
static int bad_size(const char *cmd, const char *opt, const char *value, const char *why)
{
    fprintf(stderr, "h5pack-stats %s: bad value '%s' for %s: %s\n", cmd, value, opt, why);
    return -1;
}

/* Options with an unsigned value: name, destination kind, bounds. */
static int parse_counted(const char *cmd, const char *opt, const char *v, h5pack_config *cfg)
{
    uint64_t n = 0;
    if (strcmp(opt, "--batch") == 0) {
        if (parse_u64(v, 1, UINT32_MAX, &n))
            return bad_value(cmd, opt, v, "an integer >= 1");
        cfg->batch_size = (size_t)n;
    } else if (strcmp(opt, "--window") == 0) {
        if (parse_u64(v, 1, UINT32_MAX, &n))
            return bad_value(cmd, opt, v, "an integer >= 1");
        cfg->window = (size_t)n;
    } else if (strcmp(opt, "--echo") == 0) {
        if (parse_u64(v, 1, 1000, &n))
            return bad_value(cmd, opt, v, "an integer in 1..1000");
        cfg->echo = (uint32_t)n;
    } else if (strcmp(opt, "--epochs") == 0) {
        if (parse_u64(v, 1, 1000000, &n))
            return bad_value(cmd, opt, v, "an integer >= 1");
        cfg->epochs = n;
    } else if (strcmp(opt, "--threads") == 0) {
        if (parse_u64(v, 0, 1024, &n))
            return bad_value(cmd, opt, v, "an integer in 0..1024 (0 = one per core)");
        cfg->threads = (int)n;
    } else if (strcmp(opt, "--seed") == 0) {
        if (h5pack_parse_uint(v, &n, NULL, 0)) /* a seed is a name, not an amount: digits only */
            return bad_value(cmd, opt, v, "an unsigned integer");
        cfg->seed = n;
    } else if (strcmp(opt, "--rank") == 0) {
        if (parse_u64(v, 0, UINT32_MAX - 1, &n))
            return bad_value(cmd, opt, v, "an integer >= 0");
        cfg->rank = (uint32_t)n;
    } else if (strcmp(opt, "--world") == 0) {
        if (parse_u64(v, 1, UINT32_MAX, &n))
            return bad_value(cmd, opt, v, "an integer >= 1");
        cfg->world = (uint32_t)n;
    } else {
        return 0;
    }
    return 1;
}

static int parse_named(const char *cmd, const char *opt, const char *v, h5pack_config *cfg)
{
    uint64_t size = 0;
    char why[160];
    if (strcmp(opt, "--cache") == 0) {
        if (h5pack_parse_size(v, &size, why, sizeof why) != H5PACK_SIZE_OK)
            return bad_size(cmd, opt, v, why);
        if (size == 0 || size > SIZE_MAX)
            return bad_value(cmd, opt, v, "a size above 0 such as 64M or 1GiB");
        cfg->cache_bytes = (size_t)size;
    } else if (strcmp(opt, "--order") == 0) {
        if (parse_order(v, &cfg->order))
            return bad_value(cmd, opt, v, param_enum_choices("order"));
    } else if (strcmp(opt, "--device") == 0) {
        if (parse_device(v, &cfg->device))
            return bad_value(cmd, opt, v, "auto, cpu or cuda");
    } else if (strcmp(opt, "--images") == 0) {
        cfg->images_dataset = v;
    } else if (strcmp(opt, "--labels") == 0) {
        cfg->labels_dataset = v[0] ? v : NULL;
    } else {
        return 0;
    }
    return 1;
}

int check_reader_options(const char *cmd, const h5pack_config *cfg)
{
    if (cfg->rank < cfg->world)
        return 0;
    fprintf(stderr, "h5pack-stats %s: --rank %s\n", cmd,
            cfg->world > 1 ? "must be below --world" : "needs --world above it");
    return -1;
}

int parse_reader_option(const char *cmd, int argc, char **argv, int *i, h5pack_config *cfg)
{
    const char *opt = argv[*i];
    if (strcmp(opt, "--drop-last") == 0) {
        cfg->drop_last = 1;
        return 1;
    }
    static const char *const with_value[] = {"--batch", "--window", "--echo",   "--epochs", "--threads",
                                             "--seed",  "--rank",   "--world",  "--cache",  "--order",
                                             "--device", "--images", "--labels"};
    const char *v = NULL;
    int taken = take_option_value(with_value, sizeof with_value / sizeof *with_value, argc, argv, i, &v);
    if (taken < 0)
        fprintf(stderr, "h5pack-stats %s: %s needs a value\n", cmd, opt);
    if (taken <= 0)
        return taken;
    int rc = parse_counted(cmd, opt, v, cfg);
    if (rc == 0)
        rc = parse_named(cmd, opt, v, cfg);
    return rc;
}
