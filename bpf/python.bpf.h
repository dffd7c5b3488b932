/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The Python frames of the sampled thread, read as the sample is taken (the task is current:
 * its interpreter's frames are as they were; later they are gone): CPython's thread state of
 * the thread (found by its pthread_t, the fs base, in the interpreter's list; kept per thread
 * in `py_tstates`), then its frame chain, each frame's code object and instruction. Every
 * read is bounded and may fail: a frame that cannot be read ends the Python frames there
 * (marked PY_MARK_CUT). Code objects new to a process are sent to userspace once a period
 * (`py_codes`, by their signature: first line, name and file name pointers), which reads
 * their bytes while the process lives. Included by
 * profile.bpf.c only.
 */
#ifndef PROFILE_PYTHON_BPF_H
#define PROFILE_PYTHON_BPF_H

const volatile bool python = false;	/* processes in `py_procs` have their Python frames read */
/* Set by userspace before the first `py_procs` entry (never cleared): until then no sample
 * looks there. */
bool py_any;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct py_proc);
} py_procs SEC(".maps");

/* A thread's (kernel tid) PyThreadState, as last found. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} py_tstates SEC(".maps");

struct py_code_key {
	__u32 pid;
	__u32 pad;
	__u64 code;
};

/* The code objects sent to userspace: their first line (a freed one's place taken by
 * another is sent again) and the period they were sent in (in continuous mode userspace
 * keeps them for a period: sent again in the next). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct py_code_key);
	__type(value, __u64);
} py_codes SEC(".maps");

/* WORD after the frames of ST (python.bpf.h's and ruby.bpf.h's words): false when ST is full. */
static __always_inline bool ustack_push(struct ustack *st, __u64 word)
{
	__u64 idx = st->nr;

	/* (A bound the compiler keeps as written: the verifier checks this register.) */
	asm volatile("" : "+r"(idx));
	if (idx >= PROFILE_MAX_DEPTH)
		return false;
	st->ips[idx] = word;
	st->nr = idx + 1;
	return true;
}

/* BITS set in ST's frame I (a word pushed before). */
static __always_inline void ustack_or(struct ustack *st, __u64 i, __u64 bits)
{
	asm volatile("" : "+r"(i));
	if (i < PROFILE_MAX_DEPTH)
		st->ips[i] |= bits;
}

struct py_find {
	const struct py_offsets *o;
	__u64 ts;		/* the thread state looked at, then the one found (0: none) */
	__u64 fsbase;
	__u32 found;
};

/* bpf_loop's callback: the next thread state of the list. */
static long py_find_step(__u64 i, void *arg)
{
	struct py_find *f = arg;
	__u64 id = 0;

	if (!f->ts || bpf_probe_read_user(&id, sizeof(id),
					  (void *)(f->ts + f->o->tstate_thread_id)))
		return 1;
	if (id == f->fsbase) {
		f->found = 1;
		return 1;
	}
	if (bpf_probe_read_user(&f->ts, sizeof(f->ts), (void *)(f->ts + f->o->tstate_next)))
		f->ts = 0;
	return 0;
}

/* What a frame's fields are read from: its first PY_FRAME_READ bytes, in one read (every
 * version's fields lie there), and the code objects this CPU met last (direct-mapped by
 * address, with their first line: met again, no `py_codes` lookup). */
#define PY_FRAME_READ	112
#define PY_FRAME_BUF	128	/* (a power of two: the index is masked) */
#define PY_RECENT	64
struct py_scratch {
	__u8 frame[PY_FRAME_BUF];
	__u64 code[PY_RECENT];
	__u32 pid[PY_RECENT];
	__s32 line[PY_RECENT];
	__u32 period[PY_RECENT];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_scratch);
} py_scratch SEC(".maps");

struct py_walk {
	const struct py_offsets *o;
	struct ustack *st;
	struct py_scratch *sc;
	__u64 frame;
	__u64 gen;
	__u32 pid;
	__u32 first;		/* st->ips index of the first Python frame */
};

/* The code object CODE of process W->pid sent to userspace, unless it was (with the same
 * signature: its first line, and the addresses of its name and file name: another one in a
 * freed one's place is sent again). */
