// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * output/push: profiles to a Pyroscope-compatible server over plain HTTP/1.1, from a thread of
 * our own with a bounded queue (see push.h). One connection per profile ("Connection:
 * close"): a profile every few seconds at most, and nothing to keep alive across a server's
 * restart. Every socket is non-blocking and waited on with poll in slices, so that a slow
 * server costs PUSH_TIMEOUT_S per try and the end of the run at most its grace.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "base/clock.h"
#include "base/log.h"
#include "output/push.h"

#define URL_MAX		2048
#define APP_MAX		512
#define HOST_MAX	256
#define ANSWER_MAX	1024	/* bytes of the server's answer read: its status line */
#define SLICE_MS	100	/* a wait is cut in slices: the end of the run is noticed */

struct push_item {
	void *buf;
	size_t len;
	int64_t from, until;
	unsigned int tries;
};

struct pusher {
	char host[HOST_MAX];		/* as getaddrinfo takes it (IPv6 without brackets) */
	char port[8];
	char authority[HOST_MAX + 8];	/* Host: */
	char *target;			/* PATH/ingest?name=APP&...: all but from and until */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct push_item q[PUSH_QUEUE_MAX];
	unsigned int head, nr;		/* the queue, a ring */
	size_t bytes;
	bool started, stopping, in_flight;
	double give_up;			/* stopping: no send goes past this (CLOCK_MONOTONIC) */
	unsigned int dropped;
	pthread_t thread;
};

/* --- the URL ------------------------------------------------------------------------------ */

static bool is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

/* S percent-encoded (every byte but the unreserved ones) at the end of OUT (room checked by
 * the caller: 3 bytes per byte of S). */
static void encode(char *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	out += strlen(out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (is_unreserved(c)) {
			*out++ = (char)c;
		} else {
			*out++ = '%';
			*out++ = hex[c >> 4];
			*out++ = hex[c & 15];
		}
	}
	*out = '\0';
}

static bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* URL into P's host, port, authority, and *PATH (in URL, without a final '/'; *PATH_LEN its
 * length). Returns NULL, or the sentence saying what is wrong. */
static const char *parse_url(struct pusher *p, const char *url, const char **path,
			     size_t *path_len)
{
	const char *h, *end, *colon = NULL;
	size_t n;

	if (strlen(url) > URL_MAX)
		return "the URL is too long (at most 2048 bytes)";
	if (!strncasecmp(url, "https://", 8))
		return "https is not supported (no TLS here): give an http:// URL (a TLS proxy "
		       "on this machine can forward it)";
	if (strncasecmp(url, "http://", 7))
		return "expected http://HOST[:PORT][/PATH]";
	if (!printable(url))
		return "the URL has a space or a control character";
	if (strpbrk(url, "?#"))
		return "the URL has a query or a fragment: give only http://HOST[:PORT][/PATH] "
		       "(profile adds /ingest and its parameters)";
	h = url + 7;
	end = h + strcspn(h, "/");
	if (memchr(h, '@', end - h))
		return "user names and passwords in the URL are not supported";
	if (*h == '[') {
		const char *close = memchr(h, ']', end - h);

		if (!close || close == h + 1)
			return "expected an IPv6 address between [ and ]";
		n = close - h - 1;
		if (n >= HOST_MAX)
			return "the host name is too long";
		memcpy(p->host, h + 1, n);
		p->host[n] = '\0';
		if (close + 1 < end && close[1] != ':')
			return "expected :PORT after the IPv6 address";
		colon = close + 1 < end ? close + 1 : NULL;
	} else {
		colon = memchr(h, ':', end - h);
		n = (colon ? colon : end) - h;
		if (!n)
			return "the URL names no host";
		if (n >= HOST_MAX)
			return "the host name is too long";
		memcpy(p->host, h, n);
		p->host[n] = '\0';
		for (size_t i = 0; i < n; i++)
			if (!is_unreserved((unsigned char)p->host[i]))
				return "the host name has a character no host name has";
	}
	strcpy(p->port, "80");
	if (colon) {
		char *e;
		long v;

		n = end - colon - 1;
		if (!n || n > 5)
			return "expected a port from 1 to 65535 after ':'";
		errno = 0;
		v = strtol(colon + 1, &e, 10);
		if (e != end || v < 1 || v > 65535 || colon[1] == '-' || colon[1] == '+')
			return "expected a port from 1 to 65535 after ':'";
		snprintf(p->port, sizeof(p->port), "%ld", v);
	}
	n = end - h;
	memcpy(p->authority, h, n);
	p->authority[n] = '\0';
	*path = end;
	*path_len = strlen(end);
	while (*path_len && end[*path_len - 1] == '/')
		(*path_len)--;
	return NULL;
}

