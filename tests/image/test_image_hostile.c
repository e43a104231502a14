/* test_image_hostile - broken and hostile inputs (truncated, corrupt, pixel bombs, other formats): each
 * gives the right status and a reason, never a crash (CI runs this under ASan+UBSan). Generates every input itself.
 *   test_image_hostile [--write-corpus DIR]   (DIR: also save the generated inputs, for the fuzz corpus) */
#include "image_testutil.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *corpus_dir;

static void save_case(const char *name, const blob *b)
{
    if (!corpus_dir)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", corpus_dir, name);
    FILE *f = fopen(path, "wb");
    CHECK_MSG(f && fwrite(b->data, 1, b->len, f) == b->len && fclose(f) == 0, "cannot write %s", path);
}

/* Decodes B, expects status WANT and a reason containing NEEDLE (NULL: any reason). */
static void expect(const char *name, const blob *b, const decode_opts *o, image_status want, const char *needle)
{
    char why[512] = "";
    image_status st = decode_status(b, o, why, sizeof why);
    printf("%-34s -> %-18s %s\n", name, image_status_text(st), why);
    CHECK_MSG(st == want, "%s: status %d (%s), expected %d (%s): %s", name, (int)st, image_status_text(st), (int)want,
              image_status_text(want), why);
    if (needle)
        CHECK_STR_CONTAINS(why, needle);
    save_case(name, b);
}

static void test_empty_and_random(void)
{
    decode_opts o = default_opts();
    blob empty = {NULL, 0};
    expect("empty", &empty, &o, IMAGE_CORRUPT, "empty file");
    uint64_t s = 12345;
    for (int i = 0; i < 64; i++) {
        size_t len = (size_t)1 + (size_t)(i * 97 % 3000);
        blob b = blob_copy(NULL, 0);
        free(b.data);
        b.data = malloc(len);
        b.len = len;
        for (size_t k = 0; k < len; k++)
            b.data[k] = (uint8_t)((s = s * 6364136223846793005ull + 1442695040888963407ull) >> 56);
        char why[512] = "";
        image_status st = decode_status(&b, &o, why, sizeof why);
        CHECK_MSG(st == IMAGE_UNSUPPORTED || st == IMAGE_CORRUPT, "random %zu bytes: status %d", len, (int)st);
        if (i == 0)
            save_case("random_bytes.jpg", &b);
        /* The same bytes behind a JPEG and a PNG signature: must fail cleanly too. */
        if (len > 8) {
            memcpy(b.data, "\xff\xd8\xff", 3);
            st = decode_status(&b, &o, why, sizeof why);
            CHECK_MSG(st == IMAGE_CORRUPT || st == IMAGE_UNSUPPORTED, "jpeg magic + random: status %d", (int)st);
            memcpy(b.data, "\x89PNG\r\n\x1a\n", 8);
            st = decode_status(&b, &o, why, sizeof why);
            CHECK_MSG(st == IMAGE_CORRUPT || st == IMAGE_UNSUPPORTED, "png magic + random: status %d", (int)st);
        }
        free(b.data);
    }
    printf("random bytes (64 blobs, also behind JPEG/PNG signatures): all rejected\n");
}

static void test_truncated_jpeg(int flags, const char *kind)
{
    decode_opts o = default_opts();
    blob full = make_jpeg_pf(160, 120, TJPF_RGB, TJSAMP_420, 90, flags);
    long sos = blob_find(&full, "\xff\xda", 2);
    CHECK(sos > 0);
    size_t cuts[] = {3, 4, 20, (size_t)sos, (size_t)sos + 14, full.len / 4, full.len / 2, full.len * 3 / 4,
                     full.len - 2, full.len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        blob b = blob_copy(full.data, cuts[i]);
        char name[64];
        snprintf(name, sizeof name, "truncated_%s_at_%zu.jpg", kind, cuts[i]);
        expect(name, &b, &o, IMAGE_CORRUPT, NULL);
        free(b.data);
    }
    blob b = blob_copy(full.data, full.len / 2);
    char why[512];
    CHECK_EQ_INT(decode_status(&b, &o, why, sizeof why), IMAGE_CORRUPT);
    CHECK_STR_CONTAINS(why, "truncated JPEG");
    free(b.data);
    free(full.data);
}

