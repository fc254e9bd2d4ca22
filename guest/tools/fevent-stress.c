// SPDX-License-Identifier: GPL-2.0
/*
 * fevent-stress: race the control paths of function and kprobe events
 * against their hit path.
 *
 *   fevent-stress [-t SECONDS]
 *
 * While one thread per CPU calls the traced functions continuously (the
 * sample module's fevent_sample_call() and vfs_read()), other threads:
 *
 *  - create and remove a function event and an exit event (its fields
 *    named through BTF) on fevent_sample_call(), and an entry and an exit
 *    event over a pattern that matches it,
 *  - enable and disable them, in the top instance and in an instance, one
 *    by one and with group writes (events/functions/enable, one batch),
 *  - create and remove that instance,
 *  - read trace_pipe (top and instance) without blocking,
 *  - cycle a function event on fevent_sample_bad() and a kprobe event on
 *    fevent_sample_call() through create, enable, remove (which must fail
 *    with -EBUSY and leave the event listed), clear-all (same), disable
 *    and remove (which must succeed).
 *
 * Every write's result is checked against the errors its race allows; an
 * unexpected one is reported and fails the run.  The kernel's side
 * (KASAN, lockdep, RCU stalls, leaks) is checked on the console by the
 * harness.  Output is KTAP.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>

#include "common.h"

#define FEVENTS		TRACEFS "/function_events"
#define KEVENTS		TRACEFS "/kprobe_events"
#define INST		TRACEFS "/instances/fbe_stress"
#define CALL_DEF	"fevent_sample_call(int id[0], int seq, string msg)"
#define EXIT_DEF	"fevent_sample_call%return(item->id, seq, string msg, $retval)"
/* Events over a pattern that matches fevent_sample_call() among others */
#define GLOB_DEF	"F:fbe_glob fevent_sample_[bc]*(NULL, int seq)"
#define GLOBX_DEF	"F:fbe_globx fevent_sample_[bc]*%return(NULL, int seq, int $retval)"
/*
 * In a group of its own: the group writes of the enabler do not touch it.
 * Listed with its module: "F:fbe_strict/bad fevent_sample:fevent_sample_bad(...)"
 */
#define BAD_FN		"fevent_sample_bad(x64 item | int id[0], string msg)"
#define BAD_DEF		"F:fbe_strict/bad " BAD_FN
#define KP_DEF		"p:kprobes/fbe_stress fevent_sample_call id=+0($arg1):s32 seq=$arg2:s32"

static atomic_int stop;
static atomic_uint errors;
static atomic_ulong ops, calls;

