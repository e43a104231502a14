/* decode_only.c - the converter benchmark's baseline: read and decode every JPEG under DIR with
 * libjpeg-turbo (tjDecompress2 to RGB at full size), nothing else, on THREADS threads. Prints one line:
 *   decode-only: N images in S s = R images/s (T threads)
 * Usage: bench_convert_decode DIR [THREADS] [--scaled S]   (THREADS default: all cores)
 * --scaled S: decode with the smallest DCT scale M/8 that keeps both sides >= S, as the converter does
 * for --size SxS --resize crop: the decode work the converter itself cannot avoid. */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <unistd.h>

#include "clock.h"

typedef struct file_list {
    char **paths;
    size_t count, cap;
} file_list;

typedef struct shared {
    file_list *files;
    int scaled_to; /* 0 = full size */
    atomic_size_t next;
    atomic_int failures;
} shared;

static int is_jpeg_name(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0);
}

static void collect(const char *dir, file_list *l)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            collect(path, l);
        } else if (is_jpeg_name(e->d_name)) {
            if (l->count == l->cap) {
                l->cap = l->cap ? 2 * l->cap : 1024;
                l->paths = realloc(l->paths, l->cap * sizeof *l->paths);
            }
            l->paths[l->count++] = strdup(path);
        }
    }
    closedir(d);
}

/* The smallest scale M/8 whose output keeps both sides >= S (full size when S = 0). */
static tjscalingfactor scale_for(int w, int h, int s)
{
    tjscalingfactor best = {1, 1};
    int n = 0;
    const tjscalingfactor *sf = tjGetScalingFactors(&n);
    for (int i = 0; s > 0 && sf && i < n; i++)
        if (sf[i].num <= sf[i].denom && TJSCALED(w, sf[i]) >= s && TJSCALED(h, sf[i]) >= s &&
            TJSCALED(w, sf[i]) < TJSCALED(w, best))
            best = sf[i];
    return best;
}

static int decode_file(tjhandle tj, const char *path, int scaled_to, unsigned char **pixels, size_t *cap)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)size);
    int ok = data && fread(data, 1, (size_t)size, f) == (size_t)size;
    fclose(f);
    int w, h, sub, cs, rc = -1;
    if (ok && tjDecompressHeader3(tj, data, (unsigned long)size, &w, &h, &sub, &cs) == 0) {
        tjscalingfactor sf = scale_for(w, h, scaled_to);
        w = TJSCALED(w, sf);
        h = TJSCALED(h, sf);
        size_t need = (size_t)w * h * 3;
        if (need > *cap) {
            free(*pixels);
            *pixels = malloc(need);
            *cap = need;
        }
        rc = tjDecompress2(tj, data, (unsigned long)size, *pixels, w, 0, h, TJPF_RGB, 0) == 0 ? 0 : -1;
    }
    free(data);
    return rc;
}

static void *worker(void *arg)
{
    shared *s = arg;
    tjhandle tj = tjInitDecompress();
    unsigned char *pixels = NULL;
    size_t cap = 0, i;
    while ((i = atomic_fetch_add(&s->next, 1)) < s->files->count)
        if (decode_file(tj, s->files->paths[i], s->scaled_to, &pixels, &cap) != 0)
            atomic_fetch_add(&s->failures, 1);
    free(pixels);
    tjDestroy(tj);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_convert_decode DIR [THREADS] [--scaled S]\n");
        return 1;
    }
    int threads = argc > 2 ? atoi(argv[2]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    int scaled_to = argc > 4 && strcmp(argv[3], "--scaled") == 0 ? atoi(argv[4]) : 0;
    if (threads < 1)
        threads = 1;
    file_list files = {0};
    collect(argv[1], &files);
    if (files.count == 0) {
        fprintf(stderr, "%s: no JPEG files\n", argv[1]);
        return 1;
    }
    shared s = {&files, scaled_to, 0, 0};
    pthread_t tid[256];
    if (threads > 256)
        threads = 256;
    double t0 = h5pack_clock_s();
    for (int i = 0; i < threads; i++)
        pthread_create(&tid[i], NULL, worker, &s);
    for (int i = 0; i < threads; i++)
        pthread_join(tid[i], NULL);
    double dt = h5pack_clock_s() - t0;
    printf("decode-only%s: %zu images in %.3f s = %.1f images/s (%d threads, %d failures)\n",
           scaled_to ? " (DCT-scaled)" : "", files.count, dt, files.count / dt, threads, atomic_load(&s.failures));
    for (size_t i = 0; i < files.count; i++)
        free(files.paths[i]);
    free(files.paths);
    return atomic_load(&s.failures) ? 1 : 0;
}
