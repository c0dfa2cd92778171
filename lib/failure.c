// SPDX-License-Identifier: MIT
/*
 * DOC: failure reports
 *
 * A host-program run that fails keeps what the device said of the failed
 * job (JOB_INFO: its status, detail, fault address and state dump) in its
 * struct loom_host_stats; loom_host_report() turns that into a compiler
 * diagnostic at the source lines the image's source map (.loom.srcmap)
 * gives: the error at the loom.check or launch, notes at the operations
 * whose PEs held tokens when the job ended or, for an MMU fault, at the
 * thread's memory operations.  Nothing here prints.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "drm/loom_drm.h"
#include "failure.h"

#define MAX_TILES	(LOOM_FABRIC_MAX_DIM * LOOM_FABRIC_MAX_DIM)
/* Notes past this many are summed up in one line. */
#define MAX_NOTES	8

void loom_job_failure_read(struct loom_token *token, unsigned tiles,
			   struct loom_host_stats *st)
{
	/* a dump of the largest fabric: 4 KiB, aligned for its header */
	uint64_t dump[(LOOM_DUMP_MAX_SIZE + 7) / 8];
	struct drm_loom_job_info info = {
		.job_id = token->job_id, .dump_size = sizeof(dump),
		.dump = (uintptr_t)dump,
	};
	struct loom_hw_dump hdr;
	uint32_t got;

	if (!token->job_id || token->n_parts ||
	    token->dev->be->job_info(token->dev, &info) ||
	    info.state != DRM_LOOM_JOB_DONE)
		return;
	st->job_status = info.hw_status;
	st->job_detail = info.detail;
	st->fault_va = info.fault_va;
	got = info.dump_size < sizeof(dump) ? info.dump_size : sizeof(dump);
	if (got < sizeof(hdr))
		return;
	memcpy(&hdr, dump, sizeof(hdr));
	if (hdr.magic != LOOM_DUMP_MAGIC ||
	    (unsigned)hdr.width * hdr.height > tiles ||
	    LOOM_DUMP_SIZE((size_t)hdr.width * hdr.height) > got)
		return;
	for (unsigned i = 0; i < (unsigned)hdr.width * hdr.height; i++) {
		struct loom_hw_dump_tile t;

		memcpy(&t, (const char *)dump + LOOM_DUMP_SIZE(i), sizeof(t));
		if (t.fifo[0] || t.fifo[1] || t.fifo[2])
			st->waiting_tiles[i / 64] |= 1ULL << (i % 64);
		if (t.out)
			st->blocked_tiles[i / 64] |= 1ULL << (i % 64);
	}
}

/* ------------------------------------------------------------ report --- */

/* snprintf into a buffer that keeps counting past its end. */
struct text {
	char *buf;
	size_t size, len;
};

__attribute__((format(printf, 2, 3)))
static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(t->len < t->size ? t->buf + t->len : NULL,
		      t->len < t->size ? t->size - t->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += n;
}

/* "FILE:LINE:COL: " of @loc, or nothing. */
static void put_loc(struct text *t, const struct loom_source_loc *loc)
{
	if (loc)
		put(t, "%s:%u:%u: ", loc->file, loc->line, loc->col);
}

static const char *mmu_fault_name(uint32_t detail)
{
	switch (detail) {
	case LOOM_MMU_FAULT_NOT_MAPPED: return "not mapped";
	case LOOM_MMU_FAULT_READ: return "not readable";
	case LOOM_MMU_FAULT_WRITE: return "not writable";
	case LOOM_MMU_FAULT_ADDRESS: return "beyond the device's address bits";
	case LOOM_MMU_FAULT_TABLE_DMA: return "its page table unreadable";
	case LOOM_MMU_FAULT_ALIGN: return "an atomic not aligned to its size";
	}
	return "an MMU fault";
}

/* What went wrong, in one sentence (no location, no newline). */
static void put_message(struct text *t, const struct loom_image *img,
			int err, const struct loom_host_stats *st)
{
	struct loom_thread_info ti;
	bool thread = st->failed_thread >= 0 &&
		      !loom_image_thread_at(img, st->failed_thread, &ti);

	if (err == LOOM_E_CHECK_FAILED) {
		put(t, "loom.check failed: %" PRId64 " != %" PRId64,
		    st->check_lhs, st->check_rhs);
	} else if (thread && (err == -ENOSPC || err == LOOM_WORK_CHILD_OVERFLOW)) {
		put(t, "work item %s%sof @%s spawned more children than its capacity (%u)",
		    st->failed_item, st->failed_item[0] ? " " : "", ti.name,
		    ti.child_capacity);
	} else if (thread && err == -EDEADLK) {
		put(t, "the fabric deadlocked running @%s: its operations wait for tokens that never come",
		    ti.name);
	} else if (thread && err == -ETIMEDOUT &&
		   st->job_status == LOOM_STATUS_STOPPED) {
		put(t, "@%s made no progress, or ran past the runtime cap, and was stopped",
		    ti.name);
	} else if (thread && err == -ETIMEDOUT) {
		put(t, "@%s did not finish in time", ti.name);
	} else if (thread && err == -EFAULT &&
		   st->job_status == LOOM_STATUS_MMU_FAULT) {
		put(t, "@%s accessed device address 0x%" PRIx64 " (%s)", ti.name,
		    st->fault_va, mmu_fault_name(st->job_detail));
	} else if (thread) {
		put(t, "@%s failed: %s", ti.name, loom_strerror(err));
	} else {
		put(t, "%s", loom_strerror(err));
	}
}

