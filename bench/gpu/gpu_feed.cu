// gpu_feed.cu - does the reader keep a GPU busy? A training loop reduced to its shape, through the public
// API only (include/h5pack.h): open FILE on the CUDA backend with the consumer's own stream, and per
// delivered batch enqueue one "training step" kernel on that stream, then release the batch.
//
//   gpu_feed FILE [--batch N] [--threads T] [--cache SIZE] [--echo E] [--epochs E] [--work-us US]
//                 [--prefetch P] [--crop random_resized|center] [--output-size N] [--flip]
//
// --work-us 0 (default): the step kernel only reads the batch (a checksum), so the loop runs at the
// reader's top speed: `samples_per_s` (wall time from the first delivery to the last batch's completion
// on the GPU). --work-us US: each step keeps every SM busy for US microseconds (one block per SM, so the
// reader's conversion kernel can still run beside it, as it does beside a real model's kernels), and
// the GPU timeline of the consumer's stream is measured with events around each step: `gpu_idle_fraction`
// is the share of the time from the first step's start to the last step's end in which no step ran;
// `gpu_idle_warmup_s`, `gpu_idle_epoch_start_s` and `gpu_idle_other_s` say where that time lies (before
// step 16, while the ring fills; before the first step of a later epoch; elsewhere), with the largest
// gaps as `us@step` and the share without the warm-up (`gpu_idle_fraction_after_warmup`).
// Device memory in use (cudaMemGetInfo) and host RSS are read at the start of every epoch and after the
// last: `device_mem_growth_bytes` and `host_rss_growth_bytes` compare the end of epoch 1 with the end of
// the run, `*_by_epoch_mb` list every reading (a one-time growth and a leak look different there). The reader's own stats follow (hit rate, read
// amplification, stall fraction). Every line is `key: value`. Exit 77 with "skipped: no GPU" without one.
#include <cuda_runtime.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <utility>
#include <vector>

#include "h5pack.h"

#define CUDA_OR_DIE(call)                                                                      \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "gpu_feed: %s: %s\n", #call, cudaGetErrorString(e_));              \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

struct feed_opts {
    const char *path;
    size_t batch, cache;
    int threads, prefetch;
    unsigned echo;
    uint64_t epochs;
    double work_us;
    h5pack_crop crop;
    uint32_t output_size;
    int flip;
};

// One training step's stand-in: every thread reads a strided part of the batch (so the step depends on
// the delivered bytes), then spins until US microseconds have passed since the block started.
__global__ void step_kernel(const uint8_t *data, size_t bytes, double us, unsigned long long *sink)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    unsigned long long acc = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x * 64;
    for (size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * 64; i < bytes; i += stride)
        acc += data[i];
    unsigned long long until = t0 + (unsigned long long)(us * 1000.0);
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t < until);
    if (acc == 0x5eed5eed5eedULL) // never true in practice: keeps the reads alive
        atomicAdd(sink, acc);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long long rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%lld %lld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * 4096;
}

// RssAnon (the process's own memory) or RssFile (mapped file pages: the reader's zero-copy path maps
// the file, and the chunks its cache holds stay resident) from /proc/self/status, in bytes.
static long long rss_part_bytes(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kb = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && line[n] == ':')
            kb = atoll(line + n + 1);
    if (f)
        fclose(f);
    return kb < 0 ? 0 : kb * 1024;
}

// Bytes malloc has handed out and not taken back (arena + mmapped blocks): whether RssAnon's growth is the
// heap's (a leak, or blocks kept) or memory mapped by someone else (the CUDA driver).
static long long malloc_in_use_bytes(void)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    struct mallinfo mi = mallinfo(); // int fields: fine below 2 GiB, which this process stays under
#pragma GCC diagnostic pop
    return (long long)(unsigned)mi.uordblks + (long long)(unsigned)mi.hblkhd;
}

static long long device_used_bytes(void)
{
    size_t free_b = 0, total_b = 0;
    CUDA_OR_DIE(cudaMemGetInfo(&free_b, &total_b));
    return (long long)(total_b - free_b);
}

