#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# mpctl listen: real events from every backend this kernel has, bad input,
# signals, cgroup removal, idle footprint.

load helpers

# pressure: a memory hog twice the cgroup's limit, for a few seconds
hog() {
	spawn_in "$@" -- stress-ng --vm 2 --vm-bytes 96M --timeout 20s -q
}

# stall PSI can see, for SECS, in a 64M cgroup with or without swap: 52M
# of anon memory held, and two readers of a 64M file through the rest.
# Without swap the hog above only stalls while it is OOM-killed and
# respawned, now and then; page cache that thrashes stalls all along
# (measured on the host: 170-370 ms a second of "some").
thrash() {
	local secs=$1
	shift
	[ "$(stat -f -c %T "$BATS_TEST_TMPDIR")" != tmpfs ] ||
		skip "the test's temp dir is on tmpfs: its page cache cannot thrash"
	# shellcheck disable=SC2016 # expanded by the inner bash
	spawn_in "$@" -- bash -c '
		stress-ng --vm 1 --vm-bytes 52M --vm-keep --timeout "$1s" -q &
		head -c 64M /dev/zero >"$2"
		end=$((SECONDS + $1))
		for r in 1 2; do
			while [ "$SECONDS" -lt "$end" ]; do cat "$2" >/dev/null; done &
		done
		wait' thrash "$secs" "$BATS_TEST_TMPDIR/thrash"
}

@test "listen: memcg backend receives real low events under stress-ng" {
	requires root memcg stress-ng
	cg=$(make_memcg memcg-low 64M)
	mpctl_bg listen --backend memcg --cgroup "$cg" --count 3 --timeout 25s -v
	hog "$cg"
	wait_exit "$MP_BG_PID" 30
	run cat "$MP_BG_OUT"
	[ "${#lines[@]}" -eq 3 ]
	assert_line --index 0 --regexp "^20[0-9-]+T[0-9:.]+Z backend=memcg cgroup=/$MP_RUN_ID-memcg-low level=(low|medium|critical) events=[1-9][0-9]*$"
}

@test "listen: memcg critical events in JSON, checked with jq" {
	requires root memcg stress-ng jq
	cg=$(make_memcg memcg-crit 64M)
	mpctl_bg listen -b memcg -c "$cg" -l critical -n 2 -t 25s --json -v
	hog "$cg"
	wait_exit "$MP_BG_PID" 30
	[ "$(wc -l < "$MP_BG_OUT")" -eq 2 ]
	jq -e --arg cg "/$MP_RUN_ID-memcg-crit" '
		.schema.name == "mpctl-listen" and .schema.version == 1 and
		.event.backend == "memcg" and .event.cgroup == $cg and
		.event.level == "critical" and .event.level_native == "critical" and
		(.event.events | type == "number" and . >= 1) and
		(.event.time_ns | type == "number") and
		(.event.monotonic_ns | type == "number")' "$MP_BG_OUT"
	# seq counts the events
	run jq -s 'map(.event.seq)' -c "$MP_BG_OUT"
	assert_output '[1,2]'
}

@test "listen: memcg medium level with hierarchy and local modes" {
	requires root memcg stress-ng
	parent=$(make_memcg modes)
	child=$parent/leaf
	mkdir "$child"
	MP_CGROUPS+=("$child")
	echo 64M > "$child/memory.limit_in_bytes"
	# the parent hears the child's pressure in hierarchy mode, and a local
	# listener on the child hears it as well
	mpctl_bg listen -b memcg -c "$parent" -l medium -m hierarchy -n 1 -t 25s -v
	hier=$MP_BG_PID hier_out=$MP_BG_OUT
	mpctl_bg listen -b memcg -c "$child" -l medium -m local -n 1 -t 25s -v
	local_pid=$MP_BG_PID
	hog "$child"
	wait_exit "$hier" 30
	grep -q 'level=\(medium\|critical\)' "$hier_out"
	wait_exit "$local_pid" 30
	grep -q "cgroup=/$MP_RUN_ID-modes/leaf level=\(medium\|critical\)" "$MP_BG_OUT"
}

