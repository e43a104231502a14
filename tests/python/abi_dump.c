/* Prints the size of every public struct of include/h5pack.h (and h5pack_sim.h) and the offset of each
 * field, one per line ("h5pack_config.batch_size 16"). test_abi.py compares them with the ctypes structs
 * python/h5pack/_lib.py builds from the library's tables (h5pack_param_table, h5pack_struct_fields).
 * Written here by hand, apart from those tables: a field missing from the header does not compile, one
 * missing from a table shows as a mismatch (also a field appended into a struct's tail padding, which the
 * tables' own checks cannot see).
 * Also the enum values, constants and the version numbers. */
#include <stddef.h>
#include <stdio.h>

#include "h5pack.h"
#include "h5pack_sim.h"

int main(void)
{
    printf("h5pack_config size %zu\n", sizeof(h5pack_config));
    printf("h5pack_config.struct_size %zu\n", offsetof(h5pack_config, struct_size));
    printf("h5pack_config.images_dataset %zu\n", offsetof(h5pack_config, images_dataset));
    printf("h5pack_config.labels_dataset %zu\n", offsetof(h5pack_config, labels_dataset));
    printf("h5pack_config.input_layout %zu\n", offsetof(h5pack_config, input_layout));
    printf("h5pack_config.batch_size %zu\n", offsetof(h5pack_config, batch_size));
    printf("h5pack_config.cache_bytes %zu\n", offsetof(h5pack_config, cache_bytes));
    printf("h5pack_config.order %zu\n", offsetof(h5pack_config, order));
    printf("h5pack_config.window %zu\n", offsetof(h5pack_config, window));
    printf("h5pack_config.seed %zu\n", offsetof(h5pack_config, seed));
    printf("h5pack_config.rank %zu\n", offsetof(h5pack_config, rank));
    printf("h5pack_config.world %zu\n", offsetof(h5pack_config, world));
    printf("h5pack_config.drop_last %zu\n", offsetof(h5pack_config, drop_last));
    printf("h5pack_config.echo %zu\n", offsetof(h5pack_config, echo));
    printf("h5pack_config.epochs %zu\n", offsetof(h5pack_config, epochs));
    printf("h5pack_config.threads %zu\n", offsetof(h5pack_config, threads));
    printf("h5pack_config.prefetch %zu\n", offsetof(h5pack_config, prefetch));
    printf("h5pack_config.device %zu\n", offsetof(h5pack_config, device));
    printf("h5pack_config.gpu_id %zu\n", offsetof(h5pack_config, gpu_id));
    printf("h5pack_config.device_memory_limit %zu\n", offsetof(h5pack_config, device_memory_limit));
    printf("h5pack_config.dtype %zu\n", offsetof(h5pack_config, dtype));
    printf("h5pack_config.output_layout %zu\n", offsetof(h5pack_config, output_layout));
    printf("h5pack_config.norm %zu\n", offsetof(h5pack_config, norm));
    printf("h5pack_config.mean %zu\n", offsetof(h5pack_config, mean));
    printf("h5pack_config.std %zu\n", offsetof(h5pack_config, std));
    printf("h5pack_config.random_flip %zu\n", offsetof(h5pack_config, random_flip));
    printf("h5pack_config.random_crop_padding %zu\n", offsetof(h5pack_config, random_crop_padding));
    printf("h5pack_config.cuda_stream %zu\n", offsetof(h5pack_config, cuda_stream));
    printf("h5pack_config.crop %zu\n", offsetof(h5pack_config, crop));
    printf("h5pack_config.output_height %zu\n", offsetof(h5pack_config, output_height));
    printf("h5pack_config.output_width %zu\n", offsetof(h5pack_config, output_width));
    printf("h5pack_config.max_output_height %zu\n", offsetof(h5pack_config, max_output_height));
    printf("h5pack_config.max_output_width %zu\n", offsetof(h5pack_config, max_output_width));
    printf("h5pack_config.scale_min %zu\n", offsetof(h5pack_config, scale_min));
    printf("h5pack_config.scale_max %zu\n", offsetof(h5pack_config, scale_max));
    printf("h5pack_config.ratio_min %zu\n", offsetof(h5pack_config, ratio_min));
    printf("h5pack_config.ratio_max %zu\n", offsetof(h5pack_config, ratio_max));
    printf("h5pack_config.center_ratio %zu\n", offsetof(h5pack_config, center_ratio));
    printf("h5pack_config.echo_mode %zu\n", offsetof(h5pack_config, echo_mode));
    printf("h5pack_config.start_epoch %zu\n", offsetof(h5pack_config, start_epoch));
    printf("h5pack_config.start_batch %zu\n", offsetof(h5pack_config, start_batch));
    printf("h5pack_config.start_echo %zu\n", offsetof(h5pack_config, start_echo));
    printf("h5pack_config.timeline_path %zu\n", offsetof(h5pack_config, timeline_path));
    printf("h5pack_config.timeline_interval_s %zu\n", offsetof(h5pack_config, timeline_interval_s));
    printf("h5pack_config.timeline_append %zu\n", offsetof(h5pack_config, timeline_append));
    printf("h5pack_config.patch_size %zu\n", offsetof(h5pack_config, patch_size));
    printf("h5pack_config.patch_overlap %zu\n", offsetof(h5pack_config, patch_overlap));
    printf("h5pack_config.patch_mode %zu\n", offsetof(h5pack_config, patch_mode));
    printf("h5pack_config.patches_per_epoch %zu\n", offsetof(h5pack_config, patches_per_epoch));
    printf("h5pack_config.start_sample %zu\n", offsetof(h5pack_config, start_sample));
    printf("h5pack_config.masks_dataset %zu\n", offsetof(h5pack_config, masks_dataset));
    printf("h5pack_config.mask_dtype %zu\n", offsetof(h5pack_config, mask_dtype));
    printf("h5pack_info size %zu\n", sizeof(h5pack_info));
    printf("h5pack_info.struct_size %zu\n", offsetof(h5pack_info, struct_size));
    printf("h5pack_info.n_samples %zu\n", offsetof(h5pack_info, n_samples));
    printf("h5pack_info.channels %zu\n", offsetof(h5pack_info, channels));
    printf("h5pack_info.height %zu\n", offsetof(h5pack_info, height));
    printf("h5pack_info.width %zu\n", offsetof(h5pack_info, width));
    printf("h5pack_info.input_layout %zu\n", offsetof(h5pack_info, input_layout));
    printf("h5pack_info.output_layout %zu\n", offsetof(h5pack_info, output_layout));
    printf("h5pack_info.dtype %zu\n", offsetof(h5pack_info, dtype));
    printf("h5pack_info.has_labels %zu\n", offsetof(h5pack_info, has_labels));
    printf("h5pack_info.n_classes %zu\n", offsetof(h5pack_info, n_classes));
    printf("h5pack_info.samples_per_chunk %zu\n", offsetof(h5pack_info, samples_per_chunk));
    printf("h5pack_info.n_chunks %zu\n", offsetof(h5pack_info, n_chunks));
    printf("h5pack_info.chunk_bytes %zu\n", offsetof(h5pack_info, chunk_bytes));
    printf("h5pack_info.compressed %zu\n", offsetof(h5pack_info, compressed));
    printf("h5pack_info.fast_path %zu\n", offsetof(h5pack_info, fast_path));
    printf("h5pack_info.cache_chunks %zu\n", offsetof(h5pack_info, cache_chunks));
    printf("h5pack_info.window %zu\n", offsetof(h5pack_info, window));
    printf("h5pack_info.threads %zu\n", offsetof(h5pack_info, threads));
    printf("h5pack_info.samples_per_epoch %zu\n", offsetof(h5pack_info, samples_per_epoch));
    printf("h5pack_info.batches_per_epoch %zu\n", offsetof(h5pack_info, batches_per_epoch));
    printf("h5pack_info.device %zu\n", offsetof(h5pack_info, device));
    printf("h5pack_info.device_name %zu\n", offsetof(h5pack_info, device_name));
    printf("h5pack_info.device_bytes %zu\n", offsetof(h5pack_info, device_bytes));
    printf("h5pack_info.pinned_bytes %zu\n", offsetof(h5pack_info, pinned_bytes));
    printf("h5pack_info.mean %zu\n", offsetof(h5pack_info, mean));
    printf("h5pack_info.std %zu\n", offsetof(h5pack_info, std));
    printf("h5pack_info.crop %zu\n", offsetof(h5pack_info, crop));
    printf("h5pack_info.output_height %zu\n", offsetof(h5pack_info, output_height));
    printf("h5pack_info.output_width %zu\n", offsetof(h5pack_info, output_width));
    printf("h5pack_info.max_output_height %zu\n", offsetof(h5pack_info, max_output_height));
    printf("h5pack_info.max_output_width %zu\n", offsetof(h5pack_info, max_output_width));
    printf("h5pack_info.echo_mode %zu\n", offsetof(h5pack_info, echo_mode));
    printf("h5pack_info.ring_slots %zu\n", offsetof(h5pack_info, ring_slots));
    printf("h5pack_info.echo_pool_bytes %zu\n", offsetof(h5pack_info, echo_pool_bytes));
    printf("h5pack_info.order_fingerprint %zu\n", offsetof(h5pack_info, order_fingerprint));
    printf("h5pack_info.label_columns %zu\n", offsetof(h5pack_info, label_columns));
    printf("h5pack_info.label_rank %zu\n", offsetof(h5pack_info, label_rank));
    printf("h5pack_info.labels_are_float %zu\n", offsetof(h5pack_info, labels_are_float));
    printf("h5pack_info.several_sizes %zu\n", offsetof(h5pack_info, several_sizes));
    printf("h5pack_info.patch_size %zu\n", offsetof(h5pack_info, patch_size));
    printf("h5pack_info.tile %zu\n", offsetof(h5pack_info, tile));
    printf("h5pack_batch size %zu\n", sizeof(h5pack_batch));
    printf("h5pack_batch.struct_size %zu\n", offsetof(h5pack_batch, struct_size));
    printf("h5pack_batch.data %zu\n", offsetof(h5pack_batch, data));
    printf("h5pack_batch.labels %zu\n", offsetof(h5pack_batch, labels));
    printf("h5pack_batch.labels_device %zu\n", offsetof(h5pack_batch, labels_device));
    printf("h5pack_batch.indices %zu\n", offsetof(h5pack_batch, indices));
    printf("h5pack_batch.count %zu\n", offsetof(h5pack_batch, count));
    printf("h5pack_batch.bytes %zu\n", offsetof(h5pack_batch, bytes));
    printf("h5pack_batch.epoch %zu\n", offsetof(h5pack_batch, epoch));
    printf("h5pack_batch.index %zu\n", offsetof(h5pack_batch, index));
    printf("h5pack_batch.echo %zu\n", offsetof(h5pack_batch, echo));
    printf("h5pack_batch.on_device %zu\n", offsetof(h5pack_batch, on_device));
    printf("h5pack_batch.cuda_event %zu\n", offsetof(h5pack_batch, cuda_event));
    printf("h5pack_batch.token %zu\n", offsetof(h5pack_batch, token));
    printf("h5pack_batch.boxes %zu\n", offsetof(h5pack_batch, boxes));
    printf("h5pack_batch.height %zu\n", offsetof(h5pack_batch, height));
    printf("h5pack_batch.width %zu\n", offsetof(h5pack_batch, width));
    printf("h5pack_batch.label_columns %zu\n", offsetof(h5pack_batch, label_columns));
    printf("h5pack_batch.labels_float %zu\n", offsetof(h5pack_batch, labels_float));
    printf("h5pack_batch.labels_float_device %zu\n", offsetof(h5pack_batch, labels_float_device));
    printf("h5pack_batch.where %zu\n", offsetof(h5pack_batch, where));
    printf("h5pack_batch.masks %zu\n", offsetof(h5pack_batch, masks));
    printf("h5pack_batch.masks_device %zu\n", offsetof(h5pack_batch, masks_device));
    printf("h5pack_batch.mask_dtype %zu\n", offsetof(h5pack_batch, mask_dtype));
    printf("h5pack_batch.mask_bytes %zu\n", offsetof(h5pack_batch, mask_bytes));
    printf("h5pack_crop_box size %zu\n", sizeof(h5pack_crop_box));
    printf("h5pack_crop_box.y %zu\n", offsetof(h5pack_crop_box, y));
    printf("h5pack_crop_box.x %zu\n", offsetof(h5pack_crop_box, x));
    printf("h5pack_crop_box.height %zu\n", offsetof(h5pack_crop_box, height));
    printf("h5pack_crop_box.width %zu\n", offsetof(h5pack_crop_box, width));
    printf("h5pack_crop_box.flip %zu\n", offsetof(h5pack_crop_box, flip));
    printf("h5pack_stats size %zu\n", sizeof(h5pack_stats));
    printf("h5pack_file_desc size %zu\n", sizeof(h5pack_file_desc));
    printf("h5pack_file_desc.struct_size %zu\n", offsetof(h5pack_file_desc, struct_size));
    printf("h5pack_file_desc.format_version %zu\n", offsetof(h5pack_file_desc, format_version));
    printf("h5pack_file_desc.file_bytes %zu\n", offsetof(h5pack_file_desc, file_bytes));
    printf("h5pack_file_desc.n_samples %zu\n", offsetof(h5pack_file_desc, n_samples));
    printf("h5pack_file_desc.channels %zu\n", offsetof(h5pack_file_desc, channels));
    printf("h5pack_file_desc.height %zu\n", offsetof(h5pack_file_desc, height));
    printf("h5pack_file_desc.width %zu\n", offsetof(h5pack_file_desc, width));
    printf("h5pack_file_desc.layout %zu\n", offsetof(h5pack_file_desc, layout));
    printf("h5pack_file_desc.image_bytes %zu\n", offsetof(h5pack_file_desc, image_bytes));
    printf("h5pack_file_desc.chunked %zu\n", offsetof(h5pack_file_desc, chunked));
    printf("h5pack_file_desc.samples_per_chunk %zu\n", offsetof(h5pack_file_desc, samples_per_chunk));
    printf("h5pack_file_desc.n_chunks %zu\n", offsetof(h5pack_file_desc, n_chunks));
    printf("h5pack_file_desc.chunk_bytes %zu\n", offsetof(h5pack_file_desc, chunk_bytes));
    printf("h5pack_file_desc.stored_bytes %zu\n", offsetof(h5pack_file_desc, stored_bytes));
    printf("h5pack_file_desc.compressed %zu\n", offsetof(h5pack_file_desc, compressed));
    printf("h5pack_file_desc.n_filters %zu\n", offsetof(h5pack_file_desc, n_filters));
    printf("h5pack_file_desc.filters %zu\n", offsetof(h5pack_file_desc, filters));
    printf("h5pack_file_desc.read_path %zu\n", offsetof(h5pack_file_desc, read_path));
    printf("h5pack_file_desc.fast_path %zu\n", offsetof(h5pack_file_desc, fast_path));
    printf("h5pack_file_desc.mapped %zu\n", offsetof(h5pack_file_desc, mapped));
    printf("h5pack_file_desc.has_labels %zu\n", offsetof(h5pack_file_desc, has_labels));
    printf("h5pack_file_desc.n_classes %zu\n", offsetof(h5pack_file_desc, n_classes));
    printf("h5pack_file_desc.has_pixel_stats %zu\n", offsetof(h5pack_file_desc, has_pixel_stats));
    printf("h5pack_file_desc.mean %zu\n", offsetof(h5pack_file_desc, mean));
    printf("h5pack_file_desc.std %zu\n", offsetof(h5pack_file_desc, std));
    printf("h5pack_file_desc.output_layout %zu\n", offsetof(h5pack_file_desc, output_layout));
    printf("h5pack_file_desc.dtype %zu\n", offsetof(h5pack_file_desc, dtype));
    printf("h5pack_file_desc.cache_chunks %zu\n", offsetof(h5pack_file_desc, cache_chunks));
    printf("h5pack_file_desc.window %zu\n", offsetof(h5pack_file_desc, window));
    printf("h5pack_file_desc.threads %zu\n", offsetof(h5pack_file_desc, threads));
    printf("h5pack_file_desc.samples_per_epoch %zu\n", offsetof(h5pack_file_desc, samples_per_epoch));
    printf("h5pack_file_desc.batches_per_epoch %zu\n", offsetof(h5pack_file_desc, batches_per_epoch));
    printf("h5pack_file_desc.chunks_per_slab %zu\n", offsetof(h5pack_file_desc, chunks_per_slab));
    printf("h5pack_file_desc.order_fingerprint %zu\n", offsetof(h5pack_file_desc, order_fingerprint));
    printf("h5pack_file_desc.label_columns %zu\n", offsetof(h5pack_file_desc, label_columns));
    printf("h5pack_file_desc.label_rank %zu\n", offsetof(h5pack_file_desc, label_rank));
    printf("h5pack_file_desc.labels_are_float %zu\n", offsetof(h5pack_file_desc, labels_are_float));
    printf("h5pack_file_desc.chunk_order_cache_min %zu\n", offsetof(h5pack_file_desc, chunk_order_cache_min));
    printf("h5pack_file_desc.several_sizes %zu\n", offsetof(h5pack_file_desc, several_sizes));
    printf("h5pack_file_desc.tile %zu\n", offsetof(h5pack_file_desc, tile));
    printf("h5pack_stats.struct_size %zu\n", offsetof(h5pack_stats, struct_size));
    printf("h5pack_stats.samples %zu\n", offsetof(h5pack_stats, samples));
    printf("h5pack_stats.batches %zu\n", offsetof(h5pack_stats, batches));
    printf("h5pack_stats.batches_fresh %zu\n", offsetof(h5pack_stats, batches_fresh));
    printf("h5pack_stats.batches_echoed %zu\n", offsetof(h5pack_stats, batches_echoed));
    printf("h5pack_stats.epochs_completed %zu\n", offsetof(h5pack_stats, epochs_completed));
    printf("h5pack_stats.chunk_hits %zu\n", offsetof(h5pack_stats, chunk_hits));
    printf("h5pack_stats.chunk_misses %zu\n", offsetof(h5pack_stats, chunk_misses));
    printf("h5pack_stats.bytes_read %zu\n", offsetof(h5pack_stats, bytes_read));
    printf("h5pack_stats.bytes_inflated %zu\n", offsetof(h5pack_stats, bytes_inflated));
    printf("h5pack_stats.bytes_needed %zu\n", offsetof(h5pack_stats, bytes_needed));
    printf("h5pack_stats.read_amplification %zu\n", offsetof(h5pack_stats, read_amplification));
    printf("h5pack_stats.hit_rate %zu\n", offsetof(h5pack_stats, hit_rate));
    printf("h5pack_stats.elapsed_s %zu\n", offsetof(h5pack_stats, elapsed_s));
    printf("h5pack_stats.stall_s %zu\n", offsetof(h5pack_stats, stall_s));
    printf("h5pack_stats.busy_read_s %zu\n", offsetof(h5pack_stats, busy_read_s));
    printf("h5pack_stats.busy_inflate_s %zu\n", offsetof(h5pack_stats, busy_inflate_s));
    printf("h5pack_stats.busy_assemble_s %zu\n", offsetof(h5pack_stats, busy_assemble_s));
    printf("h5pack_stats.busy_convert_s %zu\n", offsetof(h5pack_stats, busy_convert_s));
    printf("h5pack_stats.busy_copy_s %zu\n", offsetof(h5pack_stats, busy_copy_s));
    printf("h5pack_stats.device_bytes %zu\n", offsetof(h5pack_stats, device_bytes));
    printf("h5pack_stats.cache_bytes_used %zu\n", offsetof(h5pack_stats, cache_bytes_used));
    printf("h5pack_sim_params size %zu\n", sizeof(h5pack_sim_params));
    printf("h5pack_sim_params.struct_size %zu\n", offsetof(h5pack_sim_params, struct_size));
    printf("h5pack_sim_params.policy %zu\n", offsetof(h5pack_sim_params, policy));
    printf("h5pack_sim_params.cache_bytes %zu\n", offsetof(h5pack_sim_params, cache_bytes));
    printf("h5pack_sim_params.hdf5_nslots %zu\n", offsetof(h5pack_sim_params, hdf5_nslots));
    printf("h5pack_sim_params.hdf5_w0 %zu\n", offsetof(h5pack_sim_params, hdf5_w0));
    printf("h5pack_sim_params.order %zu\n", offsetof(h5pack_sim_params, order));
    printf("h5pack_sim_params.chunk_samples %zu\n", offsetof(h5pack_sim_params, chunk_samples));
    printf("h5pack_sim_result size %zu\n", sizeof(h5pack_sim_result));
    printf("h5pack_sim_result.struct_size %zu\n", offsetof(h5pack_sim_result, struct_size));
    printf("h5pack_sim_result.accesses %zu\n", offsetof(h5pack_sim_result, accesses));
    printf("h5pack_sim_result.hits %zu\n", offsetof(h5pack_sim_result, hits));
    printf("h5pack_sim_result.misses %zu\n", offsetof(h5pack_sim_result, misses));
    printf("h5pack_sim_result.hit_rate %zu\n", offsetof(h5pack_sim_result, hit_rate));
    printf("h5pack_sim_result.bytes_read %zu\n", offsetof(h5pack_sim_result, bytes_read));
    printf("h5pack_sim_result.read_amplification %zu\n", offsetof(h5pack_sim_result, read_amplification));
    printf("h5pack_sim_result.bytes_needed %zu\n", offsetof(h5pack_sim_result, bytes_needed));
    printf("h5pack_sim_result.order %zu\n", offsetof(h5pack_sim_result, order));
    printf("h5pack_sim_result.chunk_samples %zu\n", offsetof(h5pack_sim_result, chunk_samples));
    printf("h5pack_sim_result.chunk_bytes %zu\n", offsetof(h5pack_sim_result, chunk_bytes));
    printf("h5pack_sim_result.n_chunks %zu\n", offsetof(h5pack_sim_result, n_chunks));
    printf("h5pack_sim_result.cache_chunks %zu\n", offsetof(h5pack_sim_result, cache_chunks));
    printf("h5pack_sim_result.window %zu\n", offsetof(h5pack_sim_result, window));
    printf("h5pack_sim_result.hypothetical %zu\n", offsetof(h5pack_sim_result, hypothetical));
    printf("h5pack_sim_result.stored_estimated %zu\n", offsetof(h5pack_sim_result, stored_estimated));
    /* Enum values and constants the binding repeats ("enum.order.chunk 2"). */
    printf("enum.order.sequential %d\nenum.order.random %d\nenum.order.chunk %d\n", H5PACK_ORDER_SEQUENTIAL,
           H5PACK_ORDER_RANDOM, H5PACK_ORDER_CHUNK);
    printf("enum.device.auto %d\nenum.device.cpu %d\nenum.device.cuda %d\n", H5PACK_DEVICE_AUTO, H5PACK_DEVICE_CPU,
           H5PACK_DEVICE_CUDA);
    printf("enum.dtype.float32 %d\nenum.dtype.float16 %d\nenum.dtype.bfloat16 %d\nenum.dtype.uint8 %d\n",
           H5PACK_DTYPE_FLOAT32, H5PACK_DTYPE_FLOAT16, H5PACK_DTYPE_BFLOAT16, H5PACK_DTYPE_UINT8);
    printf("enum.layout.nchw %d\nenum.layout.nhwc %d\nenum.layout.auto %d\n", H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NHWC,
           H5PACK_LAYOUT_AUTO);
    printf("enum.norm.imagenet %d\nenum.norm.file %d\nenum.norm.custom %d\nenum.norm.none %d\n", H5PACK_NORM_IMAGENET,
           H5PACK_NORM_FILE, H5PACK_NORM_CUSTOM, H5PACK_NORM_NONE);
    printf("enum.crop.none %d\nenum.crop.random_resized %d\nenum.crop.center %d\n", H5PACK_CROP_NONE,
           H5PACK_CROP_RANDOM_RESIZED, H5PACK_CROP_CENTER);
    printf("enum.echo_mode.batch %d\nenum.echo_mode.sample %d\n", H5PACK_ECHO_BATCH, H5PACK_ECHO_SAMPLE);
    printf("enum.patch_mode.sliding %d\nenum.patch_mode.random %d\n", H5PACK_PATCH_SLIDING, H5PACK_PATCH_RANDOM);
    printf("enum.mask_dtype.uint8 %d\nenum.mask_dtype.int64 %d\n", H5PACK_MASK_DTYPE_UINT8, H5PACK_MASK_DTYPE_INT64);
    printf("const.OK %d\nconst.END %d\nconst.EINVAL %d\nconst.ECORRUPT %d\nconst.ENOTFOUND %d\nconst.ESTATE %d\n"
           "const.EINTERNAL %d\nconst.MAX_CHANNELS %d\n",
           H5PACK_OK, H5PACK_END, H5PACK_EINVAL, H5PACK_ECORRUPT, H5PACK_ENOTFOUND, H5PACK_ESTATE, H5PACK_EINTERNAL,
           H5PACK_MAX_CHANNELS);
    /* The header's version, which the library (h5pack.__version__) must report. */
    printf("version.major %d\nversion.minor %d\nversion.patch %d\n", H5PACK_VERSION_MAJOR, H5PACK_VERSION_MINOR,
           H5PACK_VERSION_PATCH);
    return 0;
}
