// SPDX-License-Identifier: GPL-3.0-or-later
/* proto: encoding and decoding of the worker's messages (see proto.h), and the socket. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "base/rd.h"
#include "base/grow.h"
#include "sandbox/proto.h"
#include "symbolize/symfile.h"	/* SYM_KIND__MAX */

/* --- decoding --------------------------------------------------------------------------- */

/* (A bounded reader, base/rd.h: every read past the end sets BAD and gives zeros.) */

/* A string of at most MAX bytes, NUL-terminated and NUL-free; NULL (and BAD) otherwise. */
static const char *rd__str(struct rd *r, size_t max)
{
	uint32_t len = rd__u32(r);
	const char *s;

	if (len > max || !rd__has(r, (size_t)len + 1))
		goto bad;
	s = (const char *)r->p;
	if (s[len] || memchr(s, '\0', len))
		goto bad;
	r->p += (size_t)len + 1;
	return s;
bad:
	r->bad = true;
	return NULL;
}

/* N u64 addresses: a pointer to them, or NULL (and BAD). */
static const unsigned char *rd__addrs(struct rd *r, uint32_t n)
{
	const unsigned char *p = r->p;

	if (n > SB_BATCH_MAX) {
		r->bad = true;
		return NULL;
	}
	if (!rd__has(r, (size_t)n * 8))
		return NULL;
	r->p += (size_t)n * 8;
	return p;
}

uint32_t sb_msg__unit(const struct sb_msg *m, uint32_t i)
{
	uint32_t v;

	memcpy(&v, m->units + (size_t)i * 4, 4);
	return v;
}

uint64_t sb_msg__addr(const struct sb_msg *m, uint32_t i)
{
	struct rd r = rd__init(m->addrs + (size_t)i * 8, 8);

	return rd__u64(&r);
}

/* The strings and entries of an SB_NAMES after its counts, checked whole. */
static void rd__names(struct rd *r, struct sb_msg *m)
{
	const unsigned char *start = r->p;

	if (m->n > SB_BATCH_MAX || m->nstr > SB_MSG_MAX / 5) {
		r->bad = true;
		return;
	}
	for (uint32_t i = 0; i < m->nstr && !r->bad; i++)
		rd__str(r, SB_STR_MAX);
	m->strs = start;
	m->strs_len = (size_t)(r->p - start);
	start = r->p;
	for (uint32_t i = 0; i < m->n && !r->bad; i++) {
		uint8_t nr = rd__u8(r);

		if (nr < 1 || nr > SB_FRAMES_MAX || !rd__has(r, (size_t)nr * SB_FRAME_LEN)) {
			r->bad = true;
			break;
		}
		for (uint8_t k = 0; k < nr; k++) {
			uint32_t name = rd__u32(r), file = rd__u32(r);

			rd__u32(r);
			if (name >= m->nstr || (file != SB_NO_STR && file >= m->nstr) ||
			    rd__u8(r) >= SYM_KIND__MAX)
				r->bad = true;
		}
	}
	m->ents = start;
	m->ents_len = (size_t)(r->p - start);
}

/* The body of a client's message (to the worker). */
static void rd__request(struct rd *r, struct sb_msg *m)
{
	switch (m->type) {
	case SB_FILE:
		m->path = rd__str(r, SB_PATH_MAX);
		m->nfds = 1;
		break;
	case SB_PREPARE:
		if (m->arg)
			r->bad = true;
		break;
	case SB_DEBUG:
		m->n = m->arg;
		m->nfds = m->n;
		if (m->n > SB_FDS_MAX) {
			r->bad = true;
			break;
		}
		for (uint32_t i = 0; i < m->n && !r->bad; i++) {
			uint8_t by_id = rd__u8(r);

			m->cand[i].by_id = by_id == 1;
			m->cand[i].path = rd__str(r, SB_PATH_MAX);
			if (by_id > 1)
				r->bad = true;
		}
		break;
	case SB_LOOKUP:
	case SB_JIT:
		m->seq = rd__u32(r);
		m->n = rd__u32(r);
		if (m->type == SB_JIT)
			m->upto = rd__u64(r);
		m->addrs = rd__addrs(r, m->n);
		if (m->arg)
			r->bad = true;
		break;
	case SB_PERFMAP:
		m->nfds = 1;
		if (m->arg)
			r->bad = true;
		break;
	case SB_TABLE:
		if (m->arg)
			r->bad = true;
		break;
	case SB_FORGET:
		if (m->arg > 1)
			r->bad = true;
		break;
	case SB_PYCODE:
	case SB_RBCODE:
		m->seq = rd__u32(r);
		for (int i = 0; i < SB_PY_BLOBS && !r->bad; i++) {
			m->blob_len[i] = rd__u32(r);
			if (m->blob_len[i] > SB_PY_BLOB_MAX) {
				r->bad = true;
				break;
			}
			m->blob[i] = r->p;
			if (rd__has(r, m->blob_len[i]))
				r->p += m->blob_len[i];
		}
		m->n = rd__u32(r);
		if (m->n > SB_BATCH_MAX || m->id) {
			r->bad = true;
			break;
		}
		m->units = r->p;
		if (rd__has(r, (size_t)m->n * 4))
			r->p += (size_t)m->n * 4;
		break;
	default:
		r->bad = true;
	}
}

