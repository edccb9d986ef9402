/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What mpctl finds on this machine, as one document (mpctl info): the
 * hierarchies and the caller's (or a named) cgroup in each, the backends
 * and which one each command would use, the effective memory limit, the
 * permission checks the commands make, the kernel interfaces. Reads only;
 * nothing is created or written.
 */
#ifndef MP_INFO_H
#define MP_INFO_H

#include <jansson.h>
#include <stdbool.h>

#include "mp_err.h"

#define MP_INFO_SCHEMA	       "mpctl-info"
#define MP_INFO_SCHEMA_VERSION 1

/*
 * The backends, each {name, present, reason}, as info and the report's
 * system section list them. A present backend's reason is null in info's
 * schema (reason_null), absent in the report's.
 */
json_t *mp_info_backends(bool reason_null);
/* cgroup NULL: the caller's own. NULL with err on failure. */
json_t *mp_info(const char *cgroup, struct mp_err *err);

#endif
