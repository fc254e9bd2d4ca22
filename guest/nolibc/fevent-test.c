// SPDX-License-Identifier: GPL-2.0
/*
 * make check-nolibc's init: function events where Debian has no user
 * space.  Built with the kernel's nolibc, it loads the sample module,
 * defines function events on fevent_sample_wide(int a, u64 b, int c,
 * u64 d) and null_lseek(), calls them, and checks what they record
 * against the values passed, against the sample's TRACE_EVENT(), and on
 * powerpc32 against a kprobe event that reads the registers themselves.
 * Where exit events exist, it puts events on the readers every fetch
 * calls beside string events, and checks that none records its own
 * reads.  On powerpc32, a 32-bit big-endian ABI, b and d
 * take the register pairs r5:r6 and r9:r10; on riscv64 exit events run
 * on fgraph with its ftrace_regs.  It prints KTAP, and the markers the
 * verdict (scripts/harness/verdict.py) reads: FBE-INIT, the taint flags, the
 * dmesg, and FBE-DONE.
 *
 * The kernel command line says whether the kernel has BTF: "fevent.btf=y".
 */
#include <linux/reboot.h>

#define T	"/sys/kernel/tracing/"
#define WIDE	"/sys/kernel/debug/fevent_sample/wide"
#define CALL	"/sys/kernel/debug/fevent_sample/call"

static char buf[65536];
static int ntest, nfail, btf;

#if defined(__powerpc__) && !defined(__powerpc64__)
#define ABI32		1
#define EXIT_EVENTS	0	/* no HAVE_FUNCTION_GRAPH_ENTRY_FREGS */
#define LLSEEK_NR	__NR__llseek
#define ORACLE_NAME	"a kprobe event reads b and d in r5:r6 and r9:r10"
/* The registers themselves, read by a kprobe event: powerpc's pairs */
#define ORACLE_DEF	"p:nolibc/wide fevent_sample_wide " \
	"r3=%r3:x32 r4=%r4:x32 r5=%r5:x32 r6=%r6:x32 r7=%r7:x32 " \
	"r8=%r8:x32 r9=%r9:x32 r10=%r10:x32"
static const char *const regs[] = {
	"r3=0x0 r4=",
	" r5=0x1234567 r6=0x89abcdef r7=0x0 r8=",
	" r9=0xfedcba98 r10=0x76543210",
	"r3=0x1 r4=",
	" r5=0x1234567 r6=0x89abcdf0 r7=0xffffffff r8=",
	NULL
};
#elif defined(__riscv) && __riscv_xlen == 64
#define ABI32		0
#define EXIT_EVENTS	1
#define LLSEEK_NR	__NR_lseek
/*
 * No kprobe event here: riscv's ebreak handler runs in NMI context, where
 * the ring buffer records nothing without ARCH_HAVE_NMI_SAFE_CMPXCHG, which
 * riscv 6.12 does not select (the kprobe is hit, nothing is written).
 */
#define ORACLE_DEF	((const char *)NULL)
#define ORACLE_NAME	((const char *)NULL)
static const char *const regs[] = { NULL };
#else
#error "make check-nolibc: an architecture of scripts/harness/arch.py's NOLIBC"
#endif

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
	unsigned long long off = 5000ULL << 20;
	int fd = open("/dev/zero", O_RDONLY);
	int ret;

	if (fd < 0)
		return -1;
	/* /dev/zero's seek always goes back to 0: only an error matters */
#if ABI32
	unsigned long long pos;

	ret = my_syscall5(LLSEEK_NR, fd, (long)(off >> 32), (long)off,
			  &pos, SEEK_CUR);
#else
	ret = my_syscall3(LLSEEK_NR, fd, off, SEEK_CUR) < 0 ? -1 : 0;
#endif
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
	if (!find(def, "lseek"))
		ok = ok && !put(WIDE, "2", 0);
	else
		ok = ok && !seek_far();
	ok = !put(path, "0", 0) && ok;
	result(ok && trace_has(want), name);
	put(T "function_events", "", 0);
}

