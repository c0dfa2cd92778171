// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The command processor, end to end on the host: descriptors and command
 * buffers in (fake) bus memory, translated by the real MMU, running the real
 * fabric.  Every typed error, fault injection, the state dump, and the two
 * hand-built programs (vector add, tree-child spawner) checked against C.
 */
#include <pthread.h>
#include <unistd.h>

#include "check.h"
#include "configs.h"
#include "cp_fixture.h"

static void setup(void)
{
	cp_fixture_init();
}

static void teardown(void)
{
	cp_fixture_fini();
}

/* ---- command buffer building --------------------------------------------- */

static void emit_load_config(uint64_t va, uint32_t size)
{
	emit32(LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 4));
	emit32(size);
	emit64(va);
}

static void emit_operands(unsigned n, const uint64_t *v)
{
	emit32(LOOM_PKT_HEADER(LOOM_PKT_SET_OPERANDS, 2 + 2 * n));
	emit32(n);
	for (unsigned i = 0; i < n; i++)
		emit64(v[i]);
}

static void emit_dense(unsigned rank, const int64_t *extents)
{
	emit32(LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 2 + 2 * rank));
	emit32(rank);
	for (unsigned i = 0; i < rank; i++)
		emit64((uint64_t)extents[i]);
}

static void emit_dense_block(unsigned rank, const int64_t *extents,
			     int64_t begin, int64_t end)
{
	emit32(LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 6 + 2 * rank));
	emit32(rank);
	for (unsigned i = 0; i < rank; i++)
		emit64((uint64_t)extents[i]);
	emit64((uint64_t)begin);
	emit64((uint64_t)end);
}

static void emit_items(uint32_t count, uint64_t payload_va, uint64_t result_va,
		       uint32_t capacity)
{
	emit32(LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_ITEMS, 8));
	emit32(count);
	emit64(payload_va);
	emit64(result_va);
	emit32(capacity);
	emit32(0);
}

static void emit_write(unsigned op, uint64_t va)
{
	emit32(LOOM_PKT_HEADER(op, 4));
	emit32(0);
	emit64(va);
}

/* Writes a configuration image at CONFIG_VA; returns its size. */
static uint32_t put_config(size_t (*build)(void *, size_t, unsigned, unsigned))
{
	static uint8_t image[16384];
	size_t n = build(image, sizeof(image), 4, 4);

	fake_bus_poke(&bus, CONFIG_VA, image, n);
	return (uint32_t)n;
}

static uint64_t peek64(uint64_t va)
{
	uint64_t v;

	fake_bus_peek(&bus, va, &v, 8);
	return v;
}

static void poke64(uint64_t va, uint64_t v)
{
	fake_bus_poke(&bus, va, &v, 8);
}

/* ---- vector add ------------------------------------------------------------ */

static struct loom_hw_completion vector_add(int64_t n, uint64_t a, uint64_t b,
					    uint64_t c)
{
	uint64_t ops[3] = { a, b, c };

	cmd_len = 0;
	emit_load_config(CONFIG_VA, put_config(loom_test_config_vector_add));
	emit_operands(3, ops);
	emit_dense(1, &n);
	emit_write(LOOM_PKT_WRITE_COUNTERS, DATA_VA + 0xf0000);
	return run();
}

TEST(vector_add_matches_c)
{
	const int64_t sizes[] = { 1, 7, 64, 1000 };
	uint64_t a = DATA_VA, b = DATA_VA + 0x10000, c = DATA_VA + 0x20000;

	setup();
	for (unsigned s = 0; s < 4; s++) {
		int64_t n = sizes[s];
		struct loom_hw_completion done;
		struct loom_hw_counters counters;

		for (int64_t i = 0; i < n + 1; i++) {
			poke64(a + 8 * i, (uint64_t)(i * 3 - 500));
			poke64(b + 8 * i, (uint64_t)(1000000007LL * i));
			poke64(c + 8 * i, 0xdeadbeef);
		}
		done = vector_add(n, a, b, c);
		REQUIRE_EQ(LOOM_STATUS_OK, done.status);
		CHECK_EQ(42, done.seqno);
		CHECK_EQ(cmd_len * 4, done.packet_offset);
		CHECK_EQ(n, done.counters.instances);
		CHECK(done.counters.cycles >= (uint64_t)n);
		CHECK_EQ(2 * n, done.counters.mem_reads);
		CHECK_EQ(n, done.counters.mem_writes);
		for (int64_t i = 0; i < n; i++)
			CHECK_EQ((i * 3 - 500) + 1000000007LL * i, peek64(c + 8 * i));
		CHECK_EQ(0xdeadbeef, peek64(c + 8 * n));	/* nothing past the end */
		fake_bus_peek(&bus, DATA_VA + 0xf0000, &counters, sizeof(counters));
		CHECK_EQ(done.counters.cycles, counters.cycles);
		CHECK_EQ(0, dump_len);
	}
	teardown();
}

TEST(vector_add_empty_domain)
{
	struct loom_hw_completion done;

	setup();
	poke64(DATA_VA + 0x20000, 77);
	done = vector_add(0, DATA_VA, DATA_VA + 0x10000, DATA_VA + 0x20000);
	CHECK_EQ(LOOM_STATUS_OK, done.status);
	CHECK_EQ(0, done.counters.instances);
	CHECK_EQ(0, done.counters.mem_writes);
	CHECK_EQ(77, peek64(DATA_VA + 0x20000));
	teardown();
}

/*
 * One launch split in blocks over three jobs (as over three cores) writes
 * what the whole launch writes, each element once; a block that is not
 * inside [0, e0] fails before any instance with detail = rank.
 */
TEST(vector_add_in_blocks)
{
	const int64_t n = 100, cuts[4] = { 0, 33, 34, 100 };
	uint64_t a = DATA_VA, b = DATA_VA + 0x10000, c = DATA_VA + 0x20000;
	uint64_t ops[3] = { a, b, c }, instances = 0;
	struct loom_hw_completion done;

	setup();
	for (int64_t i = 0; i < n + 1; i++) {
		poke64(a + 8 * i, (uint64_t)i);
		poke64(b + 8 * i, (uint64_t)(1000 * i));
		poke64(c + 8 * i, 0xdeadbeef);
	}
	for (unsigned p = 0; p < 3; p++) {
		cmd_len = 0;
		emit_load_config(CONFIG_VA, put_config(loom_test_config_vector_add));
		emit_operands(3, ops);
		emit_dense_block(1, &n, cuts[p], cuts[p + 1]);
		done = run();
		REQUIRE_EQ(LOOM_STATUS_OK, done.status);
		CHECK_EQ(cuts[p + 1] - cuts[p], done.counters.instances);
		CHECK_EQ(cuts[p + 1] - cuts[p], done.counters.mem_writes);
		instances += done.counters.instances;
	}
	CHECK_EQ(n, instances);
	for (int64_t i = 0; i < n; i++)
		CHECK_EQ(1001 * i, peek64(c + 8 * i));
	CHECK_EQ(0xdeadbeef, peek64(c + 8 * n));

	cmd_len = 0;
	emit_load_config(CONFIG_VA, put_config(loom_test_config_vector_add));
	emit_operands(3, ops);
	emit_dense_block(1, &n, 50, 101);
	done = run();
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, done.status);
	CHECK_EQ(1, done.detail);
	CHECK_EQ(0, done.counters.instances);
	cmd_len = 0;
	emit_dense_block(0, NULL, 0, 0);
	done = run();
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, done.status);
	teardown();
}

