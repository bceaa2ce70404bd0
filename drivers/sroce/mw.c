// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Memory windows
 *
 * A window takes a key from the MR key space (mr.c) when allocated and is
 * unbound, so it grants no access, until a bind (IBA 10.6.7).
 */
#include "device.h"
#include "mr.h"
#include "mw.h"

/**
 * sroce_mw_alloc() - ib_device_ops.alloc_mw
 * @ibmw: the MW, allocated by the RDMA core, with its type set
 * @udata: unused
 *
 * Return: 0 or a negative errno.
 */
int sroce_mw_alloc(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	err = sroce_dev_obj_get(sdev, SROCE_OBJ_MW);
	if (err)
		return err;
	err = sroce_key_alloc(sdev, &ibmw->rkey);
	if (err) {
		sroce_dev_obj_put(sdev, SROCE_OBJ_MW);
		return err;
	}
	sroce_key_publish(sdev, ibmw->rkey, container_of(ibmw, struct sroce_mw,
							 ibmw), SROCE_KEY_MW);
	return 0;
}

/**
 * sroce_mw_dealloc() - ib_device_ops.dealloc_mw
 * @ibmw: the MW
 *
 * Return: 0.
 */
int sroce_mw_dealloc(struct ib_mw *ibmw)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);

	sroce_key_free(sdev, ibmw->rkey);
	sroce_dev_obj_put(sdev, SROCE_OBJ_MW);
	return 0;
}
