/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_ODP_TABLE_H
#define SROCE_ODP_TABLE_H

#include <linux/spinlock.h>
#include <linux/types.h>

struct ib_umem_odp;
struct mmu_notifier_range;

int sroce_odp_table_fault(struct ib_umem_odp *odp, unsigned long *map,
			  spinlock_t *lock, unsigned long va,
			  unsigned long end, bool write, bool fault);
void sroce_odp_table_clear(struct ib_umem_odp *odp, unsigned long *map,
			   spinlock_t *lock,
			   const struct mmu_notifier_range *range);
void *sroce_odp_table_page(struct ib_umem_odp *odp, unsigned long *map,
			   unsigned long va, bool write);

#endif /* SROCE_ODP_TABLE_H */
