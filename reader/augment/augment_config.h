/* augment_config.h - the augmentation part of the reader's open: the config's crop, output size and
 * echo mode turned into backend parameters (with their checks), the ring size sample echo needs, and
 * the h5pack_info fields that report them. */
#ifndef H5PACK_READER_AUGMENT_CONFIG_H
#define H5PACK_READER_AUGMENT_CONFIG_H

#include <stddef.h>

#include "backend.h"
#include "chunksrc.h"
#include "h5pack.h"
#include "resolve.h"

/* 1 when CFG asks for sample-level echo that does something (echo_mode SAMPLE and echo >= 2). */
int h5pack_augment_sample_echo(const h5pack_config *cfg);

/* Fills BP's crop, output size, pool and ring size (slots) from CFG, the stored geometry G and SETUP.
 * CFG has passed h5pack_reader_check_config (crop and echo_mode are values of their enums). EINVAL with
 * the reason in ERR for values the reader cannot honour. */
int h5pack_augment_backend_params(const h5pack_config *cfg, const source_geometry *g, const reader_setup *setup,
                                  backend_params *bp, char *err, size_t err_len);

/* The info fields about augmentation and echo. */
void h5pack_augment_fill_info(const h5pack_config *cfg, const backend_params *bp, const backend *be,
                              h5pack_info *info);

#endif
