// SPDX-License-Identifier: GPL-2.0
/*
 * fevent-bpf: attach a BPF program to a trace event through perf, as
 * libbpf's bpf_program__attach_perf_event() does, and say how it went.
 *
 *   fevent-bpf ID tracepoint|kprobe
 *
 * Loads a program of that type that returns 0, opens the event ID as a
 * PERF_TYPE_TRACEPOINT event on CPU 0 and asks PERF_EVENT_IOC_SET_BPF to
 * attach the program.  Prints "ok", or the name of the errno, and exits 0
 * either way; any other failure (load, open) exits 1.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *errname(int e)
{
	switch (e) {
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EEXIST: return "EEXIST";
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	default: return strerror(e);
	}
}

int main(int argc, char **argv)
{
	struct bpf_insn insns[] = {
		/* r0 = 0 */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		/* exit */
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct perf_event_attr pattr;
	union bpf_attr battr;
	char log[4096] = "";
	int prog, ev;

	if (argc != 3 || (strcmp(argv[2], "tracepoint") && strcmp(argv[2], "kprobe"))) {
		fprintf(stderr, "usage: fevent-bpf ID tracepoint|kprobe\n");
		return 2;
	}
	memset(&battr, 0, sizeof(battr));
	battr.prog_type = strcmp(argv[2], "kprobe") ? BPF_PROG_TYPE_TRACEPOINT :
						      BPF_PROG_TYPE_KPROBE;
	battr.insns = (unsigned long)insns;
	battr.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	battr.license = (unsigned long)"GPL";
	battr.log_buf = (unsigned long)log;
	battr.log_size = sizeof(log);
	battr.log_level = 1;
	prog = syscall(__NR_bpf, BPF_PROG_LOAD, &battr, sizeof(battr));
	if (prog < 0) {
		fprintf(stderr, "BPF_PROG_LOAD: %s\n%s", strerror(errno), log);
		return 1;
	}

	memset(&pattr, 0, sizeof(pattr));
	pattr.size = sizeof(pattr);
	pattr.type = PERF_TYPE_TRACEPOINT;
	pattr.config = strtoull(argv[1], NULL, 0);
	pattr.sample_period = 1;
	pattr.wakeup_events = 1;
	ev = syscall(__NR_perf_event_open, &pattr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (ev < 0) {
		fprintf(stderr, "perf_event_open: %s\n", strerror(errno));
		return 1;
	}
	if (ioctl(ev, PERF_EVENT_IOC_SET_BPF, prog))
		printf("%s\n", errname(errno));
	else
		printf("ok\n");
	return 0;
}
