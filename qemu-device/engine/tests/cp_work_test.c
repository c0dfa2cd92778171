// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RUN_WORK on the host: the tree-child spawner drained through the
 * on-device work stack, in one packet and resumed across packets stopped
 * by each of their bounds, against the children DISPATCH_ITEMS reports for
 * the same nodes; overflow names the item and leaves it on top; every
 * malformed field is rejected with its offset and nothing written.
 */
#include <stddef.h>

#include "check.h"
#include "configs.h"
#include "cp_fixture.h"

#define TABLE_VA	DATA_VA
#define STACK_VA	(DATA_VA + 0x10000)
#define RECORD_VA	(DATA_VA + 0x20000)
#define STATUS_VA	(DATA_VA + 0x30000)
#define ITEMS_VA	(DATA_VA + 0x40000)	/* DISPATCH_ITEMS payloads */
#define RESULT_VA	(DATA_VA + 0x50000)	/* and records */

#define TREE_NODES	300
#define CAP		6

static int64_t first[TREE_NODES], count[TREE_NODES];

static void poke(uint64_t va, const void *p, size_t n)
{
	fake_bus_poke(&bus, va, p, n);
}

static void peek(uint64_t va, void *p, size_t n)
{
	fake_bus_peek(&bus, va, p, n);
}

static void setup(void)
{
	cp_fixture_init();
	loom_test_tree_gen(first, count, TREE_NODES, CAP, 777);
	for (int n = 0; n < TREE_NODES; n++) {
		int64_t row[2] = { first[n], count[n] };

		poke(TABLE_VA + 16 * n, row, sizeof(row));
	}
}

static void teardown(void)
{
	cp_fixture_fini();
}

/* LOAD_CONFIG of the tree spawner and SET_OPERANDS of the table. */
static void emit_prologue(void)
{
	static uint8_t image[16384];
	size_t n = loom_test_config_tree_spawner(image, sizeof(image), 4, 4);

	poke(CONFIG_VA, image, n);
	cmd_len = 0;
	emit32(LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 4));
	emit32((uint32_t)n);
	emit64(CONFIG_VA);
	emit32(LOOM_PKT_HEADER(LOOM_PKT_SET_OPERANDS, 4));
	emit32(1);
	emit64(TABLE_VA);
}

static void emit_run_work(const struct loom_pkt_run_work *p)
{
	struct loom_pkt_run_work w = *p;

	w.header = LOOM_PKT_HEADER(LOOM_PKT_RUN_WORK, sizeof(w) / 4);
	memcpy(&cmd[cmd_len], &w, sizeof(w));
	cmd_len += sizeof(w) / 4;
}

static struct loom_pkt_run_work packet(uint32_t stack_count, uint32_t budget)
{
	return (struct loom_pkt_run_work){
		.child_capacity = CAP,
		.stack_va = STACK_VA, .stack_capacity = 256,
		.stack_count = stack_count,
		.record_va = RECORD_VA, .record_capacity = 1024,
		.budget = budget, .status_va = STATUS_VA,
	};
}

static void put_root(void)
{
	struct loom_hw_work_entry root = { 0, LOOM_WORK_NO_PARENT, 0 };

	poke(STACK_VA, &root, sizeof(root));
}

static struct loom_hw_work_status status(void)
{
	struct loom_hw_work_status s;

	peek(STATUS_VA, &s, sizeof(s));
	return s;
}

static struct loom_hw_work_record record(uint32_t i)
{
	struct loom_hw_work_record r;

	peek(RECORD_VA + i * sizeof(r), &r, sizeof(r));
	return r;
}