TEST(same_job_same_results_and_counters)
{
	struct loom_hw_completion first, second;

	setup();
	first = vector_add(100, DATA_VA, DATA_VA, DATA_VA + 0x20000);
	second = vector_add(100, DATA_VA, DATA_VA, DATA_VA + 0x20000);
	CHECK_EQ(LOOM_STATUS_OK, first.status);
	CHECK(memcmp(&first, &second, sizeof(first)) == 0);
	teardown();
}

/*
 * A budget (struct loom_core.budget) calls pause once, in the step it runs
 * out, and changes nothing the job does: the device hands the job to
 * another thread there (loom_cgra.c).  Steps are packets and cycles.
 */
static unsigned pauses;
static uint64_t budget_at_pause;

static void count_pause(struct loom_core *c)
{
	pauses++;
	budget_at_pause = c->budget;
}

TEST(budget_pauses_once_and_changes_nothing)
{
	const uint64_t budgets[] = { 1, 2, 3, 50, 1000000 };
	struct loom_hw_completion plain, budgeted;

	setup();
	core.pause = count_pause;
	plain = vector_add(100, DATA_VA, DATA_VA, DATA_VA + 0x20000);
	REQUIRE_EQ(LOOM_STATUS_OK, plain.status);
	CHECK_EQ(0, pauses);
	for (unsigned i = 0; i < 5; i++) {
		pauses = 0;
		budget_at_pause = 1;
		core.budget = budgets[i];
		budgeted = vector_add(100, DATA_VA, DATA_VA, DATA_VA + 0x20000);
		CHECK(memcmp(&plain, &budgeted, sizeof(plain)) == 0);
		/* 4 packets and the cycles: only the last budget outlasts them */
		CHECK_EQ(i < 4 ? 1 : 0, pauses);
		if (i < 4)
			CHECK_EQ(0, budget_at_pause);
		else	/* every packet and every cycle was counted */
			CHECK(core.budget <= budgets[i] - 4 - plain.counters.cycles);
		core.budget = 0;
	}
	core.pause = NULL;
	teardown();
}

/* ---- tree traversal over items ------------------------------------------------ */

#define TREE_NODES	40

/* A fixed irregular tree: node n has (n * 7 + 3) % 4 children, numbered BFS. */
static void make_tree(int64_t first[TREE_NODES], int64_t count[TREE_NODES])
{
	int64_t next = 1;

	for (int n = 0; n < TREE_NODES; n++) {
		int64_t k = (n * 7 + 3) % 4;

		if (next + k > TREE_NODES)
			k = TREE_NODES - next;
		first[n] = next;
		count[n] = k;
		next += k;
	}
}

TEST(tree_spawner_bfs_matches_c)
{
	const uint64_t table = DATA_VA, payloads = DATA_VA + 0x1000;
	const uint64_t results = DATA_VA + 0x2000;
	const uint32_t cap = 4;
	int64_t first[TREE_NODES], count[TREE_NODES];
	uint64_t frontier[TREE_NODES], next[TREE_NODES];
	unsigned nf = 1, visited = 0;
	struct loom_hw_completion done;

	setup();
	make_tree(first, count);
	for (int n = 0; n < TREE_NODES; n++) {
		poke64(table + 16 * n, (uint64_t)first[n]);
		poke64(table + 16 * n + 8, (uint64_t)count[n]);
	}
	frontier[0] = 0;
	while (nf) {
		unsigned nn = 0;

		for (unsigned i = 0; i < nf; i++)
			poke64(payloads + 8 * i, frontier[i]);
		cmd_len = 0;
		emit_load_config(CONFIG_VA, put_config(loom_test_config_tree_spawner));
		emit_operands(1, &table);
		emit_items(nf, payloads, results, cap);
		done = run();
		REQUIRE_EQ(LOOM_STATUS_OK, done.status);
		CHECK_EQ(nf, done.counters.items);
		for (unsigned i = 0; i < nf; i++) {
			uint64_t rec = results + i * LOOM_ITEM_RESULT_SIZE(cap);
			uint32_t got = (uint32_t)peek64(rec);
			int64_t n = (int64_t)frontier[i];

			CHECK_EQ(count[n], got);
			for (uint32_t k = 0; k < got && k < cap; k++) {
				CHECK_EQ(first[n] + k, peek64(rec + 8 + 8 * k));
				next[nn++] = peek64(rec + 8 + 8 * k);
			}
		}
		visited += nf;
		memcpy(frontier, next, nn * sizeof(next[0]));
		nf = nn;
	}
	CHECK_EQ(TREE_NODES, visited);
	teardown();
}

/* The tree marker spawns as the spawner does and marks each item's cell. */
TEST(tree_marker_spawns_and_marks_every_item)
{
	const uint64_t table = DATA_VA, payloads = DATA_VA + 0x1000;
	const uint64_t results = DATA_VA + 0x2000, out = DATA_VA + 0x8000;
	const uint64_t ops[3] = { table, 0, out };
	const uint32_t cap = 4;
	int64_t first[TREE_NODES], count[TREE_NODES];
	struct loom_hw_completion done;

	setup();
	make_tree(first, count);
	for (int n = 0; n < TREE_NODES; n++) {
		poke64(table + 16 * n, (uint64_t)first[n]);
		poke64(table + 16 * n + 8, (uint64_t)count[n]);
		poke64(payloads + 8 * n, (uint64_t)n);
		poke64(out + 8 * n, ~0ULL);
	}
	poke64(out + 8 * TREE_NODES, ~0ULL);
	emit_load_config(CONFIG_VA, put_config(loom_test_config_tree_marker));
	emit_operands(3, ops);
	emit_items(TREE_NODES - 1, payloads + 8, results, cap);
	done = run();
	REQUIRE_EQ(LOOM_STATUS_OK, done.status);
	CHECK_EQ(TREE_NODES - 1, done.counters.items);
	CHECK_EQ(~0ULL, peek64(out));
	CHECK_EQ(~0ULL, peek64(out + 8 * TREE_NODES));
	for (unsigned i = 0; i < TREE_NODES - 1; i++) {
		uint64_t rec = results + i * LOOM_ITEM_RESULT_SIZE(cap);
		int64_t n = i + 1;

		CHECK_EQ(out + 8 * n, peek64(out + 8 * n));
		CHECK_EQ(count[n], (uint32_t)peek64(rec));
		for (int64_t k = 0; k < count[n]; k++)
			CHECK_EQ(first[n] + k, peek64(rec + 8 + 8 * k));
	}
	teardown();
}

