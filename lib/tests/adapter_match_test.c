// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The matching of a work-stack report (lib/adapter_match.c), fed what the
 * device's own engine writes (qemu-device/engine, run on the host): the
 * tree spawner drained through RUN_WORK packets, whole or stopped on a
 * bound, its records and left stack matched against the batch, and the
 * steps committed through the scheduler as adapter_work.c commits them,
 * so every node is completed exactly once and the domain completes.  A
 * report altered so that it no longer tiles is refused, never committed.
 */
#include <errno.h>
#include <stddef.h>

#include "check.h"
#include "configs.h"
#include "cp_fixture.h"

#include "adapter_match.h"

#define CHECK_OK(call)		CHECK_EQ(0, (call))
#define REQUIRE_OK(call)	REQUIRE_EQ(0, (call))

#define TABLE_VA	DATA_VA
#define STACK_VA	(DATA_VA + 0x10000)
#define RECORD_VA	(DATA_VA + 0x20000)
#define STATUS_VA	(DATA_VA + 0x30000)

#define TREE_NODES	300
#define CAP		6
#define MAX_RECORDS	1024
#define MAX_STACK	256
#define MAX_SLOTS	(MAX_RECORDS + MAX_STACK)
#define MAX_BATCH	8

/* One packet: what the engine wrote, copied out as adapter_work.c does. */
struct packet {
	struct loom_hw_work_status status;
	struct loom_hw_work_record recs[MAX_RECORDS];
	struct loom_hw_work_entry left[MAX_STACK];
	uint32_t detail;
};

/* The matcher's room, as loom_work_stack_setup() sizes it. */
static uint32_t base[MAX_RECORDS], claims[MAX_SLOTS], slot_held[MAX_SLOTS];
static uint64_t slot_payload[MAX_SLOTS];
static bool slot_taken[MAX_SLOTS];
static struct loom_sched_step steps[MAX_RECORDS];

static struct loom_work_match matcher(void)
{
	return (struct loom_work_match){
		.child_capacity = CAP, .max_slots = MAX_SLOTS,
		.base = base, .claim = claims, .slot_payload = slot_payload,
		.slot_taken = slot_taken, .slot_held = slot_held,
		.steps = steps,
	};
}

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
	static int64_t first[TREE_NODES], count[TREE_NODES];

	cp_fixture_init();
	loom_test_tree_gen(first, count, TREE_NODES, CAP, 777);
	for (int n = 0; n < TREE_NODES; n++) {
		int64_t row[2] = { first[n], count[n] };

		poke(TABLE_VA + 16 * n, row, sizeof(row));
	}
}

/*
 * Runs one RUN_WORK packet of the tree spawner over the @n entries of
 * @stack, stopping after @budget items, into @p: the engine's status,
 * records and left stack.
 */
static void run_packet(const struct loom_hw_work_entry *stack, uint32_t n,
		       uint32_t budget, uint32_t child_capacity,
		       struct packet *p)
{
	static uint8_t image[16384];
	size_t size = loom_test_config_tree_spawner(image, sizeof(image), 4, 4);
	struct loom_pkt_run_work w = {
		.header = LOOM_PKT_HEADER(LOOM_PKT_RUN_WORK,
					  sizeof(struct loom_pkt_run_work) / 4),
		.child_capacity = child_capacity,
		.stack_va = STACK_VA, .stack_capacity = MAX_STACK,
		.stack_count = n,
		.record_va = RECORD_VA, .record_capacity = MAX_RECORDS,
		.budget = budget, .status_va = STATUS_VA,
	};
	struct loom_hw_completion d;

	poke(STACK_VA, stack, n * sizeof(*stack));
	poke(CONFIG_VA, image, size);
	cmd_len = 0;
	emit32(LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 4));
	emit32((uint32_t)size);
	emit64(CONFIG_VA);
	emit32(LOOM_PKT_HEADER(LOOM_PKT_SET_OPERANDS, 4));
	emit32(1);
	emit64(TABLE_VA);
	memcpy(&cmd[cmd_len], &w, sizeof(w));
	cmd_len += sizeof(w) / 4;
	d = run();
	p->detail = d.detail;
	peek(STATUS_VA, &p->status, sizeof(p->status));
	REQUIRE(p->status.items_run <= MAX_RECORDS);
	REQUIRE(p->status.stack_count <= MAX_STACK);
	peek(RECORD_VA, p->recs, p->status.items_run * sizeof(p->recs[0]));
	peek(STACK_VA, p->left, p->status.stack_count * sizeof(p->left[0]));
}

