#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# mpctl register: a shrinker registration handed to a command, its exit
# status, and the monitor. The same tests run on a stock kernel (emulated
# shrinker) and on a patched one (the kernel's mempressure.shrinker).

load helpers
load shrinker

setup() {
	export MPCTL=$MPCTL_BIN
}

@test "register: --help names the options and the environment" {
	mpctl register --help
	assert_success
	assert_output --partial '--chunk'
	assert_output --partial '--cgroup'
	assert_output --partial '--backend'
	assert_output --partial 'MPCTL_SHRINKER_FD'
}

@test "register: --chunk is required, sizes are checked" {
	mpctl register -- true
	[ "$status" -eq 64 ]
	assert_output --partial 'mpctl register: --chunk SIZE is required'
	mpctl register --chunk 0 -- true
	[ "$status" -eq 64 ]
	mpctl register --chunk lots -- true
	[ "$status" -eq 64 ]
	assert_output --partial "mpctl register: invalid --chunk 'lots': not a size (e.g. 4096, 64K, 1.5G)"
	mpctl register --chunk 1M --backend nope -- true
	[ "$status" -eq 64 ]
}

@test "register: monitor options are refused with a COMMAND" {
	mpctl register --chunk 1M --count 2 -- true
	[ "$status" -eq 64 ]
	assert_output --partial 'are for the monitor'
}

@test "register: COMMAND inherits the registration, described in MPCTL_SHRINKER_*" {
	requires root
	mpctl register --chunk 64K -- sh -c '
		echo "chunk=$MPCTL_SHRINKER_CHUNK abi=$MPCTL_SHRINKER_ABI"
		echo "backend=$MPCTL_SHRINKER_BACKEND"
		test -e /proc/self/fd/$MPCTL_SHRINKER_FD && echo fd-open
		[ "$MPCTL_SHRINKER_EFD" = -1 ] ||
			test -e /proc/self/fd/$MPCTL_SHRINKER_EFD && echo efd-open'
	[ "$status" -ne 69 ] || skip "no shrinker interface: $output"
	assert_success
	assert_line 'chunk=65536 abi=v1' || assert_line 'chunk=65536 abi=v2'
	assert_line --regexp '^backend=(mempressure|memcg|psi)$'
	assert_line fd-open
	assert_line efd-open
}

@test "register: exits with COMMAND's status, 128+N when killed" {
	requires root
	mpctl register --chunk 1M -- sh -c 'exit 7'
	[ "$status" -ne 69 ] || skip "no shrinker interface"
	[ "$status" -eq 7 ]
	mpctl register --chunk 1M -- sh -c 'kill -TERM $$'
	[ "$status" -eq 143 ]
	mpctl register --chunk 1M -- true
	assert_success
}

@test "register: options end at COMMAND (sh -c is sh's)" {
	requires root
	mpctl register --chunk 1M sh -c 'exit 5'
	[ "$status" -ne 69 ] || skip "no shrinker interface"
	[ "$status" -eq 5 ]
}

@test "register: a missing COMMAND gives 127 and says so" {
	requires root
	run -127 "$MPCTL_BIN" register --chunk 1M -- /nonexistent/prog
	echo "$output" >&2
	assert_output --partial "mpctl register: cannot run '/nonexistent/prog': No such file or directory"
}

@test "register: --backend mempressure on a stock kernel is 69" {
	requires root
	if grep -qw mempressure /proc/cgroups; then
		skip "this kernel has the mempressure controller"
	fi
	mpctl register --chunk 1M --backend mempressure -- true
	[ "$status" -eq 69 ]
}

@test "register: COMMAND inherits the registration's fds and no other" {
	requires root
	# the fds a command inherits here anyway (bats keeps some open),
	# listed the same way: a glob, no pipe
	run sh -c 'cd /proc/$$/fd && echo *'
	base=" $output "
	mpctl register --chunk 1M -- sh -c '
		cd /proc/$$/fd && echo *
		echo $MPCTL_SHRINKER_EFD $MPCTL_SHRINKER_FD $MPCTL_SHRINKER_AFD'
	[ "$status" -ne 69 ] || skip "no shrinker interface"
	assert_success
	extra=
	for fd in ${lines[0]}; do
		[[ $base == *" $fd "* ]] || extra="$extra $fd"
	done
	want=
	for fd in ${lines[1]}; do
		[ "$fd" = -1 ] || want="$want $fd"
	done
	echo "extra:$extra want:$want" >&2
	[ "$(echo $extra | tr ' ' '\n' | sort -n)" = \
	  "$(echo $want | tr ' ' '\n' | sort -n)" ]
}