/* The children DISPATCH_ITEMS reports for node @n, into @kids. */
static uint32_t items_children(uint64_t n, uint64_t *kids)
{
	struct loom_hw_completion d;
	uint32_t got;

	poke(ITEMS_VA, &n, 8);
	emit_prologue();
	emit32(LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_ITEMS, 8));
	emit32(1);
	emit64(ITEMS_VA);
	emit64(RESULT_VA);
	emit32(CAP);
	emit32(0);
	d = run();
	CHECK_EQ(LOOM_STATUS_OK, d.status);
	if (d.status)
		return 0;
	peek(RESULT_VA, &got, 4);
	peek(RESULT_VA + 8, kids, 8 * (got < CAP ? got : CAP));
	return got;
}

/*
 * Checks the @n records of one packet: each child names an earlier record
 * of it as parent, its ordinal is its place among that parent's children,
 * and its payload is the child DISPATCH_ITEMS reports there.  Counts the
 * nodes visited into @seen.
 */
static void check_records(uint32_t n, unsigned *seen)
{
	static uint64_t kids[TREE_NODES][CAP];
	static uint32_t nkids[TREE_NODES];
	static bool known[TREE_NODES];

	for (uint32_t i = 0; i < n; i++) {
		struct loom_hw_work_record r = record(i);
		uint64_t p = r.entry.payload;

		REQUIRE(p < TREE_NODES);
		seen[p]++;
		if (!known[p]) {
			nkids[p] = items_children(p, kids[p]);
			known[p] = true;
		}
		CHECK_EQ(nkids[p], r.child_count);
		CHECK_EQ(0, r.reserved);
		if (r.entry.parent == LOOM_WORK_NO_PARENT)
			continue;
		REQUIRE(r.entry.parent < i);
		struct loom_hw_work_record parent = record(r.entry.parent);

		REQUIRE(r.entry.ordinal < parent.child_count);
		CHECK_EQ(kids[parent.entry.payload][r.entry.ordinal], p);
	}
}

TEST(whole_tree_in_one_packet)
{
	struct loom_pkt_run_work p = packet(1, 100000);
	unsigned seen[TREE_NODES] = { 0 };
	struct loom_hw_completion d;
	struct loom_hw_work_status s;

	setup();
	put_root();
	emit_prologue();
	emit_run_work(&p);
	d = run();
	REQUIRE_EQ(LOOM_STATUS_OK, d.status);
	CHECK_EQ(TREE_NODES, d.counters.items);
	CHECK_EQ(TREE_NODES - 1, d.counters.spawns);
	s = status();
	CHECK_EQ(LOOM_WORK_STOP_QUIESCENT, s.stop);
	CHECK_EQ(TREE_NODES, s.items_run);
	CHECK_EQ(0, s.stack_count);
	CHECK_EQ(0, s.reserved);
	/* the root's record is the host's entry, copied */
	CHECK_EQ(0, record(0).entry.payload);
	CHECK_EQ(LOOM_WORK_NO_PARENT, record(0).entry.parent);
	/* depth first, child 0 first: record 1 is the root's child 0 */
	CHECK_EQ(0, record(1).entry.parent);
	CHECK_EQ(0, record(1).entry.ordinal);
	check_records(s.items_run, seen);
	for (int n = 0; n < TREE_NODES; n++)
		CHECK_EQ(1, seen[n]);
	teardown();
}

/*
 * One bound per packet, cycling, the stack handed on as it was left:
 * every node still runs exactly once.
 */
