/* format.h - the h5pack file contract (docs/format.md) in one place: dataset and attribute names and the
 * format version. The converter writes these names, the reader and h5pack-stats read them; a name that
 * changes here changes for all three, and a change of meaning bumps H5PACK_FORMAT_VERSION (h5pack.h). */
#ifndef H5PACK_COMMON_FORMAT_H
#define H5PACK_COMMON_FORMAT_H

#include "h5pack.h" /* H5PACK_FORMAT_VERSION */

/* Datasets, at the root. */
#define H5PACK_DS_IMAGES "images"
#define H5PACK_DS_LABELS "labels"
#define H5PACK_DS_CLASSES "classes"
#define H5PACK_DS_LABEL_NAMES "label_names" /* (K,) names of the columns of labels (N,K) or (N,) from a CSV */
#define H5PACK_DS_FILENAMES "filenames"
/* Variable-size images (format version 2, storage "ragged"): images is 1-D, every image HWC at its offset. */
#define H5PACK_DS_IMAGE_SHAPES "image_shapes"   /* (N,2) int64: height, width of image i */
#define H5PACK_DS_TILES "tiles"                 /* storage "tiled": group of one (H,W,C) dataset per image, "<i>" */
#define H5PACK_DS_IMAGE_OFFSETS "image_offsets" /* (N,) int64: first byte of image i in images */
/* Segmentation masks (h5pack --masks): (N,H,W) uint8 or uint16 beside images, in the same order and chunks. */
#define H5PACK_DS_MASKS "masks"
#define H5PACK_GROUP_SKIPPED "skipped"
#define H5PACK_DS_SKIPPED_FILES "files"     /* inside H5PACK_GROUP_SKIPPED */
#define H5PACK_DS_SKIPPED_REASONS "reasons" /* inside H5PACK_GROUP_SKIPPED */

/* Root attributes (H5PACK_ATTR_LAYOUT is also on the images dataset). */
#define H5PACK_ATTR_FORMAT_VERSION "h5pack_format_version"
#define H5PACK_ATTR_WRITER_VERSION "h5pack_version"
#define H5PACK_ATTR_LAYOUT "layout"
#define H5PACK_ATTR_HEIGHT "height"
#define H5PACK_ATTR_WIDTH "width"
#define H5PACK_ATTR_CHANNELS "channels"
#define H5PACK_ATTR_RESIZE_MODE "resize_mode"
#define H5PACK_ATTR_JPEG_SCALE "jpeg_scale"
#define H5PACK_ATTR_ALPHA "alpha" /* --alpha: drop, black or white (PNG transparency) */
#define H5PACK_ATTR_MEAN "mean"
#define H5PACK_ATTR_STD "std"
#define H5PACK_ATTR_CHUNK_IMAGES "chunk_images"
#define H5PACK_ATTR_CHUNK_REASON "chunk_reason"
#define H5PACK_ATTR_CHUNK_TARGET_BYTES "chunk_target_bytes"
#define H5PACK_ATTR_BATCH_SIZE "batch_size"
#define H5PACK_ATTR_COMPRESSION "compression"
#define H5PACK_ATTR_CHECKSUM "checksum"
#define H5PACK_ATTR_SHUFFLED "shuffled"
#define H5PACK_ATTR_SEED "seed"
#define H5PACK_ATTR_STORAGE "storage"         /* "ragged" or "tiled" (version 2); absent: one size */
#define H5PACK_ATTR_MAX_SIDE "max_side"       /* --max-side N (0: images kept at their own size) */
#define H5PACK_ATTR_SHORT_SIDE "short_side"   /* --short-side S: shorter side resized to S (0: not used) */
#define H5PACK_ATTR_TILE "tile"               /* storage "tiled": T, each image chunked (T,T,C) (smaller images: whole) */
#define H5PACK_ATTR_CHUNK_BYTES "chunk_bytes" /* ragged: bytes per chunk of the 1-D images dataset */

/* Attributes of the masks dataset: the values the stored masks hold. */
#define H5PACK_ATTR_MASK_VALUES "values"           /* int64[k]: the distinct values, sorted, the first 256 */
#define H5PACK_ATTR_MASK_VALUE_COUNT "value_count" /* int64: how many distinct values there are in all */
#define H5PACK_ATTR_MASK_HISTOGRAM "histogram"     /* int64[256], uint8 masks only: pixels of each value */
#define H5PACK_ATTR_MASK_RESAMPLE "resample"       /* "nearest": how masks were resized with their images */
#define H5PACK_MASK_RESAMPLE_TEXT_NEAREST "nearest"

/* The storage values, and the format version each needs (a fixed-size file stays version 1, so every
 * earlier reader still reads it). */
#define H5PACK_STORAGE_TEXT_RAGGED "ragged"
#define H5PACK_STORAGE_TEXT_TILED "tiled"
#define H5PACK_FORMAT_VERSION_FIXED 1
#define H5PACK_FORMAT_VERSION_RAGGED 2

/* Values of the layout attribute. */
#define H5PACK_LAYOUT_TEXT_NCHW "NCHW"
#define H5PACK_LAYOUT_TEXT_NHWC "NHWC"

#endif