static __always_inline void py_announce(struct py_walk *w, __u64 code)
{
	struct py_code_key k = { .pid = w->pid, .code = code };
	struct py_code_event ev = { .pid = w->pid, .magic = PY_CODE_MAGIC, .code = code,
				    .gen = w->gen };
	struct py_scratch *sc = w->sc;
	__u32 slot = (code >> 4) & (PY_RECENT - 1);
	const struct py_offsets *o = w->o;
	__u32 now = period;
	__s32 line = 0;
	__u64 sig, *known, a = 0;

	/* (The frame's bytes in SC were taken: its buffer holds the code object's now.) */
	if (sc && !bpf_probe_read_user((void *)sc->frame, PY_CODE_SIG,
				       (void *)(code + o->code_firstlineno))) {
		line = *(const __s32 *)sc->frame;
		if (o->code_sig_name != PY_NO_FIELD && o->code_sig_name > o->code_firstlineno) {
			a = (__u64)(o->code_sig_name - o->code_firstlineno);
			asm volatile("" : "+r"(a));
			if (a <= PY_CODE_SIG - 8)
				line ^= (__s32)(*(const __u64 *)&sc->frame[a & (PY_FRAME_BUF - 1)] >> 4);
		}
		if (o->code_sig_file != PY_NO_FIELD && o->code_sig_file > o->code_firstlineno) {
			a = (__u64)(o->code_sig_file - o->code_firstlineno);
			asm volatile("" : "+r"(a));
			if (a <= PY_CODE_SIG - 8)
				line ^= (__s32)(*(const __u64 *)&sc->frame[a & (PY_FRAME_BUF - 1)] >> 7);
		}
	} else {
		bpf_probe_read_user(&line, sizeof(line), (void *)(code + o->code_firstlineno));
	}
	if (sc && sc->code[slot] == code && sc->pid[slot] == w->pid && sc->line[slot] == line &&
	    sc->period[slot] == now)
		return;
	sig = (__u32)line | (__u64)now << 32;
	known = bpf_map_lookup_elem(&py_codes, &k);
	if (!known || *known != sig) {
		bpf_map_update_elem(&py_codes, &k, &sig, BPF_ANY);
		if (bpf_ringbuf_output(&events, &ev, sizeof(ev), ring_flags()))
			stat_inc(STAT_EVENTS_LOST);
	}
	if (sc) {
		sc->code[slot] = code;
		sc->pid[slot] = w->pid;
		sc->line[slot] = line;
		sc->period[slot] = now;
	}
}

/* The LEN (8, 4 or 1) bytes at OFF of the frame read whole into SC, or read from FRAME alone
 * (SC NULL: the whole read failed). Returns 0 or -1. */
static __always_inline int py_field(const struct py_scratch *sc, __u64 frame, __u16 off,
				    __u32 len, void *val)
{
	__u64 at = off;

	if (sc && at + len <= PY_FRAME_READ) {
		/* (A bound the verifier sees.) */
		asm volatile("" : "+r"(at));
		if (len == 8)
			*(__u64 *)val = *(const __u64 *)&sc->frame[at & (PY_FRAME_BUF - 1)];
		else if (len == 4)
			*(__u32 *)val = *(const __u32 *)&sc->frame[at & (PY_FRAME_BUF - 1)];
		else
			*(__u8 *)val = sc->frame[at & (PY_FRAME_BUF - 1)];
		return 0;
	}
	return bpf_probe_read_user(val, len, (void *)(frame + off)) ? -1 : 0;
}