TEST(stops_leave_a_resumable_stack)
{
	static const uint32_t stops[] = {
		LOOM_WORK_STOP_BUDGET, LOOM_WORK_STOP_RECORDS_FULL,
		LOOM_WORK_STOP_STACK_FULL,
	};
	unsigned seen[TREE_NODES] = { 0 }, total = 0, packets = 0, hit[5] = { 0 };
	struct loom_hw_work_status s = { .stack_count = 1 };

	setup();
	put_root();
	while (s.stack_count) {
		struct loom_pkt_run_work p = packet(s.stack_count, 100000);
		struct loom_hw_completion d;

		switch (stops[packets++ % 3]) {
		case LOOM_WORK_STOP_BUDGET:
			p.budget = 7;
			break;
		case LOOM_WORK_STOP_RECORDS_FULL:
			p.record_capacity = 11;
			break;
		default:	/* room for 2 more entries than one item needs */
			p.stack_capacity = s.stack_count + CAP + 1;
			break;
		}
		emit_prologue();
		emit_run_work(&p);
		d = run();
		REQUIRE_EQ(LOOM_STATUS_OK, d.status);
		s = status();
		REQUIRE(s.stop <= LOOM_WORK_STOP_STACK_FULL);
		hit[s.stop]++;
		CHECK_EQ(s.items_run, d.counters.items);
		total += s.items_run;
		/* records of this packet only: parents of older ones are gone */
		for (uint32_t i = 0; i < s.items_run; i++)
			seen[record(i).entry.payload]++;
		REQUIRE(packets < 1000);
	}
	CHECK_EQ(TREE_NODES, total);
	for (int n = 0; n < TREE_NODES; n++)
		CHECK_EQ(1, seen[n]);
	CHECK(hit[LOOM_WORK_STOP_BUDGET] > 0);
	CHECK(hit[LOOM_WORK_STOP_RECORDS_FULL] > 0);
	CHECK(hit[LOOM_WORK_STOP_STACK_FULL] > 0);
	CHECK_EQ(1, hit[LOOM_WORK_STOP_QUIESCENT]);
	teardown();
}

TEST(full_stack_makes_no_progress_but_loses_nothing)
{
	struct loom_hw_work_entry e[3] = { { 0, LOOM_WORK_NO_PARENT, 0 },
					   { 1, LOOM_WORK_NO_PARENT, 1 },
					   { 2, LOOM_WORK_NO_PARENT, 2 } };
	struct loom_pkt_run_work p = packet(3, 10);
	struct loom_hw_work_entry after[3];

	setup();
	poke(STACK_VA, e, sizeof(e));
	p.stack_capacity = CAP + 1;	/* the top item needs 3 - 1 + CAP */
	emit_prologue();
	emit_run_work(&p);
	REQUIRE_EQ(LOOM_STATUS_OK, run().status);
	CHECK_EQ(LOOM_WORK_STOP_STACK_FULL, status().stop);
	CHECK_EQ(0, status().items_run);
	CHECK_EQ(3, status().stack_count);
	peek(STACK_VA, after, sizeof(after));
	CHECK(!memcmp(e, after, sizeof(e)));
	teardown();
}

TEST(overflow_names_the_item_and_leaves_it_on_top)
{
	int64_t rows[4] = { 1, 1, 20, 3 };	/* node 0: child 1; node 1: 3 */
	struct loom_pkt_run_work p = packet(1, 100);
	struct loom_hw_work_entry top;
	struct loom_hw_completion d;

	setup();
	poke(TABLE_VA, rows, sizeof(rows));
	put_root();
	p.child_capacity = 2;
	emit_prologue();
	emit_run_work(&p);
	d = run();
	CHECK_EQ(LOOM_STATUS_CHILD_OVERFLOW, d.status);
	CHECK_EQ(1, d.detail);
	CHECK_EQ(LOOM_PKT_RUN_WORK, d.packet_opcode);
	CHECK(dump_len > 0);
	CHECK_EQ(LOOM_WORK_STOP_FAILED, status().stop);
	CHECK_EQ(1, status().items_run);
	CHECK_EQ(1, status().stack_count);
	CHECK_EQ(1, record(0).child_count);
	peek(STACK_VA, &top, sizeof(top));
	CHECK_EQ(1, top.payload);
	CHECK_EQ(0, top.parent);
	CHECK_EQ(0, top.ordinal);
	teardown();
}

/*
 * With CHILDREN_I32, an item spawning a child outside i32 stops the packet
 * after the items before it, its record unwritten and its entry on top.
 */
