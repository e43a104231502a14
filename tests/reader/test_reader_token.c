/* test_reader_token.c - h5pack_batch.token, the opaque name of a delivery: set by h5pack_next, cleared by
 * h5pack_release and by a next that delivers nothing; a batch released twice, a stale copy of an earlier
 * delivery (also one whose slot now holds a newer batch or echo), another reader's batch or a forged token
 * is refused with a message that says which, and leaves the batches really held releasable. */
#include <stdio.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

static char path[256];
static const h5fix_file spec = {.n = 48, .c = 1, .h = 4, .w = 4, .k = 8, .layout_attr = "NCHW", .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .pixel = h5fix_pixel_chw};

static h5pack_reader *open_reader(uint32_t echo)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = 8, c.threads = 1, c.prefetch = 2, c.epochs = 1, c.echo = echo;
    c.order = H5PACK_ORDER_SEQUENTIAL;
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, &c, &r);
    CHECK_MSG(rc == 0 && r, "open %s: %d %s", path, rc, h5pack_last_error(r));
    return r;
}

#define CHECK_REFUSED(r, batch, code, text)                      \
    do {                                                         \
        CHECK_EQ_INT(h5pack_release((r), (batch)), (code));      \
        CHECK_STR_CONTAINS(h5pack_last_error(r), (text));        \
    } while (0)

static void test_twice_and_stale(void)
{
    h5pack_reader *r = open_reader(1);
    h5pack_batch a = H5PACK_BATCH_INIT, b = H5PACK_BATCH_INIT;
    CHECK_OK(h5pack_next(r, &a));
    CHECK_OK(h5pack_next(r, &b));
    CHECK(a.token != 0 && b.token != 0 && a.token != b.token);
    h5pack_batch copy_a = a;
    CHECK_OK(h5pack_release(r, &a));
    CHECK(a.token == 0);
    CHECK_REFUSED(r, &a, H5PACK_ESTATE, "released already");      /* the same struct again */
    CHECK_REFUSED(r, &copy_a, H5PACK_ESTATE, "stale copy");       /* a copy made before the release */
    /* Batch 2 goes into batch 0's ring slot: a's stale copy must not release it. */
    h5pack_batch c = H5PACK_BATCH_INIT;
    CHECK_OK(h5pack_next(r, &c));
    CHECK_EQ_U64(c.index, 2);
    CHECK_REFUSED(r, &copy_a, H5PACK_ESTATE, "stale copy");
    /* A forged token: this reader's, in a slot the ring does not have. */
    h5pack_batch forged = c;
    forged.token |= 1023;
    CHECK_REFUSED(r, &forged, H5PACK_ESTATE, "stale copy");
    CHECK_OK(h5pack_release(r, &b));
    CHECK_OK(h5pack_release(r, &c)); /* still held after all the refusals */
    h5pack_close(r);
}

static void test_stale_echo(void)
{
    h5pack_reader *r = open_reader(2);
    h5pack_batch e = H5PACK_BATCH_INIT;
    CHECK_OK(h5pack_next(r, &e));
    CHECK(e.echo == 0);
    h5pack_batch first = e;
    CHECK_OK(h5pack_release(r, &e));
    CHECK_OK(h5pack_next(r, &e)); /* echo 1: the same slot and buffers, a new token */
    CHECK(e.echo == 1 && e.index == 0 && e.token != first.token);
    CHECK_REFUSED(r, &first, H5PACK_ESTATE, "stale copy");
    CHECK_OK(h5pack_release(r, &e));
    h5pack_close(r);
}

static void test_foreign(void)
{
    h5pack_reader *ra = open_reader(1), *rb = open_reader(1);
    h5pack_batch a = H5PACK_BATCH_INIT, b = H5PACK_BATCH_INIT;
    CHECK_OK(h5pack_next(ra, &a));
    CHECK_OK(h5pack_next(rb, &b));
    CHECK(a.token != b.token);
    uint64_t token_a = a.token;
    CHECK_REFUSED(rb, &a, H5PACK_EINVAL, "not from this reader");
    CHECK(a.token == token_a); /* a refused release changes nothing */
    CHECK_REFUSED(ra, &b, H5PACK_EINVAL, "not from this reader");
    h5pack_batch garbage = a;
    garbage.token = 0x0123456789abcdefull;
    CHECK_REFUSED(ra, &garbage, H5PACK_EINVAL, "not from this reader");
    CHECK_OK(h5pack_release(ra, &a));
    CHECK_OK(h5pack_release(rb, &b));
    h5pack_close(ra);
    h5pack_close(rb);
}

static void test_cleared_by_next(void)
{
    h5pack_reader *r = open_reader(1);
    h5pack_batch a = H5PACK_BATCH_INIT, b = H5PACK_BATCH_INIT, x = H5PACK_BATCH_INIT;
    CHECK_OK(h5pack_next(r, &a));
    CHECK_OK(h5pack_next(r, &b));
    CHECK_EQ_INT(h5pack_next(r, &x), H5PACK_ESTATE); /* prefetch = 2 batches held */
    CHECK(x.token == 0 && x.data == NULL && x.count == 0 && x.struct_size == sizeof x);
    CHECK_REFUSED(r, &x, H5PACK_ESTATE, "holds no delivery");
    CHECK_OK(h5pack_release(r, &a));
    CHECK_OK(h5pack_release(r, &b));
    int rc;
    uint64_t n = 0;
    while ((rc = h5pack_next(r, &x)) == H5PACK_OK) {
        n++;
        CHECK_OK(h5pack_release(r, &x));
    }
    CHECK_EQ_INT(rc, H5PACK_END);
    CHECK_EQ_U64(n, spec.n / 8 - 2);
    CHECK(x.token == 0 && x.data == NULL);
    CHECK_REFUSED(r, &x, H5PACK_ESTATE, "holds no delivery");
    CHECK_EQ_INT(h5pack_release(r, NULL), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "must not be NULL");
    h5pack_close(r);
}

int main(void)
{
    h5fix_local_name(path, sizeof path, "token");
    CHECK_OK(h5fix_write(path, &spec));
    test_twice_and_stale();
    test_stale_echo();
    test_foreign();
    test_cleared_by_next();
    remove(path);
    printf("reader token: all checks passed\n");
    return 0;
}