TEST(child_overflow_names_the_item)
{
	const uint64_t table = DATA_VA, payloads = DATA_VA + 0x1000;
	const uint64_t results = DATA_VA + 0x2000;
	struct loom_hw_completion done;

	setup();
	/* node 0: 1 child; node 1: 3 children; capacity 2 */
	poke64(table + 0, 10);
	poke64(table + 8, 1);
	poke64(table + 16, 20);
	poke64(table + 24, 3);
	poke64(payloads, 0);
	poke64(payloads + 8, 1);
	emit_load_config(CONFIG_VA, put_config(loom_test_config_tree_spawner));
	emit_operands(1, &table);
	emit_items(2, payloads, results, 2);
	done = run();
	CHECK_EQ(LOOM_STATUS_CHILD_OVERFLOW, done.status);
	CHECK_EQ(1, done.detail);
	CHECK_EQ(8 * 4, done.packet_offset);	/* after LOAD_CONFIG and SET_OPERANDS, 4 dwords each */
	/*
	 * Items are in flight together: a failed dispatch writes no record
	 * header but the overflowing item's (capacity + 1 children), and a
	 * child is in its record as soon as it is spawned.
	 */
	CHECK_EQ(10, peek64(results + 8));
	CHECK_EQ(3, (uint32_t)peek64(results + LOOM_ITEM_RESULT_SIZE(2)));
	CHECK(dump_len > 0);
	teardown();
}

/*
 * Tree-spawner items whose child counts are @counts (first child 100 * n),
 * payloads 0 .. @n - 1 at @payloads; result records poisoned.
 */
static void items_setup(const int64_t *counts, unsigned n, uint64_t table,
			uint64_t payloads, uint64_t results, uint32_t cap)
{
	static uint8_t poison[4096];

	memset(poison, 0xa5, sizeof(poison));
	for (unsigned i = 0; i < n; i++) {
		poke64(table + 16 * i, 100 * i);
		poke64(table + 16 * i + 8, (uint64_t)counts[i]);
		poke64(payloads + 8 * i, i);
	}
	fake_bus_poke(&bus, results, poison, n * LOOM_ITEM_RESULT_SIZE(cap));
}

static struct loom_hw_completion run_items(uint32_t n, uint64_t table,
					   uint64_t payloads, uint64_t results,
					   uint32_t cap)
{
	cmd_len = 0;
	emit_load_config(CONFIG_VA, put_config(loom_test_config_tree_spawner));
	emit_operands(1, &table);
	emit_items(n, payloads, results, cap);
	return run();
}

/*
 * A DISPATCH_ITEMS of more than LOOM_MAX_ITEMS items is refused before any
 * item runs: the device holds a child count per item of the packet, and a
 * guest must not size that (up to 16 GiB per core before the cap).
 */
TEST(items_beyond_the_cap_are_refused)
{
	const uint64_t table = DATA_VA, payloads = DATA_VA + 0x1000;
	const uint64_t results = DATA_VA + 0x2000;
	static const int64_t counts[] = { 1 };
	struct loom_hw_completion d;

	setup();
	items_setup(counts, 1, table, payloads, results, 4);
	d = run_items(LOOM_MAX_ITEMS + 1, table, payloads, results, 4);
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, d.status);
	CHECK_EQ(LOOM_PKT_DISPATCH_ITEMS, d.packet_opcode);
	CHECK_EQ(0, d.counters.items);
	CHECK_EQ(0, d.counters.cycles);
	d = run_items(UINT32_MAX, table, payloads, results, 4);
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, d.status);
	CHECK_EQ(0, d.counters.items);
	/* at the cap the packet runs (and faults where the payloads end) */
	d = run_items(LOOM_MAX_ITEMS, table, payloads, results, 4);
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, d.status);
	CHECK(d.counters.items > 0);
	teardown();
}

/*
 * Items with 0, 1 and capacity children in one dispatch write exactly the
 * records the same items write one per dispatch, in fewer cycles than
 * those dispatches together.
 */
TEST(items_in_one_dispatch_match_one_per_dispatch)
{
	static const int64_t counts[] = { 0, 1, 4, 2, 0, 4, 1, 3, 4, 0, 1, 4 };
	const unsigned n = sizeof(counts) / sizeof(counts[0]);
	const uint64_t table = DATA_VA, payloads = DATA_VA + 0x1000;
	const uint64_t results = DATA_VA + 0x2000;
	const uint32_t cap = 4;
	const size_t rec = LOOM_ITEM_RESULT_SIZE(cap);
	static uint8_t together[4096], alone[4096];
	struct loom_hw_completion done;
	uint64_t cycles = 0, spawns = 0;

	setup();
	items_setup(counts, n, table, payloads, results, cap);
	done = run_items(n, table, payloads, results, cap);
	REQUIRE_EQ(LOOM_STATUS_OK, done.status);
	CHECK_EQ(n, done.counters.items);
	CHECK_EQ(24, done.counters.spawns);
	fake_bus_peek(&bus, results, together, n * rec);

	items_setup(counts, n, table, payloads, results, cap);
	for (unsigned i = 0; i < n; i++) {
		struct loom_hw_completion one;

		one = run_items(1, table, payloads + 8 * i, results + i * rec,
				cap);
		REQUIRE_EQ(LOOM_STATUS_OK, one.status);
		cycles += one.counters.cycles;
		spawns += one.counters.spawns;
	}
	fake_bus_peek(&bus, results, alone, n * rec);
	CHECK(memcmp(together, alone, n * rec) == 0);
	CHECK_EQ(spawns, done.counters.spawns);
	/* pipelined: items overlap instead of each running alone */
	CHECK(2 * done.counters.cycles < cycles);
	teardown();
}

TEST(items_overflow_on_a_middle_item_names_it)
{
	static const int64_t counts[] = { 1, 0, 3, 2, 1 };
	const uint64_t table = DATA_VA, payloads = DATA_VA + 0x1000;
	const uint64_t results = DATA_VA + 0x2000;
	struct loom_hw_completion done;

	setup();
	items_setup(counts, 5, table, payloads, results, 2);
	done = run_items(5, table, payloads, results, 2);
	CHECK_EQ(LOOM_STATUS_CHILD_OVERFLOW, done.status);
	CHECK_EQ(2, done.detail);
	CHECK_EQ(LOOM_PKT_DISPATCH_ITEMS, done.packet_opcode);
	CHECK(dump_len > 0);
	teardown();
}

