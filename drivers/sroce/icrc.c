// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Invariant CRC
 *
 * Every RoCEv2 packet ends with a 4-byte ICRC (IBA 7.8.1, Annex A17.3.3):
 * a CRC-32 (the Ethernet polynomial) over the packet from the IP header
 * to the end of the padding, with the fields that routers may change
 * masked to all ones: IPv4 TOS, TTL and header checksum; IPv6 traffic
 * class, flow label and hop limit; the UDP checksum; the BTH's FECN, BECN
 * and reserved byte. The CRC starts as if it had already run over the
 * eight bytes of ones that stand for InfiniBand's masked LRH. The result
 * is inverted and sent least significant byte first.
 *
 * Packets between two QPs of one host (loopback) never reach a wire and
 * carry no ICRC check.
 *
 * Two implementations of the CRC-32 give the same result: the library's
 * crc32_le(), table-driven on some kernels, and the crypto API's "crc32"
 * (crc32-pclmul where the CPU has carry-less multiplication). Which one is
 * faster depends on the machine: on real x86 hardware PCLMUL is several
 * times faster than a table, but an emulated CPU (QEMU's TCG) runs the
 * table faster. As the kernel's RAID6 and XOR code do, module load times
 * both over a buffer and keeps the faster (sroce_icrc_init()); the module
 * parameter "icrc" shows the choice and may change it at any time (lib,
 * crypto, or auto to measure again), which is safe under traffic since
 * both compute the same value.
 */
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/skbuff.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/udp.h>

#include "icrc.h"
#include "wire.h"

/* crc32_le(~0, eight 0xff bytes): the masked LRH (IBA 7.8.1). */
#define ICRC_SEED	0xdebb20e3

/*
 * The buffer each implementation is timed over at module load, in calls
 * of at most a packet's payload (the per-call cost counts: the crypto
 * API's saves the FPU state each time), and how many times, the two
 * taking turns, so that a host busy for a while slows both alike.
 */
#define ICRC_BENCH_BYTES	16384
#define ICRC_BENCH_CALL		4096
#define ICRC_BENCH_RUNS		8

enum icrc_impl {
	ICRC_AUTO,
	ICRC_LIB,
	ICRC_CRYPTO,
};

/* Serializes the choice: module load and unload, parameter writes. */
static DEFINE_MUTEX(icrc_lock);
/* The crypto API's "crc32", if it has one that agrees with crc32_le(). */
static struct crypto_shash *icrc_tfm;
/* Use it (true only while icrc_tfm is there). */
static bool icrc_crypto __read_mostly;
/* What the parameter asked for at load, and whether the load is over. */
static enum icrc_impl icrc_want;
static bool icrc_ready;

static u32 icrc_crypto_update(u32 crc, const void *buf, unsigned int len)
{
	SHASH_DESC_ON_STACK(desc, icrc_tfm);

	desc->tfm = icrc_tfm;
	/* "crc32" keeps the plain CRC as its state (statesize 4, checked). */
	if (crypto_shash_import(desc, &crc) ||
	    crypto_shash_update(desc, buf, len) ||
	    crypto_shash_export(desc, &crc))
		WARN_ON_ONCE(1);
	return crc;
}

static u32 icrc_update(u32 crc, const void *buf, unsigned int len)
{
	if (READ_ONCE(icrc_crypto))
		return icrc_crypto_update(crc, buf, len);
	return crc32_le(crc, buf, len);
}

/* CRC of the masked IP, UDP and BTH headers. */
static u32 icrc_headers(const struct sk_buff *skb, const struct sroce_bth *bth)
{
	u8 buf[sizeof(struct ipv6hdr) + sizeof(struct udphdr) +
	       sizeof(struct sroce_bth)];
	const struct iphdr *iph = (const struct iphdr *)skb_network_header(skb);
	unsigned int iplen;
	struct udphdr *udph;
	struct sroce_bth *b;

	if (iph->version == 4) {
		struct iphdr *ip4 = (struct iphdr *)buf;

		iplen = sizeof(*ip4);
		memcpy(ip4, iph, iplen);
		ip4->tos = 0xff;
		ip4->ttl = 0xff;
		ip4->check = CSUM_MANGLED_0;
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)buf;

		iplen = sizeof(*ip6);
		memcpy(ip6, iph, iplen);
		ip6->priority = 0xf;
		memset(ip6->flow_lbl, 0xff, sizeof(ip6->flow_lbl));
		ip6->hop_limit = 0xff;
	}
	udph = (struct udphdr *)(buf + iplen);
	memcpy(udph, skb_transport_header(skb), sizeof(*udph));
	udph->check = CSUM_MANGLED_0;
	b = (struct sroce_bth *)(udph + 1);
	memcpy(b, bth, sizeof(*b));
	b->qpn |= cpu_to_be32(SROCE_BTH_RESV8A_MASK);

	return crc32_le(ICRC_SEED, buf, iplen + sizeof(*udph) + sizeof(*b));
}

