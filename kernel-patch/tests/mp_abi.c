// SPDX-License-Identifier: GPL-2.0
/*
 * mp_abi - check the mempressure cgroup ABI, cgroup v1 or v2
 *
 * usage: mp_abi v1 DIR	DIR: a cgroup v1 mount of mempressure (alone)
 *        mp_abi v2 DIR	DIR: a cgroup2 mount, or a cgroup below it
 *
 * Creates DIR/mp_abi.<pid>, checks the registration errors, the chunk
 * accounting, that closing the eventfd (v1) or the file (v2) removes the
 * registration and that the cgroup can be removed with live registrations,
 * then removes it. Prints TAP; exits 0 when every check passed, 1 when one
 * failed and 4 (KSFT_SKIP) when the interface is absent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define KSFT_SKIP 4

static int nr_tests;
static int nr_failed;
static char last_read[256];
static int last_errno;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("%sok %d - ", ok ? "" : "not ", ++nr_tests);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	if (!ok) {
		printf("# last read '%s', last errno %s\n", last_read,
		       strerror(last_errno));
		nr_failed++;
	}
	fflush(stdout);
}

/* Write @str to @fd; returns 0 or the errno of the failed write. */
static int wr(int fd, const char *str)
{
	last_errno = 0;
	if (write(fd, str, strlen(str)) < 0) {
		last_errno = errno;
		return errno;
	}
	return 0;
}

static int wrf(int fd, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return wr(fd, buf);
}

/* Read from offset 0 of @fd into @buf; returns 0 or an errno. */
static int rd(int fd, char *buf, size_t size)
{
	ssize_t len = pread(fd, buf, size - 1, 0);

	if (len < 0) {
		buf[0] = '\0';
		last_errno = errno;
		return errno;
	}
	buf[len] = '\0';
	snprintf(last_read, sizeof(last_read), "%s", buf);
	return 0;
}

static int rd_path(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	int ret;

	if (fd < 0)
		return errno;
	ret = rd(fd, buf, size);
	close(fd);
	return ret;
}

/* Wait up to a second for the file at @path to read @want. */
static int wait_content(const char *path, const char *want)
{
	char buf[256];
	int i;

	for (i = 0; i < 100; i++) {
		if (!rd_path(path, buf, sizeof(buf)) && !strcmp(buf, want))
			return 1;
		usleep(10000);
	}
	return 0;
}

static int is_level(const char *buf)
{
	return !strcmp(buf, "low\n") || !strcmp(buf, "medium\n") ||
	       !strcmp(buf, "oom\n");
}

