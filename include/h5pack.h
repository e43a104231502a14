/*
 * h5pack.h - public API of libh5pack, the streaming reader for h5pack files.
 *
 * libh5pack streams shuffled, normalised batches out of an HDF5 file holding a 4-D uint8 image dataset
 * (N,C,H,W or N,H,W,C): a chunk cache sized in bytes with clairvoyant (Belady) eviction, cache-aware
 * shuffle orders, batch echoing, worker threads filling pinned host buffers, and the uint8 -> float
 * conversion on the GPU (or on the CPU, with identical float32 results).
 *
 * Typical use:
 *
 *     h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
 *     cfg.batch_size = 256;
 *     h5pack_reader *r = NULL;
 *     int rc = h5pack_open("train.h5", &cfg, &r);
 *     if (rc < 0) { fprintf(stderr, "%s\n", h5pack_last_error(r)); ... }
 *     h5pack_batch b = H5PACK_BATCH_INIT;
 *     while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
 *         train_step(b.data, b.labels, b.count);
 *         h5pack_release(r, &b);
 *     }
 *     h5pack_close(r);
 *
 * Thread-safety: a reader is driven by ONE consumer thread (h5pack_next / h5pack_release /
 * h5pack_stats / h5pack_close from the same thread, or externally serialised). Different readers are
 * independent and may be used from different threads at the same time. Functions that take no reader
 * (h5pack_strerror, h5pack_version_string, h5pack_config_init, h5pack_simulate) are thread-safe.
 *
 * Errors: every function that can fail returns a negative h5pack_error code; h5pack_strerror() gives
 * the generic text and h5pack_last_error() the detail for the last failure on a reader (file name,
 * HDF5/CUDA/decoder message).
 *
 * Extensible structs (how a program built against one h5pack release keeps working with another):
 * every public struct starts with `size_t struct_size`, the struct's sizeof in the caller's program,
 * set by the struct's macro: input structs from their defaults macro (h5pack_config cfg =
 * H5PACK_CONFIG_DEFAULTS), output structs from their init macro (h5pack_info info = H5PACK_INFO_INIT,
 * likewise H5PACK_STATS_INIT, H5PACK_BATCH_INIT). The library reads and writes only the first
 * struct_size bytes. New fields are only ever appended, and a new field's zero value keeps the older
 * behaviour, so:
 *   - an older program (smaller struct_size) works with a newer library: input fields it does not know
 *     take their defaults, output fields it does not know are not written;
 *   - a newer program (larger struct_size) works with an older library as long as it leaves the fields
 *     that library does not know at zero (else H5PACK_EINVAL, "built against a newer h5pack"); output
 *     fields the library does not know come back zero.
 * A struct_size of 0 (a memset struct), below the first release's size or over 64 KiB is H5PACK_EINVAL
 * with a message naming the struct and its macro. An uninitialised struct (no macro) cannot always be
 * caught: always start from the macro.
 */
#ifndef H5PACK_H
#define H5PACK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(H5PACK_SHARED_BUILD)
#define H5PACK_API __declspec(dllexport)
#elif defined(__GNUC__) && __GNUC__ >= 4
#define H5PACK_API __attribute__((visibility("default")))
#else
#define H5PACK_API
#endif

/* ---- versions ---------------------------------------------------------------------------------- */

/* The one place the version is written: CMakeLists.txt reads these three lines for project(VERSION), the
 * string is made from the numbers, and the Python package asks the library (h5pack.__version__). */
#define H5PACK_VERSION_MAJOR 0
#define H5PACK_VERSION_MINOR 1
#define H5PACK_VERSION_PATCH 0
#define H5PACK_QUOTE_(x) #x
#define H5PACK_EXPAND_AND_QUOTE_(x) H5PACK_QUOTE_(x)
#define H5PACK_VERSION_STRING                                                                               \
    H5PACK_EXPAND_AND_QUOTE_(H5PACK_VERSION_MAJOR) "." H5PACK_EXPAND_AND_QUOTE_(H5PACK_VERSION_MINOR) "." \
        H5PACK_EXPAND_AND_QUOTE_(H5PACK_VERSION_PATCH)
#define H5PACK_VERSION_NUMBER \
    (H5PACK_VERSION_MAJOR * 10000 + H5PACK_VERSION_MINOR * 100 + H5PACK_VERSION_PATCH)

/* The newest version of the on-disk layout this library knows (attribute "h5pack_format_version"): 1 for
 * images of one size, 2 for images of several sizes (docs/format.md). Kept apart from the library version:
 * it changes only when the file contract changes. */
#define H5PACK_FORMAT_VERSION 2

/* "MAJOR.MINOR.PATCH": the library's version (may differ from the header's when linked dynamically). */
H5PACK_API const char *h5pack_version_string(void);

/* ---- errors ------------------------------------------------------------------------------------- */

/* One list, so the enum and h5pack_strerror() cannot drift apart. */
#define H5PACK_ERROR_MAP(X)                                                        \
    X(OK, 0, "success")                                                            \
    X(END, 1, "no more batches: the requested epochs are done")                    \
    X(EINVAL, -1, "invalid argument")                                              \
    X(ENOMEM, -2, "out of memory")                                                 \
    X(EIO, -3, "I/O error")                                                        \
    X(EHDF5, -4, "HDF5 library error")                                             \
    X(EFORMAT, -5, "file format not supported")                                   \
    X(ECORRUPT, -6, "corrupt or truncated data")                                   \
    X(ENOTFOUND, -7, "file or dataset not found")                                  \
    X(ENODEV, -8, "no usable GPU")                                                 \
    X(ECUDA, -9, "CUDA error")                                                     \
    X(ESTATE, -10, "call not valid in the reader's current state")                 \
    X(EINTERNAL, -11, "internal error")

typedef enum h5pack_error {
#define H5PACK_ERROR_ENUM_(name, code, text) H5PACK_##name = code,
    H5PACK_ERROR_MAP(H5PACK_ERROR_ENUM_)
#undef H5PACK_ERROR_ENUM_
} h5pack_error;

/* Generic text for a code ("unknown error" for codes not in the list). Never NULL; static storage. */
H5PACK_API const char *h5pack_strerror(int code);

/* ---- one stored image ------------------------------------------------------------------------------ */