/* bpf_loop's callback: one Python frame into W->st. */
static long py_step(__u64 i, void *arg)
{
	struct py_walk *w = arg;
	const struct py_offsets *o = w->o;
	struct ustack *st = w->st;
	const struct py_scratch *sc;
	__u64 frame = w->frame, code = 0, prev = 0, instr = 0, unit = PY_UNIT_UNKNOWN;
	__s32 lasti = -1;
	__u8 entry = 0;
	__u32 n;

	if (!frame || !st)
		return 1;
	n = st->nr;
	if (n >= PROFILE_MAX_DEPTH)
		return 1;
	sc = w->sc;
	if (sc && bpf_probe_read_user((void *)sc->frame, PY_FRAME_READ, (void *)frame))
		sc = NULL;
	if (py_field(sc, frame, o->frame_code, 8, &code) ||
	    py_field(sc, frame, o->frame_previous, 8, &prev))
		return 1;
	w->frame = prev;
	if (o->frame_entry != PY_NO_FIELD)
		py_field(sc, frame, o->frame_entry, 1, &entry);
	if (o->model >= PY_MODEL_SHIM_PREV && entry == o->owner_cstack) {
		/* The interpreter's loop began below: the frame before this one was the
		 * first it ran. */
		if (n > w->first)
			ustack_or(st, n - 1, PY_WORD_ENTRY);
		return 0;
	}
	if (!code || (code & 7))
		return 1;
	switch (o->model) {
	case PY_MODEL_FRAMEOBJ_BYTES:
	case PY_MODEL_FRAMEOBJ_UNITS:
		entry = 1;
		if (!py_field(sc, frame, o->frame_instr, 4, &lasti))
			unit = lasti < 0 ? PY_UNIT_BEFORE_FIRST :
			       o->model == PY_MODEL_FRAMEOBJ_BYTES ? (__u64)lasti / 2 : (__u64)lasti;
		break;
	case PY_MODEL_ENTRY_FLAG:
	case PY_MODEL_SHIM_PREV:
	case PY_MODEL_SHIM_NEXT:
		if (o->model != PY_MODEL_ENTRY_FLAG)
			entry = 0;
		if (!py_field(sc, frame, o->frame_instr, 8, &instr))
			unit = instr < code + o->code_adaptive ? PY_UNIT_BEFORE_FIRST :
			       (instr - code - o->code_adaptive) / 2;
		break;
	default:
		return 1;
	}
	if (unit > PY_UNIT_UNKNOWN)
		unit = PY_UNIT_UNKNOWN;
	else if (unit == PY_UNIT_BEFORE_FIRST && !(lasti < 0 || instr < code + o->code_adaptive))
		unit = PY_UNIT_UNKNOWN;	/* (a real instruction that far: not known) */
	py_announce(w, code);
	return ustack_push(st, (code & PY_WORD_ADDR) | unit << PY_UNIT_SHIFT |
			       (entry ? PY_WORD_ENTRY : 0)) ? 0 : 1;
}

/* The thread state of the thread whose fs base is FSBASE (kernel tid KTID) in process P, or 0. */
static __always_inline __u64 py_tstate(const struct py_proc *p, __u32 ktid, __u64 fsbase)
{
	struct py_find f = { .o = &p->off, .fsbase = fsbase };
	__u64 *known = bpf_map_lookup_elem(&py_tstates, &ktid), interp = 0, id = 0;

	if (known && *known &&
	    !bpf_probe_read_user(&id, sizeof(id), (void *)(*known + p->off.tstate_thread_id)) &&
	    id == fsbase)
		return *known;
	if (bpf_probe_read_user(&interp, sizeof(interp),
				(void *)(p->runtime + p->off.runtime_interp_head)) || !interp ||
	    bpf_probe_read_user(&f.ts, sizeof(f.ts), (void *)(interp + p->off.interp_tstate_head)))
		return 0;
	bpf_loop(PY_MAX_THREADS, py_find_step, &f, 0);
	if (!f.found)
		return 0;
	bpf_map_update_elem(&py_tstates, &ktid, &f.ts, BPF_ANY);
	return f.ts;
}

/*
 * The Python frames of the current thread (KTID, fs base FSBASE) of process TGID, when it is
 * one running CPython, after PY_MARK behind the NR frames of ST (GEN: the sample's). Returns
 * how many. A global function: the verifier checks it once.
 */
__noinline int py_frames(struct ustack *st, __u32 tgid, __u32 ktid, __u64 fsbase, __u64 gen)
{
	const struct py_proc *p = bpf_map_lookup_elem(&py_procs, &tgid);
	struct py_walk w = { .st = st, .pid = tgid, .gen = gen };
	__u64 ts, frame = 0;
	__u32 n, zero = 0;

	if (!p || !st)
		return 0;
	w.o = &p->off;
	w.sc = bpf_map_lookup_elem(&py_scratch, &zero);
	ts = py_tstate(p, ktid, fsbase);
	if (!ts || bpf_probe_read_user(&frame, sizeof(frame), (void *)(ts + p->off.tstate_frame)))
		return 0;
	if (frame && p->off.cframe_current_frame != PY_NO_FIELD &&
	    bpf_probe_read_user(&frame, sizeof(frame),
				(void *)(frame + p->off.cframe_current_frame)))
		return 0;
	n = st->nr;
	if (!frame || n + 1 >= PROFILE_MAX_DEPTH || !ustack_push(st, PY_MARK))
		return 0;
	w.first = n + 1;
	w.frame = frame;
	bpf_loop(PY_MAX_FRAMES, py_step, &w, 0);
	if (st->nr == n + 1) {
		st->nr = n;	/* none read */
		return 0;
	}
	/* The chain went on past what was read: its outer frames are not there. */
	if (w.frame)
		ustack_or(st, n, PY_MARK_CUT);
	return (int)(st->nr - n - 1);
}

#endif
