/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DOC: loom driver state shared by the driver's files
 *
 * loom_drv.c    PCI probe/remove, the DRM driver, ioctl table, GET_PARAM,
 *               open/postclose, fdinfo
 * loom_gem.c    buffer objects: create, mmap offset, wait, free
 * loom_mmu.c    per-file device address spaces: page tables, VA allocator
 * loom_hw.c     cores: queues, MSI-X interrupts, completions, stop/reset
 * loom_job.c    SUBMIT, the drm_sched backend, hang recovery, JOB_INFO
 * loom_uring.c  io_uring uring_cmd submission
 * loom_trace.h  tracepoints (TRACE_SYSTEM loom), made in loom_trace_points.c
 * loom_sysfs.c  the operator's controls: core and device resets
 * loom_debugfs.c debugfs
 */
#ifndef LOOM_DRV_H
#define LOOM_DRV_H

#include <linux/io.h>
#include <linux/kref.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/spinlock.h>
#include <drm/drm_device.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_mm.h>
#include <drm/gpu_scheduler.h>

#include "drm/loom_drm.h"
#include "loom_device.h"

/* Ring entries per core; the scheduler keeps at most one less in flight. */
#define LOOM_RING_SIZE		64
/*
 * Jobs a core may have on its ring from SUBMIT (the direct path) that the
 * scheduler has not yet counted: its credit limit leaves them room.
 */
#define LOOM_DIRECT_MAX		4
/*
 * BOs a job holds without allocating its lists: its command BO and a few
 * more, which covers most jobs (a launch's arena, its data).
 */
#define LOOM_JOB_INLINE_BOS	6
/* Device VAs handed to BOs: [LOOM_VA_START, LOOM_VA_END). */
#define LOOM_VA_START		0x100000ULL
#define LOOM_VA_END		(1ULL << (LOOM_VA_BITS - 1))
/* How often a core with jobs on its ring is checked for a hang. */
#define LOOM_HANG_CHECK_MS	100
/* How long a reset of the function waits for each core to stop. */
#define LOOM_QUIESCE_MS		500
/* Jobs per file whose outcome JOB_INFO keeps. */
#define LOOM_JOB_RECORDS	256
/* Per core: failed jobs' dumps copied out of the device, awaiting a home. */
#define LOOM_DUMP_STAGES	4

struct loom_device;
struct loom_file;
struct loom_job;

/**
 * struct loom_dump_stage - a failed job's state dump, copied out of the
 *	device's buffer in the IRQ handler, moved to the job's record by
 *	dump_work in sleepable context
 * @buf: LOOM_DUMP_MAX_SIZE bytes
 * @len: bytes of dump in @buf, 0 when the stage is free
 * @lf: the job's file (a reference while @len)
 * @job_id: the job
 */
struct loom_dump_stage {
	void *buf;
	u32 len;
	struct loom_file *lf;
	u64 job_id;
};

/* Kinds of device misbehaviour, each logged once per core. */
enum loom_hw_fault {
	LOOM_HW_FAULT_HEAD,
	LOOM_HW_FAULT_SEQNO,
	LOOM_HW_FAULT_DUMP,
	LOOM_HW_FAULT_COUNT
};

