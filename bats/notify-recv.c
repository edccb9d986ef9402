// SPDX-License-Identifier: GPL-2.0
/*
 * Test helper: the service manager's end of sd_notify(3). Binds an AF_UNIX
 * datagram socket at PATH (or '@name', abstract), prints every datagram it
 * receives on its own line and exits after COUNT of them, or with status 1
 * after TIMEOUT seconds without one. Usage: notify-recv PATH COUNT TIMEOUT
 */
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd p = { .events = POLLIN };
	char buf[4096];
	int n, count, timeout_ms, ret = 1;
	size_t len;
	socklen_t salen;

	if (argc != 4 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr,
			"usage: notify-recv PATH|@NAME COUNT TIMEOUT_S\n");
		return 64;
	}
	count = atoi(argv[2]);
	timeout_ms = atoi(argv[3]) * 1000;
	len = strlen(argv[1]);
	memcpy(sa.sun_path, argv[1], len);
	if (argv[1][0] == '@')
		sa.sun_path[0] = '\0';
	else
		len++;
	salen = offsetof(struct sockaddr_un, sun_path) + len;
	p.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p.fd < 0 || bind(p.fd, (struct sockaddr *)&sa, salen)) {
		perror("notify-recv: bind");
		return 1;
	}
	/* ready: the caller waits for this line before starting the sender */
	fprintf(stderr, "bound\n");
	while (count > 0) {
		if (poll(&p, 1, timeout_ms) != 1) {
			fprintf(stderr, "notify-recv: timeout\n");
			goto out;
		}
		n = recv(p.fd, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			goto out;
		buf[n] = '\0';
		printf("%s\n", buf);
		fflush(stdout);
		count--;
	}
	ret = 0;
out:
	close(p.fd);
	if (argv[1][0] != '@')
		unlink(argv[1]);
	return ret;
}