/**
 * sroce_icrc_compute() - the ICRC a packet must carry
 * @skb: the packet, with its network and transport headers set, and the
 *       IP, UDP and BTH headers in its linear part
 * @bth_off: offset of the BTH from skb->data
 * @len: bytes covered from the BTH on: headers, payload and padding
 *
 * Return: the ICRC, to be stored or compared least significant byte first.
 */
u32 sroce_icrc_compute(struct sk_buff *skb, unsigned int bth_off,
		       unsigned int len)
{
	const struct sroce_bth *bth = (const void *)(skb->data + bth_off);
	struct skb_seq_state st;
	unsigned int done = 0, n;
	const u8 *data;
	u32 crc;

	crc = icrc_headers(skb, bth);
	/*
	 * The rest, in the linear part, the page fragments and frag_list. A
	 * block may run past the upper offset (skb_seq_read() stops only
	 * at the next call): the ICRC field itself must not be covered.
	 */
	bth_off += sizeof(*bth);
	len -= sizeof(*bth);
	skb_prepare_seq_read(skb, bth_off, bth_off + len, &st);
	while (done < len && (n = skb_seq_read(done, &data, &st))) {
		n = min(n, len - done);
		crc = icrc_update(crc, data, n);
		done += n;
	}
	skb_abort_seq_read(&st);
	return ~crc;
}

/* Where the timed CRCs go, so that they are computed. */
static u32 icrc_bench_sink;

/* Nanoseconds one run over @buf took, in calls of ICRC_BENCH_CALL. */
static u64 icrc_time(const u8 *buf, bool crypto)
{
	u32 crc = ~0U;
	const u8 *p;
	u64 t;
	int i;

	/*
	 * crc32_le() is pure: hide its input and use its result, or the
	 * compiler computes it once, or never.
	 */
	p = buf;
	OPTIMIZER_HIDE_VAR(p);
	preempt_disable();
	t = ktime_get_ns();
	for (i = 0; i < ICRC_BENCH_BYTES; i += ICRC_BENCH_CALL) {
		if (crypto)
			crc = icrc_crypto_update(crc, p + i, ICRC_BENCH_CALL);
		else
			crc = crc32_le(crc, p + i, ICRC_BENCH_CALL);
	}
	t = ktime_get_ns() - t;
	WRITE_ONCE(icrc_bench_sink, crc);
	preempt_enable();
	return t;
}

/* Time both implementations and keep the faster. */
static void icrc_choose(void)
{
	const char *fast, *slow;
	u64 t_lib, t_crypto;
	u8 *buf;
	int i;

	lockdep_assert_held(&icrc_lock);
	if (!icrc_tfm)
		return;
	buf = kmalloc(ICRC_BENCH_BYTES, GFP_KERNEL);
	if (!buf)
		return;
	for (i = 0; i < ICRC_BENCH_BYTES; i++)
		buf[i] = i * 7;
	t_lib = U64_MAX;
	t_crypto = U64_MAX;
	for (i = 0; i < ICRC_BENCH_RUNS; i++) {
		t_lib = min(t_lib, icrc_time(buf, false));
		t_crypto = min(t_crypto, icrc_time(buf, true));
	}
	kfree(buf);
	WRITE_ONCE(icrc_crypto, t_crypto < t_lib);
	fast = crypto_shash_driver_name(icrc_tfm);
	slow = "crc32_le";
	if (t_crypto >= t_lib)
		swap(fast, slow);
	pr_info("sroce: ICRC by %s (%llu ns for %u bytes; %s %llu ns)\n", fast,
		min(t_lib, t_crypto), ICRC_BENCH_BYTES, slow, max(t_lib, t_crypto));
}

