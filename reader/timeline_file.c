/* timeline_file.c - the timeline's file name and creation (see timeline.h): the rank in the name with
 * world > 1, and ".N" for a name another live reader holds. An flock tells "held" from "left over by an
 * earlier run" (which is simply overwritten); it works across processes (DDP ranks started with the
 * same H5PACK_TIMELINE) and within one (a train and a val loader), since every open() is its own lock.
 * With timeline_append, a file that holds a timeline is continued instead (its last t_s read back). */
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

/* 1: NAME is ours (created, locked; truncated unless APPEND finds a timeline: *CONTINUED) in *FD; 0:
 * another reader holds it; -1: cannot create. */
static int try_name(const char *name, int append, int *fd, int *continued, double *t_last)
{
    int f = open(name, (append ? O_RDWR : O_WRONLY) | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (f < 0)
        return -1;
    if (flock(f, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        close(f);
        return 0;
    }
    /* locked, or a file system without flock (then the first name is used, as without the rule) */
    *continued = append ? h5pack_timeline_continue_fd(f, t_last) : 0;
    if (*continued > 0) {
        *fd = f;
        return 1;
    }
    if (*continued < 0 || ftruncate(f, 0) != 0) {
        int e = errno;
        close(f);
        errno = e;
        return -1;
    }
    *fd = f;
    return 1;
}

/* 1: PATH is an existing timeline no live reader holds, opened, locked and continued in *FD; 0: not so
 * (the naming rules decide); -1: a read or cut error (errno). */
static int continue_exact(const char *path, int *fd, int *continued, double *t_last)
{
    int f = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
    if (f < 0)
        return 0;
    if (flock(f, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        close(f);
        return 0;
    }
    int rc = h5pack_timeline_continue_fd(f, t_last);
    if (rc <= 0) {
        int e = errno;
        close(f);
        errno = e;
        return rc;
    }
    *fd = f, *continued = 1;
    return 1;
}

int h5pack_timeline_create_file(const char *path, uint32_t rank, uint32_t world, int append, int *fd, char **name,
                                int *continued, double *t_last, char *err, size_t err_len)
{
    *continued = 0, *t_last = 0;
    if (append) { /* PATH itself, an earlier reader's file (h5pack_timeline_path), when free and a timeline */
        int rc = continue_exact(path, fd, continued, t_last);
        if (rc != 0) {
            if (rc < 0 || !(*name = strdup(path))) {
                snprintf(err, err_len, "cannot continue the timeline file %s: %s", path,
                         rc < 0 ? strerror(errno) : "out of memory");
                if (rc > 0)
                    close(*fd);
                return rc < 0 ? H5PACK_EIO : H5PACK_ENOMEM;
            }
            return 0;
        }
    }
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
        int rc = try_name(cand, append, fd, continued, t_last);
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