static size_t parse_bytes(const char *v)
{
    char *end = NULL;
    double x = strtod(v, &end);
    switch (end && *end ? *end : 0) {
    case 'k': case 'K': x *= 1024.0; break;
    case 'm': case 'M': x *= 1048576.0; break;
    case 'g': case 'G': x *= 1073741824.0; break;
    default: break;
    }
    return (size_t)x;
}

static int parse_args(int argc, char **argv, feed_opts &o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-' && !o.path)
            o.path = a;
        else if (!strcmp(a, "--flip"))
            o.flip = 1;
        else if (!v)
            return 1;
        else if (!strcmp(a, "--batch"))
            o.batch = (size_t)atoll(v), i++;
        else if (!strcmp(a, "--threads"))
            o.threads = atoi(v), i++;
        else if (!strcmp(a, "--cache"))
            o.cache = parse_bytes(v), i++;
        else if (!strcmp(a, "--prefetch"))
            o.prefetch = atoi(v), i++;
        else if (!strcmp(a, "--echo"))
            o.echo = (unsigned)atoi(v), i++;
        else if (!strcmp(a, "--epochs"))
            o.epochs = (uint64_t)atoll(v), i++;
        else if (!strcmp(a, "--work-us"))
            o.work_us = atof(v), i++;
        else if (!strcmp(a, "--output-size"))
            o.output_size = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--crop")) {
            o.crop = !strcmp(v, "center") ? H5PACK_CROP_CENTER : H5PACK_CROP_RANDOM_RESIZED, i++;
        } else
            return 1;
    }
    return o.path && o.batch > 0 && o.echo > 0 && o.epochs > 0 ? 0 : 1;
}

// The consumer's view of one run.
struct feed_result {
    double wall_s, busy_s, span_s;
    // where the consumer's stream idled (the gaps between one step's end and the next one's start):
    // before step WARMUP_STEPS (the ring filling), before the first step of a later epoch, elsewhere
    double idle_warmup_s, idle_epoch_start_s, idle_other_s, warmup_span_s;
    std::vector<std::pair<double, size_t>> largest_gaps; // (seconds, step), largest first
    uint64_t samples;
    std::vector<long long> dev_at, rss_at; // at the start of epochs 1, 2, ... and after the last
    std::vector<long long> anon_at, file_at; // rss_at's two parts
    std::vector<long long> heap_at;          // malloc's bytes in use
    h5pack_stats stats;
};

enum { WARMUP_STEPS = 16, LARGEST_GAPS = 5 };

static double elapsed_s(cudaEvent_t from, cudaEvent_t to)
{
    float ms = 0;
    CUDA_OR_DIE(cudaEventElapsedTime(&ms, from, to));
    return ms * 1e-3;
}

// The consumer's busy time, span and idle gaps from the events around each step (EPOCH_OF: each step's epoch).
static void measure_steps(const std::vector<cudaEvent_t> &starts, const std::vector<cudaEvent_t> &ends,
                          const std::vector<uint64_t> &epoch_of, feed_result &res)
{
    res.busy_s = res.span_s = res.idle_warmup_s = res.idle_epoch_start_s = res.idle_other_s = res.warmup_span_s = 0;
    res.largest_gaps.clear();
    if (starts.empty())
        return;
    for (size_t i = 0; i < starts.size(); i++) {
        res.busy_s += elapsed_s(starts[i], ends[i]);
        if (i == 0)
            continue;
        double gap = std::max(0.0, elapsed_s(ends[i - 1], starts[i]));
        if (i < WARMUP_STEPS)
            res.idle_warmup_s += gap;
        else if (epoch_of[i] != epoch_of[i - 1])
            res.idle_epoch_start_s += gap;
        else
            res.idle_other_s += gap;
        res.largest_gaps.push_back(std::make_pair(gap, i));
    }
    std::sort(res.largest_gaps.begin(), res.largest_gaps.end(), std::greater<std::pair<double, size_t>>());
    if (res.largest_gaps.size() > LARGEST_GAPS)
        res.largest_gaps.resize(LARGEST_GAPS);
    res.span_s = elapsed_s(starts.front(), ends.back());
    size_t w = std::min<size_t>(WARMUP_STEPS, starts.size()) - 1;
    res.warmup_span_s = elapsed_s(starts.front(), starts[w]);
}

