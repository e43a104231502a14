/* timeline_file.c - the timeline's file name and creation (see timeline.h): the rank in the name with
 * world > 1, and ".N" for a name another live reader holds. An flock tells "held" from "left over by an
 * earlier run" (which is simply overwritten); it works across processes (DDP ranks started with the
 * same H5PACK_TIMELINE) and within one (a train and a val loader), since every open() is its own lock. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "timeline.h"

#define MAX_SUFFIX 1000 /* readers sharing one name */

/* PATH with ".INSERT" before its extension (the last '.' of the last component), or at its end. */
static char *insert_suffix(const char *path, const char *insert)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    size_t cut = dot && (!slash || dot > slash + 1) ? (size_t)(dot - path) : strlen(path);
    size_t n = strlen(path) + strlen(insert) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%.*s.%s%s", (int)cut, path, insert, path + cut);
    return s;
}

/* 1: NAME is ours (created, locked, truncated) in *FD; 0: another reader holds it; -1: cannot create. */
static int try_name(const char *name, int *fd)
{
    int f = open(name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (f < 0)
        return -1;
    if (flock(f, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        close(f);
        return 0;
    }
    /* locked, or a file system without flock (then the first name is used, as without the rule) */
    if (ftruncate(f, 0) != 0) {
        int e = errno;
        close(f);
        errno = e;
        return -1;
    }
    *fd = f;
    return 1;
}

int h5pack_timeline_create_file(const char *path, uint32_t rank, uint32_t world, int *fd, char **name, char *err,
                                size_t err_len)
{
    char tag[32];
    snprintf(tag, sizeof tag, "rank%u", rank);
    char *base = world > 1 ? insert_suffix(path, tag) : strdup(path);
    if (!base) {
        snprintf(err, err_len, "timeline %s: out of memory", path);
        return H5PACK_ENOMEM;
    }
    for (int n = 0; n < MAX_SUFFIX; n++) {
        char num[16];
        snprintf(num, sizeof num, "%d", n);
        char *cand = n ? insert_suffix(base, num) : strdup(base);
        if (!cand) {
            snprintf(err, err_len, "timeline %s: out of memory", path);
            free(base);
            return H5PACK_ENOMEM;
        }
        int rc = try_name(cand, fd);
        if (rc > 0) {
            free(base);
            *name = cand;
            return 0;
        }
        if (rc < 0) {
            snprintf(err, err_len, "cannot create the timeline file %s: %s", cand, strerror(errno));
            free(cand), free(base);
            return H5PACK_EIO;
        }
        free(cand);
    }
    snprintf(err, err_len, "cannot create the timeline file %s: %d readers hold it and its numbered variants",
             base, MAX_SUFFIX);
    free(base);
    return H5PACK_EIO;
}
