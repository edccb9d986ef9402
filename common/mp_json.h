/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JSON documents: always a jansson tree, dumped once with fixed flags.
 * Every document carries "schema": {"name": ..., "version": ...}.
 */
#ifndef MP_JSON_H
#define MP_JSON_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>

/* A new document object holding the schema field. */
json_t *mp_json_doc(const char *schema, int version);
/* One document: compact on one line, or indented with pretty. */
int mp_json_emit(FILE *f, const json_t *doc, bool pretty);
/* json_object_set_new that tolerates a NULL value (stores null). */
void mp_json_set(json_t *obj, const char *key, json_t *val);
/*
 * A string from the system (a cgroup path, an argument): as is when it is
 * UTF-8, else with each invalid byte as \xNN and each backslash doubled,
 * so that it is never lost (json_string() gives NULL for it). NULL only
 * when out of memory.
 */
json_t *mp_json_str(const char *s);
/* Check a loaded document's schema name and version. */
int mp_json_check_schema(const json_t *doc, const char *schema, int version);

#endif
