// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Keys
 *
 * MRs and MWs share one key space (IBA 10.6.1): a key is a 24-bit index
 * into the device's key table and an 8-bit variant. The table holds each
 * object, tagged SROCE_KEY_MR or SROCE_KEY_MW, once it is complete, and
 * loses it before it is torn down. This file is the table alone: mr.c and
 * mw.c put their objects in it, mem.c finds and checks them for an access.
 */
#include <linux/random.h>

#include "device.h"
#include "key.h"
#include "mr.h"

/**
 * sroce_key_alloc() - reserve a key in the device's key table
 * @sdev: the device
 * @key: the new key: index in the upper 24 bits, a random variant below
 *
 * Return: 0, or -EBUSY/-ENOMEM when the table is full or memory is short.
 */
int sroce_key_alloc(struct sroce_dev *sdev, u32 *key)
{
	static u32 next = 1;	/* a hint; races are harmless */
	u32 index;
	int err;

	err = xa_alloc_cyclic_bh(&sdev->keys, &index, NULL,
				 XA_LIMIT(1, 0xffffff), &next, GFP_KERNEL);
	if (err < 0)
		return err;
	*key = index << 8 | get_random_u8();
	return 0;
}

/**
 * sroce_key_publish() - make a complete object findable by its key
 * @sdev: the device
 * @key: a key from sroce_key_alloc()
 * @obj: the MR or MW
 * @tag: SROCE_KEY_MR or SROCE_KEY_MW
 */
void sroce_key_publish(struct sroce_dev *sdev, u32 key, void *obj, int tag)
{
	xa_store_bh(&sdev->keys, key >> 8, xa_tag_pointer(obj, tag), GFP_KERNEL);
}

/**
 * sroce_key_free() - remove a key; lookups no longer find its object
 * @sdev: the device
 * @key: the key
 */
void sroce_key_free(struct sroce_dev *sdev, u32 key)
{
	xa_erase_bh(&sdev->keys, key >> 8);
}

/**
 * sroce_key_get_mr_locked() - the MR a key names, referenced
 * @sdev: the device
 * @key: an lkey or rkey
 *
 * Context: the key table's lock held.
 * Return: the MR, or NULL when no registered MR has exactly this key.
 */
struct sroce_mr *sroce_key_get_mr_locked(struct sroce_dev *sdev, u32 key)
{
	void *entry = xa_load(&sdev->keys, key >> 8);
	struct sroce_mr *mr;

	lockdep_assert_held(&sdev->keys.xa_lock);
	if (!entry || xa_pointer_tag(entry) != SROCE_KEY_MR)
		return NULL;
	mr = xa_untag_pointer(entry);
	if (mr->key != key || !refcount_inc_not_zero(&mr->ref))
		return NULL;
	return mr;
}

/**
 * sroce_key_get_mr() - the MR a key names, referenced
 * @sdev: the device
 * @key: an lkey or rkey
 *
 * Context: process or softirq, interrupts enabled (the key table's lock
 * is taken with xa_lock_bh()).
 * Return: the MR, or NULL when no registered MR has exactly this key.
 */
struct sroce_mr *sroce_key_get_mr(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mr *mr;

	xa_lock_bh(&sdev->keys);
	mr = sroce_key_get_mr_locked(sdev, key);
	xa_unlock_bh(&sdev->keys);
	return mr;
}
