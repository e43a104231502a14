/* store_s3.h - the parts of the s3:// store (store_s3.c) that stand alone: finding the credentials
 * (store_s3_creds.c) and AWS Signature Version 4 (store_s3_sign.c, HMAC-SHA256 from OpenSSL's libcrypto).
 *
 * Why not curl's own signer (CURLOPT_AWS_SIGV4): which headers it adds and signs for S3 changed across
 * the 7.8x releases (x-amz-content-sha256, which S3 requires, came later: curl issue 8810), and a session
 * token would be a header of ours that it may or may not sign; the result would depend on the libcurl
 * found at run time, and could only be checked against a server. This one is a pure
 * function of its inputs, tested on AWS's own example (tests/remote/test_s3_sign.c). */
#ifndef H5PACK_STORE_STORE_S3_H
#define H5PACK_STORE_STORE_S3_H

#include <stddef.h>

/* SHA-256 of the empty payload: what every GET and HEAD signs. */
#define S3_EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

typedef struct s3_creds {
    int anonymous;      /* 1: requests go unsigned */
    char key_id[128];
    char secret[256];
    char token[4096];   /* session token, "" without */
    char source[320];   /* where they came from, for messages (never the secret) */
} s3_creds;

/* The credentials the AWS tools would use, in their order: AWS_NO_SIGN_REQUEST=1 (anonymous), then
 * AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN), then profile AWS_PROFILE (default
 * "default") of AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials), else anonymous. 0, or EINVAL
 * (half a key pair, or AWS_PROFILE naming a profile that is not there) with the reason in ERR. */
int h5pack_s3_creds_find(s3_creds *c, char *err, size_t err_len);

/* AWS's URI encoding of IN: every byte but A-Z a-z 0-9 - . _ ~ (and '/' when KEEP_SLASH) as %XX. 0, or
 * -1 when OUT is too small. */
int h5pack_s3_uri_encode(const char *in, int keep_slash, char *out, size_t out_len);

/* One header of a request to sign: NAME lower case; the list sorted by name. */
typedef struct s3_header {
    const char *name, *value;
} s3_header;

/* The Authorization header's value for a request signed with C's key: METHOD, the canonical PATH (URI
 * encoded) and QUERY, the headers H[0..N) (host and x-amz-date among them), the payload's SHA-256 in hex,
 * at AMZ_DATE ("20130524T000000Z") in REGION, service "s3". 0, or -1 (OUT too small, libcrypto failed). */
int h5pack_s3_sign(const s3_creds *c, const char *region, const char *method, const char *path, const char *query,
                   const s3_header *h, int n, const char *payload_sha256, const char *amz_date, char *out,
                   size_t out_len);

#endif
