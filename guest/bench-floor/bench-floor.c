// SPDX-License-Identifier: GPL-2.0
/*
 * make bench's floor for a dynamic record of ip and parent ip: an
 * ftrace_ops on one function whose callback takes ftrace's recursion
 * lock and records both through a TRACE_EVENT(), and does nothing else.
 * No dynamic event that hooks the function through ftrace and records
 * the same two fields in the ring buffer can cost less per hit: what a
 * function event without arguments costs above it is its own work.
 *
 * Not part of the series: guest/bench.sh loads it for its floor case.
 */
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/string.h>

#define CREATE_TRACE_POINTS
#include "bench_floor_trace.h"

static char *func = "fevent_sample_bench";
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "the function to hook");

static void notrace floor_call(unsigned long ip, unsigned long parent_ip,
			       struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	int bit = ftrace_test_recursion_trylock(ip, parent_ip);

	if (bit < 0)
		return;
	trace_bench_floor(ip, parent_ip);
	ftrace_test_recursion_unlock(bit);
}

/*
 * No FTRACE_OPS_FL_RECURSION: the callback takes the lock itself, as the
 * function tracer's and function events' do; with the flag, ftrace would
 * call it through ftrace_ops_assist_func(), 50 instructions more a hit.
 */
static struct ftrace_ops floor_ops = {
	.func	= floor_call,
};

static int __init floor_init(void)
{
	int ret;

	ret = ftrace_set_filter(&floor_ops, (unsigned char *)func,
				strlen(func), 1);
	if (ret)
		return ret;
	ret = register_ftrace_function(&floor_ops);
	if (ret)
		ftrace_free_filter(&floor_ops);
	return ret;
}

static void __exit floor_exit(void)
{
	unregister_ftrace_function(&floor_ops);
	ftrace_free_filter(&floor_ops);
}

module_init(floor_init);
module_exit(floor_exit);
MODULE_DESCRIPTION("make bench: ftrace plus a TRACE_EVENT() of ip and parent ip");
MODULE_LICENSE("GPL");
