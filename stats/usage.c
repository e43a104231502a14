/* usage.c - help texts of h5pack-stats (stdout for --help, stderr for mistakes). */
#include <stdio.h>

#include "commands.h"

void usage_main(FILE *f)
{
    fprintf(f,
            "usage: h5pack-stats COMMAND FILE [OPTIONS]\n"
            "Measure what the h5pack reader does with a file, and what cache, chunk and order would fix it.\n\n"
            "commands:\n"
            "  info FILE       how the reader reads the file (read path, chunks, labels), then datasets,\n"
            "                  shapes, chunking, compression, attributes (any HDF5 file)\n"
            "  run FILE        stream the file through the real reader; hit rate, read amplification,\n"
            "                  throughput and how long the consumer waited\n"
            "  simulate FILE   replay the reader's chunk accesses under several cache sizes, orders,\n"
            "                  policies (belady = h5pack, lru, hdf5 = what h5py gets) and what-if chunk\n"
            "                  sizes, without reading data\n"
            "  plot FILE.csv -o OUT.svg|OUT.png   draw a reader timeline (H5PACK_TIMELINE, run --timeline)\n"
            "  options         which reader parameter each option sets, and how its value is read\n\n"
            "  h5pack-stats COMMAND --help   options of a command\n"
            "  h5pack-stats --version\n"
            "sizes take suffixes: 512k, 64M, 1G, 1GiB (binary units).\n");
}

void usage_info(FILE *f)
{
    fprintf(f, "usage: h5pack-stats info FILE [--json] [--images NAME]\n"
               "  --json          one JSON object (keys: file, reader, datasets, chunk_shape, attributes,\n"
               "                  classes...)\n"
               "  --images NAME   image dataset the reader's view, attributes and chunk shape are about\n"
               "                  (default images)\n");
}

#define READER_OPTIONS                                                                                 \
    "  --batch N            batch size (default 256)\n"                                                \
    "  --window W           chunks in the chunk order's window (default: 256 MiB of chunks, >= 16)\n"  \
    "  --epochs E           epochs (default 1)\n"                                                      \
    "  --threads T          worker threads (default: usable CPUs / LOCAL_WORLD_SIZE)\n"             \
    "  --seed S             shuffle seed (default 0)\n"                                                \
    "  --rank R --world W   this rank's share of a distributed run (default 0 of 1)\n"                \
    "  --drop-last          drop the short last batch of each epoch\n"                                 \
    "  --images NAME        image dataset (default images); --labels NAME (default labels, none: \"\")\n"

void usage_run(FILE *f)
{
    fprintf(f, "usage: h5pack-stats run FILE [OPTIONS]\n"
               "Streams FILE through the reader (public API) and reports per epoch and in total: samples,\n"
               "batches (fresh/echoed), chunk hits and misses, hit rate, bytes read, read amplification,\n"
               "samples/s, MB/s and the fraction of time the consumer waited for data.\n"
               "  --cache SIZE         chunk cache size (default 1G)\n"
               "  --order O            sequential | random | chunk (default chunk)\n"
               "  --echo E             deliver each batch E times (default 1)\n"
               "  --echo-mode M        batch | sample: echo whole batches, or each sample E times per\n"
               "                       epoch in different batches, from a pool (default batch; sample: E <= 64)\n"
               "  --device D           auto | cpu | cuda (default auto)\n" READER_OPTIONS
               "augmentation (as the Python Loader's arguments; docs/augmentation.md):\n"
               "  --crop C             none | random_resized | center (default none)\n"
               "  --output-size N|HxW  size a --crop delivers (default: the stored size)\n"
               "  --scale MIN,MAX      random_resized: area fraction (default 0.08,1)\n"
               "  --ratio MIN,MAX      random_resized: aspect ratio w/h (default 0.75,1.3333)\n"
               "  --center-ratio X     center: fraction of the shorter side, in (0,1] (default 0.875)\n"
               "  --flip               flip each image horizontally with probability 1/2\n"
               "  --crop-padding P     pad by P pixels and crop the stored size at random (not with --crop)\n"
               "  --step-ms MS         the consumer spends MS per batch (your training step; default 0)\n"
               "  --masks NAME         deliver the masks dataset NAME with the images (docs/reader.md \"Masks\")\n"
               "  --mask-dtype T       uint8 | int64 (default uint8)\n"
               "patches of huge images in tiles (h5pack --tiles; docs/patches.md):\n"
               "  --patch S            S x S patches instead of whole images (a tiled file needs it)\n"
               "  --overlap O          pixels neighbouring sliding windows share (default 0)\n"
               "  --patch-mode M       sliding | random (default sliding)\n"
               "  --patches-per-epoch N random patches per epoch (default: a grid's worth)\n"
               "output:\n"
               "  --json               one JSON object: totals at the top level, \"epochs\" per epoch\n"
               "  --timeline FILE.csv  the reader's timeline: a CSV row per interval (samples/s, MB/s, stall,\n"
               "                       hit rate; docs/stats.md \"Timeline\"); draw it with h5pack-stats plot\n"
               "  --interval S         timeline interval in seconds (default 0.1)\n");
}

