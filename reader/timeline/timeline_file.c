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

/* NAME opened with FLAGS (| O_APPEND) and locked: the descriptor; -2 when another live reader holds it;
 * -1 when it cannot be opened (errno). A file system without flock gives the file unlocked (the first name
 * is then used, as without the rule). */
static int open_locked(const char *name, int flags)
{
    int f = open(name, flags | O_APPEND | O_CLOEXEC, 0644);
    if (f < 0)
        return -1;
    if (flock(f, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        close(f);
        return -2;
    }
    return f;
}

static void close_keeping_errno(int f)
{
    int e = errno;
    close(f);
    errno = e;
}

/* 1: NAME is ours (created, locked; truncated unless APPEND finds a timeline: *CONTINUED) in *FD; 0:
 * another reader holds it; -1: cannot create. */
static int try_name(const char *name, int append, int *fd, int *continued, double *t_last)
{
    int f = open_locked(name, (append ? O_RDWR : O_WRONLY) | O_CREAT);
    if (f < 0)
        return f == -2 ? 0 : -1;
    *continued = append ? h5pack_timeline_continue_fd(f, t_last) : 0;
    if (*continued < 0 || (*continued == 0 && ftruncate(f, 0) != 0)) {
        close_keeping_errno(f);
        return -1;
    }
    *fd = f;
    return 1;
}

/* 1: PATH is an existing timeline no live reader holds, opened, locked and continued in *FD; 0: not so
 * (the naming rules decide); -1: a read or cut error (errno). */
static int continue_exact(const char *path, int *fd, double *t_last)
{
    int f = open_locked(path, O_RDWR);
    if (f < 0)
        return 0;
    int rc = h5pack_timeline_continue_fd(f, t_last);
    if (rc <= 0)
        close_keeping_errno(f);
    else
        *fd = f;
    return rc;
}

int h5pack_timeline_create_file(const char *path, uint32_t rank, uint32_t world, int append, int *fd, char **name,
                                int *continued, double *t_last, char *err, size_t err_len)
{
    *continued = 0, *t_last = 0;
    int rc = append ? continue_exact(path, fd, t_last) : 0; /* PATH itself: an earlier reader's file */
    if (rc < 0) {
        snprintf(err, err_len, "cannot continue the timeline file %s: %s", path, strerror(errno));
        return H5PACK_EIO;
    }
    if (rc > 0) {
        *continued = 1;
        if ((*name = strdup(path)))
            return 0;
        close(*fd);
        snprintf(err, err_len, "timeline %s: out of memory", path);
        return H5PACK_ENOMEM;
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
        rc = try_name(cand, append, fd, continued, t_last);
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
