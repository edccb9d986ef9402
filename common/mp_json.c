// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>

#include "mp_json.h"

json_t *mp_json_doc(const char *schema, int version)
{
	json_t *doc = json_object();

	if (!doc)
		return NULL;
	json_object_set_new(doc, "schema",
			    json_pack("{s:s, s:i}", "name", schema,
				      "version", version));
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
