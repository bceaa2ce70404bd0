/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * check.h - what the client tests (ucp-test, mpi-test, iba15-test) share:
 * "ok:" and "FAIL:" lines counted in @passed and @failed, and the byte
 * pattern of their messages, different for every message. Each test is
 * one .c file, which includes this once; verbs-test.c, whose check() is
 * shared by several files, defines CHECK_EXTERN and wraps vcheck().
 */
#ifndef SROCE_TESTS_CHECK_H
#define SROCE_TESTS_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

static int passed, failed;

/* Print "ok: " or "FAIL: " and the message, and count it. */
static inline void vcheck(bool ok, const char *fmt, va_list ap)
{
	printf("%s: ", ok ? "ok" : "FAIL");
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	if (ok)
		passed++;
	else
		failed++;
}

#ifndef CHECK_EXTERN
static inline __attribute__((format(printf, 2, 3)))
void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcheck(ok, fmt, ap);
	va_end(ap);
}
#else
void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif

/* Byte @i of message @seq of @len bytes. */
static inline uint8_t pattern(size_t i, size_t len, unsigned int seq)
{
	return (uint8_t)(i * 131 + (i >> 9) + len * 7 + seq * 29 + 1);
}

static inline void fill(uint8_t *buf, size_t len, unsigned int seq)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pattern(i, len, seq);
}

/* One check: @buf holds message @seq of @len bytes; the first wrong byte
 * is named if not.
 */
static inline void check_buf(const uint8_t *buf, size_t len, unsigned int seq,
			     const char *what)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != pattern(i, len, seq))
			break;
	if (i == len)
		check(true, "%s, %zu bytes", what, len);
	else
		check(false, "%s, %zu bytes: byte %zu is 0x%02x, expected 0x%02x",
		      what, len, i, buf[i], pattern(i, len, seq));
}

#endif /* SROCE_TESTS_CHECK_H */
