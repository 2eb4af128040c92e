/* SPDX-License-Identifier: MIT */
/*
 * alloc_count.h - counts the heap allocations a test thread makes (tests
 * only; include it in ONE test file, it defines malloc and its kin).
 *
 * Interposes libc's allocators, forwarding to glibc's own, and counts the
 * calls made while the calling thread's alloc_counting is set (other
 * threads, such as test_gw_harness.h's tiny server, are not counted).
 * Not under AddressSanitizer, which owns the allocator: there nothing is
 * interposed and ALLOC_COUNT_ON is not defined, so a test skips its count.
 */
#ifndef TEST_ALLOC_COUNT_H
#define TEST_ALLOC_COUNT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

static __thread bool alloc_counting;
static unsigned n_allocs;

#if !defined(__SANITIZE_ADDRESS__)
#define ALLOC_COUNT_ON 1
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t k, size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

void *malloc(size_t n)
{
	n_allocs += alloc_counting;
	return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
	n_allocs += alloc_counting;
	return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
	n_allocs += alloc_counting;
	return __libc_realloc(p, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	n_allocs += alloc_counting;
	return __libc_memalign(align, n);
}

int posix_memalign(void **p, size_t align, size_t n)
{
	n_allocs += alloc_counting;
	*p = __libc_memalign(align, n);
	return *p ? 0 : ENOMEM;
}
#endif

#endif
