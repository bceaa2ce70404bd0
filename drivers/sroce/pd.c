// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include <rdma/sroce-abi.h>

#include "device.h"
#include "params.h"
#include "pd.h"

/**
 * sroce_pd_alloc() - ib_device_ops.alloc_pd
 * @ibpd: the PD, allocated by the RDMA core
 * @udata: response to the provider, or NULL for a kernel PD
 *
 * Return: 0 or a negative errno.
 */
int sroce_pd_alloc(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_pd *pd = to_spd(ibpd);
	struct sroce_alloc_pd_resp resp = {};
	int err;

	err = sroce_dev_obj_get(sdev, SROCE_OBJ_PD);
	if (err)
		return err;
	err = ida_alloc_range(&sdev->pd_ida, 1, SROCE_MAX_PD, GFP_KERNEL);
	if (err < 0)
		goto err_put;
	pd->pdn = err;

	if (udata) {
		resp.pdn = pd->pdn;
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (err)
			goto err_ida;
	}
	return 0;

err_ida:
	ida_free(&sdev->pd_ida, pd->pdn);
err_put:
	sroce_dev_obj_put(sdev, SROCE_OBJ_PD);
	return err;
}

/**
 * sroce_pd_dealloc() - ib_device_ops.dealloc_pd
 * @ibpd: the PD; the RDMA core has checked that nothing uses it
 * @udata: unused
 *
 * Return: 0.
 */
int sroce_pd_dealloc(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);

	ida_free(&sdev->pd_ida, to_spd(ibpd)->pdn);
	sroce_dev_obj_put(sdev, SROCE_OBJ_PD);
	return 0;
}