/* Payloads running into an unmapped page: the first unreadable one faults. */
TEST(items_fault_mid_dispatch)
{
	static const int64_t counts[] = { 1, 2, 1, 1, 1 };
	const uint64_t table = DATA_VA, end = DATA_VA + (1 << 20);
	const uint64_t payloads = end - 16, results = DATA_VA + 0x2000;
	struct loom_hw_completion done;

	setup();
	items_setup(counts, 2, table, payloads, results, 2);
	done = run_items(5, table, payloads, results, 2);
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, done.status);
	CHECK_EQ(LOOM_MMU_FAULT_NOT_MAPPED, done.detail);
	CHECK_EQ(end, done.fault_va);
	CHECK_EQ(2, done.counters.items);
	/* records in read-only memory: the first child's write faults */
	items_setup(counts, 5, table, DATA_VA + 0x1000, results, 2);
	done = run_items(5, table, DATA_VA + 0x1000, RO_VA, 2);
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, done.status);
	CHECK_EQ(LOOM_MMU_FAULT_WRITE, done.detail);
	CHECK(done.fault_va >= RO_VA && done.fault_va < RO_VA + LOOM_PAGE_SIZE);
	teardown();
}

/* An items dispatch that cannot finish is a deadlock, with its dump. */
/*
 * A graph that deadlocks, put at CONFIG_VA; its size.  ADD at (0,0) gets A
 * from a port of @kind; B is routed from its own output, which never
 * fills: the token on A waits forever.
 */
static uint32_t put_deadlock_config(uint8_t kind)
{
	static uint8_t image[4096];
	struct fb *b = malloc(sizeof(*b));
	size_t n;

	fb_init(b, 4, 4);
	fb_port(b, LOOM_DIR_N, 0, kind, 0);
	fb_pe(b, 0, 0, LOOM_OP_ADD, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 0, 0, LOOM_OUT_PE_B, LOOM_SRC_PE);
	n = fb_image(b, image, sizeof(image));
	free(b);
	fake_bus_poke(&bus, CONFIG_VA, image, n);
	return (uint32_t)n;
}

TEST(items_deadlock_reports)
{
	const uint64_t payloads = DATA_VA + 0x1000, results = DATA_VA + 0x2000;
	struct loom_hw_completion d;
	uint32_t n;

	setup();
	n = put_deadlock_config(LOOM_PORT_PAYLOAD);
	poke64(results, 0xa5a5a5a5a5a5a5a5ULL);
	emit_load_config(CONFIG_VA, n);
	emit_items(3, payloads, results, 1);
	d = run();
	CHECK_EQ(LOOM_STATUS_DEADLOCK, d.status);
	CHECK_EQ(LOOM_PKT_DISPATCH_ITEMS, d.packet_opcode);
	CHECK(dump_len > 0);
	/* no item finished: no header was written */
	CHECK_EQ(0xa5a5a5a5a5a5a5a5ULL, peek64(results));
	teardown();
}

/* ---- typed errors ------------------------------------------------------------- */

static struct loom_hw_completion run_words(unsigned n, const uint32_t *words)
{
	cmd_len = 0;
	for (unsigned i = 0; i < n; i++)
		emit32(words[i]);
	return run();
}

TEST(malformed_packets)
{
	struct loom_hw_completion d;

	setup();
	d = run_words(1, (uint32_t[]){ LOOM_PKT_HEADER(99, 1) });
	CHECK_EQ(LOOM_STATUS_BAD_OPCODE, d.status);
	CHECK_EQ(99, d.detail);
	d = run_words(1, (uint32_t[]){ LOOM_PKT_HEADER(LOOM_PKT_NOP, 0) });
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_SIZE, d.status);
	d = run_words(2, (uint32_t[]){ LOOM_PKT_HEADER(LOOM_PKT_NOP, 1),
				       LOOM_PKT_HEADER(LOOM_PKT_NOP, 3) });
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_SIZE, d.status);
	CHECK_EQ(4, d.packet_offset);
	d = run_words(5, (uint32_t[]){ LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 5), 0, 0, 0, 0 });
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_SIZE, d.status);
	d = run_words(1, (uint32_t[]){ LOOM_PKT_HEADER(LOOM_PKT_NOP, 1) | 0x100 });
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, d.status);
	d = run_words(2, (uint32_t[]){ LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 2), 5 });
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, d.status);
	d = run_words(4, (uint32_t[]){ LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 3), 1, 0, 0 });
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_SIZE, d.status);
	d = run_words(6, (uint32_t[]){ LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_DENSE, 6), 1, 4, 0, 0, 0 });
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_SIZE, d.status);
	d = run_words(2, (uint32_t[]){ LOOM_PKT_HEADER(LOOM_PKT_SET_OPERANDS, 2), 17 });
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, d.status);
	d = run_words(3, (uint32_t[]){ LOOM_PKT_HEADER(LOOM_PKT_SET_OPERANDS, 3), 1, 0 });
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_SIZE, d.status);
	d = run_words(4, (uint32_t[]){ LOOM_PKT_HEADER(LOOM_PKT_WRITE_TIMESTAMP, 4), 1,
				       (uint32_t)DATA_VA, 0 });
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, d.status);
	d = run_words(4, (uint32_t[]){ LOOM_PKT_HEADER(LOOM_PKT_WRITE_TIMESTAMP, 4), 0,
				       (uint32_t)DATA_VA + 4, 0 });
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, d.status);
	d = run_words(4, (uint32_t[]){ LOOM_PKT_HEADER(LOOM_PKT_LOAD_CONFIG, 4), 16,
				       (uint32_t)CONFIG_VA + 4, 0 });
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, d.status);
	d = run_words(8, (uint32_t[]){ LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_ITEMS, 8), 1,
				       (uint32_t)DATA_VA, 0, (uint32_t)DATA_VA, 0, 1, 1 });
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, d.status);
	d = run_words(8, (uint32_t[]){ LOOM_PKT_HEADER(LOOM_PKT_DISPATCH_ITEMS, 8), 1,
				       (uint32_t)DATA_VA, 0, (uint32_t)DATA_VA, 0,
				       LOOM_MAX_CHILD_CAPACITY + 1, 0 });
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, d.status);
	teardown();
}

TEST(negative_extent_rejected_before_any_instance)
{
	int64_t ext[2] = { 4, -1 };
	uint64_t ops[3] = { DATA_VA, DATA_VA, DATA_VA + 0x20000 };
	struct loom_hw_completion d;

	setup();
	poke64(DATA_VA + 0x20000, 5);
	emit_load_config(CONFIG_VA, put_config(loom_test_config_vector_add));
	emit_operands(3, ops);
	emit_dense(2, ext);
	d = run();
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, d.status);
	CHECK_EQ(1, d.detail);
	CHECK_EQ(0, d.counters.instances);
	CHECK_EQ(5, peek64(DATA_VA + 0x20000));
	teardown();
}

