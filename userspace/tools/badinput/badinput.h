/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce-badinput: what its files share (main.c says what the tool does).
 * main.c has the device, the check lines and main; qp.c the QP helpers and
 * the valid walks; modify.c the table of modify_qp cases; objects.c the
 * CQ, SRQ, MR, window and AH cases.
 */
#ifndef SROCE_TOOLS_BADINPUT_H
#define SROCE_TOOLS_BADINPUT_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tool.h"

#define QKEY		0x11111111
#define DEST_QPN	0x123
#define RQ_PSN		0x1000
#define SQ_PSN		0x2000
#define BUF_LEN		(64 * 1024)
#define UNKNOWN_ACCESS	(1 << 12)	/* no IBV_ACCESS_* flag */
#define WR_CAP		16384

/* What every case uses: the device, a PD, a CQ, an SRQ, a buffer. */
struct state {
	struct ibv_context *ctx;
	struct ibv_device_attr dev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	union ibv_gid dgid;
	uint8_t sgid_index;
	void *buf;
};
extern struct state b;

extern struct tool_report rep;


/* main.c */
void line(const char *name, const char *expected, const char *got,
	  bool ok);
void check_err(const char *name, int expected, int got);
void check_err2(const char *name, int expected1, int expected2, int got);
void check_val(const char *name, unsigned long expected,
	       unsigned long got);
void check_range(const char *name, unsigned long lo, unsigned long hi,
		 unsigned long got);
int create_err(const void *obj);
const char *type_name(enum ibv_qp_type type);
/* qp.c */
int qp_state(struct ibv_qp *qp);
void set_av(struct ibv_ah_attr *ah);
int step_attr(enum ibv_qp_type type, enum ibv_qp_state to,
	      struct ibv_qp_attr *a);
struct ibv_qp *qp_at(enum ibv_qp_type type, enum ibv_qp_state state);
void valid_walk(enum ibv_qp_type type);
void valid_err_reset(enum ibv_qp_type type);
void psn_cases(void);
void qp_create_cases(void);
/* modify.c */
void run_mod_cases(void);
/* objects.c */
void cq_cases(void);
void srq_cases(void);
void mr_cases(void);
void ah_cases(void);

#endif /* SROCE_TOOLS_BADINPUT_H */
