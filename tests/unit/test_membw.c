// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * test_membw - the size of the read-bandwidth yardstick (membw.c): above
 * the cache, inside the memory the machine has.  `colibri bench` in a
 * 1 GiB VM used to ask for 1 GiB and fail.
 */
#include "cb_test.h"
#include "bench/membw.h"

#define MIB (1ull << 20)
#define GIB (1ull << 30)

static void test_bw_buffer_is_one_gib_on_a_big_machine(void)
{
	CB_CHECK(cb_read_bw_fit(32 * MIB, 24 * GIB) == GIB, "%zu", cb_read_bw_fit(32 * MIB, 24 * GIB));
	CB_CHECK(cb_read_bw_fit(0, 0) == GIB, "unknown L3 and memory: %zu", cb_read_bw_fit(0, 0));
}

static void test_bw_buffer_is_four_times_a_large_l3(void)
{
	CB_CHECK(cb_read_bw_fit(300 * MIB, 24 * GIB) == 1200 * MIB, "%zu",
		 cb_read_bw_fit(300 * MIB, 24 * GIB));
}

static void test_bw_buffer_fits_half_the_available_memory(void)
{
	/* a 1 GiB guest with the module loaded: about 800 MiB available */
	size_t s = cb_read_bw_fit(32 * MIB, 800 * MIB);

	CB_CHECK(s == 400 * MIB, "800 MiB available: %zu", s);
	s = cb_read_bw_fit(300 * MIB, 1001 * MIB);
	CB_CHECK(s <= 1001 * MIB / 2 && s % (2 * MIB) == 0 && s > 496 * MIB, "%zu", s);
	s = cb_read_bw_fit(32 * MIB, 3 * MIB);
	CB_CHECK(s == 2 * MIB, "never below one 2 MiB chunk: %zu", s);
}

static void test_bw_buffer_of_this_machine_fits_it(void)
{
	size_t s = cb_read_bw_default();

	CB_CHECK(s >= 2 * MIB && s % (2 * MIB) == 0 && s <= 64 * GIB, "%zu", s);
}

int main(void)
{
	CB_RUN(test_bw_buffer_is_one_gib_on_a_big_machine);
	CB_RUN(test_bw_buffer_is_four_times_a_large_l3);
	CB_RUN(test_bw_buffer_fits_half_the_available_memory);
	CB_RUN(test_bw_buffer_of_this_machine_fits_it);
	return cb_test_done();
}
