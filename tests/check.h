/* check.h - tiny assertion helpers for the C tests: on failure they print the expression, both values
 * and the place, and exit 1 (ctest then reports the test as failed). Header only. */
#ifndef H5PACK_CHECK_H
#define H5PACK_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_FAIL_(...)                                                    \
    do {                                                                    \
        fprintf(stderr, "%s:%d: check failed: ", __FILE__, __LINE__);       \
        fprintf(stderr, __VA_ARGS__);                                       \
        fputc('\n', stderr);                                                \
        exit(1);                                                            \
    } while (0)

#define CHECK(cond)                                  \
    do {                                             \
        if (!(cond))                                 \
            CHECK_FAIL_("%s", #cond);                \
    } while (0)

#define CHECK_MSG(cond, ...)                          \
    do {                                              \
        if (!(cond))                                  \
            CHECK_FAIL_(__VA_ARGS__);                 \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                    \
    do {                                                                                      \
        long long a_ = (long long)(a), b_ = (long long)(b);                                   \
        if (a_ != b_)                                                                         \
            CHECK_FAIL_("%s == %s (%lld vs %lld)", #a, #b, a_, b_);                           \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                                    \
    do {                                                                                      \
        uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                      \
        if (a_ != b_)                                                                         \
            CHECK_FAIL_("%s == %s (%" PRIu64 " vs %" PRIu64 ")", #a, #b, a_, b_);             \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                 \
    do {                                                                                      \
        double a_ = (double)(a), b_ = (double)(b);                                            \
        if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol)))                                          \
            CHECK_FAIL_("%s ~= %s (%.9g vs %.9g, tol %g)", #a, #b, a_, b_, (double)(tol));    \
    } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                                        \
    do {                                                                                      \
        const char *h_ = (hay), *n_ = (needle);                                               \
        if (!h_ || !strstr(h_, n_))                                                           \
            CHECK_FAIL_("\"%s\" contains \"%s\"", h_ ? h_ : "(null)", n_);                     \
    } while (0)

/* Rc of an h5pack call: 0 expected. */
#define CHECK_OK(expr)                                                                        \
    do {                                                                                      \
        int rc_ = (expr);                                                                     \
        if (rc_ != 0)                                                                         \
            CHECK_FAIL_("%s returned %d", #expr, rc_);                                        \
    } while (0)

/* Prints the skip line ctest recognises (SKIP_RETURN_CODE 77 must be set on the test). */
#define SKIP_TEST(why)                                  \
    do {                                                \
        printf("skipped: %s\n", why);                   \
        exit(77);                                       \
    } while (0)

#endif