static int test_v1(const char *cg, const char *ctl_path)
{
	char path[512], buf[256];
	int ctl, lvl, shr, efd, efd2, efd3, pfd[2];
	uint64_t cnt;

	snprintf(path, sizeof(path), "%s/mempressure.level", cg);
	lvl = open(path, O_RDONLY);
	snprintf(path, sizeof(path), "%s/mempressure.shrinker", cg);
	shr = open(path, O_RDWR);
	ctl = open(ctl_path, O_WRONLY);
	efd = eventfd(0, EFD_NONBLOCK);
	efd2 = eventfd(0, EFD_NONBLOCK);
	efd3 = eventfd(0, EFD_NONBLOCK);
	if (lvl < 0 || shr < 0 || ctl < 0 || efd < 0 || efd2 < 0 || efd3 < 0 ||
	    pipe(pfd)) {
		check(0, "open the v1 files: %s", strerror(errno));
		return 1;
	}

	check(!rd(lvl, buf, sizeof(buf)) && is_level(buf),
	      "level reads a level");
	check(!wrf(ctl, "%d %d low", efd, lvl), "register level low");
	check(!wrf(ctl, "%d %d critical", efd2, lvl),
	      "register level critical (alias of oom)");
	check(wrf(ctl, "%d %d bogus", efd3, lvl) == EINVAL,
	      "unknown level: EINVAL");
	check(wrf(ctl, "%d %d low", pfd[0], lvl) == EINVAL,
	      "pipe as eventfd: EINVAL, no oops");
	check(wrf(ctl, "%d %d low", 999, lvl) == EBADF,
	      "closed fd as eventfd: EBADF");
	check(wrf(ctl, "%d %d 0", efd3, shr) == EINVAL, "chunk size 0: EINVAL");
	check(wrf(ctl, "%d %d x", efd3, shr) == EINVAL,
	      "chunk size not a number: EINVAL");
	check(wrf(ctl, "%d %d 4096", efd3, ctl) == EINVAL,
	      "event_control as control file: EINVAL");
	check(!wrf(ctl, "%d %d 4096", efd3, shr), "register shrinker 4096");
	check(wrf(ctl, "%d %d 8192", efd3, shr) == EBUSY,
	      "same eventfd twice on the shrinker: EBUSY");

	check(!wrf(shr, "%d +5", efd3) && !rd(shr, buf, sizeof(buf)) &&
		      !strcmp(buf, "4096 5\n"),
	      "+5 chunks");
	check(!wrf(shr, "%d 2", efd3) && !rd(shr, buf, sizeof(buf)) &&
		      !strcmp(buf, "4096 7\n"),
	      "2 chunks");
	check(!wrf(shr, "%d -10", efd3) && !rd(shr, buf, sizeof(buf)) &&
		      !strcmp(buf, "4096 0\n"),
	      "-10 chunks clamps at 0");
	check(wrf(shr, "%d +18446744073709551615", efd3) == EOVERFLOW,
	      "chunk count overflow: EOVERFLOW");
	check(wrf(shr, "%d +2251799813685248", efd3) == EOVERFLOW,
	      "chunk bytes above S64_MAX: EOVERFLOW");
	check(wrf(shr, "%d -9223372036854775808", efd3) == 0,
	      "most negative count clamps (the RFC used abs())");
	check(wrf(shr, "%d +1", efd) == ENOENT,
	      "level eventfd on the shrinker: ENOENT");
	check(wrf(shr, "%d +1", pfd[0]) == EINVAL,
	      "pipe on the shrinker: EINVAL");
	check(wrf(shr, "%d +1", 999) == EBADF,
	      "closed fd on the shrinker: EBADF");
	check(wr(shr, "+1") == EINVAL, "missing eventfd: EINVAL");

	/* Closing the eventfd removes the registration. */
	close(efd3);
	snprintf(path, sizeof(path), "%s/mempressure.shrinker", cg);
	check(wait_content(path, ""), "closing the eventfd unregisters");

	efd3 = eventfd(0, EFD_NONBLOCK);
	check(!wrf(ctl, "%d %d 1048576", efd3, shr) && !wrf(shr, "%d +3", efd3),
	      "register a shrinker to leave behind");

	close(lvl);
	close(shr);
	close(ctl);
	check(!rmdir(cg), "rmdir with live registrations");
	/* A level listener gets one last event when it goes away. */
	usleep(200000);
	check(read(efd, &cnt, sizeof(cnt)) == sizeof(cnt) && cnt >= 1,
	      "level eventfd signalled at removal");
	close(efd);
	close(efd2);
	close(efd3);
	close(pfd[0]);
	close(pfd[1]);
	return 0;
}

