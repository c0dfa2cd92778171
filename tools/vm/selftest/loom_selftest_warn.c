// SPDX-License-Identifier: GPL-2.0
/*
 * A module whose only job is to make the kernel complain when loaded:
 * tools/vm/selftest/run uses it to show that loom-vm fails a run in which
 * the kernel warned, and, on the debug kernel lane, one in which KASAN,
 * lockdep or kmemleak reported something.
 *
 *   insmod loom_selftest_warn.ko [what=warn|kasan|lockdep|leak]
 */
#include <linux/bug.h>
#include <linux/kfence.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

static char *what = "warn";
module_param(what, charp, 0444);
MODULE_PARM_DESC(what, "the complaint: warn, kasan, lockdep or leak");

/* Past the end of a 13-byte allocation: inside its 16-byte slab slot, so
 * a kernel without KASAN reads harmless padding; KASAN reports it.  Not in
 * KFENCE's pool, where a read past the end is not caught: KFENCE takes one
 * allocation per interval, so the next one is an ordinary slab object.
 */
static void read_out_of_bounds(void)
{
	size_t len = 13;
	char *p = kmalloc(len, GFP_KERNEL);

	if (p && is_kfence_address(p)) {
		char *kfence = p;

		p = kmalloc(len, GFP_KERNEL);
		kfree(kfence);
	}
	if (!p)
		return;
	/* Hidden from the compiler, which would see the overrun. */
	OPTIMIZER_HIDE_VAR(len);
	pr_info("loom_selftest_warn: byte past the end: %d\n", READ_ONCE(p[len]));
	kfree(p);
}

/* A then B, later B then A: no deadlock (one thread), but lockdep sees the
 * order inversion that could be one.
 */
static void invert_lock_order(void)
{
	static DEFINE_MUTEX(a);
	static DEFINE_MUTEX(b);

	mutex_lock(&a);
	mutex_lock(&b);
	mutex_unlock(&b);
	mutex_unlock(&a);
	mutex_lock(&b);
	mutex_lock(&a);
	mutex_unlock(&a);
	mutex_unlock(&b);
}

/* Allocations nothing points to once this returns: kmemleak's next scan
 * reports them.  Eight, each pointer overwriting the last: a stale copy of
 * one left in a register or on a stack hides only that one.
 */
static void leak_objects(void)
{
	char *p;
	int i;

	for (i = 0; i < 8; i++) {
		p = kmalloc(64, GFP_KERNEL);
		if (p)
			strscpy(p, "loom-vm harness self-test: never freed", 64);
	}
	pr_info("loom_selftest_warn: 8 objects of 64 bytes dropped\n");
}

static int __init loom_selftest_warn_init(void)
{
	if (!strcmp(what, "kasan"))
		read_out_of_bounds();
	else if (!strcmp(what, "lockdep"))
		invert_lock_order();
	else if (!strcmp(what, "leak"))
		leak_objects();
	else
		WARN(1, "loom-vm harness self-test: deliberate WARN\n");
	return 0;
}
module_init(loom_selftest_warn_init);

MODULE_DESCRIPTION("loom-vm harness self-test: WARN (or a debug checker's report) on load");
MODULE_LICENSE("GPL");
