/* reader_opts.c - the options that set reader parameters, taken through the option map (option_map.h)
 * into h5pack_config, and the rule across them that needs no file (see commands.h). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "option_map.h"

int parse_reader_option(const char *cmd, unsigned command, int argc, char **argv, int *i, h5pack_config *cfg,
                        option_given *given)
{
    const option_alias *a = option_find(argv[*i], command);
    if (!a)
        return 0;
    const char *value = NULL;
    if (a->conversion != OPTION_FLAG) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "h5pack-stats %s: %s needs a value\n", cmd, a->flag);
            return -1;
        }
        value = argv[++*i];
    }
    char why[512];
    if (option_apply(a, value, cfg, why, sizeof why)) {
        fprintf(stderr, "h5pack-stats %s: %s\n", cmd, why);
        return -1;
    }
    option_mark_given(given, a);
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
