/* isolate.c - HDF5 work on a file that may be damaged, in the helper program h5pack-isolate first
 * (isolate.h: when, why another process, where the helper lies). This process's side starts the helper
 * with posix_spawn and reads its reply; the helper's side (h5pack_isolate_main) greets, runs one job and
 * _exits. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "errtext.h"
#include "h5pack.h"
#include "isolate.h"

#define SILENCE_S 20      /* default: a helper silent this long is stuck (H5PACK_PROBE_TIMEOUT) */
#define HELPER_NAME "h5pack-isolate"
#define HELPER_FD 3       /* the helper's end of the reply pipe */
#define MAX_ARGS 16       /* a job's name and arguments */
#define HELLO_MAGIC 0x68356869u /* "h5hi" */
/* Bump when a job's arguments or reply change: a helper of another protocol or version is not used. */
#define ISOLATE_PROTOCOL 1

extern char **environ;

/* The helper's first words: which library it belongs to. */
typedef struct hello {
    uint32_t magic, protocol, version;
} hello;

int h5pack_isolate_setting(void)
{
    const char *mode = getenv("H5PACK_PROBE");
    if (mode && !strcmp(mode, "never"))
        return -1;
    if (mode && !strcmp(mode, "always"))
        return 1;
    return 0;
}

int h5pack_isolate_wanted(store *st)
{
    int setting = h5pack_isolate_setting();
    if (setting)
        return setting > 0;
    /* -1 (no signature), -2 (unreadable): the open fails before HDF5 parses anything, no need for a helper. */
    int version = h5pack_store_superblock_version(st);
    return version >= 0 && version < 2;
}

int h5pack_isolate_silence_s(void)
{
    const char *v = getenv("H5PACK_PROBE_TIMEOUT");
    int s = v ? atoi(v) : 0;
    return s > 0 ? s : SILENCE_S;
}

int h5pack_isolate_write(int fd, const void *buf, size_t len)
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

int h5pack_isolate_read(int fd, void *buf, size_t len, size_t *got, int silence_ms)
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
        deadline = h5pack_clock_s() + silence_ms * 1e-3; /* progress: the helper is not stuck */
    }
    return 0;
}

/* ---- finding the helper ---------------------------------------------------------------------------- */

static pthread_once_t g_search_once = PTHREAD_ONCE_INIT;
static char g_found[PATH_MAX + 32];         /* the helper beside this library, "" when none */
static char g_tried[3 * (PATH_MAX + 34)]; /* where it was looked for, for the warning */