/* Reads image INDEX of the file PATH exactly as stored, as height x width x channels uint8 (HWC), whatever the
 * file's layout (NCHW, NHWC, gray) or storage (one size, or several: docs/format.md). DIMS gets (height, width,
 * channels). With OUT NULL only DIMS is filled. Opens the file per call: for looking at images, not for training
 * (h5pack_open streams them). Returns H5PACK_OK, or an error code with the file name and the reason in ERR (may
 * be NULL): EINVAL (INDEX out of range, OUT_LEN too small), ENOTFOUND, EFORMAT, ECORRUPT. */
H5PACK_API int h5pack_read_image(const char *path, uint64_t index, uint8_t *out, size_t out_len, uint64_t dims[3],
                                 char *err, size_t err_len);

/* ---- a file's names --------------------------------------------------------------------------------- */

/* Reads rows [START, START + COUNT) of the one-dimensional string dataset DATASET of PATH (e.g. "classes",
 * "filenames", "label_names": docs/format.md), variable- or fixed-length, as NUL-terminated UTF-8 strings
 * packed one after another into OUT (OUT_LEN bytes). *ROWS gets the dataset's row count (always, also with
 * OUT NULL) and *NEEDED the bytes the asked rows take with their NULs (COUNT = UINT64_MAX: to the last row).
 * With OUT NULL or OUT_LEN < *NEEDED, H5PACK_OK is returned all the same (OUT's content is then
 * unspecified): call again with a buffer of *NEEDED bytes. For programs and bindings without an HDF5 library of their own (h5pack.info in Python).
 * HDF5 1.10.8 trusts what has no checksum (the heap of variable-length strings, an older-format file's
 * metadata): those reads run in a child process, so a damaged file is an error, never a crash here.
 * Returns H5PACK_OK or, with the file, the dataset and the reason in ERR (may be NULL): ENOTFOUND (no such
 * file or dataset), EFORMAT (not a one-dimensional string dataset), EINVAL (START past the end), ECORRUPT
 * (truncated or damaged), EIO. */
H5PACK_API int h5pack_read_strings(const char *path, const char *dataset, uint64_t start, uint64_t count, char *out,
                                   size_t out_len, uint64_t *rows, size_t *needed, char *err, size_t err_len);

/* ---- sizes typed by people ------------------------------------------------------------------------ */

/* Parses a size or count as h5pack's programs take them on their command lines ("4096", "64K", "1.5G",
 * "2GiB"; K, M, G, T = 1024, 1024^2, ...; docs/reader.md, "Sizes and counts"), for programs that want
 * the same rule for their own options (cache sizes, batch counts). Returns H5PACK_OK with *OUT set, or
 * H5PACK_EINVAL with the reason in WHY (may be NULL), e.g. "unknown suffix 'X' (use K, M, G or T, ...)". */
H5PACK_API int h5pack_size_parse(const char *text, uint64_t *out, char *why, size_t why_len);

/* ---- configuration -------------------------------------------------------------------------------- */

/* One list per enum, X(GROUP, NAME, value, "name"[, ...]), makes H5PACK_GROUP_NAME and the names that
 * h5pack_param_table() gives. The values are an ABI, 0, 1, 2, ... down the list (checked): new rows go last. */
#define H5PACK_ENUM_VALUE_(group, name, value, ...) H5PACK_##group##_##name = value,
#define H5PACK_ORDER_MAP(X)                                                                                           \
    X(ORDER, SEQUENTIAL, 0, "sequential") /* file order, every epoch the same */                                      \
    X(ORDER, RANDOM, 1, "random") /* full per-sample permutation each epoch (DataLoader shuffle=True) */              \
    X(ORDER, CHUNK, 2, "chunk")   /* permuted chunks, random draws from a window of W chunks (default) */
typedef enum h5pack_order { H5PACK_ORDER_MAP(H5PACK_ENUM_VALUE_) } h5pack_order;

#define H5PACK_DEVICE_MAP(X)                                                                                          \
    X(DEVICE, AUTO, 0, "auto") /* GPU when one is usable, else CPU; h5pack_info() says which */                       \
    X(DEVICE, CPU, 1, "cpu")                                                                                          \
    X(DEVICE, CUDA, 2, "cuda") /* error H5PACK_ENODEV when no usable GPU */
typedef enum h5pack_device { H5PACK_DEVICE_MAP(H5PACK_ENUM_VALUE_) } h5pack_device;

#define H5PACK_DTYPE_MAP(X) /* the last column: bytes of one element */                                               \
    X(DTYPE, FLOAT32, 0, "float32", 4)                                                                                \
    X(DTYPE, FLOAT16, 1, "float16", 2)                                                                                \
    X(DTYPE, BFLOAT16, 2, "bfloat16", 2)                                                                              \
    X(DTYPE, UINT8, 3, "uint8", 1) /* no conversion: the raw uint8 batch (normalisation ignored; random_flip          \
        and random_crop_padding refused at open); with a resizing crop: the cropped, resized, flipped pixels, rounded */
typedef enum h5pack_dtype { H5PACK_DTYPE_MAP(H5PACK_ENUM_VALUE_) } h5pack_dtype;

#define H5PACK_LAYOUT_MAP(X)                                                                                          \
    X(LAYOUT, NCHW, 0, "nchw")                                                                                        \
    X(LAYOUT, NHWC, 1, "nhwc")                                                                                        \
    X(LAYOUT, AUTO, 2, "auto") /* input: from the file's "layout" attribute, else inferred; output: as input */
typedef enum h5pack_layout { H5PACK_LAYOUT_MAP(H5PACK_ENUM_VALUE_) } h5pack_layout;

#define H5PACK_NORM_MAP(X)                                                                                            \
    X(NORM, IMAGENET, 0, "imagenet") /* mean (0.485,0.456,0.406), std (0.229,0.224,0.225); gray: their                \
        means; 2 or 4 channels: channel c takes channel c % 3's (alpha gets red's) */                                 \
    X(NORM, FILE, 1, "file")         /* the file's stored per-channel mean/std attributes */                          \
    X(NORM, CUSTOM, 2, "custom")     /* config.mean / config.std */                                                   \
    X(NORM, NONE, 3, "none")         /* x / 255 only */
typedef enum h5pack_norm { H5PACK_NORM_MAP(H5PACK_ENUM_VALUE_) } h5pack_norm;

