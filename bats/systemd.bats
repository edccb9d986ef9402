#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
# The service manager's protocols without a service manager: sd_notify(3)
# readiness through $NOTIFY_SOCKET (bats/notify-recv.c plays systemd), and
# systemd.exec(5)'s $MEMORY_PRESSURE_WATCH / $MEMORY_PRESSURE_WRITE.

load helpers

NOTIFY_RECV=$ROOT/build/notify-recv

# notify_recv SOCKET COUNT: start the receiver, wait until it is bound;
# its datagrams go to $NR_OUT, its pid is $NR_PID
notify_recv() {
	[ -x "$NOTIFY_RECV" ] || skip "no $NOTIFY_RECV (make)"
	NR_OUT=$BATS_TEST_TMPDIR/notify.out
	"$NOTIFY_RECV" "$1" "$2" 10 >"$NR_OUT" 2>"$BATS_TEST_TMPDIR/notify.err" &
	NR_PID=$!
	MP_PIDS+=("$NR_PID")
	local i
	for i in $(seq 100); do
		grep -q bound "$BATS_TEST_TMPDIR/notify.err" && return 0
		sleep 0.05
	done
	fail "notify-recv did not bind: $(cat "$BATS_TEST_TMPDIR/notify.err")"
}

@test "systemd: listen sends READY=1 once listening, STOPPING=1 at exit, each with its STATUS=" {
	requires root memcg
	cg=$(make_memcg notify)
	notify_recv "$BATS_TEST_TMPDIR/notify.sock" 2
	NOTIFY_SOCKET=$BATS_TEST_TMPDIR/notify.sock \
		run "$MPCTL_BIN" listen -b memcg -c "$cg" -t 300ms
	mp_trace "mpctl listen (NOTIFY_SOCKET)"
	assert_success
	wait "$NR_PID"
	# one datagram each, of two lines
	run cat "$NR_OUT"
	assert_output "$(printf '%s\n' READY=1 \
		'STATUS=watching 1 cgroup, backend memcg, 0 events' \
		STOPPING=1 \
		'STATUS=stopped: watched 1 cgroup, backend memcg, 0 events')"
}

