/* test_reader_strings.c - h5pack_read_strings (include/h5pack.h, "a file's names") on string datasets
 * written here with HDF5: variable-length UTF-8 and ASCII, fixed-length NUL-terminated, NUL-padded and
 * space-padded (padding stripped), in the latest file format (h5pack's) and HDF5's default one (h5py's),
 * through a plain path and through mem://; windows of rows across the read blocks; the two-call size
 * protocol (nothing written past OUT_LEN); the errors (missing file or dataset, not a 1-D string dataset,
 * START past the end, not HDF5, truncated files); flipped bytes give an error or a clean read, never a
 * crash. Files of the converter against h5py: strings_h5py.py. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

/* HDF5 1.10.8 leaks internal structures when it meets damaged metadata (test_reader_damaged.c): only
 * those stacks, inside libhdf5, are ignored. */
const char *__lsan_default_suppressions(void);
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void)
{
    return "leak:libhdf5\n";
}

#define N_NAMES 10000u /* crosses the library's blocks of 4096 rows twice */
#define N_FIXED 5000u
#define FIXED_BIG 40

/* Row I of "filenames": lengths vary, some rows are empty, some hold multi-byte UTF-8 and \xNN escapes
 * (what the converter writes for bytes that are not UTF-8). */
static void name_of(uint64_t i, char *buf, size_t len)
{
    if (i % 97 == 5)
        buf[0] = '\0';
    else if (i % 13 == 0)
        snprintf(buf, len, "class_%02u/caf\xc3\xa9_%llu\xe6\x97\xa5.jpg", (unsigned)(i % 7), (unsigned long long)i);
    else if (i % 31 == 0)
        snprintf(buf, len, "class_%02u/bad\\xFF\\xFE_%llu.png", (unsigned)(i % 7), (unsigned long long)i);
    else
        snprintf(buf, len, "class_%02u/%.*simg_%llu.jpg", (unsigned)(i % 7), (int)(i % 11), "xxxxxxxxxxx",
                 (unsigned long long)i);
}

static void fixed_big_of(uint64_t i, char *buf)
{
    memset(buf, 0, FIXED_BIG);
    snprintf(buf, FIXED_BIG, "%0*llu", (int)(i % FIXED_BIG), (unsigned long long)i); /* 0..39 chars */
}

static const char *const ascii_rows[] = {"cat", "dog", "", "bird with a long name", "x"};
/* fixed-length 6: stored bytes, and what is read back */
static const char fixed_nullpad_raw[][6] = {"a", {'a', 'b', 'c', 'd', 'e', 'f'}, "", "xyz"};
static const char *const fixed_nullpad_rows[] = {"a", "abcdef", "", "xyz"};
static const char fixed_nullterm_raw[][6] = {"abcde", "a", ""};
static const char *const fixed_nullterm_rows[] = {"abcde", "a", ""};
static const char fixed_space_raw[][6] = {{'a', 'b', ' ', ' ', ' ', ' '}, {'a', 'b', 'c', 'd', 'e', 'f'},
                                          {' ', ' ', ' ', ' ', ' ', ' '}, {' ', 'x', ' ', 'y', ' ', ' '}};
static const char *const fixed_space_rows[] = {"ab", "abcdef", "", " x y"};
static const char *const inner_rows[] = {"p", "q"};

static hid_t str_type(int vlen, size_t size, H5T_cset_t cset, H5T_str_t pad)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    CHECK(t >= 0);
    CHECK(H5Tset_size(t, vlen ? H5T_VARIABLE : size) >= 0);
    CHECK(H5Tset_cset(t, cset) >= 0);
    CHECK(H5Tset_strpad(t, pad) >= 0);
    return t;
}