/* Use what @want names; -ENODEV if it is the crypto API's and none. */
static int icrc_apply(enum icrc_impl want)
{
	lockdep_assert_held(&icrc_lock);
	switch (want) {
	case ICRC_LIB:
		WRITE_ONCE(icrc_crypto, false);
		return 0;
	case ICRC_CRYPTO:
		if (!icrc_tfm)
			return -ENODEV;
		WRITE_ONCE(icrc_crypto, true);
		return 0;
	default:
		icrc_choose();
		return 0;
	}
}

static int icrc_param_set(const char *val, const struct kernel_param *kp)
{
	enum icrc_impl want;
	int err = 0;

	if (sysfs_streq(val, "auto"))
		want = ICRC_AUTO;
	else if (sysfs_streq(val, "lib"))
		want = ICRC_LIB;
	else if (sysfs_streq(val, "crypto"))
		want = ICRC_CRYPTO;
	else
		return -EINVAL;
	mutex_lock(&icrc_lock);
	/* At load, before sroce_icrc_init(): it applies the wish. */
	if (icrc_ready)
		err = icrc_apply(want);
	else
		icrc_want = want;
	mutex_unlock(&icrc_lock);
	return err;
}

static int icrc_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", READ_ONCE(icrc_crypto) ? "crypto" : "lib");
}

static const struct kernel_param_ops icrc_param_ops = {
	.set = icrc_param_set,
	.get = icrc_param_get,
};

module_param_cb(icrc, &icrc_param_ops, NULL, 0644);
MODULE_PARM_DESC(icrc, "CRC-32 of the ICRC: lib (crc32_le), crypto (the crypto API's crc32), auto (the faster, timed; the default); reads lib or crypto");

/**
 * sroce_icrc_init() - choose the CRC-32 implementation
 *
 * Takes the crypto API's "crc32" if it has one whose result agrees with
 * crc32_le(), then applies the module parameter "icrc" given at load: by
 * default the faster of the two. Without the crypto one, or if it
 * disagrees, crc32_le() is used. Never fails.
 */
void sroce_icrc_init(void)
{
	static const u8 check[] = "123456789";
	struct crypto_shash *tfm;

	mutex_lock(&icrc_lock);
	icrc_ready = true;
	tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(tfm)) {
		pr_info("sroce: ICRC by crc32_le (no crypto crc32: %ld)\n",
			PTR_ERR(tfm));
		goto out;
	}
	icrc_tfm = tfm;
	if (crypto_shash_statesize(tfm) != sizeof(u32) ||
	    icrc_crypto_update(~0U, check, sizeof(check) - 1) !=
	    crc32_le(~0U, check, sizeof(check) - 1)) {
		pr_warn("sroce: the crypto API's crc32 (%s) disagrees with crc32_le: not used\n",
			crypto_shash_driver_name(tfm));
		icrc_tfm = NULL;
		crypto_free_shash(tfm);
	}
out:
	if (icrc_apply(icrc_want))
		pr_warn("sroce: icrc=crypto, but the crypto API has no usable crc32: crc32_le it is\n");
	mutex_unlock(&icrc_lock);
}

/**
 * sroce_icrc_exit() - release what sroce_icrc_init() took
 *
 * Context: no packet is being built or received any more.
 */
void sroce_icrc_exit(void)
{
	mutex_lock(&icrc_lock);
	WRITE_ONCE(icrc_crypto, false);
	if (icrc_tfm)
		crypto_free_shash(icrc_tfm);
	icrc_tfm = NULL;
	icrc_ready = false;
	mutex_unlock(&icrc_lock);
}
