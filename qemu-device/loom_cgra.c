/*
 * loom-cgra: a PCIe spatial-dataflow (CGRA) accelerator.
 *
 * The register file and every encoding come from uapi/loom_device.h, shared
 * with the driver; Documentation/device.rst is the programming model.  What
 * the device computes lives in engine/ (plain C, tested on the host); this
 * file is the QEMU glue: PCIe endpoint, BAR0, MSI-X, one execution thread
 * per core, DMA, TLB invalidation, reset and fault injection.
 *
 * Usage:
 *   -device loom-cgra[,cores=N][,fabric=WxH]
 *
 * Properties:
 *   cores   independent compute cores, each with its own fabric, hardware
 *           queue, MSI-X vector and execution thread (1..8, default 2)
 *   fabric  every core's fabric size, WxH tiles (each 1..16, default 4x4)
 *   poll-us how long a core thread watches for work after a job before it
 *           sleeps (default 100; 0: it sleeps at once)
 *   inline-steps
 *           a doorbell that finds its core idle runs the new job on the
 *           ringing vCPU's thread for up to this many steps (packets and
 *           fabric cycles) before the core thread takes it over (default
 *           256; 0: the core thread runs every job)
 *
 * Trace events (trace-events, -trace 'loom_*'): doorbells, each job's start
 * and completion, MMU faults, interrupts, resets, and every guest error,
 * which is also logged with -d guest_errors.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/thread.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qemu/rcu.h"
#include "qemu/coroutine.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#ifdef LOOM_QEMU_PCI_DEVICE_H
#include "hw/pci/pci_device.h"
#endif
#include "hw/pci/pcie.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qom/object.h"

#include "loom_device.h"
#include "engine/engine.h"
#include "trace.h"

/*
 * One file builds against Debian's QEMU 7.2 and QEMU 10.0.  tools/build-qemu
 * passes a LOOM_QEMU_* define for each API fact of the tree it builds in
 * that differs from 7.2 (found in that tree's headers; none for 7.2):
 *   LOOM_QEMU_PCI_DEVICE_H    PCIDevice and pci_dma_*() in pci_device.h
 *   LOOM_QEMU_BQL             bql_lock() for qemu_mutex_lock_iothread()
 *   LOOM_QEMU_LEGACY_RESET    device_class_set_legacy_reset() for dc->reset
 *   LOOM_QEMU_PROPS_COUNTED   const Property arrays with no terminator
 */
#ifdef LOOM_QEMU_BQL
#define loom_bql_lock()     bql_lock()
#define loom_bql_unlock()   bql_unlock()
#else
#define loom_bql_lock()     qemu_mutex_lock_iothread()
#define loom_bql_unlock()   qemu_mutex_unlock_iothread()
#endif

#define TYPE_LOOM_CGRA "loom-cgra"
OBJECT_DECLARE_SIMPLE_TYPE(LoomCgraState, LOOM_CGRA)

#define LOOM_REGS_SIZE  LOOM_MSIX_TABLE_OFFSET
#define LOOM_CORE_SIZE  0x100
/* The AER capability, first in extended configuration space. */
#define LOOM_AER_OFFSET 0x100

typedef struct LoomCore {
    LoomCgraState *dev;
    unsigned index;
    QemuThread thread;
    /*
     * The core thread never takes the BQL, and makes no bus access that
     * could (loom_bus_read(): RAM only): what it must do under the BQL,
     * raise its vector or a device error, it leaves to bh, which runs in
     * the main loop.  So the MMIO handlers (BQL held) may wait for the
     * thread, as reset and unrealize do, without a deadlock.  Counts of
     * vectors and error bits to raise, added to with atomics.
     */
    QEMUBH *bh;
    uint32_t irqs_pending;
    uint32_t errors_pending;
    /*
     * lock protects every field below.  The MMIO handlers take it with the
     * BQL held (BQL, then lock); nobody holds it across a bus access, so a
     * DMA never waits for it.
     */
    QemuMutex lock;
    QemuCond cond;
    /*
     * Bumped with every broadcast of cond: what a core thread that polls
     * instead of sleeping on cond (poll-us) watches, without the lock.
     */
    uint32_t wakes;
    bool quit;
    bool busy;
    /*
     * A job a doorbell began on its vCPU's thread (loom_core_run_inline())
     * runs in co, a coroutine; on_vcpu while it runs there (the BQL held),
     * handoff once it ran out of steps and waits for the core thread to
     * enter co again and finish it.
     */
    Coroutine *co;
    bool on_vcpu;
    bool handoff;
    uint32_t generation;    /* bumped by reset: a running job's result is void */
    uint64_t q_base;
    uint32_t q_size;
    uint32_t q_head;
    uint32_t q_tail;
    uint32_t ctrl;
    uint32_t status;
    uint64_t dump_addr;
    uint32_t dump_size;
    uint64_t completed;
    int inject;             /* LOOM_CORE_FAULT_INJECT, for the next job */
    bool bogus_head;        /* LOOM_INJECT_BOGUS_HEAD: the next Q_HEAD read lies */
    /*
     * The engine's state belongs to the core thread while a job runs;
     * engine.stop and engine.progress are shared through relaxed atomics.
     */
    struct loom_core engine;
    struct loom_bus bus;
    void *dump;             /* LOOM_DUMP_MAX_SIZE bytes */
} LoomCore;

struct LoomCgraState {
    PCIDevice parent_obj;