static void write_ds(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims, const void *data)
{
    hid_t space = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t d = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(space >= 0 && d >= 0);
    if (data)
        CHECK(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    H5Dclose(d);
    H5Sclose(space);
}

/* Every dataset the checks read ("filenames" of N_NAMES rows, "fixed_big" of N_FIXED). LATEST: h5pack's
 * file format (superblock 3), else HDF5's default (0). IMAGES: also a small "images" dataset, as in an
 * h5pack file. */
static void write_file(const char *path, int latest, int images, uint64_t n_names, uint64_t n_fixed)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (latest)
        CHECK(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) >= 0);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(f >= 0);
    H5Pclose(fapl);

    hid_t utf8 = str_type(1, 0, H5T_CSET_UTF8, H5T_STR_NULLTERM);
    char (*names)[64] = malloc(n_names * sizeof *names);
    const char **ptrs = malloc(n_names * sizeof *ptrs);
    CHECK(names && ptrs);
    for (uint64_t i = 0; i < n_names; i++) {
        name_of(i, names[i], sizeof names[i]);
        ptrs[i] = names[i];
    }
    hsize_t n = n_names;
    write_ds(f, "filenames", utf8, 1, &n, ptrs);
    free(names);
    free(ptrs);

    hid_t ascii = str_type(1, 0, H5T_CSET_ASCII, H5T_STR_NULLTERM);
    n = sizeof ascii_rows / sizeof *ascii_rows;
    write_ds(f, "vlen_ascii", ascii, 1, &n, ascii_rows);

    hid_t t = str_type(0, 6, H5T_CSET_ASCII, H5T_STR_NULLPAD);
    n = sizeof fixed_nullpad_raw / sizeof *fixed_nullpad_raw;
    write_ds(f, "fixed_nullpad", t, 1, &n, fixed_nullpad_raw);
    H5Tclose(t);
    t = str_type(0, 6, H5T_CSET_UTF8, H5T_STR_NULLTERM);
    n = sizeof fixed_nullterm_raw / sizeof *fixed_nullterm_raw;
    write_ds(f, "fixed_nullterm", t, 1, &n, fixed_nullterm_raw);
    H5Tclose(t);
    t = str_type(0, 6, H5T_CSET_ASCII, H5T_STR_SPACEPAD);
    n = sizeof fixed_space_raw / sizeof *fixed_space_raw;
    write_ds(f, "fixed_space", t, 1, &n, fixed_space_raw);
    H5Tclose(t);

    char *big = malloc((size_t)n_fixed * FIXED_BIG);
    CHECK(big);
    for (uint64_t i = 0; i < n_fixed; i++)
        fixed_big_of(i, big + i * FIXED_BIG);
    t = str_type(0, FIXED_BIG, H5T_CSET_ASCII, H5T_STR_NULLPAD);
    n = n_fixed;
    write_ds(f, "fixed_big", t, 1, &n, big);
    H5Tclose(t);
    free(big);

    const uint8_t numbers[4] = {1, 2, 3, 4};
    n = 4;
    write_ds(f, "numbers", H5T_NATIVE_UINT8, 1, &n, numbers);
    const char *grid[6] = {"a", "b", "c", "d", "e", "f"};
    hsize_t dims2[2] = {3, 2};
    write_ds(f, "grid", utf8, 2, dims2, grid);
    const char *one = "alone";
    write_ds(f, "scalar", utf8, 0, NULL, &one);
    hsize_t zero = 0;
    write_ds(f, "empty", utf8, 1, &zero, NULL);
    hid_t g = H5Gcreate2(f, "group", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(g >= 0);
    n = 2;
    write_ds(g, "inner", utf8, 1, &n, inner_rows);
    H5Gclose(g);
    if (images) {
        uint8_t pixels[4 * 2 * 2 * 3] = {0};
        hsize_t idims[4] = {4, 3, 2, 2};
        write_ds(f, "images", H5T_NATIVE_UINT8, 4, idims, pixels);
    }
    H5Tclose(utf8);
    H5Tclose(ascii);
    CHECK(H5Fclose(f) >= 0);
}

/* The rows [START, START + COUNT) of LIST joined with their NULs; *LEN its bytes. */
static char *joined(const char *const *list, uint64_t start, uint64_t count, size_t *len)
{
    size_t total = 0;
    for (uint64_t i = start; i < start + count; i++)
        total += strlen(list[i]) + 1;
    char *out = malloc(total + 1), *p = out;
    CHECK(out);
    for (uint64_t i = start; i < start + count; i++) {
        size_t l = strlen(list[i]) + 1;
        memcpy(p, list[i], l);
        p += l;
    }
    *len = total;
    return out;
}

/* The two-call protocol: sizes first, then exactly that buffer (with guard bytes after it that must stay
 * untouched). Checks *ROWS and returns the bytes (*LEN of them). */
