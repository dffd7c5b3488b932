// SPDX-License-Identifier: GPL-3.0-or-later
/* Spends its time in read(2): large reads from /dev/zero. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "spin.h"

static char buf[1 << 20];

__attribute__((noinline)) static void read_zeros(int fd)
{
	if (read(fd, buf, sizeof(buf)) < 0)
		perror("read");
}

int main(int argc, char **argv)
{
	double end = spin_now() + spin_seconds(argc, argv);
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	while (spin_now() < end)
		read_zeros(fd);
	close(fd);
	return 0;
}
