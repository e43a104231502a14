/* cmd_options.c - `h5pack-stats options`: the option map, one line per option that sets a reader
 * parameter: FLAG, PARAM (two, comma-separated, for a pair) and CONVERSION, separated by tabs. A test
 * reads it to give every interface the same values for each parameter of h5pack_param_table(). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "option_map.h"

int cmd_options(int argc, char **argv)
{
    if (argc > 0 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        usage_options(stdout);
        return 0;
    }
    if (argc > 0)
        return usage_error("options", argv[0]);
    size_t n;
    const option_alias *a = option_aliases(&n);
    for (size_t i = 0; i < n; i++)
        printf("%s\t%s\t%s\n", a[i].flag, option_params_text(&a[i]), option_conversion_name(a[i].conversion));
    return 0;
}
