/* sizes.c - see sizes.h. Exact integer arithmetic throughout (no strtod), so that the Python mirror,
 * which uses Python integers, gives the same value for every input. */
#include "errtext.h"
#include "sizes.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static h5pack_size_status reject(h5pack_size_status st, char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static h5pack_size_status reject(h5pack_size_status st, char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    h5pack_verrf(0, why, len, fmt, ap);
    va_end(ap);
    return st;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Decimal digits at *P into *V (advancing *P); -1 on overflow. */
static int take_digits(const char **p, uint64_t *v, int *count)
{
    *v = 0;
    *count = 0;
    for (; is_digit(**p); ++*p, ++*count) {
        unsigned d = (unsigned)(**p - '0');
        if (*v > (UINT64_MAX - d) / 10)
            return -1;
        *v = *v * 10 + d;
    }
    return 0;
}

static int is_b(const char *s)
{
    return (s[0] == 'b' || s[0] == 'B') && s[1] == '\0';
}

/* Power of 1024 of a unit suffix: "" or "B" 0, "K" "KB" "KiB" 1, ... "T..." 4 (any case); -1 unknown. */
static int unit_power(const char *s)
{
    static const char units[] = "kmgt";
    if (*s == '\0' || is_b(s))
        return 0;
    const char *u = strchr(units, lower(s[0])); /* s[0] is not NUL here: strchr would find the terminator */
    if (!u)
        return -1;
    const char *rest = s + 1;
    if (*rest == '\0' || is_b(rest) || (lower(rest[0]) == 'i' && is_b(rest + 1)))
        return (int)(u - units) + 1;
    return -1;
}

/* floor(NUM / 10^DIGITS * 2^SHIFT) for NUM < 10^DIGITS, by binary long division (no overflow). */
static uint64_t scaled_fraction(uint64_t num, int digits, unsigned shift)
{
    uint64_t den = 1, q = 0;
    for (int i = 0; i < digits; i++)
        den *= 10;
    for (unsigned i = 0; i < shift; i++) {
        num <<= 1;
        q <<= 1;
        if (num >= den) {
            num -= den;
            q |= 1;
        }
    }
    return q;
}

static h5pack_size_status check_start(const char *text, char *why, size_t len)
{
    if (!text || !*text)
        return reject(H5PACK_SIZE_EMPTY, why, len, "empty value");
    if (*text == '-')
        return reject(H5PACK_SIZE_NEGATIVE, why, len, "a negative number");
    if (!is_digit(*text))
        return reject(H5PACK_SIZE_SYNTAX, why, len, "not a number (no sign or space before the digits)");
    return H5PACK_SIZE_OK;
}

h5pack_size_status h5pack_parse_size(const char *text, uint64_t *out, char *why, size_t len)
{
    uint64_t whole = 0, frac = 0;
    int n_whole = 0, n_frac = 0;
    h5pack_size_status st = check_start(text, why, len);
    if (st != H5PACK_SIZE_OK)
        return st;
    const char *p = text;
    if (take_digits(&p, &whole, &n_whole) != 0)
        return reject(H5PACK_SIZE_OVERFLOW, why, len, "too large (the limit is 2^64-1)");
    if (*p == '.') {
        p++;
        if (!is_digit(*p))
            return reject(H5PACK_SIZE_SYNTAX, why, len, "expected digits after the decimal point");
        if (take_digits(&p, &frac, &n_frac) != 0 || n_frac > H5PACK_SIZE_MAX_DECIMALS)
            return reject(H5PACK_SIZE_FRACTION, why, len, "at most %d digits after the decimal point",
                          H5PACK_SIZE_MAX_DECIMALS);
    }
    int power = unit_power(p);
    if (power < 0)
        return reject(H5PACK_SIZE_SUFFIX, why, len,
                      "unknown suffix '%s' (use K, M, G or T, optionally followed by B or iB)", p);
    if (n_frac > 0 && power == 0)
        return reject(H5PACK_SIZE_FRACTION, why, len, "a fraction needs a unit (K, M, G or T)");
    unsigned shift = 10u * (unsigned)power;
    if (shift > 0 && whole > (UINT64_MAX >> shift))
        return reject(H5PACK_SIZE_OVERFLOW, why, len, "too large (the limit is 2^64-1)");
    uint64_t value = whole << shift, part = n_frac ? scaled_fraction(frac, n_frac, shift) : 0;
    if (value > UINT64_MAX - part)
        return reject(H5PACK_SIZE_OVERFLOW, why, len, "too large (the limit is 2^64-1)");
    *out = value + part;
    if (why && len)
        why[0] = '\0';
    return H5PACK_SIZE_OK;
}

int h5pack_parse_uint(const char *text, uint64_t *out, char *why, size_t len)
{
    uint64_t v = 0;
    int n = 0;
    const char *p = text;
    if (check_start(text, why, len) != H5PACK_SIZE_OK)
        return -1;
    if (take_digits(&p, &v, &n) != 0) {
        reject(H5PACK_SIZE_OVERFLOW, why, len, "too large (the limit is 2^64-1)");
        return -1;
    }
    if (*p != '\0') {
        reject(H5PACK_SIZE_SYNTAX, why, len, "not a whole number (digits only)");
        return -1;
    }
    *out = v;
    return 0;
}

const char *h5pack_size_error_name(h5pack_size_status status)
{
    static const char *const names[] = {"ok", "empty", "negative", "syntax", "suffix", "fraction", "overflow"};
    return (unsigned)status < sizeof names / sizeof names[0] ? names[status] : "unknown";
}

void h5pack_format_bytes(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    if (u == 0) {
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
        return;
    }
    char num[32];
    snprintf(num, sizeof num, "%.*f", v < 10 ? 2 : v < 100 ? 1 : 0, v);
    char *dot = strchr(num, '.');
    if (dot) { /* "1.50" -> "1.5", "64.0" -> "64" */
        char *end = num + strlen(num);
        while (end > dot && (end[-1] == '0' || end[-1] == '.'))
            *--end = '\0';
    }
    snprintf(buf, len, "%s %s", num, units[u]);
}