/* The body of a worker's message (to the client). */
static void rd__answer(struct rd *r, struct sb_msg *m)
{
	switch (m->type) {
	case SB_HELLO:
		m->uid = rd__u32(r);
		m->gid = rd__u32(r);
		break;
	case SB_BUSY:
		if (m->arg > 1)
			r->bad = true;
		break;
	case SB_WANT_DEBUG:
		m->crc = rd__u32(r);
		m->build_id = rd__str(r, SB_BUILD_ID_MAX);
		m->link = rd__str(r, SB_PATH_MAX);
		if ((m->arg & ~SB_WANT_REMOTE) > SB_WANT_ALT)
			r->bad = true;
		break;
	case SB_NAMES:
		m->seq = rd__u32(r);
		m->first = rd__u32(r);
		m->n = rd__u32(r);
		m->nr_syms = rd__u32(r);
		m->flags = rd__u32(r);
		m->nstr = rd__u32(r);
		if (m->arg > 1 || (m->flags & ~SB_NAMES_DEBUG) || m->first > SB_BATCH_MAX)
			r->bad = true;
		else
			rd__names(r, m);
		break;
	case SB_UTAB:
		m->total = rd__u32(r);
		m->offset = rd__u32(r);
		m->data = r->p;
		m->data_len = (size_t)(r->end - r->p);
		r->p = r->end;
		if (m->arg > 1 || m->total > SB_UTAB_MAX || m->offset > m->total ||
		    m->data_len > m->total - m->offset ||
		    (m->arg && m->offset + m->data_len != m->total))
			r->bad = true;
		break;
	case SB_LIMITS:
		m->n = rd__u32(r);
		if (m->arg || m->id || m->n > SB_LIMITS_MAX) {
			r->bad = true;
			break;
		}
		for (uint32_t i = 0; i < m->n && !r->bad; i++)
			m->counts[i] = rd__u64(r);
		break;
	default:
		r->bad = true;
	}
}

int sb_msg__decode(const void *buf, size_t len, unsigned int nfds, bool to_worker,
		   struct sb_msg *m)
{
	struct rd r = rd__init(buf, len);

	memset(m, 0, sizeof(*m));
	if (len > SB_MSG_MAX)
		return -EBADMSG;
	m->type = rd__u8(&r);
	m->arg = rd__u8(&r);
	if (rd__u8(&r) || rd__u8(&r))
		r.bad = true;
	m->id = rd__u32(&r);
	if (r.bad)
		return -EBADMSG;
	if (m->type != SB_HELLO && m->id >= SB_IDS_MAX)
		return -EBADMSG;
	if (to_worker)
		rd__request(&r, m);
	else
		rd__answer(&r, m);
	/* Nothing may follow, and the descriptors must be the type's. */
	if (r.bad || r.p != r.end || nfds != m->nfds)
		return -EBADMSG;
	return 0;
}

void sb_names__strings(const struct sb_msg *m, const char **strs)
{
	struct rd r = rd__init(m->strs, m->strs_len);

	for (uint32_t i = 0; i < m->nstr; i++)
		strs[i] = rd__str(&r, SB_STR_MAX);
}

int sb_names__next(const struct sb_msg *m, size_t *pos, struct sb_frame *frames)
{
	struct rd r = { m->ents + *pos, m->ents + m->ents_len, false };
	int nr = rd__u8(&r);

	for (int i = 0; i < nr; i++) {
		frames[i].name = rd__u32(&r);
		frames[i].file = rd__u32(&r);
		frames[i].line = rd__u32(&r);
		frames[i].kind = rd__u8(&r);
	}
	*pos = (size_t)(r.p - m->ents);
	return nr;
}

