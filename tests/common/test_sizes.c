/* test_sizes.c - the one size rule (common/sizes.h) on the shared table tests/common/sizes.txt
 * (the Python binding's test runs the same table), plus h5pack_parse_uint and h5pack_format_bytes.
 * Usage: test_sizes TABLE */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "h5pack.h"
#include "sizes.h"

/* One table row: RESULT "INPUT" (see the table's header). Returns 1 for a row, 0 for a comment or blank. */
static int parse_row(char *line, char **result, char **input)
{
    line[strcspn(line, "\n")] = '\0';
    if (line[0] == '#' || line[0] == '\0')
        return 0;
    char *open = strchr(line, '"'), *close = strrchr(line, '"');
    CHECK_MSG(open && close > open && open > line && open[-1] == ' ', "malformed table row: %s", line);
    open[-1] = '\0';
    *close = '\0';
    *result = line;
    *input = open + 1;
    return 1;
}

static void check_row(const char *result, const char *input, int line_no)
{
    uint64_t v = 12345;
    char why[200] = "";
    h5pack_size_status st = h5pack_parse_size(input, &v, why, sizeof why);
    uint64_t pub = 12345; /* the public face (h5pack_size_parse) must give the same answer */
    int pub_rc = h5pack_size_parse(input, &pub, NULL, 0);
    CHECK_MSG((pub_rc == H5PACK_OK) == (st == H5PACK_SIZE_OK) && pub == v, "line %d: \"%s\": h5pack_size_parse "
              "gave %d (%llu), the rule %s (%llu)", line_no, input, pub_rc, (unsigned long long)pub,
              h5pack_size_error_name(st), (unsigned long long)v);
    if (strncmp(result, "error:", 6) == 0) {
        CHECK_MSG(st != H5PACK_SIZE_OK, "line %d: \"%s\" accepted as %llu, expected %s", line_no, input,
                  (unsigned long long)v, result);
        CHECK_MSG(strcmp(h5pack_size_error_name(st), result + 6) == 0, "line %d: \"%s\" rejected as %s, expected %s",
                  line_no, input, h5pack_size_error_name(st), result);
        CHECK_MSG(why[0] != '\0', "line %d: \"%s\" rejected without words", line_no, input);
        CHECK_MSG(v == 12345, "line %d: \"%s\" rejected but the output was written", line_no, input);
        return;
    }
    char *end = NULL;
    unsigned long long want = strtoull(result, &end, 10);
    CHECK_MSG(end && *end == '\0' && end != result, "line %d: bad expected value %s", line_no, result);
    CHECK_MSG(st == H5PACK_SIZE_OK, "line %d: \"%s\" rejected (%s: %s), expected %llu", line_no, input,
              h5pack_size_error_name(st), why, want);
    CHECK_MSG(v == want, "line %d: \"%s\" = %llu, expected %llu", line_no, input, (unsigned long long)v, want);
}

static int run_table(const char *path)
{
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    char line[512], *result, *input;
    int rows = 0, errors = 0;
    for (int line_no = 1; fgets(line, sizeof line, f); line_no++) {
        if (!parse_row(line, &result, &input))
            continue;
        check_row(result, input, line_no);
        rows++;
        errors += strncmp(result, "error:", 6) == 0;
    }
    fclose(f);
    CHECK_MSG(rows >= 50 && errors >= 20, "only %d rows (%d errors) in %s", rows, errors, path);
    return rows;
}

static void test_messages(void)
{
    uint64_t v;
    char why[200];
    CHECK(h5pack_parse_size("64X", &v, why, sizeof why) == H5PACK_SIZE_SUFFIX);
    CHECK_STR_CONTAINS(why, "unknown suffix 'X'");
    CHECK_STR_CONTAINS(why, "K, M, G or T");
    CHECK(h5pack_parse_size("99999999999999999999", &v, why, sizeof why) == H5PACK_SIZE_OVERFLOW);
    CHECK_STR_CONTAINS(why, "too large");
    CHECK(h5pack_parse_size("-5", &v, why, sizeof why) == H5PACK_SIZE_NEGATIVE);
    CHECK_STR_CONTAINS(why, "negative");
    CHECK(h5pack_parse_size("1.5", &v, NULL, 0) == H5PACK_SIZE_FRACTION); /* WHY may be NULL */
    CHECK(h5pack_parse_size(NULL, &v, why, sizeof why) == H5PACK_SIZE_EMPTY);
}

static void test_uint(void)
{
    uint64_t v = 0;
    char why[200];
    CHECK_OK(h5pack_parse_uint("18446744073709551615", &v, why, sizeof why));
    CHECK_EQ_U64(v, UINT64_MAX);
    CHECK_OK(h5pack_parse_uint("0", &v, NULL, 0));
    CHECK_EQ_U64(v, 0);
    const char *bad[] = {"", "1K", "-1", "+1", " 1", "1 ", "1.0", "18446744073709551616", "0x1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        CHECK_MSG(h5pack_parse_uint(bad[i], &v, why, sizeof why) != 0, "h5pack_parse_uint accepted '%s'", bad[i]);
        CHECK_MSG(why[0] != '\0', "h5pack_parse_uint rejected '%s' without words", bad[i]);
    }
}

static void test_format(void)
{
    static const struct {
        uint64_t bytes;
        const char *text;
    } cases[] = {{0, "0 B"},
                 {1023, "1023 B"},
                 {1024, "1 KiB"},
                 {1536, "1.5 KiB"},
                 {150528, "147 KiB"},
                 {64ull << 20, "64 MiB"},
                 {3ull << 29, "1.5 GiB"},
                 {(2ull << 20) + (2ull << 20) / 8, "2.25 MiB"},
                 {12900000, "12.3 MiB"},
                 {1023ull << 10, "1023 KiB"},
                 {(1ull << 20) - 1, "1024 KiB"},
                 {2ull << 40, "2 TiB"},
                 {UINT64_MAX, "16 EiB"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[16];
        h5pack_format_bytes(cases[i].bytes, buf, sizeof buf);
        CHECK_MSG(strcmp(buf, cases[i].text) == 0, "h5pack_format_bytes(%llu) = \"%s\", expected \"%s\"",
                  (unsigned long long)cases[i].bytes, buf, cases[i].text);
        uint64_t back = 0; /* what it prints, the size rule reads back (to its precision) */
        char num[16];
        snprintf(num, sizeof num, "%s", buf);
        char *space = strchr(num, ' ');
        memmove(space, space + 1, strlen(space + 1) + 1); /* "1.5 KiB" -> "1.5KiB" */
        CHECK_MSG(h5pack_parse_size(num, &back, NULL, 0) == H5PACK_SIZE_OK || cases[i].bytes == UINT64_MAX,
                  "\"%s\" does not parse back", num);
    }
}

int main(int argc, char **argv)
{
    CHECK_MSG(argc == 2, "usage: test_sizes TABLE");
    int rows = run_table(argv[1]);
    test_messages();
    test_uint();
    test_format();
    printf("sizes: %d table rows ok\n", rows);
    return 0;
}
