// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A table of checks: one line per check, "expected X got Y ok", counted.
 */
#include <string.h>

#include "tool.h"

bool tool_report_line(struct tool_report *r, const char *what,
		      const char *want, const char *got, bool ok)
{
	r->checks++;
	if (!ok)
		r->failures++;
	if (r->case_w)
		printf("%-*s ", r->case_w, r->cur);
	printf("%-*s expected %-*s got %-*s %s\n", r->what_w, what, r->val_w,
	       want, r->val_w, got, ok ? "ok" : r->bad);
	fflush(stdout);
	return ok;
}

bool tool_check(struct tool_report *r, const char *what, const char *want,
		const char *got)
{
	return tool_report_line(r, what, want, got, !strcmp(want, got));
}

bool tool_check_true(struct tool_report *r, const char *what, bool cond,
		     const char *detail)
{
	return tool_check(r, what, "yes", cond ? "yes" : detail);
}