TEST(narrow_children_stop_at_their_parent)
{
	int64_t rows[6] = { 1, 1, 0x7fffffff, 2, 0, 0 };	/* 0 -> 1 -> 2^31 - 1, 2^31 */
	struct loom_pkt_run_work p = packet(1, 100);
	struct loom_hw_work_entry top;
	struct loom_hw_completion d;

	setup();
	poke(TABLE_VA, rows, sizeof(rows));
	put_root();
	p.flags = LOOM_RUN_WORK_CHILDREN_I32;
	emit_prologue();
	emit_run_work(&p);
	d = run();
	REQUIRE_EQ(LOOM_STATUS_OK, d.status);
	CHECK_EQ(2, d.counters.items);
	CHECK_EQ(3, d.counters.spawns);
	CHECK_EQ(LOOM_WORK_STOP_CHILD_WIDTH, status().stop);
	CHECK_EQ(1, status().items_run);
	CHECK_EQ(1, status().stack_count);
	peek(STACK_VA, &top, sizeof(top));
	CHECK_EQ(1, top.payload);
	CHECK_EQ(0, top.parent);
	/* without the flag the same children are only payloads */
	put_root();
	p.flags = 0;
	p.budget = 2;
	emit_prologue();
	emit_run_work(&p);
	REQUIRE_EQ(LOOM_STATUS_OK, run().status);
	CHECK_EQ(LOOM_WORK_STOP_BUDGET, status().stop);
	CHECK_EQ(2, status().items_run);
	teardown();
}

/* A read-only stack faults when the first children are written. */
TEST(faults_reach_the_completion)
{
	struct loom_pkt_run_work p = packet(0, 1);
	struct loom_hw_completion d;

	setup();
	p.status_va = RO_VA;
	emit_prologue();
	emit_run_work(&p);
	d = run();
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, d.status);
	CHECK_EQ(RO_VA, d.fault_va);
	CHECK_EQ(LOOM_MMU_FAULT_WRITE, d.detail);
	teardown();
}

static void expect_bad(struct loom_pkt_run_work p, uint32_t field)
{
	static const struct loom_hw_work_status untouched = { 0xdead, 1, 2, 3 };
	struct loom_hw_work_status s;
	struct loom_hw_completion d;

	poke(STATUS_VA, &untouched, sizeof(untouched));
	emit_prologue();
	emit_run_work(&p);
	d = run();
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, d.status);
	CHECK_EQ(field, d.detail);
	CHECK_EQ(0, d.counters.items);
	s = status();
	CHECK(!memcmp(&s, &untouched, sizeof(s)));
}

#define BAD(member, value) do {					\
	struct loom_pkt_run_work p_ = packet(1, 10);			\
	p_.member = (value);						\
	expect_bad(p_, offsetof(struct loom_pkt_run_work, member));	\
} while (0)

TEST(every_malformed_field_rejected)
{
	struct loom_pkt_run_work p = packet(1, 10);
	struct loom_hw_completion d;

	setup();
	put_root();
	BAD(stack_capacity, 0);
	BAD(stack_capacity, LOOM_MAX_WORK_STACK + 1);
	BAD(child_capacity, 256);		/* not below stack_capacity */
	BAD(child_capacity, LOOM_MAX_CHILD_CAPACITY + 1);
	BAD(stack_va, STACK_VA + 4);
	BAD(stack_count, 257);
	BAD(record_va, RECORD_VA + 1);
	BAD(record_capacity, LOOM_MAX_WORK_RECORDS + 1);
	BAD(budget, 0);
	BAD(status_va, STATUS_VA + 2);
	BAD(flags, LOOM_RUN_WORK_FLAGS_MASK + 1);
	BAD(reserved, 1);
	/* one dword short: the size, before any field */
	emit_prologue();
	emit_run_work(&p);
	cmd_len--;
	cmd[8] = LOOM_PKT_HEADER(LOOM_PKT_RUN_WORK, sizeof(p) / 4 - 1);
	d = run();
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_SIZE, d.status);
	/* no configuration */
	cmd_len = 0;
	p = packet(1, 10);
	emit_run_work(&p);
	CHECK_EQ(LOOM_STATUS_NO_CONFIG, run().status);
	teardown();
}

