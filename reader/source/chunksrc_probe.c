/* chunksrc_probe.c - opens the file once in a forked child before opening it here. HDF5 1.10.8 trusts
 * file metadata: on a damaged file (old-format files carry no checksums) it can read through a null
 * pointer or loop forever, and no error handling of ours can catch that in this process. In the child,
 * a crash or a hang becomes a clear ECORRUPT here; a file the child opened cleanly takes the same code
 * paths here. The child also looks up every chunk's stored size (that walks the whole chunk index, the
 * metadata later reads depend on) and sends the sizes back, so the parent never needs to ask again
 * (up to PROBE_MAX_SIZES chunks; beyond that the parent learns sizes as reads ask for them).
 *
 * Fork safety: the parent holds the chunk sources' HDF5 mutex across fork(), so no chunk source is
 * inside HDF5 at that moment; the child is single-threaded, uses only HDF5, write() and _exit(). An HDF5
 * call from outside h5pack in another thread at that instant could leave HDF5's own lock held in the
 * child: the child then times out, reported as such.
 *
 * When: files in the latest format (superblock version 2 or 3, what h5pack writes) checksum all their
 * metadata, so damage is caught by HDF5 itself: no probe, no fork. Older-format files (h5py's default,
 * superblock 0/1) and files whose superblock we cannot find are probed. H5PACK_PROBE=always probes
 * every file (a file crafted with valid checksums), H5PACK_PROBE=never none (debugging). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chunksrc_impl.h"
#include "clock.h"

#define PROBE_MAGIC 0x68357062u /* "h5pb" */
#define PROBE_BLOCK 4096           /* stored sizes per message block */
#define PROBE_MAX_SIZES ((uint64_t)1 << 20) /* the child learns at most this many (8 MiB); the rest lazily */
#define PROBE_SILENCE_S 20         /* default: a child silent this long is stuck (H5PACK_PROBE_TIMEOUT) */

typedef struct probe_header {
    uint32_t magic;
    int32_t rc;
    uint64_t n_stored;
    char err[1024];
} probe_header;

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Sends the sizes as they are learnt, a block at a time: the parent's timeout is for silence, so a
 * large index that takes long to walk is fine, and a walk stuck in a loop is caught. */
static int send_stored_sizes(int fd, chunk_source *s, uint64_t n)
{
    for (uint64_t first = 0; first < n; first += PROBE_BLOCK) {
        uint64_t end = first + PROBE_BLOCK < n ? first + PROBE_BLOCK : n;
        for (uint64_t i = first; i < end; i++) {
            uint64_t size; /* on failure the entry stays unknown: the read will report it, naming the chunk */
            (void)h5pack_chunksrc_query_stored_locked(s, i, &size);
        }
        if (write_all(fd, s->stored + first, (end - first) * sizeof *s->stored) != 0)
            return -1;
    }
    return 0;
}

static void probe_child(int fd, store *st, const char *path, const char *images, const char *labels,
                        h5pack_layout hint)
{
    probe_header h;
    chunk_source *s = NULL;
    uint32_t trailer = PROBE_MAGIC;
    h5pack_h5_quiet q;
    memset(&h, 0, sizeof h);
    h.magic = PROBE_MAGIC;
    h5pack_h5_quiet_begin(&q);
    h.rc = h5pack_chunksrc_open_in_process(st, path, images, labels, hint, &s, h.err, sizeof h.err);
    if (h.rc == 0 && s->stored)
        h.n_stored = s->g.n_chunks < PROBE_MAX_SIZES ? s->g.n_chunks : PROBE_MAX_SIZES;
    if (write_all(fd, &h, sizeof h) != 0 || (h.n_stored && send_stored_sizes(fd, s, h.n_stored) != 0))
        return;
    write_all(fd, &trailer, sizeof trailer);
}

/* Seconds of silence after which the child counts as stuck. */
static int silence_limit_s(void)
{
    const char *v = getenv("H5PACK_PROBE_TIMEOUT");
    int s = v ? atoi(v) : 0;
    return s > 0 ? s : PROBE_SILENCE_S;
}

/* Reads LEN bytes unless EOF (returns 0 with *GOT short), SILENCE_MS without any byte (-2) or an error
 * (-1). */