TEST(ports_disagree_with_dispatch)
{
	uint64_t ops[3] = { DATA_VA, DATA_VA, DATA_VA };
	struct loom_hw_completion d;

	setup();
	/* vector add reads coordinate 0: a rank-0 dispatch has none */
	emit_load_config(CONFIG_VA, put_config(loom_test_config_vector_add));
	emit_operands(3, ops);
	emit_dense(0, NULL);
	d = run();
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, d.status);
	/* and operand 2 needs three operands */
	cmd_len = 0;
	emit_load_config(CONFIG_VA, put_config(loom_test_config_vector_add));
	emit_operands(2, ops);
	emit_dense(1, (int64_t[]){ 1 });
	d = run();
	CHECK_EQ(LOOM_STATUS_BAD_PACKET_FIELD, d.status);
	teardown();
}

TEST(no_config_and_nothing_carries_over)
{
	struct loom_hw_completion d;

	setup();
	emit_dense(1, (int64_t[]){ 1 });
	d = run();
	CHECK_EQ(LOOM_STATUS_NO_CONFIG, d.status);
	/* a configuration loaded by one job is gone in the next */
	d = vector_add(1, DATA_VA, DATA_VA, DATA_VA + 0x20000);
	CHECK_EQ(LOOM_STATUS_OK, d.status);
	cmd_len = 0;
	emit_dense(1, (int64_t[]){ 1 });
	d = run();
	CHECK_EQ(LOOM_STATUS_NO_CONFIG, d.status);
	cmd_len = 0;
	emit_items(1, DATA_VA, DATA_VA + 0x1000, 1);
	d = run();
	CHECK_EQ(LOOM_STATUS_NO_CONFIG, d.status);
	teardown();
}

TEST(bad_config_reports_why)
{
	uint32_t size;
	uint32_t bad = 0x12345678;
	struct loom_hw_completion d;

	setup();
	size = put_config(loom_test_config_vector_add);
	fake_bus_poke(&bus, CONFIG_VA, &bad, 4);
	emit_load_config(CONFIG_VA, size);
	d = run();
	CHECK_EQ(LOOM_STATUS_BAD_CONFIG, d.status);
	CHECK_EQ(LOOM_CONFIG_BAD_MAGIC, d.detail);
	cmd_len = 0;
	put_config(loom_test_config_vector_add);
	emit_load_config(CONFIG_VA, size - 4);
	d = run();
	CHECK_EQ(LOOM_STATUS_BAD_CONFIG, d.status);
	CHECK_EQ(LOOM_CONFIG_BAD_SIZE, d.detail);
	teardown();
}

TEST(mmu_faults_reach_the_completion)
{
	struct loom_hw_completion d;
	struct loom_hw_job job;

	setup();
	/* command buffer unmapped */
	emit32(LOOM_PKT_HEADER(LOOM_PKT_NOP, 1));
	job = job_for_cmd();
	job.cmd_va = 0x7000000;
	d = run_job(&job);
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, d.status);
	CHECK_EQ(LOOM_MMU_FAULT_NOT_MAPPED, d.detail);
	CHECK_EQ(0x7000000, d.fault_va);
	/* a PE store into a read-only page */
	d = vector_add(3, DATA_VA, DATA_VA, RO_VA);
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, d.status);
	CHECK_EQ(LOOM_MMU_FAULT_WRITE, d.detail);
	CHECK_EQ(RO_VA, d.fault_va & ~0xfULL);
	CHECK(dump_len > 0);
	/* a counters write to an unmapped VA */
	cmd_len = 0;
	emit_write(LOOM_PKT_WRITE_COUNTERS, 0x9000000);
	d = run();
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, d.status);
	CHECK_EQ(0x9000000, d.fault_va);
	teardown();
}

TEST(dma_error)
{
	struct loom_hw_completion d;

	setup();
	/* a mapping whose page is outside memory */
	*fake_bus_leaf(&bus, 0x5000000) = 0x7000000000ULL | LOOM_PTE_VALID | LOOM_PTE_READ |
					  LOOM_PTE_WRITE;
	emit_write(LOOM_PKT_WRITE_TIMESTAMP, 0x5000000);
	d = run();
	CHECK_EQ(LOOM_STATUS_DMA_ERROR, d.status);
	teardown();
}

TEST(bad_descriptors)
{
	struct loom_hw_job job;

	setup();
	emit32(LOOM_PKT_HEADER(LOOM_PKT_NOP, 1));
	job = job_for_cmd();
	job.reserved[2] = 1;
	CHECK_EQ(LOOM_STATUS_BAD_DESCRIPTOR, run_job(&job).status);
	job = job_for_cmd();
	job.cmd_size = 6;
	CHECK_EQ(LOOM_STATUS_BAD_DESCRIPTOR, run_job(&job).status);
	job = job_for_cmd();
	job.cmd_size = LOOM_CMD_MAX_SIZE + 4;
	CHECK_EQ(LOOM_STATUS_BAD_DESCRIPTOR, run_job(&job).status);
	job = job_for_cmd();
	job.pt_root += 8;
	CHECK_EQ(LOOM_STATUS_BAD_DESCRIPTOR, run_job(&job).status);
	job = job_for_cmd();
	job.flags = 1;
	CHECK_EQ(LOOM_STATUS_BAD_DESCRIPTOR, run_job(&job).status);
	job = job_for_cmd();
	CHECK_EQ(LOOM_STATUS_OK, run_job(&job).status);
	/* an empty command buffer is a valid, empty job */
	job.cmd_size = 0;
	CHECK_EQ(LOOM_STATUS_OK, run_job(&job).status);
	teardown();
}

TEST(spawn_outside_items)
{
	static uint8_t image[4096];
	struct fb *b = malloc(sizeof(*b));
	struct loom_hw_completion d;
	size_t n;

	setup();
	fb_init(b, 4, 4);
	fb_port(b, LOOM_DIR_N, 0, LOOM_PORT_CTRL, 0);
	fb_pe(b, 0, 0, LOOM_OP_SPAWN, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 0, 0, LOOM_OUT_PE_A, LOOM_SRC_N);
	fb_route(b, 0, 0, LOOM_OUT_S, LOOM_SRC_PE);
	fb_pe(b, 0, 1, LOOM_OP_SINK, LOOM_TYPE_I64, 0, 0);
	fb_route(b, 0, 1, LOOM_OUT_PE_A, LOOM_SRC_N);
	n = fb_image(b, image, sizeof(image));
	free(b);
	fake_bus_poke(&bus, CONFIG_VA, image, n);
	emit_load_config(CONFIG_VA, (uint32_t)n);
	emit_dense(0, NULL);
	d = run();
	CHECK_EQ(LOOM_STATUS_SPAWN_OUTSIDE_ITEMS, d.status);
	teardown();
}

/* ---- injection, stop, dump ---------------------------------------------------- */