struct pusher *pusher__new(const char *url, const char *app, unsigned int rate,
			   const char **why)
{
	struct pusher *p = calloc(1, sizeof(*p));
	const char *path;
	size_t path_len;

	*why = NULL;
	if (!p)
		return NULL;
	*why = parse_url(p, url, &path, &path_len);
	if (!*why && (!*app || strlen(app) > APP_MAX || !printable(app)))
		*why = "the application name must be 1 to 512 printable characters without spaces";
	if (*why) {
		free(p);
		errno = EINVAL;
		return NULL;
	}
	/* PATH/ingest?name=APP&format=pprof&sampleRate=HZ&spyName=profile */
	p->target = calloc(1, path_len + 3 * strlen(app) + 128);
	if (!p->target) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	memcpy(p->target, path, path_len);
	strcat(p->target, "/ingest?name=");
	encode(p->target, app);
	sprintf(p->target + strlen(p->target), "&format=pprof&sampleRate=%u&spyName=profile",
		rate);
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	return p;
}

/* --- one request ---------------------------------------------------------------------------- */

/* The time left before DEADLINE, or before P's give-up time once it is stopping, in ms
 * (at most a slice); 0 when none. Called with P->mu not held: reads it under the lock. */
static int slice_ms(struct pusher *p, double deadline)
{
	double left;

	pthread_mutex_lock(&p->mu);
	if (p->stopping && p->give_up < deadline)
		deadline = p->give_up;
	pthread_mutex_unlock(&p->mu);
	left = (deadline - clock_mono_seconds()) * 1000;
	if (left <= 0)
		return 0;
	return left < SLICE_MS ? (int)left + 1 : SLICE_MS;
}

/* Wait for EVENTS on FD until DEADLINE. Returns 0, or -ETIMEDOUT. */
static int wait_fd(struct pusher *p, int fd, short events, double deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = events };
		int ms = slice_ms(p, deadline), n;

		if (!ms)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* A non-blocking socket connected to P's server before DEADLINE. Returns it, or -errno
 * (*WHERE says what failed). */
static int connect_server(struct pusher *p, double deadline, const char **where)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai, *a;
	int err = -EHOSTUNREACH, fd = -1, rc;

	*where = "cannot resolve the host";
	rc = getaddrinfo(p->host, p->port, &hints, &ai);
	if (rc)
		return rc == EAI_SYSTEM ? -errno : -EHOSTUNREACH;
	*where = "cannot connect";
	for (a = ai; a; a = a->ai_next) {
		int soerr = 0;
		socklen_t len = sizeof(soerr);

		fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    a->ai_protocol);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		err = -errno;
		if (err == -EINPROGRESS) {
			err = wait_fd(p, fd, POLLOUT, deadline);
			if (!err && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0)
				err = -soerr;
			if (!err)
				break;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd >= 0 ? fd : err;
}