static struct loom_work_report report_of(const struct packet *p)
{
	return (struct loom_work_report){
		.recs = p->recs, .nrec = p->status.items_run,
		.left = p->left, .n_left = p->status.stack_count,
		.top = p->status.stop == LOOM_WORK_STOP_FAILED ||
		       p->status.stop == LOOM_WORK_STOP_CHILD_WIDTH,
	};
}

/* The root alone as a packet's batch. */
static const struct loom_hw_work_entry root_entry = {
	0, LOOM_WORK_NO_PARENT, 0,
};

/* A batch's stack, batch order from the top (adapter_work.c's stack_batch()). */
static uint32_t batch_stack(const struct loom_sched_item *batch, uint32_t n,
			    struct loom_hw_work_entry *e)
{
	for (uint32_t i = 0; i < n; i++)
		e[n - 1 - i] = (struct loom_hw_work_entry){
			batch[i].payload, LOOM_WORK_NO_PARENT, i,
		};
	return n;
}

/*
 * The whole tree in one packet: every slot is claimed by a record, so
 * every child is taken, each record's step holds the item its record
 * ran, and the steps publish every node once.
 */
TEST(whole_tree_matches_every_child_to_its_record)
{
	static struct packet p;
	struct loom_work_match m = matcher();
	struct loom_work_report r;
	bool unrun[1] = { true };
	uint64_t children = 0;

	setup();
	run_packet(&root_entry, 1, 100000, CAP, &p);
	REQUIRE_EQ(LOOM_WORK_STOP_QUIESCENT, p.status.stop);
	REQUIRE_EQ(TREE_NODES, p.status.items_run);
	r = report_of(&p);
	CHECK_OK(loom_work_match(&m, &r, 1, unrun));
	CHECK(!unrun[0]);
	CHECK_EQ(UINT32_MAX, loom_work_steps(&m, &r, 1, NULL, 0, NULL));
	CHECK_EQ(0, steps[0].held);
	for (uint32_t i = 0; i < r.nrec; i++) {
		const struct loom_hw_work_entry *e = &p.recs[i].entry;

		CHECK_EQ(p.recs[i].child_count, steps[i].count);
		for (uint32_t k = 0; k < steps[i].count; k++)
			CHECK(steps[i].taken[k]);
		children += steps[i].count;
		if (e->parent == LOOM_WORK_NO_PARENT)
			continue;
		/* the record ran the child its parent's step published */
		CHECK_EQ(slot_held[loom_work_slot(&m, e->parent, e->ordinal)],
			 steps[i].held);
		CHECK_EQ(e->payload,
			 steps[e->parent].payloads[e->ordinal]);
	}
	CHECK_EQ(TREE_NODES - 1, children);
	cp_fixture_fini();
}

/*
 * One packet over *@n batch items and its commit, as adapter_work.c's
 * loop makes them without the device's memory or a ring: run, match the
 * report, commit its steps.  Children left on the stack are queued for a
 * later batch; the batch items the packet did not reach stay active and
 * are moved to the front of @batch, *@n of them.
 */
static void packet_and_commit(struct loom_sched *s,
			      struct loom_sched_item *batch, size_t *n,
			      uint32_t budget, unsigned *seen,
			      uint64_t *completed)
{
	static struct packet p;
	static struct loom_sched_held held[MAX_BATCH + MAX_RECORDS + 1];
	static struct loom_sched_item items[MAX_RECORDS];
	struct loom_hw_work_entry stack[MAX_BATCH];
	bool unrun[MAX_BATCH], live[MAX_BATCH];
	struct loom_work_match m = matcher();
	struct loom_sched_commit c;
	struct loom_work_report r;
	size_t k = 0;

	for (size_t i = 0; i < *n; i++)
		unrun[i] = true;
	run_packet(stack, batch_stack(batch, *n, stack), budget, CAP, &p);
	REQUIRE(p.status.stop <= LOOM_WORK_STOP_STACK_FULL);
	r = report_of(&p);
	REQUIRE_OK(loom_work_match(&m, &r, *n, unrun));
	REQUIRE_EQ(UINT32_MAX, loom_work_steps(&m, &r, *n, NULL, 0, NULL));
	loom_sched_commit_begin(&c, s, 0, batch, *n, held,
				sizeof(held) / sizeof(held[0]));
	for (uint32_t i = 0; i < r.nrec; i++)
		CHECK_OK(loom_sched_commit_step(&c, &steps[i], &items[i]));
	loom_sched_commit_end(&c, UINT32_MAX, NULL, live);
	CHECK_OK(c.error);
	CHECK_EQ(r.nrec, c.completed);
	for (uint32_t i = 0; i < r.nrec; i++) {
		REQUIRE(items[i].payload < TREE_NODES);
		CHECK_EQ(p.recs[i].entry.payload, items[i].payload);
		seen[items[i].payload]++;
	}
	*completed += c.completed;
	for (size_t i = 0; i < *n; i++) {
		CHECK_EQ(unrun[i], live[i]);
		if (live[i])
			batch[k++] = batch[i];
	}
	*n = k;
}

