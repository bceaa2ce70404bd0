# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""sroce's pyverbs tests of what rdma-core's own tests leave out.

Run with tests/lib-pyverbs.py, as a module of a copy of rdma-core's tests/
directory (copy this file into it as test_sroce_ext.py):

  SrqResizeTest   WQEs posted before an SRQ resize are consumed from the
                  new ring, in order, into their own buffers; posting goes
                  on in the new ring; a resize the waiting WQEs do not fit
                  is refused and leaves the SRQ working; a new size with
                  a limit past it changes neither
  ReregTest       rereg_mr: the rights change in place with the same keys;
                  a new translation, or write rights for memory pinned
                  read-only, registers anew with new keys and the old rkey
                  no longer works; rereg is refused (EBUSY) while a window
                  is bound to the MR

Every message is checked byte for byte, and every completion's status,
opcode and length.
"""
import errno

from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.mem_alloc import posix_memalign, free
from pyverbs.mr import MR, MW, MWBindInfo, MWBind
from pyverbs.qp import QPAttr
from pyverbs.srq import SrqAttr
from pyverbs.wr import SGE, RecvWR, SendWR
import pyverbs.enums as e

from tests.base import RCResources, RDMATestCase
import tests.utils as u

SLOT = 64


class SmallSrqRC(RCResources):
    """RC with an SRQ of 8 WQEs and a buffer of 32 slots of SLOT bytes."""
    def create_srq_attr(self):
        return SrqAttr(max_wr=8)

    def create_mr(self):
        self.mr = MR(self.pd, 32 * SLOT, e.IBV_ACCESS_LOCAL_WRITE)

    def create_qp_attr(self):
        attr = QPAttr(port_num=self.ib_port)
        attr.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE | \
            e.IBV_ACCESS_REMOTE_WRITE
        return attr


def wc_ok(test, wc, opcode, wr_id=None, byte_len=None):
    test.assertEqual(wc.status, e.IBV_WC_SUCCESS,
                     u.wc_status_to_str(wc.status))
    test.assertEqual(wc.opcode, opcode)
    if wr_id is not None:
        test.assertEqual(wc.wr_id, wr_id)
    if byte_len is not None:
        test.assertEqual(wc.byte_len, byte_len)


class SrqResizeTest(RDMATestCase):
    def setUp(self):
        super().setUp()
        self.iters = 1
        self.create_players(SmallSrqRC, qp_count=1, with_srq=True)
        self.next_id = 0

    def post_recvs(self, n):
        """Receive WQE i takes slot i of the server's buffer; a post that
        fails leaves next_id alone."""
        for _ in range(n):
            i = self.next_id
            sge = SGE(self.server.mr.buf + i * SLOT, SLOT,
                      self.server.mr.lkey)
            self.server.srq.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[sge]))
            self.next_id += 1

    def send(self, ids):
        """The client sends one SLOT-byte message for each receive in ids."""
        for i in ids:
            msg = bytes([0x40 + (i % 64)]) * SLOT
            self.client.mr.write(msg, SLOT, (i % 32) * SLOT)
            sge = SGE(self.client.mr.buf + (i % 32) * SLOT, SLOT,
                      self.client.mr.lkey)
            self.client.qp.post_send(SendWR(wr_id=1000 + i, num_sge=1,
                                            sg=[sge], opcode=e.IBV_WR_SEND))
            wc_ok(self, u._poll_cq(self.client.cq)[0], e.IBV_WC_SEND, 1000 + i)
            wc_ok(self, u._poll_cq(self.server.cq)[0], e.IBV_WC_RECV, i, SLOT)
            self.assertEqual(self.server.mr.read(SLOT, i * SLOT), msg,
                             f'message {i}')

    def resize(self, max_wr):
        self.server.srq.modify(SrqAttr(max_wr=max_wr), e.IBV_SRQ_MAX_WR)

    def test_resize_with_pending_wqes(self):
        self.post_recvs(5)
        self.resize(16)
        self.assertGreaterEqual(self.server.srq.query().max_wr, 16)
        self.post_recvs(11)             # the new ring is full: 16
        with self.assertRaises(PyverbsRDMAError) as ex:
            self.post_recvs(1)
        self.assertEqual(ex.exception.error_code, errno.ENOMEM)
        self.send(range(0, 16))         # in order, each in its own slot

        self.post_recvs(2)
        self.resize(4)                  # shrink: the two waiting fit
        self.assertEqual(self.server.srq.query().max_wr, 4)
        self.post_recvs(2)
        self.send(range(16, 20))

        self.post_recvs(3)
        with self.assertRaises(PyverbsRDMAError) as ex:
            self.resize(2)              # three wait: they do not fit
        self.assertEqual(ex.exception.error_code, errno.EINVAL)
        self.assertEqual(self.server.srq.query().max_wr, 4)
        self.send(range(20, 23))

    def test_resize_with_limit_all_or_nothing(self):
        both = e.IBV_SRQ_MAX_WR | e.IBV_SRQ_LIMIT
        self.post_recvs(2)
        before = self.server.srq.query()
        with self.assertRaises(PyverbsRDMAError) as ex:
            self.server.srq.modify(SrqAttr(max_wr=16, srq_limit=100), both)
        self.assertEqual(ex.exception.error_code, errno.EINVAL)
        after = self.server.srq.query()
        self.assertEqual(after.max_wr, before.max_wr)
        self.assertEqual(after.srq_limit, before.srq_limit)
        self.server.srq.modify(SrqAttr(max_wr=16, srq_limit=1), both)
        after = self.server.srq.query()
        self.assertGreaterEqual(after.max_wr, 16)
        self.assertEqual(after.srq_limit, 1)
        self.send(range(0, 2))


class RemoteWriteRC(RCResources):
    def create_qp_attr(self):
        attr = QPAttr(port_num=self.ib_port)
        attr.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE | \
            e.IBV_ACCESS_REMOTE_WRITE
        return attr


class ReregTest(RDMATestCase):
    def setUp(self):
        super().setUp()
        self.iters = 1
        self.create_players(RemoteWriteRC, qp_count=1)
        self.attr = self.client.qp.query(0x1ffffff)[0], \
            self.server.qp.query(0x1ffffff)[0]
        self.size = self.server.msg_size
        self.mw = None
        self.buf = None

    def tearDown(self):
        if self.mw:
            self.mw.close()
        # Closing the contexts deregisters the MR; then its buffer can go.
        super().tearDown()
        if self.buf:
            free(self.buf)

    def new_server_mr(self, access):
        self.server.mr.close()
        self.server.mr = MR(self.server.pd, self.size, access)

    def write(self, rkey, fill):
        """RDMA WRITE size bytes of fill into the server's MR; the WC."""
        msg = bytes([fill]) * self.size
        self.client.mr.write(msg, self.size)
        sge = SGE(self.client.mr.buf, self.size, self.client.mr.lkey)
        wr = SendWR(wr_id=fill, num_sge=1, sg=[sge],
                    opcode=e.IBV_WR_RDMA_WRITE, send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(rkey, self.server.mr.buf)
        self.client.qp.post_send(wr)
        return u._poll_cq(self.client.cq)[0], msg

    def write_ok(self, rkey, fill):
        wc, msg = self.write(rkey, fill)
        wc_ok(self, wc, e.IBV_WC_RDMA_WRITE, fill)
        self.assertEqual(self.server.mr.read(self.size, 0), msg)

    def write_refused(self, rkey, fill):
        before = self.server.mr.read(self.size, 0)
        wc, _ = self.write(rkey, fill)
        self.assertEqual(wc.status, e.IBV_WC_REM_ACCESS_ERR,
                         u.wc_status_to_str(wc.status))
        self.assertEqual(self.server.mr.read(self.size, 0), before)
        for qp, attr in zip((self.client.qp, self.server.qp), self.attr):
            qp.modify(QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE)
            qp.to_rts(attr)

    def rereg(self, flags, **kw):
        self.server.mr.rereg(flags, kw.get('pd', self.server.pd),
                             kw.get('addr', 0), kw.get('length', 0),
                             kw.get('access', 0))

    def test_access_in_place_keeps_keys(self):
        self.new_server_mr(e.IBV_ACCESS_LOCAL_WRITE)
        keys = self.server.mr.lkey, self.server.mr.rkey
        self.write_refused(keys[1], 0x11)
        self.rereg(e.IBV_REREG_MR_CHANGE_ACCESS,
                   access=e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
        self.assertEqual((self.server.mr.lkey, self.server.mr.rkey), keys)
        self.write_ok(keys[1], 0x22)

    def test_translation_registers_anew(self):
        self.new_server_mr(e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
        old = self.server.mr.rkey
        self.write_ok(old, 0x33)
        self.buf = posix_memalign(self.size)
        self.rereg(e.IBV_REREG_MR_CHANGE_TRANSLATION, addr=self.buf,
                   length=self.size)
        self.assertNotEqual(self.server.mr.rkey, old)
        self.write_refused(old, 0x44)
        self.write_ok(self.server.mr.rkey, 0x55)

    def test_write_rights_for_read_only_memory(self):
        self.new_server_mr(0)
        old = self.server.mr.lkey
        self.rereg(e.IBV_REREG_MR_CHANGE_ACCESS,
                   access=e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
        self.assertNotEqual(self.server.mr.lkey, old)
        self.write_ok(self.server.mr.rkey, 0x66)

    def test_busy_while_a_window_is_bound(self):
        self.new_server_mr(e.IBV_ACCESS_LOCAL_WRITE |
                           e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_MW_BIND)
        self.mw = MW(self.server.pd, e.IBV_MW_TYPE_1)
        info = MWBindInfo(self.server.mr, self.server.mr.buf, self.size,
                          e.IBV_ACCESS_REMOTE_WRITE)
        self.server.qp.bind_mw(self.mw, MWBind(info, e.IBV_SEND_SIGNALED))
        wc_ok(self, u._poll_cq(self.server.cq)[0], e.IBV_WC_BIND_MW)
        self.write_ok(self.mw.rkey, 0x77)
        keys = self.server.mr.lkey, self.server.mr.rkey
        for flags, kw in ((e.IBV_REREG_MR_CHANGE_ACCESS,
                           {'access': e.IBV_ACCESS_LOCAL_WRITE}),
                          (e.IBV_REREG_MR_CHANGE_PD, {}),
                          (e.IBV_REREG_MR_CHANGE_TRANSLATION,
                           {'addr': self.server.mr.buf,
                            'length': self.size})):
            with self.assertRaises(PyverbsRDMAError) as ex:
                self.rereg(flags, **kw)
            self.assertEqual(ex.exception.error_code, errno.EBUSY)
        self.assertEqual((self.server.mr.lkey, self.server.mr.rkey), keys)
        self.write_ok(keys[1], 0x88)
        self.mw.close()
        self.mw = None
        self.rereg(e.IBV_REREG_MR_CHANGE_ACCESS,
                   access=e.IBV_ACCESS_LOCAL_WRITE)
        self.write_refused(keys[1], 0x99)