TEST(injected_faults_are_consumed)
{
	struct loom_hw_completion d;

	setup();
	core.inject = LOOM_INJECT_MMU_FAULT;
	d = vector_add(2, DATA_VA, DATA_VA, DATA_VA + 0x20000);
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, d.status);
	CHECK_EQ(LOOM_MMU_FAULT_INJECTED, d.detail);
	CHECK_EQ(CMD_VA, d.fault_va);
	CHECK_EQ(LOOM_INJECT_NONE, core.inject);
	core.inject = LOOM_INJECT_DMA_ERROR;
	d = vector_add(2, DATA_VA, DATA_VA, DATA_VA + 0x20000);
	CHECK_EQ(LOOM_STATUS_DMA_ERROR, d.status);
	d = vector_add(2, DATA_VA, DATA_VA, DATA_VA + 0x20000);
	CHECK_EQ(LOOM_STATUS_OK, d.status);
	teardown();
}

TEST(stop_gives_status_and_dump)
{
	struct loom_hw_completion d;
	struct loom_hw_dump *hdr = (struct loom_hw_dump *)dump;
	struct loom_hw_job job;

	setup();
	core.stop = 1;
	d = vector_add(1000, DATA_VA, DATA_VA, DATA_VA + 0x20000);
	CHECK_EQ(LOOM_STATUS_STOPPED, d.status);
	REQUIRE(dump_len == LOOM_DUMP_SIZE(16));
	CHECK_EQ(LOOM_DUMP_MAGIC, hdr->magic);
	CHECK_EQ(LOOM_STATUS_STOPPED, hdr->status);
	CHECK_EQ(42, hdr->seqno);
	CHECK_EQ(4, hdr->width);
	CHECK_EQ(4, hdr->height);
	core.stop = 0;
	/* a job stopped before it ran (an injected hang) */
	job = job_for_cmd();
	loom_core_stopped_job(&core, &job, &d, dump, 64, &dump_len);
	CHECK_EQ(LOOM_STATUS_STOPPED, d.status);
	CHECK_EQ(64, dump_len);		/* truncated to the buffer */
	CHECK_EQ(LOOM_DUMP_MAGIC, hdr->magic);
	teardown();
}

TEST(deadlock_dump_explains)
{
	struct loom_hw_dump *hdr = (struct loom_hw_dump *)dump;
	struct loom_hw_dump_tile *tiles = (struct loom_hw_dump_tile *)(hdr + 1);
	struct loom_hw_completion d;

	setup();
	emit_load_config(CONFIG_VA, put_deadlock_config(LOOM_PORT_CTRL));
	emit_dense(0, NULL);
	d = run();
	CHECK_EQ(LOOM_STATUS_DEADLOCK, d.status);
	REQUIRE(dump_len > sizeof(*hdr));
	CHECK_EQ(LOOM_STATUS_DEADLOCK, hdr->status);
	CHECK_EQ(1, hdr->waiting);
	CHECK_EQ(1, tiles[0].fifo[0]);
	CHECK_EQ(0, tiles[0].fifo[1]);
	CHECK_EQ(LOOM_PKT_DISPATCH_DENSE, hdr->packet_opcode);
	teardown();
}

/*
 * uapi: nothing carries over between jobs, the state dump included.  Job
 * A deadlocks and leaves a token waiting in tile 0; job B fails at its
 * first packet, before any dispatch: its dump shows an empty fabric.
 */
TEST(dump_shows_nothing_of_the_previous_job)
{
	struct loom_hw_dump *hdr = (struct loom_hw_dump *)dump;
	struct loom_hw_dump_tile *tiles = (struct loom_hw_dump_tile *)(hdr + 1);
	const uint32_t bad_opcode = LOOM_PKT_HEADER(LOOM_PKT_OPCODE_COUNT, 1);
	static const struct loom_hw_dump_tile empty;

	setup();
	emit_load_config(CONFIG_VA, put_deadlock_config(LOOM_PORT_CTRL));
	emit_dense(0, NULL);
	REQUIRE_EQ(LOOM_STATUS_DEADLOCK, run().status);
	REQUIRE_EQ(1, hdr->waiting);
	REQUIRE_EQ(1, tiles[0].fifo[0]);

	memset(dump, 0xa5, sizeof(dump));
	CHECK_EQ(LOOM_STATUS_BAD_OPCODE, run_words(1, &bad_opcode).status);
	REQUIRE(dump_len == LOOM_DUMP_SIZE(16));
	CHECK_EQ(LOOM_STATUS_BAD_OPCODE, hdr->status);
	CHECK_EQ(0, hdr->blocked);
	CHECK_EQ(0, hdr->waiting);
	for (unsigned t = 0; t < 16; t++)
		CHECK(!memcmp(&tiles[t], &empty, sizeof(empty)));
	teardown();
}

TEST(timestamp_and_progress)
{
	uint64_t before;
	struct loom_hw_completion d;

	setup();
	before = core.progress;
	d = vector_add(10, DATA_VA, DATA_VA, DATA_VA + 0x20000);
	CHECK_EQ(LOOM_STATUS_OK, d.status);
	CHECK(core.progress > before + 10);
	cmd_len = 0;
	emit_write(LOOM_PKT_WRITE_TIMESTAMP, DATA_VA + 0x30000);
	CHECK_EQ(LOOM_STATUS_OK, run().status);
	CHECK_EQ(0, peek64(DATA_VA + 0x30000));
	teardown();
}

TEST(corrupt_dump_fails_as_dma_error_with_a_lying_header)
{
	struct loom_hw_completion dma, d;
	struct loom_hw_dump *hdr = (struct loom_hw_dump *)dump;
	struct loom_hw_job job;

	setup();
	core.inject = LOOM_INJECT_DMA_ERROR;
	dma = vector_add(2, DATA_VA, DATA_VA, DATA_VA + 0x20000);
	core.inject = LOOM_INJECT_CORRUPT_DUMP;
	memset(dump, 0xa5, sizeof(dump));
	d = vector_add(2, DATA_VA, DATA_VA, DATA_VA + 0x20000);
	CHECK_EQ(LOOM_INJECT_NONE, core.inject);
	CHECK_EQ(LOOM_STATUS_DMA_ERROR, d.status);
	CHECK(memcmp(&dma, &d, sizeof(d)) == 0);
	CHECK_EQ(LOOM_DUMP_MAGIC, hdr->magic);
	CHECK_EQ(42, hdr->seqno);
	CHECK_EQ(LOOM_STATUS_DMA_ERROR, hdr->status);
	CHECK_EQ(255, hdr->width);
	CHECK_EQ(255, hdr->height);
	/* the header lies, the length does not: 16 tiles, nothing beyond */
	CHECK_EQ(LOOM_DUMP_SIZE(16), dump_len);
	CHECK_EQ(0xa5, dump[LOOM_DUMP_SIZE(16)]);
	/* a short buffer truncates as usual */
	core.inject = LOOM_INJECT_CORRUPT_DUMP;
	job = job_for_cmd();
	loom_core_run_job(&core, &job, &d, dump, sizeof(*hdr), &dump_len);
	CHECK_EQ(sizeof(*hdr), dump_len);
	CHECK_EQ(255, hdr->width);
	/* consumed: the next job runs */
	CHECK_EQ(LOOM_STATUS_OK, vector_add(2, DATA_VA, DATA_VA, DATA_VA + 0x20000).status);
	teardown();
}