@test "listen: psi backend on a cgroup2 group receives real events" {
	requires root memcg v2 psi_cgroup stress-ng jq
	cg=$(make_memcg psi 64M)
	v2=$(make_v2cg psi)
	# two events: the trigger fires again after the first; the load
	# outlasts the listener, teardown stops it
	mpctl_bg listen -b psi -c "$v2" -l low -n 2 -t 55s -j -v
	thrash 55 "$cg" "$v2"
	wait_exit "$MP_BG_PID" 60
	jq -e --arg cg "/$MP_RUN_ID-psi" '.event.backend == "psi" and
		.event.cgroup == $cg and
		(.event.level | IN("low", "medium", "critical"))' "$MP_BG_OUT"
	[ "$(wc -l < "$MP_BG_OUT")" -eq 2 ] || { cat "$MP_BG_ERR"; false; }
}

@test "listen: psi with a custom trigger" {
	requires root memcg v2 psi_cgroup stress-ng
	cg=$(make_memcg psi-spec 64M)
	v2=$(make_v2cg psi-spec)
	mpctl_bg listen -b psi -c "$v2" -l medium --psi 'some 100ms 2s' -n 1 -t 25s -v
	thrash 25 "$cg" "$v2"
	wait_exit "$MP_BG_PID" 30
	grep -q "backend=psi cgroup=/$MP_RUN_ID-psi-spec level=medium" "$MP_BG_OUT"
}

@test "listen: mempressure backend (patched kernel)" {
	requires root mempressure stress-ng
	root=$(mempressure_root)
	[ -n "$root" ] || skip "the mempressure controller is not mounted"
	mpctl listen -b mempressure -t 1s
	assert_success
}

@test "listen: --exec runs a command per event with the event in its environment" {
	requires root memcg stress-ng jq
	cg=$(make_memcg exec 64M)
	log=$BATS_TEST_TMPDIR/exec.log
	mpctl_bg listen -b memcg -c "$cg" -n 2 -t 25s -v \
		--exec "echo \"\$MPCTL_SEQ \$MPCTL_LEVEL \$MPCTL_BACKEND \$MPCTL_CGROUP \$MPCTL_EVENTS\" >> $log; echo \"\$MPCTL_EVENT_JSON\" >> $log.json"
	hog "$cg"
	wait_exit "$MP_BG_PID" 30
	run cat "$log"
	assert_line --index 0 --regexp "^1 (low|medium|critical) memcg /$MP_RUN_ID-exec [1-9][0-9]*$"
	assert_line --index 1 --regexp "^2 "
	jq -e '.event.backend == "memcg"' "$log.json"
}

@test "listen: exits 0 at the timeout with no events" {
	requires root memcg
	cg=$(make_memcg idle)
	mpctl listen -b memcg -c "$cg" -t 300ms
	assert_success
	assert_output ""
}

@test "listen: -q silences -v's informational lines, not the events" {
	requires root memcg
	cg=$(make_memcg quiet)
	run --separate-stderr "$MPCTL_BIN" listen -b memcg -c "$cg" -t 300ms -v -q
	mp_trace "mpctl listen -v -q"
	assert_success
	[ -z "$stderr" ]
	run --separate-stderr "$MPCTL_BIN" listen -b memcg -c "$cg" -t 300ms --quiet -c /nonexistent-mpctl
	[ "$status" -eq 1 ]
	[[ $stderr == "mpctl listen: "* ]]
}

@test "listen: SIGTERM and SIGINT end it cleanly" {
	requires root memcg
	cg=$(make_memcg sig)
	for sig in TERM INT; do
		mpctl_bg listen -b memcg -c "$cg" -v
		kill -s "$sig" "$MP_BG_PID"
		wait_exit "$MP_BG_PID" 5
	done
}

@test "listen: says so and exits 1 when the cgroup is removed under it" {
	requires root memcg
	cg=$(make_memcg gone)
	mpctl_bg listen -b memcg -c "$cg" -v
	rmdir "$cg"
	st=0
	wait_exit "$MP_BG_PID" 5 || st=$?
	[ "$st" -eq 1 ]
	run cat "$MP_BG_ERR"
	assert_line --partial "mpctl listen: cgroup removed '/$MP_RUN_ID-gone'"
}