/* Sets the size in the first SOF marker of a JPEG. */
static void jpeg_set_size(blob *b, uint32_t w, uint32_t h)
{
    long sof = blob_find(b, "\xff\xc0", 2);
    if (sof < 0)
        sof = blob_find(b, "\xff\xc2", 2);
    CHECK(sof > 0);
    put_be16(b->data + sof + 5, h);
    put_be16(b->data + sof + 7, w);
}

static void test_jpeg_bombs_and_encodings(void)
{
    decode_opts o = default_opts();
    blob b = make_jpeg(64, 48);
    jpeg_set_size(&b, 65000, 65000);
    expect("jpeg_sof_65000x65000.jpg", &b, &o, IMAGE_TOO_LARGE, "above the limit");
    jpeg_set_size(&b, 20000, 100);
    o.max_pixels = 1000000;
    expect("jpeg_sof_20000x100_limit_1M.jpg", &b, &o, IMAGE_TOO_LARGE, "2000000 pixels");
    /* A claim within the limit but without the data: decodes, finds the data short, says corrupt. */
    jpeg_set_size(&b, 2000, 1500);
    o.max_pixels = 1ull << 28;
    expect("jpeg_sof_2000x1500_short_data.jpg", &b, &o, IMAGE_CORRUPT, "truncated JPEG");
    free(b.data);

    b = make_jpeg(64, 48);
    long sof = blob_find(&b, "\xff\xc0", 2);
    b.data[sof + 4] = 12; /* precision byte: what a 12-bit JPEG declares */
    expect("jpeg_12bit_precision.jpg", &b, &o, IMAGE_UNSUPPORTED, "unsupported JPEG encoding");
    b.data[sof + 4] = 8;
    b.data[sof + 1] = 0xc3; /* SOF3: lossless process */
    expect("jpeg_lossless_sof3.jpg", &b, &o, IMAGE_UNSUPPORTED, "unsupported JPEG encoding");
    free(b.data);
}

/* A progressive JPEG whose last scan is repeated 600 times: a CPU bomb, stopped after 500 scans. */
static void test_jpeg_scan_bomb(void)
{
    decode_opts o = default_opts();
    blob b = make_jpeg_pf(64, 48, TJPF_RGB, TJSAMP_420, 90, TJFLAG_PROGRESSIVE);
    long last_sos = -1;
    for (size_t i = 0; i + 1 < b.len; i++)
        if (b.data[i] == 0xff && b.data[i + 1] == 0xda)
            last_sos = (long)i;
    CHECK(last_sos > 0 && b.data[b.len - 2] == 0xff && b.data[b.len - 1] == 0xd9);
    size_t scan_len = b.len - 2 - (size_t)last_sos, copies = 600;
    blob bomb = {malloc(b.len + copies * scan_len), b.len + copies * scan_len};
    CHECK(bomb.data != NULL);
    memcpy(bomb.data, b.data, b.len - 2);
    for (size_t k = 0; k < copies; k++)
        memcpy(bomb.data + b.len - 2 + k * scan_len, b.data + last_sos, scan_len);
    memcpy(bomb.data + bomb.len - 2, "\xff\xd9", 2);
    expect("jpeg_progressive_600_scans.jpg", &bomb, &o, IMAGE_CORRUPT, "more than 500 scans");
    free(bomb.data);
    free(b.data);
}

/* The header probe (packing images of several sizes) reads the size of a JPEG whose header reading warned
 * harmlessly, as the decode accepts it (and PIL opens it): not "its header gives no size". */
static void probe_after_harmless_warning(const blob *b, uint32_t want_h, uint32_t want_w)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[1024];
    snprintf(path, sizeof path, "%s/h5pack-probe-XXXXXX", tmp);
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, b->data, b->len) == (ssize_t)b->len && close(fd) == 0);
    decode_opts o = default_opts();
    uint32_t h = 0, w = 0;
    CHECK_MSG(image_probe_size(path, &o, &h, &w) == 0, "probe of a JPEG with a harmless header warning failed");
    CHECK(h == want_h && w == want_w);
    unlink(path);
}

