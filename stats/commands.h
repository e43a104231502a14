/* commands.h - the sub-commands of h5pack-stats and their usage texts. Each cmd_* gets the arguments
 * after the command name and returns the process exit status: 0 ok, 1 bad usage, 2 bad input file or
 * failed run. */
#ifndef H5PACK_STATS_COMMANDS_H
#define H5PACK_STATS_COMMANDS_H

#include <stdio.h>

#include "h5pack.h"
#include "option_map.h"

int cmd_info(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_options(int argc, char **argv);

void usage_main(FILE *f);
void usage_info(FILE *f);
void usage_run(FILE *f);
void usage_simulate(FILE *f);
void usage_plot(FILE *f);
void usage_options(FILE *f);

/* Prints "h5pack-stats CMD: unexpected argument BAD" (or "missing FILE") and the hint to --help on
 * stderr. Returns 1. */
int usage_error(const char *cmd, const char *bad);

/* The options that set reader parameters (the option map, option_map.c) that COMMAND (OPTION_RUN or
 * OPTION_SIMULATE) takes: looks at argv[*i] (and its value); returns 1 when consumed (advancing *i past
 * the value and marking it in *GIVEN), 0 when not one of these, -1 on a missing or bad value (message
 * naming the option, the parameter and the parameter table's range printed). */
int parse_reader_option(const char *cmd, unsigned command, int argc, char **argv, int *i, h5pack_config *cfg,
                        option_given *given);

/* Once all options are read: the rules across them that the library would refuse naming no option
 * (--rank below --world); 0, or -1 with the message printed (bad usage, exit 1). */
int check_reader_options(const char *cmd, const h5pack_config *cfg);

/* run's rules between augmentation, echo and patch options (--scale only with --crop random_resized,
 * --overlap below --patch...); 0, or -1 with the message naming the options printed (exit 1). */
int check_augment_options(const char *cmd, const h5pack_config *cfg, const option_given *given);

#endif