#define H5PACK_CROP_MAP(X) /* resizing crops (docs/augmentation.md) */                                                \
    X(CROP, NONE, 0, "none") /* the stored size (flip / pad-and-crop as configured) */                                \
    X(CROP, RANDOM_RESIZED, 1, "random_resized") /* torchvision's RandomResizedCrop: area in [scale_min,              \
        scale_max], aspect ratio log-uniform in [ratio_min, ratio_max], 10 attempts then the central                  \
        fallback; resized with PIL's antialiased bilinear filter */                                                   \
    X(CROP, CENTER, 2, "center") /* torchvision's Resize(round(out / center_ratio)) + CenterCrop(out) (evaluation) */
typedef enum h5pack_crop { H5PACK_CROP_MAP(H5PACK_ENUM_VALUE_) } h5pack_crop;

#define H5PACK_ECHO_MODE_MAP(X)                                                                                       \
    X(ECHO, BATCH, 0, "batch")   /* each batch delivered `echo` times */                                              \
    X(ECHO, SAMPLE, 1, "sample") /* each sample delivered `echo` times per epoch, its copies in different             \
                                    batches, from a device-resident pool (docs/augmentation.md) */
typedef enum h5pack_echo_mode { H5PACK_ECHO_MODE_MAP(H5PACK_ENUM_VALUE_) } h5pack_echo_mode;

#define H5PACK_PATCH_MODE_MAP(X) /* patches of huge images in tiles (h5pack --tiles; docs/patches.md) */              \
    X(PATCH, SLIDING, 0, "sliding") /* every window of every image, row by row, with patch_overlap (inference) */     \
    X(PATCH, RANDOM, 1, "random")   /* patches_per_epoch random windows per epoch: images weighted by area,           \
                                       positions uniform (training) */
typedef enum h5pack_patch_mode { H5PACK_PATCH_MODE_MAP(H5PACK_ENUM_VALUE_) } h5pack_patch_mode;

#define H5PACK_MASK_DTYPE_MAP(X) /* delivered masks (config.masks_dataset; docs/reader.md, "Masks") */               \
    X(MASK_DTYPE, UINT8, 0, "uint8") /* the stored values, as stored */                                              \
    X(MASK_DTYPE, INT64, 1, "int64") /* the same values widened: class indices for a cross-entropy loss */
typedef enum h5pack_mask_dtype { H5PACK_MASK_DTYPE_MAP(H5PACK_ENUM_VALUE_) } h5pack_mask_dtype;

#define H5PACK_MAX_CHANNELS 4

/* h5pack_config.epochs for a reader without end (the default; Python's epochs=None). */
#define H5PACK_EPOCHS_ENDLESS UINT64_MAX

/* Reader configuration (an input struct). Start from H5PACK_CONFIG_DEFAULTS (or h5pack_config_init())
 * and change fields; the default of each field is written next to it. A zeroed struct is rejected
 * (struct_size 0), never taken as "all fields 0". The reader copies the struct (and the strings) at
 * open: the caller may free it afterwards. */
