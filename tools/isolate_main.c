/* h5pack-isolate - libh5pack's helper: runs one job of HDF5 work on a file that may be damaged, in a
 * process of its own, and streams the reply to descriptor 3 (reader/source/isolate.h: why, how it is
 * started and found). Not for direct use. */
#include <stddef.h>

#include "isolate.h"

static const isolate_job jobs[] = {
    {"probe", h5pack_chunksrc_probe_job},  /* reader/source/chunksrc_probe.c: the open probe */
    {"strings", h5pack_read_strings_job}, /* reader/source/file_strings.c: h5pack_read_strings */
};

int main(int argc, char **argv)
{
    return h5pack_isolate_main(argc, argv, jobs, sizeof jobs / sizeof jobs[0]);
}
