/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM bench_floor

#if !defined(_BENCH_FLOOR_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _BENCH_FLOOR_TRACE_H

#include <linux/tracepoint.h>

/* What a function event without arguments records: ip and parent ip */
TRACE_EVENT(bench_floor,
	TP_PROTO(unsigned long ip, unsigned long parent_ip),
	TP_ARGS(ip, parent_ip),
	TP_STRUCT__entry(
		__field(unsigned long, ip)
		__field(unsigned long, parent_ip)
	),
	TP_fast_assign(
		__entry->ip = ip;
		__entry->parent_ip = parent_ip;
	),
	TP_printk("%ps <- %ps", (void *)__entry->ip, (void *)__entry->parent_ip)
);

#endif /* _BENCH_FLOOR_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE bench_floor_trace
#include <trace/define_trace.h>
