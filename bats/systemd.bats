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

@test "systemd: listen sends READY=1 once listening, STOPPING=1 at exit" {
	requires root memcg
	cg=$(make_memcg notify)
	notify_recv "$BATS_TEST_TMPDIR/notify.sock" 2
	NOTIFY_SOCKET=$BATS_TEST_TMPDIR/notify.sock \
		run "$MPCTL_BIN" listen -b memcg -c "$cg" -t 300ms
	mp_trace "mpctl listen (NOTIFY_SOCKET)"
	assert_success
	wait "$NR_PID"
	run cat "$NR_OUT"
	assert_line --index 0 READY=1
	assert_line --index 1 STOPPING=1
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
