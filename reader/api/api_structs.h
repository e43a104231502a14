/* api_structs.h - the public structs of h5pack.h and h5pack_sim.h as the size-versioned convention sees them (common/abi.h):
 * their first-release sizes and descriptors, and the config every entry point works on. Internal. Their
 * fields, one X-macro list per struct, are api_structs.c's (public as h5pack_struct_fields()). */
#ifndef H5PACK_API_STRUCTS_H
#define H5PACK_API_STRUCTS_H

#include <stddef.h>
#include <stdint.h>

#include "abi.h"
#include "h5pack.h"
#include "h5pack_sim.h"

/* Sizes of the first release's structs: the end of their last field then. Fixed forever (later fields are
 * appended after these), so a struct_size below them cannot come from any h5pack header. */
#define H5PACK_CONFIG_MIN_SIZE (offsetof(h5pack_config, cuda_stream) + sizeof(void *))
#define H5PACK_INFO_MIN_SIZE (offsetof(h5pack_info, std) + sizeof(float) * H5PACK_MAX_CHANNELS)
#define H5PACK_STATS_MIN_SIZE (offsetof(h5pack_stats, cache_bytes_used) + sizeof(uint64_t))
#define H5PACK_BATCH_MIN_SIZE (offsetof(h5pack_batch, token) + sizeof(uint64_t))
#define H5PACK_FILE_DESC_MIN_SIZE (offsetof(h5pack_file_desc, batches_per_epoch) + sizeof(uint64_t))
#define H5PACK_SIM_PARAMS_MIN_SIZE (offsetof(h5pack_sim_params, chunk_samples) + sizeof(uint64_t))
#define H5PACK_SIM_RESULT_MIN_SIZE (offsetof(h5pack_sim_result, stored_estimated) + sizeof(int))

/* One copy per file that uses them (small, and no exported data symbol). */
static const h5pack_abi_desc h5pack_abi_config = {"h5pack_config", "H5PACK_CONFIG_DEFAULTS", sizeof(h5pack_config),
                                                  H5PACK_CONFIG_MIN_SIZE};
static const h5pack_abi_desc h5pack_abi_info = {"h5pack_info", "H5PACK_INFO_INIT", sizeof(h5pack_info),
                                                H5PACK_INFO_MIN_SIZE};
static const h5pack_abi_desc h5pack_abi_stats = {"h5pack_stats", "H5PACK_STATS_INIT", sizeof(h5pack_stats),
                                                 H5PACK_STATS_MIN_SIZE};
static const h5pack_abi_desc h5pack_abi_batch = {"h5pack_batch", "H5PACK_BATCH_INIT", sizeof(h5pack_batch),
                                                 H5PACK_BATCH_MIN_SIZE};
static const h5pack_abi_desc h5pack_abi_file_desc = {"h5pack_file_desc", "H5PACK_FILE_DESC_INIT",
                                                     sizeof(h5pack_file_desc), H5PACK_FILE_DESC_MIN_SIZE};
static const h5pack_abi_desc h5pack_abi_sim_params = {"h5pack_sim_params", "H5PACK_SIM_PARAMS_DEFAULTS",
                                                      sizeof(h5pack_sim_params), H5PACK_SIM_PARAMS_MIN_SIZE};
static const h5pack_abi_desc h5pack_abi_sim_result = {"h5pack_sim_result", "H5PACK_SIM_RESULT_INIT",
                                                      sizeof(h5pack_sim_result), H5PACK_SIM_RESULT_MIN_SIZE};

/* The library's own copy of the caller's config: the defaults, overwritten by the caller's first
 * struct_size bytes (CFG NULL: the defaults), then checked (h5pack_reader_check_config). Returns 0, or
 * H5PACK_EINVAL with the reason in ERR. */
int h5pack_reader_config_in(const h5pack_config *cfg, h5pack_config *own, char *err, size_t err_len);

/* The thread's message for h5pack_last_error(NULL): the last failed call that has no reader to keep it. */
void h5pack_reader_set_thread_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *h5pack_reader_thread_error(void);

#endif
