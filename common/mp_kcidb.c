// SPDX-License-Identifier: GPL-2.0
/*
 * KCIDB documents from reports; see mp_kcidb.h. The field names and
 * patterns are those of schema/kcidb/schema-v5.3.json, which the tests
 * validate every document against (bats/kcidb.bats).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_json.h"
#include "mp_kcidb.h"
#include "mp_report.h"

/* ---- the fields a caller sets ------------------------------------------ */

enum kf_obj { KF_TOP, KF_CHECKOUT, KF_BUILD, KF_TEST };
/* what a value must look like: the schema's pattern for the field */
enum kf_form { KF_TEXT, KF_NAME, KF_ID, KF_HEX40, KF_HASH, KF_HTTPS, KF_URL };

static const char *const form_what[] = {
	[KF_TEXT] = "text",
	[KF_NAME] = "lowercase letters, digits and '_'",
	[KF_ID] = "ORIGIN:ID with an ORIGIN of lowercase letters, digits "
		  "and '_'",
	[KF_HEX40] = "40 lowercase hex digits",
	[KF_HASH] = "64 lowercase hex digits, or empty for no patches",
	[KF_HTTPS] = "an https:// URL",
	[KF_URL] = "a URL",
};

/* clang-format off */
static const struct kcidb_field {
	const char *key;
	enum kf_obj obj;
	enum kf_form form;
} kcidb_fields[] = {
	{ "origin",		   KF_TOP,	KF_NAME },
	{ "checkout_id",	   KF_TOP,	KF_ID },
	{ "build_id",		   KF_TOP,	KF_ID },
	{ "tree_name",		   KF_CHECKOUT, KF_TEXT },
	{ "git_repository_url",	   KF_CHECKOUT, KF_HTTPS },
	{ "git_repository_branch", KF_CHECKOUT, KF_TEXT },
	{ "git_commit_hash",	   KF_CHECKOUT, KF_HEX40 },
	{ "git_commit_name",	   KF_CHECKOUT, KF_TEXT },
	{ "patchset_hash",	   KF_CHECKOUT, KF_HASH },
	{ "config_name",	   KF_BUILD,	KF_TEXT },
	{ "config_url",		   KF_BUILD,	KF_URL },
	{ "compiler",		   KF_BUILD,	KF_TEXT },
	{ "log_url",		   KF_TEST,	KF_URL },
};
/* clang-format on */
#define NR_FIELDS (sizeof(kcidb_fields) / sizeof(kcidb_fields[0]))

/* an origin's characters, and a hex digest's */
#define NAME_CHARS "abcdefghijklmnopqrstuvwxyz0123456789_"
#define HEX_CHARS  "0123456789abcdef"

static bool all_of(const char *s, size_t n, const char *set)
{
	return strlen(s) == n && strspn(s, set) == n;
}

static bool form_ok(enum kf_form form, const char *v)
{
	const char *colon;
	json_t *j;
	bool ok;

	switch (form) {
	case KF_NAME:
		return *v && !v[strspn(v, NAME_CHARS)];
	case KF_ID:
		colon = strchr(v, ':');
		return colon && colon > v &&
		       strspn(v, NAME_CHARS) == (size_t)(colon - v);
	case KF_HEX40:
		return all_of(v, 40, HEX_CHARS);
	case KF_HASH:
		return !*v || all_of(v, 64, HEX_CHARS);
	case KF_HTTPS:
		return !strncmp(v, "https://", 8) && v[8];
	case KF_URL:
		colon = strstr(v, "://");
		return colon && colon > v && colon[3] &&
		       strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789+.-") ==
			       (size_t)(colon - v);
	case KF_TEXT:
		break;
	}
	/* text: anything JSON can hold as a string */
	j = json_string(v);
	ok = j != NULL;
	json_decref(j);
	return ok;
}

static const struct kcidb_field *field_find(const char *kv, size_t len)
{
	size_t i;

	for (i = 0; i < NR_FIELDS; i++)
		if (strlen(kcidb_fields[i].key) == len &&
		    !strncmp(kcidb_fields[i].key, kv, len))
			return &kcidb_fields[i];
	return NULL;
}