static char *read_rows(const char *path, const char *ds, uint64_t start, uint64_t count, uint64_t want_rows,
                       size_t *len)
{
    char err[512];
    uint64_t rows = 12345;
    size_t needed = 12345;
    int rc = h5pack_read_strings(path, ds, start, count, NULL, 0, &rows, &needed, err, sizeof err);
    CHECK_MSG(rc == H5PACK_OK, "%s %s [%llu, +%llu): rc %d: %s", path, ds, (unsigned long long)start,
              (unsigned long long)count, rc, err);
    CHECK_EQ_U64(rows, want_rows);
    char *buf = malloc(needed + 16);
    CHECK(buf);
    memset(buf, 0x7e, needed + 16);
    size_t again = 0;
    rows = 0;
    rc = h5pack_read_strings(path, ds, start, count, buf, needed, &rows, &again, err, sizeof err);
    CHECK_MSG(rc == H5PACK_OK, "%s %s: second call rc %d: %s", path, ds, rc, err);
    CHECK_EQ_U64(rows, want_rows);
    CHECK_EQ_U64(again, needed);
    for (int i = 0; i < 16; i++)
        CHECK_MSG((unsigned char)buf[needed + i] == 0x7e, "%s %s: byte %zu past OUT_LEN written", path, ds,
                  needed + (size_t)i);
    CHECK(needed == 0 || buf[needed - 1] == '\0');
    *len = needed;
    return buf;
}

static void check_rows(const char *path, const char *ds, const char *const *list, uint64_t n, uint64_t start,
                       uint64_t count)
{
    uint64_t end = count == UINT64_MAX || count > n - start ? n : start + count;
    size_t want_len = 0, got_len = 0;
    char *want = joined(list, start, end - start, &want_len);
    char *got = read_rows(path, ds, start, count, n, &got_len);
    CHECK_MSG(got_len == want_len && memcmp(got, want, want_len) == 0,
              "%s %s [%llu, +%llu): %zu bytes read, %zu expected", path, ds, (unsigned long long)start,
              (unsigned long long)count, got_len, want_len);
    free(want);
    free(got);
}

static const char **name_list(void)
{
    static char names[N_NAMES][64];
    static const char *list[N_NAMES];
    for (uint64_t i = 0; i < N_NAMES; i++) {
        name_of(i, names[i], sizeof names[i]);
        list[i] = names[i];
    }
    return list;
}

static const char **fixed_big_list(void)
{
    static char rows[N_FIXED][FIXED_BIG + 1];
    static const char *list[N_FIXED];
    for (uint64_t i = 0; i < N_FIXED; i++) {
        fixed_big_of(i, rows[i]);
        rows[i][FIXED_BIG] = '\0';
        list[i] = rows[i];
    }
    return list;
}

#define ROWS_OF(a) (sizeof(a) / sizeof *(a))

/* Every dataset whole, and windows of rows. */
static void test_contents(const char *path)
{
    const char **names = name_list(), **big = fixed_big_list();
    check_rows(path, "filenames", names, N_NAMES, 0, UINT64_MAX);
    check_rows(path, "vlen_ascii", ascii_rows, ROWS_OF(ascii_rows), 0, UINT64_MAX);
    check_rows(path, "fixed_nullpad", fixed_nullpad_rows, ROWS_OF(fixed_nullpad_rows), 0, UINT64_MAX);
    check_rows(path, "fixed_nullterm", fixed_nullterm_rows, ROWS_OF(fixed_nullterm_rows), 0, UINT64_MAX);
    check_rows(path, "fixed_space", fixed_space_rows, ROWS_OF(fixed_space_rows), 0, UINT64_MAX);
    check_rows(path, "fixed_big", big, N_FIXED, 0, UINT64_MAX);
    check_rows(path, "group/inner", inner_rows, 2, 0, UINT64_MAX);
    check_rows(path, "/group/inner", inner_rows, 2, 1, 1);
    check_rows(path, "empty", NULL, 0, 0, UINT64_MAX);
    check_rows(path, "empty", NULL, 0, 0, 0);

    static const uint64_t windows[][2] = {{0, 0},     {0, 1},          {1, 2},       {4095, 2},     {4090, 20},
                                          {4096, 4096}, {8000, 1500},  {3, 9000},    {9999, 1},     {9999, UINT64_MAX},
                                          {5, 100000}, {N_NAMES, 0},   {N_NAMES, UINT64_MAX}, {17, 0}};
    for (size_t w = 0; w < ROWS_OF(windows); w++) {
        check_rows(path, "filenames", names, N_NAMES, windows[w][0], windows[w][1]);
        if (windows[w][0] <= N_FIXED)
            check_rows(path, "fixed_big", big, N_FIXED, windows[w][0], windows[w][1]);
    }
    check_rows(path, "fixed_space", fixed_space_rows, ROWS_OF(fixed_space_rows), 2, 2);
    check_rows(path, "fixed_space", fixed_space_rows, ROWS_OF(fixed_space_rows), 4, UINT64_MAX);
}