/* Harmless irregularity: junk bytes between two markers (libjpeg warns, every pixel is there): accepted. */
static void test_jpeg_extraneous_bytes(void)
{
    decode_opts o = default_opts();
    blob b = make_jpeg(64, 48);
    long sos = blob_find(&b, "\xff\xda", 2);
    CHECK(sos > 0);
    blob junk = {malloc(b.len + 3), b.len + 3};
    CHECK(junk.data != NULL);
    memcpy(junk.data, b.data, (size_t)sos);
    memcpy(junk.data + sos, "\x12\x34\x56", 3);
    memcpy(junk.data + sos + 3, b.data + sos, b.len - (size_t)sos);
    expect("jpeg_extraneous_bytes_before_sos.jpg", &junk, &o, IMAGE_OK, NULL);
    image_u8 a, c;
    char why[256];
    CHECK_EQ_INT(image_decode(b.data, b.len, &o, &a, why, sizeof why), IMAGE_OK);
    CHECK_EQ_INT(image_decode(junk.data, junk.len, &o, &c, why, sizeof why), IMAGE_OK);
    CHECK(memcmp(a.pixels, c.pixels, (size_t)64 * 48 * 3) == 0); /* same pixels as without the junk */
    probe_after_harmless_warning(&junk, 48, 64);
    image_free(&a);
    image_free(&c);
    free(junk.data);
    free(b.data);
}

/* The length of a string literal without its NUL: the bytes may contain \0. */
#define BYTES_CASE(name, lit, needle) {name, lit, needle, sizeof(lit) - 1}

static void test_other_formats(void)
{
    decode_opts o = default_opts();
    struct {
        const char *name, *bytes, *needle;
        size_t len;
    } cases[] = {
        BYTES_CASE("gif_as.jpg", "GIF89a\x10\0\x10\0\x80\0\0\xff\xff\xff\0\0\0!\xf9\x04", "GIF content, not JPEG/PNG"),
        BYTES_CASE("bmp_as.png", "BM\x46\0\0\0\0\0\0\0\x36\0\0\0\x28\0\0\0\x02\0\0\0", "BMP content, not JPEG/PNG"),
        BYTES_CASE("webp_as.jpg", "RIFF\x24\0\0\0WEBPVP8 \x18\0\0\0\x30\x01\0\x9d", "WebP content, not JPEG/PNG"),
        BYTES_CASE("tiff_as.jpg", "II*\0\x08\0\0\0\x0c\0\0\x01\x03\0\x01\0\0\0\x10\0\0\0\0\0", "TIFF content, not JPEG/PNG"),
        BYTES_CASE("text_as.jpg", "hello, this is not an image at all", "not JPEG/PNG content"),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        blob b = blob_copy((const uint8_t *)cases[i].bytes, cases[i].len);
        expect(cases[i].name, &b, &o, IMAGE_UNSUPPORTED, cases[i].needle);
        free(b.data);
    }
}

static void test_png_damage(void)
{
    decode_opts o = default_opts();
    blob b = make_png(64, 48);
    long ihdr = blob_find(&b, "IHDR", 4), idat = blob_find(&b, "IDAT", 4);
    CHECK(ihdr > 0 && idat > 0);

    blob bomb = blob_copy(b.data, b.len);
    put_be32(bomb.data + ihdr + 4, 100000);
    put_be32(bomb.data + ihdr + 8, 100000);
    png_fix_crc(&bomb, ihdr);
    expect("png_ihdr_100000x100000.png", &bomb, &o, IMAGE_TOO_LARGE, "above the limit");
    put_be32(bomb.data + ihdr + 4, 0x7fffffffu);
    put_be32(bomb.data + ihdr + 8, 0x7fffffffu);
    png_fix_crc(&bomb, ihdr);
    expect("png_ihdr_2g_x_2g.png", &bomb, &o, IMAGE_TOO_LARGE, "above the limit");
    free(bomb.data);

    uint32_t idat_len = (uint32_t)b.data[idat - 4] << 24 | (uint32_t)b.data[idat - 3] << 16 |
                        (uint32_t)b.data[idat - 2] << 8 | b.data[idat - 1];
    blob crc = blob_copy(b.data, b.len);
    crc.data[idat + 4 + idat_len + 2] ^= 0x10; /* IDAT's stored CRC: the data no longer matches it */
    expect("png_bad_idat_crc.png", &crc, &o, IMAGE_CORRUPT, "CRC error");
    memcpy(crc.data, b.data, b.len);
    crc.data[idat + 10] ^= 0x55; /* inside IDAT's data: zlib sees the damage before the CRC is checked */
    expect("png_idat_byte_flipped.png", &crc, &o, IMAGE_CORRUPT, "corrupt PNG");
    free(crc.data);

    size_t cuts[] = {9, 20, (size_t)idat + 2, (size_t)idat + 12, b.len / 2, b.len - 20};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        blob t = blob_copy(b.data, cuts[i]);
        char name[64];
        snprintf(name, sizeof name, "png_truncated_at_%zu.png", cuts[i]);
        expect(name, &t, &o, IMAGE_CORRUPT, cuts[i] >= (size_t)idat ? "truncated PNG" : NULL);
        free(t.data);
    }
    /* The image data complete, only IEND missing: the pixels are all there, accepted. */
    blob no_iend = blob_copy(b.data, b.len - 12);
    expect("png_without_iend.png", &no_iend, &o, IMAGE_OK, NULL);
    free(no_iend.data);
    free(b.data);
}

