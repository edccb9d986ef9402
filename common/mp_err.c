// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mp_err.h"

int mp_status_for_errno(int errnum)
{
	if (errnum == EACCES || errnum == EPERM || errnum == EROFS)
		return MP_EXIT_NOPERM;
	return MP_EXIT_FAILURE;
}

int mp_errf(struct mp_err *err, int status, int errnum, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	if (!err)
		return -1;
	err->errnum = errnum;
	err->status = status >= 0 ? status : mp_status_for_errno(errnum);
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	len = strlen(err->msg);
	if (errnum && len < sizeof(err->msg))
		snprintf(err->msg + len, sizeof(err->msg) - len, ": %s",
			 strerror(errnum));
	return -1;
}
