/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_KEY_H
#define SROCE_KEY_H

#include <linux/types.h>

struct sroce_dev;
struct sroce_mr;

/* What a key table entry is, in its pointer's tag. */
#define SROCE_KEY_MR	0
#define SROCE_KEY_MW	1

int sroce_key_alloc(struct sroce_dev *sdev, u32 *key);
void sroce_key_publish(struct sroce_dev *sdev, u32 key, void *obj, int tag);
void sroce_key_free(struct sroce_dev *sdev, u32 key);
struct sroce_mr *sroce_key_get_mr_locked(struct sroce_dev *sdev, u32 key);
struct sroce_mr *sroce_key_get_mr(struct sroce_dev *sdev, u32 key);

#endif /* SROCE_KEY_H */
