// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The devices, and F's rings: finding libsroce's mappings of the uverbs
 * file, their geometry, slots and indices.
 */
#include "ringfuzz.h"

void dev_open(struct dev *d)
{
	struct stat st;

	d->ctx = tool_open_device(d->name);
	d->mtu = tool_port_mtu(d->ctx, d->name);
	tool_query_gid(d->ctx, d->name, d->gid_index, &d->gid);
	tool_nonblock(d->ctx->async_fd, d->name);
	if (fstat(d->ctx->cmd_fd, &st))
		tool_die("%s: fstat: %s", d->name, strerror(errno));
	d->map_dev = st.st_dev;
	d->map_ino = st.st_ino;
}

/* ------------------------------------------------------------------ */
/* Rings: finding the provider's mappings */

/* The mappings of @d's uverbs file in this process. */
int uverbs_maps(const struct dev *d, struct umap *m)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		tool_die("/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, ino;
		unsigned int maj, min;
		unsigned long long off;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s %llx %x:%x %lu", &start, &end,
			   perms, &off, &maj, &min, &ino) != 7)
			continue;
		if (makedev(maj, min) != d->map_dev || ino != d->map_ino)
			continue;
		if (n == MAX_MAPS)
			tool_die("more than %d uverbs mappings", MAX_MAPS);
		m[n++] = (struct umap){ start, end };
	}
	fclose(f);
	return n;
}

/* The mappings that are in @now and not in @before. */
int new_maps(const struct dev *d, const struct snapshot *before,
	     struct umap *out, int max)
{
	struct snapshot now;
	int i, j, n = 0;

	now.n = uverbs_maps(d, now.m);
	for (i = 0; i < now.n; i++) {
		for (j = 0; j < before->n; j++)
			if (before->m[j].start == now.m[i].start)
				break;
		if (j < before->n)
			continue;
		if (n == max)
			return max + 1;
		out[n++] = now.m[i];
	}
	return n;
}

void ring_set_map(struct ring *r, const char *name, struct umap m)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->hdr = (void *)m.start;
	r->data = (uint8_t *)m.start + SROCE_QUEUE_DATA_OFFSET;
	r->len = m.end - m.start;
}

static size_t page_align(size_t n)
{
	size_t page = sysconf(_SC_PAGESIZE);

	return (n + page - 1) / page * page;
}

/* Slots and slot size; @num as the kernel reported, @es found or known. */
void ring_set_geometry(struct ring *r, uint32_t num, uint32_t es)
{
	if (!num || (num & (num - 1)))
		tool_die("%s: %u slots is not a power of two", r->name, num);
	if (page_align(SROCE_QUEUE_DATA_OFFSET + (size_t)num * es) != r->len)
		tool_die("%s: %u slots of %u bytes do not make a mapping of %zu "
			 "bytes: ring geometry unknown", r->name, num, es, r->len);
	r->num = num;
	r->mask = num - 1;
	r->es = es;
}

void *slot(const struct ring *r, uint32_t i)
{
	return r->data + (size_t)(i & r->mask) * r->es;
}

/*
 * The slot size of a work queue whose slots @i and @i + 1 hold the
 * wr_ids @id0 and @id1 (a wr_id starts each entry).
 */
uint32_t find_entry_size(const struct ring *r, uint32_t num, uint32_t i,
			 uint64_t id0, uint64_t id1)
{
	uint32_t es;

	for (es = 64; es <= 65536; es += 64) {
		size_t o0 = (size_t)(i & (num - 1)) * es;
		size_t o1 = (size_t)((i + 1) & (num - 1)) * es;
		uint64_t v0, v1;

		if (SROCE_QUEUE_DATA_OFFSET + (size_t)num * es > r->len)
			break;
		memcpy(&v0, r->data + o0, 8);
		memcpy(&v1, r->data + o1, 8);
		if (v0 == id0 && v1 == id1)
			return es;
	}
	tool_die("%s: cannot find the discovery entries in the ring", r->name);
}

uint32_t load_idx(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

void store_idx(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* The index the kernel owns in @r. */
uint32_t *kernel_idx(struct ring *r, bool cq)
{
	return cq ? &r->hdr->producer : &r->hdr->consumer;
}