@test "listen: several -c watch every cgroup, each event names its own" {
	requires root memcg stress-ng jq
	a=$(make_memcg multi-a 64M)
	b=$(make_memcg multi-b 64M)
	mpctl_bg listen -b memcg -c "$a" -c "$b" --json -n 1 -t 25s -v
	run cat "$MP_BG_ERR"
	assert_line --partial "cgroup=/$MP_RUN_ID-multi-a "
	assert_line --partial "cgroup=/$MP_RUN_ID-multi-b "
	# pressure in the first only: the first -c is not replaced by the second
	hog "$a"
	wait_exit "$MP_BG_PID" 30
	run jq -e -r '.event.cgroup' "$MP_BG_OUT"
	assert_success
	assert_output "/$MP_RUN_ID-multi-a"
}

@test "listen: with several -c a removed cgroup is said, the others go on, status 1 at the end" {
	requires root memcg
	a=$(make_memcg keep-a)
	b=$(make_memcg keep-b)
	mpctl_bg listen -b memcg -c "$a" -c "$b" -t 2s -v
	rmdir "$b"
	sleep 0.5
	# still listening on the other
	kill -0 "$MP_BG_PID"
	st=0
	wait_exit "$MP_BG_PID" 10 || st=$?
	[ "$st" -eq 1 ]
	run cat "$MP_BG_ERR"
	assert_line --partial "mpctl listen: cgroup removed '/$MP_RUN_ID-keep-b'"
}

@test "listen: --metrics takes one -c" {
	requires root memcg
	a=$(make_memcg met-a)
	b=$(make_memcg met-b)
	mpctl listen -b memcg -c "$a" -c "$b" --metrics "$BATS_TEST_TMPDIR/m.prom" -t 300ms
	[ "$status" -eq 64 ]
	assert_output "mpctl listen: --metrics describes one cgroup: give one -c"
}

@test "listen: psi listener exits 1 when its cgroup2 group is removed" {
	requires root v2 psi_cgroup
	v2=$(make_v2cg gone2)
	mpctl_bg listen -b psi -c "$v2" -v
	rmdir "$v2"
	st=0
	wait_exit "$MP_BG_PID" 5 || st=$?
	[ "$st" -eq 1 ]
	grep -q "cgroup removed" "$MP_BG_ERR"
}

@test "listen: an idle listener does not wake up, stays small, holds its fds" {
	requires root memcg
	cg=$(make_memcg footprint)
	mpctl_bg listen -b memcg -c "$cg" -v
	pid=$MP_BG_PID
	sleep 0.2
	read -r -a s0 < "/proc/$pid/stat"
	sw0=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$pid/status")
	fd0=$(ls "/proc/$pid/fd" | wc -l)
	sleep 4
	read -r -a s1 < "/proc/$pid/stat"
	sw1=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$pid/status")
	fd1=$(ls "/proc/$pid/fd" | wc -l)
	rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")
	echo "ticks $((s0[13] + s0[14])) -> $((s1[13] + s1[14])), wake-ups $sw0 -> $sw1, fds $fd0 -> $fd1, rss ${rss} kB" >&2
	# utime + stime (fields 14 and 15) did not move: 0 CPU ticks
	[ $((s1[13] + s1[14])) -eq $((s0[13] + s0[14])) ]
	# no voluntary context switch: it never woke up
	[ "$sw1" -eq "$sw0" ]
	[ "$fd1" -eq "$fd0" ]
	[ "$fd1" -le 12 ]
	[ "$rss" -lt 4096 ]
}

# --- bad input: one line, the documented status ---

@test "listen: unknown level, mode or backend is a usage error (64)" {
	mpctl listen --level extreme
	assert_failure 64
	assert_line --index 0 "mpctl listen: unknown level 'extreme'"
	mpctl listen --mode sideways
	assert_failure 64
	assert_line --index 0 "mpctl listen: unknown mode 'sideways'"
	mpctl listen --backend vmpressure_fd
	assert_failure 64
	assert_line --index 0 "mpctl listen: unknown backend 'vmpressure_fd'"
}