    MemoryRegion bar0;
    MemoryRegion regs;
    uint32_t num_cores;
    char *fabric_prop;
    uint32_t poll_us;       /* property poll-us: see loom_core_poll() */
    uint32_t inline_steps;  /* property inline-steps: loom_core_run_inline() */
    unsigned fabric_width;
    unsigned fabric_height;
    uint32_t scratch;
    uint32_t error_status;  /* under the BQL */
    /*
     * LOOM_REG_MMU_INVALIDATE: invalidations done, and the generation every
     * core's TLB compares with before each translation (engine/mmu.c).
     * Written under the BQL with a seq_cst increment, read by the core
     * threads without a lock.  Reset leaves it: it only goes forward.
     */
    uint32_t mmu_invalidations;
    LoomCore cores[LOOM_MAX_CORES];
};

/* ---- interrupts and bus access ----------------------------------------- */

/* Called with the BQL held. */
static void loom_raise(LoomCgraState *s, unsigned vector)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    if (msix_enabled(pdev)) {
        msix_notify(pdev, vector);
    }
}

/* Called with the BQL held. */
static void loom_device_error(LoomCgraState *s, uint32_t bits, unsigned core)
{
    s->error_status = (s->error_status & ~(0xffU << LOOM_ERROR_CORE_SHIFT)) |
                      bits | core << LOOM_ERROR_CORE_SHIFT;
    loom_raise(s, LOOM_MSIX_ERROR_VECTOR(s->num_cores));
}

/*
 * Every access the device makes goes to RAM or fails (a DMA error, typed
 * by what made it: uapi LOOM_STATUS_DMA_ERROR, LOOM_ERROR_RING_DMA, ...).
 * attrs.memory makes the memory core refuse any other target, MMIO
 * included, before it would dispatch it: a DMA aimed at a device's
 * registers, loom's own among them, would run that device's handler on
 * the core thread, under the BQL it would take for it, and a handler of
 * ours waits for this very thread (reset) or its lock.
 */
static int loom_bus_rw(LoomCore *c, uint64_t addr, void *buf, size_t len,
                       DMADirection dir)
{
    MemTxAttrs attrs = MEMTXATTRS_UNSPECIFIED;

    attrs.memory = 1;
    return pci_dma_rw(PCI_DEVICE(c->dev), addr, buf, len, dir, attrs) ==
           MEMTX_OK ? 0 : -1;
}

static int loom_bus_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
    return loom_bus_rw(opaque, addr, buf, len, DMA_DIRECTION_TO_DEVICE);
}

static int loom_bus_write(void *opaque, uint64_t addr, const void *buf,
                          size_t len)
{
    return loom_bus_rw(opaque, addr, (void *)buf, len,
                       DMA_DIRECTION_FROM_DEVICE);
}

/*
 * LOOM_OP_ATOMIC's primitive (engine.h, struct loom_bus.cmpxchg): a host
 * compare-and-swap on the guest RAM itself.  Cores run in threads of their
 * own and their plain loads and stores are copies into RAM (pci_dma_rw()),
 * so a device-wide mutex around a read and a write would order atomics
 * against each other only: another core's STORE could land between them
 * and be lost.  One host atomic instruction on the RAM is indivisible
 * against all of them, and against the guest's CPUs.  Only RAM qualifies
 * (as attrs.memory does for the copies): address_space_map() would bounce
 * anything else through a buffer, which is neither atomic nor safe (it
 * would run a device's MMIO handler on this thread).  The access is
 * naturally aligned (the engine checked), so it never spans regions.
 */
static int loom_bus_cmpxchg(void *opaque, uint64_t addr, size_t len,
                            uint64_t *expected, uint64_t desired)
{
    LoomCore *c = opaque;
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(c->dev));
    MemTxAttrs attrs = MEMTXATTRS_UNSPECIFIED;
    hwaddr xlat, mapped = len;
    MemoryRegion *mr;
    void *p;
    int swapped;

    attrs.memory = 1;
    RCU_READ_LOCK_GUARD();
    mr = address_space_translate(as, addr, &xlat, &mapped, true, attrs);
    if (!memory_region_is_ram(mr) || memory_region_is_ram_device(mr) ||
        mr->readonly || mapped < len) {
        return -1;
    }
    p = (uint8_t *)memory_region_get_ram_ptr(mr) + xlat;
    swapped = loom_host_cmpxchg(p, len, expected, desired);
    if (swapped) {
        memory_region_set_dirty(mr, xlat, len);   /* migration, like a write */
    }
    return swapped;
}

static void loom_core_bh(void *opaque);

/*
 * Raise the core's vector once more and @errors as device errors: at once
 * from a job on a vCPU's thread (the BQL held), else from the main loop.
 */
static void loom_core_notify(LoomCore *c, uint32_t errors, bool vector)
{
    if (errors) {
        __atomic_fetch_or(&c->errors_pending, errors, __ATOMIC_RELAXED);
    }
    if (vector) {
        __atomic_fetch_add(&c->irqs_pending, 1, __ATOMIC_RELAXED);
    }
    if (c->on_vcpu) {
        loom_core_bh(c);
    } else {
        qemu_bh_schedule(c->bh);
    }
}

/* c->bh, in the main loop with the BQL held: errors first, then vectors. */
static void loom_core_bh(void *opaque)
{
    LoomCore *c = opaque;
    uint32_t errors = __atomic_exchange_n(&c->errors_pending, 0,
                                          __ATOMIC_RELAXED);
    uint32_t irqs = __atomic_exchange_n(&c->irqs_pending, 0,
                                        __ATOMIC_RELAXED);

    if (errors) {
        trace_loom_device_error(c->index, errors);
        loom_device_error(c->dev, errors, c->index);
    }
    while (irqs--) {
        trace_loom_irq(c->index, LOOM_MSIX_CORE_VECTOR(c->index));
        loom_raise(c->dev, LOOM_MSIX_CORE_VECTOR(c->index));
    }
}

