// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Sending in sendmmsg() batches at --rate, the counts by verdict, --dump
 * lines, and --probe.
 */
#include "fuzz.h"

double elapsed(void)
{
	return tool_now() - tx.start;
}

void open_socket(const char *ifname)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct ifreq ifr = { 0 };
	int one = 1 << 22, i;

	tx.fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (tx.fd < 0)
		tool_die("socket(AF_PACKET): %s", strerror(errno));
	tx.ifindex = if_nametoindex(ifname);
	if (!tx.ifindex)
		tool_die("no interface %s", ifname);
	sll.sll_ifindex = tx.ifindex;
	if (bind(tx.fd, (struct sockaddr *)&sll, sizeof(sll)))
		tool_die("bind %s: %s", ifname, strerror(errno));
	setsockopt(tx.fd, SOL_SOCKET, SO_SNDBUF, &one, sizeof(one));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(tx.fd, SIOCGIFHWADDR, &ifr))
		tool_die("SIOCGIFHWADDR %s: %s", ifname, strerror(errno));
	memcpy(net.smac, ifr.ifr_hwaddr.sa_data, 6);
	if (ioctl(tx.fd, SIOCGIFMTU, &ifr))
		tool_die("SIOCGIFMTU %s: %s", ifname, strerror(errno));
	net.max_roce[0] = ifr.ifr_mtu - 20 - 8;
	net.max_roce[1] = ifr.ifr_mtu - 40 - 8;
	for (i = 0; i < 2; i++) {
		tx.sll[i] = sll;
		tx.sll[i].sll_protocol = htons(i ? ETHERTYPE_IPV6 : ETHERTYPE_IP);
		tx.sll[i].sll_halen = 6;
		memcpy(tx.sll[i].sll_addr, net.dmac, 6);
	}
}

static void account(unsigned int i)
{
	struct verdicts *st = &tx.st;

	st->v[tx.v[i]]++;
	st->cls[tx.cls[i]]++;
	st->op[tx.opcode[i]]++;
	st->fam[tx.fam[i] == 6]++;
	st->spoofed += tx.spoofed[i];
	st->sent++;
	st->bytes += tx.roce_len[i];
}

/* Send the batch; every frame, or die. */
void flush(void)
{
	unsigned int done = 0, i, stalls = 0;
	double due;
	int r;

	while (!tx.dry && done < tx.n) {
		r = sendmmsg(tx.fd, tx.msg + done, tx.n - done, 0);
		if (r > 0) {
			done += r;
			stalls = 0;
			continue;
		}
		if (r < 0 && errno != ENOBUFS && errno != EAGAIN &&
		    errno != EINTR) {
			fprintf(stderr, "sroce-fuzz: sendmmsg: %s\n",
				strerror(errno));
			exit(1);
		}
		if (++stalls > 10000) {
			fprintf(stderr, "sroce-fuzz: sendmmsg stalled: %s\n",
				strerror(errno));
			exit(1);
		}
		tool_sleep_us(1000);
	}
	for (i = 0; i < tx.n; i++)
		account(i);
	tx.n = 0;
	if (!tx.rate)
		return;
	due = (double)tx.st.sent / tx.rate - elapsed();
	if (due > 0)
		tool_sleep_us(due * 1e6);
}

static void print_addr(const struct pkt *p, char *buf, size_t len)
{
	inet_ntop(p->fam == 4 ? AF_INET : AF_INET6, p->src, buf, len);
}

void dump(uint64_t index, const struct gen *g, enum verdict v,
	  const uint8_t *fr, uint32_t len)
{
	const struct pkt *p = g->p;
	char src[INET6_ADDRSTRLEN];
	uint32_t i;

	print_addr(p, src, sizeof(src));
	printf("pkt %" PRIu64 " t=%.3f %s ipv%d src=%s%s op=%s qpn=0x%06x"
	       " psn=0x%06x len=%u verdict=%s\n", index, elapsed(),
	       cls_names[g->cls], p->fam, src,
	       p->spoofed ? "(spoofed)" : "",
	       p->body ? ops[p->roce[0]].name : "-", g->f.qpn, g->f.psn,
	       p->body + (p->icrc == ICRC_NONE ? 0 : 4), verdict_names[v]);
	if (!tx.hex)
		return;
	for (i = 0; i < len; i++)
		printf("%02x%s", fr[i], i + 1 == len || i % 32 == 31 ? "\n" : "");
}