@test "listen: oom is accepted as critical" {
	requires root memcg
	cg=$(make_memcg oomalias)
	mpctl listen -b memcg -c "$cg" -l oom -t 100ms
	assert_success
}

@test "listen: malformed and rule-breaking --psi triggers are usage errors" {
	mpctl listen --psi 'sometimes 1 2'
	assert_failure 64
	assert_line --index 0 --partial "is neither 'some' nor 'full'"
	mpctl listen --psi 'some 100000'
	assert_failure 64
	assert_line --index 0 --partial "expected 'some|full <stall> <window>'"
	mpctl listen --psi 'some abc 1000000'
	assert_failure 64
	assert_line --index 0 --partial "invalid psi stall time 'abc'"
	# window outside 500 ms .. 10 s, stall above the window: refused
	# before the kernel sees them
	for spec in 'some 1000 100000' 'some 1000 20000000' 'full 2000000 1000000' 'some 0 1000000'; do
		mpctl listen -b psi --psi "$spec"
		assert_failure 64
		[ "${#lines[@]}" -eq 1 ]
		assert_line --index 0 --regexp '^mpctl listen: psi (window|stall) '
	done
}

@test "listen: --psi and --mode belong to their backends" {
	requires memcg
	mpctl listen -b memcg --psi 'some 100000 1000000' -t 100ms
	assert_failure 64
	assert_output "mpctl listen: --psi applies to the psi backend only"
	mpctl listen -b psi --mode local -t 100ms
	assert_failure 64
	assert_output "mpctl listen: --mode applies to the memcg backend only"
	# each names its backend: together, without -b, they disagree
	mpctl listen --mode local --psi 'some 100000 1000000' -t 100ms
	assert_failure 64
	assert_output "mpctl listen: --psi applies to the psi backend only"
}

@test "listen: a missing cgroup fails with status 1" {
	requires memcg
	mpctl listen -b memcg -c "/$MP_RUN_ID-does-not-exist" -t 100ms
	assert_failure 1
	assert_output "mpctl listen: cannot open cgroup '/$MP_RUN_ID-does-not-exist': No such file or directory"
}

@test "listen: a path that is not a cgroup fails with status 1" {
	requires memcg
	mpctl listen -b memcg -c /tmp -t 100ms
	assert_failure 1
	assert_output "mpctl listen: not a cgroup of the memory hierarchy '/tmp'"
	mpctl listen -b memcg -c "$(memcg_root)/memory.stat" -t 100ms
	assert_failure 1
	assert_output --partial "not a cgroup"
}

@test "listen: permission denied gives 77" {
	requires root memcg
	command -v setpriv >/dev/null || skip "no setpriv"
	cg=$(make_memcg perm)
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$MPCTL_BIN" listen -b memcg -c "$cg" -t 100ms
	echo "$output" >&2
	assert_failure 77
	assert_output --regexp "^mpctl listen: cannot open '.*': Permission denied$"
}

@test "listen: --count 0, negative or huge is refused" {
	for n in 0 -1 99999999999999999999 3x ''; do
		mpctl listen --count "$n"
		assert_failure 64
		assert_line --index 0 "mpctl listen: invalid --count '$n': $( \
			case $n in 0|-1|9*) echo 'must be 1 to 2147483647' ;; \
			*) echo 'not a number' ;; esac)"
	done
}

@test "listen: malformed durations are refused" {
	for t in 10x -1s 1e3 '' 0x10 nan 1m30 '1 2' 5S; do
		mpctl listen --timeout "$t"
		assert_failure 64
		assert_line --index 0 "mpctl listen: invalid --timeout '$t': not a duration (e.g. 500ms, 30s, 1m30s, 1d, infinity)"
	done
	mpctl listen --timeout 0
	assert_failure 64
	assert_line --index 0 "mpctl listen: invalid --timeout '0': must be above 0 (infinity: no end)"
	mpctl listen --timeout 400d
	assert_failure 64
	assert_line --index 0 "mpctl listen: invalid --timeout '400d': at most a year (or infinity)"
}

