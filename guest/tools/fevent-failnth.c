// SPDX-License-Identifier: GPL-2.0
/*
 * Make one system call with its N-th allocation failed
 * (/proc/thread-self/fail-nth, CONFIG_FAULT_INJECTION), for the fault
 * job (guest/jobs/fault.sh):
 *
 *   fevent-failnth N write FILE TEXT     open FILE to append, then write TEXT
 *   fevent-failnth N trunc FILE          open FILE with O_TRUNC
 *   fevent-failnth N insmod FILE [ARGS]  finit_module()
 *   fevent-failnth N rmmod NAME          delete_module()
 *
 * The file is opened before fail-nth is set, so that N counts the
 * allocations of the one call alone (for trunc, the open is the call).
 * Prints "ret=R injected=I left=L": R is what the call returned (0 or
 * -errno), I is 1 if the N-th allocation was reached and failed, 0 if the
 * call completed without reaching it, L what fail-nth read after it: with
 * a large N, N - L is the number of allocations the call made.  N=0
 * fails nothing.  Exit status 0 unless the helper itself could not do its
 * part.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int nth_fd = -1;

static int arm(unsigned int n)
{
	char buf[16];
	int len;

	if (!n)
		return 0;
	len = snprintf(buf, sizeof(buf), "%u", n);
	if (write(nth_fd, buf, len) != len) {
		perror("fail-nth");
		return -1;
	}
	return 0;
}

/* What fail-nth counts down to, 0 if the fault was injected; disarmed */
static unsigned int disarm(unsigned int n)
{
	char buf[16] = "";
	ssize_t len;

	if (!n)
		return 0;
	len = pread(nth_fd, buf, sizeof(buf) - 1, 0);
	if (write(nth_fd, "0", 1) != 1 || len <= 0) {
		perror("fail-nth");
		exit(2);
	}
	return strtoul(buf, NULL, 10);
}

int main(int argc, char **argv)
{
	unsigned int n;
	const char *op;
	unsigned int left;
	long ret = 0;
	int fd = -1;

	if (argc < 4) {
		fprintf(stderr, "usage: %s N write|trunc|insmod|rmmod ARG...\n",
			argv[0]);
		return 2;
	}
	n = strtoul(argv[1], NULL, 0);
	op = argv[2];
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (nth_fd < 0) {
		perror("/proc/thread-self/fail-nth");
		return 2;
	}
	if (!strcmp(op, "write") && argc == 5) {
		fd = open(argv[3], O_WRONLY | O_APPEND);
		if (fd < 0) {
			perror(argv[3]);
			return 2;
		}
		if (arm(n))
			return 2;
		ret = write(fd, argv[4], strlen(argv[4]));
	} else if (!strcmp(op, "trunc") && argc == 4) {
		if (arm(n))
			return 2;
		ret = fd = open(argv[3], O_WRONLY | O_TRUNC);
	} else if (!strcmp(op, "insmod") && argc >= 4) {
		fd = open(argv[3], O_RDONLY);
		if (fd < 0) {
			perror(argv[3]);
			return 2;
		}
		if (arm(n))
			return 2;
		ret = syscall(SYS_finit_module, fd, argc > 4 ? argv[4] : "", 0);
	} else if (!strcmp(op, "rmmod") && argc == 4) {
		if (arm(n))
			return 2;
		ret = syscall(SYS_delete_module, argv[3], O_NONBLOCK);
	} else {
		fprintf(stderr, "%s: bad arguments for %s\n", argv[0], op);
		return 2;
	}
	if (ret < 0)
		ret = -errno;
	else
		ret = 0;
	left = disarm(n);
	printf("ret=%ld injected=%d left=%u\n", ret, n && !left, left);
	return 0;
}