/* The size protocol: OK with OUT NULL or too small, *NEEDED the same every time, nothing written past
 * OUT_LEN; START == rows gives needed 0. */
static void test_sizes(const char *path)
{
    char err[512];
    uint64_t rows = 0;
    size_t needed = 0, want = 0;
    const char *const three[] = {"cat", "dog", ""};
    free(joined(three, 0, 3, &want));
    CHECK_OK(h5pack_read_strings(path, "vlen_ascii", 0, 3, NULL, 0, &rows, &needed, err, sizeof err));
    CHECK_EQ_U64(rows, 5);
    CHECK_EQ_U64(needed, want); /* "cat\0dog\0\0": the NULs counted */
    CHECK_EQ_U64(needed, 9);
    for (size_t len = 0; len <= want; len++) {
        char buf[32];
        memset(buf, 0x7e, sizeof buf);
        size_t got = 0;
        CHECK_OK(h5pack_read_strings(path, "vlen_ascii", 0, 3, buf, len, &rows, &got, err, sizeof err));
        CHECK_EQ_U64(got, want);
        for (size_t i = len; i < sizeof buf; i++)
            CHECK_MSG((unsigned char)buf[i] == 0x7e, "OUT_LEN %zu: byte %zu written", len, i);
        if (len == want)
            CHECK(memcmp(buf, "cat\0dog\0", 9) == 0);
    }
    /* OUT given with OUT_LEN 0; ERR NULL */
    char one;
    CHECK_OK(h5pack_read_strings(path, "filenames", 0, UINT64_MAX, &one, 0, &rows, &needed, NULL, 0));
    CHECK_EQ_U64(rows, N_NAMES);
    CHECK(needed > N_NAMES);
    needed = 77;
    CHECK_OK(h5pack_read_strings(path, "filenames", N_NAMES, 0, NULL, 0, &rows, &needed, err, sizeof err));
    CHECK_EQ_U64(needed, 0);
    needed = 77;
    CHECK_OK(h5pack_read_strings(path, "filenames", N_NAMES, UINT64_MAX, NULL, 0, &rows, &needed, err, sizeof err));
    CHECK_EQ_U64(needed, 0);
    CHECK_EQ_U64(rows, N_NAMES);
}

static void expect_error(const char *path, const char *ds, uint64_t start, uint64_t count, int code,
                         const char *mention1, const char *mention2)
{
    char err[1024] = "untouched";
    uint64_t rows = 0;
    size_t needed = 0;
    char out[64];
    int rc = h5pack_read_strings(path, ds, start, count, out, sizeof out, &rows, &needed, err, sizeof err);
    CHECK_MSG(rc == code, "%s %s: rc %d (%s), expected %d", path ? path : "(null)", ds ? ds : "(null)", rc, err, code);
    if (mention1)
        CHECK_STR_CONTAINS(err, mention1);
    if (mention2)
        CHECK_STR_CONTAINS(err, mention2);
    /* ERR may be NULL */
    CHECK_EQ_INT(h5pack_read_strings(path, ds, start, count, NULL, 0, &rows, &needed, NULL, 0), code);
}

