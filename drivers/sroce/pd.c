// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Protection domains, and kernel consumers pinning the module
 *
 * A PD is a number from the device's IDA; the RDMA core keeps everything
 * else.
 *
 * A kernel upper-layer protocol (nvme-rdma, nvmet-rdma, rds_rdma, ...)
 * that holds a PD of a sroce device pins the module: `rmmod sroce` then
 * fails with EBUSY instead of unregistering the device under a live
 * NVMe controller or RDS connection. Every kernel consumer starts with a
 * PD (ib_alloc_pd()) and gives it back last, so a PD is where its use of
 * the device begins and ends. What does not pin:
 *
 * - user PDs (@udata set): a process's objects are destroyed for it when
 *   its device goes (the device implements disassociate_ucontext), so
 *   rmmod never waits for a process;
 * - the RDMA core's own PDs, that is the MAD layer's PD of each port
 *   (the GSI QP's), which lives exactly as long as the device is
 *   registered: pinning it would make rmmod with devices present
 *   impossible, and rmmod must remove idle devices.
 *
 * __ib_alloc_pd() names a kernel PD's owner (ibpd->res.kern_name, the
 * caller's KBUILD_MODNAME, through ib_alloc_pd()) before it calls
 * ib_device_ops.alloc_pd, on every kernel sroce builds for; the RDMA core's
 * PDs are those named "ib_core". The reference is dropped when the PD is
 * deallocated, which a consumer also does when the device is removed by
 * other means (`rdma link del`, the netdev going away): its ib_client
 * remove callback runs first.
 */
#include <linux/module.h>
#include <linux/string.h>
#include <rdma/sroce-abi.h>

#include "device.h"
#include "params.h"
#include "pd.h"

/* The RDMA core's KBUILD_MODNAME, which names its own kernel PDs. */
#define SROCE_RDMA_CORE_NAME "ib_core"

/*
 * Does this PD pin the module? Only a kernel PD whose owner is not the
 * RDMA core does; see the DOC comment above.
 */
static bool pd_pins_module(const struct ib_pd *ibpd,
			   const struct ib_udata *udata)
{
	const char *owner = ibpd->res.kern_name;

	if (udata)
		return false;
	return !owner || strcmp(owner, SROCE_RDMA_CORE_NAME);
}

/**
 * sroce_pd_alloc() - ib_device_ops.alloc_pd
 * @ibpd: the PD, allocated by the RDMA core
 * @udata: response to the provider, or NULL for a kernel PD
 *
 * A kernel PD of an upper-layer protocol takes a reference on the module
 * (see "Protection domains, and kernel consumers pinning the module").
 *
 * Return: 0 or a negative errno: -ENODEV if the module is being unloaded
 * and the PD would pin it, -ENOMEM past the device's PD limit.
 */
int sroce_pd_alloc(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_pd *pd = to_spd(ibpd);
	struct sroce_alloc_pd_resp resp = {};
	int err;

	pd->pins_module = pd_pins_module(ibpd, udata);
	if (pd->pins_module && !try_module_get(THIS_MODULE))
		return -ENODEV;
	err = sroce_dev_obj_get(sdev, SROCE_OBJ_PD);
	if (err)
		goto err_module;
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
err_module:
	if (pd->pins_module)
		module_put(THIS_MODULE);
	return err;
}

/**
 * sroce_pd_dealloc() - ib_device_ops.dealloc_pd
 * @ibpd: the PD; the RDMA core has checked that nothing uses it
 * @udata: unused
 *
 * Drops the module reference sroce_pd_alloc() took for the PD, if any.
 *
 * Return: 0.
 */
int sroce_pd_dealloc(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_pd *pd = to_spd(ibpd);

	ida_free(&sdev->pd_ida, pd->pdn);
	sroce_dev_obj_put(sdev, SROCE_OBJ_PD);
	if (pd->pins_module)
		module_put(THIS_MODULE);
	return 0;
}

/**
 * sroce_xrcd_alloc() - ib_device_ops.alloc_xrcd
 * @ibxrcd: the XRC domain, allocated by the RDMA core
 * @udata: unused; the domain has no state of ours to report
 *
 * Return: 0, or -ENOMEM past the device's limit.
 */
int sroce_xrcd_alloc(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return sroce_dev_obj_get(to_sdev(ibxrcd->device), SROCE_OBJ_XRCD);
}

/**
 * sroce_xrcd_dealloc() - ib_device_ops.dealloc_xrcd
 * @ibxrcd: the XRC domain; the RDMA core has checked that nothing uses it
 * @udata: unused
 *
 * Return: 0.
 */
int sroce_xrcd_dealloc(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	sroce_dev_obj_put(to_sdev(ibxrcd->device), SROCE_OBJ_XRCD);
	return 0;
}
