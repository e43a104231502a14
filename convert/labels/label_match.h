/* label_match.h - pairing the --labels table's rows with the scanned images.
 *
 * A row's first column is a path relative to SRC_DIR ("Smiling/000001.jpg") or a bare file name
 * ("000001.jpg") when exactly one scanned image has that name. Two rows for the same image, or a bare
 * name that fits several images, are errors naming the CSV line. Images with no row leave the scan as
 * skipped files with the reason "no label row"; rows that name no image are "orphan" rows, reported
 * by the caller. */
#ifndef H5PACK_LABEL_MATCH_H
#define H5PACK_LABEL_MATCH_H

#include <stddef.h>

#include "csv_labels.h"
#include "scan.h"

typedef struct label_orphans {
    size_t *rows; /* rows of the table that name no scanned image, in file order */
    size_t count;
} label_orphans;

/* Sets every kept entry's label_row, removes the entries without a row from SCAN (into its skipped list,
 * in scan order) and lists the orphan rows. Returns 0, or -1 with "CSV:LINE: reason" in ERR. */
int label_match(const label_table *t, scan_result *scan, label_orphans *orphans, char *err, size_t err_len);

void label_orphans_free(label_orphans *o);

#endif
