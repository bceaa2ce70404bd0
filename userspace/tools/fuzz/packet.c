// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Packets: the transport headers and payload, the IP and UDP headers,
 * the ICRC and checksums; and the verdict sroce's receive path must reach
 * on each frame.
 */
#include "fuzz.h"

/* Build the transport headers, payload and pad of @f; return their length. */
uint32_t build_body(const struct fields *f, uint8_t *b)
{
	const struct opinfo *op = &ops[f->layout];
	uint32_t off = op->hdr_len;

	memset(b, 0, op->hdr_len);
	b[0] = f->opcode;
	b[1] = (f->se ? 0x80 : 0) | (f->mig ? 0x40 : 0) |
	       (f->pad & 3) << 4 | (f->tver & 0xf);
	put16(b + 2, f->pkey);
	b[4] = f->resv8a;
	put24(b + 5, f->qpn);
	b[8] = (f->ackreq ? 0x80 : 0) | (f->resv7 & 0x7f);
	put24(b + 9, f->psn);
	if (op->flags & F_XRCETH)
		put24(b + op->xrceth + 1, f->srqn);
	if (op->flags & F_DETH) {
		put32(b + op->deth, f->qkey);
		put24(b + op->deth + 5, f->sqp);
	}
	if (op->flags & F_FETH)
		put32(b + op->feth, f->feth);
	if (op->flags & (F_RETH | F_ATMETH)) {
		put64(b + op->reth, f->va);
		put32(b + op->reth + 8, f->rkey);
	}
	if (op->flags & F_RETH)
		put32(b + op->reth + 12, f->dmalen);
	if (op->flags & F_ATMETH) {
		put64(b + op->reth + 12, f->swap);
		put64(b + op->reth + 20, f->cmp);
	}
	if (op->flags & F_AETH) {
		b[op->aeth] = f->syndrome;
		put24(b + op->aeth + 1, f->msn);
	}
	if (op->flags & F_ATMACK)
		put64(b + op->atmack, f->orig);
	if (op->flags & (F_IMM | F_IETH))
		put32(b + op->immdt, f->imm);
	memcpy(b + off, pool + below(POOL_SIZE - f->paylen), f->paylen);
	if (f->mad && f->paylen >= 24) {
		/* base version 1; class, version, method set by the caller */
		b[off] = 1;
		b[off + 1] = f->imm >> 24;
		b[off + 2] = f->imm >> 16;
		b[off + 3] = f->imm >> 8;
		memset(b + off + 4, 0, 4);
		put16(b + off + 16, f->swap);	/* attribute ID */
		memset(b + off + 18, 0, 2);
	}
	off += f->paylen;
	if (f->pad_garbage)
		memcpy(b + off, pool + below(POOL_SIZE - 4), f->pad & 3);
	else
		memset(b + off, 0, f->pad & 3);
	return off + (f->pad & 3);
}

/* The frame's IP and UDP headers; return the offset of the BTH. */
static uint32_t build_ip_udp(const struct pkt *p, uint8_t *fr, uint32_t len)
{
	uint8_t *ip = fr + 14, *udp;
	uint32_t iplen = p->fam == 4 ? 20 : 40;

	memcpy(fr, net.dmac, 6);
	memcpy(fr + 6, net.smac, 6);
	put16(fr + 12, p->fam == 4 ? ETHERTYPE_IP : ETHERTYPE_IPV6);
	if (p->fam == 4) {
		ip[0] = 0x45;
		ip[1] = p->tclass;
		put16(ip + 2, 20 + 8 + len);
		put16(ip + 4, p->ipid);
		put16(ip + 6, p->ipid & 1 ? 0x4000 : 0);	/* DF */
		ip[8] = p->ttl;
		ip[9] = IPPROTO_UDP;
		put16(ip + 10, 0);
		memcpy(ip + 12, p->src, 4);
		memcpy(ip + 16, p->dst, 4);
		put16(ip + 10, csum_fold(csum_add(0, ip, 20)));
	} else {
		put32(ip, 6U << 28 | (uint32_t)p->tclass << 20 |
			  (p->flow & 0xfffff));
		put16(ip + 4, 8 + len);
		ip[6] = IPPROTO_UDP;
		ip[7] = p->ttl;
		memcpy(ip + 8, p->src, 16);
		memcpy(ip + 24, p->dst, 16);
	}
	udp = ip + iplen;
	put16(udp, p->sport);
	put16(udp + 2, ROCE_PORT);
	put16(udp + 4, 8 + len);
	put16(udp + 6, 0);
	return 14 + iplen + 8;
}

/*
 * The ICRC of a frame whose headers and body are in place (IBA Annex
 * A17.3.3, drivers/sroce/icrc.c): CRC-32 over eight bytes of ones (the
 * masked LRH), the IP header with TOS/traffic class, flow label, TTL/hop
 * limit and checksum masked to ones, the UDP header with its checksum
 * masked, the BTH with its FECN/BECN/reserved byte masked, and the rest
 * up to the ICRC; inverted, sent least significant byte first.
 */