/* B with a tEXt chunk inserted at byte AT (a chunk boundary), its CRC correct or not. */
static blob png_with_text(const blob *b, size_t at, int bad_crc)
{
    static const char text[] = "Comment\0made by a camera";
    size_t len = sizeof text - 1, chunk = 12 + len;
    blob out = {malloc(b->len + chunk), b->len + chunk};
    CHECK(out.data != NULL);
    memcpy(out.data, b->data, at);
    put_be32(out.data + at, (uint32_t)len);
    memcpy(out.data + at + 4, "tEXt", 4);
    memcpy(out.data + at + 8, text, len);
    png_fix_crc(&out, (long)at + 4);
    if (bad_crc)
        out.data[at + 8 + len] ^= 0x40;
    memcpy(out.data + at + chunk, b->data + at, b->len - at);
    return out;
}

/* A bad CRC in an ancillary chunk before the image data: PIL refuses the file ("broken PNG file (bad header
 * checksum in b'tEXt')"), so the converter does too. After the image data, neither reads the chunk. */
static void test_png_ancillary_crc(void)
{
    decode_opts o = default_opts();
    blob b = make_png(64, 48);
    long idat = blob_find(&b, "IDAT", 4), iend = blob_find(&b, "IEND", 4);
    CHECK(idat > 0 && iend > idat);
    blob t = png_with_text(&b, (size_t)idat - 4, 0);
    expect("png_text_chunk.png", &t, &o, IMAGE_OK, NULL);
    free(t.data);
    t = png_with_text(&b, (size_t)idat - 4, 1);
    expect("png_text_bad_crc_before_idat.png", &t, &o, IMAGE_CORRUPT, "tEXt: CRC error");
    free(t.data);
    t = png_with_text(&b, (size_t)iend - 4, 1);
    expect("png_text_bad_crc_after_idat.png", &t, &o, IMAGE_OK, NULL);
    free(t.data);
    free(b.data);
}

/* A damaged zlib stream with correct CRCs (what a bad disk sector behind a recomputed CRC gives). */
static void test_png_bad_zlib(void)
{
    decode_opts o = default_opts();
    blob b = make_png(64, 48);
    long idat = blob_find(&b, "IDAT", 4);
    for (int k = 4; k < 40; k++)
        b.data[idat + k] ^= 0xa5;
    png_fix_crc(&b, idat);
    expect("png_bad_zlib_data.png", &b, &o, IMAGE_CORRUPT, "corrupt PNG");
    free(b.data);
}

/* Seeded byte flips in valid files: any status, but no crash or sanitizer report. */
static void test_mutations(void)
{
    decode_opts o = default_opts();
    o.target_h = o.target_w = 32;
    blob src[2] = {make_jpeg_pf(96, 80, TJPF_RGB, TJSAMP_420, 85, TJFLAG_PROGRESSIVE), make_png(96, 80)};
    uint64_t s = 99;
    int ok = 0, total = 0;
    for (int f = 0; f < 2; f++) {
        for (int i = 0; i < 300; i++) {
            blob b = blob_copy(src[f].data, src[f].len);
            for (int k = 0; k < 1 + i % 8; k++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                size_t at = 2 + (size_t)((s >> 33) % (b.len - 2));
                b.data[at] ^= (uint8_t)(1u << ((s >> 20) & 7));
            }
            char why[512] = "";
            image_u8 img;
            image_status st = image_decode(b.data, b.len, &o, &img, why, sizeof why);
            if (st == IMAGE_OK) {
                image_u8 fitted;
                CHECK_EQ_INT(image_fit(&img, 32, 32, RESIZE_CROP, &fitted), IMAGE_OK);
                image_free(&fitted);
                ok++;
            }
            image_free(&img);
            total++;
            free(b.data);
        }
        free(src[f].data);
    }
    printf("mutations: %d of %d mutated files still decoded, none crashed\n", ok, total);
}