/* ---- the core thread ------------------------------------------------------ */

/* Wakes the core thread (and reset's waiters); c->lock held. */
static void loom_core_wake(LoomCore *c)
{
    __atomic_fetch_add(&c->wakes, 1, __ATOMIC_RELEASE);
    qemu_cond_broadcast(&c->cond);
}

static bool loom_core_has_work(LoomCore *c)
{
    return (c->ctrl & LOOM_CTRL_ENABLE) && !(c->ctrl & LOOM_CTRL_STOP) &&
           !c->busy && c->q_head != c->q_tail;
}

/*
 * An injected hang: the job makes no progress until the driver stops the
 * core or resets it.  Called and returns with c->lock held.
 */
static void loom_core_hang(LoomCore *c, uint32_t generation)
{
    while (!c->quit && c->generation == generation &&
           !__atomic_load_n(&c->engine.stop, __ATOMIC_RELAXED)) {
        qemu_cond_wait(&c->cond, &c->lock);
    }
}

/*
 * Writes the dump and the record of a job that ran; called and returns with
 * c->lock held, but drops it for the writes (the core is still busy: a
 * reset waits for them).  A reset that arrives first voids the job: no
 * record, the queue left as the reset made it.  The queue's own
 * injections lie here: SKIP_COMPLETION leaves the record unwritten,
 * BOGUS_HEAD arms one wrong Q_HEAD read; everything else (head,
 * COMPLETED, the vector) goes on as usual.  Returns false when the job
 * was voided.
 */
static bool loom_core_complete(LoomCore *c, uint32_t generation,
                               const struct loom_hw_job *job,
                               const struct loom_hw_completion *done,
                               size_t dump_len, int inject)
{
    uint64_t dump_addr = c->dump_addr;
    size_t dump_size = MIN(dump_len, c->dump_size);
    uint32_t errors = 0;
    bool dumped = false;

    qemu_mutex_unlock(&c->lock);
    if (dump_len && dump_addr) {
        dumped = loom_bus_write(c, dump_addr, c->dump, dump_size) == 0;
    }
    if (inject == LOOM_INJECT_SKIP_COMPLETION ||
        __atomic_load_n(&c->generation, __ATOMIC_RELAXED) != generation) {
        /* the job ran; only its record is missing (or it was reset) */
    } else if (loom_bus_write(c, job->completion, done, sizeof(*done))) {
        trace_loom_err_completion_dma(c->index, job->seqno, job->completion);
        qemu_log_mask(LOG_GUEST_ERROR, "loom-cgra: core %u: cannot write "
                      "the completion of job %" PRIu64 " at 0x%" PRIx64
                      " (not RAM?)\n", c->index, (uint64_t)job->seqno,
                      (uint64_t)job->completion);
        errors |= LOOM_ERROR_COMPLETION_DMA;
    }
    qemu_mutex_lock(&c->lock);

    if (c->generation != generation || c->quit) {
        trace_loom_job_voided(c->index, job->seqno);
        return false;
    }
    trace_loom_job_complete(c->index, job->seqno, done->status, done->detail,
                            done->counters.cycles);
    if (dumped) {
        c->status |= LOOM_CORE_DUMP_VALID;
    }
    c->completed = job->seqno;
    c->q_head = (c->q_head + 1) & (c->q_size - 1);
    if (inject == LOOM_INJECT_BOGUS_HEAD) {
        c->bogus_head = true;   /* until read, even across later jobs */
    }
    if (done->status == LOOM_STATUS_STOPPED) {
        c->status |= LOOM_CORE_HALTED;
    }
    if (!(c->ctrl & LOOM_CTRL_STOP)) {
        __atomic_store_n(&c->engine.stop, 0, __ATOMIC_RELAXED);
    }
    loom_core_notify(c, errors, true);
    return true;
}

/*
 * The core is no longer busy; c->lock held.  A job that ends on a vCPU's
 * thread wakes nobody: the core thread has nothing to do, and nobody else
 * can be waiting (reset waits under the BQL, which that thread holds).
 */
static void loom_core_idle(LoomCore *c)
{
    c->busy = false;
    c->status &= ~LOOM_CORE_BUSY;
    if (!c->on_vcpu) {
        loom_core_wake(c);
    }
}

