// SPDX-License-Identifier: GPL-2.0
/*
 * fevent-fuzz: write generated and mutated definitions to function_events
 * (and, as a control, to kprobe_events) and check what the kernel makes
 * of each one.
 *
 *   fevent-fuzz [-n COUNT] [-k KCOUNT] [-s SEED] [-r ITER] [-e EVERY] [-v]
 *
 * A definition is grammar-generated from the constructs of the spec
 * (types, arrays, 'unsigned', offsets, indexes, chains, NULL, '|',
 * addresses), then, one time in three, mutated at the byte level (stray
 * characters, huge numbers, long names, NUL bytes, truncation, 4 KiB
 * lines).  For every write:
 *
 *  - accepted: each event now listed must have a format file, be
 *    removed, and its listing must create the same event again; every
 *    EVERY'th (-e, default 8) must also enable, fire when its function
 *    is called (the function is called) and disable;
 *  - rejected: the write fails with an errno and error_log has an entry
 *    for the file written.
 *
 * One write in EVERY (-f, default 8; 0 for none) fails one of its first
 * 12 allocations (/proc/thread-self/fail-nth): rejected, it needs no
 * error_log entry, but it must leave nothing behind; accepted, the event
 * must work as any other.
 * Anything else is an anomaly and fails the run (exit 1).  The generated
 * sequence depends on the seed only, so "-s SEED -r ITER" replays one
 * definition.  Output is KTAP, one result per file.
 */
#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>

#include "common.h"

#define DEF_MAX		8192
#define LIST_MAX	(64 * 1024)
#define TRACE_MAX	(4 * 1024 * 1024)

struct def {
	char	buf[DEF_MAX];
	size_t	len;
};