/* --- encoding --------------------------------------------------------------------------- */

static unsigned char *sb_buf__room(struct sb_buf *b, size_t n)
{
	if (b->err)
		return NULL;
	if (b->len + n > SB_MSG_MAX) {
		b->err = -EMSGSIZE;
		return NULL;
	}
	if (n && array_grow(&b->p, &b->cap, 1, b->len + n - 1)) {
		b->err = -ENOMEM;
		return NULL;
	}
	b->len += n;
	return b->p + b->len - n;
}

void sb_buf__u8(struct sb_buf *b, uint8_t v)
{
	unsigned char *p = sb_buf__room(b, 1);

	if (p)
		*p = v;
}

void sb_buf__put_u32(struct sb_buf *b, size_t off, uint32_t v)
{
	if (b->err || off + 4 > b->len)
		return;
	for (int i = 0; i < 4; i++)
		b->p[off + i] = (unsigned char)(v >> (8 * i));
}

void sb_buf__u32(struct sb_buf *b, uint32_t v)
{
	if (sb_buf__room(b, 4))
		sb_buf__put_u32(b, b->len - 4, v);
}

void sb_buf__u64(struct sb_buf *b, uint64_t v)
{
	unsigned char *p = sb_buf__room(b, 8);

	for (int i = 0; p && i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

void sb_buf__frames(struct sb_buf *b, const struct sb_frame *frames, int nr)
{
	sb_buf__u8(b, (uint8_t)nr);
	for (int i = 0; i < nr; i++) {
		sb_buf__u32(b, frames[i].name);
		sb_buf__u32(b, frames[i].file);
		sb_buf__u32(b, frames[i].line);
		sb_buf__u8(b, frames[i].kind);
	}
}

void sb_buf__str(struct sb_buf *b, const char *s, size_t len)
{
	unsigned char *p;

	sb_buf__u32(b, (uint32_t)len);
	p = sb_buf__room(b, len + 1);
	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
}

void sb_buf__clear(struct sb_buf *b)
{
	b->len = 0;
	b->err = 0;
}

void sb_buf__bytes(struct sb_buf *b, const void *p, size_t len)
{
	unsigned char *d = sb_buf__room(b, len);

	if (d && len)
		memcpy(d, p, len);
}

void sb_buf__start(struct sb_buf *b, enum sb_type type, uint8_t arg, uint32_t id)
{
	sb_buf__clear(b);
	sb_buf__u8(b, (uint8_t)type);
	sb_buf__u8(b, arg);
	sb_buf__u8(b, 0);
	sb_buf__u8(b, 0);
	sb_buf__u32(b, id);
}

int sb_buf__end(const struct sb_buf *b)
{
	return b->err;
}

void sb_buf__free(struct sb_buf *b)
{
	free(b->p);
	*b = (struct sb_buf){ 0 };
}

/* --- the debuginfod fetcher's answers ----------------------------------------------------- */

int sb_fetch_answer__decode(const void *buf, size_t len, int32_t *status, char *id)
{
	const unsigned char *p = buf;
	size_t n = len - 4;

	if (len < 4 + 3 || len > 4 + SB_BUILD_ID_MAX)
		return -EBADMSG;
	memcpy(status, p, 4);
	memcpy(id, p + 4, n);
	id[n] = 0;
	if (*status > 0 || *status < -4095 || strspn(id, "0123456789abcdef") != n)
		return -EBADMSG;
	return 0;
}

/* --- the socket ------------------------------------------------------------------------- */

int sb_send(int sock, const void *buf, size_t len, const int *fds, unsigned int nfds,
	    int flags)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(SB_FDS_MAX * sizeof(int))];
	} ctl;
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	if (nfds > SB_FDS_MAX)
		return -EINVAL;
	if (nfds) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		ctl.h.cmsg_level = SOL_SOCKET;
		ctl.h.cmsg_type = SCM_RIGHTS;
		ctl.h.cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(&ctl.h), fds, nfds * sizeof(int));
	}
	do
		r = sendmsg(sock, &mh, MSG_NOSIGNAL | flags);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EMSGSIZE;
}

long sb_recv(int sock, void *buf, int *fds, unsigned int *nfds, int flags)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(SB_FDS_MAX * sizeof(int))];
	} ctl;
	struct iovec iov = { buf, SB_MSG_MAX };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	ssize_t r;

	*nfds = 0;
	do
		r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (*nfds < SB_FDS_MAX)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		for (unsigned int i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
		return -EMSGSIZE;
	}
	return (long)r;
}