/* Runs the job at head; called and returns with c->lock held. */
static void loom_core_run_one(LoomCore *c)
{
    struct loom_hw_job job;
    struct loom_hw_completion done;
    uint32_t generation = c->generation;
    uint32_t slot = c->q_head;
    uint64_t at = c->q_base + (uint64_t)slot * sizeof(job);
    size_t dump_len = 0;
    int inject = c->inject;

    /* A lost doorbell is the doorbell's to consume, not a job's. */
    if (inject == LOOM_INJECT_LOST_DOORBELL) {
        inject = LOOM_INJECT_NONE;
    } else {
        c->inject = LOOM_INJECT_NONE;
    }
    c->engine.inject = inject == LOOM_INJECT_HANG ||
                       inject == LOOM_INJECT_SPURIOUS_IRQ ?
                       LOOM_INJECT_NONE : inject;
    c->busy = true;
    c->status |= LOOM_CORE_BUSY;
    c->status &= ~LOOM_CORE_DUMP_VALID;
    qemu_mutex_unlock(&c->lock);

    if (loom_bus_read(c, at, &job, sizeof(job))) {
        trace_loom_err_descriptor_dma(c->index, at);
        qemu_log_mask(LOG_GUEST_ERROR, "loom-cgra: core %u: cannot read "
                      "the descriptor at 0x%" PRIx64 " (not RAM?)\n",
                      c->index, at);
        qemu_mutex_lock(&c->lock);
        loom_core_idle(c);
        if (c->generation == generation) {
            c->status &= ~LOOM_CORE_ENABLED;
            c->ctrl &= ~LOOM_CTRL_ENABLE;
            loom_core_notify(c, LOOM_ERROR_RING_DMA, false);
        }
        return;
    }

    trace_loom_job_start(c->index, job.seqno, slot, job.cmd_va, job.cmd_size);
    if (inject == LOOM_INJECT_SPURIOUS_IRQ) {
        loom_core_notify(c, 0, true);
    }
    if (inject == LOOM_INJECT_HANG) {
        qemu_mutex_lock(&c->lock);
        loom_core_hang(c, generation);
        qemu_mutex_unlock(&c->lock);
        loom_core_stopped_job(&c->engine, &job, &done, c->dump,
                              LOOM_DUMP_MAX_SIZE, &dump_len);
    } else {
        loom_core_run_job(&c->engine, &job, &done, c->dump,
                          LOOM_DUMP_MAX_SIZE, &dump_len);
    }
    if (done.status == LOOM_STATUS_MMU_FAULT) {
        trace_loom_mmu_fault(c->index, job.seqno, done.fault_va);
    } else if (done.status != LOOM_STATUS_OK) {
        trace_loom_job_error(c->index, job.seqno, done.status, done.detail,
                             done.packet_offset);
    }

    qemu_mutex_lock(&c->lock);
    if (c->generation == generation && !c->quit) {
        loom_core_complete(c, generation, &job, &done, dump_len, inject);
    } else {
        trace_loom_job_voided(c->index, job.seqno);
    }
    loom_core_idle(c);
}

/*
 * With poll-us, after a job the core thread watches for a wakeup (a
 * doorbell, a control write, a reset) for that long before it sleeps on
 * cond: a doorbell rung meanwhile finds it on a CPU, and the vCPU thread
 * that rang it wakes nobody (issue 36: the doorbell's MMIO write and the
 * wakeup were 37 of an empty job's 79 us round trip).  It yields the CPU
 * between looks, so the main loop and the vCPU still get one: the VM
 * selftests took no more host CPU with 100 us than with 0 (the default
 * is 100; 0 sleeps at once).  c->lock held on entry and exit, dropped
 * while it polls.
 */
static void loom_core_poll(LoomCore *c)
{
    uint32_t wakes = __atomic_load_n(&c->wakes, __ATOMIC_ACQUIRE);
    int64_t end = get_clock() + (int64_t)c->dev->poll_us * SCALE_US;

    qemu_mutex_unlock(&c->lock);
    while (__atomic_load_n(&c->wakes, __ATOMIC_ACQUIRE) == wakes &&
           get_clock() < end) {
        sched_yield();
    }
    qemu_mutex_lock(&c->lock);
}

/* ---- small jobs on the vCPU's thread ----------------------------------- */

/*
 * Issue 36: an empty job's round trip crossed three thread handoffs in
 * the device (the doorbell's vCPU to the core thread, the core thread to
 * the main loop's bottom half, the main loop to the halted vCPU), 38 of
 * its 53 us from the doorbell to the handler.  A doorbell that finds its
 * core idle therefore runs the new job itself, on the vCPU's thread with
 * the BQL held, and raises the vector at once.  A job is not known to be
 * small before it runs, so it runs in a coroutine with a budget of steps
 * (struct loom_core.budget): when the budget runs out, loom_core_pause()
 * yields, the MMIO write returns, and the core thread enters the
 * coroutine again and finishes the job, without a budget, as if it had
 * run it from the start.
 */
static void loom_core_pause(struct loom_core *engine)
{
    qemu_coroutine_yield();
}

/*
 * The job at head, from the thread that holds c->lock on entry: the
 * doorbell's.  Whichever thread finishes it holds c->lock on return.
 */
static void coroutine_fn loom_core_inline_entry(void *opaque)
{
    LoomCore *c = opaque;

    loom_core_run_one(c);
    c->co = NULL;
}

/* An idle core (not busy: no job begun, so no co either), no injection. */
static bool loom_core_may_run_inline(LoomCore *c)
{
    return c->dev->inline_steps && c->inject == LOOM_INJECT_NONE &&
           loom_core_has_work(c);
}

/* From a doorbell, BQL and c->lock held; both held on return. */
static void loom_core_run_inline(LoomCore *c)
{
    bool paused;

    c->engine.budget = c->dev->inline_steps;
    c->on_vcpu = true;
    c->co = qemu_coroutine_create(loom_core_inline_entry, c);
    qemu_coroutine_enter(c->co);
    paused = c->co != NULL;     /* the suspended job's, no one else's */
    if (paused) {
        /* out of steps: c->lock was let go for the job, the core's now */
        qemu_mutex_lock(&c->lock);
        trace_loom_job_handoff(c->index);
    }
    c->on_vcpu = false;
    /* what is left of the budget must not pause the core thread's jobs */
    c->engine.budget = 0;
    c->handoff = paused;
    if (paused || loom_core_has_work(c)) {
        loom_core_wake(c);
    }
}

/* The core thread finishes a job a doorbell began; c->lock held. */
static void loom_core_resume(LoomCore *c)
{
    c->handoff = false;
    qemu_mutex_unlock(&c->lock);
    qemu_coroutine_enter(c->co);    /* the job's end takes c->lock */
}

