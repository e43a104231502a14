/* reader_impl.h - the reader handle (h5pack_reader). Internal. What it streams is a stream (stream.h),
 * whatever the kind of file: the handle holds only what every kind shares. */
#ifndef H5PACK_READER_IMPL_H
#define H5PACK_READER_IMPL_H

#include <sys/types.h>

#include "h5pack.h"
#include "stream.h"
#include "timeline.h"

#define ERR_LEN 512

struct h5pack_reader {
    h5pack_config cfg;
    char *images_name, *labels_name, *masks_name; /* copies of the config's strings */
    char *err;                       /* ERR_LEN bytes: the last failure's text. Held by pointer, apart from
                                        the reader's state, so the const getters can say why they failed */
    int open_rc;                     /* < 0: the reader is in the failed state (open failed) */
    double t_open;
    stream *stream;                  /* NULL after a failed open */
    h5pack_timeline *timeline;       /* NULL: none asked for */
    h5pack_info info;
    pid_t pid; /* the process that opened it: its worker threads live there only */
};

#endif
