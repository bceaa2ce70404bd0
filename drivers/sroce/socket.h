/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_SOCKET_H
#define SROCE_SOCKET_H

struct sock;
struct net;
struct sroce_dev;

int sroce_socket_attach(struct sroce_dev *sdev);
void sroce_socket_detach(struct sroce_dev *sdev);
void sroce_socket_detach_net(struct net *net);
struct sock *sroce_socket_sk(struct sroce_dev *sdev, bool ipv6);
int sroce_socket_init(void);
void sroce_socket_exit(void);

#endif /* SROCE_SOCKET_H */
