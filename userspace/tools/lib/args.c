// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Command-line helpers: options from a table, a name among names, a
 * comma-separated list of them as a mask, and the named cases (-c CASE)
 * a tool runs.
 */
#include <getopt.h>
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

static bool takes_arg(enum tool_opt_type type)
{
	return type != TOOL_OPT_FLAG && type != TOOL_OPT_CALL0 &&
	       type != TOOL_OPT_HELP;
}

/* What option @o does with @arg. */
static void apply(const struct tool_opt *o, const char *arg,
		  void (*usage)(int status))
{
	switch (o->type) {
	case TOOL_OPT_FLAG:
		*(bool *)o->dest = true;
		break;
	case TOOL_OPT_STR:
		*(const char **)o->dest = arg;
		break;
	case TOOL_OPT_INT:
		*(int *)o->dest = tool_number(arg, o->max);
		break;
	case TOOL_OPT_LONG:
		*(long *)o->dest = tool_number(arg, o->max);
		break;
	case TOOL_OPT_UINT:
		*(unsigned int *)o->dest = tool_number(arg, o->max);
		break;
	case TOOL_OPT_ULONG:
		*(unsigned long *)o->dest = tool_number(arg, o->max);
		break;
	case TOOL_OPT_U64:
		*(uint64_t *)o->dest = tool_number(arg, o->max);
		break;
	case TOOL_OPT_CALL:
	case TOOL_OPT_CALL0:
		o->call(arg);
		break;
	case TOOL_OPT_HELP:
		usage(0);
		break;
	}
}

int tool_getopt(int argc, char **argv, const struct tool_opt *opts,
		unsigned int n, void (*usage)(int status))
{
	struct option *lo = calloc(n + 1, sizeof(*lo));
	char *shorts = calloc(2 * n + 1, 1), *p = shorts;
	unsigned int i, nl = 0;
	int c;

	if (!lo || !shorts)
		tool_die("out of memory");
	for (i = 0; i < n; i++) {
		if (opts[i].key < 256) {
			*p++ = opts[i].key;
			if (takes_arg(opts[i].type))
				*p++ = ':';
		}
		if (opts[i].name)
			lo[nl++] = (struct option){
				opts[i].name, takes_arg(opts[i].type) ?
				required_argument : no_argument, NULL, opts[i].key,
			};
	}
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		for (i = 0; i < n && opts[i].key != c; i++)
			;
		if (i == n)
			usage(2);
		apply(&opts[i], optarg, usage);
	}
	free(lo);
	free(shorts);
	return optind;
}
