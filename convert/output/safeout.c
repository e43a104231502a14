/* safeout.c - temporary output files, atomic rename, removal on signals, and the removal of temporary
 * files that killed conversions left behind.
 *
 * A writer holds an open file description lock (F_OFD_SETLK, a write lock on byte 0) on its temporary
 * file from its creation to its commit or removal; the kernel drops it when the process dies, whatever
 * the signal. HDF5 locks the same file with flock(), which does not interact with these locks. So a
 * hidden ".NAME.h5pack-XXXXXX" beside OUT that nobody locks, and that nobody has written to for
 * LEFTOVER_AGE_S seconds (the moment between mkstemp and the lock), is what a kill -9 left. */
#include "safeout.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SAFEOUT_MAX_TEMPS 4
#define SAFEOUT_PATH_MAX 4096
#define LEFTOVER_AGE_S 10
#define TEMP_SUFFIX ".h5pack-"
#define TEMP_RANDOM 6 /* mkstemp's XXXXXX */

/* Global on purpose: the signal handler must find the temp files. Written only by the main thread; a
 * slot's path is complete before its flag is set. */
static char temp_paths[SAFEOUT_MAX_TEMPS][SAFEOUT_PATH_MAX];
static volatile sig_atomic_t temp_used[SAFEOUT_MAX_TEMPS];
static int temp_fds[SAFEOUT_MAX_TEMPS]; /* the locked descriptor of each temp file, or -1 */

static void on_fatal_signal(int sig)
{
    for (int i = 0; i < SAFEOUT_MAX_TEMPS; i++)
        if (temp_used[i])
            unlink(temp_paths[i]); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

static const int handled_signals[] = {SIGINT, SIGTERM, SIGHUP};

void safeout_install_signal_handlers(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof handled_signals / sizeof handled_signals[0]; i++) {
        /* A signal ignored at startup stays ignored (nohup, background jobs of a script), as is usual. */
        if (sigaction(handled_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(handled_signals[i], &sa, NULL);
    }
    /* Past a file size limit (ulimit -f) the kernel sends SIGXFSZ, which would kill us with the temp file
     * left behind; ignored, the write fails with EFBIG and the normal error path names the file and
     * removes the temp. */
    signal(SIGXFSZ, SIG_IGN);
}

/* A write lock on byte 0 owned by FD's open file description: F_SETLK / F_GETLK semantics per CMD. */
static int ofd_lock(int fd, int cmd, struct flock *fl)
{
#ifdef F_OFD_SETLK
    memset(fl, 0, sizeof *fl);
    fl->l_type = F_WRLCK, fl->l_whence = SEEK_SET, fl->l_start = 0, fl->l_len = 1;
    return fcntl(fd, cmd == F_SETLK ? F_OFD_SETLK : F_OFD_GETLK, fl);
#else
    (void)fd, (void)cmd, (void)fl;
    errno = ENOSYS; /* no OFD locks: leftovers are never removed */
    return -1;
#endif
}

static void register_temp(const char *path, int fd)
{
    for (int i = 0; i < SAFEOUT_MAX_TEMPS; i++)
        if (!temp_used[i]) {
            snprintf(temp_paths[i], SAFEOUT_PATH_MAX, "%s", path);
            temp_fds[i] = fd;
            temp_used[i] = 1;
            return;
        }
    close(fd);
}

/* Forgets PATH and closes its descriptor, which drops the lock. */
static void unregister_temp(const char *path)
{
    for (int i = 0; i < SAFEOUT_MAX_TEMPS; i++)
        if (temp_used[i] && strcmp(temp_paths[i], path) == 0) {
            temp_used[i] = 0;
            if (temp_fds[i] >= 0)
                close(temp_fds[i]);
            temp_fds[i] = -1;
        }
}

/* What a special file of mode M is ("character device", ...), or NULL for a file, folder or link: those
 * are never replaced, --force or not (as root, `h5pack -f SRC /dev/null` would replace /dev/null), nor
 * is a link to one (the rename would replace the link: /dev/stdout is a link to a device). */
static const char *special_kind(mode_t m)
{
    return S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m)                      ? "a socket"
                                              : NULL;
}

int safeout_check_destination(const char *out, int force, char *err, size_t err_len)
{
    struct stat st;
    size_t len = strlen(out);
    if (len == 0 || out[len - 1] == '/') { /* refused now, not at the rename after the whole conversion */
        snprintf(err, err_len, "'%s': give the output file's name (OUT.h5)", out);
        return -1;
    }
    if (lstat(out, &st) != 0) /* lstat: a dangling symbolic link exists too */
        return 0;
    if (S_ISLNK(st.st_mode) && stat(out, &st) != 0)
        st.st_mode = S_IFLNK; /* dangling: replaced, as any existing OUT, only with --force */
    const char *special = special_kind(st.st_mode); /* OUT, or the file its link leads to */
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, err_len, "%s: is a folder; give the output file's name", out);
        return -1;
    }
    if (special) {
        snprintf(err, err_len, "%s: is %s, never replaced (--force or not); give the output file's name", out,
                 special);
        return -1;
    }
    if (!force) {
        snprintf(err, err_len, "%s: already exists; use --force to overwrite it", out);
        return -1;
    }
    return 0;
}

