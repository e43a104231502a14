/* reader_impl.h - the reader handle (h5pack_reader), shared by reader.c (images) and reader_patches.c
 * (patches of huge images in tiles). Internal. */
#ifndef H5PACK_READER_IMPL_H
#define H5PACK_READER_IMPL_H

#include <sys/types.h>

#include "backend.h"
#include "chunksrc.h"
#include "h5pack.h"
#include "patch_pipe.h"
#include "patch_windows.h"
#include "pipeline.h"
#include "resolve.h"
#include "tilesrc.h"
#include "timeline.h"

#define ERR_LEN 512

struct h5pack_reader {
    h5pack_config cfg;
    char *images_name, *labels_name; /* copies of the config's strings */
    char *err;                       /* ERR_LEN bytes: the last failure's text. Held by pointer, apart from
                                        the reader's state, so the const getters can say why they failed */
    int open_rc;                     /* < 0: the reader is in the failed state (open failed) */
    double t_open;
    chunk_source *src;
    backend *be;
    backend_params bp; /* what the backend was created with */
    pipeline *pipe;
    tile_source *tiles;        /* patches (config.patch_size): the tiled file ... */
    patch_windows *windows;    /* ... its windows ... */
    patch_pipe *patches;       /* ... and its pipeline, instead of src and pipe */
    h5pack_timeline *timeline; /* NULL: none asked for */
    reader_setup setup;
    h5pack_info info;
    pid_t pid; /* the process that opened it: its worker threads live there only */
};

/* The backend config.device asks for (AUTO: CUDA when usable), created with r->bp into r->be. */
int h5pack_reader_make_backend(h5pack_reader *r);

/* Opens R's file as patches (config.patch_size > 0): tile source, windows, backend, patch pipeline, info.
 * On failure r->err says why; release_resources in reader.c frees what was made. */
int h5pack_reader_open_patches(h5pack_reader *r, const char *path);

#endif