static void test_errors(const char *path, const char *dir)
{
    char missing[600], text[600], folder[600];
    snprintf(missing, sizeof missing, "%s/no_such_file.h5", dir);
    expect_error(missing, "filenames", 0, UINT64_MAX, H5PACK_ENOTFOUND, missing, NULL);
    expect_error(path, "classes", 0, UINT64_MAX, H5PACK_ENOTFOUND, path, "no dataset \"classes\"");
    expect_error(path, "nogroup/x", 0, UINT64_MAX, H5PACK_ENOTFOUND, path, "nogroup/x");
    expect_error(path, "group/none", 0, UINT64_MAX, H5PACK_ENOTFOUND, path, "group/none");
    expect_error(path, "", 0, UINT64_MAX, H5PACK_ENOTFOUND, path, NULL);
    expect_error(path, "numbers", 0, UINT64_MAX, H5PACK_EFORMAT, path, "numbers");
    expect_error(path, "grid", 0, UINT64_MAX, H5PACK_EFORMAT, path, "grid");
    expect_error(path, "scalar", 0, UINT64_MAX, H5PACK_EFORMAT, path, "scalar");
    expect_error(path, "group", 0, UINT64_MAX, H5PACK_EFORMAT, path, "group");
    expect_error(path, "filenames", N_NAMES + 1, 0, H5PACK_EINVAL, path, "filenames");
    expect_error(path, "filenames", N_NAMES + 1, UINT64_MAX, H5PACK_EINVAL, path, NULL);
    expect_error(path, "filenames", UINT64_MAX, 1, H5PACK_EINVAL, path, NULL);
    expect_error(path, "empty", 1, 0, H5PACK_EINVAL, path, "empty");
    expect_error(NULL, "filenames", 0, 1, H5PACK_EINVAL, NULL, NULL);
    expect_error(path, NULL, 0, 1, H5PACK_EINVAL, NULL, NULL);

    /* *ROWS also on EINVAL (START past the end): the count the caller needs to fix the call */
    uint64_t rows = 0;
    size_t needed = 5;
    CHECK_EQ_INT(h5pack_read_strings(path, "filenames", N_NAMES + 1, 0, NULL, 0, &rows, &needed, NULL, 0),
                 H5PACK_EINVAL);
    CHECK_EQ_U64(rows, N_NAMES);
    CHECK_EQ_U64(needed, 0);
    CHECK_EQ_INT(h5pack_read_strings(path, "filenames", 0, 1, NULL, 0, NULL, &needed, NULL, 0), H5PACK_EINVAL);
    CHECK_EQ_INT(h5pack_read_strings(path, "filenames", 0, 1, NULL, 0, &rows, NULL, NULL, 0), H5PACK_EINVAL);

    snprintf(text, sizeof text, "%s/text.h5", dir);
    FILE *f = fopen(text, "w");
    CHECK(f);
    fputs("not an HDF5 file, only a line of text\n", f);
    fclose(f);
    expect_error(text, "filenames", 0, UINT64_MAX, H5PACK_EFORMAT, text, NULL);
    snprintf(folder, sizeof folder, "%s/folder.h5", dir);
    CHECK(mkdir(folder, 0700) == 0);
    char err[512] = "";
    uint64_t r2;
    size_t n2;
    int rc = h5pack_read_strings(folder, "filenames", 0, 1, NULL, 0, &r2, &n2, err, sizeof err);
    CHECK_MSG(rc < 0, "a folder read as a file: rc %d", rc);
    CHECK_STR_CONTAINS(err, folder);
    rmdir(folder);
    remove(text);
}

static void copy_prefix(const char *from, const char *to, long bytes)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    CHECK(in && out);
    char buf[4096];
    long left = bytes;
    while (left > 0) {
        size_t n = fread(buf, 1, left < (long)sizeof buf ? (size_t)left : sizeof buf, in);
        CHECK(n > 0);
        CHECK(fwrite(buf, 1, n, out) == n);
        left -= (long)n;
    }
    fclose(in);
    fclose(out);
}

static long file_size(const char *path)
{
    struct stat st;
    CHECK(stat(path, &st) == 0);
    return (long)st.st_size;
}

/* A file cut short anywhere: an error naming the file (the HDF5 end-of-file address is past the end), and
 * no crash; at most the datasets whose metadata and data both lie before the cut could still be read, and
 * HDF5 refuses even those. */
static void test_truncated(const char *path, const char *dir)
{
    char cut[600];
    snprintf(cut, sizeof cut, "%s/cut.h5", dir);
    long size = file_size(path);
    const long lengths[] = {0, 7, 100, 512, 2048, size / 3, size / 2, size - 4096, size - 1};
    for (size_t i = 0; i < ROWS_OF(lengths); i++) {
        if (lengths[i] < 0 || lengths[i] >= size)
            continue;
        copy_prefix(path, cut, lengths[i]);
        const char *sets[] = {"filenames", "fixed_big", "vlen_ascii"};
        for (size_t s = 0; s < ROWS_OF(sets); s++) {
            char err[1024] = "";
            uint64_t rows = 0;
            size_t needed = 0;
            int rc = h5pack_read_strings(cut, sets[s], 0, UINT64_MAX, NULL, 0, &rows, &needed, err, sizeof err);
            CHECK_MSG(rc < 0, "%s cut to %ld bytes: %s read (rc %d)", path, lengths[i], sets[s], rc);
            CHECK_STR_CONTAINS(err, cut);
        }
    }
    remove(cut);
}