static void *loom_core_thread(void *opaque)
{
    LoomCore *c = opaque;
    bool ran = false;

    qemu_mutex_lock(&c->lock);
    for (;;) {
        /* a job begun is finished, even when quitting: it is stopped */
        if (c->handoff) {
            loom_core_resume(c);
            ran = true;
            continue;
        }
        if (c->quit) {
            break;
        }
        if (!loom_core_has_work(c)) {
            if (ran && c->dev->poll_us) {
                ran = false;
                loom_core_poll(c);
                continue;
            }
            qemu_cond_wait(&c->cond, &c->lock);
            continue;
        }
        loom_core_run_one(c);
        ran = true;
    }
    qemu_mutex_unlock(&c->lock);
    return NULL;
}

/* ---- reset ---------------------------------------------------------------- */

/* Aborts the running job and waits for it to let go; c->lock held. */
static void loom_core_reset_locked(LoomCore *c)
{
    /*
     * Empty and disable the queue first: the thread, woken by the stop,
     * must find no work once it lets go of the aborted job.
     */
    __atomic_store_n(&c->generation, c->generation + 1, __ATOMIC_RELAXED);
    c->ctrl = 0;
    c->q_head = c->q_tail = 0;
    __atomic_store_n(&c->engine.stop, 1, __ATOMIC_RELAXED);
    loom_core_wake(c);
    while (c->busy) {
        qemu_cond_wait(&c->cond, &c->lock);
    }
    __atomic_store_n(&c->engine.stop, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->engine.progress, 0, __ATOMIC_RELAXED);
    /* a vector still to raise for a job before the reset is dropped */
    __atomic_store_n(&c->irqs_pending, 0, __ATOMIC_RELAXED);
    /* The thread has let go of the engine: its TLB is ours to empty. */
    loom_mmu_flush(&c->engine.mmu);
    c->inject = LOOM_INJECT_NONE;
    c->bogus_head = false;
    c->status = 0;
    c->completed = 0;
}

static void loom_core_reset(LoomCore *c)
{
    trace_loom_core_reset(c->index);
    qemu_mutex_lock(&c->lock);
    loom_core_reset_locked(c);
    qemu_mutex_unlock(&c->lock);
}

static void loom_cgra_reset_all(LoomCgraState *s)
{
    for (unsigned i = 0; i < s->num_cores; i++) {
        loom_core_reset(&s->cores[i]);
    }
    s->scratch = 0;
    s->error_status = 0;
}

/* ---- MMIO ----------------------------------------------------------------- */

/*
 * LOOM_REG_MMU_INVALIDATE write, under the BQL.  The increment (seq_cst,
 * so also a release: the guest's PTE stores, made before its register
 * write, are visible to a core that reads the new count) makes every
 * translation that starts after it walk the tables again; then the write
 * completes only once each core's access in flight, which may have used
 * an old translation, has completed (engine/mmu.c).  That wait is short
 * and cannot deadlock: a core's access is a copy to or from RAM, never
 * under the BQL (loom_bus_rw()).
 */
static void loom_cgra_mmu_invalidate(LoomCgraState *s, uint32_t val)
{
    if (val != LOOM_MMU_INVALIDATE_ALL) {
        trace_loom_err_mmu_invalidate(val);
        qemu_log_mask(LOG_GUEST_ERROR, "loom-cgra: MMU_INVALIDATE 0x%x "
                      "ignored (want 0x%x)\n", val, LOOM_MMU_INVALIDATE_ALL);
        return;
    }
    trace_loom_mmu_invalidate(
        __atomic_add_fetch(&s->mmu_invalidations, 1, __ATOMIC_SEQ_CST));
    for (unsigned i = 0; i < s->num_cores; i++) {
        loom_mmu_quiesce(&s->cores[i].engine.mmu);
    }
}

static uint32_t loom_limits(void)
{
    return LOOM_MAX_RANK | LOOM_DEFAULT_FIFO_DEPTH << 8 |
           LOOM_DEFAULT_MEM_PORTS << 16 | LOOM_DEFAULT_LOAD_LATENCY << 24;
}

static uint32_t loom_caps(void)
{
    return LOOM_CAP_SCRATCH | LOOM_CAP_QUEUES | LOOM_CAP_MMU | LOOM_CAP_MSIX |
           LOOM_CAP_ITEMS | LOOM_CAP_FAULT_INJECT | LOOM_CAP_STATE_DUMP |
           LOOM_CAP_TLB | LOOM_CAP_PE_SLOTS | LOOM_CAP_RUN_WORK |
           LOOM_CAP_DENSE_BLOCK | LOOM_CAP_ATOMIC | LOOM_CAP_LINK_CHANNELS;
}

static uint64_t loom_core_read(LoomCore *c, hwaddr reg, bool *ok)
{
    uint64_t val = 0;

    qemu_mutex_lock(&c->lock);
    switch (reg) {
    case LOOM_CORE_Q_BASE_LO:
        val = (uint32_t)c->q_base;
        break;
    case LOOM_CORE_Q_BASE_HI:
        val = c->q_base >> 32;
        break;
    case LOOM_CORE_Q_SIZE:
        val = c->q_size;
        break;
    case LOOM_CORE_Q_HEAD:
        val = c->q_head;
        if (c->bogus_head) {
            /* one read, half a ring away; q_size may have been rewritten */
            c->bogus_head = false;
            val = c->q_size ? (c->q_head + c->q_size / 2) % c->q_size : 0;
        }
        break;
    case LOOM_CORE_Q_TAIL:
        val = c->q_tail;
        break;
    case LOOM_CORE_CTRL:
        val = c->ctrl;
        break;
    case LOOM_CORE_STATUS:
        val = c->status;
        break;
    case LOOM_CORE_PROGRESS:
        val = (uint32_t)__atomic_load_n(&c->engine.progress, __ATOMIC_RELAXED);
        break;
    case LOOM_CORE_COMPLETED:
        val = (uint32_t)c->completed;
        break;
    case LOOM_CORE_FAULT_INJECT:
        val = c->inject;
        break;
    case LOOM_CORE_DUMP_LO:
        val = (uint32_t)c->dump_addr;
        break;
    case LOOM_CORE_DUMP_HI:
        val = c->dump_addr >> 32;
        break;
    case LOOM_CORE_DUMP_SIZE:
        val = c->dump_size;
        break;
    default:
        *ok = false;
        break;
    }
    qemu_mutex_unlock(&c->lock);
    return val;
}