@test "listen: stray arguments and unknown options are usage errors" {
	mpctl listen extra
	assert_failure 64
	assert_line --index 0 "mpctl listen: unexpected argument 'extra'"
	mpctl listen --frobnicate
	assert_failure 64
}

@test "listen: --timeout and SIGINT stop a hung --exec command" {
	requires root memcg stress-ng
	local i st
	cg=$(make_memcg hung 64M)
	# an odd sleep names this test's command
	mpctl_bg listen -b memcg -c "$cg" -t 3s -v --exec "sleep 97; :"
	hog "$cg"
	st=0
	wait_exit "$MP_BG_PID" 10 || st=$?
	[ "$st" -eq 0 ]
	grep -q "command 'sleep 97; :' stopped: the listener is exiting" "$MP_BG_ERR"
	! pgrep -f "sleep 97"
	mpctl_bg listen -b memcg -c "$cg" -v --exec "sleep 98; :"
	hog "$cg"
	for i in $(seq 100); do
		pgrep -f "sleep 98" >/dev/null && break
		sleep 0.1
	done
	kill -INT "$MP_BG_PID"
	st=0
	wait_exit "$MP_BG_PID" 5 || st=$?
	[ "$st" -eq 0 ]
	! pgrep -f "sleep 98"
}

@test "listen: a cgroup name that is not UTF-8 is escaped in the JSON, not lost" {
	requires root memcg stress-ng jq
	cg=$(make_memcg $'bad\xfe' 64M)
	mpctl_bg listen -b memcg -c "$cg" -n 1 -t 25s -v --json
	hog "$cg"
	wait_exit "$MP_BG_PID" 30
	jq -e --arg p "/$MP_RUN_ID-bad\\xfe" '.event.cgroup == $p and
		(.event | has("level") and has("seq"))' "$MP_BG_OUT"
}

@test "listen: -c . is refused, //x and trailing slashes are normalised" {
	requires root memcg
	local c
	cg=$(make_memcg norm)
	for c in . ./ "$MP_RUN_ID-norm/." "$MP_RUN_ID-norm/.."; do
		mpctl listen -b memcg -c "$c" -t 100ms
		[ "$status" -eq 64 ]
		assert_output --partial "must not contain '.' or '..'"
	done
	for c in "//$MP_RUN_ID-norm" "$MP_RUN_ID-norm//" "$(memcg_root)//$MP_RUN_ID-norm/"; do
		mpctl listen -b memcg -c "$c" -t 100ms -v
		assert_success
		assert_output --partial "cgroup=/$MP_RUN_ID-norm level="
	done
}

@test "listen, register: unprivileged, an auto-picked memcg falls through to PSI and says why (-v)" {
	requires root memcg psi
	command -v setpriv >/dev/null || skip "no setpriv"
	local as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	# memcg's cgroup.event_control is root's: 77 when asked for by name
	run --separate-stderr "${as[@]}" "$MPCTL_BIN" listen -b memcg -t 100ms
	[ "$status" -eq 77 ] || skip "memcg is usable unprivileged here"
	run --separate-stderr "${as[@]}" "$MPCTL_BIN" listen -v -t 100ms
	assert_success
	[[ ${stderr_lines[0]} == "mpctl listen: listening: backend=psi "* ]]
	[[ ${stderr_lines[1]} == "mpctl listen: note: memcg: cannot open '"*"': Permission denied; fell back to psi"* ]]
	run --separate-stderr "${as[@]}" "$MPCTL_BIN" register -v -C 1M -- true
	assert_success
	[[ $stderr == *"registered: mode=emulated backend=psi "* ]]
}

@test "listen: -b psi on a cgroup that exists only in v1 says so (69)" {
	requires root memcg psi
	[ -n "$(v2_root)" ] || skip "no cgroup2 beside v1"
	local dir
	dir=$(make_memcg v1only)
	mpctl listen -b psi -c "/$(basename "$dir")" -t 100ms
	assert_failure 69
	assert_output "mpctl listen: cgroup '/$(basename "$dir")' exists only in the cgroup v1 memory hierarchy, and PSI is per cgroup on cgroup2 only: use -b memcg, or -c / for system-wide PSI"
}