/**
 * struct loom_core - one compute core and its hardware queue
 * @ldev: the device
 * @index: core number
 * @sched: the drm_sched scheduler feeding this queue
 * @lock: protects the ring state below; taken from the IRQ handler
 * @ring: the descriptor ring (coherent DMA), @ring_dma its bus address
 * @done: one completion record per ring slot, @done_dma its bus address
 * @dump: the state dump buffer, @dump_dma its bus address
 * @tail: next slot the driver fills
 * @head: next slot whose completion the driver has not processed
 * @inflight: the job in each slot, or NULL
 * @fence_context: dma_fence context of this core's hardware fences
 * @seqno: last hardware fence seqno handed out
 * @failed_context: dma_fence context of fences of jobs that fail unrun
 * @failed_seqno: last seqno on @failed_context
 * @failed_lock: the lock of those fences
 * @hang_progress: LOOM_CORE_PROGRESS at the last hang check
 * @stopping: recovery has set CTRL.STOP; a STOPPED record of a job other
 *	than the one with @stop_seqno is a job the stop caught by mistake
 * @stop_seqno: the hardware seqno of the job recovery means to stop
 * @stop_error: what that job fails with: -ETIMEDOUT for a hang,
 *	-ECANCELED for an operator's reset
 * @stop_hit: the stop ended that job (its record says STOPPED)
 * @quiesced: loom_hw_quiesce() emptied the ring for a reset of the
 *	function; until loom_hw_restart() nothing the device shows is read
 * @hang_work: the hang check, armed while jobs are on the ring
 * @last_done: when the device last finished a job (busy-time accounting)
 * @up_since: when the core was brought up at probe (fdinfo's
 *	drm-total-cycles counts from there)
 * @stages: dumps on their way to JOB_INFO records
 * @dump_work: moves @stages to the records
 * @logged: enum loom_hw_fault kinds already logged
 * @irq: Linux IRQ number of this core's MSI-X vector
 * @jobs_done: jobs completed (debugfs)
 * @jobs_failed: jobs completed with an error (debugfs)
 * @reset_requested: an operator asked for a reset of the core (sysfs);
 *	its hang check does it, so that it never races a hang recovery
 * @resets: core resets: hang recoveries and operators' resets (debugfs)
 * @hw_faults: completions the driver refused (debugfs)
 * @dumps_dropped: dumps lost to full stages or a file's cap (debugfs)
 * @irqs_idle: interrupts that found no completion to reap (debugfs)
 * @doorbells_lost: doorbells the device did not see, rung again (debugfs)
 * @sched_stopped: the scheduler is stopped for a recovery or a reset: no
 *	job takes the direct path, which could overtake a job it resubmits
 * @direct_unclaimed: jobs on the ring from SUBMIT whose run_job() has not
 *	come yet, so the scheduler's credits do not count them (at most
 *	LOOM_DIRECT_MAX)
 * @jobs_direct: jobs put on the ring at SUBMIT (debugfs)
 */
struct loom_core {
	struct loom_device *ldev;
	unsigned int index;
	struct drm_gpu_scheduler sched;
	spinlock_t lock;	/* the ring state below; taken in hard IRQ */
	struct loom_hw_job *ring;
	dma_addr_t ring_dma;
	struct loom_hw_completion *done;
	dma_addr_t done_dma;
	void *dump;
	dma_addr_t dump_dma;
	u32 tail;
	u32 head;
	struct loom_job *inflight[LOOM_RING_SIZE];
	u64 fence_context;
	u64 seqno;
	u64 failed_context;
	atomic64_t failed_seqno;
	spinlock_t failed_lock;	/* fences on failed_context */
	u32 hang_progress;
	bool stopping;
	u64 stop_seqno;
	int stop_error;
	bool stop_hit;
	bool quiesced;
	struct delayed_work hang_work;
	atomic_t reset_requested;
	ktime_t last_done;
	ktime_t up_since;
	struct loom_dump_stage stages[LOOM_DUMP_STAGES];
	struct work_struct dump_work;
	unsigned long logged;
	int irq;
	atomic64_t jobs_done;
	atomic64_t jobs_failed;
	atomic64_t resets;
	atomic64_t hw_faults;
	atomic64_t dumps_dropped;
	atomic64_t irqs_idle;
	atomic64_t doorbells_lost;
	bool sched_stopped;
	u32 direct_unclaimed;
	atomic64_t jobs_direct;
};

/**
 * struct loom_client - one process's standing with a device: bans follow
 *	the process, not the file, so reopening the node does not lift them
 * @link: in loom_device.clients
 * @tgid: the process (a reference)
 * @users: open files of the process
 * @hangs: jobs of the process that hung
 */
struct loom_client {
	struct list_head link;
	struct pid *tgid;
	unsigned int users;
	atomic_t hangs;
};

/**
 * struct loom_device - one loom-cgra PCI function
 * @drm: the DRM device; its lifetime (devm/drmm) bounds everything below
 * @pdev: the PCI function
 * @regs: BAR0, mapped for the device's lifetime by pcim
 * @hw_version: LOOM_REG_VERSION read at probe
 * @hw_caps: LOOM_REG_CAPS read at probe
 * @num_cores: LOOM_REG_NUM_CORES read at probe
 * @fabric: LOOM_REG_FABRIC read at probe
 * @limits: LOOM_REG_LIMITS read at probe
 * @sched_lock: serialises drm_sched_job_arm() and push, so that jobs enter
 *	each entity in the order their fences were numbered
 * @cores: the cores
 * @error_irq: Linux IRQ number of the device-error vector
 * @next_client_id: drm-client-id values for fdinfo
 * @wq: deferred BO frees and dumps; nothing on it sleeps for a job
 * @hang_wq: the cores' hang checks and recovery, apart from @wq, so that
 *	nothing a client queues can delay them
 * @files: struct loom_file alive (open or kept by BOs and jobs); the
 *	schedulers outlive them all
 * @files_wq: woken when @files drops to zero
 * @file_list_lock: protects @file_list
 * @file_list: every struct loom_file alive, to release their DMA at unplug
 * @clients_lock: protects @clients
 * @clients: struct loom_client of processes that opened the device
 * @operator_reset_lock: one operator's reset (sysfs) at a time: a request
 *	is a flag its waiter clears, which a second waiter could take
 * @unplugging: removal has begun; SUBMITs waiting for room give up
 * @resetting: a reset of the function is under way (reset_prepare to
 *	reset_done, or AER's error_detected to slot_reset): the hang checks
 *	stand down
 * @fail_pt_alloc: testing only (debugfs): the n-th next page-table
 *	allocation fails, 0 for none
 * @hang_stop_delay_ms: testing only (debugfs): sleep between a hang
 *	decision and the core's stop, to widen the window in which the
 *	suspected job can end on its own
 * @quiesce_wait_ms: how long a reset of the function waits for each core
 *	to stop (LOOM_QUIESCE_MS; debugfs, for testing a slow stop)
 */
