// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mp_json.h"

json_t *mp_json_doc(const char *schema, int version)
{
	json_t *doc = json_object();

	if (!doc)
		return NULL;
	json_object_set_new(doc, "schema",
			    json_pack("{s:s, s:i}", "name", schema, "version",
				      version));
	return doc;
}

int mp_json_emit(FILE *f, const json_t *doc, bool pretty)
{
	size_t flags = JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9) |
		       (pretty ? JSON_INDENT(2) : JSON_COMPACT);

	if (json_dumpf(doc, f, flags) || fputc('\n', f) == EOF ||
	    fflush(f) == EOF)
		return -1;
	return 0;
}

void mp_json_set(json_t *obj, const char *key, json_t *val)
{
	json_object_set_new(obj, key, val ? val : json_null());
}

int mp_json_check_schema(const json_t *doc, const char *schema, int version)
{
	json_t *s = json_object_get(doc, "schema");
	const char *name = json_string_value(json_object_get(s, "name"));
	json_t *v = json_object_get(s, "version");

	if (!name || strcmp(name, schema) || !json_is_integer(v) ||
	    json_integer_value(v) != version) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

/* Length of the valid UTF-8 sequence at p (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	/* no overlong forms, surrogates or code points above U+10FFFF */
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

json_t *mp_json_str(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i, k, len;
	json_t *j;
	char *buf;

	j = json_string(s);
	if (j)
		return j;
	/* not UTF-8: each invalid byte as \xNN, a backslash doubled */
	buf = malloc(n * 4 + 1);
	if (!buf)
		return NULL;
	for (i = k = 0; i < n;) {
		len = utf8_len(p + i, n - i);
		if (!len) {
			k += sprintf(buf + k, "\\x%02x", p[i++]);
		} else if (p[i] == '\\') {
			buf[k++] = '\\';
			buf[k++] = p[i++];
		} else {
			memcpy(buf + k, p + i, len);
			k += len;
			i += len;
		}
	}
	buf[k] = '\0';
	j = json_string(buf);
	free(buf);
	return j;
}
