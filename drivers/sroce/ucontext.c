// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include <rdma/sroce-abi.h>

#include "device.h"
#include "ucontext.h"

/**
 * sroce_ucontext_alloc() - ib_device_ops.alloc_ucontext
 * @ibuc: the context, allocated by the RDMA core
 * @udata: response to the provider
 *
 * Return: 0 or a negative errno.
 */
int sroce_ucontext_alloc(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibuc->device);
	struct sroce_alloc_ucontext_resp resp = {
		.queue_data_offset = SROCE_QUEUE_DATA_OFFSET,
		.max_inline_data = SROCE_MAX_INLINE_DATA,
	};
	int err;

	err = sroce_dev_obj_get(sdev, SROCE_OBJ_UCONTEXT);
	if (err)
		return err;
	err = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
	if (err)
		sroce_dev_obj_put(sdev, SROCE_OBJ_UCONTEXT);
	return err;
}

/**
 * sroce_ucontext_dealloc() - ib_device_ops.dealloc_ucontext
 * @ibuc: the context; its objects are already destroyed
 */
void sroce_ucontext_dealloc(struct ib_ucontext *ibuc)
{
	sroce_dev_obj_put(to_sdev(ibuc->device), SROCE_OBJ_UCONTEXT);
}

/**
 * sroce_ucontext_disassociate() - ib_device_ops.disassociate_ucontext
 * @ibuc: a context whose device is going away while the process lives on
 *
 * Nothing to undo: the process's queue mappings keep their pages alive on
 * their own (see queue.c), and nothing else of ours is mapped. Having this
 * op lets the RDMA core remove a device without waiting for every process
 * that uses it to exit.
 */
void sroce_ucontext_disassociate(struct ib_ucontext *ibuc)
{
}