int mp_kcidb_set_check(const char *kv, struct mp_err *err)
{
	const char *eq = strchr(kv, '=');
	const struct kcidb_field *f;
	char keys[512];
	size_t i, used = 0;

	f = eq ? field_find(kv, eq - kv) : NULL;
	if (!f) {
		for (i = 0; i < NR_FIELDS; i++)
			used += snprintf(keys + used, sizeof(keys) - used,
					 "%s%s", i ? ", " : "",
					 kcidb_fields[i].key);
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "'%s': not KEY=VALUE with a KEY of %s", kv,
			       keys);
	}
	if (!form_ok(f->form, eq + 1))
		return mp_errf(err, MP_EXIT_USAGE, 0, "'%s': %s takes %s", kv,
			       f->key, form_what[f->form]);
	return 0;
}

/* the value set for key (the last one), or NULL */
static const char *set_get(const struct mp_kcidb_opts *o, const char *key)
{
	size_t i = o->nr_set, len = strlen(key);

	while (i--)
		if (!strncmp(o->set[i], key, len) && o->set[i][len] == '=')
			return o->set[i] + len + 1;
	return NULL;
}

/* every field set for obj, into it */
static void set_fields(json_t *obj, enum kf_obj which,
		       const struct mp_kcidb_opts *o)
{
	const char *v;
	size_t i;

	for (i = 0; i < NR_FIELDS; i++) {
		if (kcidb_fields[i].obj != which)
			continue;
		v = set_get(o, kcidb_fields[i].key);
		if (v)
			json_object_set_new(obj, kcidb_fields[i].key,
					    json_string(v));
	}
}

/* ---- identifiers -------------------------------------------------------- */

/* FNV-1a, 64 bits: a name for content, not a protection against anyone */
#define FNV_BASIS 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/* s and its terminating NUL, so that "ab","c" and "a","bc" differ */
static void fnv_str(uint64_t *h, const char *s)
{
	const unsigned char *c = (const unsigned char *)(s ? s : "");

	do {
		*h ^= *c;
		*h *= FNV_PRIME;
	} while (*c++);
}

static int fnv_json(uint64_t *h, const json_t *j)
{
	char *s = json_dumps(j,
			     JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	if (!s)
		return -1;
	fnv_str(h, s);
	free(s);
	return 0;
}

/* every field set for which, in the hash */
static void fnv_fields(uint64_t *h, enum kf_obj which,
		       const struct mp_kcidb_opts *o)
{
	size_t i;

	for (i = 0; i < NR_FIELDS; i++)
		if (kcidb_fields[i].obj == which) {
			fnv_str(h, kcidb_fields[i].key);
			fnv_str(h, set_get(o, kcidb_fields[i].key));
		}
}

/* a test path's component: [a-zA-Z0-9_-]+, anything else as '_' */
static void path_part(char *dst, size_t len, const char *name)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++)
		dst[i] = strchr("abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-",
				name[i]) ?
				 name[i] :
				 '_';
	if (!i && len > 1)
		dst[i++] = '_';
	dst[i] = '\0';
}

/* ---- the document ------------------------------------------------------ */

struct kcidb_ctx {
	const json_t *report;
	const json_t *cmp;
	const struct mp_kcidb_opts *o;
	const char *origin;
	const char *release;
	json_t *checkout_id;
	json_t *build_id;
	uint64_t run; /* the report's (and comparison's) hash */
	json_t *env;  /* every test's environment */
	json_t *tests;
};

/* the schema's statuses, highest priority first */
static const char *const priority[] = { "FAIL", "ERROR", "MISS",
					"PASS", "DONE",	 "SKIP" };

static size_t prio(const char *status)
{
	size_t i;

	for (i = 0; i < sizeof(priority) / sizeof(priority[0]) - 1; i++)
		if (!strcmp(priority[i], status))
			break;
	return i;
}

/* a summary's status: the highest of its tests' (the schema's rule) */
static void raise_to(size_t *best, const json_t *test)
{
	size_t p = prio(json_string_value(json_object_get(test, "status")));

	if (p < *best)
		*best = p;
}

/* a compare verdict as a test status */
static const char *verdict_status(const char *verdict)
{
	if (!verdict)
		return "DONE";
	if (!strcmp(verdict, "worse"))
		return "FAIL";
	if (!strcmp(verdict, "better") || !strcmp(verdict, "same"))
		return "PASS";
	/* unsure, info: measured, no verdict */
	return "DONE";
}

