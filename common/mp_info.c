// SPDX-License-Identifier: GPL-2.0
/*
 * mpctl info: see mp_info.h. Every check is the one the commands make
 * (mp_backend_probe(), mp_backend_pick(), mp_target_resolve(),
 * mp_memstat_open()), so that what it says is what they will do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "mp_info.h"
#include "mp_json.h"
#include "mp_memstat.h"
#include "mp_backend.h"
#include "mp_pressure.h"
#include "mp_target.h"

static const char *const role_names[MP_ROLE_NR] = {
	[MP_ROLE_MEMORY] = "memory",
	[MP_ROLE_MEMPRESSURE] = "mempressure",
	[MP_ROLE_UNIFIED] = "unified",
};

static json_t *backend_or_null(enum mp_backend b)
{
	return b == MP_BACKEND_AUTO ? json_null() :
				      json_string(mp_backend_name(b));
}

/* a cgroup file the commands write: whether this caller may */
static json_t *writable(const struct mp_cgroup *cg, const char *file)
{
	char path[PATH_MAX + 64];

	if (!cg || !mp_cg_has_file(cg, file))
		return json_null();
	snprintf(path, sizeof(path), "%s/%s", cg->dir, file);
	return json_boolean(!access(path, W_OK));
}

static json_t *hierarchies(const struct mp_target *t)
{
	const struct mp_system *sys = mp_system();
	json_t *a = json_array();
	int r;

	for (r = 0; r < MP_ROLE_NR; r++) {
		const struct mp_target_cg *tc = &t->role[r];
		json_t *h;

		if (!sys->have[r])
			continue;
		h = json_pack("{s:s, s:i, s:o}", "role", role_names[r],
			      "version", (int)sys->hier[r].version, "mount",
			      mp_json_str(sys->hier[r].mnt));
		mp_json_set(h, "cgroup",
			    tc->ok ? mp_json_str(tc->cg.path) : NULL);
		mp_json_set(h, "error",
			    tc->ok ? NULL : json_string(tc->err.msg));
		json_array_append_new(a, h);
	}
	return a;
}

json_t *mp_info_backends(bool reason_null)
{
	json_t *a = json_array();
	struct mp_err err;
	int b;

	for (b = 0; b < MP_BACKEND_NR; b++) {
		bool present = !mp_backend_probe(b, &err);
		json_t *o = json_pack("{s:s, s:b}", "name", mp_backend_name(b),
				      "present", present);

		if (!present || reason_null)
			mp_json_set(o, "reason",
				    present ? NULL : json_string(err.msg));
		json_array_append_new(a, o);
	}
	return a;
}

/* the effective limit of the memory cgroup, as stress works against it */
static json_t *memory(const struct mp_target *t)
{
	const struct mp_cgroup *cg = mp_target_cg(t, MP_ROLE_MEMORY);
	struct mp_memstat ms;
	uint64_t usage = 0;
	json_t *m;

	if (!cg)
		cg = mp_target_cg(t, MP_ROLE_UNIFIED);
	if (mp_memstat_open(&ms, cg))
		return json_null();
	mp_memstat_usage(&ms, &usage);
	m = json_pack("{s:b, s:I}", "limited", ms.limited, "usage_bytes",
		      (json_int_t)usage);
	mp_json_set(m, "limit_bytes",
		    ms.limited ? json_integer((json_int_t)ms.limit) : NULL);
	mp_memstat_close(&ms);
	return m;
}

static json_t *permissions(const struct mp_target *t)
{
	const struct mp_cgroup *mem = mp_target_cg(t, MP_ROLE_MEMORY);
	const struct mp_cgroup *v2 = mp_target_cg(t, MP_ROLE_UNIFIED);
	const struct mp_cgroup *mp = mp_target_cg(t, MP_ROLE_MEMPRESSURE);
	const struct mp_cgroup *home = mem ? mem : v2;
	json_t *p = json_object();

	/* PSI triggers with windows under 2 s, rt priorities */
	json_object_set_new(p, "cap_sys_resource",
			    json_boolean(mp_privileged()));
	/* memcg v1 events, and a kernel shrinker's registration */
	json_object_set_new(p, "memcg_event_control",
			    mem && mem->hier->version == MP_CG_V1 ?
				    writable(mem, "cgroup.event_control") :
				    json_null());
	json_object_set_new(p, "mempressure_shrinker",
			    writable(mp, "mempressure.shrinker"));
	/* a PSI trigger on the cgroup (else system-wide PSI) */
	json_object_set_new(p, "memory_pressure",
			    writable(v2, "memory.pressure"));
	/* stress --cgroup and register --join move processes there */
	json_object_set_new(p, "cgroup_procs", writable(home, "cgroup.procs"));
	/* a transient cgroup below it (stress, report) */
	json_object_set_new(p, "create_child",
			    home ? json_boolean(!access(home->dir, W_OK)) :
				   json_null());
	return p;
}