static bool loom_queue_valid(const LoomCore *c)
{
    return c->q_size >= 2 && c->q_size <= 4096 && is_power_of_2(c->q_size) &&
           !(c->q_base & 63);
}

/* CTRL write; c->lock held.  Returns device error bits to raise. */
static uint32_t loom_core_set_ctrl(LoomCore *c, uint32_t val)
{
    uint32_t errors = 0;

    if ((val & LOOM_CTRL_ENABLE) && !(c->ctrl & LOOM_CTRL_ENABLE) &&
        !loom_queue_valid(c)) {
        trace_loom_err_queue(c->index, c->q_base, c->q_size);
        qemu_log_mask(LOG_GUEST_ERROR, "loom-cgra: core %u: enabling a queue "
                      "with base 0x%" PRIx64 " size %u\n", c->index, c->q_base,
                      c->q_size);
        val &= ~LOOM_CTRL_ENABLE;
        errors |= LOOM_ERROR_BAD_QUEUE;
    }
    c->ctrl = val & (LOOM_CTRL_ENABLE | LOOM_CTRL_STOP);
    trace_loom_ctrl(c->index, c->ctrl);
    if (c->ctrl & LOOM_CTRL_ENABLE) {
        c->status |= LOOM_CORE_ENABLED;
    } else {
        c->status &= ~LOOM_CORE_ENABLED;
    }
    if (c->ctrl & LOOM_CTRL_STOP) {
        __atomic_store_n(&c->engine.stop, 1, __ATOMIC_RELAXED);
    } else {
        c->status &= ~LOOM_CORE_HALTED;
        if (!c->busy) {
            __atomic_store_n(&c->engine.stop, 0, __ATOMIC_RELAXED);
        }
    }
    loom_core_wake(c);
    return errors;
}

static bool loom_core_write(LoomCore *c, hwaddr reg, uint32_t val)
{
    uint32_t errors = 0;
    bool ok = true;

    if (reg == LOOM_CORE_RESET) {
        if (val == LOOM_RESET_MAGIC) {
            loom_core_reset(c);
        }
        return true;
    }

    qemu_mutex_lock(&c->lock);
    switch (reg) {
    case LOOM_CORE_Q_BASE_LO:
        c->q_base = deposit64(c->q_base, 0, 32, val);
        break;
    case LOOM_CORE_Q_BASE_HI:
        c->q_base = deposit64(c->q_base, 32, 32, val);
        break;
    case LOOM_CORE_Q_SIZE:
        c->q_size = val;
        break;
    case LOOM_CORE_Q_TAIL:
        if (val >= c->q_size) {
            trace_loom_err_tail(c->index, val, c->q_size);
            qemu_log_mask(LOG_GUEST_ERROR, "loom-cgra: core %u: tail %u "
                          "beyond queue size %u ignored\n", c->index, val,
                          c->q_size);
            break;
        }
        if (c->inject == LOOM_INJECT_LOST_DOORBELL) {
            trace_loom_doorbell_dropped(c->index, val);
            c->inject = LOOM_INJECT_NONE;   /* this doorbell never arrived */
            break;
        }
        trace_loom_doorbell(c->index, val);
        c->q_tail = val;
        if (loom_core_may_run_inline(c)) {
            loom_core_run_inline(c);
        } else {
            loom_core_wake(c);
        }
        break;
    case LOOM_CORE_CTRL:
        errors = loom_core_set_ctrl(c, val);
        break;
    case LOOM_CORE_FAULT_INJECT:
        if (val > LOOM_INJECT_MAX) {
            trace_loom_err_inject(c->index, val);
            qemu_log_mask(LOG_GUEST_ERROR, "loom-cgra: core %u: unknown "
                          "fault injection %u cleared\n", c->index, val);
            val = LOOM_INJECT_NONE;
        }
        trace_loom_fault_inject(c->index, val);
        c->inject = val;
        break;
    case LOOM_CORE_DUMP_LO:
        c->dump_addr = deposit64(c->dump_addr, 0, 32, val);
        break;
    case LOOM_CORE_DUMP_HI:
        c->dump_addr = deposit64(c->dump_addr, 32, 32, val);
        break;
    case LOOM_CORE_DUMP_SIZE:
        c->dump_size = val;
        break;
    default:
        ok = false;
        break;
    }
    qemu_mutex_unlock(&c->lock);
    if (errors) {
        loom_device_error(c->dev, errors, c->index);
    }
    return ok;
}

/* The core whose register block holds @addr, or NULL. */
static LoomCore *loom_core_at(LoomCgraState *s, hwaddr addr)
{
    unsigned i;

    if (addr < LOOM_CORE_BASE(0)) {
        return NULL;
    }
    i = (addr - LOOM_CORE_BASE(0)) / LOOM_CORE_SIZE;
    return i < s->num_cores ? &s->cores[i] : NULL;
}