typedef struct h5pack_config {
    size_t struct_size;         /* sizeof(h5pack_config), set by the macro: see "Extensible structs" */
    const char *images_dataset; /* "images": path of the 4-D uint8 dataset */
    const char *labels_dataset; /* "labels": path of the labels; NULL or "" = no labels. A missing
                                   "labels" dataset is fine (labels come back NULL). */
    h5pack_layout input_layout; /* AUTO: "layout" attribute, else inferred from the shape */
    size_t batch_size;          /* 256 */
    size_t cache_bytes;         /* 1 GiB (1 << 30): bytes of decompressed chunks held in the cache; any
                                   size > 0 works (it holds at least one chunk) */
    h5pack_order order;         /* H5PACK_ORDER_CHUNK */
    size_t window;              /* 0: chunks in the CHUNK order's window. 0 = 256 MiB of chunks (at least
                                   16, at most all), shrunk to what the cache holds beside the chunks one
                                   batch starts (cache chunks - ceil(batch / chunk images) - 1, at least
                                   1), so each chunk is read once per epoch whatever the cache; a window
                                   set here is used as given (larger than the cache: chunks re-read) */
    uint64_t seed;              /* 0: seed of every shuffle and augmentation draw */
    uint32_t rank;              /* 0 */
    uint32_t world;             /* 1: ranks share one global order, cut into global batches of
                                   batch_size x world (the same batches however that is split); each
                                   rank gets ceil(N/world) samples (the last batch padded from the start
                                   of the order, as DistributedSampler does) */
    int drop_last;              /* 0: keep the short last batch; 1: drop it (and the padding) */
    uint32_t echo;              /* 1: deliver each batch this many times (batch echoing); 1 = off.
                                   Echoes reuse the batch (no second read or copy) with fresh
                                   augmentation draws */
    uint64_t epochs;            /* H5PACK_EPOCHS_ENDLESS: no end; else h5pack_next() returns H5PACK_END
                                   after that many. 0 is H5PACK_EINVAL (a run of no epoch is a mistake,
                                   and "0 = endless" surprised users who wrote epochs=0) */
    int threads;                /* 0: the CPUs this process may use (affinity, cgroup quota), divided
                                   by LOCAL_WORLD_SIZE when set */
    int prefetch;               /* 4: batch buffers in the ring (batches prepared ahead of the consumer) */
    h5pack_device device;       /* H5PACK_DEVICE_AUTO */
    int gpu_id;                 /* 0: CUDA device ordinal */
    size_t device_memory_limit; /* 0 = no cap; else open fails with ENOMEM if the ring needs more */
    h5pack_dtype dtype;         /* H5PACK_DTYPE_FLOAT32 */
    h5pack_layout output_layout; /* H5PACK_LAYOUT_NCHW (AUTO = same as the input) */
    h5pack_norm norm;           /* H5PACK_NORM_IMAGENET */
    float mean[H5PACK_MAX_CHANNELS]; /* {0, 0, 0, 0}: used with H5PACK_NORM_CUSTOM, in [0,1] units */
    float std[H5PACK_MAX_CHANNELS];  /* {1, 1, 1, 1}: used with H5PACK_NORM_CUSTOM */
    int random_flip;            /* 0: 1 = flip each sample horizontally with probability 1/2 */
    int random_crop_padding;    /* 0: P > 0 = pad by P (with pixel value 0) and crop H x W at random */
    void *cuda_stream;          /* NULL: a cudaStream_t that h5pack_next() makes wait for the batch
                                   (cudaStreamWaitEvent) and h5pack_release() records on */
    h5pack_crop crop;           /* H5PACK_CROP_NONE */
    uint32_t output_height;     /* 0: with a crop, the size delivered (0 = the stored height) */
    uint32_t output_width;      /* 0: with a crop (0 = the stored width) */
    uint32_t max_output_height; /* 0: largest height h5pack_set_output_size() may set later (0 = the
                                   output height); the output buffers are sized for it at open */
    uint32_t max_output_width;  /* 0: the same for the width */
    double scale_min, scale_max; /* 0.08, 1.0: random resized crop's area fraction */
    double ratio_min, ratio_max; /* 3/4, 4/3: random resized crop's aspect ratio (width / height) */
    double center_ratio;        /* 0.875 (224/256): centre crop's fraction of the shorter side */
    h5pack_echo_mode echo_mode; /* H5PACK_ECHO_BATCH */
    /* Resume (docs/reader.md, "Exact resume"): the first delivery is batch start_batch of epoch
       start_epoch (batch.index numbering; or the position start_sample names), echo start_echo of it;
       everything from there on (order, augmentation draws, echoes) equals the uninterrupted run's (of any
       split of the same global batch). All 0 = from the start.
       start_batch >= batches_per_epoch or start_echo >= echo is H5PACK_EINVAL. `epochs` still counts
       from epoch 0: the run ends after epoch epochs - 1 (a start at or past it delivers nothing). */
    uint64_t start_epoch;       /* 0 */
    uint64_t start_batch;       /* 0 */
    uint32_t start_echo;        /* 0: with batch echo, the repeat to start at (0 .. echo - 1) */
    /* Timeline (docs/stats.md, "Timeline"): a CSV row per interval while the reader runs. NULL = the
       H5PACK_TIMELINE environment variable's file, if set; "" = none even when it is set. */
    const char *timeline_path;  /* NULL */
    double timeline_interval_s; /* 0: 1.0 s */
    int timeline_append;        /* 0: a new file (an older one of that name is overwritten). 1: when the
                                   file already holds a timeline, rows go after its last one and their t_s
                                   goes on from it (one file for a loader that reopens its reader, e.g.
                                   after a resume); else as 0. timeline_path naming an existing timeline
                                   that no live reader holds (h5pack_timeline_path() of an earlier reader)
                                   is continued as named, before the naming rules apply */
    /* Patches (docs/patches.md): patch_size > 0 reads a file of huge images in tiles (h5pack --tiles) as
       S x S patches; each batch says where they came from (h5pack_batch.where). Unused for other files. */
    uint32_t patch_size;        /* 0: whole images. S: patches of S x S (a tiled file needs one) */
    uint32_t patch_overlap;     /* 0: pixels neighbouring sliding windows share (< patch_size) */
    h5pack_patch_mode patch_mode; /* H5PACK_PATCH_SLIDING */
    uint64_t patches_per_epoch; /* 0: RANDOM mode's draws per epoch (0 = the windows of a grid without
                                   overlap over every image) */
    /* Resume in another world (docs/reader.md, "Exact resume"): 0, or instead of start_batch, the
       position in epoch start_epoch's order of the first sample not yet delivered, counted over the whole
       job (0 .. samples in the file; batch.index * batch_size * world for an uninterrupted run). The rest
       of that epoch is shared among this run's ranks, in global batches of batch_size x world numbered so
       that the last is the epoch's last; a position that leaves nothing (the file's sample count, or with
       drop_last less than a global batch) starts epoch start_epoch + 1. With the global batch of the run
       that saved it, the batches (and start_echo) continue that run's exactly; with another, start at the
       next batch's position with start_echo 0. Whole images only (not with patch_size). */
    uint64_t start_sample;      /* 0 */
    /* Masks (docs/reader.md, "Masks"): a dataset of one-channel uint8 masks (N,H,W) beside the images, of
       their height and width and chunked with them (k rows per chunk), delivered with each batch
       (h5pack_batch.masks) with the image's crop box, resize (nearest neighbour, as PIL's NEAREST) and
       flip, never normalised. Whole images of one size, CPU backend. */
    const char *masks_dataset;  /* NULL: no masks ("" too); "masks" is the name h5pack writes */
    h5pack_mask_dtype mask_dtype; /* H5PACK_MASK_DTYPE_UINT8 */
} h5pack_config;

/* The defaults written next to the fields above: h5pack_config cfg = H5PACK_CONFIG_DEFAULTS; */
#define H5PACK_CONFIG_DEFAULTS                                                                            \
    {                                                                                                     \
        .struct_size = sizeof(h5pack_config), .images_dataset = "images", .labels_dataset = "labels",     \
        .input_layout = H5PACK_LAYOUT_AUTO, .batch_size = 256, .cache_bytes = (size_t)1 << 30,           \
        .order = H5PACK_ORDER_CHUNK, .window = 0, .seed = 0, .rank = 0, .world = 1, .drop_last = 0,       \
        .echo = 1, .epochs = H5PACK_EPOCHS_ENDLESS, .threads = 0, .prefetch = 4, .device = H5PACK_DEVICE_AUTO, .gpu_id = 0,   \
        .device_memory_limit = 0, .dtype = H5PACK_DTYPE_FLOAT32, .output_layout = H5PACK_LAYOUT_NCHW,     \
        .norm = H5PACK_NORM_IMAGENET, .mean = {0, 0, 0, 0}, .std = {1, 1, 1, 1}, .random_flip = 0,        \
        .random_crop_padding = 0, .cuda_stream = NULL, .crop = H5PACK_CROP_NONE, .output_height = 0,      \
        .output_width = 0, .max_output_height = 0, .max_output_width = 0, .scale_min = 0.08,              \
        .scale_max = 1.0, .ratio_min = 0.75, .ratio_max = 4.0 / 3.0, .center_ratio = 0.875,               \
        .echo_mode = H5PACK_ECHO_BATCH, .start_epoch = 0, .start_batch = 0, .start_echo = 0,             \
        .timeline_path = NULL, .timeline_interval_s = 0, .timeline_append = 0, .patch_size = 0,          \
        .patch_overlap = 0, .patch_mode = H5PACK_PATCH_SLIDING, .patches_per_epoch = 0,                  \
        .start_sample = 0, .masks_dataset = NULL, .mask_dtype = H5PACK_MASK_DTYPE_UINT8                   \
    }