/* ---- loom_work_run() over fake memory and a scripted run_items ----------- */

#define FAKE_MEM	(1u << 16)
#define F_STACK		0x0000u
#define F_RECORDS	0x4000u
#define F_STATUS	0x8000u

static uint8_t fake_mem[FAKE_MEM];
static uint64_t fail_payload, narrow_payload;
static unsigned batches;

static int fake_read(void *opaque, uint64_t va, void *buf, size_t len)
{
	(void)opaque;
	if (va + len > FAKE_MEM)
		return LOOM_STATUS_DMA_ERROR;
	memcpy(buf, fake_mem + va, len);
	return LOOM_STATUS_OK;
}

static int fake_write(void *opaque, uint64_t va, const void *buf, size_t len)
{
	(void)opaque;
	if (va + len > FAKE_MEM)
		return LOOM_STATUS_DMA_ERROR;
	memcpy(fake_mem + va, buf, len);
	return LOOM_STATUS_OK;
}

/* p < 100: children 10p and 10p + 1 (narrow_payload's: outside i32). */
static int fake_run_items(void *opaque, const uint64_t *payloads, uint32_t n,
			  uint64_t *children, uint32_t *counts, uint32_t *done,
			  uint32_t *failed)
{
	(void)opaque;
	batches++;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t p = payloads[i];

		if (p == fail_payload) {
			*done = i;
			*failed = i;
			return LOOM_STATUS_DMA_ERROR;
		}
		counts[i] = p < 100 ? 2 : 0;
		children[2 * i] = p == narrow_payload ? 1ULL << 31 : 10 * p;
		children[2 * i + 1] = 10 * p + 1;
	}
	*done = n;
	return LOOM_STATUS_OK;
}

static const int fake_stop;
static const struct loom_work_ops fake_ops = {
	.read = fake_read, .write = fake_write,
	.run_items = fake_run_items, .stop = &fake_stop,
};

/* Initial entries of payloads 1..5, 5 on top. */
static struct loom_pkt_run_work fake_start(uint32_t flags)
{
	memset(fake_mem, 0, sizeof(fake_mem));
	for (uint32_t i = 0; i < 5; i++) {
		struct loom_hw_work_entry e = { i + 1, LOOM_WORK_NO_PARENT, i };

		memcpy(fake_mem + F_STACK + i * sizeof(e), &e, sizeof(e));
	}
	batches = 0;
	return (struct loom_pkt_run_work){
		.child_capacity = 2, .stack_va = F_STACK, .stack_capacity = 64,
		.stack_count = 5, .record_va = F_RECORDS, .record_capacity = 64,
		.budget = 5, .status_va = F_STATUS, .flags = flags,
	};
}

static struct loom_hw_work_entry fake_entry(uint32_t i)
{
	struct loom_hw_work_entry e;

	memcpy(&e, fake_mem + F_STACK + i * sizeof(e), sizeof(e));
	return e;
}

static struct loom_hw_work_record fake_record(uint32_t i)
{
	struct loom_hw_work_record r;

	memcpy(&r, fake_mem + F_RECORDS + i * sizeof(r), sizeof(r));
	return r;
}

static struct loom_hw_work_status fake_status(void)
{
	struct loom_hw_work_status st;

	memcpy(&st, fake_mem + F_STATUS, sizeof(st));
	return st;
}

/* @n stack entries, bottom first, as (payload, parent, ordinal). */
static void expect_stack(uint32_t n, const uint64_t (*want)[3])
{
	for (uint32_t i = 0; i < n; i++) {
		struct loom_hw_work_entry e = fake_entry(i);

		CHECK_EQ(want[i][0], e.payload);
		CHECK_EQ(want[i][1], e.parent);
		CHECK_EQ(want[i][2], e.ordinal);
	}
}

/*
 * All five items in one batch, top first; the third fails: the two
 * before it are recorded with their children stacked, the two after it
 * stay below untouched, the failing one ends on top.
 */
