/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KCIDB documents: a report, or a report and its comparison with a base,
 * in the I/O format of KernelCI's common results database, version 5.3
 * (schema/kcidb/schema-v5.3.json), as kcidb-submit takes it.
 *
 * The document holds:
 *  - "version" {5, 3}; no "schema" member (the format allows no member
 *    beyond its own);
 *  - one checkout: the kernel release as its comment, what the caller
 *    knows of the source (tree, git commit, the series as patchset_hash;
 *    "" says no patches: a stock kernel);
 *  - one build of it: the architecture, the report's kernel config
 *    options in misc, what the caller knows (config_name, compiler);
 *  - tests under the path "mpctl": one per scenario ("mpctl.SCENARIO")
 *    and one per scenario and metric ("mpctl.SCENARIO.METRIC") with the
 *    median as number {value, unit, prefix} (nanoseconds as seconds,
 *    bytes as B with binary prefixes), the samples in misc.
 *
 * Statuses: a measurement is DONE. With a comparison, a metric's verdict
 * is its status: worse FAIL, same or better PASS, unsure and info DONE
 * (no verdict), a metric BASE has and NEW lacks MISS; a scenario is FAIL
 * when one of its metrics is, PASS when one passed. A skipped scenario is
 * SKIP, a failed one ERROR, an interrupted one MISS, one that ran in BASE
 * and is absent from NEW MISS.
 *
 * Identifiers are "ORIGIN:..." (origin "mpctl" unless set): the
 * checkout's and the build's are the release and a hash of what
 * identifies them (the release, uname -v, the fields set), so that two
 * reports of one build name one build; the tests' are the build's and a
 * hash of the report (and of the comparison), so that converting one
 * report twice gives the same ids and two reports never share one.
 * Nothing here prints.
 */
#ifndef MP_KCIDB_H
#define MP_KCIDB_H

#include <stddef.h>

#include <jansson.h>

#include "mp_err.h"

#define MP_KCIDB_MAJOR	 5
#define MP_KCIDB_MINOR	 3
#define MP_KCIDB_ORIGIN	 "mpctl"
#define MP_KCIDB_MAX_SET 32

/*
 * What the caller knows beyond the report, as "KEY=VALUE" (later ones
 * win): origin; the checkout's tree_name, git_repository_url,
 * git_repository_branch, git_commit_hash, git_commit_name,
 * patchset_hash; the build's config_name, config_url, compiler; the
 * tests' log_url. checkout_id or build_id attach the document to a
 * checkout or a build another system submitted: with build_id only the
 * tests are written, with checkout_id the build and the tests.
 */
struct mp_kcidb_opts {
	const char *set[MP_KCIDB_MAX_SET];
	size_t nr_set;
};

/*
 * Check one "KEY=VALUE": a known key and a value its field takes. 0, or
 * -1 with err (MP_EXIT_USAGE) naming what is wrong.
 */
int mp_kcidb_set_check(const char *kv, struct mp_err *err);

/*
 * The KCIDB document of @report (a checked mpctl report with its
 * summaries) and, when @cmp is not NULL, of its comparison (@report is
 * NEW). NULL with err set when out of memory.
 */
json_t *mp_kcidb_doc(const json_t *report, const json_t *cmp,
		     const struct mp_kcidb_opts *o, struct mp_err *err);

#endif
