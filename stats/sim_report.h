/* sim_report.h - the output of `h5pack-stats simulate`: the table, the JSON rows and the plot, for the
 * file's own chunks and the what-if chunk sizes of --chunk. */
#ifndef H5PACK_STATS_SIM_REPORT_H
#define H5PACK_STATS_SIM_REPORT_H

#include <stdint.h>

#include "advice.h"
#include "h5pack_sim.h"
#include "plot.h"

typedef struct sim_report {
    const char *file;
    const h5pack_config *cfg;
    const h5pack_file_desc *desc;
    const sim_row *rows; /* cache x order x policy x chunk, the file's own chunk first of each chunk run */
    int n_rows;
    int n_chunk_sizes;   /* 1 + the number of --chunk sizes */
    uint64_t nslots;
    double w0;
} sim_report;

void sim_report_table(const sim_report *r);
void sim_report_json(const sim_report *r);

/* Hit rate (PLOT_Y_RATE) or bytes read (PLOT_Y_BYTES) against cache size, one line per order x policy x
 * chunk size. 0, or -1 (message printed). */
int sim_report_plot(const sim_report *r, const char *path, plot_axis y);

#endif