/* The folder of the binary that holds this code: libh5pack.so, or the program linked with libh5pack.a. */
static int library_dir(char *dir, size_t len)
{
    Dl_info info;
    struct link_map *map = NULL;
    char real[PATH_MAX];
    if (!dladdr1((void *)&h5pack_isolate_run, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return -1;
    const char *file = map->l_name[0] ? map->l_name : "/proc/self/exe"; /* "": the main program */
    if (!realpath(file, real))
        return -1;
    snprintf(dir, len, "%s", dirname(real));
    return 0;
}

/* Looks at the candidates in order (a path twice only once), keeping the list for the warning. */
static void search_helper(void)
{
    char dir[PATH_MAX], candidates[3][PATH_MAX + 32];
    int n = 0;
    if (library_dir(dir, sizeof dir) == 0) {
        snprintf(candidates[n++], sizeof candidates[0], "%s/" HELPER_NAME, dir); /* build tree, pip installs */
        snprintf(candidates[n++], sizeof candidates[0], "%s/h5pack/" HELPER_NAME, dir); /* cmake --install */
    }
#ifdef H5PACK_ISOLATE_BUILT
    snprintf(candidates[n++], sizeof candidates[0], "%s", H5PACK_ISOLATE_BUILT); /* build tree, libh5pack.a */
#endif
    for (int i = 0; i < n && !g_found[0]; i++) {
        int seen = 0;
        for (int k = 0; k < i; k++)
            seen |= !strcmp(candidates[k], candidates[i]);
        if (seen)
            continue;
        size_t used = strlen(g_tried);
        snprintf(g_tried + used, sizeof g_tried - used, "%s%s", used ? ", " : "", candidates[i]);
        if (access(candidates[i], X_OK) == 0)
            memcpy(g_found, candidates[i], sizeof g_found); /* same size, NUL-terminated */
    }
}

/* The helper's path: $H5PACK_ISOLATE_HELPER, else the one found beside the library; NULL when none. */
static const char *helper_path(void)
{
    const char *env = getenv("H5PACK_ISOLATE_HELPER");
    if (env && env[0])
        return env;
    pthread_once(&g_search_once, search_helper);
    return g_found[0] ? g_found : NULL;
}

/* Once per process: the helper cannot be used (WHY), so this process does its HDF5 work itself. */
static void warn_no_helper(const char *why)
{
    static atomic_int warned;
    if (atomic_exchange(&warned, 1))
        return;
    fprintf(stderr, "h5pack: warning: %s; files without metadata checksums (h5py's) and variable-length strings "
            "are read in this process, where a damaged file can crash it (H5PACK_ISOLATE_HELPER=PATH names the "
            "helper)\n", why);
}

/* ---- running it ------------------------------------------------------------------------------------ */

/* Starts HELPER with ARGS: descriptor 3 is REPLY_FD, 0 and 1 /dev/null, 2 this process's stderr (the
 * helper silences it once started: what the loader says about a helper that cannot start stays visible);
 * no other descriptor, no blocked or ignored signal. 0, or an errno value. */
static int spawn_helper(const char *helper, const char *const *args, int reply_fd, pid_t *pid)
{
    char *argv[MAX_ARGS + 2] = {(char *)helper};
    for (size_t i = 0; args[i] && i < MAX_ARGS; i++)
        argv[i + 1] = (char *)args[i];
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, reply_fd, HELPER_FD); /* the copy on 3 is not close-on-exec */
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
    posix_spawn_file_actions_addclosefrom_np(&fa, HELPER_FD + 1); /* the application's fds without O_CLOEXEC */
#endif
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigmask(&attr, &none);   /* the calling thread's mask is not the helper's */
    posix_spawnattr_setsigdefault(&attr, &all); /* nor what the application ignores (Python: SIGPIPE) */
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    int rc = posix_spawn(pid, helper, &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
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

static uint32_t version_number(void)
{
    return H5PACK_VERSION_NUMBER;
}

/* 1: the helper greeted as this library's; 0: it did not start (it ended first), -1: it belongs to another
 * library, -2: it fell silent (WHY says which). */
static int read_hello(int fd, int silence_ms, const char *helper, char *why, size_t why_len)
{
    hello h;
    size_t got;
    int rc = h5pack_isolate_read(fd, &h, sizeof h, &got, silence_ms);
    if (rc == -2)
        snprintf(why, why_len, "the helper %s did not answer in %d s", helper, silence_ms / 1000);
    else if (rc || got != sizeof h || h.magic != HELLO_MAGIC)
        snprintf(why, why_len, "the helper %s did not start", helper);
    else if (h.protocol != ISOLATE_PROTOCOL || h.version != version_number())
        snprintf(why, why_len, "the helper %s belongs to another h5pack (%u.%u.%u, protocol %u; this library: "
                 H5PACK_VERSION_STRING ", protocol %u)", helper, h.version / 10000, h.version / 100 % 100,
                 h.version % 100, h.protocol, ISOLATE_PROTOCOL);
    else
        return 1;
    return rc == -2 ? -2 : rc || got != sizeof h || h.magic != HELLO_MAGIC ? 0 : -1;
}

/* The error for a helper that greeted but gave no whole reply: GOT as PARENT returned, STATUS waitpid's. */
static int damaged(const char *path, const char *what, int got, int status, int limit_s, char *err, size_t err_len)
{
    if (got == -2)
        return h5pack_errf(H5PACK_ECORRUPT, err, err_len,
                           "%s: HDF5 made no progress %s for %d s: the file is damaged (H5PACK_PROBE_TIMEOUT sets "
                           "the limit)", path, what, limit_s);
    if (status != -1 && WIFSIGNALED(status))
        return h5pack_errf(H5PACK_ECORRUPT, err, err_len, "%s: HDF5 crashed %s (signal %d, %s): the file is damaged",
                           path, what, WTERMSIG(status), strsignal(WTERMSIG(status)));
    return h5pack_errf(H5PACK_ECORRUPT, err, err_len,
                       "%s: HDF5 failed hard %s (helper exit status %d): the file is damaged", path, what,
                       status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* Starts the helper for ARGS: 0 with its path in *HELPER, *PID and the reply's read end *FD; 1 (after the
 * warning) when there is none or it cannot be started. */
static int start_helper(const char *const *args, const char **helper, pid_t *pid, int *fd)
{
    char why[sizeof g_tried + 256];
    int fds[2];
    *helper = helper_path();
    if (!*helper) {
        snprintf(why, sizeof why, "no helper program " HELPER_NAME " (looked for %s)", g_tried);
        warn_no_helper(why);
        return 1;
    }
    if (pipe2(fds, O_CLOEXEC) != 0)
        return 1;
    int rc = spawn_helper(*helper, args, fds[1], pid);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        snprintf(why, sizeof why, "cannot start the helper %s (%s)", *helper, strerror(rc));
        warn_no_helper(why);
        return 1;
    }
    *fd = fds[0];
    return 0;
}

/* A helper that did not greet (read_hello's GREETED and WHY; STATUS waitpid's): warned of, returns 1. */
static int not_greeted(int greeted, int status, char *why, size_t why_len)
{
    size_t n = strlen(why);
    if (greeted == 0 && status != -1) /* it ended before greeting: how (the loader's words are on stderr) */
        snprintf(why + n, why_len - n, " (%s %d)", WIFSIGNALED(status) ? "signal" : "exit status",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    warn_no_helper(why);
    return 1;
}

int h5pack_isolate_run(const char *path, const char *what, const char *const *args, isolate_parent_fn parent,
                       void *ctx, char *err, size_t err_len)
{
    const char *helper;
    char why[PATH_MAX + 256];
    pid_t pid;
    int fd;
    if (start_helper(args, &helper, &pid, &fd) != 0)
        return 1;
    int limit_s = h5pack_isolate_silence_s();
    int greeted = read_hello(fd, limit_s * 1000, helper, why, sizeof why);
    int got = greeted == 1 ? parent(fd, limit_s * 1000, ctx) : 0;
    close(fd);
    int status = wait_child(pid, got != 1); /* always reaped; killed unless it gave its whole reply */
    if (greeted != 1)
        return not_greeted(greeted, status, why, sizeof why);
    return got == 1 ? 0 : damaged(path, what, got, status, limit_s, err, err_len);
}

/* ---- the helper's side ----------------------------------------------------------------------------- */

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

/* A crash in the helper must end it with the signal: a sanitizer's handlers (installed at its start)
 * would only print reports about a crash we expect. */
static void default_crash_signals(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(NULL);
}

int h5pack_isolate_main(int argc, char **argv, const isolate_job *jobs, size_t n_jobs)
{
    const isolate_job *job = NULL;
    for (size_t i = 0; argc >= 2 && i < n_jobs; i++)
        if (!strcmp(argv[1], jobs[i].name))
            job = &jobs[i];
    if (!job || fcntl(HELPER_FD, F_GETFD) < 0) {
        fprintf(stderr, HELPER_NAME " %s: a helper that libh5pack starts to read possibly damaged HDF5 files "
                "(reader/source/isolate.h); not for direct use\n", H5PACK_VERSION_STRING);
        return 2;
    }
    hello h = {HELLO_MAGIC, ISOLATE_PROTOCOL, version_number()};
    quiet_stderr(); /* a crash report of HDF5's would only confuse: the parent words the error */
    default_crash_signals();
    if (h5pack_isolate_write(HELPER_FD, &h, sizeof h) == 0)
        job->run(HELPER_FD, argc - 2, argv + 2);
    _exit(0); /* no atexit work: HDF5's clean-up could trip over the damage the job met */
}

uint64_t h5pack_isolate_arg_u64(const char *text)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-')
        _exit(2);
    return v;
}

int h5pack_isolate_open_store(const char *location, const char *size, store **out, char *err, size_t err_len)
{
    uint64_t then = h5pack_isolate_arg_u64(size);
    /* mem://PATH: PATH's bytes, read from PATH (isolate.h), not loaded whole a second time */
    const char *from = strncmp(location, "mem://", 6) ? location : location + 6;
    int rc = h5pack_store_open(from, out, err, err_len);
    if (rc == 0 && (*out)->size != then) {
        rc = h5pack_errf(H5PACK_EIO, err, err_len, "%s: changed since it was opened (%llu bytes then, %llu now): "
                         "open it again", location, (unsigned long long)then, (unsigned long long)(*out)->size);
        h5pack_store_close(*out);
        *out = NULL;
    }
    return rc;
}
