/* store_s3_sign.c - AWS Signature Version 4 for S3 requests (store_s3.h), as AWS documents it
 * ("Signature Calculations for the Authorization Header"): a canonical request, its SHA-256 in a string
 * to sign, and an HMAC-SHA256 with a key derived from the secret, the date, the region and the service. */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_s3.h"

int h5pack_s3_uri_encode(const char *in, int keep_slash, char *out, size_t out_len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
        int plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                    *p == '.' || *p == '_' || *p == '~' || (keep_slash && *p == '/');
        if (o + (plain ? 1 : 3) >= out_len)
            return -1;
        if (plain) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%', out[o++] = hex[*p >> 4], out[o++] = hex[*p & 15];
        }
    }
    if (o >= out_len)
        return -1;
    out[o] = 0;
    return 0;
}

static void to_hex(const unsigned char *md, unsigned n, char *out)
{
    for (unsigned i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", md[i]);
}

static int sha256_hex(const char *data, size_t len, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL))
        return -1;
    to_hex(md, n, out);
    return 0;
}

/* OUT (32 bytes) = HMAC-SHA256(KEY, DATA). */
static int hmac(const unsigned char *key, size_t key_len, const char *data, unsigned char out[32])
{
    unsigned n = 0;
    return HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)data, strlen(data), out, &n) && n == 32 ? 0
                                                                                                                : -1;
}

/* The signing key: HMAC chained over the date, the region, "s3" and "aws4_request". */
static int signing_key(const char *secret, const char *date, const char *region, unsigned char key[32])
{
    char first[300];
    if (snprintf(first, sizeof first, "AWS4%s", secret) >= (int)sizeof first)
        return -1;
    unsigned char k1[32], k2[32], k3[32];
    return hmac((const unsigned char *)first, strlen(first), date, k1) || hmac(k1, 32, region, k2) ||
                   hmac(k2, 32, "s3", k3) || hmac(k3, 32, "aws4_request", key)
               ? -1
               : 0;
}

/* METHOD\nPATH\nQUERY\nname:value\n...\n\nsigned;names\nPAYLOAD into a new string; the names into SIGNED. */
static char *canonical_request(const char *method, const char *path, const char *query, const s3_header *h, int n,
                               const char *payload, char *signed_names, size_t signed_len)
{
    size_t len = strlen(method) + strlen(path) + strlen(query) + strlen(payload) + 8;
    for (int i = 0; i < n; i++) /* "name:value\n", and "name;" in the signed names */
        len += 2 * strlen(h[i].name) + strlen(h[i].value) + 3;
    char *out = malloc(len);
    if (!out)
        return NULL;
    size_t o = (size_t)sprintf(out, "%s\n%s\n%s\n", method, path, query), s = 0;
    signed_names[0] = 0;
    for (int i = 0; i < n; i++) {
        o += (size_t)sprintf(out + o, "%s:%s\n", h[i].name, h[i].value);
        s += (size_t)snprintf(signed_names + s, signed_len - s, "%s%s", i ? ";" : "", h[i].name);
        if (s >= signed_len) {
            free(out);
            return NULL;
        }
    }
    sprintf(out + o, "\n%s\n%s", signed_names, payload);
    return out;
}

int h5pack_s3_sign(const s3_creds *c, const char *region, const char *method, const char *path, const char *query,
                   const s3_header *h, int n, const char *payload_sha256, const char *amz_date, char *out,
                   size_t out_len)
{
    char signed_names[256], request_hash[65], date[9], scope[128], to_sign[320], sig[65];
    char *request = canonical_request(method, path, query, h, n, payload_sha256, signed_names, sizeof signed_names);
    if (!request)
        return -1;
    int rc = sha256_hex(request, strlen(request), request_hash);
    free(request);
    snprintf(date, sizeof date, "%.8s", amz_date);
    snprintf(scope, sizeof scope, "%s/%s/s3/aws4_request", date, region);
    snprintf(to_sign, sizeof to_sign, "AWS4-HMAC-SHA256\n%s\n%s\n%s", amz_date, scope, request_hash);
    unsigned char key[32], mac[32];
    if (rc || signing_key(c->secret, date, region, key) || hmac(key, 32, to_sign, mac))
        return -1;
    to_hex(mac, 32, sig);
    int w = snprintf(out, out_len, "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s", c->key_id,
                     scope, signed_names, sig);
    return w > 0 && (size_t)w < out_len ? 0 : -1;
}
