/* The s3:// store's parts that need no server (reader/store/store_s3.h): AWS Signature Version 4 on AWS's
 * own published example (S3 documentation, "Signature Calculations for the Authorization Header": GET
 * Object), the URI encoding of keys, and where the credentials come from (environment, a profile of a
 * credentials file, anonymous), with the refusals of half a key pair and of a missing profile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "h5pack.h"
#include "store_s3.h"

static void aws_example(void)
{
    s3_creds c = {0};
    strcpy(c.key_id, "AKIAIOSFODNN7EXAMPLE");
    strcpy(c.secret, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
    s3_header h[] = {{"host", "examplebucket.s3.amazonaws.com"},
                     {"range", "bytes=0-9"},
                     {"x-amz-content-sha256", S3_EMPTY_SHA256},
                     {"x-amz-date", "20130524T000000Z"}};
    char auth[512];
    CHECK_EQ_INT(h5pack_s3_sign(&c, "us-east-1", "GET", "/test.txt", "", h, 4, S3_EMPTY_SHA256, "20130524T000000Z",
                                auth, sizeof auth), 0);
    const char *want = "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                       "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                       "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41";
    CHECK_MSG(!strcmp(auth, want), "signature:\n  got  %s\n  want %s", auth, want);
    CHECK_EQ_INT(h5pack_s3_sign(&c, "us-east-1", "GET", "/test.txt", "", h, 4, S3_EMPTY_SHA256, "20130524T000000Z",
                                auth, 40), -1); /* too small a buffer is refused, not cut */
}

static void uri_encoding(void)
{
    char out[64];
    CHECK_EQ_INT(h5pack_s3_uri_encode("a b/c+d~e_f.h5", 1, out, sizeof out), 0);
    CHECK_MSG(!strcmp(out, "a%20b/c%2Bd~e_f.h5"), "%s", out);
    CHECK_EQ_INT(h5pack_s3_uri_encode("a/b", 0, out, sizeof out), 0);
    CHECK_MSG(!strcmp(out, "a%2Fb"), "%s", out);
    CHECK_EQ_INT(h5pack_s3_uri_encode("\xc3\xa9", 1, out, sizeof out), 0); /* UTF-8 bytes each encoded */
    CHECK_MSG(!strcmp(out, "%C3%A9"), "%s", out);
    CHECK_EQ_INT(h5pack_s3_uri_encode("abcdef", 1, out, 6), -1);
}

static void clear_env(void)
{
    const char *names[] = {"AWS_NO_SIGN_REQUEST", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                           "AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unsetenv(names[i]);
}

static void credentials(void)
{
    s3_creds c;
    char err[512];
    clear_env();
    setenv("HOME", "/nonexistent-h5pack-home", 1);
    CHECK_EQ_INT(h5pack_s3_creds_find(&c, err, sizeof err), 0);
    CHECK(c.anonymous && strstr(c.source, "anonymous"));

    setenv("AWS_ACCESS_KEY_ID", "AKIAENV", 1);
    CHECK_EQ_INT(h5pack_s3_creds_find(&c, err, sizeof err), H5PACK_EINVAL); /* half a pair */
    CHECK_STR_CONTAINS(err, "AWS_SECRET_ACCESS_KEY");
    setenv("AWS_SECRET_ACCESS_KEY", "secret-env", 1);
    setenv("AWS_SESSION_TOKEN", "token-env", 1);
    CHECK_EQ_INT(h5pack_s3_creds_find(&c, err, sizeof err), 0);
    CHECK(!c.anonymous && !strcmp(c.key_id, "AKIAENV") && !strcmp(c.secret, "secret-env"));
    CHECK(!strcmp(c.token, "token-env") && strstr(c.source, "environment") && !strstr(c.source, "secret-env"));
    setenv("AWS_NO_SIGN_REQUEST", "true", 1);
    CHECK_EQ_INT(h5pack_s3_creds_find(&c, err, sizeof err), 0);
    CHECK(c.anonymous && strstr(c.source, "AWS_NO_SIGN_REQUEST"));

    clear_env();
    const char *path = "s3_sign_credentials";
    FILE *f = fopen(path, "w");
    CHECK(f);
    fputs("# a comment\n[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key=secret-default\n\n"
          "[train]\n  aws_access_key_id=AKIATRAIN  \naws_secret_access_key = secret train\naws_session_token = tok\n",
          f);
    fclose(f);
    setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
    CHECK_EQ_INT(h5pack_s3_creds_find(&c, err, sizeof err), 0);
    CHECK(!strcmp(c.key_id, "AKIADEFAULT") && !strcmp(c.secret, "secret-default") && !c.token[0]);
    CHECK(strstr(c.source, "[default]") && strstr(c.source, path));
    setenv("AWS_PROFILE", "train", 1);
    CHECK_EQ_INT(h5pack_s3_creds_find(&c, err, sizeof err), 0);
    CHECK(!strcmp(c.key_id, "AKIATRAIN") && !strcmp(c.secret, "secret train") && !strcmp(c.token, "tok"));
    setenv("AWS_PROFILE", "nope", 1);
    CHECK_EQ_INT(h5pack_s3_creds_find(&c, err, sizeof err), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(err, "AWS_PROFILE=nope");
    remove(path);
    clear_env();
}

int main(void)
{
    aws_example();
    uri_encoding();
    credentials();
    printf("s3 signing: AWS's example signature, URI encoding and the credentials' sources\n");
    return 0;
}