void usage_plot(FILE *f)
{
    fprintf(f, "usage: h5pack-stats plot FILE.csv -o OUT.svg|OUT.png\n"
               "Draws a reader timeline (written by any reader with H5PACK_TIMELINE=FILE.csv, or by run\n"
               "--timeline) over time: samples/s; MB/s read and delivered; stall fraction, hit rate and GPU\n"
               "idle fraction.\n"
               "  -o, --output FILE      the plot: SVG for FILE.svg, PNG (1800 x 1380 pixels) for FILE.png\n"
               "                         (extension in any case)\n");
}

void usage_simulate(FILE *f)
{
    fprintf(f, "usage: h5pack-stats simulate FILE --cache LIST [--order LIST] [--policy LIST] [OPTIONS]\n"
               "Replays the chunk accesses the reader would make, for every cache size x order x policy.\n"
               "  --cache LIST         cache sizes, e.g. 64M,256M,1G\n"
               "  --order LIST         of sequential,random,chunk (default chunk)\n"
               "  --policy LIST        of belady,lru,hdf5 (default belady,lru,hdf5)\n"
               "  --chunk LIST         what-if chunks of K images each, e.g. 4,16,64: rows next to the\n"
               "                       file's own chunks (same file, nothing repacked)\n"
               "  --nslots N           HDF5 model: hash slots (rdcc_nslots, default 521)\n"
               "  --w0 X               HDF5 model: preemption weight in [0,1] (rdcc_w0, default 0.75)\n"
               READER_OPTIONS
               "  --json               a JSON list of rows: cache_bytes, order, policy, chunk_samples, hits,\n"
               "                       misses, hit_rate...\n"
               "  --plot FILE          hit rate against cache size per order, policy and chunk (.svg or .png)\n"
               "  --plot-bytes FILE    bytes read against cache size, the same lines (.svg or .png)\n"
               "                       (both repeat: every file given is written, at most 8)\n");
}

void usage_options(FILE *f)
{
    fprintf(f, "usage: h5pack-stats options\n"
               "Prints one line per option that sets a reader parameter: FLAG, PARAM and CONVERSION, separated\n"
               "by tabs (e.g. --echo, echo, count). Values are checked against the library's parameter table\n"
               "(h5pack_param_table): its bounds and enum names, the same as h5pack_open's. Conversions:\n"
               "  flag    no value; sets the parameter to 1\n"
               "  plain   the number in the parameter's unit (digits; a decimal number for a real one)\n"
               "  count   digits, or with K/M/G/T (4K = 4096)\n"
               "  bytes   digits, or K/M/G/T with an optional B or iB (64M = 64 MiB)\n"
               "  name    one of the parameter's names ('-' may stand for '_')\n"
               "  text    a dataset or file name, as given\n"
               "  pair    A,B: the first parameter A, the second B, each plain (whole numbers also AxB, or N\n"
               "          for both)\n");
}

int usage_error(const char *cmd, const char *bad)
{
    if (bad)
        fprintf(stderr, "h5pack-stats %s: unexpected or incomplete argument '%s'\n", cmd, bad);
    else
        fprintf(stderr, "h5pack-stats %s: missing FILE\n", cmd);
    fprintf(stderr, "try: h5pack-stats %s --help\n", cmd);
    return 1;
}
