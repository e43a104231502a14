/* test_convert_safeout.c - the converter's last step (safeout.c): an OUT that appeared while converting
 * is not replaced without --force (the finished file stays under its temp name, named in the message),
 * is replaced with it; destination checks refuse "", a trailing '/', a folder, an existing file and a
 * dangling symbolic link without --force. The race itself is reproduced by creating OUT between the temp
 * file's creation and the commit, as a user's other job would. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "safeout.h"

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK_MSG(f && fputs(text, f) >= 0 && fclose(f) == 0, "write %s", path);
}

static int holds(const char *path, const char *text)
{
    char buf[64] = "";
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
}

static void check_commit_race(const char *dir)
{
    char out[512], temp[4096], err[8192];
    snprintf(out, sizeof out, "%s/out.h5", dir);
    CHECK_OK(safeout_check_destination(out, 0, err, sizeof err));
    CHECK_OK(safeout_create_temp(out, temp, sizeof temp, err, sizeof err));
    write_text(temp, "finished");
    write_text(out, "someone else's"); /* appears during the conversion */
    CHECK_EQ_INT(safeout_commit(temp, out, 0, err, sizeof err), -2);
    CHECK_STR_CONTAINS(err, "appeared during the conversion");
    CHECK_STR_CONTAINS(err, temp);
    CHECK_MSG(holds(out, "someone else's"), "OUT was replaced without --force");
    CHECK_MSG(holds(temp, "finished"), "the finished conversion was lost");
    unlink(temp);
    CHECK_OK(safeout_create_temp(out, temp, sizeof temp, err, sizeof err)); /* with --force: replaced */
    write_text(temp, "finished");
    CHECK_OK(safeout_commit(temp, out, 1, err, sizeof err));
    CHECK(holds(out, "finished") && access(temp, F_OK) != 0);
    unlink(out);
    CHECK_OK(safeout_create_temp(out, temp, sizeof temp, err, sizeof err)); /* no OUT: committed */
    write_text(temp, "finished");
    CHECK_OK(safeout_commit(temp, out, 0, err, sizeof err));
    CHECK(holds(out, "finished") && access(temp, F_OK) != 0);
    unlink(out);
}

static void check_destinations(const char *dir)
{
    char path[512], err[8192];
    CHECK_EQ_INT(safeout_check_destination("", 1, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "give the output file's name");
    snprintf(path, sizeof path, "%s/new.h5/", dir);
    CHECK_EQ_INT(safeout_check_destination(path, 1, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "give the output file's name");
    CHECK_EQ_INT(safeout_check_destination(dir, 1, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "is a folder");
    snprintf(path, sizeof path, "%s/dangling.h5", dir);
    CHECK(symlink("nowhere.h5", path) == 0);
    CHECK_EQ_INT(safeout_check_destination(path, 0, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "already exists");
    CHECK_OK(safeout_check_destination(path, 1, err, sizeof err));
    unlink(path);
    CHECK_OK(safeout_check_destination(path, 0, err, sizeof err));
}

int main(void)
{
    char dir[] = "/tmp/h5pack-safeout-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    check_commit_race(dir);
    check_destinations(dir);
    CHECK(rmdir(dir) == 0);
    printf("safeout: all checks passed\n");
    return 0;
}