/* Fills *cfg with H5PACK_CONFIG_DEFAULTS, for bindings that cannot use the macro: set cfg->struct_size to
 * the struct's size first (as for an output struct; the rest may be uninitialised). Returns H5PACK_OK, or
 * H5PACK_EINVAL (cfg NULL, or a struct_size below the first release's: nothing written; the message is
 * h5pack_last_error(NULL)). */
H5PACK_API int h5pack_config_init(h5pack_config *cfg);

/* ---- the parameter table: every h5pack_config field described once ------------------------------- */

/* How a field is stored. */
typedef enum h5pack_param_type {
    H5PACK_PARAM_SIZE = 0,   /* size_t */
    H5PACK_PARAM_U32 = 1,    /* uint32_t */
    H5PACK_PARAM_U64 = 2,    /* uint64_t */
    H5PACK_PARAM_INT = 3,    /* int */
    H5PACK_PARAM_ENUM = 4,   /* an h5pack enum (int): value i is the i-th of enum_names */
    H5PACK_PARAM_DOUBLE = 5, /* double */
    H5PACK_PARAM_FLOATS = 6, /* float[H5PACK_MAX_CHANNELS] */
    H5PACK_PARAM_STRING = 7, /* const char * (NUL-terminated, may be NULL) */
    H5PACK_PARAM_POINTER = 8 /* void * (an opaque handle, e.g. a cudaStream_t) */
} h5pack_param_type;

/* One field of h5pack_config, in struct order (struct_size excluded). h5pack_open() checks every
 * numeric field against [min, max] (enums: 0 .. the last name) with a message naming the field, its
 * value and the range; cross-field rules (rank < world, ...) are checked after that. Defaults come from
 * h5pack_config_init(). Bindings build their copy of the struct from this table (offset, size, type)
 * instead of a hand-kept list. */
typedef struct h5pack_param {
    const char *name;        /* the field's name, e.g. "batch_size" */
    h5pack_param_type type;
    size_t offset, size;     /* offsetof(h5pack_config, name), sizeof the field */
    double min, max;         /* inclusive bounds of numeric fields (checked at open); 0, 0 for others */
    const char *enum_names;  /* ENUM: the values' names in order, comma-separated ("nchw,nhwc,auto"); else NULL */
    const char *doc;         /* one line */
} h5pack_param;

/* The table (static storage, thread-safe) and its length in *count (count may be NULL). */
H5PACK_API const h5pack_param *h5pack_param_table(size_t *count);

/* One field of another public struct (h5pack_info, h5pack_batch, h5pack_stats, h5pack_crop_box,
 * h5pack_file_desc, h5pack_sim_params, h5pack_sim_result), so that bindings check or build their copy. */
typedef struct h5pack_struct_field {
    const char *name;   /* e.g. "n_samples" */
    const char *type;   /* its C type: "uint64_t", "h5pack_layout", "float[4]", "const int64_t *", ... */
    size_t offset, size;
} h5pack_struct_field;

/* STRUCT_NAME's fields in struct order, struct_size first, and their number in *count (may be NULL);
 * NULL and 0 for another name. Static storage, thread-safe. */
H5PACK_API const h5pack_struct_field *h5pack_struct_fields(const char *struct_name, size_t *count);

/* ---- the reader ----------------------------------------------------------------------------------- */

typedef struct h5pack_reader h5pack_reader;

/* Opens PATH, checks the dataset, learns every chunk's address, starts the worker threads and the
 * backend. On success *out is a new reader (free it with h5pack_close). On failure returns a negative
 * code and *out is either NULL (invalid arguments or config, or no memory for the reader itself) or a
 * reader in the failed state whose only uses are h5pack_last_error() and h5pack_close(): that is how the
 * detail message reaches the caller. Any code, ENOMEM included, may come with a failed reader (e.g. the
 * cache could not be allocated): always h5pack_close(*out) (NULL is fine). cfg NULL means defaults; a cfg
 * whose struct_size is 0 (not started from H5PACK_CONFIG_DEFAULTS) is H5PACK_EINVAL. */
H5PACK_API int h5pack_open(const char *path, const h5pack_config *cfg, h5pack_reader **out);

/* The timeline file R writes (after the rank and ".N" naming rules, docs/stats.md "Timeline"), NULL when
 * it writes none. Valid until h5pack_close(R). Give it as timeline_path with timeline_append to continue
 * this very file from a later reader. */
H5PACK_API const char *h5pack_timeline_path(const h5pack_reader *r);

/* Detail message of the last failure on R ("" if none); for R == NULL, of the last failed
 * h5pack_open() or h5pack_config_init() in this thread. Valid until the next call on R. */
H5PACK_API const char *h5pack_last_error(const h5pack_reader *r);

/* What the reader found in the file and decided at open (an output struct): declare it with
 * h5pack_info info = H5PACK_INFO_INIT. */
