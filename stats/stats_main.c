/* stats_main.c - h5pack-stats: dispatch to the info / run / simulate / plot / options commands. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "h5pack.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage_main(stderr);
        return 1;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage_main(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("h5pack-stats %s (libh5pack %s)\n", H5PACK_VERSION_STRING, h5pack_version_string());
        return 0;
    }
    if (strcmp(cmd, "info") == 0)
        return cmd_info(argc - 2, argv + 2);
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "simulate") == 0)
        return cmd_simulate(argc - 2, argv + 2);
    if (strcmp(cmd, "plot") == 0)
        return cmd_plot(argc - 2, argv + 2);
    if (strcmp(cmd, "options") == 0)
        return cmd_options(argc - 2, argv + 2);
    fprintf(stderr, "h5pack-stats: unknown command '%s' (info, run, simulate, plot or options; see --help)\n", cmd);
    return 1;
}