static void add(struct def *d, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (d->len >= DEF_MAX - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(d->buf + d->len, DEF_MAX - d->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		d->len += (size_t)n < DEF_MAX - d->len ? (size_t)n : DEF_MAX - d->len - 1;
}

/* Functions the fuzzer can make fire, and how */
static const char *const funcs[] = {
	"fevent_sample_call", "fevent_sample_bad", "vfs_read", "vfs_write",
	"do_sys_openat2", "kernel_clone",
};

/* Patterns: each matches one function above (fire() it), or several, or none */
static const char *const globs[] = {
	"vfs_rea?", "fevent_sample_ca*", "kernel_clon[aeiou]",
	"do_sys_openat[0-9]", "vfs_[rw]*[de]", "fevent_sample:fevent_sample_*",
	"no_such_fn*", "[",
};

/* Names that are not (traceable) functions */
static const char *const bad_funcs[] = {
	"no_such_function", "fevent_sample_calls", "_", "a", "vfs_read.cold",
	"FEVENT_SAMPLE_CALL", "fevent_sample_counter", "jiffies",
};

static void fire(const char *func)
{
	static const char *const modes[] = {
		"null", "user", "poison", "freed", "unaligned",
	};
	static unsigned int next_mode;
	char buf[256];
	int fd;

	if (!strcmp(func, "fevent_sample_call")) {
		write_str(SAMPLE_DIR "/call", "1");
	} else if (!strcmp(func, "fevent_sample_bad")) {
		/* not rnd(): the definitions depend on the seed only */
		write_str(SAMPLE_DIR "/bad", modes[next_mode++ % 5]);
	} else if (!strcmp(func, "vfs_read")) {
		fd = open("/proc/version", O_RDONLY);
		if (fd >= 0) {
			if (read(fd, buf, sizeof(buf)) < 0)
				perror("read");
			close(fd);
		}
	} else if (!strcmp(func, "vfs_write")) {
		write_str("/dev/null", "x");
	} else if (!strcmp(func, "do_sys_openat2")) {
		fd = open("/", O_RDONLY);
		if (fd >= 0)
			close(fd);
	} else if (!strcmp(func, "kernel_clone")) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
}

static int known_func(const char *func)
{
	size_t i;

	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		if (!strcmp(func, funcs[i]))
			return 1;
	return 0;
}

/* The function fire() can make fire that pattern @pat matches, or NULL */
static const char *glob_func(const char *pat)
{
	size_t i;

	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		if (!fnmatch(pat, funcs[i], 0))
			return funcs[i];
	return NULL;
}

static unsigned long counter_addr;	/* fevent_sample_counter */

static const char *const atoms[] = {
	"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
	"x8", "x16", "x32", "x64", "char", "short", "int", "long", "size_t",
	"symbol", "string",
};

static void gen_number(struct def *d, int index)
{
	static const char *const odd[] = {
		"99999999999999999999", "0xffffffffffffffff", "-1", "-8",
		"0x", "08", "1e3", "0b101", "+4", "0x7fffffffffffffff",
	};
	unsigned int r = rnd(100);

	if (r < 70)
		add(d, "%u", index ? rnd(9) : rnd(9) * 8);
	else if (r < 88)
		add(d, index ? "%u" : "0x%x", rnd(index ? 64 : 4096));
	else
		add(d, "%s", PICK(odd));
}

static void gen_type(struct def *d)
{
	static const unsigned int lens[] = {
		1, 2, 3, 4, 6, 8, 16, 32, 64, 65, 0, 1000,
	};
	static const char *const cints[] = { "char", "short", "int", "long" };
	unsigned int r = rnd(100);

	if (r < 8)
		add(d, "unsigned %s", rnd(4) ? PICK(cints) : PICK(atoms));
	else if (r < 10)
		add(d, "%s", rnd(2) ? "unsigned unsigned int" : "typeof");
	else
		add(d, "%s", PICK(atoms));
	if (rnd(100) < 15)
		add(d, "[%u]", PICK(lens));
}

static void gen_name(struct def *d, unsigned int n)
{
	static const char *const odd[] = {
		"common_pid", "__ip", "__parent_ip", "_x", "9lives", "a-b",
		"skb", "file", "NULL", "unsigned",
	};
	unsigned int r = rnd(100);

	if (r < 88) {
		add(d, "f%u", n);
	} else if (r < 93) {
		unsigned int i, len = 20 + rnd(30);

		for (i = 0; i < len; i++)
			add(d, "%c", "abcdefghijklmnopqrstuvwxyz_0123456789"[rnd(i ? 37 : 26)]);
	} else {
		add(d, "%s", PICK(odd));
	}
}

static void gen_addr(struct def *d)
{
	unsigned int r = rnd(100);

	if (r < 40 && counter_addr)
		add(d, "0x%lx", counter_addr + rnd(4) * 4);
	else if (r < 55)
		add(d, "0x%x", rnd(0x20000));
	else if (r < 65)
		add(d, "0xdead000000000100");
	else if (r < 75)
		add(d, "0xffffffffffffffff");
	else if (r < 90)	/* non-canonical: never a mapping */
		add(d, "0x%llx", (unsigned long long)((rng() & 0x00ffffffffffffffULL) |
						      0x0100000000000000ULL));
	else
		add(d, "%s", rnd(2) ? "1234" : "0xzz");
}

/* Parameters by name (BTF): each function's, and the accesses to try */
static const char *cur_func;

static const char *const params[][5] = {
	{ "fevent_sample_call", "item", "seq", "msg", "bytes" },
	{ "fevent_sample_bad", "item", "msg" },
	{ "vfs_read", "file", "buf", "count", "pos" },
	{ "vfs_write", "file", "buf", "count", "pos" },
	{ "do_sys_openat2", "dfd", "filename", "how" },
	{ "kernel_clone", "args" },
};

static const char *const accesses[] = {
	"->id", "->flags", "->name", "->mac", "->inner", "->leaf", "->magic",
	"->tag", "->label", "->small", "->value", "->f_path", ".dentry",
	"->d_name", ".name", "->f_pos", "->f_inode", "->i_sb", "->s_type",
	"->exit_signal", "[0]", "[1]", "[5]", "[70000]", "[x]", "[", "->",
	".", "->nosuch", ".nosuch", "-",
};

/* C casts and container_of(): the structures and members to try */
static const char *const structs[] = {
	"seq_file", "file", "inode", "proc_inode", "dentry", "fevent_sample_item",
	"nosuch",
};

static const char *const members[] = {
	"vfs_inode", "f_inode", "private_data", "file", "count", "op", "pde",
	"d_name", "id", "inner", "nosuch",
};

/* A parameter and its accesses, or a cast or container_of() of one */
static void gen_operand(struct def *d, unsigned int depth)
{
	const char *name = NULL;
	unsigned int i, k, chain, r = rnd(100);

	if (depth < 2 && r < 8) {
		add(d, "((%s %s *)", rnd(8) ? "struct" : "union", PICK(structs));
		gen_operand(d, depth + 1);
		add(d, ")->%s", PICK(members));
		return;
	}
	if (depth < 2 && r < 13) {
		add(d, "(struct %s %s)", PICK(structs), rnd(6) ? "*" : "");
		gen_operand(d, depth + 1);
		return;
	}
	if (depth < 2 && r < 20) {
		add(d, "container_of(");
		gen_operand(d, depth + 1);
		add(d, ", struct %s, %s)", PICK(structs), PICK(members));
		if (rnd(5))
			add(d, "->%s", PICK(members));
		return;
	}
	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		if (cur_func && !strcmp(cur_func, params[i][0])) {
			for (k = 1; k < 5 && params[i][k]; k++)
				;
			name = params[i][1 + rnd(k - 1)];
		}
	}
	if (rnd(100) < 15)
		name = "$retval";
	else if (!name || rnd(100) < 10)
		name = rnd(2) ? "nosuch" : "item";
	add(d, "%s", name);
	chain = rnd(4);
	for (k = 0; k < chain; k++)
		add(d, "%s", PICK(accesses));
}

static void gen_expr(struct def *d)
{
	unsigned int r = rnd(6);

	if (r < 3) {		/* TYPE EXPR */
		gen_type(d);
		add(d, " ");
	} else if (r < 5) {	/* (TYPE)EXPR */
		add(d, "(");
		gen_type(d);
		add(d, ")");
	}
	gen_operand(d, 0);
}

static void gen_field(struct def *d, unsigned int *n)
{
	unsigned int r = rnd(100), k, chain;

	if (r < 6) {
		add(d, "NULL");
		return;
	}
	if (r > 75) {
		gen_expr(d);
		return;
	}
	gen_type(d);
	add(d, " ");
	if (r < 14) {
		if (rnd(3)) {
			gen_name(d, (*n)++);
			add(d, "=");
		}
		gen_addr(d);
		return;
	}
	gen_name(d, (*n)++);
	chain = rnd(100) < 3 ? 10 + rnd(6) : rnd(5);
	for (k = 0; k < chain; k++) {
		if (rnd(2)) {
			add(d, "+");
			gen_number(d, 0);
		} else {
			add(d, "[");
			gen_number(d, 1);
			add(d, "]");
		}
	}
}

static void gen_fevent(struct def *d)
{
	static const char *const seps[] = { ", ", ",", " , ", ",  " };
	unsigned int i, nargs, n = 0;

	static unsigned int nr_globs;

	/* An event over a pattern, which must be named */
	if (rnd(100) < 6) {
		cur_func = PICK(globs);
		if (rnd(100) < 95)
			add(d, "F:fzg%u ", nr_globs++);
	} else {
		cur_func = rnd(100) < 92 ? PICK(funcs) : PICK(bad_funcs);
	}
	add(d, "%s", cur_func);
	if (rnd(100) < 15)
		add(d, "%s", "%return");
	add(d, rnd(10) ? "(" : " (");
	nargs = rnd(100) < 5 ? 7 + rnd(3) : rnd(7);
	for (i = 0; i < nargs; i++) {
		if (i)
			add(d, "%s", PICK(seps));
		gen_field(d, &n);
		while (rnd(100) < 12) {
			add(d, rnd(2) ? " | " : "|");
			gen_field(d, &n);
		}
	}
	if (rnd(100) < 96)
		add(d, ")");
	if (rnd(100) < 3)
		add(d, " %s", rnd(2) ? "trailing" : ")");
}

/* The control: kprobe events on the same functions */
static void gen_fetch(struct def *d, unsigned int depth)
{
	static const char *const leaf[] = {
		"$arg1", "$arg2", "$arg3", "$arg4", "$arg6", "$arg9", "%di",
		"%si", "%dx", "%ax", "%sp", "$stack", "$stack2", "$comm",
		"@jiffies", "$retval", "@no_such_symbol", "$argx",
	};
	unsigned int r = rnd(100);

	if (depth < 4 && r < 30) {
		add(d, "%s%u(", rnd(8) ? "+" : "-", rnd(9) * 8);
		gen_fetch(d, depth + 1);
		add(d, ")");
	} else if (r < 36 && counter_addr) {
		add(d, "@0x%lx", counter_addr);
	} else {
		add(d, "%s", PICK(leaf));
	}
}

static void gen_kprobe(struct def *d, unsigned int iter)
{
	static const char *const ktypes[] = {
		"u8", "u16", "u32", "u64", "s8", "s32", "x16", "x64", "string",
		"ustring", "symbol", "char", "b4@2/32", "u32[4]", "x8[6]",
		"string[2]", "u8[65]", "bogus",
	};
	unsigned int i, nargs, r = rnd(100);
	const char *func = rnd(100) < 92 ? PICK(funcs) : PICK(bad_funcs);

	if (r < 70)
		add(d, "p:kprobes/fz%u %s", iter, func);
	else if (r < 85)
		add(d, "r:kprobes/fz%u %s", iter, func);
	else if (r < 95)
		add(d, "p %s", func);
	else
		add(d, "p:kprobes/fz%u %s+%u", iter, func, rnd(8));
	nargs = rnd(6);
	for (i = 0; i < nargs; i++) {
		add(d, " ");
		if (rnd(3))
			add(d, "a%u=", i);
		gen_fetch(d, 0);
		if (rnd(3))
			add(d, ":%s", PICK(ktypes));
	}
}

/* Byte-level mutation of a generated definition */
static void mutate(struct def *d)
{
	static const char *const dict[] = {
		"NULL", "unsigned", "[", "]", "+", "(", ")", "|", ",", "0x",
		"99999999999999999999", "-1", "string", "symbol", "x64", "char[",
		"=", " ", "\t", "#", "\"", "\\", "0xffffffffffffffff", "[0]",
		"+8", "u8[64]", "->", ".", "%return", "$retval", "[1]", "->id",
		"$entry(", "$entry($retval)", "$entry($entry(",
	};
	static const char *const pads[] = { ", int a", "[0]", "A", " ", "+8" };
	unsigned int k, ops = 1 + rnd(4);

	for (k = 0; k < ops; k++) {
		size_t pos = d->len ? rnd(d->len) : 0;
		unsigned int r = rnd(100);

		if (r < 25 && d->len) {		/* replace a byte */
			d->buf[pos] = rnd(4) ? "()[]+,|= x0123456789az_\t\"#"[rnd(26)] :
					       (char)rnd(256);
		} else if (r < 55) {		/* insert a token */
			const char *t = PICK(dict);
			size_t tl = strlen(t);

			if (d->len + tl >= DEF_MAX)
				continue;
			memmove(d->buf + pos + tl, d->buf + pos, d->len - pos);
			memcpy(d->buf + pos, t, tl);
			d->len += tl;
		} else if (r < 70 && d->len) {	/* delete a range */
			size_t n = 1 + rnd(8);

			if (pos + n > d->len)
				n = d->len - pos;
			memmove(d->buf + pos, d->buf + pos + n, d->len - pos - n);
			d->len -= n;
		} else if (r < 80 && d->len) {	/* duplicate a range */
			size_t n = 1 + rnd(16);

			if (pos + n > d->len)
				n = d->len - pos;
			if (d->len + n >= DEF_MAX)
				continue;
			memmove(d->buf + pos + n, d->buf + pos, d->len - pos);
			d->len += n;
		} else if (r < 88) {		/* truncate: unterminated */
			d->len = pos;
		} else if (r < 93 && d->len) {	/* a NUL byte */
			d->buf[pos] = '\0';
		} else if (r < 96) {		/* a 3-5 KiB line */
			const char *p = PICK(pads);
			size_t want = 3000 + rnd(2200), pl = strlen(p);

			while (d->len + pl < want && d->len + pl < DEF_MAX) {
				memcpy(d->buf + d->len, p, pl);
				d->len += pl;
			}
		} else {			/* a second line */
			if (d->len + 2 < DEF_MAX) {
				d->buf[d->len++] = '\n';
				d->buf[d->len++] = rnd(2) ? '#' : ' ';
			}
		}
	}
	if (!d->len)
		d->buf[d->len++] = ' ';
}

/* Where the time goes: write, check, enable (+fire, disable), roundtrip */
enum { T_WRITE, T_CHECK, T_ENABLE, T_ROUNDTRIP, T_NR };
static const char *const tnames[T_NR] = { "write", "check", "enable", "roundtrip" };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct target {
	const char	*name;		/* the tracefs file */
	const char	*group;		/* events/<group>/ */
	const char	*errtag;	/* error_log: "<errtag>: error:" */
	unsigned int	count;
	/*
	 * Whether a rejection must come with an error_log entry and a usual
	 * errno.  Not for the control: what kprobe_events does there is
	 * upstream's, and only counted.
	 */
	int		strict;
	unsigned int	unlogged, odd_errno;
	double		tm[T_NR];
	/* stats */
	unsigned int	writes, accepted, rejected, logged, noop, events,
			enabled, fired, roundtrips, anomalies, injected;
	unsigned int	errnos[256];
};

static char listing[LIST_MAX], listing2[LIST_MAX], errlog[LIST_MAX];
static char *tracebuf;
static int verbose;
static unsigned int enable_every = 8;
/* One write in fail_every fails its n-th allocation, n in 1..FAIL_NTH_MAX */
#define FAIL_NTH_MAX	12
static unsigned int fail_every = 8;
static int nth_fd = -1;

/*
 * write_file() with the nth allocation of the write() failed, through
 * /proc/thread-self/fail-nth (nth 0: none); 0 or -errno.  *injected says
 * whether the write reached its nth allocation.
 */
static int write_nth(const char *path, const void *buf, size_t len,
		     unsigned int nth, int *injected)
{
	char n[16] = "";
	int fd, err = 0;
	ssize_t r;

	*injected = 0;
	if (!nth || nth_fd < 0)
		return write_file(path, buf, len, O_APPEND);
	fd = open(path, O_WRONLY | O_APPEND);
	if (fd < 0)
		return -errno;
	snprintf(n, sizeof(n), "%u", nth);
	if (pwrite(nth_fd, n, strlen(n), 0) < 0) {
		close(fd);
		return -errno;
	}
	r = write(fd, buf, len);
	if (r < 0)
		err = -errno;
	/* fail-nth reads 0 once it failed an allocation */
	*injected = pread(nth_fd, n, sizeof(n) - 1, 0) > 0 && n[0] == '0';
	if (pwrite(nth_fd, "0", 1, 0) < 0)
		err = err ?: -errno;
	close(fd);
	if (err)
		return err;
	return r == (ssize_t)len ? 0 : -EIO;
}


static void show_def(const struct def *d)
{
	size_t i;

	fputs("#   def: '", stdout);
	for (i = 0; i < d->len && i < 300; i++) {
		unsigned char c = d->buf[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			putchar(c);
		else
			printf("\\x%02x", c);
	}
	printf("'%s (%zu bytes)\n", d->len > 300 ? "..." : "", d->len);
}

static void anomaly(struct target *t, unsigned int iter, const struct def *d,
		    const char *fmt, ...)
{
	va_list ap;

	t->anomalies++;
	if (t->anomalies > 20)
		return;
	printf("# ANOMALY %s iter %u: ", t->name, iter);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	show_def(d);
	fflush(stdout);
}

/*
 * The function of a function event's listing, from @start to @end into
 * @func: without its "module:" and its "%return".  Returns whether it
 * had "%return".
 */
static int listed_func(const char *start, const char *end, char *func)
{
	char *p;

	memcpy(func, start, end - start);
	func[end - start] = '\0';
	/* a function of a module is listed as "module:func(...)" */
	p = strchr(func, ':');
	if (p)
		memmove(func, p + 1, strlen(p));
	p = strstr(func, "%return");
	if (p)
		*p = '\0';
	return p != NULL;
}

/*
 * "func(...)" -> functions/func; "p:kprobes/fz1 func ..." -> kprobes/fz1
 * (the group as listed: kprobe events take any group name)
 */
static int parse_line(struct target *t, const char *line, char *group,
		      char *event, char *func, size_t size)
{
	const char *c, *p, *e;
	int ret;

	strcpy(group, t->group);
	/* "F:GROUP/EVENT PATTERN(...)": an event over a pattern */
	if (!strcmp(t->group, "functions") && !strncmp(line, "F:", 2)) {
		p = strchr(line, '/');
		e = strchr(line, ' ');
		c = e ? strchr(e, '(') : NULL;
		if (!p || !c || p > e || (size_t)(e - line) >= size ||
		    (size_t)(c - e) >= size)
			return -1;
		memcpy(group, line + 2, p - line - 2);
		group[p - line - 2] = '\0';
		memcpy(event, p + 1, e - p - 1);
		event[e - p - 1] = '\0';
		listed_func(e + 1, c, func);
		return 0;
	}
	if (!strcmp(t->group, "functions")) {
		e = strchr(line, '(');
		if (!e || (size_t)(e - line) >= size)
			return -1;
		/* "func%return(...)" -> functions/func__exit */
		ret = listed_func(line, e, func);
		if (strlen(func) + 7 > size)
			return -1;
		strcpy(event, func);
		if (ret)
			strcat(event, "__exit");
		for (p = event; *p; p++)
			if (*p == '.')
				*(char *)p = '_';
		return 0;
	}
	/* "p:GROUP/EVENT ...", or "r<maxactive>:GROUP/EVENT ..." */
	c = strchr(line, ':');
	p = strchr(line, '/');
	e = strchr(line, ' ');
	if (!c || !p || !e || c > p || p > e || (size_t)(e - p) >= size ||
	    (size_t)(p - c) >= size)
		return -1;
	memcpy(group, c + 1, p - c - 1);
	group[p - c - 1] = '\0';
	memcpy(event, p + 1, e - p - 1);
	event[e - p - 1] = '\0';
	p = e + 1;
	e = p + strcspn(p, " +\n");
	if ((size_t)(e - p) >= size)
		return -1;
	memcpy(func, p, e - p);
	func[e - p] = '\0';
	return 0;
}

static void check_event(struct target *t, unsigned int iter,
			const struct def *d, const char *line)
{
	char group[256], event[256], func[256], path[800], cmd[600], fmt[4096];
	char pat[300];
	char file[300];
	const char *fn;
	double t0;
	ssize_t n;
	int ret;

	snprintf(file, sizeof(file), TRACEFS "/%s", t->name);
	if (parse_line(t, line, group, event, func, sizeof(event))) {
		anomaly(t, iter, d, "cannot parse listing line '%s'", line);
		return;
	}
	t->events++;
	snprintf(path, sizeof(path), TRACEFS "/events/%s/%s/format", group, event);
	n = read_file(path, fmt, sizeof(fmt));
	if (n < 0 || !strstr(fmt, "print fmt:"))
		anomaly(t, iter, d, "%s: no format (%zd)", path, n);
	/*
	 * Enabling hooks the function, and disabling waits for RCU tasks
	 * grace periods before the ftrace_ops can go: by far the slowest
	 * step.  Every enable_every'th event is enabled and fired.
	 */
	if (t->events % enable_every)
		goto remove;
	t->enabled++;
	t0 = now();
	snprintf(path, sizeof(path), TRACEFS "/events/%s/%s/enable", group, event);
	clear_file(TRACEFS "/trace");
	ret = write_str(path, "1");
	if (ret)
		anomaly(t, iter, d, "enable %s: %s", event, strerror(-ret));
	/* an event over a pattern records the function it matched */
	fn = known_func(func) ? func : glob_func(func);
	if (fn) {
		fire(fn);
		n = read_file(TRACEFS "/trace", tracebuf, TRACE_MAX);
		if (!strcmp(t->group, "functions"))
			snprintf(pat, sizeof(pat), "%s%s(",
				 strstr(event, "__exit") ||
				 strstr(line, "%return(") ? "<-" : "->", fn);
		else
			snprintf(pat, sizeof(pat), " %s: (", event);
		/* a return probe fires when the function returns */
		if (n > 0 && strstr(tracebuf, pat))
			t->fired++;
		else
			anomaly(t, iter, d, "%s did not fire on %s()", event, fn);
	}
	ret = write_str(path, "0");
	if (ret)
		anomaly(t, iter, d, "disable %s: %s", event, strerror(-ret));

	t->tm[T_ENABLE] += now() - t0;
remove:
	t0 = now();
	/* Removed by name; the listing line creates the same event again */
	if (!strcmp(t->group, "functions"))
		snprintf(cmd, sizeof(cmd), "-:%s", event);
	else
		snprintf(cmd, sizeof(cmd), "-:%s/%s", group, event);
	ret = write_str(file, cmd);
	if (ret) {
		anomaly(t, iter, d, "'%s': %s", cmd, strerror(-ret));
		return;
	}
	ret = write_str(file, line);
	if (ret) {
		anomaly(t, iter, d, "listing '%s' does not define again: %s",
			line, strerror(-ret));
		return;
	}
	read_file(file, listing2, sizeof(listing2));
	listing2[strcspn(listing2, "\n")] = '\0';
	if (strcmp(listing2, line))
		anomaly(t, iter, d, "round trip: '%s' lists as '%s'", line, listing2);
	else
		t->roundtrips++;
	ret = write_str(file, cmd);
	if (ret)
		anomaly(t, iter, d, "'%s' (second time): %s", cmd, strerror(-ret));
	t->tm[T_ROUNDTRIP] += now() - t0;
}

/* Only blank lines and comments up to the first NUL: nothing to define */
static int blank(const struct def *d)
{
	const char *p = d->buf, *end = d->buf + strnlen(d->buf, d->len);
	int comment = 0;

	for (; p < end; p++) {
		if (*p == '\n')
			comment = 0;
		else if (*p == '#')
			comment = 1;
		else if (!comment && *p != ' ' && *p != '\t')
			return 0;
	}
	return 1;
}

static void run_one(struct target *t, unsigned int iter, struct def *d,
		    unsigned int nth)
{
	char file[300], line[8192];
	unsigned int before;
	const char *p;
	int ret, saved, injected;
	double t0;

	snprintf(file, sizeof(file), TRACEFS "/%s", t->name);
	t0 = now();
	clear_file(TRACEFS "/error_log");
	ret = write_nth(file, d->buf, d->len, nth, &injected);
	t->writes++;
	t->injected += injected;
	if (verbose) {
		printf("# %u: %s%s\n", iter, ret ? strerror(-ret) : "ok",
		       injected ? " (an allocation failed)" : "");
		show_def(d);
	}
	if (ret) {
		t->rejected++;
		t->errnos[-ret & 255]++;
		read_file(TRACEFS "/error_log", errlog, sizeof(errlog));
		/*
		 * An event over a pattern names the function a field was
		 * compiled for: "function_events: FUNCTION: error:"
		 */
		saved = strstr(errlog, t->errtag) != NULL ||
			(!strcmp(t->group, "functions") &&
			 strstr(errlog, "] function_events: ") &&
			 strstr(errlog, ": error: "));
		t->logged += saved;
		/*
		 * The command parser all dynamic event files share
		 * (trace_parse_run_command()) refuses a line of 4 KiB or
		 * more, or one with a NUL byte in it, with a printk ("Line
		 * length is too long") before any event type sees it: no
		 * error_log entry.  Removing an event that does not exist
		 * has none either.
		 */
		/* An allocation that failed may be the error_log's own */
		if (!saved && !injected && d->len < 4000 &&
		    !memchr(d->buf, '\0', d->len) &&
		    d->buf[strspn(d->buf, " \t")] != '-') {
			t->unlogged++;
			if (t->strict)
				anomaly(t, iter, d, "rejected (%s) without an error_log entry",
					strerror(-ret));
		}
		if (ret != -EINVAL && ret != -E2BIG && ret != -ENOENT &&
		    ret != -EEXIST && ret != -ENOMEM && ret != -EILSEQ &&
		    ret != -EBUSY && ret != -ENOSPC && ret != -EADDRNOTAVAIL) {
			t->odd_errno++;
			if (t->strict)
				anomaly(t, iter, d, "unexpected error %s", strerror(-ret));
		}
	} else {
		t->accepted++;
	}

	read_file(file, listing, sizeof(listing));
	t->tm[T_WRITE] += now() - t0;
	if (!listing[0]) {
		if (!ret) {
			if (blank(d))
				t->noop++;
			else
				anomaly(t, iter, d, "accepted, but nothing is listed");
		}
		return;
	}
	before = t->events;
	for (p = listing; *p; ) {
		size_t n = strcspn(p, "\n");

		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (p[n] == '\n');
		if (line[0])
			check_event(t, iter, d, line);
	}
	if (ret && t->events > before && !strchr(d->buf, '\n'))
		anomaly(t, iter, d, "rejected, but an event was created");
	clear_file(file);
	read_file(file, listing, sizeof(listing));
	if (listing[0])
		anomaly(t, iter, d, "events left after clearing: %s", listing);
}

static void report(struct target *t, double secs, int num)
{
	unsigned int i;

	printf("# fuzz %s: %u writes, %u accepted (%u blank), %u rejected "
	       "(%u with an error_log entry); %u events checked, %u enabled, "
	       "%u fired, %u round trips; %u anomalies; %.0f s, %.1f writes/s\n",
	       t->name, t->writes, t->accepted, t->noop, t->rejected, t->logged,
	       t->events, t->enabled, t->fired, t->roundtrips, t->anomalies, secs,
	       secs > 0 ? t->writes / secs : 0.0);
	if (t->unlogged || t->odd_errno)
		printf("# fuzz %s: %u rejected without an error_log entry, %u with "
		       "an errno other than EINVAL/E2BIG/ENOENT/EEXIST/ENOMEM/EILSEQ/EADDRNOTAVAIL/"
		       "EBUSY/ENOSPC%s\n", t->name, t->unlogged, t->odd_errno,
		       t->strict ? "" : " (counted, not failed: the control)");
	if (t->injected)
		printf("# fuzz %s: %u writes with an allocation failed\n", t->name,
		       t->injected);
	printf("# fuzz %s: seconds in", t->name);
	for (i = 0; i < T_NR; i++)
		printf(" %s %.1f", tnames[i], t->tm[i]);
	printf("\n# fuzz %s: errors:", t->name);
	for (i = 0; i < 256; i++)
		if (t->errnos[i])
			printf(" %s=%u", strerror(i), t->errnos[i]);
	/* A run that defined, fired or wrote back nothing tested nothing */
	if (t->strict && t->writes && (!t->events || !t->fired || !t->roundtrips)) {
		printf("\n# fuzz %s: %u events, %u fired, %u round trips: "
		       "the run tested nothing", t->name, t->events, t->fired,
		       t->roundtrips);
		t->anomalies++;
	}
	printf("\n%s %d fuzz %s\n", t->anomalies ? "not ok" : "ok", num, t->name);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct target targets[] = {
		{ .name = "function_events", .group = "functions",
		  .errtag = "function_events: error:", .count = 20000,
		  .strict = 1 },
		{ .name = "kprobe_events", .group = "kprobes",
		  .errtag = "trace_kprobe: error:", .count = 2000 },
	};
	unsigned long long seed = 1;
	long replay = -1;
	static struct def d;
	char lay[4096], *p;
	int opt, i, fail = 0;

	while ((opt = getopt(argc, argv, "n:k:s:r:e:f:v")) != -1) {
		switch (opt) {
		case 'n': targets[0].count = strtoul(optarg, NULL, 0); break;
		case 'k': targets[1].count = strtoul(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'r': replay = strtol(optarg, NULL, 0); verbose = 1; break;
		case 'e': enable_every = strtoul(optarg, NULL, 0) ?: 1; break;
		case 'f': fail_every = strtoul(optarg, NULL, 0); break;
		case 'v': verbose = 1; break;
		default:
			fprintf(stderr, "usage: %s [-n N] [-k N] [-s SEED] [-r ITER] [-e EVERY] [-f EVERY] [-v]\n",
				argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	tracebuf = malloc(TRACE_MAX);
	if (!tracebuf)
		return 2;
	if (read_file(SAMPLE_DIR "/layout", lay, sizeof(lay)) > 0 &&
	    (p = strstr(lay, "counter_addr ")))
		counter_addr = strtoul(p + 13, NULL, 16);
	else
		printf("# fevent-sample is not loaded: its functions will be rejected\n");
	/* Only the fuzzed events are enabled; a clean start */
	write_str(TRACEFS "/tracing_on", "1");
	write_str(TRACEFS "/buffer_size_kb", "1024");
	clear_file(TRACEFS "/function_events");
	clear_file(TRACEFS "/kprobe_events");

	if (fail_every) {
		nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
		if (nth_fd < 0)
			printf("# no /proc/thread-self/fail-nth: no allocation is failed\n");
	}
	printf("1..2\n# fuzz seed %llu\n", seed);
	for (i = 0; i < 2; i++) {
		struct target *t = &targets[i];
		struct timespec a, b;
		unsigned int iter;

		rng_seed(seed + i);
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (iter = 0; iter < t->count; iter++) {
			unsigned int nth = 0;

			memset(&d, 0, sizeof(d));
			if (i == 0)
				gen_fevent(&d);
			else
				gen_kprobe(&d, iter);
			if (rnd(3) == 0)
				mutate(&d);
			/* From the seed too: -r ITER fails the same allocation */
			if (fail_every && rnd(fail_every) == 0)
				nth = 1 + rnd(FAIL_NTH_MAX);
			if (replay >= 0 && iter != replay)
				continue;
			run_one(t, iter, &d, nth);
			if (!verbose && iter && !(iter % 2000))
				printf("# fuzz %s: %u/%u\n", t->name, iter, t->count);
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		report(t, (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9, i + 1);
		fail |= t->anomalies > 0;
	}
	return fail;
}
