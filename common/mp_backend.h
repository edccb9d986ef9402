/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pressure backends, by name: what mp_target.c probes and prefers and
 * mp_pressure.c opens (the interface over them is mp_pressure.h).
 */
#ifndef MP_BACKEND_H
#define MP_BACKEND_H

enum mp_backend {
	MP_BACKEND_AUTO = -1,
	MP_BACKEND_MEMPRESSURE = 0,
	MP_BACKEND_MEMCG,
	MP_BACKEND_PSI,
	MP_BACKEND_NR,
};

#endif
