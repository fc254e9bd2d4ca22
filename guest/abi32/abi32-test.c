// SPDX-License-Identifier: GPL-2.0
/*
 * make check-abi32's init: function events on a 32-bit ABI, where a 64-bit
 * parameter takes two registers.  Built with the kernel's nolibc (there is
 * no 32-bit powerpc user space in Debian), it loads the sample module,
 * defines function events on fevent_sample_wide(int a, u64 b, int c,
 * u64 d), calls it through debugfs, and checks what they record against
 * the values it was called with, and against a kprobe event that reads
 * the registers themselves.  It prints KTAP, and the markers the verdict
 * (scripts/verdict.py) reads: FBE-INIT, the taint flags, the dmesg, and
 * FBE-DONE.
 *
 * The kernel command line says whether the kernel has BTF: "abi32.btf=y".
 */
#include <linux/reboot.h>

#define T	"/sys/kernel/tracing/"
#define WIDE	"/sys/kernel/debug/fevent_sample/wide"

static char buf[65536];
static int ntest, nfail, btf;

static const char *find(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (!strncmp(hay, needle, n))
			return hay;
	return NULL;
}

/* Write @s into @path: 0, or -errno */
static int put(const char *path, const char *s, int append)
{
	int fd = open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* Read @path into buf: its length, or -1 */
static int get(const char *path)
{
	int fd = open(path, O_RDONLY);
	ssize_t n, len = 0;

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return len;
}

static void result(int ok, const char *name)
{
	ntest++;
	if (!ok)
		nfail++;
	printf("%sok %d %s\n", ok ? "" : "not ", ntest, name);
}

/* The trace holds every line of @want: print what it lacks */
static int trace_has(const char *const *want)
{
	const char *line, *end;
	int ok = 1;

	get(T "trace");
	for (; *want; want++) {
		line = find(buf, *want);
		if (!line) {
			printf("# missing: %s\n", *want);
			ok = 0;
			continue;
		}
		/* the whole line, for the log */
		while (line > buf && line[-1] != '\n')
			line--;
		end = find(line, "\n");
		printf("# recorded: ");
		write(1, line, end ? end - line : 0);
		printf("\n");
	}
	if (!ok)
		printf("# trace:\n%s", buf);
	return ok;
}

/* Seek /dev/zero by 5000 MiB from where it is, as dd skip=5000 bs=1M */
static int seek_far(void)
{
	unsigned long long off = 5000ULL << 20, pos;
	int fd = open("/dev/zero", O_RDONLY);
	int ret;

	if (fd < 0)
		return -1;
	ret = my_syscall5(__NR__llseek, fd, (long)(off >> 32), (long)off,
			  &pos, SEEK_CUR);
	close(fd);
	return ret;
}

/* Define @def, enable it, call the function twice, and look for @want */
static void record(const char *name, const char *def, const char *event,
		   const char *const *want)
{
	char path[256] = T "events/functions/";
	int ret, ok;

	put(T "function_events", "", 0);
	put(T "trace", "", 0);
	ret = put(T "function_events", def, 0);
	if (ret) {
		printf("# %s: %d\n", def, ret);
		get(T "error_log");
		printf("# error_log:\n%s", buf);
		result(0, name);
		return;
	}
	strcpy(strcpy(path + strlen(path), event) + strlen(event), "/enable");
	ok = !put(path, "1", 0);
	if (!find(def, "llseek"))
		ok = ok && !put(WIDE, "2", 0);
	else
		ok = ok && !seek_far();
	ok = !put(path, "0", 0) && ok;
	result(ok && trace_has(want), name);
	put(T "function_events", "", 0);
}

/*
 * @def is refused, and error_log says why with its caret under @at, the
 * start of the bad token in @def
 */
static void refused(const char *name, const char *def, const char *token,
		    const char *why)
{
	const char *cmd, *caret, *at = find(def, token);
	int ret, ok;

	put(T "error_log", "", 0);
	ret = put(T "function_events", def, 0);
	get(T "error_log");
	cmd = find(buf, "Command: ");
	caret = cmd ? find(cmd, "\n") : NULL;
	ok = ret == -EINVAL && find(buf, why) && caret &&
	     find(caret + 1, "^") == caret + 1 + (at - def) + 11;
	if (!ok)
		printf("# %s: %d\n# error_log:\n%s", def, ret, buf);
	result(ok, name);
	put(T "function_events", "", 0);
}

static const char *const by_position[] = {
	"fevent_sample_wide(a=0, b=81985529216486895, c=0, d=0xfedcba9876543210)",
	"fevent_sample_wide(a=1, b=81985529216486896, c=-1, d=0xfedcba9876543210)",
	NULL
};

static const char *const llseek[] = {
	"->vfs_llseek(offset=5242880000, whence=1)",
	NULL
};

static const char *const by_name[] = {
	"fevent_sample_wide(a=0, b=81985529216486895, c=0, d=18364758544493064720)",
	"fevent_sample_wide(a=1, b=81985529216486896, c=-1, d=18364758544493064720)",
	NULL
};

static const char *const cast[] = {
	"fevent_sample_wide(b=0x89abcdef)",
	"fevent_sample_wide(b=0x89abcdf0)",
	NULL
};

/* The registers themselves, read by a kprobe event: powerpc's pairs */
static const char *const regs[] = {
	"r3=0x0 r4=",
	" r5=0x1234567 r6=0x89abcdef r7=0x0 r8=",
	" r9=0xfedcba98 r10=0x76543210",
	"r3=0x1 r4=",
	" r5=0x1234567 r6=0x89abcdf0 r7=0xffffffff r8=",
	NULL
};

static void oracle(void)
{
	int ok;

	put(T "trace", "", 0);
	ok = !put(T "kprobe_events", "p:abi32/wide fevent_sample_wide "
		  "r3=%r3:x32 r4=%r4:x32 r5=%r5:x32 r6=%r6:x32 r7=%r7:x32 "
		  "r8=%r8:x32 r9=%r9:x32 r10=%r10:x32", 0) &&
	     !put(T "events/abi32/wide/enable", "1", 0) &&
	     !put(WIDE, "2", 0) && !put(T "events/abi32/wide/enable", "0", 0);
	result(ok && trace_has(regs), "a kprobe event reads the values in r3, r5:r6, r7 and r9:r10");
	put(T "kprobe_events", "", 0);
}

int main(void)
{
	static const char mod[] = "/fevent-sample.ko";
	int fd, len;

	printf("FBE-INIT\n");
	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	if (get("/proc/cmdline") > 0 && find(buf, "abi32.btf=y"))
		btf = 1;

	printf("KTAP version 1\n1..%d\n", btf ? 8 : 4);
	fd = open(mod, O_RDONLY);
	result(fd >= 0 && !my_syscall3(__NR_finit_module, fd, "", 0),
	       "the sample module loads");

	oracle();
	record("by position: u64 b and x64 d take two registers each",
	       "fevent_sample_wide(int a, u64 b, int c, x64 d)",
	       "fevent_sample_wide", by_position);
	record("a kernel function: vfs_llseek()'s loff_t offset in two registers",
	       "vfs_llseek(NULL, s64 offset, int whence)", "vfs_llseek", llseek);
	if (btf) {
		record("by name: BTF's u64 b and d", "fevent_sample_wide(a, b, c, d)",
		       "fevent_sample_wide", by_name);
		record("a cast of a 64-bit parameter keeps its low half",
		       "F:cast fevent_sample_wide(NULL, (x32)b)", "cast", cast);
		refused("a 32-bit type on a 64-bit parameter is refused",
			"fevent_sample_wide(int a, u32 b, int c)",
			"u32 b", "differ in registers");
		refused("NULL on a 64-bit parameter is refused",
			"fevent_sample_wide(int a, NULL, int c)",
			"NULL", "differ in registers");
	}
	printf("# abi32: %d passed, %d failed\n", ntest - nfail, nfail);
	get("/proc/sys/kernel/tainted");
	printf("FBE-TAINT %s", buf);
	/* SYSLOG_ACTION_READ_ALL */
	len = my_syscall3(__NR_syslog, 3, buf, sizeof(buf) - 1);
	buf[len > 0 ? len : 0] = '\0';
	printf("FBE-DMESG-BEGIN\n%s\nFBE-DMESG-END\n", buf);
	printf("FBE-DONE rc=%d\n", nfail ? 1 : 0);
	reboot(LINUX_REBOOT_CMD_POWER_OFF);
	return 0;
}
