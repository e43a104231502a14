/* test_sep_table.c - --labels-sep and --labels-skip below the command line: the CSV reader in every
 * separator mode (quoting in comma / semicolon / tab, blank runs and literal quotes in space mode, empty
 * tab fields, line skipping), the label table's layouts (header naming the image column or the label
 * columns only, CelebA's count line), the .tsv default, the errors with FILE:LINE[:COL], and the option
 * parser's --labels-sep / --labels-skip values. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "csv_labels.h"
#include "csv_reader.h"
#include "options.h"

/* Reads TEXT with SEP after skipping SKIP lines; compares with WANT ("|"-joined fields, "@L " = line). */
static void expect(char sep, size_t skip, const char *text, const char *const *want, size_t n_want)
{
    csv_reader r;
    csv_record rec;
    char err[256] = "", got[512];
    size_t n = 0;
    int rc;
    csv_open_sep(&r, text, strlen(text), sep);
    CHECK_EQ_U64(csv_skip_lines(&r, skip), skip);
    while ((rc = csv_next(&r, &rec, err, sizeof err)) == 1) {
        size_t len = (size_t)snprintf(got, sizeof got, "@%zu ", rec.line);
        for (size_t i = 0; i < rec.n_fields; i++)
            len += (size_t)snprintf(got + len, sizeof got - len, "%s%s", i ? "|" : "", rec.fields[i]);
        CHECK_MSG(n < n_want && strcmp(got, want[n]) == 0, "%s record %zu: got [%s], expected [%s]",
                  csv_sep_name(sep), n, got, n < n_want ? want[n] : "(none)");
        n++;
    }
    CHECK_MSG(rc == 0, "%s: error: %s", csv_sep_name(sep), err);
    CHECK_EQ_U64(n, n_want);
    csv_close(&r);
}

static void reader_modes(void)
{
    const char *semi[] = {"@1 id|a;b|c", "@2 x, y|say \"hi\"|", "@3 multi\nline|1,5|"};
    expect(';', 0, "id; \"a;b\" ;c\n\"x, y\";\"say \"\"hi\"\"\";\n\"multi\nline\";1,5;", semi, 3);
    const char *tab[] = {"@1 id|a b||c", "@2 q\tt|1|2|3", "@4 |||"};
    expect('\t', 0, "id\t a b \t\tc\r\n\"q\tt\"\t1\t2\t3\r\n  \r\n\t\t\t\n", tab, 3);
    const char *blanks[] = {"@2 A|B", "@3 x.jpg|-1|1", "@5 \"q|r\"|1,2"};
    expect(CSV_SEP_BLANKS, 1, "9\n  A\t B  \r\nx.jpg -1  1 \r\n \t \n\"q r\" 1,2", blanks, 3);
    const char *cr_only[] = {"@3 c", "@4 a|b", "@5 1|2"}; /* skipped lines are not parsed: no quote */
    expect(',', 2, "skip,me\r\"not a quote\rc\ra,b\r1,2\r", cr_only, 3);
    csv_reader r;
    csv_open_sep(&r, "one\ntwo", 7, CSV_SEP_BLANKS);
    CHECK_EQ_U64(csv_skip_lines(&r, 5), 2); /* the last line has no line break and still counts */
    csv_close(&r);
    CHECK(strcmp(csv_sep_name(';'), "semicolon") == 0 && strcmp(csv_sep_name(CSV_SEP_BLANKS), "space") == 0);
    printf("ok: records in every separator mode\n");
}

static void parse_ok(const char *path, const char *text, const label_csv_format *fmt, label_table *t)
{
    char err[512] = "";
    int rc = label_table_parse(path, text, strlen(text), fmt, t, err, sizeof err);
    CHECK_MSG(rc == 0, "%s: %s", path, err);
}