typedef struct h5pack_info {
    size_t struct_size;          /* sizeof(h5pack_info), set by H5PACK_INFO_INIT */
    uint64_t n_samples;          /* images in the file */
    uint32_t channels, height, width;
    h5pack_layout input_layout;  /* NCHW or NHWC as stored */
    h5pack_layout output_layout; /* NCHW or NHWC as delivered */
    h5pack_dtype dtype;
    int has_labels;
    uint32_t n_classes;          /* from the "classes" dataset, or max label + 1; 0 without labels and for
                                    labels that are no class indices ((N,K), float, negative, or 2^31 - 1 and
                                    more in a file with label_names: reader.md) */
    uint64_t samples_per_chunk;  /* images per chunk (for a contiguous dataset: per read unit) */
    uint64_t n_chunks;
    uint64_t chunk_bytes;        /* decompressed bytes of one full chunk */
    int compressed;              /* 1 when chunks are deflate-compressed */
    int fast_path;               /* 1: chunk addresses known at open: workers pread outside HDF5's lock */
    size_t cache_chunks;         /* chunks the cache holds */
    size_t window;               /* window actually used by the CHUNK order */
    int threads;
    uint64_t samples_per_epoch;  /* for this rank, after padding / drop_last */
    uint64_t batches_per_epoch;  /* fresh batches per epoch for this rank */
    h5pack_device device;        /* CPU or CUDA: what AUTO chose */
    char device_name[64];        /* "cpu" or the GPU's name */
    uint64_t device_bytes;       /* device memory allocated at open (0 on CPU) */
    uint64_t pinned_bytes;       /* pinned (or plain, on CPU) host bytes of the batch ring */
    float mean[H5PACK_MAX_CHANNELS]; /* normalisation in use */
    float std[H5PACK_MAX_CHANNELS];
    h5pack_crop crop;
    uint32_t output_height, output_width;         /* delivered size at open (the stored size without a crop) */
    uint32_t max_output_height, max_output_width; /* output buffers' size */
    h5pack_echo_mode echo_mode;  /* as configured (SAMPLE with echo 1 delivers like BATCH) */
    int ring_slots;              /* batch buffers in the ring: prefetch, raised to echo + 1 for sample echo */
    uint64_t echo_pool_bytes;    /* sample echo's pool (device memory on the GPU, included in device_bytes) */
    uint64_t order_fingerprint;  /* hash of everything the epoch order and the draws depend on but the
                                    split of the global batch (file geometry, seed, order, window,
                                    drop_last, echo and its mode, crop, flip, padding; not rank, world,
                                    batch size, threads or cache): a checkpoint loads into a reader of the
                                    same value in any world; ranks of one job must agree on it and on
                                    batch_size (docs/reader.md, "Distributed training") */
    uint32_t label_columns;      /* K: values per sample (1 for labels (N,), K for (N,K)); 0 without labels */
    int label_rank;              /* 1 for labels (N,), 2 for (N,K); 0 without labels */
    int labels_are_float;        /* 1: batch.labels_float (float32); 0: batch.labels (int64) */
    int several_sizes;           /* 1: images of several sizes (format version 2): height and width are the
                                    largest; a crop with an output size is required (docs/format.md) */
    uint32_t patch_size;         /* patches: S (height and width are S too), else 0 */
    uint32_t tile;               /* a file of images in tiles: the tile side T, else 0 */
} h5pack_info;

#define H5PACK_INFO_INIT {.struct_size = sizeof(h5pack_info)}

/* Fills the first info->struct_size bytes of *info. Thread-safety: consumer thread. */
H5PACK_API int h5pack_info_get(const h5pack_reader *r, h5pack_info *info);

/* The stored height and width of image I of R's file: its own for images of several sizes and images in
 * tiles, else the file's. H5PACK_EINVAL when I >= h5pack_info.n_samples (or a NULL argument). Stitching
 * patches back (docs/patches.md) sizes each image's map with it. */
H5PACK_API int h5pack_image_shape(const h5pack_reader *r, uint64_t i, uint32_t *height, uint32_t *width);

/* Crop box and flip of one delivered image: rows y .. y + height - 1 and columns x .. x + width - 1 of
 * the stored image, resized to the batch's size, then mirrored when flip is 1. Without a resizing crop
 * the box is the stored size shifted by the pad-and-crop offset (y, x may be negative: padding). An
 * element of the batch's boxes array: this layout is fixed. */
typedef struct h5pack_crop_box {
    int32_t y, x, height, width;
    int32_t flip;
} h5pack_crop_box;

/* One delivered batch (an output struct): declare it with h5pack_batch b = H5PACK_BATCH_INIT and reuse it
 * for every h5pack_next(). Memory belongs to the reader and stays valid until h5pack_release() of this
 * batch (or h5pack_close). */
typedef struct h5pack_batch {
    size_t struct_size;      /* sizeof(h5pack_batch), set by H5PACK_BATCH_INIT */
    const void *data;        /* count images in the output dtype and layout; a CUDA device pointer when
                                on_device, else host memory */
    const int64_t *labels;   /* count (* label_columns) labels on the host; NULL when the file has no
                                labels or they are floating point (see labels_float) */
    const int64_t *labels_device; /* the same labels in device memory (GPU backend only, else NULL) */
    const uint64_t *indices; /* count sample indices (rows of the file), host memory */
    size_t count;            /* images in this batch (the last one of an epoch may be short) */
    size_t bytes;            /* bytes at data */
    uint64_t epoch;          /* 0-based */
    uint64_t index;          /* 0-based batch number within the epoch (the same on every rank: the global batch's) */
    uint32_t echo;           /* 0 for the fresh batch, 1..echo-1 for its repeats */
    int on_device;
    void *cuda_event;        /* cudaEvent_t recorded after the batch is ready (GPU only; the caller's
                                config.cuda_stream, if set, already waits on it) */
    uint64_t token;          /* opaque: names this delivery for h5pack_release (0 = none: after a failed
                                next or a release); a stale copy or another reader's batch is refused */
    const h5pack_crop_box *boxes; /* count boxes on the host: where each image came from */
    uint32_t height, width;  /* size of this batch's images (progressive resizing changes it per epoch) */
    uint32_t label_columns;  /* K: labels hold count * K values, row-major (1 for labels (N,)) */
    const float *labels_float;        /* count * K float32 labels on the host when the file's labels are
                                         floating point (then labels is NULL); else NULL */
    const float *labels_float_device; /* the same in device memory (GPU backend only, else NULL) */
    const int64_t *where;    /* patches (config.patch_size): count rows of (image, y, x) on the host, the
                                top-left corner of each patch in its image; else NULL */
    const void *masks;       /* config.masks_dataset: count masks of height x width (count, height, width),
                                row-major, in mask_dtype, on the host; each cropped, resized (nearest) and
                                flipped as its image (boxes); else NULL */
    const void *masks_device; /* the same in device memory (GPU backend: not yet; always NULL) */
    h5pack_mask_dtype mask_dtype; /* of masks */
    size_t mask_bytes;       /* bytes at masks (0 without masks) */
} h5pack_batch;

#define H5PACK_BATCH_INIT {.struct_size = sizeof(h5pack_batch)}

