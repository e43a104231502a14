/* test_convert_scan.c - what the scan finds and how it reports the odd entries of real folders: nested
 * folders in torchvision order, symlink loops, broken links, a folder named x.jpg, non-UTF-8 names,
 * unreadable files, FIFOs, hidden files, empty class folders, files beside class folders. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "h5read.h"
#include "packer.h"
#include "scan.h"
#include "testimages.h"

static char root[256];
static int unreadable_visible; /* root may read mode-0 files: then the file is simply converted */

static void at(char *buf, const char *rel)
{
    snprintf(buf, 600, "%s/%s", root, rel);
}

static void touch_jpeg(const char *rel, uint32_t seed)
{
    char p[600];
    at(p, rel);
    CHECK_OK(write_test_jpeg(p, 20, 16, 3, seed));
}

static void mk(const char *rel)
{
    char p[600];
    at(p, rel);
    CHECK_OK(make_dir(p));
}

static long find_skip(const scan_result *r, const char *name)
{
    for (size_t i = 0; i < r->skipped.count; i++)
        if (strcmp(r->skipped.names[i], name) == 0)
            return (long)i;
    return -1;
}

static void expect_skip(const scan_result *r, const char *name, const char *reason)
{
    long i = find_skip(r, name);
    CHECK_MSG(i >= 0, "%s not reported as skipped", name);
    CHECK_STR_CONTAINS(r->skipped.reasons[i], reason);
}

static void test_utf8_escape(void)
{
    int changed = 0;
    char *s = utf8_escape("caf\xc3\xa9/\xff\xfe.jpg", &changed);
    CHECK(changed);
    CHECK(strcmp(s, "caf\xc3\xa9/\\xFF\\xFE.jpg") == 0);
    free(s);
    s = utf8_escape("plain \xe2\x82\xac.png", &changed);
    CHECK(!changed && strcmp(s, "plain \xe2\x82\xac.png") == 0);
    free(s);
    s = utf8_escape("\xc0\xaf\xed\xa0\x80", &changed); /* overlong '/', surrogate */
    CHECK(changed && strcmp(s, "\\xC0\\xAF\\xED\\xA0\\x80") == 0);
    free(s);
    CHECK(scan_has_image_extension("a.JPG") && scan_has_image_extension("b.Jpeg") && scan_has_image_extension("c.png"));
    CHECK(!scan_has_image_extension(".jpg") && !scan_has_image_extension("a.jpg.txt") && !scan_has_image_extension("gif"));
}

static void build_tree(void)
{
    char p[600], q[600];
    mk("src");
    mk("src/a");
    mk("src/a/deep");
    mk("src/a/deep/er");
    mk("src/b");
    mk("src/b/x.jpg");         /* a folder named like an image */
    mk("src/c_empty");
    mk("src/.hidden_class");
    touch_jpeg("src/a/z.jpg", 1);
    touch_jpeg("src/a/deep/er/k.jpg", 2);
    touch_jpeg("src/a/deep/m.jpg", 3);
    touch_jpeg("src/a/deep er.jpg", 4); /* ' ' sorts before '/' as in sorted(os.walk()) */
    touch_jpeg("src/a/.DS_Store.jpg", 5);
    touch_jpeg("src/b/ok.png", 6);
    touch_jpeg("src/b/bad\xff" "name.jpg", 7);
    touch_jpeg("src/b/x.jpg/inner.jpg", 8);
    touch_jpeg("src/.hidden_class/h.jpg", 9);
    touch_jpeg("src/top.jpg", 10);
    at(p, "src/a/loop");
    CHECK_OK(symlink("..", p));            /* src/a/loop -> src: back up the path */
    at(p, "src/b/dangling.jpg");
    CHECK_OK(symlink("nowhere.jpg", p));
    at(p, "src/dogs");
    CHECK_OK(symlink("/nonexistent/dogs", p)); /* meant as a class folder: says why it is not one */
    at(p, "src/b/linked.jpg");
    CHECK_OK(symlink("ok.png", p));       /* a link to a file is followed */
    at(p, "src/b/pipe.jpg");
    CHECK_OK(mkfifo(p, 0644));
    at(p, "src/b/locked.jpg");
    touch_jpeg("src/b/locked.jpg", 11);
    chmod(p, 0);
    int fd = open(p, O_RDONLY);
    unreadable_visible = fd < 0;
    if (fd >= 0)
        close(fd);
    at(q, "src/b/notes.TXT");
    CHECK_OK(write_file_bytes(q, "x", 1));
}