struct loom_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *regs;
	u32 hw_version;
	u32 hw_caps;
	u32 num_cores;
	u32 fabric;
	u32 limits;
	struct mutex sched_lock;	/* job arm + push, in fence order */
	struct loom_core cores[LOOM_MAX_CORES];
	int error_irq;
	atomic64_t next_client_id;
	struct workqueue_struct *wq;
	struct workqueue_struct *hang_wq;
	atomic_t files;
	wait_queue_head_t files_wq;
	struct mutex file_list_lock;	/* @file_list */
	struct list_head file_list;
	struct mutex clients_lock;	/* @clients */
	struct list_head clients;
	struct mutex operator_reset_lock;	/* loom_core_reset() */
	bool unplugging;
	bool resetting;
	atomic_t fail_pt_alloc;
	u32 hang_stop_delay_ms;
	u32 quiesce_wait_ms;
};

/**
 * struct loom_vm - a device address space (one per open file)
 * @ldev: the device
 * @lock: protects the page tables and @mm
 * @mm: the VA allocator
 * @root: the level-0 table, @root_dma its bus address
 * @tables: every table page (struct loom_pt_page), freed with the VM
 * @table_index: the same, indexed by bus page number, for page walks
 * @fence_lock: protects @last
 * @last: per core, the done fence of the last job submitted on this
 *	address space (jobs of one core finish in order), or NULL
 */
struct loom_vm {
	struct loom_device *ldev;
	struct mutex lock;	/* the page tables and @mm */
	struct drm_mm mm;
	u64 *root;
	dma_addr_t root_dma;
	struct list_head tables;
	struct xarray table_index;
	spinlock_t fence_lock;	/* @last */
	struct dma_fence *last[LOOM_MAX_CORES];
	bool released;		/* tables freed at unplug; vm->lock */
};

/**
 * struct loom_job_record - what JOB_INFO reports for one job
 * @job_id: the job, 0 for an empty slot
 * @state: DRM_LOOM_JOB_*
 * @error: its fence's error
 * @hw: the device's completion record
 * @dump: the state dump (kvmalloc'ed), or NULL
 * @dump_len: its size
 * @dump_core: core whose dump_work may still deliver a dump, or -1
 */
struct loom_job_record {
	u64 job_id;
	u32 state;
	int error;
	struct loom_hw_completion hw;
	void *dump;
	u32 dump_len;
	int dump_core;
};

/**
 * struct loom_file - per open file state; refcounted because BOs and jobs
 *	may outlive the file
 * @refcount: held by the file, each BO and each job
 * @ldev: the device
 * @vm: the file's address space
 * @entity: one scheduler entity per core
 * @client: the opening process's standing (bans)
 * @client_id: drm-client-id for fdinfo
 * @next_job_id: last job id handed out
 * @records_lock: protects @records; taken from the IRQ handler
 * @records: outcomes of the last LOOM_JOB_RECORDS jobs
 * @records_wq: woken when a record becomes DRM_LOOM_JOB_DONE, and at
 *	removal (JOB_INFO's waits)
 * @busy_ns: per core, nanoseconds its jobs ran (fdinfo)
 * @cycles: per core, fabric cycles its jobs' completion records count
 *	(fdinfo)
 * @bo_bytes: bytes of BOs alive, all pinned (fdinfo, the pinned cap)
 * @dump_bytes: bytes of state dumps in @records
 * @inflight: jobs submitted and not yet freed
 * @inflight_wq: woken when @inflight drops
 * @link: in the device's file_list
 * @last_scheduled: per core, the scheduled fence of the file's last job
 *	there (a reference, under the device's sched_lock): a job may take the
 *	direct path only once every earlier job of its entity has run
 * @direct_jobs: the file's jobs on a ring from SUBMIT, unclaimed by the
 *	scheduler (its entity must not kill them: postclose waits)
 * @direct_wq: woken when @direct_jobs drops to 0
 */
