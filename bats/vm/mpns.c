// SPDX-License-Identifier: GPL-2.0
/*
 * mpns - run a command where a systemd service or a container would run it
 *
 * busybox's unshare has no cgroup namespace and no setpriv of ours drops to
 * a delegated user, so the pure cgroup2 suites place mpctl through this.
 *
 * usage: mpns [-g CGDIR] [-c] [-G SUB] [-E] [-r KEEP] [-u UID] -- CMD...
 *   -g CGDIR  move into the cgroup directory CGDIR first
 *   -c        a new cgroup namespace rooted there and a mount namespace
 *             with cgroup2 mounted afresh on /sys/fs/cgroup (what a
 *             container with its own cgroup namespace sees)
 *   -G SUB    then move into SUB, a path under the new /sys/fs/cgroup
 *   -E        then enable the memory controller for the children of the
 *             namespace's root (the runtime's part)
 *   -r KEEP   then make /sys/fs/cgroup read-only, except KEEP (a path
 *             under it, "" for none), bind-mounted read-write
 *   -u UID    drop to UID (and GID UID) before exec
 *
 * Every failure is one line "mpns: <what>: <error>" on stderr, status 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#define CG "/sys/fs/cgroup"

static void die(const char *what)
{
	fprintf(stderr, "mpns: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, s, strlen(s)) < 0)
		die(path);
	close(fd);
}

static void join(const char *dir)
{
	char path[4096], pid[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	write_file(path, pid);
}

int main(int argc, char **argv)
{
	const char *cg = NULL, *sub = NULL, *keep = NULL;
	char path[4096];
	int opt, ns = 0, enable = 0;
	long uid = -1;

	while ((opt = getopt(argc, argv, "+g:cG:Er:u:")) != -1) {
		switch (opt) {
		case 'g':
			cg = optarg;
			break;
		case 'c':
			ns = 1;
			break;
		case 'G':
			sub = optarg;
			break;
		case 'E':
			enable = 1;
			break;
		case 'r':
			keep = optarg;
			break;
		case 'u':
			uid = strtol(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr,
				"usage: mpns [-g CGDIR] [-c] [-G SUB] [-E] [-r KEEP] [-u UID] -- CMD...\n");
			return 2;
		}
	}
	if (optind >= argc || ((sub || enable || keep) && !ns)) {
		fprintf(stderr,
			"mpns: a command is needed; -G, -E and -r need -c\n");
		return 2;
	}
	if (cg)
		join(cg);
	if (ns) {
		if (unshare(CLONE_NEWCGROUP | CLONE_NEWNS))
			die("unshare");
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
			die("mount --make-rprivate /");
		if (umount2(CG, MNT_DETACH) && errno != EINVAL)
			die("umount " CG);
		if (mount("none", CG, "cgroup2", 0, NULL))
			die("mount cgroup2");
	}
	if (sub) {
		snprintf(path, sizeof(path), CG "/%s", sub);
		join(path);
	}
	if (enable)
		write_file(CG "/cgroup.subtree_control", "+memory");
	if (keep) {
		if (*keep) {
			snprintf(path, sizeof(path), CG "/%s", keep);
			if (mount(path, path, NULL, MS_BIND, NULL))
				die("bind mount");
		}
		if (mount(NULL, CG, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY,
			  NULL))
			die("remount read-only");
	}
	if (uid >= 0 &&
	    (setgroups(0, NULL) || setgid((gid_t)uid) || setuid((uid_t)uid)))
		die("setuid");
	execvp(argv[optind], argv + optind);
	die(argv[optind]);
	return 2;
}