static uint32_t icrc_of(const uint8_t *fr, int fam, uint32_t covered)
{
	static const uint8_t ones[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	};
	uint32_t iplen = fam == 4 ? 20 : 40, crc;
	uint8_t h[40 + 8 + 12];

	memcpy(h, fr + 14, iplen + 8 + 12);
	if (fam == 4) {
		h[1] = 0xff;
		h[8] = 0xff;
		h[10] = h[11] = 0xff;
	} else {
		h[0] |= 0x0f;
		h[1] = h[2] = h[3] = 0xff;
		h[7] = 0xff;
	}
	h[iplen + 6] = h[iplen + 7] = 0xff;
	h[iplen + 8 + 4] = 0xff;
	crc = crc_update(0xffffffff, ones, sizeof(ones));
	crc = crc_update(crc, h, iplen + 8 + 12);
	crc = crc_update(crc, fr + 14 + iplen + 8 + 12, covered - 12);
	return ~crc;
}

static uint16_t udp_csum(const uint8_t *fr, int fam, uint32_t udplen)
{
	const uint8_t *ip = fr + 14;
	uint32_t sum;
	uint8_t ph[8];

	if (fam == 4) {
		sum = csum_add(0, ip + 12, 8);
		put16(ph, IPPROTO_UDP);
		put16(ph + 2, udplen);
		sum = csum_add(sum, ph, 4);
		sum = csum_add(sum, ip + 20, udplen);
	} else {
		sum = csum_add(0, ip + 8, 32);
		put32(ph, udplen);
		put32(ph + 4, IPPROTO_UDP);
		sum = csum_add(sum, ph, 8);
		sum = csum_add(sum, ip + 40, udplen);
	}
	return csum_fold(sum) ?: 0xffff;
}

/* Assemble the whole frame of @p into @fr; return its length. */
uint32_t assemble(const struct pkt *p, uint8_t *fr)
{
	uint32_t len = p->body + (p->icrc == ICRC_NONE ? 0 : 4), off, icrc;
	uint16_t c, bad;
	uint8_t *udp;

	off = build_ip_udp(p, fr, len);
	memcpy(fr + off, p->roce, p->body);
	if (p->icrc != ICRC_NONE) {
		icrc = p->body >= 12 ? icrc_of(fr, p->fam, p->body) : 0;
		if (p->icrc == ICRC_BAD)
			icrc ^= 1U << below(32);
		fr[off + p->body] = icrc;
		fr[off + p->body + 1] = icrc >> 8;
		fr[off + p->body + 2] = icrc >> 16;
		fr[off + p->body + 3] = icrc >> 24;
	}
	udp = fr + off - 8;
	if (p->csum == CSUM_ZERO && p->fam == 4)
		return off + len;
	c = udp_csum(fr, p->fam, 8 + len);
	if (p->csum == CSUM_BAD) {
		bad = c ^ 0x0101;
		if (bad == 0 || bad == 0xffff)
			bad = c ^ 0x0202;
		c = bad;
	}
	put16(udp + 6, c);
	return off + len;
}

static bool qp_takes(const struct tqp *q, uint32_t flags)
{
	uint32_t tr;

	switch (q->type) {
	case QT_RC:
		tr = F_RC;
		break;
	case QT_UC:
		tr = F_UC;
		break;
	case QT_XRC_INI:
		tr = F_XRC | F_RESP;
		break;
	case QT_XRC_TGT:
		tr = F_XRC | F_REQ;
		break;
	default:
		tr = F_UD;
		break;
	}
	if ((flags & tr) != tr)
		return false;
	return flags & F_REQ ? takes_requests(q) : takes_responses(q);
}

enum verdict classify(const struct pkt *p, const uint8_t *fr)
{
	uint32_t off = 14 + (p->fam == 4 ? 20 : 40) + 8, len, tail, paylen;
	const uint8_t *b = fr + off;
	const struct opinfo *op;
	const struct tqp *q;
	uint32_t icrc, qpn;

	if (p->csum == CSUM_BAD)
		return V_UDP_CSUM;
	len = p->body + (p->icrc == ICRC_NONE ? 0 : 4);
	if (len < 12)
		return V_HEADER;
	op = &ops[b[0]];
	if (!(op->flags & F_VALID) || (b[1] & 0xf) || len < op->hdr_len ||
	    (get16(b + 2) & 0x7fff) != 0x7fff)
		return V_HEADER;
	tail = (b[1] >> 4 & 3) + 4;
	if (len < op->hdr_len + tail)
		return V_HEADER;
	paylen = len - op->hdr_len - tail;
	if (paylen && !(op->flags & F_PAYLOAD))
		return V_HEADER;
	icrc = b[len - 4] | b[len - 3] << 8 | b[len - 2] << 16 |
	       (uint32_t)b[len - 1] << 24;
	if (icrc != icrc_of(fr, p->fam, len - 4))
		return V_ICRC;
	qpn = get32(b + 4) & 0xffffff;
	if (qpn == MCAST_QPN)
		return op->flags & F_UD ? V_NO_QP : V_HEADER;
	q = find_qp(qpn);
	if (!q)
		return V_NO_QP;
	if (!qp_takes(q, op->flags))
		return V_QP_STATE;
	/* A connected QP takes packets from its peer, to its own address. */
	if (!(op->flags & F_UD))
		return q->fam && (p->spoofed || p->fam != q->fam) ? V_ADDR :
		       V_DEEP;
	if (get32(b + op->deth) != q->qkey)
		return V_UD_QKEY;
	return paylen > q->mtu ? V_UD_LONG : V_UD;
}