static void test_scan(void)
{
    char src[600], err[256];
    at(src, "src");
    scan_result r;
    CHECK_MSG(scan_source(src, &r, err, sizeof err) == 0, "%s", err);
    CHECK(r.has_classes);
    CHECK_EQ_U64(r.n_classes, 3);
    CHECK(strcmp(r.classes[0], "a") == 0 && strcmp(r.classes[1], "b") == 0 && strcmp(r.classes[2], "c_empty") == 0);
    const char *want[] = {"a/deep er.jpg", "a/z.jpg", "a/deep/m.jpg", "a/deep/er/k.jpg", "b/bad\\xFFname.jpg",
                          "b/linked.jpg", "b/locked.jpg", "b/ok.png"};
    size_t n_want = sizeof want / sizeof want[0], w = 0;
    for (size_t i = 0; i < r.n_entries; i++, w++) {
        if (unreadable_visible && w < n_want && strcmp(want[w], "b/locked.jpg") == 0)
            w++;
        CHECK_MSG(w < n_want && strcmp(r.entries[i].name, want[w]) == 0, "entry %zu: %s, expected %s", i,
                  r.entries[i].name, w < n_want ? want[w] : "(end)");
        CHECK_EQ_INT(r.entries[i].label, want[w][0] == 'a' ? 0 : 1);
    }
    CHECK_EQ_U64(w, n_want);
    /* The raw bytes stay available for opening the file. */
    for (size_t i = 0; i < r.n_entries; i++)
        if (strstr(r.entries[i].name, "\\xFF"))
            CHECK(strchr(r.entries[i].relpath, '\xff') != NULL);
    expect_skip(&r, "a/loop/", "symbolic link loop");
    expect_skip(&r, "b/x.jpg/", "is a directory");
    expect_skip(&r, "b/dangling.jpg", "broken symbolic link");
    expect_skip(&r, "b/pipe.jpg", "not a regular file");
    expect_skip(&r, "b/notes.TXT", "unsupported format");
    expect_skip(&r, "top.jpg", "not inside a class folder");
    expect_skip(&r, "dogs", "broken symbolic link");
    if (unreadable_visible)
        expect_skip(&r, "b/locked.jpg", "Permission denied");
    CHECK(find_skip(&r, "a/.DS_Store.jpg") < 0 && find_skip(&r, ".hidden_class/") < 0);
    CHECK_EQ_U64(r.n_warnings, 1);
    CHECK_STR_CONTAINS(r.warnings[0], "'c_empty' holds no images");
    scan_free(&r);
}

/* The whole conversion over the hostile tree: converts what it can, names the rest, never fails. */
static void test_pack_hostile(void)
{
    char src[600], out[600], err[1024];
    at(src, "src");
    at(out, "hostile.h5");
    pack_options o = PACK_OPTIONS_DEFAULTS;
    o.src_dir = src;
    o.out_path = out;
    o.height = 16;
    o.width = 16;
    o.verbosity = 0;
    o.threads = 2;
    pack_report rep;
    CHECK_MSG(pack_run(&o, &rep, err, sizeof err) == PACK_OK, "%s", err);
    pack_report_free(&rep);
    packed_file pf;
    packed_open(out, &pf);
    CHECK(pf.n >= 7);
    CHECK(packed_find(&pf, "b/bad\\xFFname.jpg") >= 0);
    CHECK_EQ_U64(pf.n_classes, 3);
    packed_close(&pf);
}

int main(void)
{
    snprintf(root, sizeof root, "%s/h5pack-scan-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    CHECK(mkdtemp(root) != NULL);
    test_utf8_escape();
    build_tree();
    test_scan();
    test_pack_hostile();
    char p[600];
    at(p, "src/b/locked.jpg");
    chmod(p, 0644);
    remove_tree(root);
    printf("scan: ok\n");
    return 0;
}
