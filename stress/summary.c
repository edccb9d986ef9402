// SPDX-License-Identifier: GPL-2.0
/*
 * mpctl stress's text summary from its JSON document (stress/summary.h).
 *
 * The document keeps every number the summary shows, exact: integers in
 * base units (bytes, ns, counts), the cache's rates as reals. Each line
 * below reads them back rather than the struct stress_result they came
 * from.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "mp_report.h"
#include "summary.h"

/* an integer at @path ("a.b"); 0 when absent */
static uint64_t u64(const json_t *doc, const char *path)
{
	return (uint64_t)json_integer_value(mp_json_path(doc, path));
}

/* a real (or an integer) at @path; 0 when absent */
static double real(const json_t *doc, const char *path)
{
	double v = 0;

	mp_json_path_num(doc, path, &v);
	return v;
}

static const char *str(const json_t *doc, const char *path)
{
	const char *s = json_string_value(mp_json_path(doc, path));

	return s ? s : "";
}

static bool boolean(const json_t *doc, const char *path)
{
	return json_is_true(mp_json_path(doc, path));
}

void stress_fmt_mib(uint64_t b, char *buf, size_t len)
{
	snprintf(buf, len, "%.0f MiB", (double)b / (1 << 20));
}

/* a latency of @path ("reclaim_latency.p50_ns") in us */
static double us(const json_t *doc, const char *path)
{
	return (double)u64(doc, path) / 1e3;
}

static void write_head(FILE *f, const json_t *doc, double secs)
{
	const char *mode = str(doc, "shrinker");
	bool none = !strcmp(mode, "none");

	fprintf(f, "mpctl stress: %s shrinker (%s) in %s, ended: %s\n",
		none ? "no" : mode, none ? "-" : str(doc, "backend"),
		str(doc, "cgroup"), str(doc, "exit_reason"));
	fprintf(f,
		"  duration      %.1f s, %" PRIu64 " threads, chunk %" PRIu64
		" bytes\n",
		secs, u64(doc, "parameters.threads"),
		u64(doc, "parameters.chunk_size_bytes"));
}

static void write_chunks(FILE *f, const json_t *doc, double secs)
{
	uint64_t allocated = u64(doc, "bytes_allocated");
	char a[32], b[32];

	stress_fmt_mib(allocated, a, sizeof(a));
	stress_fmt_mib(u64(doc, "bytes_freed"), b, sizeof(b));
	fprintf(f, "  allocated     %" PRIu64 " chunks (%s), %.0f MiB/s\n",
		u64(doc, "chunks_allocated"), a,
		secs > 0 ? (double)allocated / secs / (1 << 20) : 0.0);
	fprintf(f,
		"  freed         %" PRIu64 " chunks (%s) on %" PRIu64
		" requests for %" PRIu64 " (re-added %" PRIu64
		", short %" PRIu64 ")\n",
		u64(doc, "chunks_freed"), b, u64(doc, "reclaim_requests"),
		u64(doc, "chunks_requested"), u64(doc, "chunks_readded"),
		u64(doc, "chunks_short"));
	if (boolean(doc, "parameters.lazyfree"))
		fprintf(f,
			"  lost          %" PRIu64 " chunks found dropped "
			"by reclaim (MADV_FREE)\n",
			u64(doc, "chunks_lost"));
}

static void write_latency(FILE *f, const json_t *doc)
{
	fprintf(f,
		"  latency       p50 %.0f us, p99 %.0f us, max %.0f us "
		"per request; p50 %.0f us per chunk\n",
		us(doc, "reclaim_latency.p50_ns"),
		us(doc, "reclaim_latency.p99_ns"),
		us(doc, "reclaim_latency.max_ns"),
		us(doc, "reclaim_latency_per_chunk.p50_ns"));
	fprintf(f,
		"  alloc latency p50 %.0f us, p99 %.0f us, max %.0f us "
		"per chunk (%s%s); %" PRIu64 " took 500 ms or more\n",
		us(doc, "alloc_latency.p50_ns"),
		us(doc, "alloc_latency.p99_ns"),
		us(doc, "alloc_latency.max_ns"), str(doc, "parameters.free"),
		boolean(doc, "parameters.populate") ? ", populated" :
						      ", a write a page",
		u64(doc, "alloc_latency.over_500ms"));
}