/* All LEN bytes of BUF to FD before DEADLINE. Returns 0 or -errno. */
static int send_all(struct pusher *p, int fd, const void *buf, size_t len, double deadline)
{
	const char *b = buf;

	while (len) {
		ssize_t n = send(fd, b, len, MSG_NOSIGNAL);

		if (n > 0) {
			b += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		n = wait_fd(p, fd, POLLOUT, deadline);
		if (n)
			return (int)n;
	}
	return 0;
}

/* The status of the server's answer on FD, read before DEADLINE (only its status line).
 * Returns it (100-599), or -errno, -EPROTO for an answer that is not HTTP. */
static int read_status(struct pusher *p, int fd, double deadline)
{
	char ans[ANSWER_MAX + 1];
	size_t have = 0;
	int status;

	while (have < ANSWER_MAX && !memchr(ans, '\n', have)) {
		ssize_t n = recv(fd, ans + have, ANSWER_MAX - have, 0);

		if (n == 0)
			break;
		if (n > 0) {
			have += (size_t)n;
			continue;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		n = wait_fd(p, fd, POLLIN, deadline);
		if (n)
			return (int)n;
	}
	ans[have] = '\0';
	if (sscanf(ans, "HTTP/1.%*1[01] %3d", &status) != 1 || status < 100 || status > 599)
		return -EPROTO;
	return status;
}

/* Send IT. Returns 0 once the server took it (a 2xx answer), else negative errno or the
 * HTTP status; *WHAT says what failed. */
static int send_item(struct pusher *p, const struct push_item *it, char *what, size_t size)
{
	double deadline = clock_mono_seconds() + PUSH_TIMEOUT_S;
	const char *where;
	char head[URL_MAX + 4 * APP_MAX + 512];
	int fd, err, n;

	n = snprintf(head, sizeof(head),
		     "POST %s&from=%lld&until=%lld HTTP/1.1\r\n"
		     "Host: %s\r\n"
		     "User-Agent: profile/" PROFILE_VERSION "\r\n"
		     "Content-Type: binary/octet-stream\r\n"
		     "Content-Length: %zu\r\n"
		     "Connection: close\r\n\r\n",
		     p->target, (long long)it->from, (long long)it->until, p->authority, it->len);
	if (n < 0 || (size_t)n >= sizeof(head)) {
		snprintf(what, size, "request too long");
		return -E2BIG;
	}
	fd = connect_server(p, deadline, &where);
	if (fd < 0) {
		snprintf(what, size, "%s: %s", where, strerror(-fd));
		return fd;
	}
	err = send_all(p, fd, head, (size_t)n, deadline);
	if (!err)
		err = send_all(p, fd, it->buf, it->len, deadline);
	if (err) {
		snprintf(what, size, "cannot send: %s", strerror(-err));
	} else {
		err = read_status(p, fd, deadline);
		if (err < 0)
			snprintf(what, size, "no answer: %s", err == -EPROTO ?
				 "not HTTP" : strerror(-err));
		else if (err / 100 == 2)
			err = 0;
		else
			snprintf(what, size, "the server answered HTTP %d", err);
	}
	close(fd);
	return err;
}

/* --- the queue and the thread ------------------------------------------------------------- */

static void warn_dropped(struct pusher *p, const struct push_item *it, const char *why)
{
	char a[32], b[32];
	time_t t0 = (time_t)it->from, t1 = (time_t)it->until;
	struct tm tm;

	strftime(a, sizeof(a), "%H:%M:%S", localtime_r(&t0, &tm));
	strftime(b, sizeof(b), "%H:%M:%S", localtime_r(&t1, &tm));
	pr_warn("the profile of %s-%s was not pushed to %s: %s", a, b, p->authority, why);
	p->dropped++;
}

/* Remove the queue's entry at ring index I (the head, or the one after it), under P->mu. */
static void remove_at(struct pusher *p, unsigned int i, const char *why)
{
	struct push_item it = p->q[i];

	if (why)
		warn_dropped(p, &it, why);
	free(it.buf);
	p->bytes -= it.len;
	if (i == p->head) {
		p->head = (p->head + 1) % PUSH_QUEUE_MAX;
	} else {
		/* Close the gap: the ones after I move one place towards the head. */
		for (unsigned int k = (i - p->head + PUSH_QUEUE_MAX) % PUSH_QUEUE_MAX;
		     k + 1 < p->nr; k++)
			p->q[(p->head + k) % PUSH_QUEUE_MAX] =
				p->q[(p->head + k + 1) % PUSH_QUEUE_MAX];
	}
	p->nr--;
}

/* Wait on P->cv for SECONDS at most (or until it is signalled), under P->mu. */
static void wait_seconds(struct pusher *p, double seconds)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)seconds;
	ts.tv_nsec += (long)((seconds - (time_t)seconds) * 1e9);
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&p->cv, &p->mu, &ts);
}