static void parse_fails(const char *path, const char *text, const label_csv_format *fmt, const char *want)
{
    char err[512] = "";
    label_table t;
    CHECK_EQ_INT(label_table_parse(path, text, strlen(text), fmt, &t, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, want);
    CHECK(t.names == NULL && t.keys == NULL && t.n_rows == 0); /* nothing left to free */
    printf("ok: %s\n", err);
}

static void table_layouts(void)
{
    label_table t;
    /* CelebA's list_attr_celeba.txt: a count line, 40-wide header of names only, rows of 41 fields. */
    const label_csv_format celeba = {.sep = CSV_SEP_BLANKS, .skip_lines = 1};
    parse_ok("list_attr.txt", "2\nSmiling Young \n000001.jpg -1  1\n000002.jpg  1 -1\n", &celeba, &t);
    CHECK_EQ_U64(t.n_columns, 2);
    CHECK_EQ_U64(t.n_rows, 2);
    CHECK(strcmp(t.key_name, "") == 0 && strcmp(t.names[0], "Smiling") == 0 && strcmp(t.names[1], "Young") == 0);
    CHECK(strcmp(t.keys[1], "000002.jpg") == 0 && t.values[2].i == 1 && t.values[3].i == -1);
    CHECK_EQ_U64(t.lines[1], 4);
    CHECK(t.min == -1 && t.max == 1 && t.sep == CSV_SEP_BLANKS);
    label_table_free(&t);
    /* The same short header in comma mode, and a one-column table of it. */
    parse_ok("short.csv", "a\nx.jpg,0.5\ny.jpg,2\n", NULL, &t);
    CHECK(t.n_columns == 1 && t.is_float && t.values[1].f == 2.0 && strcmp(t.names[0], "a") == 0);
    label_table_free(&t);
    /* .tsv reads tab-separated unless told otherwise; quoting still works there. */
    parse_ok("set.TSV", "file\tv w\n\"a\tb.jpg\"\t3\n", NULL, &t);
    CHECK(t.sep == '\t' && strcmp(t.key_name, "file") == 0 && strcmp(t.names[0], "v w") == 0);
    CHECK(strcmp(t.keys[0], "a\tb.jpg") == 0 && t.values[0].i == 3);
    label_table_free(&t);
    const label_csv_format comma = {.sep = ','};
    parse_fails("forced.tsv", "file\tv\na.jpg\t3\n", &comma, "forced.tsv:1: the header needs the image column");
    parse_ok("semi.csv", "file;a;b\n\"x;1.jpg\";1;2\n", &(label_csv_format){.sep = ';'}, &t);
    CHECK(strcmp(t.keys[0], "x;1.jpg") == 0 && t.values[1].i == 2);
    label_table_free(&t);
    printf("ok: table layouts\n");
}

static void table_errors(void)
{
    const label_csv_format sp = {.sep = CSV_SEP_BLANKS}, sp1 = {.sep = CSV_SEP_BLANKS, .skip_lines = 1};
    parse_fails("c.txt", "3\nA B C\nx.jpg 1 1 1\ny.jpg 1 1\n", &sp1,
                "c.txt:4: 3 fields, but rows have 4: the image name, then the 3 label columns that the header "
                "(line 2) names (separator: space)");
    parse_fails("c.txt", "3\nA B C\nx.jpg 1 1 1\n", &sp,
                "c.txt:2: 3 fields, but the header has 1 (a row has as many fields as the header, or one more "
                "when the header names the label columns only; separator: space); is the header line a row "
                "count? --labels-skip 1 skips it");
    parse_fails("c.txt", "A B\nx.jpg 1 1 1 1\n", &sp, "c.txt:2: 5 fields, but the header has 2");
    parse_fails("c.csv", "id,A,B\nx.jpg,1,1\n\ny.jpg,1\n", NULL, "c.csv:4: 2 fields, but the header has 3 (separator: comma)");
    parse_fails("c.txt", "A A\nx.jpg 1 1\n", &sp, "c.txt:1:2: column name 'A' appears twice (columns 1 and 2)");
    parse_fails("c.csv", "id,B,A,B\nx.jpg,1,1,1\n", NULL, "c.csv:1:4: column name 'B' appears twice (columns 2 and 4)");
    parse_fails("c.csv", "A,,C\nx.jpg,1,1,1\n", NULL, "c.csv:1:2: label column 2 has no name");
    parse_fails("c.txt", "A B\nx.jpg 1 yes\n", &sp, "c.txt:2:3: column 'B': not a number: 'yes'");
    parse_fails("c.csv", "f;a\nx.jpg;0,5\n", &(label_csv_format){.sep = ';'}, "c.csv:2:2: column 'a': not a number: "
                "'0,5' (expected an integer such as 1 or -1, or a decimal such as 0.25, with a decimal point, not a comma)");
    parse_fails("c.txt", "1\n2\n", &(label_csv_format){.sep = CSV_SEP_BLANKS, .skip_lines = 3},
                "c.txt: --labels-skip 3, but the file has only 2 lines");
    parse_fails("c.txt", "count\n\n", &sp1, "c.txt: empty file");
    parse_fails("c.txt", "1\nA B\n", &sp1, "c.txt: no rows under the header");
    parse_fails("c.tsv", "f\tA\nx.jpg\t\"1\n", NULL, "c.tsv:2: unterminated quoted field");
}

static void options(void)
{
    char err[256];
    struct { const char *arg; char sep; } ok[] = {{",", ','}, {"comma", ','}, {";", ';'}, {"semicolon", ';'},
                                                {"tab", '\t'}, {"\t", '\t'}, {"\\t", '\t'}, {"space", ' '}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        pack_options o = PACK_OPTIONS_DEFAULTS;
        char *argv[] = {"h5pack", "--labels", "a.txt", "--labels-sep", (char *)ok[i].arg, "--labels-skip=1", "s", "o"};
        CHECK_EQ_INT(options_parse(8, argv, &o, err, sizeof err), OPTIONS_RUN);
        CHECK(o.labels_sep == ok[i].sep && o.labels_skip == 1);
    }
    pack_options o = PACK_OPTIONS_DEFAULTS;
    char *bad[] = {"h5pack", "--labels", "a.txt", "--labels-sep", "|", "s", "o"};
    CHECK_EQ_INT(options_parse(7, bad, &o, err, sizeof err), OPTIONS_ERROR);
    CHECK_STR_CONTAINS(err, "--labels-sep: expected , ; tab or space, got '|'");
    pack_options o2 = PACK_OPTIONS_DEFAULTS;
    char *alone[] = {"h5pack", "--labels-sep", "tab", "s", "o"};
    CHECK_EQ_INT(options_parse(5, alone, &o2, err, sizeof err), OPTIONS_ERROR);
    CHECK_STR_CONTAINS(err, "--labels-sep needs --labels FILE");
    pack_options o3 = PACK_OPTIONS_DEFAULTS;
    char *neg[] = {"h5pack", "--labels", "a.txt", "--labels-skip", "-1", "s", "o"};
    CHECK_EQ_INT(options_parse(7, neg, &o3, err, sizeof err), OPTIONS_ERROR);
    CHECK_STR_CONTAINS(err, "--labels-skip");
    printf("ok: --labels-sep and --labels-skip options\n");
}

int main(void)
{
    reader_modes();
    table_layouts();
    table_errors();
    options();
    return 0;
}