/* a scenario's status as a test status */
static const char *scenario_status(const char *st)
{
	if (!st || !strcmp(st, "ok"))
		return "DONE";
	if (!strcmp(st, "skipped"))
		return "SKIP";
	if (!strcmp(st, "interrupted"))
		return "MISS";
	return "ERROR";
}

/*
 * mpctl's units as KCIDB's: SI base units with the prefix to display
 * them by (a nanosecond count is seconds, prefix "metric")
 */
static const struct kcidb_unit {
	const char *unit; /* mpctl's (struct mp_metric) */
	const char *kunit;
	double scale;
	const char *prefix;
} kcidb_units[] = {
	{ "ns", "s", 1e-9, "metric" }, { "us", "s", 1e-6, "metric" },
	{ "bytes", "B", 1, "binary" }, { "bytes/s", "B/s", 1, "binary" },
	{ "count", NULL, 1, NULL },    { "ratio", NULL, 1, NULL },
};

static json_t *number_new(double v, const char *unit)
{
	const struct kcidb_unit *u = NULL;
	json_t *num;
	size_t i;

	for (i = 0; unit && i < sizeof(kcidb_units) / sizeof(kcidb_units[0]);
	     i++)
		if (!strcmp(kcidb_units[i].unit, unit))
			u = &kcidb_units[i];
	num = json_object();
	if (!num)
		return NULL;
	json_object_set_new(num, "value", json_real(v * (u ? u->scale : 1)));
	if (u && u->kunit)
		json_object_set_new(num, "unit", json_string(u->kunit));
	else if (!u && unit)
		json_object_set_new(num, "unit", mp_json_str(unit));
	if (u && u->prefix)
		json_object_set_new(num, "prefix", json_string(u->prefix));
	return num;
}

/* a shallow copy of an object without its null members (KCIDB has none) */
static json_t *no_nulls(const json_t *obj)
{
	json_t *copy = json_object(), *v;
	const char *key;

	if (!copy)
		return NULL;
	json_object_foreach((json_t *)obj, key, v)
		if (!json_is_null(v))
			json_object_set(copy, key, v);
	return copy;
}

/*
 * A test at "mpctl.SCENARIO[.METRIC]" into c->tests: its id, origin,
 * build, path, status, start time and environment. NULL when out of
 * memory.
 */
static json_t *test_add(struct kcidb_ctx *c, const char *scenario,
			const char *metric, const char *status)
{
	char sc[128], m[128], path[300];
	const char *created, *log_url;
	json_t *t = json_object();

	if (!t || json_array_append_new(c->tests, t))
		return NULL;
	path_part(sc, sizeof(sc), scenario);
	path_part(m, sizeof(m), metric ? metric : "");
	snprintf(path, sizeof(path), "mpctl.%s%s%s", sc, metric ? "." : "",
		 metric ? m : "");
	json_object_set_new(t, "id",
			    json_sprintf("%s:%s:%016llx:%s", c->origin,
					 c->release, (unsigned long long)c->run,
					 path));
	json_object_set_new(t, "origin", json_string(c->origin));
	json_object_set(t, "build_id", c->build_id);
	json_object_set_new(t, "path", json_string(path));
	json_object_set_new(t, "status", json_string(status));
	created = json_string_value(json_object_get(c->report, "created"));
	if (created)
		json_object_set_new(t, "start_time", json_string(created));
	json_object_set(t, "environment", c->env);
	log_url = set_get(c->o, "log_url");
	if (log_url)
		json_object_set_new(t, "log_url", json_string(log_url));
	json_object_set_new(t, "misc", json_object());
	return t;
}

static const json_t *cmp_row(const struct kcidb_ctx *c, const char *scenario,
			     const char *metric)
{
	const json_t *row;
	size_t i;

	json_array_foreach(json_object_get(c->cmp, "rows"), i, row) {
		const char *s =
			json_string_value(json_object_get(row, "scenario"));
		const char *m =
			json_string_value(json_object_get(row, "metric"));

		if (s && m && !strcmp(s, scenario) && !strcmp(m, metric))
			return row;
	}
	return NULL;
}