/* Queue the frame just generated into slot tx.n. */
void enqueue(uint64_t index, const struct gen *g, enum verdict v,
	     uint32_t len)
{
	unsigned int i = tx.n;
	const struct pkt *p = g->p;

	if (len > 14 + net.max_roce[p->fam == 6] + (p->fam == 6 ? 48 : 28))
		tool_die("packet %" PRIu64 ": a frame of %u bytes (a bug here)",
			 index, len);
	if (tx.dump)
		dump(index, g, v, tx.frame[i], len);
	tx.iov[i].iov_base = tx.frame[i];
	tx.iov[i].iov_len = len;
	tx.msg[i].msg_hdr = (struct msghdr){
		.msg_name = &tx.sll[p->fam == 6],
		.msg_namelen = sizeof(tx.sll[0]),
		.msg_iov = &tx.iov[i],
		.msg_iovlen = 1,
	};
	tx.v[i] = v;
	tx.cls[i] = g->cls;
	tx.fam[i] = p->fam;
	tx.spoofed[i] = p->spoofed;
	tx.opcode[i] = p->body ? p->roce[0] : g->f.opcode;
	tx.roce_len[i] = p->body + (p->icrc == ICRC_NONE ? 0 : 4);
	if (++tx.n == tx.batch)
		flush();
}

/*
 * --probe QPN:PSN:COUNT[:KIND] --probe-src IP: COUNT requests at QPN, at
 * PSN, PSN + 1..., from IP (its family chooses the destination address):
 * valid SEND ONLY requests of 8 bytes (KIND send, the default), or RDMA
 * WRITE FIRST with a DMA length of 0 and a path MTU of payload (write0).
 * See the header.
 */
void probe(const char *spec, const char *src)
{
	static struct pkt p;
	unsigned int qpn, psn, count, i;
	char kind[16] = "send";
	struct tqp *q;
	struct gen g;
	bool write0;

	if (sscanf(spec, "%i:%i:%u:%15s", &qpn, &psn, &count, kind) < 3 ||
	    (strcmp(kind, "send") && strcmp(kind, "write0")))
		tool_die("--probe takes QPN:PSN:COUNT[:send|write0]");
	write0 = !strcmp(kind, "write0");
	q = find_qp(qpn);
	memset(&p, 0, sizeof(p));
	p.fam = strchr(src, ':') ? 6 : 4;
	parse_ip(src, p.fam, p.src);
	memcpy(p.dst, p.fam == 4 ? net.dst4 : net.dst6, p.fam == 4 ? 4 : 16);
	p.spoofed = memcmp(p.src, p.fam == 4 ? net.src4 : net.src6,
			   p.fam == 4 ? 4 : 16);
	p.ttl = 64;
	p.sport = 0xc000;
	for (i = 0; i < count; i++) {
		memset(&g, 0, sizeof(g));
		g.p = &p;
		g.fam_idx = p.fam == 6;
		fields_init(&g, (q ? transport_of(q) : TR_RC) |
			    (write0 ? OP_WRITE_FIRST : OP_SEND_ONLY), qpn,
			    psn + i);
		g.f.ackreq = true;
		if (write0 && num_keys) {
			g.f.rkey = keys[0].rkey;
			g.f.va = keys[0].va;
		}
		set_paylen(&g, write0 ? (q ? q->mtu : port_mtu) : 8);
		p.body = build_body(&g.f, p.roce);
		p.icrc = ICRC_GOOD;
		p.csum = CSUM_GOOD;
		enqueue(i, &g, V_DEEP, assemble(&p, tx.frame[tx.n]));
	}
	flush();
	printf("sroce-fuzz: probe: %u %s at QP 0x%x from %s, PSN 0x%06x on\n",
	       count, write0 ? "WRITE FIRST, DMA length 0," : "SEND ONLY",
	       qpn, src, psn & PSN_MASK);
}