static int test_v2(const char *cg)
{
	char lpath[512], spath[512], buf[256];
	int lvl, lvl2, shr, shr2;
	struct pollfd pfd;
	pid_t poller;
	int status;

	snprintf(lpath, sizeof(lpath), "%s/mempressure.level", cg);
	snprintf(spath, sizeof(spath), "%s/mempressure.shrinker", cg);
	lvl = open(lpath, O_RDWR);
	lvl2 = open(lpath, O_RDWR);
	shr = open(spath, O_RDWR);
	shr2 = open(spath, O_RDWR);
	if (lvl < 0 || lvl2 < 0 || shr < 0 || shr2 < 0) {
		check(0, "open the v2 files: %s", strerror(errno));
		return 1;
	}

	check(!rd(lvl, buf, sizeof(buf)) && is_level(buf),
	      "level reads a level");
	check(wr(lvl, "bogus") == EINVAL, "unknown level: EINVAL");
	check(!wr(lvl, "medium"), "register level medium");
	check(wr(lvl, "low") == EBUSY, "second registration: EBUSY");
	check(!wr(lvl2, "critical"), "register level critical");
	check(!rd(lvl, buf, sizeof(buf)) && !strcmp(buf, "low 0\n"),
	      "registered level reads \"low 0\"");
	pfd.fd = lvl;
	pfd.events = POLLPRI;
	check(poll(&pfd, 1, 0) == 0, "no POLLPRI without events");

	check(wr(shr, "0") == EINVAL, "chunk size 0: EINVAL");
	check(wr(shr, "-4096") == EINVAL, "negative chunk size: EINVAL");
	check(!wr(shr, "4096"), "register shrinker 4096");
	check(!wr(shr, "+5") && !wr(shr, "2"), "+5 and 2 chunks");
	check(!rd(shr2, buf, sizeof(buf)) && !strcmp(buf, "4096 7\n"),
	      "unregistered fd lists the shrinkers");
	check(!wr(shr, "-10") && !rd(shr2, buf, sizeof(buf)) &&
		      !strcmp(buf, "4096 0\n"),
	      "-10 clamps at 0");
	check(wr(shr, "+18446744073709551615") == EOVERFLOW,
	      "chunk count overflow: EOVERFLOW");
	check(wr(shr, "+x") == EINVAL, "garbage count: EINVAL");
	check(!rd(shr, buf, sizeof(buf)) && !strcmp(buf, "0\n"),
	      "registered shrinker reads \"0\"");
	pfd.fd = shr;
	check(poll(&pfd, 1, 0) == 0, "no POLLPRI without a request");

	close(shr);
	check(wait_content(spath, ""), "closing the file unregisters");

	shr = open(spath, O_RDWR);
	check(shr >= 0 && !wr(shr, "1048576") && !wr(shr, "+3"),
	      "register a shrinker to leave behind");

	/* a process blocked in poll() is woken by the removal */
	poller = fork();
	if (!poller) {
		pfd.fd = lvl;
		pfd.events = POLLPRI;
		_exit(poll(&pfd, 1, 5000) == 1 && (pfd.revents & POLLERR) ? 0 :
									    1);
	}
	usleep(200000);
	check(!rmdir(cg), "rmdir with live registrations");
	check(rd(lvl, buf, sizeof(buf)) == ENODEV, "read after rmdir: ENODEV");
	pfd.fd = shr;
	check(poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR),
	      "poll after rmdir: POLLERR");
	check(poller > 0 && waitpid(poller, &status, 0) == poller &&
		      WIFEXITED(status) && !WEXITSTATUS(status),
	      "poll() blocked during rmdir wakes with POLLERR");
	close(lvl);
	close(lvl2);
	close(shr);
	close(shr2);
	return 0;
}

int main(int argc, char **argv)
{
	char cg[256], path[512];
	int v2, ret;

	if (argc != 3 || (strcmp(argv[1], "v1") && strcmp(argv[1], "v2"))) {
		fprintf(stderr, "usage: mp_abi v1|v2 DIR\n");
		return 64;
	}
	v2 = !strcmp(argv[1], "v2");

	snprintf(cg, sizeof(cg), "%s/mp_abi.%d", argv[2], getpid());
	if (mkdir(cg, 0755)) {
		printf("1..0 # SKIP mkdir '%s': %s\n", cg, strerror(errno));
		return KSFT_SKIP;
	}
	snprintf(path, sizeof(path), "%s/mempressure.level", cg);
	if (access(path, F_OK)) {
		rmdir(cg);
		printf("1..0 # SKIP no '%s'\n", path);
		return KSFT_SKIP;
	}

	if (v2) {
		ret = test_v2(cg);
	} else {
		snprintf(path, sizeof(path), "%s/cgroup.event_control", cg);
		ret = test_v1(cg, path);

		/* memory and mempressure both bring cgroup.event_control */
		snprintf(path, sizeof(path), "/tmp/mp_abi.%d", getpid());
		mkdir(path, 0755);
		errno = 0;
		check(mount("none", path, "cgroup", 0, "memory,mempressure") &&
			      errno == EINVAL,
		      "co-mount with memory: EINVAL");
		umount(path);

		/* mounting all controllers leaves mempressure out */
		if (mount("none", path, "cgroup", 0, NULL)) {
			printf("ok %d - # SKIP all-controllers mount: %s\n",
			       ++nr_tests, strerror(errno));
		} else {
			strcat(path, "/mempressure.level");
			check(access(path, F_OK),
			      "all-controllers mount leaves mempressure out");
			*strrchr(path, '/') = '\0';
			umount(path);
		}
		rmdir(path);
	}
	rmdir(cg);

	printf("1..%d\n", nr_tests);
	return ret || nr_failed ? 1 : 0;
}
