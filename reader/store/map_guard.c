/* map_guard.c - SIGBUS on a guarded map becomes zero pages and a recorded hit (map_guard.h).
 *
 * The handler reads the guard table with atomic loads only (async-signal-safe); mmap and sigaction are
 * system calls, safe there in practice on Linux (POSIX lists sigaction, not mmap). */
#include "map_guard.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define N_GUARDS 64

typedef struct guard {
    uintptr_t start; /* 0: free */
    size_t len;
    int fd; /* the mapped file's */
    int hit;
} guard;

static guard g_guards[N_GUARDS];
static struct sigaction g_previous;
static int g_installed; /* 1 once the handler is in place, -1 when sigaction failed */
static pthread_once_t g_install_once = PTHREAD_ONCE_INIT;

static size_t page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

/* The guard whose map holds ADDR, or NULL. */
static guard *guard_of(uintptr_t addr)
{
    for (int i = 0; i < N_GUARDS; i++) {
        uintptr_t start = __atomic_load_n(&g_guards[i].start, __ATOMIC_ACQUIRE);
        if (start && addr - start < __atomic_load_n(&g_guards[i].len, __ATOMIC_ACQUIRE))
            return &g_guards[i];
    }
    return NULL;
}

static int any_guard(void)
{
    for (int i = 0; i < N_GUARDS; i++)
        if (__atomic_load_n(&g_guards[i].start, __ATOMIC_ACQUIRE))
            return 1;
    return 0;
}

/* Zero pages from where the file ends now (fstat is async-signal-safe), or from ADDR's page if that is
 * lower, to the end of G's map: one fault covers every page lost. 0, or -1 when the kernel refused (the
 * fault then goes to the previous handler). */
static int zero_the_rest(guard *g, uintptr_t addr)
{
    uintptr_t page = addr / page_size() * page_size();
    struct stat st;
    if (fstat(__atomic_load_n(&g->fd, __ATOMIC_ACQUIRE), &st) == 0 && st.st_size >= 0) {
        uintptr_t file_end = g->start + ((uintptr_t)st.st_size + page_size() - 1) / page_size() * page_size();
        page = file_end < page ? file_end : page;
    }
    uintptr_t end = g->start + (g->len + page_size() - 1) / page_size() * page_size();
    void *m = mmap((void *)page, end - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    __atomic_store_n(&g->hit, 1, __ATOMIC_RELEASE);
    return 0;
}

/* What the process would have done without us. */
static void chain(int sig, siginfo_t *si, void *context)
{
    if (g_previous.sa_flags & SA_SIGINFO) {
        g_previous.sa_sigaction(sig, si, context);
        return;
    }
    if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
        g_previous.sa_handler(sig);
        return;
    }
    /* SIG_DFL (and SIG_IGN, which cannot hold for a fault): the default action. A fault recurs when the
     * handler returns; a sent signal is sent again. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    if (si->si_code <= 0 && g_previous.sa_handler == SIG_DFL)
        raise(sig);
}

static void on_sigbus(int sig, siginfo_t *si, void *context)
{
    int saved_errno = errno;
    if (si->si_code > 0) { /* the kernel's: a fault at si_addr */
        guard *g = guard_of((uintptr_t)si->si_addr);
        if (g && zero_the_rest(g, (uintptr_t)si->si_addr) == 0) {
            errno = saved_errno;
            return;
        }
    } else if (si->si_pid == getpid() && any_guard() && !(g_previous.sa_flags & SA_SIGINFO) &&
               g_previous.sa_handler == SIG_DFL) { /* re-raised by a later handler: let the fault recur */
        errno = saved_errno;
        return;
    }
    chain(sig, si, context);
    errno = saved_errno;
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    g_installed = sigaction(SIGBUS, &sa, &g_previous) == 0 ? 1 : -1;
}

int h5pack_map_guard_add(const void *map, size_t len, int fd)
{
    pthread_once(&g_install_once, install);
    if (g_installed != 1 || !map || len == 0)
        return -1;
    for (int i = 0; i < N_GUARDS; i++) {
        uintptr_t free_slot = 0;
        /* a free guard's len is 0 (remove clears it first): the handler matches nothing in it until its
         * len is set, after its hit flag */
        if (__atomic_compare_exchange_n(&g_guards[i].start, &free_slot, (uintptr_t)map, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&g_guards[i].hit, 0, __ATOMIC_RELEASE);
            __atomic_store_n(&g_guards[i].fd, fd, __ATOMIC_RELEASE);
            __atomic_store_n(&g_guards[i].len, len, __ATOMIC_RELEASE);
            return i;
        }
    }
    return -1;
}

int h5pack_map_guard_hit(int g)
{
    return g >= 0 && g < N_GUARDS && __atomic_load_n(&g_guards[g].hit, __ATOMIC_ACQUIRE);
}

void h5pack_map_guard_remove(int g)
{
    if (g < 0 || g >= N_GUARDS)
        return;
    __atomic_store_n(&g_guards[g].len, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&g_guards[g].start, 0, __ATOMIC_RELEASE);
}
