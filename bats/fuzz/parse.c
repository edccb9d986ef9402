// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-parse: every value parser of mpctl on every line of standard input,
 * in one process, for bats/sanitize.bats under ASan and UBSan (built by
 * "make asan" as build/asan/fuzz-parse). Prints one line per input line:
 * the results, so that a test can also check a few known answers.
 *
 * A line "<empty>" is the empty string; "\t" is a tab; "#" starts a
 * comment line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_err.h"
#include "mp_json.h"
#include "mp_parse.h"
#include "mp_backend.h"
#include "mp_pressure.h"

static void unescape(char *s)
{
	char *r = s, *w = s;

	while (*r) {
		if (r[0] == '\\' && r[1] == 't') {
			*w++ = '\t';
			r += 2;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

int main(void)
{
	char line[4096];

	while (fgets(line, sizeof(line), stdin)) {
		struct mp_psi_trigger t;
		enum mp_backend b;
		enum mp_level l;
		enum mp_mode m;
		struct mp_err err;
		char b64[32];
		size_t len;
		uint64_t v;
		long long n;
		json_t *j;
		char *s;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#')
			continue;
		if (!strcmp(line, "<empty>"))
			line[0] = '\0';
		unescape(line);
		printf("[%s]", line);
		printf(" size=%s", mp_parse_size(line, &v) ? "-" : "ok");
		printf(" chunk=%s", mp_parse_chunk(line, &v) ? "-" : "ok");
		printf(" duration=%s",
		       mp_parse_duration(line, &v) ? "-" : "ok");
		printf(" long=%s",
		       mp_parse_long(line, -1000, 1000, &n) ? "-" : "ok");
		printf(" psi=%s", mp_psi_parse(line, &t, &err) ? "-" : "ok");
		printf(" backend=%s", mp_backend_parse(line, &b) ? "-" : "ok");
		printf(" level=%s", mp_level_parse(line, &l) ? "-" : "ok");
		printf(" mode=%s", mp_mode_parse(line, &m) ? "-" : "ok");
		printf(" base64=%s",
		       mp_base64_decode(line, b64, sizeof(b64), &len) ? "-" :
									"ok");
		j = mp_json_str(line);
		s = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
		printf(" json=%s\n", s ? "ok" : "-");
		free(s);
		json_decref(j);
	}
	return ferror(stdout) ? 1 : 0;
}