/* A thread's configuration: its slots per tile and each slot's op. */
struct config_view {
	const unsigned char *tiles;
	unsigned num_tiles, slots;
};

static bool config_of(const struct loom_image *img, unsigned thread,
		      struct config_view *c)
{
	const struct loom_image_thread *t = &img->threads[thread];
	struct loom_fabric_config hdr;

	/* the loader checked it: inside .loom.configs, for this fabric */
	memcpy(&hdr, img->configs + t->config_offset, sizeof(hdr));
	c->tiles = img->configs + t->config_offset + sizeof(hdr);
	c->num_tiles = hdr.width * hdr.height;
	c->slots = LOOM_CONFIG_SLOTS(hdr.version, hdr.slots);
	return c->num_tiles <= MAX_TILES;
}

static uint8_t slot_op(const struct config_view *c, unsigned tile,
		       unsigned k)
{
	struct loom_tile_config tc;

	memcpy(&tc, c->tiles + ((size_t)tile * c->slots + k) * sizeof(tc),
	       sizeof(tc));
	return tc.op;
}

/* The notes already written, so that one operation gets one. */
struct notes {
	struct loom_source_loc seen[MAX_NOTES];
	unsigned n, more;
};

static void note(struct text *t, struct notes *ns,
		 const struct loom_source_loc *loc, const char *what)
{
	for (unsigned i = 0; i < ns->n; i++)
		if (ns->seen[i].line == loc->line && ns->seen[i].col == loc->col)
			return;
	if (ns->n == MAX_NOTES) {
		ns->more++;
		return;
	}
	ns->seen[ns->n++] = *loc;
	put_loc(t, loc);
	if (loc->name[0])
		put(t, "note: '%%%s' %s\n", loc->name, what);
	else
		put(t, "note: this operation %s\n", what);
}

static bool tile_in(const uint64_t *bits, unsigned tile)
{
	return bits[tile / 64] & (1ULL << (tile % 64));
}

/* Notes at thread @thread's slots that @pick, saying @what. */
static void note_slots(struct text *t, struct notes *ns,
		       const struct loom_image *img, unsigned thread,
		       const uint64_t *tiles, bool memory, const char *what)
{
	struct config_view c;

	if (!config_of(img, thread, &c))
		return;
	for (unsigned tile = 0; tile < c.num_tiles; tile++)
		for (unsigned k = 0; k < c.slots; k++) {
			uint8_t op = slot_op(&c, tile, k);
			struct loom_source_loc loc;

			if (op == LOOM_OP_NOP || (tiles && !tile_in(tiles, tile)) ||
			    (memory && op != LOOM_OP_LOAD && op != LOOM_OP_STORE) ||
			    loom_image_source_of(img, LOOM_SRCMAP_SLOT, thread,
						 tile, k, 0, &loc))
				continue;
			note(t, ns, &loc, what);
		}
}

int loom_host_report(const struct loom_image *img, int err,
		     const struct loom_host_stats *st, char *buf,
		     size_t size)
{
	struct text t = { .buf = buf, .size = size };
	int64_t insn;
	struct loom_source_loc loc;
	bool located;
	struct notes ns = { .n = 0 };

	if (!img || !st || !err)
		return -EINVAL;
	if (size)
		buf[0] = '\0';
	insn = st->failed_launch >= 0 ? st->failed_launch : st->failed_insn;
	located = insn >= 0 && insn <= UINT32_MAX &&
		  !loom_image_source_of(img, LOOM_SRCMAP_HOST, insn, 0, 0, 0, &loc);
	put_loc(&t, located ? &loc : NULL);
	put(&t, "error: ");
	put_message(&t, img, err, st);
	if (!located && insn >= 0)
		put(&t, " (host instruction %" PRId64 ")", insn);
	put(&t, "\n");
	if (!located || st->failed_thread < 0 ||
	    (unsigned)st->failed_thread >= img->info.num_threads)
		return t.len;
	if (err == -EFAULT)
		note_slots(&t, &ns, img, st->failed_thread, NULL, true,
			   "accesses memory here");
	note_slots(&t, &ns, img, st->failed_thread, st->blocked_tiles, false,
		   "is blocked here: its output has no room");
	note_slots(&t, &ns, img, st->failed_thread, st->waiting_tiles, false,
		   "waits here for tokens on its inputs");
	if (ns.more)
		put(&t, "note: and %u more operations\n", ns.more);
	return t.len;
}
