/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_VERBS_H
#define SROCE_VERBS_H

struct net_device;

int sroce_verbs_add(const char *name, struct net_device *ndev);
void sroce_verbs_netdev_gone(struct net_device *ndev);
void sroce_verbs_remove_all(void);

#endif /* SROCE_VERBS_H */
