/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the guest-side fuzzer and stress tools: tracefs file
 * access that returns -errno instead of exiting, and a seeded PRNG.
 */
#ifndef FBE_FUZZ_COMMON_H
#define FBE_FUZZ_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRACEFS		"/sys/kernel/tracing"
#define SAMPLE_DIR	"/sys/kernel/debug/fevent_sample"

/* Write len bytes (which may hold NULs) in one write(); 0 or -errno */
static inline int write_file(const char *path, const void *buf, size_t len,
			     int flags)
{
	ssize_t r;
	int fd, err;

	fd = open(path, O_WRONLY | flags);
	if (fd < 0)
		return -errno;
	r = write(fd, buf, len);
	err = errno;
	close(fd);
	if (r < 0)
		return -err;
	return r == (ssize_t)len ? 0 : -EIO;
}

static inline int write_str(const char *path, const char *s)
{
	return write_file(path, s, strlen(s), O_APPEND);
}

/* Truncate (clear) a tracefs file such as trace, error_log or *_events */
static inline int clear_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Read a whole file into buf (NUL-terminated); length or -errno */
static inline ssize_t read_file(const char *path, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	while (n + 1 < size && (r = read(fd, buf + n, size - n - 1)) > 0)
		n += r;
	r = r < 0 ? -errno : (ssize_t)n;
	close(fd);
	buf[n] = '\0';
	return r;
}

/* xorshift64*: small, fast and the same sequence everywhere */
static uint64_t rng_state;

static inline void rng_seed(uint64_t seed)
{
	rng_state = seed * 0x9e3779b97f4a7c15ULL + 1;
}

static inline uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static inline unsigned int rnd(unsigned int n)
{
	return n ? rng() % n : 0;
}

#define PICK(a)	((a)[rnd(sizeof(a) / sizeof((a)[0]))])

#endif
