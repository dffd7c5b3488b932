// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * `profile top`: the hottest functions of what profile samples, shown anew every second, as
 * perf top and py-spy top show them. The sampling is continuous mode's (a period a refresh),
 * the table output/top.c's; q or Ctrl-C ends it.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include "base/log.h"
#include "output/folded.h"
#include "output/top.h"
#include "profile/profile.h"
#include "cli.h"
#include "top_cmd.h"

struct screen {
	bool tty;		/* stdout a terminal: the view redrawn in place */
	bool raw;		/* stdin a terminal put in raw mode (keys without Enter) */
	struct termios saved;
	uint64_t all;		/* samples (or the unit's) shown so far */
	unsigned int frames;
};

static void screen_open(struct screen *sc)
{
	struct termios t;

	sc->tty = isatty(STDOUT_FILENO);
	if (isatty(STDIN_FILENO) && !tcgetattr(STDIN_FILENO, &sc->saved)) {
		t = sc->saved;
		t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);	/* ISIG kept: Ctrl-C ends it */
		t.c_cc[VMIN] = 0;
		t.c_cc[VTIME] = 0;
		sc->raw = !tcsetattr(STDIN_FILENO, TCSANOW, &t);
	}
	if (sc->tty)
		fputs("\033[?25l", stdout);	/* no cursor */
}

static void screen_close(struct screen *sc)
{
	if (sc->raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &sc->saved);
	if (sc->tty)
		fputs("\033[?25h", stdout);
	fflush(stdout);
}

/* Whether q was pressed since the last look. */
static bool quit_pressed(const struct screen *sc)
{
	struct pollfd p = { STDIN_FILENO, POLLIN, 0 };
	char buf[64];
	ssize_t n;

	if (!sc->raw)
		return false;
	while (poll(&p, 1, 0) == 1 && (n = read(STDIN_FILENO, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == 'q' || buf[i] == 'Q')
				return true;
	return false;
}

/* The period that just ended, drawn. Returns 0 or an exit status. */
static int show_period(struct settings *st, struct session *s, struct screen *sc)
{
	struct profile *p = profile__new();
	struct folded *f = folded__new();
	struct top *t = top__new(TOP_ROOT_IS_PROCESS);
	struct winsize ws = { .ws_row = 24, .ws_col = 100 };
	struct timespec start;
	char what[128];
	double secs;
	size_t rows, width;
	int ret = 0;

	if (!p || !f || !t) {
		pr_warn("out of memory");
		ret = EXIT_RUNTIME;
		goto out;
	}
	ret = build_period(s, p, f, 0, &start, &secs);
	ret = ret < 0 ? EXIT_RUNTIME : ret;
	if (!ret && top__add_folded(t, f)) {
		pr_warn("out of memory");
		ret = EXIT_RUNTIME;
	}
	if (ret)
		goto out;
	if (sc->tty)
		ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws);
	rows = ws.ws_row > 6 ? ws.ws_row - 4u : 2;
	width = ws.ws_col > 40 ? ws.ws_col - 24u : 16;
	sc->all += top__total(t);
	describe_target(st, what, sizeof(what));
	if (sc->tty)
		fputs("\033[H\033[2J", stdout);
	else if (sc->frames)
		fputc('\n', stdout);
	printf("profile top: %s, %u Hz; last %.1f s: %llu samples (%llu in all)%s\n", what,
	       st->session.freq, secs, (unsigned long long)top__total(t),
	       (unsigned long long)sc->all, sc->raw ? "; q quits" : "");
	if (top__total(t))
		ret = top__write(t, stdout, TOP_BY_SELF, rows, width) ? EXIT_RUNTIME : 0;
	else
		printf("  (no samples: the targets did not run on a CPU)\n");
	fflush(stdout);
	sc->frames++;
out:
	top__free(t);
	folded__free(f);
	profile__free(p);
	return ret;
}

int top_main(int argc, char **argv)
{
	struct settings st = { 0 };
	struct screen sc = { 0 };
	enum session_err_kind kind = 0;
	struct session *s;
	char *errmsg = NULL;
	int ret, err;

	st.top_view = true;
	ret = parse_args(argc, argv, &st);
	if (ret)
		return ret;
	st.session.status_line = false;
	s = session__open(&st.session, &errmsg, &kind);
	if (!s) {
		pr_warn("%s", errmsg ? errmsg : "cannot start");
		free(errmsg);
		return exit_status(kind);
	}
	screen_open(&sc);
	for (;;) {
		err = session__run(s);
		if (err != SESSION_PERIOD_END)
			break;
		ret = show_period(&st, s, &sc);
		if (ret)
			break;
		/* q: the end, as Ctrl-C is (the session ends on SIGINT). */
		if (quit_pressed(&sc))
			raise(SIGINT);
	}
	screen_close(&sc);
	if (!ret && err && err != SESSION_PERIOD_END) {
		pr_warn("%s", session__error(s, &kind));
		ret = exit_status(kind);
	}
	if (!ret)
		fprintf(stderr, "profile top: %llu samples shown in %u refreshes\n",
			(unsigned long long)sc.all, sc.frames);
	session__free(s);
	free(errmsg);
	return ret;
}