TEST(wrong_seqno_skews_only_the_record)
{
	struct loom_hw_completion d;

	setup();
	poke64(DATA_VA, 5);
	core.inject = LOOM_INJECT_WRONG_SEQNO;
	d = vector_add(1, DATA_VA, DATA_VA, DATA_VA + 0x20000);
	CHECK_EQ(LOOM_STATUS_OK, d.status);
	CHECK_EQ(42 + LOOM_INJECT_SEQNO_SKEW, d.seqno);
	CHECK_EQ(10, peek64(DATA_VA + 0x20000));	/* the job ran */
	CHECK_EQ(LOOM_INJECT_NONE, core.inject);
	CHECK_EQ(42, vector_add(1, DATA_VA, DATA_VA, DATA_VA + 0x20000).seqno);
	teardown();
}

TEST(queue_injections_leave_the_job_alone)
{
	const int modes[] = { LOOM_INJECT_SKIP_COMPLETION, LOOM_INJECT_BOGUS_HEAD };
	struct loom_hw_completion clean, d;

	setup();
	clean = vector_add(3, DATA_VA, DATA_VA, DATA_VA + 0x20000);
	for (unsigned i = 0; i < 2; i++) {
		core.inject = modes[i];
		d = vector_add(3, DATA_VA, DATA_VA, DATA_VA + 0x20000);
		CHECK(memcmp(&clean, &d, sizeof(d)) == 0);
		CHECK_EQ(0, dump_len);
		CHECK_EQ(LOOM_INJECT_NONE, core.inject);
	}
	teardown();
}

/* ---- the TLB across jobs ------------------------------------------------------ */

TEST(tlb_outlives_jobs_until_invalidated)
{
	/* a slot of its own: DATA_VA + 0x20000 shares CONFIG_VA's */
	uint64_t c = DATA_VA + 0x21000, old_page, new_page;
	uint32_t invalidations = 0;

	setup();
	core.mmu.invalidations = &invalidations;
	poke64(DATA_VA, 21);
	old_page = *fake_bus_leaf(&bus, c) & LOOM_PTE_ADDR_MASK;
	REQUIRE_EQ(LOOM_STATUS_OK, vector_add(1, DATA_VA, DATA_VA, c).status);
	CHECK_EQ(42, *fake_bus_ptr(&bus, old_page));
	/* c's PTE now names another page; nobody invalidates */
	new_page = fake_bus_alloc_page(&bus);
	*fake_bus_leaf(&bus, c) = new_page | LOOM_PTE_VALID | LOOM_PTE_READ | LOOM_PTE_WRITE;
	poke64(DATA_VA, 30);
	REQUIRE_EQ(LOOM_STATUS_OK, vector_add(1, DATA_VA, DATA_VA, c).status);
	CHECK_EQ(60, *fake_bus_ptr(&bus, old_page));
	CHECK_EQ(0, *fake_bus_ptr(&bus, new_page));
	/* LOOM_REG_MMU_INVALIDATE */
	invalidations++;
	poke64(DATA_VA, 50);
	REQUIRE_EQ(LOOM_STATUS_OK, vector_add(1, DATA_VA, DATA_VA, c).status);
	CHECK_EQ(60, *fake_bus_ptr(&bus, old_page));
	CHECK_EQ(100, *fake_bus_ptr(&bus, new_page));
	/* and a reset's flush does the same */
	*fake_bus_leaf(&bus, c) = old_page | LOOM_PTE_VALID | LOOM_PTE_READ | LOOM_PTE_WRITE;
	loom_mmu_flush(&core.mmu);
	REQUIRE_EQ(LOOM_STATUS_OK, vector_add(1, DATA_VA, DATA_VA, c).status);
	CHECK_EQ(100, *fake_bus_ptr(&bus, old_page));
	teardown();
}

/*
 * LOOM_REG_MMU_INVALIDATE is acknowledged only once the accesses in flight
 * have completed.  A bus whose write to one page takes 100 ms stands for
 * a store in flight; another thread invalidates as that store starts, as
 * the glue's register write does, and finds the store landed when
 * loom_mmu_quiesce() returns, not still to come (the driver would then
 * free the page under it).
 */
static struct {
	struct loom_bus bus;
	uint64_t slow_page;
	int in_flight, landed;
} slow;

static int slow_write(void *opaque, uint64_t addr, const void *buf, size_t len)
{
	int ret;

	(void)opaque;
	if ((addr & ~(uint64_t)(LOOM_PAGE_SIZE - 1)) != slow.slow_page)
		return bus.bus.write(bus.bus.opaque, addr, buf, len);
	__atomic_store_n(&slow.in_flight, 1, __ATOMIC_SEQ_CST);
	usleep(100 * 1000);
	ret = bus.bus.write(bus.bus.opaque, addr, buf, len);
	__atomic_store_n(&slow.landed, 1, __ATOMIC_SEQ_CST);
	return ret;
}

static uint32_t invalidations;
static int landed_at_ack = -1;

static void *invalidator(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&slow.in_flight, __ATOMIC_SEQ_CST))
		usleep(100);
	__atomic_fetch_add(&invalidations, 1, __ATOMIC_SEQ_CST);
	loom_mmu_quiesce(&core.mmu);
	landed_at_ack = __atomic_load_n(&slow.landed, __ATOMIC_SEQ_CST);
	return NULL;
}

TEST(invalidation_waits_for_the_store_in_flight)
{
	uint64_t c = DATA_VA + 0x21000;
	pthread_t t;

	setup();
	core.mmu.invalidations = &invalidations;
	slow.bus = (struct loom_bus){
		.opaque = NULL, .read = bus.bus.read, .write = slow_write,
	};
	slow.bus.opaque = bus.bus.opaque;
	slow.slow_page = *fake_bus_leaf(&bus, c) & LOOM_PTE_ADDR_MASK;
	core.bus = &slow.bus;
	poke64(DATA_VA, 21);
	REQUIRE(!pthread_create(&t, NULL, invalidator, NULL));
	CHECK_EQ(LOOM_STATUS_OK, vector_add(1, DATA_VA, DATA_VA, c).status);
	pthread_join(t, NULL);
	CHECK_EQ(1, slow.landed);
	CHECK_EQ(1, landed_at_ack);
	CHECK_EQ(42, peek64(c));
	core.bus = &bus.bus;
	teardown();
}

/* ---- ATOMIC through the MMU ------------------------------------------------ */