TEST(batch_failure_keeps_the_failing_item_on_top)
{
	static const uint64_t want[7][3] = {
		{ 1, LOOM_WORK_NO_PARENT, 0 }, { 2, LOOM_WORK_NO_PARENT, 1 },
		{ 41, 1, 1 }, { 40, 1, 0 }, { 51, 0, 1 }, { 50, 0, 0 },
		{ 3, LOOM_WORK_NO_PARENT, 2 },
	};
	struct loom_pkt_run_work p = fake_start(0);
	uint32_t detail;

	fail_payload = 3;
	narrow_payload = 0;
	CHECK_EQ(LOOM_STATUS_DMA_ERROR, loom_work_run(&fake_ops, &p, &detail));
	CHECK_EQ(1, batches);
	CHECK_EQ(LOOM_WORK_STOP_FAILED, fake_status().stop);
	CHECK_EQ(2, fake_status().items_run);
	CHECK_EQ(7, fake_status().stack_count);
	CHECK_EQ(5, fake_record(0).entry.payload);
	CHECK_EQ(4, fake_record(1).entry.payload);
	CHECK_EQ(2, fake_record(1).child_count);
	expect_stack(7, want);
}

/*
 * The second item's child is no i32: the batch is written back without
 * it, its entry on top, and the packet stops.
 */
TEST(batch_narrow_item_goes_back_on_top)
{
	static const uint64_t want[9][3] = {
		{ 11, 3, 1 }, { 10, 3, 0 }, { 21, 2, 1 }, { 20, 2, 0 },
		{ 31, 1, 1 }, { 30, 1, 0 }, { 51, 0, 1 }, { 50, 0, 0 },
		{ 4, LOOM_WORK_NO_PARENT, 3 },
	};
	struct loom_pkt_run_work p = fake_start(LOOM_RUN_WORK_CHILDREN_I32);
	uint32_t detail;

	fail_payload = 0;
	narrow_payload = 4;
	CHECK_EQ(LOOM_STATUS_OK, loom_work_run(&fake_ops, &p, &detail));
	CHECK_EQ(1, batches);
	CHECK_EQ(LOOM_WORK_STOP_CHILD_WIDTH, fake_status().stop);
	CHECK_EQ(4, fake_status().items_run);
	CHECK_EQ(9, fake_status().stack_count);
	CHECK_EQ(3, fake_record(1).entry.payload);
	CHECK_EQ(1, fake_record(3).entry.payload);
	expect_stack(9, want);
}

/*
 * Batches never take more than the stack has room for, and take half of
 * it at most: one at a time here, until the next does not fit.
 */
TEST(batches_keep_room_for_every_child)
{
	struct loom_pkt_run_work p = fake_start(0);
	uint32_t detail;

	fail_payload = narrow_payload = 0;
	p.stack_capacity = 7;		/* 5 + 2: room for two items */
	p.budget = 3;
	CHECK_EQ(LOOM_STATUS_OK, loom_work_run(&fake_ops, &p, &detail));
	CHECK_EQ(LOOM_WORK_STOP_STACK_FULL, fake_status().stop);
	CHECK_EQ(2, fake_status().items_run);
	CHECK_EQ(7, fake_status().stack_count);
	CHECK_EQ(2, batches);
}

int main(void)
{
	RUN(whole_tree_in_one_packet);
	RUN(stops_leave_a_resumable_stack);
	RUN(full_stack_makes_no_progress_but_loses_nothing);
	RUN(overflow_names_the_item_and_leaves_it_on_top);
	RUN(narrow_children_stop_at_their_parent);
	RUN(faults_reach_the_completion);
	RUN(every_malformed_field_rejected);
	RUN(batch_failure_keeps_the_failing_item_on_top);
	RUN(batch_narrow_item_goes_back_on_top);
	RUN(batches_keep_room_for_every_child);
	return checks_done();
}
