// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The targets file: QPs, keys and XRC SRQs, read into the generator's
 * model and grouped by what the generator does with them.
 */
#include "fuzz.h"

bool takes_requests(const struct tqp *q)
{
	return q->state >= QS_RTR && q->state <= QS_SQE;
}

bool takes_responses(const struct tqp *q)
{
	return q->state >= QS_RTS && q->state <= QS_SQE;
}

static void group_add(struct group *g, int i)
{
	g->idx[g->n++] = i;
}

static bool parse_num(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (!strcmp(s, "-"))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || *end || end == s || *v > max)
		tool_die("targets: bad number '%s'", s);
	return true;
}

static int name_index(const char *const *names, int n, const char *s,
		      int other)
{
	int i = tool_name_index(names, n, s);

	return i < 0 ? other : i;
}

static unsigned int parse_rights(const char *s)
{
	unsigned int r = 0;

	r |= strchr(s, 'r') ? RIGHT_R : 0;
	r |= strchr(s, 'w') ? RIGHT_W : 0;
	r |= strchr(s, 'a') ? RIGHT_A : 0;
	r |= strchr(s, 'x') ? FOREIGN : 0;
	return r;
}

/* A @what line has @want fields (it has @n), and room in its table. */
static void check_line(const char *what, int n, int want, int count, int max,
		       const char *things)
{
	if (n != want)
		tool_die("targets: a %s line has %d fields, not %d", what, want, n);
	if (count == max)
		tool_die("targets: more than %d %s", max, things);
}

static void parse_qp(char **w, int n)
{
	struct tqp *q = &tq[num_tq];
	uint64_t v[3], x;
	bool known = true;
	int i;

	check_line("qp", n, 12, num_tq, MAX_TARGETS, "QPs");
	memset(q, 0, sizeof(*q));
	parse_num(w[1], 0xffffff, &x);
	q->qpn = x;
	q->type = name_index(qtype_names, QT_OTHER, w[2], QT_OTHER);
	q->state = name_index(qstate_names, QS_ERR + 1, w[3], -1);
	if ((int)q->state < 0)
		tool_die("targets: unknown QP state '%s'", w[3]);
	for (i = 0; i < 3; i++)
		known &= parse_num(w[4 + i], PSN_MASK, &v[i]);
	q->psn_known = known;
	q->epsn = known ? v[0] : 0;
	q->npsn = known ? v[1] : 0;
	q->upsn = known ? v[2] : 0;
	q->fam = parse_num(w[7], 6, &x) ? (int)x : 0;
	q->qkey = parse_num(w[8], 0xffffffff, &x) ? x :
		  q->type == QT_GSI ? GSI_QKEY : 0;
	q->mtu = parse_num(w[9], 4096, &x) ? x : port_mtu;
	if (q->mtu < 256)
		q->mtu = 256;
	q->access = parse_rights(w[10]);
	q->orphan = !strcmp(w[11], "orphan");
	q->probe = !strcmp(w[11], "probe");
	q->m.epsn = q->epsn;
	q->m.upsn = q->upsn;
	num_tq++;
}

static void parse_key(char **w, int n)
{
	struct tkey *k = &keys[num_keys];
	uint64_t x;

	check_line("key", n, 6, num_keys, MAX_KEYS, "keys");
	memset(k, 0, sizeof(*k));
	parse_num(w[1], 0xffffffff, &x);
	k->rkey = x;
	parse_num(w[2], UINT64_MAX, &k->va);
	parse_num(w[3], UINT64_MAX, &k->len);
	k->rights = parse_rights(w[4]);
	k->bound = parse_num(w[5], 0xffffff, &x);
	k->qpn = x;
	num_keys++;
}

static void group_targets(void)
{
	bool clean[2] = { true, true };
	struct tqp *q;
	int i, f;

	for (i = 0; i < num_tq; i++) {
		q = &tq[i];
		if (q->probe)
			continue;
		group_add(&g_all, i);
		for (f = 0; f < 2; f++) {
			if (q->fam && q->fam != (f ? 6 : 4))
				continue;
			if ((q->type == QT_RC || q->type == QT_UC ||
			     q->type == QT_XRC_TGT) && takes_requests(q) &&
			    q->psn_known) {
				group_add(&g_req[f], i);
				/*
				 * Every other one is kept alive; not an
				 * orphan, whose completer gets garbage.
				 */
				if (!q->orphan) {
					q->clean = clean[f];
					clean[f] = !clean[f];
				}
			}
			if ((q->type == QT_RC || q->type == QT_XRC_INI) &&
			    takes_responses(q) && q->psn_known)
				group_add(q->orphan ? &g_orphan[f] : &g_resp[f], i);
		}
		if (q->type == QT_UD)
			group_add(&g_ud, i);
	}
}

void load_targets(const char *path)
{
	char line[1024], *w[16], *save, *tok;
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		tool_die("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		n = 0;
		for (tok = strtok_r(line, " \t\n", &save); tok && n < 16;
		     tok = strtok_r(NULL, " \t\n", &save))
			w[n++] = tok;
		if (!n || w[0][0] == '#')
			continue;
		if (!strcmp(w[0], "qp"))
			parse_qp(w, n);
		else if (!strcmp(w[0], "key"))
			parse_key(w, n);
		else if (!strcmp(w[0], "xsrq") && n == 2 && num_xsrq < MAX_XSRQ)
			xsrq[num_xsrq++] = tool_number(w[1], 0xffffff);
		else
			tool_die("targets: cannot read '%s'", w[0]);
	}
	fclose(f);
	group_targets();
}

struct tqp *find_qp(uint32_t qpn)
{
	int i;

	for (i = 0; i < num_tq; i++)
		if (tq[i].qpn == qpn)
			return &tq[i];
	return NULL;
}