@test "register: COMMAND under pressure in its cgroup gets a request (--join)" {
	requires root memcg
	shrinker_cg reg-join 64M
	mpctl register --chunk 1M --cgroup "$SCG" --join -v -- sh -c "
		grep -q '$MP_RUN_ID-reg-join' /proc/self/cgroup || exit 9
		\$MPCTL add 100 || exit 8
		$(fill_cmd) &
		n=\$(\$MPCTL add --wait --timeout 20s) || exit 7
		echo request \$n
		wait"
	assert_success
	assert_output --regexp 'registered: mode=(emulated|kernel-v1|kernel-v2) backend=(memcg|psi|mempressure)'
	assert_line --regexp '^request [1-9][0-9]*$'
	# requests never exceed the accounted chunks
	n=$(echo "$output" | awk '/^request/ { print $2 }')
	[ "$n" -le 100 ]
}

@test "register: monitor prints one JSON line per request" {
	requires root memcg jq
	shrinker_cg reg-mon 64M
	monitor_bg register --chunk 1M --cgroup "$SCG" --chunks 200 --keep \
		--count 2 --timeout 25s --json -v
	spawn_in "${SCG_DIRS[@]}" -- sh -c "$(fill_cmd 300)"
	wait_exit "$MP_BG_PID" 30
	[ "$(wc -l < "$MP_BG_OUT")" -eq 2 ]
	jq -e --arg cg "/$MP_RUN_ID-reg-mon" '
		.schema.name == "mpctl-register" and .schema.version == 1 and
		.request.cgroup == $cg and .request.chunk_size_bytes == 1048576 and
		(.request.chunks | type == "number" and . >= 1) and
		.request.bytes == .request.chunks * 1048576 and
		(.request.mode | IN("emulated", "kernel-v1", "kernel-v2"))' "$MP_BG_OUT"
	run jq -s -c 'map(.request.seq)' "$MP_BG_OUT"
	assert_output '[1,2]'
}

@test "register: monitor text lines, and no request without chunks" {
	requires root memcg
	shrinker_cg reg-text 64M
	# no chunks accounted: the shrinker has nothing to ask for
	monitor_bg register --chunk 1M --cgroup "$SCG" --timeout 2s -v
	spawn_in "${SCG_DIRS[@]}" -- sh -c "$(fill_cmd)"
	wait_exit "$MP_BG_PID" 10
	[ ! -s "$MP_BG_OUT" ]
	shrinker_cg reg-text2 64M
	monitor_bg register --chunk 1M --cgroup "$SCG" --chunks 50 --count 1 --timeout 20s -v
	spawn_in "${SCG_DIRS[@]}" -- sh -c "$(fill_cmd)"
	wait_exit "$MP_BG_PID" 25
	run cat "$MP_BG_OUT"
	assert_line --regexp "^20[0-9-]+T[0-9:.]+Z mode=[a-z0-9-]+ backend=[a-z]+ cgroup=/$MP_RUN_ID-reg-text2 chunks=[1-9][0-9]* bytes=[0-9]+$"
}

@test "register: -q silences -v's registered line, not the command" {
	requires root
	run --separate-stderr "$MPCTL_BIN" register --chunk 1M -v -q -- sh -c 'echo ran'
	[ "$status" -ne 69 ] || skip "no shrinker interface"
	mp_trace "mpctl register -v -q"
	assert_success
	assert_output ran
	[ -z "$stderr" ]
}

@test "register: monitor exits 0 on SIGTERM" {
	requires root
	mpctl_bg register --chunk 1M -v
	kill -TERM "$MP_BG_PID"
	wait_exit "$MP_BG_PID" 5
}

@test "register: the monitor says so and exits 1 when its cgroup is removed" {
	requires root memcg
	local cg st
	cg=$(make_memcg reggone 64M)
	"$MPCTL_BIN" register --chunk 1M -b memcg -c "$cg" \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
	MP_BG_PID=$!
	MP_PIDS+=("$MP_BG_PID")
	sleep 0.5
	rmdir "$cg"
	st=0
	wait_exit "$MP_BG_PID" 5 || st=$?
	cat "$BATS_TEST_TMPDIR/err" >&2
	[ "$st" -eq 1 ]
	grep -q "mpctl register: cgroup removed '/$MP_RUN_ID-reggone'" "$BATS_TEST_TMPDIR/err"
}