/* "worse: 770 -> 241 (-68.7%), p=0.05" */
static json_t *verdict_comment(const json_t *row, const char *help)
{
	const json_t *pct = json_object_get(row, "delta_pct");
	const json_t *p = json_object_get(row, "p_value");
	const json_t *b = json_object_get(row, "base");
	const json_t *n = json_object_get(row, "new");
	char d[32] = "", pv[32] = "", nv[32] = "-";

	if (json_is_number(pct))
		snprintf(d, sizeof(d), " (%+.1f%%)", json_number_value(pct));
	if (json_is_number(p))
		snprintf(pv, sizeof(pv), ", p=%.3g", json_number_value(p));
	if (json_is_number(n))
		snprintf(nv, sizeof(nv), "%.9g", json_number_value(n));
	return json_sprintf("%s: %.9g -> %s%s%s%s%s",
			    json_string_value(json_object_get(row, "verdict")) ?:
				    "?",
			    json_number_value(b), nv, d, pv, help ? "; " : "",
			    help ? help : "");
}

/* one metric's test: NEW's summary (or none) and the comparison's row */
static json_t *metric_test(struct kcidb_ctx *c, const char *scenario,
			   const char *metric, const json_t *sum,
			   const json_t *row)
{
	const struct mp_metric *m = mp_metric_find(metric);
	const char *unit = m ? m->unit : NULL, *help = m ? m->help : NULL;
	const json_t *med = json_object_get(sum, "median");
	json_t *t, *misc;

	if (row && json_string_value(json_object_get(row, "unit")))
		unit = json_string_value(json_object_get(row, "unit"));
	t = test_add(c, scenario, metric,
		     c->cmp ? verdict_status(json_string_value(
				      json_object_get(row, "verdict"))) :
			      "DONE");
	if (!t)
		return NULL;
	if (json_is_number(med))
		json_object_set_new(t, "number",
				    number_new(json_number_value(med), unit));
	if (row)
		json_object_set_new(t, "comment", verdict_comment(row, help));
	else if (help)
		json_object_set_new(t, "comment", json_string(help));
	misc = json_object_get(t, "misc");
	json_object_set_new(misc, "scenario", mp_json_str(scenario));
	json_object_set_new(misc, "metric", mp_json_str(metric));
	if (unit)
		json_object_set_new(misc, "unit", mp_json_str(unit));
	if (m)
		json_object_set_new(misc, "better",
				    json_string(mp_better_name(m->better)));
	if (sum)
		json_object_set_new(misc, "summary", no_nulls(sum));
	if (row)
		json_object_set_new(misc, "compare", no_nulls(row));
	return t;
}

/*
 * A scenario of NEW: its test, its metrics' tests, and with a comparison
 * the rows NEW has no summary for (a metric NEW stopped measuring) and
 * the metrics it lacks (MISS). The scenario's status is then the highest
 * of its tests', as KCIDB summarizes.
 */
static int scenario_tests(struct kcidb_ctx *c, const json_t *sc)
{
	const char *name = json_string_value(json_object_get(sc, "name"));
	const char *st = json_string_value(json_object_get(sc, "status"));
	const json_t *ms = json_object_get(sc, "metrics"), *sum, *row, *v;
	const char *status = scenario_status(st), *key, *reason, *desc;
	json_t *t, *misc, *mt;
	size_t i, best = prio(status);

	if (!name)
		return 0;
	t = test_add(c, name, NULL, status);
	if (!t)
		return -1;
	reason = json_string_value(json_object_get(sc, "reason"));
	desc = json_string_value(json_object_get(sc, "description"));
	if (reason || desc)
		json_object_set_new(t, "comment", mp_json_str(reason ?: desc));
	misc = json_object_get(t, "misc");
	json_object_set_new(misc, "scenario", mp_json_str(name));
	json_object_set_new(misc, "runs",
			    json_integer(json_array_size(
				    json_object_get(sc, "runs"))));
	json_object_set(misc, "settings",
			json_object_get(c->report, "settings"));
	if (c->cmp && json_is_string(json_object_get(c->cmp, "base_kernel")))
		json_object_set(misc, "base_kernel",
				json_object_get(c->cmp, "base_kernel"));
	json_object_foreach((json_t *)ms, key, sum) {
		mt = metric_test(c, name, key, sum, cmp_row(c, name, key));
		if (!mt)
			return -1;
		raise_to(&best, mt);
	}
	/* rows without NEW's summary: judged on what NEW lacks */
	json_array_foreach(json_object_get(c->cmp, "rows"), i, row) {
		const char *s =
			json_string_value(json_object_get(row, "scenario"));
		const char *m =
			json_string_value(json_object_get(row, "metric"));

		if (!s || !m || strcmp(s, name) || json_object_get(ms, m))
			continue;
		mt = metric_test(c, name, m, NULL, row);
		if (!mt)
			return -1;
		raise_to(&best, mt);
	}
	json_array_foreach(json_object_get(c->cmp, "missing_metrics"), i, v) {
		const char *s = json_string_value(v), *slash;

		slash = s ? strchr(s, '/') : NULL;
		if (!slash || strncmp(s, name, slash - s) || name[slash - s] ||
		    json_object_get(ms, slash + 1) ||
		    cmp_row(c, name, slash + 1))
			continue;
		mt = test_add(c, name, slash + 1, "MISS");
		if (!mt)
			return -1;
		json_object_set_new(mt, "comment",
				    json_string(
					    "measured in BASE, not in NEW"));
		raise_to(&best, mt);
	}
	json_object_set_new(t, "status", json_string(priority[best]));
	return 0;
}