static int read_until(int fd, void *buf, size_t len, size_t *got, int silence_ms)
{
    char *p = buf;
    double deadline = h5pack_clock_s() + silence_ms * 1e-3;
    *got = 0;
    while (*got < len) {
        double left_ms = (deadline - h5pack_clock_s()) * 1e3;
        struct pollfd pfd = {fd, POLLIN, 0};
        if (left_ms <= 0)
            return -2;
        int pr = poll(&pfd, 1, (int)left_ms + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return -1;
        if (pr == 0)
            continue;
        ssize_t n = read(fd, p + *got, len - *got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        *got += (size_t)n;
        deadline = h5pack_clock_s() + silence_ms * 1e-3; /* progress: the child is not stuck */
    }
    return 0;
}

typedef struct probe_reply {
    probe_header h;
    uint64_t *stored;
    int complete; /* header, sizes and trailer all arrived */
    int timed_out;
} probe_reply;

static void read_reply(int fd, probe_reply *r, int silence_ms)
{
    size_t got;
    uint32_t trailer = 0;
    int rc = read_until(fd, &r->h, sizeof r->h, &got, silence_ms);
    if (rc || got != sizeof r->h || r->h.magic != PROBE_MAGIC || r->h.n_stored > PROBE_MAX_SIZES) {
        r->timed_out = rc == -2;
        return;
    }
    r->h.err[sizeof r->h.err - 1] = '\0';
    if (r->h.n_stored) {
        size_t bytes = r->h.n_stored * sizeof *r->stored;
        r->stored = malloc(bytes);
        if (!r->stored)
            return;
        rc = read_until(fd, r->stored, bytes, &got, silence_ms);
        if (rc || got != bytes) {
            r->timed_out = rc == -2;
            return;
        }
    }
    rc = read_until(fd, &trailer, sizeof trailer, &got, silence_ms);
    r->timed_out = rc == -2;
    r->complete = rc == 0 && got == sizeof trailer && trailer == PROBE_MAGIC;
}

static int wait_child(pid_t pid, int kill_it)
{
    int status = 0;
    if (kill_it)
        kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -1; /* SIGCHLD ignored by the application: no status, the pipe told us enough */
    }
    return status;
}

/* Turns what the child said (or how it died) into our result. */
static int judge(const char *path, probe_reply *r, int status, uint64_t **stored, uint64_t *n_stored, char *err,
                 size_t err_len)
{
    if (r->complete) {
        if (r->h.rc != 0) {
            if (err && err_len)
                snprintf(err, err_len, "%s", r->h.err);
            return r->h.rc;
        }
        *stored = r->stored;
        *n_stored = r->h.n_stored;
        r->stored = NULL;
        return 0;
    }
    if (r->timed_out)
        return h5pack_chunksrc_fail(NULL, H5PACK_ECORRUPT, err, err_len,
                             "%s: HDF5 made no progress reading the file's metadata for %d s: the file is damaged "
                             "(or HDF5 was busy in another thread of this process; H5PACK_PROBE_TIMEOUT sets the limit)",
                             path, silence_limit_s());
    if (status != -1 && WIFSIGNALED(status))
        return h5pack_chunksrc_fail(NULL, H5PACK_ECORRUPT, err, err_len,
                             "%s: HDF5 crashed reading the file's metadata (signal %d, %s): the file is damaged", path,
                             WTERMSIG(status), strsignal(WTERMSIG(status)));
    return h5pack_chunksrc_fail(NULL, H5PACK_ECORRUPT, err, err_len,
                         "%s: HDF5 failed hard reading the file's metadata (probe exit status %d): the file is damaged",
                         path, status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static void quiet_stderr(void)
{
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, STDERR_FILENO);
        close(null);
    }
}

/* Present only in sanitizer builds: libFuzzer hooks it to save "crash" inputs. */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

/* A crash in the child must end it with the signal: crash handlers inherited from the application (or
 * a sanitizer's, or a fuzzer's) would only print reports or write files about a crash we expect. */
static void default_crash_signals(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(NULL);
}

static int probe_wanted(store *st)
{
    const char *mode = getenv("H5PACK_PROBE");
    if (mode && !strcmp(mode, "never"))
        return 0;
    if (mode && !strcmp(mode, "always"))
        return 1;
    /* -1 (unreadable, no signature): the open fails before HDF5 parses anything, no need to fork. */
    int version = h5pack_store_superblock_version(st);
    return version >= 0 && version < 2;
}

int h5pack_chunksrc_probe(store *st, const char *path, const char *images, const char *labels, h5pack_layout hint,
                          uint64_t **stored, uint64_t *n_stored, char *err, size_t err_len)
{
    int fds[2];
    probe_reply reply;
    *stored = NULL;
    *n_stored = 0;
    if (!probe_wanted(st) || pipe2(fds, O_CLOEXEC) != 0)
        return 0;
    h5pack_h5_lock_global(); /* no chunk source is inside HDF5 while we fork */
    pid_t pid = fork();
    if (pid == 0) {
        h5pack_h5_unlock_global();
        close(fds[0]);
        quiet_stderr(); /* a crash report of HDF5's would only confuse: the parent words the error */
        default_crash_signals();
        probe_child(fds[1], st, path, images, labels, hint); /* the child's copy of the store */
        _exit(0);
    }
    h5pack_h5_unlock_global();
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return 0; /* cannot fork (process limit): open without the probe */
    }
    memset(&reply, 0, sizeof reply);
    read_reply(fds[0], &reply, silence_limit_s() * 1000);
    close(fds[0]);
    int status = wait_child(pid, !reply.complete);
    int rc = judge(path, &reply, status, stored, n_stored, err, err_len);
    free(reply.stored);
    return rc;
}
