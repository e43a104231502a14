/* test_reader_stall.c - stall_s is the time h5pack_next() kept the consumer waiting for data, including
 * the echo conversions the CPU backend runs inside h5pack_next() (left out, a run with --echo on the CPU
 * would report a stall fraction near 0 while next() took much of the loop). */
#include <unistd.h>

#include <time.h>

#include "clock.h"
#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

int main(void)
{
    char path[256];
    h5fix_local_name(path, sizeof path, "stall");
    const h5fix_file spec = {.n = 128, .c = 3, .h = 64, .w = 64, .k = 16, .layout_attr = "NCHW", .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .pixel = h5fix_pixel_chw};
    CHECK_OK(h5fix_write(path, &spec));

    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = 32, c.threads = 1, c.prefetch = 4, c.echo = 4, c.epochs = 1;
    c.random_flip = 1; /* every echo is a real conversion */
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, &c, &r);
    CHECK_MSG(rc == 0, "open %s: %s", path, h5pack_last_error(r));

    h5pack_batch b = H5PACK_BATCH_INIT;
    h5pack_stats st = H5PACK_STATS_INIT;
    CHECK_OK(h5pack_next(r, &b)); /* the first batch's wait (worker start-up) is left out below */
    CHECK_OK(h5pack_release(r, &b));
    CHECK_OK(h5pack_stats_get(r, &st));
    double stall0 = st.stall_s, before = st.stall_s, in_next = 0, ratio[64];
    size_t n_echo = 0;
    for (;;) {
        double t0 = h5pack_clock_s();
        rc = h5pack_next(r, &b);
        double dt = h5pack_clock_s() - t0;
        if (rc == H5PACK_END)
            break;
        CHECK_OK(rc);
        in_next += dt;
        CHECK_OK(h5pack_stats_get(r, &st));
        if (b.echo > 0 && n_echo < 64 && dt > 0) /* share of this call counted as stall */
            ratio[n_echo++] = (st.stall_s - before) / dt;
        before = st.stall_s;
        if (b.echo == 0)
            sleep_ms(20); /* a slow training step: the next fresh batch is ready when asked for */
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_OK(h5pack_stats_get(r, &st));
    CHECK_EQ_U64(st.batches_echoed, 3 * st.batches_fresh);
    CHECK_MSG(n_echo >= 9, "only %zu timed echo deliveries", n_echo);
    /* An echo's next() is nearly all conversion: most of its time must be stall. The median keeps a
     * rare preemption outside the conversion (a loaded CI machine) from deciding. */
    for (size_t i = 1; i < n_echo; i++) /* insertion sort */
        for (size_t j = i; j > 0 && ratio[j] < ratio[j - 1]; j--) {
            double t = ratio[j];
            ratio[j] = ratio[j - 1], ratio[j - 1] = t;
        }
    CHECK_MSG(ratio[n_echo / 2] >= 0.5, "median echo delivery: only %.3f of its time in next() counted as stall",
              ratio[n_echo / 2]);
    /* and stall is time in next(), never more */
    double stall = st.stall_s - stall0;
    CHECK_MSG(stall <= in_next + 1e-3, "stall %.6f s exceeds the %.6f s spent in next()", stall, in_next);
    h5pack_close(r);
    unlink(path);
    return 0;
}