/* Folder and base name of PATH (copies). */
static void split_path(const char *path, char *dir, char *base, size_t len)
{
    char a[SAFEOUT_PATH_MAX], b[SAFEOUT_PATH_MAX];
    snprintf(a, sizeof a, "%s", path);
    snprintf(b, sizeof b, "%s", path);
    snprintf(dir, len, "%s", dirname(a));
    snprintf(base, len, "%s", basename(b));
}

int safeout_create_temp(const char *out, char *temp, size_t temp_len, char *err, size_t err_len)
{
    char dir[SAFEOUT_PATH_MAX], base[SAFEOUT_PATH_MAX];
    split_path(out, dir, base, sizeof dir);
    if ((size_t)snprintf(temp, temp_len, "%s/.%s.h5pack-XXXXXX", dir, base) >= temp_len) {
        snprintf(err, err_len, "%s: path too long", out);
        return -1;
    }
    /* A signal between mkstemp and register_temp would leave the new file behind: hold the handled
     * signals until the handler knows it (called before the workers start or after they are gone). */
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof handled_signals / sizeof handled_signals[0]; i++)
        sigaddset(&block, handled_signals[i]);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int fd = mkstemp(temp);
    int saved = errno;
    if (fd >= 0) {
        struct flock fl;
        ofd_lock(fd, F_SETLK, &fl); /* best effort: without it only the age protects this file */
        register_temp(temp, fd);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        snprintf(err, err_len, "%s: cannot create a temporary file in %s: %s", out, dir, strerror(saved));
        return -1;
    }
    return 0;
}

void safeout_discard(const char *temp)
{
    unlink(temp);
    unregister_temp(temp);
}

/* umask() can only be read by setting it: done once the workers are gone. mkstemp made the file 0600;
 * the finished file gets the permissions any new file would get. */
static mode_t current_umask(void)
{
    mode_t m = umask(022);
    umask(m);
    return m;
}

static int fsync_path(const char *path, int flags)
{
    int fd = open(path, flags);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* rename(TEMP, OUT) that fails with EEXIST when OUT exists: renameat2's RENAME_NOREPLACE, else (a file
 * system without it) link + unlink, else a check just before the rename (a race window remains only there). */
