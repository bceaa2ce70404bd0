/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_FLIGHT_H
#define SROCE_FLIGHT_H

#include <linux/types.h>

struct sroce_qp;

bool sroce_flight_hold(struct sroce_qp *qp);
void sroce_flight_update(struct sroce_qp *qp);
void sroce_flight_clear(struct sroce_qp *qp);

#endif /* SROCE_FLIGHT_H */