@test "systemd: listen's STATUS= counts the events, at most once a second" {
	requires root memcg stress-ng
	local cg t0 t1 n ev
	cg=$(make_memcg notify-status 64M)
	# more datagrams than can come: the receiver is stopped at the end
	notify_recv "$BATS_TEST_TMPDIR/notify.sock" 100000
	t0=$(date +%s%N)
	NOTIFY_SOCKET=$BATS_TEST_TMPDIR/notify.sock \
		mpctl_bg listen -b memcg -c "$cg" -n 200 -t 3s -v
	spawn_in "$cg" -- stress-ng --vm 2 --vm-bytes 96M --timeout 20s -q
	wait_exit "$MP_BG_PID" 30
	t1=$(date +%s%N)
	for ((i = 0; i < 100; i++)); do
		grep -q '^STOPPING=1$' "$NR_OUT" && break
		sleep 0.1
	done
	kill "$NR_PID"
	n=$(wc -l <"$MP_BG_OUT")
	[ "$n" -gt 0 ] || skip "no event in 3 s"
	run cat "$NR_OUT"
	assert_line --index 0 READY=1
	assert_line --index 1 'STATUS=watching 1 cgroup, backend memcg, 0 events'
	# the last: the events printed
	ev=events
	[ "$n" != 1 ] || ev=event
	assert_line --index $((${#lines[@]} - 1)) \
		"STATUS=stopped: watched 1 cgroup, backend memcg, $n $ev"
	# between them, the running count, not more than once a second
	run grep -c '^STATUS=watching 1 cgroup, backend memcg, [1-9][0-9]* events$' "$NR_OUT"
	[ "$output" -le $(((t1 - t0) / 1000000000 + 1)) ]
}

@test "systemd: register notifies an abstract socket ('@name') once registered" {
	requires root
	notify_recv "@mpctl-test-$MP_RUN_ID" 1
	NOTIFY_SOCKET=@mpctl-test-$MP_RUN_ID \
		run "$MPCTL_BIN" register --chunk 1M -- sh -c 'echo ran'
	[ "$status" -ne 69 ] || skip "no shrinker interface"
	mp_trace "mpctl register (NOTIFY_SOCKET)"
	assert_success
	wait "$NR_PID"
	run cat "$NR_OUT"
	assert_line --index 0 READY=1
}

@test "systemd: a NOTIFY_SOCKET that is no AF_UNIX address is one line, status 64" {
	requires root memcg
	cg=$(make_memcg notify-bad)
	NOTIFY_SOCKET=vsock:2:1234 run "$MPCTL_BIN" listen -b memcg -c "$cg" -t 300ms
	mp_trace "mpctl listen (NOTIFY_SOCKET=vsock)"
	[ "$status" -eq 64 ]
	assert_output "mpctl listen: unsupported NOTIFY_SOCKET 'vsock:2:1234': expected an absolute path or '@name'"
}

@test "systemd: a NOTIFY_SOCKET nobody listens on is one warning, not a failure" {
	requires root memcg
	local cg
	cg=$(make_memcg notify-gone)
	NOTIFY_SOCKET=$BATS_TEST_TMPDIR/nobody.sock \
		run "$MPCTL_BIN" listen -b memcg -c "$cg" -t 300ms
	mp_trace "listen, NOTIFY_SOCKET without a listener"
	assert_success
	assert_output "mpctl listen: warning: cannot notify '$BATS_TEST_TMPDIR/nobody.sock' of READY=1: No such file or directory"
	NOTIFY_SOCKET=@mpctl-nobody-$MP_RUN_ID \
		run "$MPCTL_BIN" register --emulate -c "$cg" --chunk 1M -- true
	mp_trace "register, NOTIFY_SOCKET without a listener"
	[ "$status" -ne 69 ] || skip "no shrinker interface"
	assert_success
	[ "$(grep -c 'warning: cannot notify' <<<"$output")" -eq 1 ]
}

# systemd's default trigger, base64 with its NUL as systemd encodes it
MP_WRITE=$(printf 'some 200000 2000000\0' | base64)

@test "systemd: listen without -c/-b watches \$MEMORY_PRESSURE_WATCH with its trigger" {
	requires root psi
	MEMORY_PRESSURE_WATCH=/proc/pressure/memory MEMORY_PRESSURE_WRITE=$MP_WRITE \
		run "$MPCTL_BIN" listen -v -t 300ms
	mp_trace "mpctl listen (MEMORY_PRESSURE_WATCH)"
	assert_success
	assert_line --partial "backend=psi"
	assert_line --partial "file=/proc/pressure/memory"
	assert_line --partial "with trigger 'some 200000 2000000'"
}

@test "systemd: -b memcg and -c ignore \$MEMORY_PRESSURE_WATCH" {
	requires root memcg
	cg=$(make_memcg watch-c)
	MEMORY_PRESSURE_WATCH=/dev/null run "$MPCTL_BIN" listen -b memcg -t 300ms
	assert_success
	MEMORY_PRESSURE_WATCH=/dev/null run "$MPCTL_BIN" listen -c "$cg" -t 300ms
	assert_success
}

@test "systemd: MEMORY_PRESSURE_WATCH=/dev/null is off: one line, status 69" {
	requires root
	MEMORY_PRESSURE_WATCH=/dev/null run "$MPCTL_BIN" listen -t 300ms
	[ "$status" -eq 69 ]
	assert_output "mpctl listen: memory pressure watching is off (MEMORY_PRESSURE_WATCH=/dev/null)"
}

@test "systemd: bad base64 or a bad trigger in MEMORY_PRESSURE_WRITE is a usage error (64)" {
	requires root psi
	for bad in 'c29tZS!!' 'c29tZQ=x' 'A' 'AAAA'; do
		MEMORY_PRESSURE_WATCH=/proc/pressure/memory MEMORY_PRESSURE_WRITE=$bad \
			run "$MPCTL_BIN" listen -t 300ms
		mp_trace "MEMORY_PRESSURE_WRITE=$bad"
		[ "$status" -eq 64 ]
		[ "${#lines[@]}" -eq 1 ]
		assert_output --regexp "^mpctl listen: invalid MEMORY_PRESSURE_WRITE '.*': (not base64|not a trigger string)$"
	done
	MEMORY_PRESSURE_WATCH=/proc/pressure/memory MEMORY_PRESSURE_WRITE=$(printf bogus | base64) \
		run "$MPCTL_BIN" listen -t 300ms
	[ "$status" -eq 64 ]
	assert_output --partial "cannot register trigger 'bogus' on '/proc/pressure/memory'"
	MEMORY_PRESSURE_WATCH=relative run "$MPCTL_BIN" listen -t 300ms
	[ "$status" -eq 64 ]
}

@test "systemd: a MEMORY_PRESSURE_WATCH that is not a pressure file is refused and left alone" {
	requires root psi
	local f=$BATS_TEST_TMPDIR/precious
	printf 'keep these bytes\n' >"$f"
	MEMORY_PRESSURE_WATCH=$f MEMORY_PRESSURE_WRITE=$MP_WRITE \
		run "$MPCTL_BIN" listen -t 300ms
	mp_trace "listen, MEMORY_PRESSURE_WATCH=$f"
	[ "$status" -eq 64 ]
	assert_output "mpctl listen: invalid MEMORY_PRESSURE_WATCH '$f': not a pressure file (a PSI file or a cgroup's memory.pressure)"
	MEMORY_PRESSURE_WATCH=$f run "$MPCTL_BIN" register --emulate --chunk 1M -- true
	mp_trace "register, MEMORY_PRESSURE_WATCH=$f"
	[ "$status" -eq 64 ]
	[ "$(cat "$f")" = "keep these bytes" ]
	# a pressure file, but no memory one: refused too
	MEMORY_PRESSURE_WATCH=/proc/pressure/cpu run "$MPCTL_BIN" listen -t 300ms
	[ "$status" -eq 64 ]
}

@test "systemd: events of another cgroup's memory.pressure are labelled with that cgroup" {
	requires root psi v2
	local cg
	cg=$(make_v2cg watch-other)
	[ -e "$cg/memory.pressure" ] || skip "no memory.pressure in cgroup2"
	MEMORY_PRESSURE_WATCH=$cg/memory.pressure run "$MPCTL_BIN" listen -v -t 300ms
	mp_trace "listen, MEMORY_PRESSURE_WATCH=$cg/memory.pressure"
	assert_success
	assert_line --partial "cgroup=/${cg##*/} "
}

@test "systemd: the emulated shrinker honours \$MEMORY_PRESSURE_WATCH too" {
	requires root psi
	MEMORY_PRESSURE_WATCH=/proc/pressure/memory MEMORY_PRESSURE_WRITE=$MP_WRITE \
		run "$MPCTL_BIN" register --emulate --chunk 1M -v -- true
	[ "$status" -ne 69 ] || skip "no shrinker interface"
	assert_success
	assert_line --partial "mode=emulated backend=psi cgroup=/ "
	MEMORY_PRESSURE_WATCH=/dev/null run "$MPCTL_BIN" register --emulate --chunk 1M -- true
	[ "$status" -eq 69 ]
	assert_output --partial "memory pressure watching is off"
}

@test "systemd: contrib/mpctl-listen.service.in passes systemd-analyze verify" {
	command -v systemd-analyze >/dev/null || skip "no systemd-analyze"
	sed "s|@BINDIR@/mpctl|$MPCTL_BIN|" "$ROOT/contrib/mpctl-listen.service.in" \
		>"$BATS_TEST_TMPDIR/mpctl-listen.service"
	run systemd-analyze verify --man=no "$BATS_TEST_TMPDIR/mpctl-listen.service"
	mp_trace "systemd-analyze verify"
	assert_success
	# systemd before 254 does not know the memory pressure keys: only that
	run grep -v "Unknown key 'MemoryPressure\(Watch\|ThresholdSec\)'" <<<"$output"
	assert_output ""
}

@test "systemd: make install generates mpctl-listen@.service, whose paths follow PREFIX" {
	local p=$BATS_TEST_TMPDIR/opt/mp u
	run make -s -C "$ROOT" install PREFIX="$p"
	assert_success
	u=$p/lib/systemd/system/mpctl-listen@.service
	[ -f "$u" ]
	grep -qx "ExecStart=$p/bin/mpctl listen --json -c %I" "$u"
	grep -q "^ExecStart=$p/bin/mpctl " "$p/share/doc/mpctl/examples/mpctl-listen.service"
	! grep -rq "/usr/local" "$u" "$p/share/doc/mpctl/examples/mpctl-listen.service"
	if command -v systemd-analyze >/dev/null; then
		cp "$u" "$BATS_TEST_TMPDIR/mpctl-listen@system.slice.service"
		run systemd-analyze verify --man=no \
			"$BATS_TEST_TMPDIR/mpctl-listen@system.slice.service"
		mp_trace "systemd-analyze verify (template)"
		assert_success
		run grep -v "Unknown key 'MemoryPressure\(Watch\|ThresholdSec\)'" <<<"$output"
		assert_output ""
	fi
	run make -s -C "$ROOT" uninstall PREFIX="$p"
	assert_success
	[ ! -e "$u" ]
}

@test "systemd: make install puts the example unit under the doc dir" {
	run make -s -C "$ROOT" install DESTDIR="$BATS_TEST_TMPDIR/dest" PREFIX=/usr
	assert_success
	[ -f "$BATS_TEST_TMPDIR/dest/usr/share/doc/mpctl/examples/mpctl-listen.service" ]
	run make -s -C "$ROOT" uninstall DESTDIR="$BATS_TEST_TMPDIR/dest" PREFIX=/usr
	assert_success
	[ ! -e "$BATS_TEST_TMPDIR/dest/usr/share/doc/mpctl" ]
}