/* the first line of a small /sys file, null if it is absent */
static json_t *sys_line(const char *abs)
{
	char path[PATH_MAX], buf[128];

	if (mp_read_file(mp_syspath(path, sizeof(path), abs), buf, sizeof(buf)))
		return json_null();
	buf[strcspn(buf, "\n")] = '\0';
	return json_string(buf);
}

static json_t *interfaces(const struct mp_target *t)
{
	const struct mp_system *sys = mp_system();
	const struct mp_cgroup *v2 = mp_target_cg(t, MP_ROLE_UNIFIED);
	struct mp_meminfo mi;
	json_t *k = json_object();

	json_object_set_new(k, "psi_system", json_boolean(sys->psi_system));
	json_object_set_new(k, "memcg_pressure_level",
			    json_boolean(sys->pressure_level));
	json_object_set_new(k, "kernel_mempressure",
			    json_boolean(sys->kernel_mempressure));
	json_object_set_new(k, "memory_reclaim",
			    v2 && sys->v2_memory ?
				    json_boolean(
					    mp_cg_has_file(v2,
							   "memory.reclaim")) :
				    json_null());
	json_object_set_new(k, "lru_gen",
			    sys_line("/sys/kernel/mm/lru_gen/enabled"));
	json_object_set_new(
		k, "thp",
		sys_line("/sys/kernel/mm/transparent_hugepage/enabled"));
	if (!mp_meminfo_read(&mi) && (mi.have & MP_MI_SWAP_TOTAL))
		json_object_set_new(k, "swap_total_bytes",
				    json_integer((json_int_t)mi.swap_total));
	else
		json_object_set_new(k, "swap_total_bytes", json_null());
	return k;
}

json_t *mp_info(const char *cgroup, struct mp_err *err)
{
	const struct mp_system *sys = mp_system();
	json_t *doc, *cmds;
	struct mp_target *t;
	struct utsname u;
	enum mp_backend shr, kb;

	t = mp_target_new(cgroup);
	doc = t ? mp_json_doc(MP_INFO_SCHEMA, MP_INFO_SCHEMA_VERSION) : NULL;
	if (!doc) {
		free(t);
		mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "out of memory");
		return NULL;
	}
	uname(&u);
	json_object_set_new(doc, "kernel_release", json_string(u.release));
	json_object_set_new(doc, "cgroup_mode",
			    json_string(mp_system_mode(sys)));
	json_object_set_new(doc, "cgroup", mp_json_str(cgroup ? cgroup : "."));
	json_object_set_new(doc, "hierarchies", hierarchies(t));
	json_object_set_new(doc, "backends", mp_info_backends(true));
	/* what each command picks with --backend auto */
	kb = mp_backend_kernel_shrinker();
	shr = !mp_backend_probe(kb, NULL) ? kb :
					    mp_backend_pick(MP_USE_EMULATION);
	cmds = json_object();
	json_object_set_new(cmds, "listen",
			    backend_or_null(mp_backend_pick(MP_USE_EVENTS)));
	json_object_set_new(cmds, "register", backend_or_null(shr));
	json_object_set_new(cmds, "stress", backend_or_null(shr));
	json_object_set_new(cmds, "shrinker",
			    json_string(shr == MP_BACKEND_AUTO ? "none" :
					shr == kb	       ? "kernel" :
								 "emulated"));
	json_object_set_new(doc, "commands", cmds);
	json_object_set_new(doc, "memory", memory(t));
	json_object_set_new(doc, "permissions", permissions(t));
	json_object_set_new(doc, "interfaces", interfaces(t));
	free(t);
	return doc;
}
