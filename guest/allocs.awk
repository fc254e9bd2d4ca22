# make bench: what defining and enabling one more event of a kind leaves
# allocated, by call site, from a trace of the kmem and percpu events
# (guest/bench.sh's allocs()): the allocations of the writing shell and
# everyone's frees, a line "ALLOC-START" (trace_marker) between the first
# event and the next.  An object allocated in the window and not freed
# counts for its call site; one allocated before it and freed in it
# (the hash an enable replaces, freed by an RCU callback) counts against
# its call site.  Dentries and inodes are left out: dropping caches frees
# them.  Prints "ALLOC <kind> <call site> <bytes>" for each site whose
# sum is not zero.  awk -v kind=KIND -f allocs.awk TRACE
/ALLOC-START/ {
	start = 1
	next
}
{
	ev = ""; site = ""; ptr = ""; bytes = 0
	for (i = 1; i <= NF; i++) {
		if (ev == "" && $i ~ /^(kmalloc|kmem_cache_alloc|kfree|kmem_cache_free|percpu_alloc_percpu|percpu_free_percpu):$/)
			ev = $i
		else if ($i ~ /^call_site=/)
			site = substr($i, 11)
		else if ($i ~ /^ptr=/)
			ptr = substr($i, 5)
		else if ($i ~ /^bytes_alloc=/)
			bytes = substr($i, 13)
	}
	if (ev == "" || ptr == "")
		next
	if (ev ~ /free/) {
		if (ptr in at) {
			if (start && !win[ptr])
				sum[at[ptr]] -= size[ptr]
			delete at[ptr]
		}
		next
	}
	sub(/[+].*/, "", site)
	if (site ~ /^(__d_alloc|.*alloc_inode)$/)
		next
	at[ptr] = site
	size[ptr] = bytes
	win[ptr] = start
}
END {
	for (p in at)
		if (win[p])
			sum[at[p]] += size[p]
	for (s in sum)
		if (sum[s])
			print "ALLOC", kind, s, sum[s]
}
