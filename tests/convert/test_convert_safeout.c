/* test_convert_safeout.c - the converter's last step (safeout.c): an OUT that appeared while converting
 * is not replaced without --force (the finished file stays beside it under a visible name, named in the
 * message), is replaced with it; destination checks refuse "", a trailing '/', a folder, an existing file
 * and a dangling symbolic link without --force. The race itself is reproduced by creating OUT between the
 * temp file's creation and the commit, as a user's other job would. Leftovers: the temp file of a writer
 * that died (a child process that exits without cleaning up, as kill -9 would leave it) is removed by the
 * next conversion to that OUT and reported; a live writer's (another process holding it), a fresh one,
 * a kept finished file and files of other names are not. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
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

/* Its last change a minute ago: past the age under which a temp file is never taken for a leftover. */
static void make_old(const char *path)
{
    struct timeval past[2];
    gettimeofday(&past[0], NULL);
    past[0].tv_sec -= 60, past[1] = past[0];
    CHECK(utimes(path, past) == 0);
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
    CHECK_MSG(strrchr(temp, '/')[1] != '.', "the kept file is still hidden: %s", temp);
    CHECK_MSG(holds(out, "someone else's"), "OUT was replaced without --force");
    CHECK_MSG(holds(temp, "finished"), "the finished conversion was lost");
    make_old(temp);
    CHECK_EQ_INT(safeout_remove_leftovers(out, NULL, NULL), 0); /* a kept finished file is not a leftover */
    CHECK_MSG(holds(temp, "finished"), "leftover cleaning took the kept conversion");
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

static int reported;
static void count_report(void *ctx, const char *path, uint64_t bytes)
{
    (void)bytes;
    CHECK_STR_CONTAINS(path, (const char *)ctx);
    reported++;
}

/* A child creates OUT's temp file and writes to it; with HOLD it then keeps running (a live writer), else
 * it exits without removing it (what kill -9 leaves). The temp's path goes to TEMP through a pipe. */
static pid_t writer(const char *out, char *temp, size_t len, int hold)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failing check in the parent must not leave it running */
        char t[4096], err[512];
        if (safeout_create_temp(out, t, sizeof t, err, sizeof err) != 0)
            _exit(2);
        write_text(t, "half a file");
        if (write(fds[1], t, strlen(t) + 1) < 0)
            _exit(3);
        if (hold)
            pause();
        _exit(0);
    }
    close(fds[1]);
    ssize_t n = read(fds[0], temp, len - 1);
    CHECK(n > 0);
    temp[n] = '\0';
    close(fds[0]);
    return pid;
}

static void check_leftovers(const char *dir)
{
    char out[512], dead[4096], live[4096], other[600], err[512];
    snprintf(out, sizeof out, "%s/left.h5", dir);
    pid_t d = writer(out, dead, sizeof dead, 0), l = writer(out, live, sizeof live, 1);
    int status;
    CHECK(waitpid(d, &status, 0) == d && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_MSG(access(dead, F_OK) == 0 && access(live, F_OK) == 0, "the writers' temp files: %s %s", dead, live);
    snprintf(other, sizeof other, "%s/.other.h5.h5pack-AbC123", dir);
    write_text(other, "another OUT's");
    CHECK_EQ_INT(safeout_remove_leftovers(out, NULL, NULL), 0); /* written just now: not yet */
    make_old(dead), make_old(live), make_old(other);
    reported = 0;
    CHECK_EQ_INT(safeout_remove_leftovers(out, count_report, (void *)"left.h5.h5pack-"), 1);
    CHECK_EQ_INT(reported, 1);
    CHECK_MSG(access(dead, F_OK) != 0, "the dead writer's temp file is still there: %s", dead);
    CHECK_MSG(access(live, F_OK) == 0, "the live writer's temp file was removed: %s", live);
    CHECK_MSG(access(other, F_OK) == 0, "another OUT's temp file was removed");
    /* our own temp file, as a conversion holds it */
    char mine[4096];
    CHECK_OK(safeout_create_temp(out, mine, sizeof mine, err, sizeof err));
    make_old(mine);
    CHECK_EQ_INT(safeout_remove_leftovers(out, NULL, NULL), 0);
    CHECK(access(mine, F_OK) == 0);
    safeout_discard(mine);
    kill(l, SIGKILL);
    CHECK(waitpid(l, &status, 0) == l);
    CHECK_EQ_INT(safeout_remove_leftovers(out, NULL, NULL), 1); /* killed: its file goes too */
    CHECK(access(live, F_OK) != 0);
    unlink(other);
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
    /* a special file is never replaced, --force or not (root: h5pack -f SRC /dev/null), before the run
     * or when it appears during it */
    snprintf(path, sizeof path, "%s/fifo.h5", dir);
    CHECK(mkfifo(path, 0600) == 0);
    CHECK_EQ_INT(safeout_check_destination(path, 1, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "is a FIFO, never replaced");
    char link[512]; /* nor a link to one (/dev/stdout is a link to a device): the rename would replace it */
    snprintf(link, sizeof link, "%s/to-fifo.h5", dir);
    CHECK(symlink(path, link) == 0);
    CHECK_EQ_INT(safeout_check_destination(link, 1, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "is a FIFO, never replaced");
    unlink(link);
    char temp[4096];
    snprintf(path + strlen(path) - 3, 8, "2.h5");
    CHECK_OK(safeout_create_temp(path, temp, sizeof temp, err, sizeof err));
    CHECK(mkfifo(path, 0600) == 0);
    CHECK_EQ_INT(safeout_commit(temp, path, 1, err, sizeof err), -2);
    CHECK_STR_CONTAINS(err, "is never replaced");
    struct stat st;
    CHECK(stat(path, &st) == 0 && S_ISFIFO(st.st_mode) && stat(temp, &st) == 0 && S_ISREG(st.st_mode));
    unlink(path), unlink(temp);
    snprintf(path, sizeof path, "%s/fifo.h5", dir);
    unlink(path);
}

int main(void)
{
    char dir[] = "/tmp/h5pack-safeout-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    check_commit_race(dir);
    check_leftovers(dir);
    check_destinations(dir);
    CHECK(rmdir(dir) == 0);
    printf("safeout: all checks passed\n");
    return 0;
}
