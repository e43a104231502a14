/* test_csv_reader.c - the CSV dialect of --labels (convert/labels/csv_reader.h) field by field: quotes, doubled
 * quotes, line breaks inside quotes (line numbers still count them), LF / CRLF / lone CR, BOM, blank and
 * space-only lines, trimming, trailing empty fields; and the errors with their line. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "csv_reader.h"

/* Reads TEXT and compares with the records in WANT ("|"-separated fields, "@L " prefix = start line). */
static void expect(const char *text, const char *const *want, size_t n_want)
{
    csv_reader r;
    csv_record rec;
    char err[256], got[512];
    size_t n = 0;
    int rc;
    csv_open(&r, text, strlen(text));
    while ((rc = csv_next(&r, &rec, err, sizeof err)) == 1) {
        size_t len = (size_t)snprintf(got, sizeof got, "@%zu ", rec.line);
        for (size_t i = 0; i < rec.n_fields; i++)
            len += (size_t)snprintf(got + len, sizeof got - len, "%s%s", i ? "|" : "", rec.fields[i]);
        CHECK_MSG(n < n_want && strcmp(got, want[n]) == 0, "record %zu: got [%s], expected [%s]", n, got,
                  n < n_want ? want[n] : "(none)");
        n++;
    }
    CHECK_MSG(rc == 0, "error: %s", err);
    CHECK_EQ_U64(n, n_want);
    csv_close(&r);
}

static void expect_error(const char *text, const char *what)
{
    csv_reader r;
    csv_record rec;
    char err[256] = "";
    int rc;
    csv_open(&r, text, strlen(text));
    while ((rc = csv_next(&r, &rec, err, sizeof err)) == 1)
        ;
    CHECK_EQ_INT(rc, -1);
    CHECK_STR_CONTAINS(err, what);
    printf("ok: error '%s'\n", err);
    csv_close(&r);
}

int main(void)
{
    const char *quotes[] = {"@1 id|a b|c", "@2 x, y|say \"hi\"|", "@3 multi\nline|2|3", "@6 z|4|5"};
    expect("id, a b ,c\n\"x, y\",\"say \"\"hi\"\"\",\n\"multi\nline\",2,3\n  \nz,4,5", quotes, 4);
    const char *ends[] = {"@1 a|b", "@2 1|2", "@4 3|4", "@5 5|6"};
    expect("\xEF\xBB\xBF" "a,b\r\n1,2\r\n\r\n3,4\r5,6\r\n", ends, 4);
    const char *quoted_empty[] = {"@1 h", "@2 ", "@3 |"};
    expect("h\n\"\"\n,\n", quoted_empty, 3);
    const char *crlf_in_quotes[] = {"@1 \"a\r\nb\"|c", "@3 d|e"};
    expect("\"\"\"a\r\nb\"\"\",c\r\nd,e", crlf_in_quotes, 2);
    printf("ok: records and fields\n");
    expect_error("a,b\n\"x,1\n2,3\n", "line 2: unterminated quoted field");
    expect_error("a,b\n\"x\"y,1\n", "line 2: text after a closing quote");
    static const char nul[] = {'a', ',', 'b', '\n', 'x', '\0', ',', '1', '\n'};
    csv_reader r;
    csv_record rec;
    char err[128] = "";
    csv_open(&r, nul, sizeof nul);
    CHECK_EQ_INT(csv_next(&r, &rec, err, sizeof err), 1);
    CHECK_EQ_INT(csv_next(&r, &rec, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "line 2: NUL byte");
    csv_close(&r);
    printf("ok: errors name their line\n");
    return 0;
}
