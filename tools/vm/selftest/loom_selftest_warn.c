// SPDX-License-Identifier: GPL-2.0
/*
 * A module whose only job is to WARN when loaded: tools/vm/selftest/run uses
 * it to show that loom-vm fails a run in which the kernel warned.
 */
#include <linux/bug.h>
#include <linux/module.h>

static int __init loom_selftest_warn_init(void)
{
	WARN(1, "loom-vm harness self-test: deliberate WARN\n");
	return 0;
}
module_init(loom_selftest_warn_init);

MODULE_DESCRIPTION("loom-vm harness self-test: WARN on load");
MODULE_LICENSE("GPL");