/*
 * @def is refused with -@err, and error_log says why with its caret
 * under @token in @def
 */
static void refused(const char *name, const char *def, const char *token,
		    int err, const char *why)
{
	const char *cmd, *caret, *at = find(def, token);
	int ret, ok;

	put(T "error_log", "", 0);
	ret = put(T "function_events", def, 0);
	get(T "error_log");
	cmd = find(buf, "Command: ");
	caret = cmd ? find(cmd, "\n") : NULL;
	ok = ret == -err && find(buf, why) && caret &&
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
	"->null_lseek(offset=5242880000, orig=1)",
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

static const char *const exit_rec[] = {
	"<-fevent_sample_wide(a=0, b=81985529216486895, retval=0xffffffffffffffff)",
	"<-fevent_sample_wide(a=1, b=81985529216486896, retval=0x0)",
	NULL
};

static const char *const low_half[] = {
	"fevent_sample_wide(a=0, b=2309737967, c=0)",
	"fevent_sample_wide(a=1, b=2309737968, c=-1)",
	NULL
};


/* The sample's TRACE_EVENT(), inside fevent_sample_wide() */
static const char *const tracepoint[] = {
	"fevent_sample_wide: a=0, b=81985529216486895, c=0, d=0xfedcba9876543210",
	"fevent_sample_wide: a=1, b=81985529216486896, c=-1, d=0xfedcba9876543210",
	NULL
};

/* Entry and exit events on the readers a fetch calls, reading memory themselves */
static const char *const readers[] = {
	"F:rx/cp copy_from_kernel_nofault(x64 dst, x64 src | x64 src[0], size_t size)",
	"F:rx/cpx copy_from_kernel_nofault%return(x64 dst, x64 src | x64 src[0], size_t size, long $retval)",
	"F:rx/sc strncpy_from_kernel_nofault(x64 dst, string unsafe_addr, long count)",
	"F:rx/scx strncpy_from_kernel_nofault%return(x64 dst, string unsafe_addr, long count, long $retval)",
	/* and events that read a string, at the entry and the exit */
	"F:rx/call fevent_sample_call(NULL, int seq, string msg)",
	"F:rx/callx fevent_sample_call%return(NULL, int seq, string msg, long $retval)",
	NULL
};

static const char *const readers_rec[] = {
	"call: call_write->fevent_sample_call(seq=0, msg=hello fevent)",
	"call: call_write->fevent_sample_call(seq=1, msg=hello fevent)",
	"callx: call_write<-fevent_sample_call(seq=0, msg=hello fevent, retval=",
	"callx: call_write<-fevent_sample_call(seq=1, msg=hello fevent, retval=",
	NULL
};

/* What an event's own fetches run: none may be a reader event's caller */
static const char *const own[] = {
	"fevent", "fexit", "fglob", "process_fetch_insn", "store_trace_args",
	"__get_data_size", "fetch_store", NULL
};

/*
 * Events on copy_from_kernel_nofault() and strncpy_from_kernel_nofault(),
 * which the fetches of every event call, beside string events: each
 * string event records right, and no reader event records a call that an
 * event's fetch made (fgraph's entry and exit take the recursion lock).
 */
static void recursion(void)
{
	const char *const *d, *const *o, *p, *caller;
	int ok = 1;

	put(T "function_events", "", 0);
	put(T "trace", "", 0);
	for (d = readers; *d && ok; d++) {
		if (put(T "function_events", *d, 1)) {
			printf("# %s: refused\n", *d);
			ok = 0;
		}
	}
	ok = ok && !put(T "events/rx/enable", "1", 0) && !put(CALL, "2", 0) &&
	     !put(T "events/rx/enable", "0", 0);
	ok = ok && trace_has(readers_rec);
	for (p = buf; ok && (p = find(p, "_from_kernel_nofault(")); p++) {
		caller = p;
		while (caller > buf && caller[-1] != ' ')
			caller--;
		for (o = own; *o; o++) {
			if (!strncmp(caller, *o, strlen(*o))) {
				printf("# recorded a call an event's fetch made: %.80s\n",
				       caller);
				ok = 0;
			}
		}
	}
	result(ok, "events on the readers fetches call record none of an event's own reads");
	put(T "function_events", "", 0);
}

static void oracle_tp(void)
{
	const char *en = T "events/fevent_sample/fevent_sample_wide/enable";
	int ok;

	put(T "trace", "", 0);
	ok = !put(en, "1", 0) && !put(WIDE, "2", 0) && !put(en, "0", 0);
	result(ok && trace_has(tracepoint),
	       "the sample's TRACE_EVENT() records the values passed");
}

static void oracle(void)
{
	int ok;

	if (!ORACLE_DEF)
		return;
	put(T "trace", "", 0);
	ok = !put(T "kprobe_events", ORACLE_DEF, 0);
	if (!ok) {
		get(T "error_log");
		printf("# %s\n# error_log:\n%s", ORACLE_DEF, buf);
	}
	ok = ok &&
	     !put(T "events/nolibc/wide/enable", "1", 0) &&
	     !put(WIDE, "2", 0) && !put(T "events/nolibc/wide/enable", "0", 0);
	ok = ok && trace_has(regs);
	if (!ok) {
		get(T "kprobe_profile");
		printf("# kprobe_profile: %s", buf);
	}
	result(ok, ORACLE_NAME);
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
	if (get("/proc/cmdline") > 0 && find(buf, "fevent.btf=y"))
		btf = 1;

	printf("KTAP version 1\n1..%d\n", 6 + (ORACLE_DEF ? 1 : 0) + (btf ? 2 : 0) +
	       (btf && ABI32 ? 1 : 0) + (EXIT_EVENTS ? 1 : 0));
	fd = open(mod, O_RDONLY);
	result(fd >= 0 && !my_syscall3(__NR_finit_module, fd, "", 0),
	       "the sample module loads");

	oracle_tp();
	oracle();
	record("by position: u64 b and x64 d take two registers each",
	       "fevent_sample_wide(int a, u64 b, int c, x64 d)",
	       "fevent_sample_wide", by_position);
	record("a kernel function: null_lseek()'s loff_t offset, and orig after it",
	       "null_lseek(NULL, s64 offset, int orig)", "null_lseek", llseek);
	if (EXIT_EVENTS)
		record("an exit event: a and b as the entry passed them, the 64-bit $retval",
		       "fevent_sample_wide%return(int a, u64 b, NULL, NULL, x64 $retval)",
		       "fevent_sample_wide__exit", exit_rec);
	if (EXIT_EVENTS)
		recursion();
	else
		refused("no exit events where the fgraph entry passes no argument registers",
			"fevent_sample_wide%return(int a)", "%return",
			EOPNOTSUPP, "Exit events need FUNCTION_GRAPH_RETVAL and fgraph entry");
	if (!ABI32)
		record("64-bit: u32 b is the low half of b's register",
		       "fevent_sample_wide(int a, u32 b, int c)",
		       "fevent_sample_wide", low_half);
	else if (btf)
		refused("32-bit with BTF: u32 b, in b's two registers, is refused",
			"fevent_sample_wide(int a, u32 b, int c)",
			"u32 b", EINVAL, "differ in registers");
	else
		result(1, "32-bit: u32 b # SKIP no BTF says b takes two registers");
	if (btf) {
		record("by name: BTF's u64 b and d", "fevent_sample_wide(a, b, c, d)",
		       "fevent_sample_wide", by_name);
		record("a cast of a 64-bit parameter keeps its low half",
		       "F:cast fevent_sample_wide(NULL, (x32)b)", "cast", cast);
	}
	if (btf && ABI32) {
		refused("32-bit with BTF: NULL on a 64-bit parameter is refused",
			"fevent_sample_wide(int a, NULL, int c)",
			"NULL", EINVAL, "differ in registers");
	}
	printf("# fevent-test: %d passed, %d failed\n", ntest - nfail, nfail);
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