@test "register: COMMAND's status with stdout closed and nothing written" {
	run bash -c "'$MPCTL_BIN' register --chunk 1M -- sh -c 'exit 3' >&-"
	[ "$status" -eq 3 ]
	[ -z "$output" ]
}

@test "register: a missing COMMAND found through PATH gives 127, also at 5 KB and 70 KB" {
	requires root
	local name
	run -127 "$MPCTL_BIN" register --chunk 1M -- mpctl-no-such-program
	assert_output --partial "mpctl register: cannot run 'mpctl-no-such-program': No such file or directory"
	# longer than the child's old message buffer (4 KB) and than a
	# pipe (64 KB): no overflow, no SIGPIPE (141), the same 127
	for n in 5000 70000; do
		name=$(head -c "$n" /dev/zero | tr '\0' x)
		run -127 "$MPCTL_BIN" register --chunk 1M -- "$name" arg
		assert_output --partial "mpctl register: cannot run 'xxxx"
		assert_output --partial "No such file or directory"
		[ "${#lines[@]}" -eq 1 ]
	done
}

@test "register: a 70 KB argument reaches COMMAND whole" {
	requires root
	local arg
	arg=$(head -c 70000 /dev/zero | tr '\0' y)
	mpctl register --chunk 1M -- sh -c 'echo ${#1}' sh "$arg"
	[ "$status" -ne 69 ] || skip "no shrinker interface"
	assert_success
	assert_output 70000
}

@test "register --join: a cgroup that cannot be joined gives 126, the step and the errno" {
	requires root
	local cg
	[ -n "$(v2_root)" ] || skip "no cgroup2 hierarchy"
	cg=$(make_v2cg join)
	mkdir "$cg/threaded" "$cg/invalid"
	MP_CGROUPS+=("$cg/threaded" "$cg/invalid")
	# a domain sibling of a threaded cgroup is "domain invalid": the
	# kernel refuses to move a process into it (EOPNOTSUPP)
	echo threaded > "$cg/threaded/cgroup.type" 2>/dev/null ||
		skip "cannot make a threaded cgroup here"
	[ "$(cat "$cg/invalid/cgroup.type")" = "domain invalid" ] ||
		skip "no domain invalid cgroup"
	mpctl register --chunk 1M --backend psi --join --cgroup "$cg/invalid" -- \
		touch "$BATS_TEST_TMPDIR/ran"
	[ "$status" -ne 69 ] || skip "no psi shrinker here"
	[ "$status" -eq 126 ]
	assert_output --partial "mpctl register: cannot run 'touch': cannot join cgroup '$cg/invalid': Operation not supported"
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "register --metrics: the monitor's requests and chunks, for promtool and OpenMetrics" {
	requires root memcg jq
	local m=$BATS_TEST_TMPDIR/reg.prom o=$BATS_TEST_TMPDIR/reg.om
	shrinker_cg reg-metrics 64M
	monitor_bg register --chunk 1M --cgroup "$SCG" --chunks 200 --keep \
		--count 2 --timeout 25s --json -v --metrics "$m"
	spawn_in "${SCG_DIRS[@]}" -- sh -c "$(fill_cmd 300)"
	wait_exit "$MP_BG_PID" 30
	check_metrics "$m"
	# the file counts what the JSON lines say
	grep -qx "mpctl_register_requests_total{backend=\"[a-z]*\",mode=\"[a-z0-9-]*\",cgroup=\"/$MP_RUN_ID-reg-metrics\"} 2" "$m"
	want=$(jq -s 'map(.request.chunks) | add' "$MP_BG_OUT")
	grep -q "^mpctl_register_chunks_requested_total{.*} $want$" "$m"
	# --keep re-adds every chunk: none freed
	grep -q '^mpctl_register_chunks_freed_total{.*} 0$' "$m"
	grep -q '^mpctl_memory_events_total{.*event="oom_kill"} [0-9]*$' "$m"
	# --metrics - at the end, in OpenMetrics
	run --separate-stderr "$MPCTL_BIN" register --chunk 1M --cgroup "$SCG" \
		--timeout 300ms --metrics - --metrics-format openmetrics
	assert_success
	printf '%s\n' "$output" >"$o"
	check_metrics "$o" openmetrics
	grep -q '^mpctl_register_requests_total{.*} 0$' "$o"
}
