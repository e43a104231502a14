/* test_run_errors.c - `h5pack-stats run` when a public call fails after the open: h5pack_info_get,
 * h5pack_stats_get (before, during and after the loop) and h5pack_release are wrapped (ld --wrap) so
 * that the Nth call goes to the real library with a struct_size it rejects, which gives a genuine
 * library failure and message. cmd_run must then exit 2, print the library's message naming the call
 * and the file, and print no figures at all (stdout empty, with and without --json). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "commands.h"
#include "h5fixture.h"

enum { NONE, INFO, STATS, RELEASE };
static int failing = NONE; /* which call fails */
static int countdown;      /* ... on its countdown-th call from now */

int __real_h5pack_info_get(const h5pack_reader *r, h5pack_info *info);
int __real_h5pack_stats_get(const h5pack_reader *r, h5pack_stats *stats);
int __real_h5pack_release(h5pack_reader *r, h5pack_batch *batch);

static int fail_now(int call)
{
    return failing == call && --countdown == 0;
}

int __wrap_h5pack_info_get(const h5pack_reader *r, h5pack_info *info)
{
    h5pack_info bad = {.struct_size = 1};
    return __real_h5pack_info_get(r, fail_now(INFO) ? &bad : info);
}

int __wrap_h5pack_stats_get(const h5pack_reader *r, h5pack_stats *stats)
{
    h5pack_stats bad = {.struct_size = 1};
    return __real_h5pack_stats_get(r, fail_now(STATS) ? &bad : stats);
}

int __wrap_h5pack_release(h5pack_reader *r, h5pack_batch *batch)
{
    if (!fail_now(RELEASE))
        return __real_h5pack_release(r, batch);
    h5pack_batch bad = *batch; /* the real batch stays held: h5pack_close takes it back */
    bad.struct_size = 1;
    return __real_h5pack_release(r, &bad);
}

static char out_text[1 << 16], err_text[1 << 16];

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* cmd_run with ARGS (NULL-terminated), stdout and stderr captured into out_text / err_text. */
static int run(int fail, int nth, const char **args)
{
    char *argv[32];
    int argc = 0;
    for (; args[argc]; argc++)
        argv[argc] = (char *)args[argc];
    failing = fail, countdown = nth;
    fflush(stdout), fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    int fo = open("run_out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open("run_err.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(saved_out >= 0 && saved_err >= 0 && fo >= 0 && fe >= 0);
    dup2(fo, 1), dup2(fe, 2);
    int rc = cmd_run(argc, argv);
    fflush(stdout), fflush(stderr);
    dup2(saved_out, 1), dup2(saved_err, 2);
    close(fo), close(fe), close(saved_out), close(saved_err);
    slurp("run_out.txt", out_text, sizeof out_text);
    slurp("run_err.txt", err_text, sizeof err_text);
    CHECK_MSG(fail == NONE || countdown == 0, "the call to fail was made only %d of %d times", nth - countdown, nth);
    return rc;
}

static void expect_failure(int fail, int nth, const char **args, const char *call)
{
    int rc = run(fail, nth, args);
    CHECK_MSG(rc == 2, "%s failing (call %d): exit %d, stderr: %s", call, nth, rc, err_text);
    CHECK_MSG(out_text[0] == '\0', "%s failing (call %d): figures printed anyway:\n%s", call, nth, out_text);
    CHECK_STR_CONTAINS(err_text, "h5pack-stats run: ");
    CHECK_STR_CONTAINS(err_text, "errors.h5");
    CHECK_STR_CONTAINS(err_text, call);
    CHECK_STR_CONTAINS(err_text, "struct_size"); /* the library's own words about the rejected struct */
}

int main(void)
{
    /* 40 images in batches of 8: 5 batches, so 7 h5pack_stats_get calls (before, after each, at the end) */
    static const h5fix_file spec = {.n = 40, .c = 3, .h = 6, .w = 5, .k = 8, .labels = 1};
    CHECK_OK(h5fix_write("errors.h5", &spec));
    const char *text[] = {"errors.h5", "--batch", "8", "--device", "cpu", "--threads", "1", NULL};
    const char *json[] = {"errors.h5", "--batch", "8", "--device", "cpu", "--threads", "1", "--json", NULL};

    CHECK_EQ_INT(run(NONE, 0, text), 0); /* the wrappers pass calls through */
    CHECK_STR_CONTAINS(out_text, "total");
    CHECK_EQ_INT(run(NONE, 0, json), 0);
    CHECK_STR_CONTAINS(out_text, "\"samples\": 40");

    for (int j = 0; j < 2; j++) {
        const char **args = j ? json : text;
        expect_failure(INFO, 1, args, "h5pack_info_get");
        expect_failure(STATS, 1, args, "h5pack_stats_get"); /* the loop's starting counters */
        expect_failure(STATS, 4, args, "h5pack_stats_get"); /* after the third batch */
        expect_failure(STATS, 7, args, "h5pack_stats_get"); /* the final counters */
        expect_failure(RELEASE, 2, args, "h5pack_release");
    }
    printf("run error checks passed\n");
    return 0;
}