static void test_channels_invalid(void)
{
    decode_opts o = default_opts();
    o.channels = 4;
    blob b = make_png(8, 8);
    char why[256] = "";
    image_u8 img;
    CHECK_EQ_INT(image_decode(b.data, b.len, &o, &img, why, sizeof why), IMAGE_UNSUPPORTED);
    CHECK_STR_CONTAINS(why, "channels");
    free(b.data);
}

/* image_load on what a real folder holds: missing files, directories, loops, odd names, permissions. */
static void test_files(void)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[1024], path[1200];
    snprintf(dir, sizeof dir, "%s/h5pack-image-XXXXXX", tmp);
    CHECK(mkdtemp(dir) != NULL);
    decode_opts o = default_opts();
    image_u8 img;
    char why[512];

    snprintf(path, sizeof path, "%s/missing.jpg", dir);
    CHECK_EQ_INT(image_load(path, &o, &img, why, sizeof why), IMAGE_IO);
    CHECK_STR_CONTAINS(why, "No such file");

    snprintf(path, sizeof path, "%s/x.jpg", dir);
    CHECK(mkdir(path, 0755) == 0);
    CHECK_EQ_INT(image_load(path, &o, &img, why, sizeof why), IMAGE_IO);
    printf("directory named x.jpg -> %s\n", why);
    CHECK(rmdir(path) == 0);

    snprintf(path, sizeof path, "%s/fifo.png", dir); /* must not block waiting for a writer */
    CHECK(mkfifo(path, 0644) == 0);
    CHECK_EQ_INT(image_load(path, &o, &img, why, sizeof why), IMAGE_IO);
    CHECK_STR_CONTAINS(why, "not a regular file");
    unlink(path);

    char a[1200], b2[1200];
    snprintf(a, sizeof a, "%s/loop_a.jpg", dir);
    snprintf(b2, sizeof b2, "%s/loop_b.jpg", dir);
    CHECK(symlink(b2, a) == 0 && symlink(a, b2) == 0);
    CHECK_EQ_INT(image_load(a, &o, &img, why, sizeof why), IMAGE_IO);
    CHECK_STR_CONTAINS(why, "symbolic links");
    unlink(a);
    unlink(b2);

    blob jpg = make_jpeg(40, 30);
    snprintf(path, sizeof path, "%s/caf\xe9-\xff.jpg", dir); /* Latin-1 bytes: not UTF-8 */
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(jpg.data, 1, jpg.len, f) == jpg.len && fclose(f) == 0);
    CHECK_EQ_INT(image_load(path, &o, &img, why, sizeof why), IMAGE_OK);
    CHECK(img.width == 40 && img.height == 30);
    image_free(&img);

    CHECK(chmod(path, 0) == 0);
    image_status st = image_load(path, &o, &img, why, sizeof why);
    if (geteuid() == 0) {
        printf("unreadable file: not checked (running as root, permissions do not apply)\n");
        image_free(&img);
    } else {
        CHECK_EQ_INT(st, IMAGE_IO);
        CHECK_STR_CONTAINS(why, "Permission denied");
    }
    unlink(path);

    snprintf(path, sizeof path, "%s/empty.png", dir);
    f = fopen(path, "wb");
    CHECK(f && fclose(f) == 0);
    CHECK_EQ_INT(image_load(path, &o, &img, why, sizeof why), IMAGE_CORRUPT);
    CHECK_STR_CONTAINS(why, "empty file");
    unlink(path);
    free(jpg.data);
    CHECK(rmdir(dir) == 0);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0)
        corpus_dir = argv[2];
    test_empty_and_random();
    test_truncated_jpeg(0, "baseline");
    test_truncated_jpeg(TJFLAG_PROGRESSIVE, "progressive");
    test_jpeg_bombs_and_encodings();
    test_jpeg_extraneous_bytes();
    test_jpeg_scan_bomb();
    test_other_formats();
    test_png_damage();
    test_png_bad_zlib();
    test_png_ancillary_crc();
    test_mutations();
    test_channels_invalid();
    test_files();
    printf("hostile inputs: all rejected with a reason or decoded, none crashed\n");
    return 0;
}
