/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_AH_H
#define SROCE_AH_H

#include <linux/if_ether.h>
#include <linux/in6.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

struct sroce_dev;

/**
 * struct sroce_av - where packets go: a resolved RoCEv2 address vector
 * @sgid: source GID (IPv4-mapped for IPv4)
 * @dgid: destination GID (IPv4-mapped for IPv4)
 * @flow_label: IPv6 flow label
 * @sgid_index: index of @sgid in the port's GID table
 * @hop_limit: IP TTL or hop limit
 * @traffic_class: IP DSCP/ECN byte
 * @sl: service level
 * @network_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6
 * @dmac: next-hop MAC address, resolved by the RDMA core
 */
struct sroce_av {
	struct in6_addr sgid;
	struct in6_addr dgid;
	u32 flow_label;
	u8 sgid_index;
	u8 hop_limit;
	u8 traffic_class;
	u8 sl;
	u8 network_type;
	u8 dmac[ETH_ALEN];
};

/**
 * struct sroce_ah - an address handle
 * @ibah: the RDMA core's AH
 * @av: its address vector; constant after creation
 * @ah_num: number in the device's AH table, for UD work requests
 */
struct sroce_ah {
	struct ib_ah ibah;
	struct sroce_av av;
	u32 ah_num;
};

static inline struct sroce_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibah);
}

bool sroce_av_is_peer(const struct sroce_av *av, const struct sk_buff *skb);
int sroce_av_from_attr(struct sroce_av *av, const struct rdma_ah_attr *attr);
void sroce_av_to_attr(const struct sroce_av *av, struct rdma_ah_attr *attr);
int sroce_ah_create(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		    struct ib_udata *udata);
int sroce_ah_destroy(struct ib_ah *ibah, u32 flags);
int sroce_ah_query(struct ib_ah *ibah, struct rdma_ah_attr *attr);

#endif /* SROCE_AH_H */