static void write_memory(FILE *f, const json_t *doc)
{
	char a[32], b[32], c[32];

	fprintf(f,
		"  events        low %" PRIu64 ", medium %" PRIu64
		", critical %" PRIu64,
		u64(doc, "events.low"), u64(doc, "events.medium"),
		u64(doc, "events.critical"));
	if (!strcmp(str(doc, "shrinker"), "emulated"))
		fprintf(f, "; usage thresholds %" PRIu64,
			u64(doc, "events.thresholds"));
	fprintf(f, "\n");
	stress_fmt_mib(u64(doc, "peak_usage_bytes"), a, sizeof(a));
	stress_fmt_mib(u64(doc, "limit_bytes"), b, sizeof(b));
	stress_fmt_mib(u64(doc, "swap_growth_bytes"), c, sizeof(c));
	fprintf(f, "  peak usage    %s of %s limit, swap growth %s\n", a, b, c);
	fprintf(f, "  OOM kills     %" PRIu64, u64(doc, "oom_kills"));
	if (u64(doc, "teardown_oom_kills"))
		fprintf(f,
			" (and %" PRIu64 " after the run, in its teardown: "
			"not the run's)",
			u64(doc, "teardown_oom_kills"));
	fprintf(f, "\n");
}

/*
 * the hog, the cache workload, the co-tenant, the stop of the answers and
 * the engine's error, when there are
 */
static void write_extras(FILE *f, const json_t *doc)
{
	const json_t *hog = json_object_get(doc, "hog");

	if (json_is_object(hog))
		fprintf(f,
			"  hog           stress-ng %s: %s%" PRIu64
			" bogo-ops, %" PRIu64 " OOM kills\n",
			str(hog, "args"),
			json_is_integer(json_object_get(hog, "bogo_ops")) ?
				"" :
				"no report, ",
			u64(hog, "bogo_ops"), u64(hog, "oom_kills"));
	if (json_is_string(json_object_get(doc, "strategy")))
		fprintf(f,
			"  cache         %s: %" PRIu64 " reads (%.0f/s), "
			"hit ratio %.3f, %" PRIu64 " misses, %" PRIu64
			" found dropped\n",
			str(doc, "strategy"), u64(doc, "cache.reads"),
			real(doc, "cache.reads_per_s"),
			real(doc, "cache.hit_ratio"), u64(doc, "cache.misses"),
			u64(doc, "cache.lost"));
	if (json_is_object(json_object_get(doc, "cotenant")))
		fprintf(f,
			"  co-tenant     %" PRIu64 " ops of %" PRIu64
			" bytes (%.0f/s): p50 %.0f us, p99 %.0f us, max %.0f us%s\n",
			u64(doc, "cotenant.ops"),
			u64(doc, "cotenant.size_bytes"),
			real(doc, "cotenant.ops_per_sec"),
			us(doc, "cotenant.p50_ns"), us(doc, "cotenant.p99_ns"),
			us(doc, "cotenant.max_ns"),
			boolean(doc, "cotenant.killed") ? ", killed" : "");
	if (json_is_integer(json_object_get(doc, "stopped_answering_ns")))
		fprintf(f, "  answering     stopped at %.1f s\n",
			(double)u64(doc, "stopped_answering_ns") / 1e9);
	if (json_is_string(json_object_get(doc, "error")))
		fprintf(f, "  error         %s\n", str(doc, "error"));
}

int stress_summary_write(FILE *f, const json_t *doc)
{
	double secs = (double)u64(doc, "duration_ns") / 1e9;

	write_head(f, doc, secs);
	write_chunks(f, doc, secs);
	write_latency(f, doc);
	write_memory(f, doc);
	write_extras(f, doc);
	return ferror(f) ? -1 : 0;
}