struct loom_file {
	struct kref refcount;
	struct loom_device *ldev;
	struct loom_vm vm;
	struct drm_sched_entity entity[LOOM_MAX_CORES];
	struct loom_client *client;
	u64 client_id;
	atomic64_t next_job_id;
	spinlock_t records_lock;	/* @records; taken in hard IRQ */
	struct loom_job_record records[LOOM_JOB_RECORDS];
	wait_queue_head_t records_wq;
	atomic64_t busy_ns[LOOM_MAX_CORES];
	atomic64_t cycles[LOOM_MAX_CORES];
	atomic64_t bo_bytes;
	atomic64_t dump_bytes;
	atomic_t inflight;
	wait_queue_head_t inflight_wq;
	struct list_head link;
	struct dma_fence *last_scheduled[LOOM_MAX_CORES];
	atomic_t direct_jobs;
	wait_queue_head_t direct_wq;
};

/**
 * struct loom_bo - a buffer object
 * @base: the shmem GEM object
 * @lf: the file whose address space maps it (a reference)
 * @node: its VA range in that address space
 * @flags: DRM_LOOM_BO_* flags
 * @free_work: the deferred free's next step, after a fence in @free_fences
 * @free_cb: on the fence the deferred free waits for
 * @free_fences: per core, the address space's last busy fence at the free
 *	(a reference), or NULL
 * @free_next: the entry of @free_fences the deferred free waits for
 */
struct loom_bo {
	struct drm_gem_shmem_object base;
	struct loom_file *lf;
	struct drm_mm_node node;
	u32 flags;
	struct work_struct free_work;
	struct dma_fence_cb free_cb;
	struct dma_fence *free_fences[LOOM_MAX_CORES];
	unsigned int free_next;
};

/**
 * struct loom_job - one SUBMIT
 * @base: the scheduler job
 * @refcount: held by the submitter until it is done with the job, and by
 *	the scheduler until free_job()
 * @lf: the submitting file (a reference): address space, records, bans
 * @core: the core it runs on
 * @bos: the BOs it uses (references), the command BO among them
 * @bo_write: whether it writes each
 * @bo_count: entries in @bos
 * @desc: its descriptor (command VA and size, page-table root)
 * @job_id: the file's identifier of the job
 * @deadline: nanoseconds without progress before it counts as hung
 * @seen: the hang check has looked at it (it is the one running)
 * @started: when the hang check first saw it running
 * @last_progress: when its core's progress counter last moved
 * @queued_at: when it was put on the ring
 * @hw_seqno: the seqno of its descriptor, which its completion must echo
 * @hw_fence: its hardware fence while on the ring (reference); protected
 *	by core->lock
 * @hw_done: the device finished it (a completion record was processed);
 *	core->lock
 * @hw_error: then, the errno its fence carries
 * @direct: on the ring from SUBMIT, and neither claimed by run_job() nor
 *	off the ring yet; core->lock
 */
struct loom_job {
	struct drm_sched_job base;
	struct kref refcount;
	struct loom_file *lf;
	struct loom_core *core;
	struct drm_gem_object **bos;
	bool *bo_write;
	u32 bo_count;
	struct drm_gem_object *bos_inline[LOOM_JOB_INLINE_BOS];
	bool bo_write_inline[LOOM_JOB_INLINE_BOS];
	struct loom_hw_job desc;
	u64 job_id;
	u64 deadline;
	bool seen;
	ktime_t started;
	ktime_t last_progress;
	ktime_t queued_at;
	u64 hw_seqno;
	struct dma_fence *hw_fence;
	bool hw_done;
	int hw_error;
	bool direct;
};

static inline struct loom_device *to_loom_device(struct drm_device *drm)
{
	return container_of(drm, struct loom_device, drm);
}

static inline struct loom_bo *to_loom_bo(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct loom_bo, base);
}

static inline u32 loom_read(struct loom_device *ldev, u32 reg)
{
	return readl(ldev->regs + reg);
}

static inline void loom_write(struct loom_device *ldev, u32 reg, u32 val)
{
	writel(val, ldev->regs + reg);
}