# the Prometheus text format (0.0.4), strictly: HELP and TYPE before a
# family's samples, known types, counters named *_total with whole
# values, label values quoted and escaped, no series twice
check_exposition() {
	awk '
	function bad(msg) { print FILENAME ":" FNR ": " msg ": " $0; err = 1 }
	/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .+$/ { help[$3] = 1; next }
	/^# TYPE / {
		if (!($3 in help)) bad("TYPE before HELP")
		if ($4 != "counter" && $4 != "gauge") bad("unknown type")
		if ($4 == "counter" && $3 !~ /_total$/) bad("counter not *_total")
		type[$3] = $4; next
	}
	/^#/ { bad("stray comment"); next }
	{
		if ($0 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\[\\"n])*",?)*\} [0-9]+(\.[0-9]+)?$/)
			bad("not a sample")
		name = $0; sub(/\{.*/, "", name)
		if (!(name in type)) bad("sample before its TYPE")
		if (type[name] == "counter" && $NF !~ /^[0-9]+$/) bad("counter not whole")
		key = $0; sub(/ [^ ]*$/, "", key)
		if (seen[key]++) bad("series twice")
		n++
	}
	END { if (!n) { print "no samples"; err = 1 } exit err }' "$1"
}

@test "listen --metrics: a Prometheus textfile that counts the events, strictly formatted" {
	requires root memcg stress-ng
	local f=$BATS_TEST_TMPDIR/mpctl.prom
	cg=$(make_memcg metrics 64M)
	mpctl_bg listen -b memcg -c "$cg" -n 3 -t 25s --metrics "$f" -v
	# the file is there (all zeros) before the first event
	for ((i = 0; i < 100; i++)); do [ -s "$f" ] && break; sleep 0.1; done
	check_exposition "$f"
	grep -qx "mpctl_listen_events_total{backend=\"memcg\",cgroup=\"/$MP_RUN_ID-metrics\",level=\"low\"} 0" "$f"
	hog "$cg"
	wait_exit "$MP_BG_PID" 30
	check_exposition "$f"
	# three events were printed: three counted, by level
	run awk '/^mpctl_listen_events_total/ { s += $NF } END { print s }' "$f"
	assert_output 3
	run awk '/^mpctl_listen_notifications_total/ { s += $NF } END { print (s >= 3) }' "$f"
	assert_output 1
	grep -q "^mpctl_memory_events_total{backend=\"memcg\",cgroup=\"/$MP_RUN_ID-metrics\",event=\"oom_kill\"} [0-9]*$" "$f"
	run awk '/^mpctl_listen_last_event_timestamp_seconds/ { print ($NF > 1700000000) }' "$f"
	assert_output 1
	# replaced atomically: no temporary file beside it
	[ -z "$(ls -A "$BATS_TEST_TMPDIR" | grep '^\.')" ]
}

@test "listen --metrics: an unwritable file fails before listening" {
	mpctl listen -t 100ms --metrics /nonexistent/dir/m.prom
	assert_failure 1
	assert_output --partial "cannot create '/nonexistent/dir/m.prom'"
	mpctl listen --metrics ''
	assert_failure 64
}

@test "listen --metrics -: the exposition on stdout when listening ends, no file named '-'" {
	requires root memcg
	local cg
	cg=$(make_memcg metrics-stdout 64M)
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr "$MPCTL_BIN" listen -b memcg -c "$cg" -t 300ms --metrics -
	assert_success
	[ ! -e "$BATS_TEST_TMPDIR/-" ]
	printf '%s\n' "$output" >m.prom
	check_exposition m.prom
	check_metrics m.prom
	grep -qx "mpctl_listen_events_total{backend=\"memcg\",cgroup=\"/$MP_RUN_ID-metrics-stdout\",level=\"low\"} 0" m.prom
	# stdout is the exposition's: JSON Lines cannot share it
	mpctl listen -b memcg -c "$cg" -t 300ms --metrics - --json
	assert_failure 64
	assert_output --partial "--metrics - and --json both write to stdout"
}