static uint64_t loom_cgra_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    LoomCgraState *s = opaque;
    LoomCore *c;
    bool ok = true;
    uint64_t val;

    if (size != 4 || (addr & 3)) {
        trace_loom_err_access("read", size, addr);
        qemu_log_mask(LOG_GUEST_ERROR, "loom-cgra: %u-byte read at 0x%"
                      HWADDR_PRIx " (registers are aligned 32-bit)\n",
                      size, addr);
        return ~0ULL;
    }

    switch (addr) {
    case LOOM_REG_ID:
        return LOOM_ID_MAGIC;
    case LOOM_REG_VERSION:
        return LOOM_VERSION_CURRENT;
    case LOOM_REG_CAPS:
        return loom_caps();
    case LOOM_REG_SCRATCH:
        return s->scratch;
    case LOOM_REG_NUM_CORES:
        return s->num_cores;
    case LOOM_REG_FABRIC:
        return s->fabric_width | s->fabric_height << 8 | LOOM_PE_SLOTS << 16;
    case LOOM_REG_LIMITS:
        return loom_limits();
    case LOOM_REG_ERROR_STATUS:
        return s->error_status;
    case LOOM_REG_MMU_INVALIDATE:
        return __atomic_load_n(&s->mmu_invalidations, __ATOMIC_RELAXED);
    }

    c = loom_core_at(s, addr);
    val = c ? loom_core_read(c, addr & (LOOM_CORE_SIZE - 1), &ok) : 0;
    if (!c || !ok) {
        trace_loom_err_unimplemented("read", addr);
        qemu_log_mask(LOG_GUEST_ERROR, "loom-cgra: read of unimplemented "
                      "register 0x%" HWADDR_PRIx "\n", addr);
        return 0xffffffffU;
    }
    return val;
}

static void loom_cgra_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                 unsigned size)
{
    LoomCgraState *s = opaque;
    LoomCore *c;

    if (size != 4 || (addr & 3)) {
        trace_loom_err_access("write", size, addr);
        qemu_log_mask(LOG_GUEST_ERROR, "loom-cgra: %u-byte write at 0x%"
                      HWADDR_PRIx " ignored (registers are aligned 32-bit)\n",
                      size, addr);
        return;
    }

    switch (addr) {
    case LOOM_REG_SCRATCH:
        s->scratch = val;
        return;
    case LOOM_REG_DEVICE_RESET:
        if (val == LOOM_RESET_MAGIC) {
            trace_loom_device_reset();
            loom_cgra_reset_all(s);
        }
        return;
    case LOOM_REG_ERROR_STATUS:
        s->error_status &= ~val;
        return;
    case LOOM_REG_MMU_INVALIDATE:
        loom_cgra_mmu_invalidate(s, val);
        return;
    }

    c = loom_core_at(s, addr);
    if (!c || !loom_core_write(c, addr & (LOOM_CORE_SIZE - 1), val)) {
        trace_loom_err_unimplemented("write", addr);
        qemu_log_mask(LOG_GUEST_ERROR, "loom-cgra: write to read-only or "
                      "unimplemented register 0x%" HWADDR_PRIx " ignored\n",
                      addr);
    }
}

static const MemoryRegionOps loom_cgra_mmio_ops = {
    .read = loom_cgra_mmio_read,
    .write = loom_cgra_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    /* Accept any size so a bad access is logged rather than faulted. */
    .valid = { .min_access_size = 1, .max_access_size = 8 },
    .impl = { .min_access_size = 1, .max_access_size = 8 },
};

/* ---- realize / unrealize -------------------------------------------------- */

static bool loom_parse_fabric(LoomCgraState *s, Error **errp)
{
    const char *prop = s->fabric_prop ? s->fabric_prop : "4x4";
    unsigned w, h;
    char tail;

    if (sscanf(prop, "%ux%u%c", &w, &h, &tail) != 2 ||
        w < 1 || h < 1 || w > LOOM_FABRIC_MAX_DIM || h > LOOM_FABRIC_MAX_DIM) {
        error_setg(errp, "loom-cgra: fabric=%s: want WxH, each 1..%d",
                   prop, LOOM_FABRIC_MAX_DIM);
        return false;
    }
    s->fabric_width = w;
    s->fabric_height = h;
    return true;
}

static bool loom_core_init(LoomCgraState *s, unsigned i, Error **errp)
{
    LoomCore *c = &s->cores[i];
    const struct loom_fabric_params params = {
        .width = s->fabric_width,
        .height = s->fabric_height,
        .fifo_depth = LOOM_DEFAULT_FIFO_DEPTH,
        .mem_ports = LOOM_DEFAULT_MEM_PORTS,
        .load_latency = LOOM_DEFAULT_LOAD_LATENCY,
    };
    char name[32];

    c->dev = s;
    c->index = i;
    c->bus = (struct loom_bus){
        .opaque = c, .read = loom_bus_read, .write = loom_bus_write,
        .cmpxchg = loom_bus_cmpxchg,
    };
    c->engine.index = i;
    c->engine.bus = &c->bus;
    c->engine.pause = loom_core_pause;
    c->engine.mmu.invalidations = &s->mmu_invalidations;
    c->engine.fabric = loom_fabric_create(&params);
    if (!c->engine.fabric) {
        error_setg(errp, "loom-cgra: cannot create a %ux%u fabric",
                   params.width, params.height);
        return false;
    }
    c->dump = g_malloc0(LOOM_DUMP_MAX_SIZE);
    c->bh = qemu_bh_new(loom_core_bh, c);
    qemu_mutex_init(&c->lock);
    qemu_cond_init(&c->cond);
    snprintf(name, sizeof(name), "loom-core%u", i);
    qemu_thread_create(&c->thread, name, loom_core_thread, c,
                       QEMU_THREAD_JOINABLE);
    return true;
}

