/* store_s3_creds.c - the credentials of the s3:// store, found where the AWS tools look (store_s3.h).
 * Not covered: instance roles (IMDS), SSO, web identity, credential_process; export their keys as
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN (docs/reader.md). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "errtext.h"
#include "h5pack.h"
#include "store_s3.h"

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* S without the white space around it (in place). */
static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = 0;
    return s;
}

/* One "key = value" line of the wanted profile into C. */
static void take_key(char *line, s3_creds *c)
{
    char *eq = strchr(line, '=');
    if (!eq)
        return;
    *eq = 0;
    char *key = trim(line), *value = trim(eq + 1);
    if (!strcmp(key, "aws_access_key_id"))
        snprintf(c->key_id, sizeof c->key_id, "%s", value);
    else if (!strcmp(key, "aws_secret_access_key"))
        snprintf(c->secret, sizeof c->secret, "%s", value);
    else if (!strcmp(key, "aws_session_token"))
        snprintf(c->token, sizeof c->token, "%s", value);
}

/* The keys of [PROFILE] in the INI file PATH into C: 1 when the section is there, 0 when not, -1 without
 * the file. Lines longer than the buffer (a long session token) are read whole by getline. */
static int read_profile(const char *path, const char *profile, s3_creds *c)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    int found = 0, inside = 0;
    while (getline(&line, &cap, f) > 0) {
        char *s = trim(line);
        if (*s == '#' || *s == ';' || !*s)
            continue;
        if (*s == '[') {
            char *close = strchr(s, ']');
            if (close)
                *close = 0;
            inside = !strcmp(trim(s + 1), profile);
            found |= inside;
        } else if (inside) {
            take_key(s, c);
        }
    }
    free(line);
    fclose(f);
    return found;
}

static int from_environment(s3_creds *c, char *err, size_t err_len)
{
    const char *id = env("AWS_ACCESS_KEY_ID"), *secret = env("AWS_SECRET_ACCESS_KEY");
    if (!id != !secret)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "%s is set but %s is not: set both, or neither to use a "
                           "profile of ~/.aws/credentials", id ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                           id ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
    if (!id)
        return 1;
    snprintf(c->key_id, sizeof c->key_id, "%s", id);
    snprintf(c->secret, sizeof c->secret, "%s", secret);
    snprintf(c->token, sizeof c->token, "%s", env("AWS_SESSION_TOKEN") ? env("AWS_SESSION_TOKEN") : "");
    snprintf(c->source, sizeof c->source, "AWS_ACCESS_KEY_ID=%s%s from the environment", c->key_id,
             c->token[0] ? " with AWS_SESSION_TOKEN" : "");
    return 0;
}

static int from_profile(s3_creds *c, char *err, size_t err_len)
{
    const char *profile = env("AWS_PROFILE") ? env("AWS_PROFILE") : "default";
    char path[1024];
    if (env("AWS_SHARED_CREDENTIALS_FILE"))
        snprintf(path, sizeof path, "%s", env("AWS_SHARED_CREDENTIALS_FILE"));
    else if (env("HOME"))
        snprintf(path, sizeof path, "%s/.aws/credentials", env("HOME"));
    else
        path[0] = 0;
    int found = path[0] ? read_profile(path, profile, c) : -1;
    if (found <= 0 && env("AWS_PROFILE"))
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "AWS_PROFILE=%s: no profile [%s] in %s", profile, profile,
                           path[0] ? path : "~/.aws/credentials (HOME is not set)");
    if (found <= 0)
        return 1;
    if (!c->key_id[0] || !c->secret[0])
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "profile [%s] of %s lacks aws_access_key_id or "
                           "aws_secret_access_key", profile, path);
    snprintf(c->source, sizeof c->source, "aws_access_key_id=%s of profile [%s] in %s", c->key_id, profile, path);
    return 0;
}

int h5pack_s3_creds_find(s3_creds *c, char *err, size_t err_len)
{
    memset(c, 0, sizeof *c);
    const char *no_sign = env("AWS_NO_SIGN_REQUEST"); /* as the AWS tools read it: "true" (or 1) */
    if (no_sign && (!strcasecmp(no_sign, "true") || !strcmp(no_sign, "1"))) {
        c->anonymous = 1;
        snprintf(c->source, sizeof c->source, "none: anonymous (AWS_NO_SIGN_REQUEST is set)");
        return 0;
    }
    int rc = from_environment(c, err, err_len);
    if (rc <= 0)
        return rc;
    if ((rc = from_profile(c, err, err_len)) <= 0)
        return rc;
    c->anonymous = 1;
    snprintf(c->source, sizeof c->source, "none found: anonymous (AWS_ACCESS_KEY_ID is not set, no profile "
             "[default] in %s/.aws/credentials)", env("HOME") ? env("HOME") : "~");
    return 0;
}