static int rename_noreplace(const char *temp, const char *out)
{
    if (renameat2(AT_FDCWD, temp, AT_FDCWD, out, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
        return -1;
    if (link(temp, out) == 0)
        return unlink(temp);
    if (errno == EEXIST)
        return -1;
    struct stat st;
    if (lstat(out, &st) == 0) {
        errno = EEXIST;
        return -1;
    }
    return rename(temp, out);
}

/* A kept finished conversion leaves the hidden temp name (which leftover cleaning would take for an
 * interrupted one's): ".NAME.h5pack-XXXXXX" becomes "NAME.h5pack-XXXXXX" in the same folder; TEMP is
 * updated when that worked. */
static void unhide_kept(char *temp)
{
    char *slash = strrchr(temp, '/'), *name = slash ? slash + 1 : temp;
    if (name[0] != '.')
        return;
    char shown[SAFEOUT_PATH_MAX];
    snprintf(shown, sizeof shown, "%.*s%s", (int)(name - temp), temp, name + 1);
    if (rename_noreplace(temp, shown) == 0)
        memmove(name, name + 1, strlen(name)); /* the terminator moves too */
}

int safeout_commit(char *temp, const char *out, int force, char *err, size_t err_len)
{
    char dir[SAFEOUT_PATH_MAX], base[SAFEOUT_PATH_MAX];
    if (fsync_path(temp, O_RDONLY) != 0) {
        snprintf(err, err_len, "%s: cannot flush to disk: %s", temp, strerror(errno));
        return -1;
    }
    if (chmod(temp, 0666 & ~current_umask()) != 0) {
        snprintf(err, err_len, "%s: cannot set the finished file's permissions: %s", temp, strerror(errno));
        return -1;
    }
    struct stat st;
    if (force && stat(out, &st) == 0 && special_kind(st.st_mode)) { /* appeared during the conversion */
        unregister_temp(temp);
        unhide_kept(temp);
        snprintf(err, err_len, "%s: became %s during the conversion, which is never replaced; the finished "
                 "conversion is kept as %s", out, special_kind(st.st_mode), temp);
        return -2;
    }
    int rc = force ? rename(temp, out) : rename_noreplace(temp, out);
    if (rc != 0 && !force && errno == EEXIST) { /* OUT appeared while converting: keep both, say where */
        unregister_temp(temp);
        unhide_kept(temp);
        snprintf(err, err_len, "%s: appeared during the conversion and --force was not given, so it was not "
                 "replaced; the finished conversion is kept as %s", out, temp);
        return -2;
    }
    if (rc != 0) {
        snprintf(err, err_len, "%s: cannot move the finished file into place: %s", out, strerror(errno));
        return -1;
    }
    unregister_temp(temp);
    split_path(out, dir, base, sizeof dir);
    fsync_path(dir, O_RDONLY | O_DIRECTORY); /* best effort: some file systems refuse */
    return 0;
}

/* 1 when NAME is a temp file of OUT's base name BASE: "." BASE ".h5pack-" and mkstemp's six characters. */
static int is_temp_of(const char *name, const char *base)
{
    size_t nb = strlen(base), ns = strlen(TEMP_SUFFIX);
    if (name[0] != '.' || strncmp(name + 1, base, nb) != 0 || strncmp(name + 1 + nb, TEMP_SUFFIX, ns) != 0)
        return 0;
    const char *rnd = name + 1 + nb + ns;
    if (strlen(rnd) != TEMP_RANDOM)
        return 0;
    for (const char *p = rnd; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            return 0;
    return 1;
}

/* 1 when PATH is a regular file no process locks and nobody wrote to for LEFTOVER_AGE_S seconds; its size
 * in *BYTES. Any doubt (no OFD locks here, an error) is 0: a live writer's file is never removed. */
static int abandoned(const char *path, uint64_t *bytes)
{
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    struct flock fl;
    int gone = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && time(NULL) - st.st_mtime >= LEFTOVER_AGE_S &&
               ofd_lock(fd, F_GETLK, &fl) == 0 && fl.l_type == F_UNLCK;
    *bytes = gone ? (uint64_t)st.st_size : 0;
    close(fd);
    return gone;
}

int safeout_remove_leftovers(const char *out, void (*report)(void *ctx, const char *path, uint64_t bytes), void *ctx)
{
    char dir[SAFEOUT_PATH_MAX], base[SAFEOUT_PATH_MAX], path[2 * SAFEOUT_PATH_MAX + 2];
    split_path(out, dir, base, sizeof dir);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t bytes;
        if (!is_temp_of(e->d_name, base))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (abandoned(path, &bytes) && unlink(path) == 0) {
            removed++;
            if (report)
                report(ctx, path, bytes);
        }
    }
    closedir(d);
    return removed;
}