static inline u32 loom_core_read(struct loom_core *core, u32 reg)
{
	return loom_read(core->ldev, LOOM_CORE_BASE(core->index) + reg);
}

static inline void loom_core_write(struct loom_core *core, u32 reg, u32 val)
{
	loom_write(core->ldev, LOOM_CORE_BASE(core->index) + reg, val);
}

/* loom_drv.c */
extern unsigned int loom_max_pinned_mb;
extern unsigned int loom_max_pinned_total_mb;
extern unsigned int loom_max_job_ms;
extern bool loom_direct_submit;
struct loom_file *loom_file_get(struct loom_file *lf);
void loom_file_put(struct loom_file *lf);
void loom_client_hung(struct loom_device *ldev, struct loom_client *client);

/* loom_mmu.c */
int loom_vm_init(struct loom_vm *vm, struct loom_device *ldev);
void loom_vm_fini(struct loom_vm *vm);
void loom_vm_release_dma(struct loom_vm *vm);
void loom_bo_release_dma(struct loom_bo *bo);
int loom_vm_map_bo(struct loom_vm *vm, struct loom_bo *bo);
void loom_vm_unmap_bo(struct loom_vm *vm, struct loom_bo *bo);
void loom_vm_add_fence(struct loom_vm *vm, unsigned int core,
		       struct dma_fence *fence);
void loom_vm_busy_fences(struct loom_vm *vm, struct dma_fence **fences);

/* loom_gem.c */
struct drm_gem_object *loom_gem_create_object(struct drm_device *drm, size_t size);
int loom_ioctl_bo_create(struct drm_device *drm, void *data, struct drm_file *file);
int loom_ioctl_bo_mmap_offset(struct drm_device *drm, void *data,
			      struct drm_file *file);
int loom_ioctl_bo_wait(struct drm_device *drm, void *data, struct drm_file *file);
int loom_ioctl_bo_info(struct drm_device *drm, void *data, struct drm_file *file);

/* loom_hw.c */
int loom_hw_init(struct loom_device *ldev);
void loom_hw_fini(struct loom_device *ldev);
void loom_hw_cancel_all(struct loom_device *ldev);
struct dma_fence *loom_hw_failed_fence(struct loom_core *core, int error);
struct dma_fence *loom_hw_queue_job(struct loom_core *core, struct loom_job *job);
bool loom_hw_queue_direct(struct loom_core *core, struct loom_job *job);
void loom_hw_direct_end_locked(struct loom_job *job);
bool loom_hw_take_queued(struct loom_core *core, struct loom_job *job,
			 struct dma_fence **fence);
bool loom_hw_stop_and_reset(struct loom_core *core, u64 seqno, int error);
unsigned int loom_hw_reap_locked(struct loom_core *core);
void loom_hw_check_doorbell_locked(struct loom_core *core);
void loom_hw_dump_work(struct work_struct *work);
void loom_hw_quiesce(struct loom_device *ldev, bool reachable);
void loom_hw_restart(struct loom_device *ldev);

/* loom_job.c */
int loom_sched_init_all(struct loom_device *ldev);
void loom_sched_fini_all(struct loom_device *ldev);
int loom_submit_wait_for_points(struct drm_file *file,
				const struct drm_loom_submit *args, bool nonblock);
int loom_submit(struct loom_device *ldev, struct drm_file *file,
		struct drm_loom_submit *args, bool nonblock, struct dma_fence **done);
int loom_ioctl_submit(struct drm_device *drm, void *data, struct drm_file *file);
int loom_ioctl_job_info(struct drm_device *drm, void *data, struct drm_file *file);
void loom_job_hw_done_locked(struct loom_job *job,
			     const struct loom_hw_completion *rec, int error,
			     bool dump_staged);
void loom_job_hw_drop_locked(struct loom_job *job, int error, bool final);
void loom_job_hw_refused_locked(struct loom_job *job);
void loom_records_fini(struct loom_file *lf);
void loom_record_attach_dump(struct loom_file *lf, u64 job_id, void *dump,
			     u32 len);
void loom_hang_work(struct work_struct *work);
void loom_reset_prepare(struct loom_device *ldev, bool reachable);
void loom_reset_done(struct loom_device *ldev);
int loom_core_reset(struct loom_core *core);
int loom_device_reset(struct loom_device *ldev);

/* loom_sysfs.c */
extern const struct attribute_group *loom_sysfs_groups[];

/* loom_uring.c */
int loom_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags);

/* loom_debugfs.c */
void loom_debugfs_init(struct drm_minor *minor);

#endif /* LOOM_DRV_H */
