// SPDX-License-Identifier: GPL-3.0-or-later
/* mapguard: a SIGBUS in a guarded mapping costs only that mapping (see mapguard.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "base/limits.h"
#include "base/mapguard.h"

struct slot {
	uintptr_t start;	/* 0: free; written last on add, first on remove */
	size_t len;
	int faulted;
};

/* Slots are taken from the bottom; the handler scans up to the highest ever used. */
static struct slot slots[MAPGUARD_MAX];
static int nr_used;			/* slots [0, nr_used) may be in use */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;	/* add and remove */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct sigaction previous;
static int install_err;

/* Hand the signal to whoever had it before us: a handler of theirs, else its default
 * action, which the faulting instruction raises again on return (a fault), or raise() now
 * (a signal sent by someone, blocked until we return). */
static void chain(int sig, siginfo_t *si, void *uc)
{
	if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
		previous.sa_sigaction(sig, si, uc);
		return;
	}
	if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
		previous.sa_handler(sig);
		return;
	}
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	if (si->si_code <= 0)
		raise(sig);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t addr = (uintptr_t)si->si_addr;
	int n = __atomic_load_n(&nr_used, __ATOMIC_ACQUIRE);

	if (si->si_code > 0) {		/* a fault, not kill() */
		for (int i = 0; i < n; i++) {
			struct slot *s = &slots[i];
			uintptr_t start = __atomic_load_n(&s->start, __ATOMIC_ACQUIRE);
			size_t len = __atomic_load_n(&s->len, __ATOMIC_RELAXED);

			if (!start || addr - start >= len)
				continue;
			if (mmap((void *)start, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
				break;		/* cannot be helped: fatal, as before */
			if (!__atomic_exchange_n(&s->faulted, 1, __ATOMIC_RELEASE))
				limits__hit(LIMIT_FILE_FAULTS, 1);
			return;
		}
	}
	chain(sig, si, uc);
}

static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &previous))
		install_err = -errno;
}

int mapguard__init(void)
{
	pthread_once(&once, install);
	return install_err;
}

int mapguard__add(void *addr, size_t len)
{
	int id = -ENOSPC;

	pthread_once(&once, install);
	if (install_err)
		return install_err;
	if (!addr || !len)
		return -EINVAL;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAPGUARD_MAX; i++) {
		if (slots[i].start)
			continue;
		slots[i].len = len;
		slots[i].faulted = 0;
		__atomic_store_n(&slots[i].start, (uintptr_t)addr, __ATOMIC_RELEASE);
		if (i >= nr_used)
			__atomic_store_n(&nr_used, i + 1, __ATOMIC_RELEASE);
		id = i;
		break;
	}
	pthread_mutex_unlock(&lock);
	return id;
}

void mapguard__remove(int id)
{
	if (id < 0 || id >= MAPGUARD_MAX)
		return;
	pthread_mutex_lock(&lock);
	__atomic_store_n(&slots[id].start, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
}

bool mapguard__faulted(int id)
{
	return id >= 0 && id < MAPGUARD_MAX && __atomic_load_n(&slots[id].faulted, __ATOMIC_ACQUIRE);
}