/* what every test ran on: these of the report's system, and its backends */
static const char *const env_keys[] = {
	"nr_cpus",     "mem_total_bytes", "swap_total_bytes",
	"cgroup_mode", "default_backend",
};

static json_t *environment(const json_t *report)
{
	const json_t *sys = json_object_get(report, "system"), *b;
	json_t *env, *misc, *backends;
	size_t i;

	env = json_object();
	misc = json_object();
	backends = json_array();
	if (!env || !misc || !backends) {
		json_decref(env);
		json_decref(misc);
		json_decref(backends);
		return NULL;
	}
	json_array_foreach(json_object_get(sys, "backends"), i, b)
		if (json_is_true(json_object_get(b, "present")))
			json_array_append(backends, json_object_get(b, "name"));
	json_object_set_new(
		env, "comment",
		json_sprintf(
			"%s, %lld CPUs, %.0f MiB of memory, %.0f MiB of "
			"swap, cgroups %s",
			json_string_value(json_object_get(sys, "machine")) ?:
									     "?",
			(long long)json_integer_value(
				json_object_get(sys, "nr_cpus")),
			json_number_value(
				json_object_get(sys, "mem_total_bytes")) /
				1048576,
			json_number_value(
				json_object_get(sys, "swap_total_bytes")) /
				1048576,
			json_string_value(json_object_get(sys, "cgroup_mode")) ?:
				"?"));
	json_object_set(misc, "mpctl_version",
			json_object_get(report, "mpctl_version"));
	for (i = 0; i < sizeof(env_keys) / sizeof(env_keys[0]); i++)
		json_object_set(misc, env_keys[i],
				json_object_get(sys, env_keys[i]));
	json_object_set_new(misc, "backends", backends);
	json_object_set_new(env, "misc", no_nulls(misc));
	json_decref(misc);
	return env;
}

/* the checkout and the build, unless another system submitted them */
static void checkout_build(struct kcidb_ctx *c, json_t *doc)
{
	const json_t *sys = json_object_get(c->report, "system");
	const char *uname_v =
		json_string_value(json_object_get(sys, "kernel_version"));
	const char *machine =
		json_string_value(json_object_get(sys, "machine"));
	json_t *ck, *b, *misc;
	char arch[64];
	size_t i;

	if (!set_get(c->o, "checkout_id")) {
		ck = json_object();
		json_object_set(ck, "id", c->checkout_id);
		json_object_set_new(ck, "origin", json_string(c->origin));
		json_object_set_new(ck, "comment", mp_json_str(c->release));
		set_fields(ck, KF_CHECKOUT, c->o);
		json_object_set_new(ck, "valid", json_true());
		json_object_set_new(ck, "misc",
				    json_pack("{s:o}", "kernel_release",
					      mp_json_str(c->release)));
		json_object_set_new(doc, "checkouts", json_pack("[o]", ck));
	}
	b = json_object();
	json_object_set(b, "id", c->build_id);
	json_object_set_new(b, "origin", json_string(c->origin));
	json_object_set(b, "checkout_id", c->checkout_id);
	if (machine) {
		/* the schema's [a-z0-9_]*: "x86_64" as it is */
		for (i = 0; machine[i] && i + 1 < sizeof(arch); i++)
			arch[i] = strchr("abcdefghijklmnopqrstuvwxyz0123456789",
					 machine[i]) ?
					  machine[i] :
					  '_';
		arch[i] = '\0';
		json_object_set_new(b, "architecture", json_string(arch));
	}
	if (uname_v)
		json_object_set_new(b, "comment", mp_json_str(uname_v));
	set_fields(b, KF_BUILD, c->o);
	/* the kernel booted and ran the report */
	json_object_set_new(b, "status", json_string("PASS"));
	misc = json_object();
	json_object_set_new(misc, "kernel_release", mp_json_str(c->release));
	if (uname_v)
		json_object_set_new(misc, "kernel_version",
				    mp_json_str(uname_v));
	if (json_object_get(sys, "kernel_config"))
		json_object_set(misc, "kernel_config",
				json_object_get(sys, "kernel_config"));
	json_object_set_new(b, "misc", misc);
	json_object_set_new(doc, "builds", json_pack("[o]", b));
}

