/* replay - plain driver for the fuzz targets: runs LLVMFuzzerTestOneInput on every file given, and on
 * every file (recursively, in sorted order) of every directory given. Used by ctest on each run to replay
 * the saved corpus and reproducers without libFuzzer or clang. Exit 0 when every input ran; 1 when an
 * input could not be read or nothing was found (a missing corpus must not pass silently). A crash or an
 * abort() of the target ends the run with the input's name printed just before. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path, size_t *count)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 65536;
            uint8_t *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                fprintf(stderr, "replay: out of memory reading %s\n", path);
                return -1;
            }
            buf = nb;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        fprintf(stderr, "replay: read error on %s\n", path);
        return -1;
    }
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    (*count)++;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path, size_t *count);

static int run_dir(const char *path, size_t *count)
{
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "replay: cannot open directory %s: %s\n", path, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue; /* ., .. and hidden files such as .gitkeep */
        char **nn = realloc(names, (n + 1) * sizeof *names);
        if (!nn || !(nn[n] = strdup(e->d_name))) {
            names = nn ? nn : names;
            rc = -1;
            break;
        }
        names = nn;
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", path, names[i]);
        if (rc == 0 && run_path(child, count) != 0)
            rc = -1;
        free(names[i]);
    }
    free(names);
    return rc;
}

static int run_path(const char *path, size_t *count)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    return S_ISDIR(sb.st_mode) ? run_dir(path, count) : run_file(path, count);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
        return 1;
    }
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    size_t count = 0;
    int rc = 0;
    for (int i = 1; i < argc; i++)
        if (run_path(argv[i], &count) != 0)
            rc = 1;
    printf("replayed %zu inputs\n", count);
    if (count == 0) {
        fprintf(stderr, "replay: no inputs found\n");
        return 1;
    }
    return rc;
}