/* Drains the tree through packets of @budget items: each node once. */
static void drain_with_budget(uint32_t budget)
{
	struct loom_sched_config config = {
		.workers = 1, .deque_capacity = 4096,
		.max_batch = MAX_BATCH,
	};
	struct loom_sched_item batch[MAX_BATCH];
	unsigned seen[TREE_NODES] = { 0 }, packets = 0;
	uint64_t completed = 0;
	struct loom_sched *s;
	size_t n;

	setup();
	REQUIRE_OK(loom_sched_create(&config, &s));
	REQUIRE_OK(loom_sched_admit(s, 0, NULL));
	while (loom_sched_acquire_batch(s, 0, batch, MAX_BATCH, 0, &n) ==
	       LOOM_OK) {
		while (n) {
			packet_and_commit(s, batch, &n, budget, seen,
					  &completed);
			REQUIRE(++packets < 10000);
		}
	}
	CHECK_EQ(TREE_NODES, completed);
	for (int k = 0; k < TREE_NODES; k++)
		CHECK_EQ(1, seen[k]);
	CHECK_EQ(LOOM_WORK_COMPLETED,
		 loom_work_domain_status(loom_sched_domain(s)));
	loom_sched_destroy(s);
	cp_fixture_fini();
}

TEST(one_packet_commits_the_whole_tree_once)
{
	drain_with_budget(100000);
}

TEST(packets_stopped_on_a_budget_commit_every_node_once)
{
	drain_with_budget(7);
}

/*
 * A packet whose item spawned more than the capacity stops with that item
 * on top of its stack: the worker takes it (so the commit can cancel it)
 * and the matcher names its held index.
 */
TEST(failing_top_entry_is_taken_and_named)
{
	int64_t rows[4] = { 1, 1, 20, 3 };	/* node 0: child 1; node 1: 3 */
	static struct packet p;
	struct loom_work_match m = matcher();
	struct loom_work_report r;
	bool unrun[1] = { true };
	uint32_t slot;

	setup();
	poke(TABLE_VA, rows, sizeof(rows));
	run_packet(&root_entry, 1, 100, 2, &p);
	REQUIRE_EQ(LOOM_WORK_STOP_FAILED, p.status.stop);
	REQUIRE_EQ(1, p.status.items_run);
	REQUIRE_EQ(1, p.status.stack_count);
	r = report_of(&p);
	CHECK_OK(loom_work_match(&m, &r, 1, unrun));
	slot = loom_work_slot(&m, p.left[0].parent, p.left[0].ordinal);
	CHECK_EQ(1, loom_work_steps(&m, &r, 1, NULL, 0, NULL));
	CHECK(slot_taken[slot]);
	CHECK_EQ(1, slot_held[slot]);
	cp_fixture_fini();
}

/*
 * A packet stopped on its budget, copied: what the corruption tests
 * alter, and the carry test runs ahead from.
 */
static void stopped_packet(struct packet *p)
{
	setup();
	run_packet(&root_entry, 1, 20, CAP, p);
	cp_fixture_fini();
	REQUIRE_EQ(LOOM_WORK_STOP_BUDGET, p->status.stop);
	REQUIRE(p->status.stack_count >= 3);
}

/*
 * The packet run ahead takes a batch item and two children left on the
 * stack: the worker takes those (so they stay active, the next batch) and
 * the carry learns their held indices; the other children left are queued.
 */