static void print_idle(const feed_result &res)
{
    printf("consumer_busy_s: %.4f\n", res.busy_s);
    printf("consumer_span_s: %.4f\n", res.span_s);
    printf("gpu_idle_fraction: %.4f\n", res.span_s > 0 ? 1.0 - res.busy_s / res.span_s : 1.0);
    printf("gpu_idle_warmup_s: %.5f\n", res.idle_warmup_s);
    printf("gpu_idle_epoch_start_s: %.5f\n", res.idle_epoch_start_s);
    printf("gpu_idle_other_s: %.5f\n", res.idle_other_s);
    double rest = res.span_s - res.warmup_span_s;
    printf("gpu_idle_fraction_after_warmup: %.4f\n",
           rest > 0 ? (res.idle_epoch_start_s + res.idle_other_s) / rest : 0.0);
    printf("gpu_idle_largest_gaps_us:");
    for (const auto &g : res.largest_gaps)
        printf(" %.0f@%zu", g.first * 1e6, g.second);
    printf("\n");
}

static void note_memory(feed_result &res)
{
    res.dev_at.push_back(device_used_bytes()), res.rss_at.push_back(rss_bytes());
    res.anon_at.push_back(rss_part_bytes("RssAnon")), res.file_at.push_back(rss_part_bytes("RssFile"));
    res.heap_at.push_back(malloc_in_use_bytes());
}

static void print_mb_list(const char *key, const std::vector<long long> &v)
{
    printf("%s:", key);
    for (long long x : v)
        printf(" %.1f", x / 1048576.0);
    printf("\n");
}

static int run_feed(const feed_opts &o, cudaStream_t stream, feed_result &res)
{
    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
    cfg.batch_size = o.batch, cfg.threads = o.threads, cfg.echo = o.echo, cfg.epochs = o.epochs;
    if (o.prefetch)
        cfg.prefetch = o.prefetch;
    if (o.cache)
        cfg.cache_bytes = o.cache;
    cfg.device = H5PACK_DEVICE_CUDA, cfg.cuda_stream = stream;
    cfg.crop = o.crop, cfg.output_height = cfg.output_width = o.output_size, cfg.random_flip = o.flip;
    h5pack_reader *r = NULL;
    if (h5pack_open(o.path, &cfg, &r) != H5PACK_OK) {
        fprintf(stderr, "gpu_feed: %s\n", h5pack_last_error(r));
        h5pack_close(r);
        return 1;
    }
    int sms = 0;
    CUDA_OR_DIE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    unsigned long long *sink = NULL;
    CUDA_OR_DIE(cudaMalloc(&sink, sizeof *sink));
    std::vector<cudaEvent_t> starts, ends;
    std::vector<uint64_t> epoch_of;
    h5pack_batch b = H5PACK_BATCH_INIT;
    uint64_t epoch_seen = 0;
    double t0 = 0;
    int rc;
    res.wall_s = res.busy_s = res.span_s = 0, res.samples = 0;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        if (res.samples == 0)
            t0 = now_s();
        if (b.epoch != epoch_seen) { // epoch b.epoch - 1 fully delivered
            note_memory(res);
            epoch_seen = b.epoch;
        }
        cudaEvent_t e0 = NULL, e1 = NULL;
        if (o.work_us > 0) {
            CUDA_OR_DIE(cudaEventCreate(&e0));
            CUDA_OR_DIE(cudaEventCreate(&e1));
            CUDA_OR_DIE(cudaEventRecord(e0, stream));
        }
        step_kernel<<<sms, 128, 0, stream>>>((const uint8_t *)b.data, b.bytes, o.work_us, sink);
        CUDA_OR_DIE(cudaGetLastError());
        if (o.work_us > 0) {
            CUDA_OR_DIE(cudaEventRecord(e1, stream));
            starts.push_back(e0), ends.push_back(e1), epoch_of.push_back(b.epoch);
        }
        res.samples += b.count;
        if (h5pack_release(r, &b) != H5PACK_OK) {
            fprintf(stderr, "gpu_feed: release: %s\n", h5pack_last_error(r));
            h5pack_close(r);
            return 1;
        }
    }
    CUDA_OR_DIE(cudaStreamSynchronize(stream));
    res.wall_s = now_s() - t0;
    if (rc != H5PACK_END) {
        fprintf(stderr, "gpu_feed: next: %s\n", h5pack_last_error(r));
        h5pack_close(r);
        return 1;
    }
    note_memory(res);
    res.stats = H5PACK_STATS_INIT;
    h5pack_stats_get(r, &res.stats);
    measure_steps(starts, ends, epoch_of, res);
    for (size_t i = 0; i < starts.size(); i++)
        cudaEventDestroy(starts[i]), cudaEventDestroy(ends[i]);
    cudaFree(sink);
    h5pack_close(r);
    return 0;
}

