/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * push: profiles sent to a Pyroscope-compatible server (Grafana Pyroscope's HTTP API:
 * POST URL/ingest?name=APP&from=T0&until=T1&format=pprof&sampleRate=HZ&spyName=profile,
 * the body a gzip'd profile.proto). Plain HTTP/1.1 over TCP, our own small client, in a
 * thread of its own: whoever queues a profile never waits for the network. The queue is
 * bounded (PUSH_QUEUE_MAX profiles, PUSH_QUEUE_BYTES bytes); a profile is tried
 * PUSH_TRIES times with a growing pause between tries; one that is dropped (the queue
 * full, its tries spent, or the end came first) costs one warning naming its period.
 */
#ifndef OUTPUT_PUSH_H
#define OUTPUT_PUSH_H

#include <stddef.h>
#include <stdint.h>

#define PUSH_QUEUE_MAX		16		/* profiles waiting at most */
#define PUSH_QUEUE_BYTES	(64u << 20)	/* ... and their bytes at most */
#define PUSH_TRIES		4		/* sends of one profile at most */
#define PUSH_TIMEOUT_S		5		/* connect, send and answer, each try */

struct pusher;

/*
 * Check URL (http://HOST[:PORT][/PATH], HOST a name, an IPv4 address or [IPv6]) and start
 * the thread that sends to URL/ingest as application APP (Pyroscope's name, with its
 * {labels}) sampled at RATE Hz. Returns the pusher, or NULL: with errno EINVAL and *WHY a
 * sentence (static) saying what is wrong with URL or APP, else errno (ENOMEM, a thread that
 * cannot start).
 */
struct pusher *pusher__new(const char *url, const char *app, unsigned int rate,
			   const char **why);

/*
 * Queue the gzip'd profile BUF (LEN bytes, malloc'd: owned by the pusher from now on) of the
 * period FROM..UNTIL (Unix seconds). Never blocks on the network; when the queue is full,
 * the oldest profile waiting is dropped with a warning.
 */
void pusher__push(struct pusher *p, void *buf, size_t len, int64_t from, int64_t until);

/*
 * Send what is queued for up to GRACE seconds more, then stop: what is left is dropped, one
 * warning each; free everything. Returns how many profiles were dropped over the pusher's
 * life. NULL is fine (0).
 */
unsigned int pusher__free(struct pusher *p, double grace);

#endif