/* Blocks until the next batch is ready; fills *batch and returns H5PACK_OK, or H5PACK_END after the
 * configured epochs, or a negative code (a worker's read or decode failure, with detail: the batches
 * before the failing one are delivered normally, and every later call returns the same code). The time
 * spent blocked is counted as stall time in the stats. Release each batch before asking for more than
 * config.prefetch - 1 further batches; with echo > 1, release each delivery before asking for the next
 * echo of the same batch (they share buffers). Asking anyway returns H5PACK_ESTATE instead of blocking
 * forever. On any return other than H5PACK_OK the batch is cleared (token 0), so releasing it is refused
 * cleanly. Consumer thread only. */
H5PACK_API int h5pack_next(h5pack_reader *r, h5pack_batch *batch);

/* With a resizing crop: deliver HEIGHT x WIDTH from the next epoch on (the epoch after the last
 * delivered batch's; from epoch 0 when none was delivered yet). At most max_output_height x
 * max_output_width (else H5PACK_EINVAL with the reason); batches of that epoch prepared in advance are
 * redone at the new size, so the switch is exact. The draws do not depend on the size. Progressive
 * resizing without reopening. Consumer thread. */
H5PACK_API int h5pack_set_output_size(h5pack_reader *r, uint32_t height, uint32_t width);

/* Gives the batch's buffers back to the reader (workers refill them). With config.cuda_stream set, the
 * reader records an event on that stream so the buffer is reused only after the work queued there.
 * Without it, the device work that reads the batch must have finished (synchronise first): the next
 * echo's kernel or a new batch may overwrite the buffers as soon as this returns. Sets batch->token to 0.
 * A batch released already (or a stale copy of an earlier delivery) is H5PACK_ESTATE; one from another
 * reader is H5PACK_EINVAL; the message says which. */
H5PACK_API int h5pack_release(h5pack_reader *r, h5pack_batch *batch);

/* Takes a delivered batch's image memory (the BYTES at batch->data, host or device) out of the reader
 * for the caller: *OUT owns it from now on, and the values stay as delivered until
 * h5pack_detached_free(*OUT), also after h5pack_release, h5pack_close and h5pack_trim. The reader gives the
 * ring entry new memory before it next fills it (so a detach costs one allocation, never a copy of the
 * batch). Where the reader delivers the same memory again (the later echoes of a batch), it copies the
 * values into its new memory and sets *COPIED (COPIED may be NULL): the caller's memory is the delivered
 * one all the same.
 * Bindings use it to hand batches to frameworks whose arrays cannot be moved onto new memory (NumPy, JAX,
 * TensorFlow through DLPack) when the user keeps them. The batch is still released as usual (labels,
 * indices and boxes stay the reader's). On the GPU the memory is device memory of config.gpu_id, freed
 * with cudaFree by h5pack_detached_free: work queued on it must be finished or ordered before that.
 * Whole images and patches, CPU and CUDA backends. Consumer thread. Returns H5PACK_OK, ESTATE (batch
 * released already, or handed over already), EINVAL (another reader's batch), ENOMEM or ECUDA. */
typedef struct h5pack_detached h5pack_detached;
H5PACK_API int h5pack_detach(h5pack_reader *r, const h5pack_batch *batch, h5pack_detached **out, int *copied);

/* The memory h5pack_detach took (NULL: none), and its byte count. */
H5PACK_API void *h5pack_detached_data(const h5pack_detached *d);
H5PACK_API size_t h5pack_detached_bytes(const h5pack_detached *d);

/* Frees it; any thread, any time (after the reader's close too). NULL is a no-op. */
H5PACK_API void h5pack_detached_free(h5pack_detached *d);

/* For bindings that hand batches to a framework through DLPack (the "dltensor" capsule; DLPack 0.8's
 * DLManagedTensor): a deleter that runs no interpreter code. It sets *(uint64_t *)manager_ctx to 1, a flag
 * the binding reads to learn that the framework let go of the memory. A deleter written in the binding's
 * language would run on the framework's threads or inside its error handling (the Python binding's did,
 * with an exception pending). Any thread. NULL is a no-op. */
H5PACK_API void h5pack_dlpack_mark_released(void *managed_tensor);

/* Counters since open (an output struct: h5pack_stats st = H5PACK_STATS_INIT). Read amplification =
 * bytes_read / bytes_needed, where bytes_needed is the stored size of the distinct chunks the delivered
 * batches needed in each epoch. */
typedef struct h5pack_stats {
    size_t struct_size;       /* sizeof(h5pack_stats), set by H5PACK_STATS_INIT */
    uint64_t samples;         /* images delivered (echoes included) */
    uint64_t batches;         /* batches delivered = fresh + echoed */
    uint64_t batches_fresh;
    uint64_t batches_echoed;
    uint64_t epochs_completed;
    uint64_t chunk_hits;      /* chunk uses served from the cache */
    uint64_t chunk_misses;    /* chunk loads from the file */
    uint64_t bytes_read;      /* bytes read from the file (stored, i.e. compressed, bytes) */
    uint64_t bytes_inflated;  /* bytes produced by decompression */
    uint64_t bytes_needed;    /* stored bytes of the distinct chunks needed, summed over epochs */
    double read_amplification;
    double hit_rate;          /* hits / (hits + misses), 0 when no uses */
    double elapsed_s;         /* since open */
    double stall_s;           /* time h5pack_next() waited for data */
    double busy_read_s;       /* summed over workers: pread / H5Dread_chunk */
    double busy_inflate_s;
    double busy_assemble_s;   /* copying images from chunks into the uint8 batch */
    double busy_convert_s;    /* uint8 -> output conversion (CPU time; GPU: launch time) */
    double busy_copy_s;       /* host-to-device copies, measured with events (GPU only) */
    uint64_t device_bytes;
    uint64_t cache_bytes_used; /* bytes held by cache slots (<= config.cache_bytes, at least 1 chunk) */
} h5pack_stats;

#define H5PACK_STATS_INIT {.struct_size = sizeof(h5pack_stats)}

/* Fills the first stats->struct_size bytes of *stats. Consumer thread. */
H5PACK_API int h5pack_stats_get(const h5pack_reader *r, h5pack_stats *stats);

/* Stops the workers (also mid-epoch, with batches unreleased) and frees everything but a CPU reader's large
 * batch buffers (8 MiB and more): kept for the next reader of the same sizes, which then skips the kernel's
 * page faults and zeroing, until h5pack_trim() (H5PACK_NO_KEEP=1: not kept). NULL is a no-op. */
H5PACK_API void h5pack_close(h5pack_reader *r);
H5PACK_API void h5pack_trim(void);

