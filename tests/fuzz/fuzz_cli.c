/* fuzz_cli.c - libFuzzer target for the h5pack command line: arbitrary bytes become an argv (split at
 * newlines and NULs) for options_parse, and the whole input, as one string, goes through every value
 * parser (--size HxW, counts with the size rule, --compress gzip:L, --resize, --labels-sep) and the chunk rule.
 * Invariants checked: results in range, a message on every error, no crash or read past the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chunking.h"
#include "options.h"
#include "sizes.h"

#define MAX_ARGS 24

static void require(int cond)
{
    if (!cond)
        abort();
}

static void fuzz_value_parsers(const char *s)
{
    uint32_t h = 0, w = 0;
    uint64_t v = 0, k = 0;
    compress_kind kind = COMPRESS_NONE;
    int level = 0;
    resize_mode mode;
    if (parse_size_hw(s, &h, &w) == 0)
        require(h >= 1 && w >= 1 && h <= 65535 && w <= 65535);
    if (h5pack_parse_size(s, &v, NULL, 0) == H5PACK_SIZE_OK && v > 0) {
        chunk_choice c;
        char err[256] = "";
        uint64_t image_bytes = v % (1ull << 33) + 1, n = v % 997 + 1;
        for (uint64_t requested = 0; requested <= v % 1000 + 1; requested += v % 1000 + 1) { /* auto, --chunk K */
            err[0] = '\0';
            if (choose_chunk(image_bytes, n, v % 4096 + 1, requested, &c, err, sizeof err) == 0)
                require(c.images >= 1 && c.images <= n && c.images * image_bytes <= CHUNK_MAX_BYTES);
            else
                require(err[0] != '\0');
        }
    }
    uint64_t plain = 0;
    if (h5pack_parse_uint(s, &plain, NULL, 0) == 0) /* digits only: the size rule agrees */
        require(h5pack_parse_size(s, &k, NULL, 0) == H5PACK_SIZE_OK && k == plain);
    if (parse_compress(s, &kind, &level) == 0 && kind == COMPRESS_GZIP)
        require(level >= 1 && level <= 9);
    parse_resize(s, &mode);
    char sep = 0;
    if (parse_labels_sep(s, &sep) == 0)
        require(sep == ',' || sep == ';' || sep == '\t' || sep == ' ');
}

static void fuzz_argv(char *buf, size_t len)
{
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    argv[argc++] = "h5pack";
    char *start = buf;
    for (size_t i = 0; i <= len && argc < MAX_ARGS; i++)
        if (i == len || buf[i] == '\n' || buf[i] == '\0') {
            buf[i] = '\0';
            argv[argc++] = start;
            start = buf + i + 1;
        }
    argv[argc] = NULL;
    pack_options o = PACK_OPTIONS_DEFAULTS;
    char err[512] = "";
    options_result r = options_parse(argc, argv, &o, err, sizeof err);
    if (r == OPTIONS_ERROR)
        require(err[0] != '\0' && memchr(err, '\0', sizeof err) != NULL);
    if (r == OPTIONS_RUN) {
        require(o.src_dir != NULL && o.out_path != NULL);
        require(o.channels == 1 || o.channels == 3);
        require(o.batch >= 1 && o.max_pixels >= 1 && o.threads >= 0);
        require(o.compress == COMPRESS_NONE || (o.gzip_level >= 1 && o.gzip_level <= 9));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    fuzz_value_parsers(s);
    fuzz_argv(s, size); /* modifies s: last */
    free(s);
    return 0;
}