@test "listen --metrics: passes promtool; --metrics-format openmetrics passes an OpenMetrics parser" {
	requires root memcg
	local cg fmt
	cg=$(make_memcg metrics-om 64M)
	cd "$BATS_TEST_TMPDIR"
	for fmt in prometheus openmetrics; do
		run --separate-stderr "$MPCTL_BIN" listen -b memcg -c "$cg" \
			-t 300ms --metrics m.$fmt --metrics-format $fmt
		assert_success
		check_metrics m.$fmt $fmt
	done
	# a counter's family is NAME in OpenMetrics, NAME_total in the text format
	grep -qx '# TYPE mpctl_listen_events counter' m.openmetrics
	grep -qx '# TYPE mpctl_listen_events_total counter' m.prometheus
	grep -qx "mpctl_listen_events_total{backend=\"memcg\",cgroup=\"/$MP_RUN_ID-metrics-om\",level=\"low\"} 0" m.openmetrics
	[ "$(tail -n1 m.openmetrics)" = "# EOF" ]
	mpctl listen -t 1s --metrics - --metrics-format json
	assert_failure 64
	assert_output --partial "invalid --metrics-format 'json': expected prometheus or openmetrics"
}

@test "--metrics-format without --metrics is a usage error in every command" {
	local c
	for c in listen register stress report; do
		run -64 "$MPCTL_BIN" "$c" --metrics-format openmetrics
		assert_output --partial "mpctl $c: --metrics-format needs --metrics FILE"
	done
}

@test "listen: one cgroup given twice, in two spellings, is watched once" {
	requires root memcg
	local cg
	cg=$(make_memcg twice 64M)
	mpctl listen -b memcg -c "$cg" -c "/${cg##*/}" -c "${cg##*/}" -v -t 300ms
	assert_success
	[ "$(grep -c "listening: backend=memcg cgroup=/${cg##*/} " <<<"$output")" -eq 1 ]
	assert_line "mpctl listen: note: cgroup '/${cg##*/}' is given more than once: watched once"
}

@test "listen: a psi window only CAP_SYS_RESOURCE may use is 77, in the user's words" {
	requires root psi
	# util-linux's setpriv (busybox's, in the VM, cannot change the uid)
	setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null ||
		skip "no setpriv that changes the uid"
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$MPCTL_BIN" listen -b psi --psi 'some 100ms 1s' -t 300ms
	mp_trace "listen --psi 'some 100ms 1s' as nobody"
	assert_failure 77
	assert_output "mpctl listen: psi window '1s': without CAP_SYS_RESOURCE it must be a multiple of 2s"
	# a window of 2 s is anyone's
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$MPCTL_BIN" listen -b psi --psi 'some 100ms 2s' -t 300ms
	assert_success
}

@test "listen --min-interval: a storm is one line per interval, with the count" {
	requires root memcg stress-ng jq
	local cg
	cg=$(make_memcg storm 48M)
	mpctl_bg listen -b memcg -c "$cg" -l low --min-interval 1s -t 6s -j -v
	hog "$cg"
	wait_exit "$MP_BG_PID" 30
	# every line counts what it stands for
	jq -e -s 'length >= 1 and all(.[]; .event.coalesced >= 1)' "$MP_BG_OUT"
	# at most one line a second (6 s, the first at once, one at the end)
	[ "$(wc -l <"$MP_BG_OUT")" -le 8 ]
	# a storm: more events than lines
	run jq -s '[.[].event.coalesced] | add' "$MP_BG_OUT"
	[ "$output" -gt "$(wc -l <"$MP_BG_OUT")" ]
}

@test "listen --min-interval: text lines say how many events each stands for" {
	requires root memcg stress-ng
	local cg
	cg=$(make_memcg storm-text 48M)
	mpctl_bg listen -b memcg -c "$cg" -l low --min-interval 500ms -t 4s -v
	hog "$cg"
	wait_exit "$MP_BG_PID" 30
	run grep -c ' coalesced=[0-9]*$' "$MP_BG_OUT"
	[ "$output" -ge 1 ]
	mpctl listen --min-interval 0 -t 100ms
	assert_failure 64
}