static void loom_core_fini(LoomCore *c)
{
    if (!c->engine.fabric) {
        return;
    }
    qemu_mutex_lock(&c->lock);
    c->quit = true;
    __atomic_store_n(&c->engine.stop, 1, __ATOMIC_RELAXED);
    loom_core_wake(c);
    qemu_mutex_unlock(&c->lock);
    /* under the BQL: the thread never waits for it (see LoomCore.bh) */
    qemu_thread_join(&c->thread);
    qemu_bh_delete(c->bh);
    c->bh = NULL;
    qemu_cond_destroy(&c->cond);
    qemu_mutex_destroy(&c->lock);
    loom_fabric_destroy(c->engine.fabric);
    c->engine.fabric = NULL;
    g_free(c->dump);
}

static void loom_cgra_exit(PCIDevice *pdev)
{
    LoomCgraState *s = LOOM_CGRA(pdev);

    for (unsigned i = 0; i < LOOM_MAX_CORES; i++) {
        loom_core_fini(&s->cores[i]);
    }
    msix_uninit(pdev, &s->bar0, &s->bar0);
    pcie_aer_exit(pdev);
    pcie_cap_exit(pdev);
}

static void loom_cgra_realize(PCIDevice *pdev, Error **errp)
{
    LoomCgraState *s = LOOM_CGRA(pdev);
    unsigned vectors;

    if (s->num_cores < 1 || s->num_cores > LOOM_MAX_CORES) {
        error_setg(errp, "loom-cgra: cores=%u: want 1..%d", s->num_cores,
                   LOOM_MAX_CORES);
        return;
    }
    if (!loom_parse_fabric(s, errp)) {
        return;
    }
    vectors = s->num_cores + 1;

    memory_region_init(&s->bar0, OBJECT(s), "loom-cgra-bar0", LOOM_BAR0_SIZE);
    memory_region_init_io(&s->regs, OBJECT(s), &loom_cgra_mmio_ops, s,
                          "loom-cgra-regs", LOOM_REGS_SIZE);
    memory_region_add_subregion(&s->bar0, 0, &s->regs);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar0);

    if (pcie_endpoint_cap_init(pdev, 0x80) < 0) {
        error_setg(errp, "loom-cgra: cannot add the PCIe capability");
        return;
    }
    /* Function-level reset: loom_cgra_write_config() below runs it. */
    pcie_cap_flr_init(pdev);
    /*
     * Advanced Error Reporting, so that errors injected with the monitor's
     * pcie_aer_inject_error reach the driver's error handlers (once the
     * OS has enabled reporting in DEVCTL, which deverr makes writable).
     */
    pcie_cap_deverr_init(pdev);
    if (pcie_aer_init(pdev, PCI_ERR_VER, LOOM_AER_OFFSET, PCI_ERR_SIZEOF,
                      errp) < 0) {
        loom_cgra_exit(pdev);
        return;
    }
    if (msix_init(pdev, vectors, &s->bar0, 0, LOOM_MSIX_TABLE_OFFSET,
                  &s->bar0, 0, LOOM_MSIX_PBA_OFFSET, 0, errp)) {
        loom_cgra_exit(pdev);
        return;
    }
    for (unsigned i = 0; i < vectors; i++) {
        msix_vector_use(pdev, i);
    }
    for (unsigned i = 0; i < s->num_cores; i++) {
        if (!loom_core_init(s, i, errp)) {
            loom_cgra_exit(pdev);
            return;
        }
    }
}

static void loom_cgra_reset(DeviceState *dev)
{
    loom_cgra_reset_all(LOOM_CGRA(dev));
}

/* Config space writes; setting DEVCTL's FLR bit resets the function. */
static void loom_cgra_write_config(PCIDevice *pdev, uint32_t address,
                                   uint32_t val, int len)
{
    pci_default_write_config(pdev, address, val, len);
    pcie_cap_flr_write_config(pdev, address, val, len);
}

static const VMStateDescription loom_cgra_vmstate = {
    .name = TYPE_LOOM_CGRA,
    .unmigratable = 1,
};

#ifdef LOOM_QEMU_PROPS_COUNTED
static const Property loom_cgra_props[] = {
#else
static Property loom_cgra_props[] = {
#endif
    DEFINE_PROP_UINT32("cores", LoomCgraState, num_cores, 2),
    DEFINE_PROP_STRING("fabric", LoomCgraState, fabric_prop),
    DEFINE_PROP_UINT32("poll-us", LoomCgraState, poll_us, 100),
    DEFINE_PROP_UINT32("inline-steps", LoomCgraState, inline_steps, 256),
#ifndef LOOM_QEMU_PROPS_COUNTED
    DEFINE_PROP_END_OF_LIST(),
#endif
};

static void loom_cgra_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = loom_cgra_realize;
    k->exit = loom_cgra_exit;
    k->config_write = loom_cgra_write_config;
    k->vendor_id = LOOM_PCI_VENDOR_ID;
    k->device_id = LOOM_PCI_DEVICE_ID;
    k->revision = LOOM_PCI_REVISION;
    k->class_id = LOOM_PCI_CLASS;
    dc->desc = "loom spatial-dataflow (CGRA) accelerator";
#ifdef LOOM_QEMU_LEGACY_RESET
    device_class_set_legacy_reset(dc, loom_cgra_reset);
#else
    dc->reset = loom_cgra_reset;
#endif
    dc->vmsd = &loom_cgra_vmstate;
    device_class_set_props(dc, loom_cgra_props);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo loom_cgra_info = {
    .name = TYPE_LOOM_CGRA,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(LoomCgraState),
    .class_init = loom_cgra_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void loom_cgra_register_types(void)
{
    type_register_static(&loom_cgra_info);
}

type_init(loom_cgra_register_types)