/* The atomic counter's job: @n instances (a block when @end > @begin). */
static void atomic_counter_cmd(uint64_t counter_va, int64_t n, int64_t begin,
			       int64_t end)
{
	cmd_len = 0;
	emit_load_config(CONFIG_VA, put_config(loom_test_config_atomic_counter));
	emit_operands(1, &counter_va);
	if (end > begin)
		emit_dense_block(1, &n, begin, end);
	else
		emit_dense(1, &n);
	emit_write(LOOM_PKT_WRITE_COUNTERS, DATA_VA + 0xf0000);
}

TEST(atomic_counter_matches_c)
{
	struct loom_hw_counters c;
	struct loom_hw_completion d;
	uint64_t counter = DATA_VA + 0x100;

	setup();
	poke64(counter, 7);
	atomic_counter_cmd(counter, 1000, 0, 0);
	d = run();
	CHECK_EQ(LOOM_STATUS_OK, d.status);
	CHECK_EQ(7 + 1000 * 1001 / 2, peek64(counter));
	fake_bus_peek(&bus, DATA_VA + 0xf0000, &c, sizeof(c));
	CHECK_EQ(1000, c.mem_reads);
	CHECK_EQ(1000, c.mem_writes);
	CHECK(bus.cmpxchgs >= 1000);
	teardown();
}

TEST(atomic_faults_reach_the_completion)
{
	struct loom_hw_completion d;

	setup();
	/* misaligned: an 8-byte atomic at an odd address */
	atomic_counter_cmd(DATA_VA + 4, 3, 0, 0);
	d = run();
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, d.status);
	CHECK_EQ(LOOM_MMU_FAULT_ALIGN, d.detail);
	CHECK_EQ(DATA_VA + 4, d.fault_va);
	CHECK_EQ(0, peek64(DATA_VA));
	/* a read-only page: the write permission is checked too */
	atomic_counter_cmd(RO_VA + 8, 3, 0, 0);
	d = run();
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, d.status);
	CHECK_EQ(LOOM_MMU_FAULT_WRITE, d.detail);
	CHECK_EQ(RO_VA + 8, d.fault_va);
	/* unmapped */
	atomic_counter_cmd(0x9000000, 3, 0, 0);
	d = run();
	CHECK_EQ(LOOM_STATUS_MMU_FAULT, d.status);
	CHECK_EQ(LOOM_MMU_FAULT_NOT_MAPPED, d.detail);
	CHECK_EQ(0x9000000, d.fault_va);
	/* a bus without cmpxchg cannot do atomics */
	bus.bus.cmpxchg = NULL;
	atomic_counter_cmd(DATA_VA + 8, 3, 0, 0);
	CHECK_EQ(LOOM_STATUS_DMA_ERROR, run().status);
	bus.bus.cmpxchg = fake_bus_cmpxchg;
	teardown();
}

struct core_thread {
	struct loom_core core;
	struct loom_hw_job job;
	struct loom_hw_completion done;
	uint32_t cmd[64];
};

static void *run_core_thread(void *arg)
{
	struct core_thread *t = arg;
	size_t len;

	loom_core_run_job(&t->core, &t->job, &t->done, NULL, 0, &len);
	return NULL;
}

/*
 * Two cores, one thread each, run halves of one launch on the same
 * counter at once: with a read and a write instead of one indivisible
 * access, updates would be lost.
 */
TEST(atomic_counter_on_two_cores_at_once)
{
	static const struct loom_fabric_params params = {
		.width = 4, .height = 4,
		.fifo_depth = LOOM_DEFAULT_FIFO_DEPTH,
		.mem_ports = LOOM_DEFAULT_MEM_PORTS,
		.load_latency = LOOM_DEFAULT_LOAD_LATENCY,
	};
	static struct core_thread t[2];
	const int64_t n = 200000;
	uint64_t counter = DATA_VA + 0x200;
	uint64_t cmd_va[2] = { CMD_VA, CMD_VA + 0x800 };
	pthread_t th[2];

	setup();
	for (unsigned k = 0; k < 2; k++) {
		atomic_counter_cmd(counter, n, k * n / 2, (k + 1) * n / 2);
		fake_bus_poke(&bus, cmd_va[k], cmd, cmd_len * 4);
		memset(&t[k], 0, sizeof(t[k]));
		t[k].core.index = k;
		t[k].core.fabric = loom_fabric_create(&params);
		t[k].core.bus = &bus.bus;
		t[k].job = (struct loom_hw_job){
			.cmd_va = cmd_va[k], .cmd_size = cmd_len * 4,
			.pt_root = bus.pt_root, .seqno = k + 1,
		};
	}
	for (unsigned k = 0; k < 2; k++)
		REQUIRE(!pthread_create(&th[k], NULL, run_core_thread, &t[k]));
	for (unsigned k = 0; k < 2; k++) {
		pthread_join(th[k], NULL);
		CHECK_EQ(LOOM_STATUS_OK, t[k].done.status);
		loom_fabric_destroy(t[k].core.fabric);
	}
	CHECK_EQ((uint64_t)n * (n + 1) / 2, peek64(counter));
	teardown();
}

int main(void)
{
	RUN(vector_add_matches_c);
	RUN(vector_add_empty_domain);
	RUN(vector_add_in_blocks);
	RUN(same_job_same_results_and_counters);
	RUN(budget_pauses_once_and_changes_nothing);
	RUN(tree_spawner_bfs_matches_c);
	RUN(tree_marker_spawns_and_marks_every_item);
	RUN(child_overflow_names_the_item);
	RUN(items_beyond_the_cap_are_refused);
	RUN(items_in_one_dispatch_match_one_per_dispatch);
	RUN(items_overflow_on_a_middle_item_names_it);
	RUN(items_fault_mid_dispatch);
	RUN(items_deadlock_reports);
	RUN(malformed_packets);
	RUN(negative_extent_rejected_before_any_instance);
	RUN(ports_disagree_with_dispatch);
	RUN(no_config_and_nothing_carries_over);
	RUN(bad_config_reports_why);
	RUN(mmu_faults_reach_the_completion);
	RUN(dma_error);
	RUN(bad_descriptors);
	RUN(spawn_outside_items);
	RUN(injected_faults_are_consumed);
	RUN(stop_gives_status_and_dump);
	RUN(deadlock_dump_explains);
	RUN(dump_shows_nothing_of_the_previous_job);
	RUN(timestamp_and_progress);
	RUN(corrupt_dump_fails_as_dma_error_with_a_lying_header);
	RUN(wrong_seqno_skews_only_the_record);
	RUN(queue_injections_leave_the_job_alone);
	RUN(tlb_outlives_jobs_until_invalidated);
	RUN(invalidation_waits_for_the_store_in_flight);
	RUN(atomic_counter_matches_c);
	RUN(atomic_faults_reach_the_completion);
	RUN(atomic_counter_on_two_cores_at_once);
	return checks_done();
}
