// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Command-line helpers: a name among names, a comma-separated list of
 * them as a mask, and the named cases (-c CASE) a tool runs.
 */
#include <stdlib.h>
#include <string.h>

#include "tool.h"

int tool_name_index(const char *const *names, unsigned int n, const char *s)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return i;
	return -1;
}

uint32_t tool_name_mask(const char *list, const char *const *names,
			unsigned int n, const char *unknown)
{
	char *copy = strdup(list), *tok, *save = NULL;
	uint32_t mask = 0;
	int i;

	if (!copy)
		tool_die("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		i = tool_name_index(names, n, tok);
		if (i < 0)
			tool_die(unknown, tok);
		mask |= 1u << i;
	}
	free(copy);
	return mask;
}

void tool_case_choose(struct tool_cases *c, const char *name)
{
	unsigned int i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(name, c->list[i].name))
			break;
	if (i == c->n)
		tool_die("no case %s", name);
	c->chosen[i] = c->any = true;
}

void tool_case_run(const struct tool_cases *c, void (*start)(unsigned int i))
{
	unsigned int i;

	for (i = 0; i < c->n; i++) {
		if (c->any ? !c->chosen[i] : !c->list[i].by_default)
			continue;
		if (start)
			start(i);
		c->list[i].run();
	}
}

void tool_case_list(const struct tool_cases *c, FILE *f)
{
	unsigned int i;

	for (i = 0; i < c->n; i++)
		fprintf(f, " %s", c->list[i].name);
}
