// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mpi-test: byte-checked MPI traffic between two ranks, for
 * tests/64-ucx.sh (Open MPI over pml ucx on sroce).
 *
 *   mpirun -np 2 mpi-test
 *
 * Rank 0 sends messages of 1 B to 4 MiB (eager and rendezvous) to rank
 * 1, which checks each and sends it back; rank 0 checks the echo. Then
 * both exchange 1 MiB at once (MPI_Sendrecv), and an MPI_Allreduce of
 * their rank numbers is checked. Each message has its own pattern.
 *
 * Rank 0 prints "ok:"/"FAIL:" lines of both ranks' checks and
 * "N passed, N failed"; the exit status is 1 if any check failed.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "check.h"

#define MAX_SIZE	(4 << 20)

static const int sizes[] = {
	1, 7, 64, 1000, 4096, 12289, 65536, 300000, 1 << 20, MAX_SIZE,
};
#define NUM_SIZES	((int)(sizeof(sizes) / sizeof(sizes[0])))

static int rank;

/* check_buf() with the rank in the message. */
static void rank_check_buf(const uint8_t *buf, int len, int seq, const char *what)
{
	char label[128];

	snprintf(label, sizeof(label), "rank %d: %s", rank, what);
	check_buf(buf, len, seq, label);
}

/* Receive message @seq (sizes[@seq] bytes) from @from into @buf; check it. */
static int recv_check(uint8_t *buf, int from, int tag, int seq, const char *what)
{
	MPI_Status st;
	int n;

	memset(buf, 0, sizes[seq]);
	MPI_Recv(buf, MAX_SIZE, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_BYTE, &n);
	if (n != sizes[seq])
		check(false, "rank %d: %s %d: %d bytes, expected %d", rank, what,
		      seq, n, sizes[seq]);
	else
		rank_check_buf(buf, n, seq, what);
	return n;
}

int main(int argc, char **argv)
{
	uint8_t *buf, *buf2;
	int size, n, i, sum, totals[2];
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (!rank)
			fprintf(stderr, "mpi-test: run with 2 ranks, not %d\n", size);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	buf = malloc(MAX_SIZE);
	buf2 = malloc(MAX_SIZE);
	if (!buf || !buf2)
		MPI_Abort(MPI_COMM_WORLD, 2);

	for (i = 0; i < NUM_SIZES; i++) {
		if (rank == 0) {
			fill(buf, sizes[i], i);
			MPI_Send(buf, sizes[i], MPI_BYTE, 1, i, MPI_COMM_WORLD);
			recv_check(buf, 1, 100 + i, i, "echo received");
		} else {
			n = recv_check(buf, 0, i, i, "message received");
			MPI_Send(buf, n, MPI_BYTE, 0, 100 + i, MPI_COMM_WORLD);
		}
	}

	fill(buf, 1 << 20, 50 + rank);
	memset(buf2, 0, 1 << 20);
	MPI_Sendrecv(buf, 1 << 20, MPI_BYTE, 1 - rank, 7, buf2, 1 << 20, MPI_BYTE,
		     1 - rank, 7, MPI_COMM_WORLD, &st);
	rank_check_buf(buf2, 1 << 20, 50 + (1 - rank), "MPI_Sendrecv received");

	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	check(sum == 1, "rank %d: MPI_Allreduce of the ranks is %d, expected 1",
	      rank, sum);

	totals[0] = passed;
	totals[1] = failed;
	MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%d passed, %d failed\n", totals[0], totals[1]);
	free(buf);
	free(buf2);
	MPI_Finalize();
	return totals[1] ? 1 : 0;
}