/* the ids of the checkout and the build, and the report's hash */
static int make_ids(struct kcidb_ctx *c)
{
	const json_t *sys = json_object_get(c->report, "system");
	const char *uname_v =
		json_string_value(json_object_get(sys, "kernel_version"));
	const char *id;
	uint64_t ck = FNV_BASIS, b;

	/* the source: the release and what is known of it; uname -v when
	 * nothing is (a checkout per build, as no two are known alike) */
	fnv_str(&ck, c->release);
	fnv_fields(&ck, KF_CHECKOUT, c->o);
	if (!set_get(c->o, "patchset_hash") &&
	    !set_get(c->o, "git_commit_hash"))
		fnv_str(&ck, uname_v);
	id = set_get(c->o, "checkout_id");
	c->checkout_id = id ? json_string(id) :
			      json_sprintf("%s:%s-%016llx", c->origin,
					   c->release, (unsigned long long)ck);
	/* the build: its checkout, uname -v (a build's time) and machine */
	b = FNV_BASIS;
	fnv_str(&b, json_string_value(c->checkout_id));
	fnv_str(&b, uname_v);
	fnv_str(&b, json_string_value(json_object_get(sys, "machine")));
	fnv_fields(&b, KF_BUILD, c->o);
	id = set_get(c->o, "build_id");
	c->build_id = id ? json_string(id) :
			   json_sprintf("%s:%s-%016llx", c->origin, c->release,
					(unsigned long long)b);
	c->run = FNV_BASIS;
	if (fnv_json(&c->run, c->report) ||
	    (c->cmp && fnv_json(&c->run, c->cmp)))
		return -1;
	return c->checkout_id && c->build_id ? 0 : -1;
}

json_t *mp_kcidb_doc(const json_t *report, const json_t *cmp,
		     const struct mp_kcidb_opts *o, struct mp_err *err)
{
	struct kcidb_ctx c = {
		.report = report,
		.cmp = cmp,
		.o = o,
	};
	const json_t *sc, *v;
	json_t *doc = NULL;
	size_t i;

	c.origin = set_get(o, "origin") ?: MP_KCIDB_ORIGIN;
	c.release = json_string_value(
		mp_json_path(report, "system.kernel_release"));
	if (!c.release || !*c.release)
		c.release = "unknown";
	c.env = environment(report);
	c.tests = json_array();
	if (!c.env || !c.tests || make_ids(&c))
		goto nomem;
	json_array_foreach(json_object_get(report, "scenarios"), i, sc)
		if (scenario_tests(&c, sc))
			goto nomem;
	/* scenarios that ran in BASE and are not in NEW at all */
	json_array_foreach(json_object_get(cmp, "missing_scenarios"), i, v) {
		const char *name = json_string_value(v);
		json_t *t;

		if (!name || mp_report_scenario(report, name))
			continue;
		t = test_add(&c, name, NULL, "MISS");
		if (!t)
			goto nomem;
		json_object_set_new(t, "comment",
				    json_string("ran in BASE, not in NEW"));
	}
	doc = json_pack("{s:{s:i, s:i}}", "version", "major", MP_KCIDB_MAJOR,
			"minor", MP_KCIDB_MINOR);
	if (!doc)
		goto nomem;
	if (!set_get(o, "build_id"))
		checkout_build(&c, doc);
	json_object_set(doc, "tests", c.tests);
	goto out;
nomem:
	mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "KCIDB document");
out:
	json_decref(c.env);
	json_decref(c.tests);
	json_decref(c.checkout_id);
	json_decref(c.build_id);
	return doc;
}
