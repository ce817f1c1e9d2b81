/* Unit test of the Spin core (the lab's fixed native work), built with
 * AddressSanitizer and UBSan by `make test`: the same work whole or
 * sliced, and spin_until reaching its deadline. */
#include "../spin/spin.h"

#include <stdint.h>

#include "check.h"

static void test_spin(void) {
    wb_spin whole, sliced;
    uint64_t used = 0;
    wb_spin_init(&whole, 100000);
    CHECK(wb_spin_step(&whole, UINT64_MAX, &used), "spin in one step");
    CHECK(used == 100000, "spin counts its units");
    wb_spin_init(&sliced, 100000);
    used = 0;
    int steps = 0;
    while (!wb_spin_step(&sliced, 777, &used))
        steps++;
    CHECK(steps == 128, "spin slices: %d", steps);
    CHECK(wb_spin_checksum(&whole) == wb_spin_checksum(&sliced),
          "spin checksum independent of slicing");
    wb_spin_until until;
    int64_t start = wb_monotonic_ns();
    wb_spin_until_init(&until, 1000);
    used = 0;
    while (!wb_spin_until_step(&until, 10, &used)) {
    }
    CHECK(wb_monotonic_ns() - start >= 1000000, "spin_until waits for its deadline");
}

int main(void) {
    test_spin();
    return CHECK_SUMMARY();
}