/* ---- describing a file as the reader reads it ----------------------------------------------------- */

/* How the reader gets a chunk's bytes (docs/reader.md, "Read paths"): one list, X(READ, NAME, value, "name"),
 * for h5pack_read_path and h5pack_read_path_name(). Fastest first, but for LOCATED (faster than RAW_DEFLATE,
 * added last: values are an ABI). */
#define H5PACK_READ_PATH_MAP(X)                                                                                       \
    X(READ, IMPLICIT, 0, "implicit")       /* unfiltered chunks at addr0 + i * chunk_bytes (HDF5's implicit index,    \
        what h5pack writes uncompressed): read from the store or lent from its map, no HDF5 after open */           \
    X(READ, CONTIGUOUS, 1, "contiguous")   /* an unchunked dataset: one byte range, read in runs of whole images */ \
    X(READ, RAW_DEFLATE, 2, "raw deflate") /* deflate chunks (optionally shuffled) in any chunk index: located at   \
        open, then read + libdeflate (fast_path), else H5Dread_chunk under HDF5's lock */                           \
    X(READ, HDF5, 3, "hdf5")               /* anything else (fletcher32, other filters): H5Dread under HDF5's lock */ \
    X(READ, LOCATED, 4, "located")         /* unfiltered chunks in an index h5pack cannot compute (h5py's           \
        chunks=True, resizable datasets, tiles): located at open, then read (fast_path), nothing to inflate;      \
        else H5Dread_chunk under HDF5's lock */
typedef enum h5pack_read_path { H5PACK_READ_PATH_MAP(H5PACK_ENUM_VALUE_) } h5pack_read_path;

/* The path's name from the list ("unknown" for other values). Static storage. */
H5PACK_API const char *h5pack_read_path_name(h5pack_read_path path);

/* What h5pack_open(path, cfg) would find in the file and derive from cfg, learnt by the reader's own open
 * (same checks, same read-path choice, same probe of old-format files) without starting threads or a
 * backend. Fields that h5pack_info also has carry the same values. */
typedef struct h5pack_file_desc {
    size_t struct_size;          /* H5PACK_FILE_DESC_INIT */
    int format_version;          /* root attribute h5pack_format_version; -1: a foreign file */
    uint64_t file_bytes;
    /* the images dataset */
    uint64_t n_samples;
    uint32_t channels, height, width;
    h5pack_layout layout;        /* NCHW or NHWC as stored (cfg->input_layout, else attribute, else inferred) */
    uint64_t image_bytes;        /* channels * height * width (uint8) */
    int chunked;                 /* 1: HDF5 chunked layout; 0: the "chunks" below are the reader's read units
                                    (runs of about 1 MiB of whole images) */
    uint64_t samples_per_chunk;  /* k: the HDF5 chunk shape's extent along the sample axis */
    uint64_t n_chunks;
    uint64_t chunk_bytes;        /* decompressed bytes of one full chunk (k whole images) */
    uint64_t stored_bytes;       /* bytes the images take in the file: the chunks' stored sizes summed */
    int compressed;              /* 1: a deflate filter */
    int n_filters;
    char filters[128];           /* "shuffle, deflate(4)"; "" for none */
    h5pack_read_path read_path;
    int fast_path;               /* as h5pack_info.fast_path: workers read outside HDF5's lock */
    int mapped;                  /* 1: chunks are read zero-copy from a memory map of the file */
    int has_labels;
    uint32_t n_classes;          /* as h5pack_info.n_classes */
    int has_pixel_stats;         /* root attributes mean and std (what H5PACK_NORM_FILE uses) */
    double mean[H5PACK_MAX_CHANNELS], std[H5PACK_MAX_CHANNELS]; /* those values, 0 without them */
    /* what h5pack_open would derive from cfg (as in h5pack_info); the images are always uint8 */
    h5pack_layout output_layout;
    h5pack_dtype dtype;          /* of the delivered batches (cfg->dtype) */
    size_t cache_chunks;
    size_t window;
    int threads;
    uint64_t samples_per_epoch;
    uint64_t batches_per_epoch;
    /* appended after the first release */
    uint64_t chunks_per_slab;    /* HDF5 chunks per reader chunk: 1 when HDF5 chunks hold whole images (and
                                    for unchunked data); more when they split images (h5py's chunks=True),
                                    each reader chunk then being the slab of every HDF5 chunk of its rows */
    uint64_t order_fingerprint;  /* as h5pack_info.order_fingerprint for this cfg (the one on every rank) */
    uint32_t label_columns;      /* as h5pack_info.label_columns: K, 0 without labels */
    int label_rank;              /* as h5pack_info.label_rank: 1 for (N,), 2 for (N,K), 0 without labels */
    int labels_are_float;        /* as h5pack_info.labels_are_float */
    uint64_t chunk_order_cache_min; /* 0: h5pack_open accepts every cache_bytes (the chunk order's derived
                                    window shrinks to what the cache holds; window shows it). Kept for
                                    binary compatibility: earlier versions refused caches below the
                                    default window plus one chunk per thread and reported that size here */
    int several_sizes;           /* as h5pack_info.several_sizes */
    uint32_t tile;               /* a file of images in tiles: its tile side (h5pack_info.tile); 0 otherwise */
} h5pack_file_desc;

#define H5PACK_FILE_DESC_INIT { .struct_size = sizeof(h5pack_file_desc) }

/* Fills *desc for PATH read with cfg (NULL = defaults: dataset names, input layout, and the fields that
 * decide cache_chunks, window and the epoch's length). Opens the file, learns every chunk's stored size
 * and closes it again. Returns 0, or a negative code with "PATH: reason" in err, as h5pack_open would
 * fail on the file or the config (ENOTFOUND, EFORMAT, ECORRUPT, EINVAL...); the output side (device,
 * normalisation) is not checked. desc->struct_size must be set (H5PACK_FILE_DESC_INIT). Thread-safe. */
H5PACK_API int h5pack_describe(const char *path, const h5pack_config *cfg, h5pack_file_desc *desc, char *err,
                               size_t err_len);

/* Simulation of the reader's chunk cache (h5pack_simulate, the h5pack_sim handle): include/h5pack_sim.h. */

#ifdef __cplusplus
}
#endif
#endif /* H5PACK_H */
