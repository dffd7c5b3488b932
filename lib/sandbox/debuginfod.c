// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * debuginfod: the fetcher process (libdebuginfod, a few threads) and the privileged side's
 * end of it (see debuginfod.h).
 *
 * Messages (SOCK_SEQPACKET, one each):
 *   to the fetcher:   the build id, hex digits
 *   from the fetcher: i32 status (0, or libdebuginfod's negative errno), the build id; the
 *                     debug file's descriptor with status 0 (closed at once: it is in the
 *                     cache, opened from there as any candidate)
 */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <elfutils/debuginfod.h>
#include "base/grow.h"
#include "base/log.h"
#include "sandbox/client.h"
#include "sandbox/confine.h"
#include "sandbox/debuginfod.h"
#include "sandbox/proto.h"

#define ID_MAX		SB_BUILD_ID_MAX
#define MSG_MAX		(4 + ID_MAX + 1)

enum dstate { D_ASKED = 0, D_DONE, D_FAILED };

struct dent {
	char id[ID_MAX + 1];
	char *name;		/* the file's base name, for messages */
	uint8_t state;
	bool reported;
	int err;		/* D_FAILED: the fetcher's */
	double due;		/* D_ASKED: when it is given up on */
};

struct dfetch {
	int sock;		/* -1: no fetcher (yet) */
	pid_t pid;
	bool dead;		/* it failed or could not start: no more fetches */
	uid_t uid;
	gid_t gid;
	double timeout;
	char *cache;		/* the fetcher's cache */
	bool cache_tmp;		/* made for this run: removed at the end */
	int cache_fd;		/* O_PATH of it */
	int user_fd;		/* O_PATH of our user's libdebuginfod cache, or -1 */
	struct dent *ents;
	uint32_t nr, cap;
	unsigned int asked, fetched, failed;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool id_ok(const char *id)
{
	size_t len = strlen(id);

	return len >= 3 && len <= ID_MAX && len == strspn(id, "0123456789abcdef");
}

/* --- the fetcher process ------------------------------------------------------------------ */

struct fq {
	pthread_mutex_t lock;
	pthread_cond_t more;
	char (*ids)[ID_MAX + 1];
	size_t head, nr, cap;
	bool end;
	int sock;
};

static void fq__reply(struct fq *q, int status, const char *id, int fd)
{
	unsigned char buf[MSG_MAX];
	int32_t st = status;
	size_t len = strlen(id);

	memcpy(buf, &st, 4);
	memcpy(buf + 4, id, len);
	sb_send(q->sock, buf, 4 + len, &fd, fd >= 0 ? 1 : 0, 0);
}

static void *fetch_thread(void *arg)
{
	struct fq *q = arg;
	debuginfod_client *c = debuginfod_begin();

	for (;;) {
		char id[ID_MAX + 1], *path = NULL;
		int fd;

		pthread_mutex_lock(&q->lock);
		while (!q->nr && !q->end)
			pthread_cond_wait(&q->more, &q->lock);
		if (!q->nr) {
			pthread_mutex_unlock(&q->lock);
			break;
		}
		memcpy(id, q->ids[q->head], sizeof(id));
		q->head = (q->head + 1) % q->cap;
		q->nr--;
		pthread_mutex_unlock(&q->lock);
		fd = c ? debuginfod_find_debuginfo(c, (const unsigned char *)id, 0, &path) :
			 -ENOMEM;
		pr_debug("debuginfod fetcher: %s: %s", id, fd >= 0 ? path : strerror(-fd));
		free(path);
		fq__reply(q, fd >= 0 ? 0 : fd, id, fd);
		if (fd >= 0)
			close(fd);
	}
	if (c)
		debuginfod_end(c);
	return NULL;
}

/* The fetcher: requests from SOCK into a queue, fetched by DFETCH_THREADS threads. */
static int fetcher__main(int sock, uid_t uid, gid_t gid, pid_t parent)
{
	struct fq q = { .lock = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER,
			.sock = sock, .cap = 64 };
	pthread_t th[DFETCH_THREADS];
	int nth = 0;

	if (confine__user(uid, gid, parent))
		return 1;
	q.ids = calloc(q.cap, sizeof(*q.ids));
	if (!q.ids)
		return 1;
	for (int i = 0; i < DFETCH_THREADS; i++)
		if (!pthread_create(&th[nth], NULL, fetch_thread, &q))
			nth++;
	if (!nth)
		return 1;
	for (;;) {
		char buf[MSG_MAX];
		ssize_t len;

		do
			len = recv(sock, buf, sizeof(buf) - 1, 0);
		while (len < 0 && errno == EINTR);
		if (len <= 0)
			break;		/* the profiler is done */
		buf[len] = 0;
		if (!id_ok(buf)) {
			pr_warn("debuginfod fetcher: a request that is no build id");
			break;
		}
		pthread_mutex_lock(&q.lock);
		if (q.nr == q.cap) {
			char (*ids)[ID_MAX + 1] = calloc(2 * q.cap, sizeof(*ids));

			if (!ids) {
				pthread_mutex_unlock(&q.lock);
				fq__reply(&q, -ENOMEM, buf, -1);
				continue;
			}
			for (size_t i = 0; i < q.nr; i++)
				memcpy(ids[i], q.ids[(q.head + i) % q.cap], sizeof(*ids));
			free(q.ids);
			q.ids = ids;
			q.head = 0;
			q.cap *= 2;
		}
		memcpy(q.ids[(q.head + q.nr) % q.cap], buf, (size_t)len + 1);
		q.nr++;
		pthread_cond_signal(&q.more);
		pthread_mutex_unlock(&q.lock);
	}
	/* Whatever runs is of no use any more: no waiting for it. */
	return 0;
}

/* This program started as the fetcher: argv DFETCH_ARG UID GID PARENT LEVEL. */
__attribute__((constructor)) static void fetcher__entry(int argc, char **argv)
{
	if (argc != 6 || strcmp(argv[1], DFETCH_ARG))
		return;
	log_level = atoi(argv[5]);
	prctl(PR_SET_NAME, "profile-fetch", 0, 0, 0);
	_exit(fetcher__main(DFETCH_FD, (uid_t)strtoul(argv[2], NULL, 10),
			    (gid_t)strtoul(argv[3], NULL, 10), (pid_t)strtol(argv[4], NULL, 10)));
}

/* --- the cache ---------------------------------------------------------------------------- */

/* libdebuginfod's cache for our user, as it finds it: DEBUGINFOD_CACHE_PATH, else
 * $XDG_CACHE_HOME/debuginfod_client, else $HOME/.cache/debuginfod_client. NULL: none. */
static char *user_cache(void)
{
	const char *p = getenv("DEBUGINFOD_CACHE_PATH"), *x = getenv("XDG_CACHE_HOME"),
		   *h = getenv("HOME");
	char *out = NULL;

	if (p && *p)
		return strdup(p);
	if (x && *x && asprintf(&out, "%s/debuginfod_client", x) > 0)
		return out;
	if (h && *h && asprintf(&out, "%s/.cache/debuginfod_client", h) > 0)
		return out;
	return NULL;
}

/* PATH is a directory of UID that no one else may write, not a link. */
static bool dir_owned(const char *path, uid_t uid)
{
	struct stat st;

	return !lstat(path, &st) && S_ISDIR(st.st_mode) && st.st_uid == uid &&
	       !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/* mkdir -p of PATH's parents (0755), PATH itself 0700 for UID:GID. Returns 0 or -errno. */
static int make_cache(const char *path, uid_t uid, gid_t gid)
{
	char *p = strdup(path);
	int err = 0;

	if (!p)
		return -ENOMEM;
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		if (mkdir(p, 0755) && errno != EEXIST)
			err = -errno;
		*s = '/';
	}
	free(p);
	if (err)
		return err;
	if (!mkdir(path, 0700) && geteuid() == 0 && chown(path, uid, gid))
		return -errno;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

struct dfetch *dfetch__new(double timeout, uid_t uid, gid_t gid)
{
	const char *urls = getenv("DEBUGINFOD_URLS"), *env = getenv(DFETCH_CACHE_ENV);
	uid_t owner = geteuid() == 0 ? uid : geteuid();
	struct dfetch *f;
	char *uc;

	if (!urls || !urls[strspn(urls, " \t")]) {
		errno = ENOENT;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->sock = -1;
	f->uid = uid;
	f->gid = gid;
	f->timeout = timeout;
	f->cache_fd = f->user_fd = -1;
	/* The fetcher's cache: its user's. */
	f->cache = strdup(env && *env ? env : geteuid() == 0 ? DFETCH_CACHE_ROOT : "");
	if (f->cache && !*f->cache) {
		free(f->cache);
		f->cache = user_cache();
	}
	if (f->cache && (make_cache(f->cache, uid, gid) || !dir_owned(f->cache, owner))) {
		pr_info("debuginfod: %s is not a directory of uid %u only: fetched files are "
			"kept for this run only", f->cache, (unsigned int)owner);
		free(f->cache);
		f->cache = NULL;
	}
	if (!f->cache) {
		char tmpl[] = "/tmp/profile-debuginfod.XXXXXX";

		if (!mkdtemp(tmpl) || (geteuid() == 0 && chown(tmpl, uid, gid)) ||
		    !(f->cache = strdup(tmpl))) {
			pr_warn("debuginfod: no cache directory: %s", strerror(errno));
			free(f);
			errno = ENOMEM;
			return NULL;
		}
		f->cache_tmp = true;
	}
	f->cache_fd = open(f->cache, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	uc = user_cache();
	if (uc && strcmp(uc, f->cache))
		f->user_fd = open(uc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(uc);
	pr_debug("debuginfod: servers %s, cache %s, %.0f s a file", urls, f->cache, timeout);
	return f;
}

void dfetch__free(struct dfetch *f)
{
	if (!f)
		return;
	if (f->sock >= 0)
		close(f->sock);
	if (f->pid > 0) {
		kill(f->pid, SIGKILL);
		waitpid(f->pid, NULL, 0);
	}
	if (f->cache_tmp)
		nftw(f->cache, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (f->cache_fd >= 0)
		close(f->cache_fd);
	if (f->user_fd >= 0)
		close(f->user_fd);
	for (uint32_t i = 0; i < f->nr; i++)
		free(f->ents[i].name);
	free(f->ents);
	free(f->cache);
	free(f);
}

int dfetch__places(const struct dfetch *f, const char *build_id, int *dirs, char (*paths)[160])
{
	int n = 0;

	if (!id_ok(build_id))
		return 0;
	for (int k = 0; k < 2; k++) {
		int fd = k ? f->user_fd : f->cache_fd;

		if (fd < 0)
			continue;
		dirs[n] = fd;
		snprintf(paths[n++], 160, "%s/debuginfo", build_id);
	}
	return n;
}

/* --- the privileged side ------------------------------------------------------------------ */

/* The variables the fetcher keeps of our environment: the servers, libdebuginfod's bounds,
 * curl's proxies and certificates. */
static const char *const kept_env[] = {
	"DEBUGINFOD_URLS", "DEBUGINFOD_MAXSIZE", "DEBUGINFOD_HEADERS_FILE", "DEBUGINFOD_VERBOSE",
	"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
	"no_proxy", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE",
};
#define ENV_MAX	(sizeof(kept_env) / sizeof(kept_env[0]) + 5)
#define DFETCH_MAXSIZE_STR	"268435456"	/* bytes: 256 MiB */

static int dfetch__start(struct dfetch *f)
{
	char uid[16], gid[16], parent[16], level[16], tmo[32], maxt[32], cache[4200];
	char *argv[] = { "profile-debuginfod", DFETCH_ARG, uid, gid, parent, level, NULL };
	char *envp[ENV_MAX + 1];
	int n = 0, err;

	for (char **e = environ; *e && n < (int)ENV_MAX - 4; e++)
		for (size_t i = 0; i < sizeof(kept_env) / sizeof(kept_env[0]); i++) {
			size_t len = strlen(kept_env[i]);

			if (!strncmp(*e, kept_env[i], len) && (*e)[len] == '=') {
				envp[n++] = *e;
				break;
			}
		}
	/* Each fetch within its time: libdebuginfod's stall and whole-transfer bounds. */
	snprintf(tmo, sizeof(tmo), "DEBUGINFOD_TIMEOUT=%.0f", f->timeout < 1 ? 1 : f->timeout);
	snprintf(maxt, sizeof(maxt), "DEBUGINFOD_MAXTIME=%.0f", f->timeout < 1 ? 1 : f->timeout);
	snprintf(cache, sizeof(cache), "DEBUGINFOD_CACHE_PATH=%s", f->cache);
	envp[n++] = tmo;
	envp[n++] = maxt;
	envp[n++] = cache;
	/* A profile of a busy machine is no reason to download a browser's gigabyte of DWARF:
	 * larger files are not fetched unless the user said otherwise. */
	if (!getenv("DEBUGINFOD_MAXSIZE"))
		envp[n++] = "DEBUGINFOD_MAXSIZE=" DFETCH_MAXSIZE_STR;
	envp[n] = NULL;
	snprintf(uid, sizeof(uid), "%u", (unsigned int)f->uid);
	snprintf(gid, sizeof(gid), "%u", (unsigned int)f->gid);
	snprintf(parent, sizeof(parent), "%d", (int)getpid());
	snprintf(level, sizeof(level), "%d", log_level);
	err = sb_spawn_self(argv, envp, DFETCH_FD, false, &f->sock, &f->pid);
	if (err) {
		f->sock = -1;
		f->pid = 0;
		return err;
	}
	pr_debug("debuginfod: fetcher %d started", (int)f->pid);
	return 0;
}

pid_t dfetch__pid(const struct dfetch *f)
{
	return f && f->sock >= 0 ? f->pid : 0;
}

/* The fetcher failed (ERR): no more fetches; those under way given up on. */
static void dfetch__fail(struct dfetch *f, int err)
{
	if (!f->dead)
		pr_warn("debuginfod: the fetcher failed (%s): no more debug files fetched",
			strerror(-err));
	f->dead = true;
	if (f->sock >= 0)
		close(f->sock);
	f->sock = -1;
	for (uint32_t i = 0; i < f->nr; i++)
		if (f->ents[i].state == D_ASKED)
			f->ents[i].due = 0;
}

static struct dent *dfetch__find(struct dfetch *f, const char *id)
{
	for (uint32_t i = 0; i < f->nr; i++)
		if (!strcmp(f->ents[i].id, id))
			return &f->ents[i];
	return NULL;
}

int dfetch__ask(struct dfetch *f, const char *build_id, const char *name)
{
	struct dent *e;
	int err;

	if (!id_ok(build_id) || f->dead)
		return 0;
	e = dfetch__find(f, build_id);
	if (e)
		return e->state == D_ASKED;
	if (f->sock < 0) {
		err = dfetch__start(f);
		if (err) {
			pr_warn("debuginfod: cannot start the fetcher: %s", strerror(-err));
			f->dead = true;
			return 0;
		}
	}
	if (array_grow(&f->ents, &f->cap, sizeof(*f->ents), f->nr))
		return -ENOMEM;
	e = &f->ents[f->nr];
	memset(e, 0, sizeof(*e));
	snprintf(e->id, sizeof(e->id), "%s", build_id);
	e->name = strdup(name);
	/* Its time runs from its turn: DFETCH_THREADS at once. */
	e->due = now_s() + f->timeout * (1 + (f->asked - f->fetched - f->failed) / DFETCH_THREADS)
		 + 1;
	err = sb_send(f->sock, build_id, strlen(build_id), NULL, 0, MSG_DONTWAIT);
	if (err) {
		free(e->name);
		if (err != -EAGAIN)
			dfetch__fail(f, err);
		return err == -EAGAIN ? 0 : err;
	}
	f->nr++;
	f->asked++;
	pr_debug("debuginfod: asked for %s (%s)", build_id, name);
	return 1;
}

/* One answer from the fetcher (0), -EAGAIN when none, or another negative errno. */
static int dfetch__recv(struct dfetch *f, void (*done)(void *, const char *), void *ctx)
{
	unsigned char buf[SB_MSG_MAX];
	char id[ID_MAX + 1];
	int fds[SB_FDS_MAX];
	unsigned int nfds;
	struct dent *e;
	int32_t st;
	long len = sb_recv(f->sock, buf, fds, &nfds, MSG_DONTWAIT);

	if (len < 0)
		return (int)len;
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
	if (len == 0)
		return -EPIPE;
	if (sb_fetch_answer__decode(buf, (size_t)len, &st, id))
		return -EBADMSG;
	e = dfetch__find(f, id);
	if (!e || e->state != D_ASKED)
		return -EBADMSG;
	if (!st && nfds == 1) {
		e->state = D_DONE;
		f->fetched++;
		pr_info("debuginfod: fetched the debug file of %s", e->name);
		done(ctx, e->id);
	} else {
		e->state = D_FAILED;
		e->err = st ? st : -EBADMSG;
		f->failed++;
		pr_debug("debuginfod: no debug file for %s (%s): %s", e->name, e->id,
			 strerror(-e->err));
	}
	return 0;
}

unsigned int dfetch__poll(struct dfetch *f, double deadline,
			  void (*done)(void *ctx, const char *build_id), void *ctx)
{
	while (f->sock >= 0) {
		double due, now;
		int err = dfetch__recv(f, done, ctx);
		struct pollfd p = { f->sock, POLLIN, 0 };

		if (!err)
			continue;
		if (err != -EAGAIN) {
			dfetch__fail(f, err);
			break;
		}
		due = dfetch__due(f);
		now = now_s();
		if (!due || now >= deadline || now >= due)
			break;
		poll(&p, 1, (int)(((deadline < due ? deadline : due) - now) * 1000) + 1);
	}
	return f->asked - f->fetched - f->failed;
}

double dfetch__due(const struct dfetch *f)
{
	double due = 0;

	for (uint32_t i = 0; i < f->nr; i++)
		if (f->ents[i].state == D_ASKED && f->ents[i].due > due)
			due = f->ents[i].due;
	return due;
}

double dfetch__timeout(const struct dfetch *f)
{
	return f->timeout;
}

void dfetch__counts(const struct dfetch *f, unsigned int *fetched, unsigned int *failed,
		    unsigned int *pending)
{
	*fetched = f->fetched;
	*failed = f->failed;
	*pending = f->asked - f->fetched - f->failed;
}

void dfetch__report(struct dfetch *f)
{
	char list[512];
	size_t pos = 0;
	unsigned int n = 0;

	list[0] = 0;
	for (uint32_t i = 0; i < f->nr; i++) {
		struct dent *e = &f->ents[i];

		if (e->reported || !(e->state == D_ASKED ||
				     (e->state == D_FAILED && e->err != -ENOENT)))
			continue;
		e->reported = true;
		if (n++ < 8 && pos < sizeof(list))
			pos += (size_t)snprintf(list + pos, sizeof(list) - pos, "%s%s (%s)",
						n > 1 ? ", " : "", e->name ? e->name : e->id,
						e->state == D_ASKED ? "timed out" :
						strerror(-e->err));
	}
	if (n)
		pr_warn("debuginfod: gave up on the debug files of %u file%s: %s%s; their frames "
			"are named from what they hold themselves", n, n == 1 ? "" : "s", list,
			n > 8 ? ", ..." : "");
}