TEST(carry_takes_its_slots_and_learns_their_held_indices)
{
	static struct packet p;
	struct loom_work_match m = matcher();
	struct loom_work_report r;
	bool unrun[2] = { true, true };
	uint32_t carry[3], held[3], queued = 0;

	stopped_packet(&p);
	r = report_of(&p);
	/* batch item 1 was never on the stack: the device did not reach it */
	REQUIRE_OK(loom_work_match(&m, &r, 2, unrun));
	CHECK(!unrun[0] && unrun[1]);
	carry[0] = LOOM_CARRY_BATCH | 1;
	carry[1] = loom_work_slot(&m, p.left[0].parent, p.left[0].ordinal);
	carry[2] = loom_work_slot(&m, p.left[1].parent, p.left[1].ordinal);
	CHECK_EQ(UINT32_MAX, loom_work_steps(&m, &r, 2, carry, 3, held));
	CHECK_EQ(1, held[0]);
	for (int j = 1; j < 3; j++) {
		CHECK(slot_taken[carry[j]]);
		CHECK_EQ(slot_held[carry[j]], held[j]);
		CHECK(held[j] >= 2);
	}
	for (uint32_t k = 2; k < r.n_left; k++)
		queued += !slot_taken[loom_work_slot(&m, p.left[k].parent,
						      p.left[k].ordinal)];
	CHECK_EQ(r.n_left - 2, queued);
}

/* Matches @p altered by @alter: the result. */
static int match_altered(const struct packet *p,
			 void (*alter)(struct packet *q))
{
	static struct packet q;
	struct loom_work_match m = matcher();
	struct loom_work_report r;
	bool unrun[1] = { true };

	q = *p;
	alter(&q);
	r = report_of(&q);
	return loom_work_match(&m, &r, 1, unrun);
}

static void unchanged(struct packet *q)
{
	(void)q;
}

/* Two stack entries claim the same child. */
static void claimed_twice(struct packet *q)
{
	q->left[1] = q->left[0];
}

/* A child nobody claims: the stack lost an entry. */
static void entry_lost(struct packet *q)
{
	q->status.stack_count--;
}

static void too_many_children(struct packet *q)
{
	q->recs[0].child_count = CAP + 1;
}

/* A record names a parent recorded after it. */
static void parent_later(struct packet *q)
{
	q->recs[1].entry.parent = 2;
}

static void ordinal_beyond_parent(struct packet *q)
{
	q->left[0].ordinal = q->recs[q->left[0].parent].child_count;
}

/* A batch entry names an item the batch does not have. */
static void foreign_batch_item(struct packet *q)
{
	q->recs[0].entry.ordinal = 1;
}

/* The root ran twice. */
static void batch_item_run_twice(struct packet *q)
{
	q->left[0] = q->recs[0].entry;
}

/* More children than the matcher has slots for. */
static void too_many_slots(struct packet *q)
{
	for (uint32_t i = 0; i < q->status.items_run; i++)
		q->recs[i].child_count = CAP;
	q->status.items_run = MAX_RECORDS;
	for (uint32_t i = 20; i < MAX_RECORDS; i++)
		q->recs[i] = (struct loom_hw_work_record){
			.entry = { 0, 0, 0 }, .child_count = CAP,
		};
}

TEST(reports_that_do_not_tile_are_refused)
{
	static struct packet p;

	stopped_packet(&p);
	CHECK_OK(match_altered(&p, unchanged));
	CHECK_EQ(-EIO, match_altered(&p, claimed_twice));
	CHECK_EQ(-EIO, match_altered(&p, entry_lost));
	CHECK_EQ(-EIO, match_altered(&p, too_many_children));
	CHECK_EQ(-EIO, match_altered(&p, parent_later));
	CHECK_EQ(-EIO, match_altered(&p, ordinal_beyond_parent));
	CHECK_EQ(-EIO, match_altered(&p, foreign_batch_item));
	CHECK_EQ(-EIO, match_altered(&p, batch_item_run_twice));
	CHECK_EQ(-EIO, match_altered(&p, too_many_slots));
}

int main(void)
{
	RUN(whole_tree_matches_every_child_to_its_record);
	RUN(one_packet_commits_the_whole_tree_once);
	RUN(packets_stopped_on_a_budget_commit_every_node_once);
	RUN(failing_top_entry_is_taken_and_named);
	RUN(carry_takes_its_slots_and_learns_their_held_indices);
	RUN(reports_that_do_not_tile_are_refused);
	return checks_done();
}