static void *push_thread(void *arg)
{
	struct pusher *p = arg;
	char what[256];

	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct push_item it;
		int err;

		while (!p->nr && !p->stopping)
			pthread_cond_wait(&p->cv, &p->mu);
		if (!p->nr || (p->stopping && clock_mono_seconds() >= p->give_up))
			break;
		/* At the end, a profile the server already refused gets no more tries. */
		if (p->stopping && p->q[p->head].tries) {
			remove_at(p, p->head, "the run ended before the server took it");
			continue;
		}
		it = p->q[p->head];
		p->in_flight = true;
		pthread_mutex_unlock(&p->mu);
		err = send_item(p, &it, what, sizeof(what));
		pthread_mutex_lock(&p->mu);
		p->in_flight = false;
		if (!err) {
			remove_at(p, p->head, NULL);
			continue;
		}
		pr_debug("push of %lld-%lld, try %u: %s", (long long)it.from, (long long)it.until,
			 it.tries + 1, what);
		if (++p->q[p->head].tries >= PUSH_TRIES) {
			remove_at(p, p->head, what);
			continue;
		}
		/* 1, 2, 4 s before the next try; the end cuts it short. */
		if (!p->stopping)
			wait_seconds(p, (double)(1u << (p->q[p->head].tries - 1)));
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Start P's thread, with the signals blocked in it (they are the main thread's to take).
 * Returns 0 or -errno. */
static int start_thread(struct pusher *p)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&p->thread, NULL, push_thread, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

void pusher__push(struct pusher *p, void *buf, size_t len, int64_t from, int64_t until)
{
	struct push_item it = { buf, len, from, until, 0 };
	int err;

	pthread_mutex_lock(&p->mu);
	/* Started at the first profile, not before: the session drops its capabilities while
	 * it is the only thread. */
	if (!p->started) {
		err = start_thread(p);
		if (err) {
			warn_dropped(p, &it, strerror(-err));
			free(buf);
			pthread_mutex_unlock(&p->mu);
			return;
		}
		p->started = true;
	}
	/* Full: the oldest waiting goes (not the one being sent). */
	while (p->nr && (p->nr == PUSH_QUEUE_MAX || p->bytes + len > PUSH_QUEUE_BYTES)) {
		unsigned int victim = p->in_flight ? (p->head + 1) % PUSH_QUEUE_MAX : p->head;

		if (p->in_flight && p->nr == 1)
			break;
		remove_at(p, victim, "the queue of profiles to push was full (the server is "
			  "down or slow)");
	}
	if (p->nr == PUSH_QUEUE_MAX || p->bytes + len > PUSH_QUEUE_BYTES) {
		warn_dropped(p, &it, "larger than the queue of profiles to push");
		free(buf);
	} else {
		p->q[(p->head + p->nr) % PUSH_QUEUE_MAX] = it;
		p->nr++;
		p->bytes += len;
		pthread_cond_signal(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
}

unsigned int pusher__free(struct pusher *p, double grace)
{
	unsigned int dropped;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->mu);
	p->stopping = true;
	p->give_up = clock_mono_seconds() + grace;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (p->started)
		pthread_join(p->thread, NULL);
	while (p->nr)
		remove_at(p, p->head, "the run ended before the server took it");
	dropped = p->dropped;
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p->target);
	free(p);
	return dropped;
}