static void fail(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&errors, 1) >= 20)
		return;
	printf("# FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* ret must be 0 or one of the errors the race allows (0-terminated) */
static void expect(const char *what, int ret, ...)
{
	va_list ap;
	int e;

	atomic_fetch_add(&ops, 1);
	if (!ret)
		return;
	va_start(ap, ret);
	while ((e = va_arg(ap, int)))
		if (ret == -e) {
			va_end(ap);
			return;
		}
	va_end(ap);
	fail("%s: %s", what, strerror(-ret));
}

static void must(const char *what, int ret, int want)
{
	atomic_fetch_add(&ops, 1);
	if (ret != want)
		fail("%s: got %s, want %s", what, ret ? strerror(-ret) : "success",
		     want ? strerror(-want) : "success");
}

static void *caller(void *arg)
{
	long cpu = (long)arg;
	cpu_set_t set;
	char buf[128];
	int fd;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	while (!stop) {
		expect("call", write_str(SAMPLE_DIR "/call", "64"), 0);
		fd = open("/proc/version", O_RDONLY);
		if (fd >= 0) {
			if (read(fd, buf, sizeof(buf)) < 0)
				fail("read /proc/version");
			close(fd);
		}
		atomic_fetch_add(&calls, 65);
	}
	return NULL;
}

/* The event on fevent_sample_call is created and removed under the others */
static void *definer(void *arg)
{
	(void)arg;
	while (!stop) {
		/* EEXIST: the last remove failed with EBUSY */
		expect("create", write_str(FEVENTS, CALL_DEF), EEXIST, 0);
		expect("create exit", write_str(FEVENTS, EXIT_DEF), EEXIST, 0);
		usleep(rand() % 2000);
		expect("remove", write_str(FEVENTS, "-:fevent_sample_call"),
		       EBUSY, ENOENT, 0);
		usleep(rand() % 1000);
		expect("remove exit",
		       write_str(FEVENTS, "-:fevent_sample_call__exit"),
		       EBUSY, ENOENT, 0);
		usleep(rand() % 1000);
		expect("create glob", write_str(FEVENTS, GLOB_DEF), EEXIST, 0);
		expect("create glob exit", write_str(FEVENTS, GLOBX_DEF),
		       EEXIST, 0);
		usleep(rand() % 2000);
		expect("remove glob", write_str(FEVENTS, "-:fbe_glob"),
		       EBUSY, ENOENT, 0);
		expect("remove glob exit", write_str(FEVENTS, "-:fbe_globx"),
		       EBUSY, ENOENT, 0);
		usleep(rand() % 1000);
	}
	return NULL;
}

static void *enabler(void *arg)
{
	static const char *const files[] = {
		TRACEFS "/events/functions/fevent_sample_call/enable",
		INST "/events/functions/fevent_sample_call/enable",
		INST "/events/kprobes/fbe_stress/enable",
		TRACEFS "/events/functions/fevent_sample_call__exit/enable",
		INST "/events/functions/fevent_sample_call__exit/enable",
		TRACEFS "/events/functions/fbe_glob/enable",
		INST "/events/functions/fbe_globx/enable",
		/* group writes: every function event at once, in one batch */
		TRACEFS "/events/functions/enable",
		INST "/events/functions/enable",
	};
	unsigned int i = 0;

	(void)arg;
	while (!stop) {
		unsigned int n = i++ % (sizeof(files) / sizeof(files[0]));
		const char *f = files[n];
		/*
		 * A group's enable file that no event matches any more (the
		 * definer removed them after the open) fails with EINVAL:
		 * __ftrace_set_clr_event() of the base kernel
		 */
		int empty = strstr(f, "/functions/enable") ? EINVAL : ENOENT;

		char what[160];

		/* the event or the instance may be gone, before or after open */
		snprintf(what, sizeof(what), "enable %s", f);
		expect(what, write_str(f, "1"), ENOENT, ENODEV, empty, 0);
		usleep(rand() % 1000);
		snprintf(what, sizeof(what), "disable %s", f);
		expect(what, write_str(f, "0"), ENOENT, ENODEV, empty, 0);
	}
	return NULL;
}

static void *instances(void *arg)
{
	(void)arg;
	while (!stop) {
		if (mkdir(INST, 0755) && errno != EEXIST)
			fail("mkdir instance: %s", strerror(errno));
		atomic_fetch_add(&ops, 1);
		usleep(5000 + rand() % 20000);
		/* busy while an event is enabled in it */
		if (rmdir(INST) && errno != EBUSY && errno != ENOENT)
			fail("rmdir instance: %s", strerror(errno));
		atomic_fetch_add(&ops, 1);
		usleep(rand() % 5000);
	}
	return NULL;
}

static void *reader(void *arg)
{
	static char buf[65536];
	const char *pipes[] = { TRACEFS "/trace_pipe", INST "/trace_pipe" };
	unsigned int i = 0;

	(void)arg;
	while (!stop) {
		int fd = open(pipes[i++ % 2], O_RDONLY | O_NONBLOCK);

		if (fd < 0) {
			if (errno != ENOENT && errno != ENODEV)
				fail("open trace_pipe: %s", strerror(errno));
			usleep(1000);
			continue;
		}
		for (int k = 0; k < 16 && !stop; k++)
			if (read(fd, buf, sizeof(buf)) < 0 && errno != EAGAIN &&
			    errno != ENODEV)
				fail("read trace_pipe: %s", strerror(errno));
		close(fd);
	}
	return NULL;
}

/* Called from several threads: a buffer of its own each time */
static int listed(const char *file, const char *what)
{
	char buf[16384];

	read_file(file, buf, sizeof(buf));
	return strstr(buf, what) != NULL;
}

/*
 * Events nobody else creates: the strict rules.  Removing an enabled
 * event, alone or with all the others, fails with -EBUSY and removes
 * nothing.
 */
static void *strict(void *arg)
{
	const char *en = TRACEFS "/events/fbe_strict/bad/enable";

	(void)arg;
	while (!stop) {
		must("create fevent_sample_bad", write_str(FEVENTS, BAD_DEF), 0);
		must("enable fevent_sample_bad", write_str(en, "1"), 0);
		expect("bad call", write_str(SAMPLE_DIR "/bad", "null"), 0);
		must("remove enabled fevent_sample_bad",
		     write_str(FEVENTS, "-:fbe_strict/bad"), -EBUSY);
		must("clear function_events with an enabled event",
		     clear_file(FEVENTS), -EBUSY);
		if (!listed(FEVENTS, "F:fbe_strict/bad ") || !listed(FEVENTS, BAD_FN))
			fail("fevent_sample_bad gone after -EBUSY");
		expect("bad call", write_str(SAMPLE_DIR "/bad", "freed"), 0);
		must("disable fevent_sample_bad", write_str(en, "0"), 0);
		must("remove fevent_sample_bad",
		     write_str(FEVENTS, "-:fbe_strict/bad"), 0);
		usleep(rand() % 2000);
	}
	return NULL;
}

static void *kstrict(void *arg)
{
	const char *en = TRACEFS "/events/kprobes/fbe_stress/enable";

	(void)arg;
	while (!stop) {
		must("create kprobe", write_str(KEVENTS, KP_DEF), 0);
		must("enable kprobe", write_str(en, "1"), 0);
		usleep(rand() % 2000);
		must("remove enabled kprobe",
		     write_str(KEVENTS, "-:kprobes/fbe_stress"), -EBUSY);
		if (!listed(KEVENTS, "fbe_stress"))
			fail("kprobe gone after -EBUSY");
		/* the enabler may enable it again in an instance: retry */
		for (int k = 0; ; k++) {
			write_str(en, "0");
			write_str(INST "/events/kprobes/fbe_stress/enable", "0");
			int ret = write_str(KEVENTS, "-:kprobes/fbe_stress");

			atomic_fetch_add(&ops, 1);
			if (!ret)
				break;
			if (ret != -EBUSY || k > 1000) {
				fail("remove kprobe: %s", strerror(-ret));
				stop = 1;
				break;
			}
		}
		usleep(rand() % 2000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*workers[])(void *) = {
		definer, enabler, instances, reader, strict, kstrict,
	};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), i, n = 0;
	pthread_t tids[64];
	int opt, secs = 60;
	struct timespec a, b;

	while ((opt = getopt(argc, argv, "t:")) != -1) {
		if (opt != 't') {
			fprintf(stderr, "usage: %s [-t SECONDS]\n", argv[0]);
			return 2;
		}
		secs = atoi(optarg);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("1..1\n# stress: %ld CPUs, %d s\n", ncpu, secs);
	if (access(SAMPLE_DIR "/call", W_OK)) {
		printf("not ok 1 stress: fevent-sample is not loaded\n");
		return 1;
	}
	srand(1);
	clear_file(FEVENTS);
	clear_file(KEVENTS);
	write_str(TRACEFS "/tracing_on", "1");
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < ncpu && n < 32; i++)
		pthread_create(&tids[n++], NULL, caller, (void *)i);
	for (i = 0; i < (long)(sizeof(workers) / sizeof(workers[0])); i++)
		pthread_create(&tids[n++], NULL, workers[i], NULL);
	for (i = 0; i < secs && !stop; i++) {
		sleep(1);
		if (i % 10 == 9)
			printf("# stress: %lds, %lu control operations, %lu calls\n",
			       i + 1, (unsigned long)ops, (unsigned long)calls);
	}
	stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);

	/* Everything disabled: everything goes */
	write_str(TRACEFS "/events/functions/fevent_sample_call/enable", "0");
	write_str(INST "/events/functions/fevent_sample_call/enable", "0");
	write_str(TRACEFS "/events/functions/fevent_sample_call__exit/enable", "0");
	write_str(INST "/events/functions/fevent_sample_call__exit/enable", "0");
	write_str(TRACEFS "/events/functions/fbe_glob/enable", "0");
	write_str(INST "/events/functions/fbe_globx/enable", "0");
	write_str(TRACEFS "/events/functions/enable", "0");
	write_str(INST "/events/functions/enable", "0");
	rmdir(INST);
	must("final clear of function_events", clear_file(FEVENTS), 0);
	must("final clear of kprobe_events", clear_file(KEVENTS), 0);
	if (listed(FEVENTS, "(") || listed(KEVENTS, ":"))
		fail("events left after the final clear");

	printf("# stress: %lu control operations, %lu calls of traced functions, "
	       "%u failures in %.0f s\n", (unsigned long)ops, (unsigned long)calls,
	       (unsigned int)errors,
	       (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
	printf("%s 1 stress\n", errors ? "not ok" : "ok");
	return errors ? 1 : 0;
}
