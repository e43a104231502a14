/* utf8.c - see utf8.h (RFC 3629, section 4). */
#include "utf8.h"

size_t h5pack_utf8_sequence_len(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    size_t n = p[0] >= 0xC2 && p[0] <= 0xDF   ? 2
               : p[0] >= 0xE0 && p[0] <= 0xEF ? 3
               : p[0] >= 0xF0 && p[0] <= 0xF4 ? 4
                                              : 0; /* 0x80..0xC1: continuation or overlong lead; 0xF5..: none */
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0; /* also stops at a NUL, so nothing past the end is read */
    if ((n == 3 && p[0] == 0xE0 && p[1] < 0xA0) || (n == 3 && p[0] == 0xED && p[1] >= 0xA0))
        return 0; /* overlong, surrogate */
    if ((n == 4 && p[0] == 0xF0 && p[1] < 0x90) || (n == 4 && p[0] == 0xF4 && p[1] >= 0x90))
        return 0; /* overlong, beyond U+10FFFF */
    return n;
}
