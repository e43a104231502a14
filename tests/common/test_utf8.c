/* test_utf8.c - h5pack_utf8_sequence_len (common/utf8.h), which the converter's name escaping
 * and h5pack-stats' JSON rely on: every kind of valid sequence, and every kind of invalid one. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "utf8.h"

int main(void)
{
    static const struct {
        const char *bytes;
        size_t len;
    } cases[] = {
        {"a", 1}, {"\x7f", 1}, {"\xc2\x80", 2}, {"\xdf\xbf", 2}, {"\xe0\xa0\x80", 3}, {"\xed\x9f\xbf", 3},
        {"\xee\x80\x80", 3}, {"\xef\xbf\xbf", 3}, {"\xf0\x90\x80\x80", 4}, {"\xf4\x8f\xbf\xbf", 4},
        {"\xe6\x97\xa5\xe6\x9c\xac", 3},                   /* first of two CJK characters */
        {"\x80", 0}, {"\xbf", 0},                          /* stray continuation bytes */
        {"\xc0\xaf", 0}, {"\xc1\xbf", 0},                  /* overlong 2-byte forms */
        {"\xe0\x9f\xbf", 0}, {"\xf0\x8f\xbf\xbf", 0},      /* overlong 3- and 4-byte forms */
        {"\xed\xa0\x80", 0}, {"\xed\xbf\xbf", 0},          /* surrogates */
        {"\xf4\x90\x80\x80", 0}, {"\xf5\x80\x80\x80", 0},  /* beyond U+10FFFF */
        {"\xff", 0}, {"\xfe", 0},                          /* never in UTF-8 */
        {"\xc3", 0}, {"\xe2\x82", 0}, {"\xf0\x9f\x98", 0}, /* cut short by the end of the string */
        {"\xc3(", 0}, {"\xe2(\xa1", 0},                    /* a continuation byte missing */
        {"\xe9t\xe9", 0},                                  /* Latin-1 "ete" */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = h5pack_utf8_sequence_len((const unsigned char *)cases[i].bytes);
        CHECK_MSG(n == cases[i].len, "case %zu (first byte 0x%02x): length %zu, expected %zu", i,
                  (unsigned char)cases[i].bytes[0], n, cases[i].len);
    }
    printf("utf8: %zu cases ok\n", sizeof cases / sizeof cases[0]);
    return 0;
}