/* One flipped byte at many places of a small file (metadata, the global heap of the variable-length
 * strings, fixed-length rows): an error with a message, or a clean read; never a crash or a hang. */
static void test_flipped(const char *path, const char *dir, long step)
{
    char bad[600];
    snprintf(bad, sizeof bad, "%s/flip.h5", dir);
    long size = file_size(path);
    int errors = 0, clean = 0, crashes = 0, hangs = 0;
    printf("  %s: one byte flipped every %ld bytes\n", path, step);
    fflush(stdout); /* a crash below names the file */
    for (long off = 0; off < size; off += step) {
        copy_prefix(path, bad, size);
        FILE *f = fopen(bad, "r+b");
        CHECK(f && fseek(f, off, SEEK_SET) == 0);
        int ch = fgetc(f);
        CHECK(ch != EOF && fseek(f, off, SEEK_SET) == 0);
        fputc(ch ^ 0x5A, f);
        fclose(f);
        const char *sets[] = {"filenames", "fixed_big"};
        for (size_t s = 0; s < ROWS_OF(sets); s++) {
            char err[1024] = "";
            uint64_t rows = 0;
            size_t needed = 0;
            int rc = h5pack_read_strings(bad, sets[s], 0, UINT64_MAX, NULL, 0, &rows, &needed, err, sizeof err);
            if (rc == H5PACK_OK) {
                clean++;
                continue;
            }
            errors++;
            crashes += strstr(err, "HDF5 crashed") || strstr(err, "failed hard");
            hangs += strstr(err, "no progress") != NULL;
            CHECK_MSG(rc < 0 && strlen(err) > 0, "offset %ld: rc %d without a message", off, rc);
            CHECK_STR_CONTAINS(err, bad);
        }
    }
    printf("  %d errors (%d crashes and %d hangs of HDF5 in the child among them), %d clean reads\n", errors,
           crashes, hangs, clean);
    remove(bad);
}

int main(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    const char *dir = h5fix_tmpdir("reader_strings");
    char latest[600], old[600], old_images[600], mem[620], small_latest[600], small_old[600];
    snprintf(latest, sizeof latest, "%s/latest.h5", dir);
    snprintf(old, sizeof old, "%s/old.h5", dir);
    snprintf(old_images, sizeof old_images, "%s/old_images.h5", dir);
    snprintf(small_latest, sizeof small_latest, "%s/small_latest.h5", dir);
    snprintf(small_old, sizeof small_old, "%s/small_old.h5", dir);
    write_file(latest, 1, 0, N_NAMES, N_FIXED);
    write_file(old, 0, 0, N_NAMES, N_FIXED);
    write_file(old_images, 0, 1, N_NAMES, N_FIXED);
    write_file(small_latest, 1, 0, 300, 100);
    write_file(small_old, 0, 0, 300, 100);
    snprintf(mem, sizeof mem, "mem://%s", latest);

    const char *paths[] = {latest, old, old_images, mem};
    for (size_t i = 0; i < ROWS_OF(paths); i++) {
        test_contents(paths[i]);
        test_sizes(paths[i]);
        test_errors(paths[i], dir);
    }
    test_truncated(latest, dir);
    test_truncated(old, dir);
    /* A flip can send HDF5 into an endless loop (or a read of seconds): the child is given up after 1 s of
     * silence (the files are small; a child given up early is only one more error) */
    setenv("H5PACK_PROBE_TIMEOUT", "1", 0);
    const char *step = getenv("H5PACK_STRINGS_FLIP_STEP"); /* smaller: more places */
    long s = step ? atol(step) : 0;
    test_flipped(small_latest, dir, s > 0 ? s : 97);
    test_flipped(small_old, dir, s > 0 ? s : 97);
    printf("reader strings: all checks passed\n");
    return 0;
}