int main(int argc, char **argv)
{
    feed_opts o = {NULL, 256, 0, 0, 0, 1, 2, 0.0, H5PACK_CROP_NONE, 0, 0};
    if (parse_args(argc, argv, o)) {
        fprintf(stderr, "usage: gpu_feed FILE [--batch N] [--threads T] [--cache SIZE] [--echo E] [--epochs E] "
                        "[--work-us US] [--prefetch P] [--crop random_resized|center] [--output-size N] [--flip]\n");
        return 1;
    }
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        printf("skipped: no GPU\n");
        return 77;
    }
    cudaStream_t stream;
    CUDA_OR_DIE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    feed_result res;
    if (run_feed(o, stream, res))
        return 1;
    const h5pack_stats &s = res.stats;
    printf("samples: %llu\n", (unsigned long long)res.samples);
    printf("epochs: %llu\n", (unsigned long long)o.epochs);
    printf("echo: %u\n", o.echo);
    printf("work_us_per_batch: %.0f\n", o.work_us);
    printf("prefetch: %d\n", o.prefetch ? o.prefetch : 4);
    printf("samples_per_s: %.0f\n", res.samples / res.wall_s);
    if (o.work_us > 0)
        print_idle(res);
    if (res.rss_at.size() > 1) {
        printf("device_mem_growth_bytes: %lld\n", res.dev_at.back() - res.dev_at.front());
        printf("host_rss_growth_bytes: %lld\n", res.rss_at.back() - res.rss_at.front());
        printf("host_rss_anon_growth_bytes: %lld\n", res.anon_at.back() - res.anon_at.front());
        print_mb_list("device_mem_by_epoch_mb", res.dev_at);
        print_mb_list("host_rss_by_epoch_mb", res.rss_at);
        print_mb_list("host_rss_anon_by_epoch_mb", res.anon_at);
        print_mb_list("host_rss_file_by_epoch_mb", res.file_at);
        print_mb_list("host_malloc_in_use_by_epoch_mb", res.heap_at);
        printf("host_malloc_in_use_growth_bytes: %lld\n", res.heap_at.back() - res.heap_at.front());
    }
    printf("hit_rate: %.4f\n", s.hit_rate);
    printf("read_amplification: %.4f\n", s.read_amplification);
    printf("stall_fraction: %.4f\n", res.wall_s > 0 ? s.stall_s / res.wall_s : 0.0);
    printf("busy_copy_s: %.3f\n", s.busy_copy_s);
    printf("busy_convert_s: %.3f\n", s.busy_convert_s);
    printf("device_bytes: %llu\n", (unsigned long long)s.device_bytes);
    cudaStreamDestroy(stream);
    return 0;
}
