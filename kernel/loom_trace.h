/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DOC: tracepoints
 *
 * The "loom" trace system: a job's life (submit, run on a core, done),
 * hangs and the stops and resets they cause, resets of the whole function,
 * io_uring commands and buffer objects.  Every event names its device by
 * PCI address; job events name the submitting file by its drm-client-id
 * (as fdinfo shows it) and the job by the id SUBMIT returned, so one job's
 * events can be picked out of a trace.  Documentation/tracing.rst lists
 * the events and shows how to record them.
 */
#if !defined(LOOM_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define LOOM_TRACE_H

#include <linux/pci.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#undef TRACE_SYSTEM
#define TRACE_SYSTEM loom
#define TRACE_INCLUDE_FILE loom_trace

/* Room for a PCI address, "0000:00:04.0". */
#define LOOM_TRACE_DEV_LEN	16

/*
 * loom_job_done's status when the job ended without a completion record
 * the driver believed (refused, or dropped as the device went away).
 */
#define LOOM_TRACE_NO_STATUS	0xffffffffU

/* The fields every event of a job on the device begins with. */
#define LOOM_TRACE_JOB_FMT	"dev=%s client=%llu job=%llu core=%u hw_seqno=%llu"

/* SUBMIT queued the job on its entity; @fence_seqno: its done fence. */
TRACE_EVENT(loom_job_submit,
	    TP_PROTO(struct pci_dev *pdev, u64 client_id, u64 job_id, u32 core,
		     u64 fence_seqno),
	    TP_ARGS(pdev, client_id, job_id, core, fence_seqno),
	    TP_STRUCT__entry(__array(char, dev, LOOM_TRACE_DEV_LEN)
			     __field(u64, client_id)
			     __field(u64, job_id)
			     __field(u32, core)
			     __field(u64, fence_seqno)),
	    TP_fast_assign(strscpy(__entry->dev, pci_name(pdev), LOOM_TRACE_DEV_LEN);
			   __entry->client_id = client_id;
			   __entry->job_id = job_id;
			   __entry->core = core;
			   __entry->fence_seqno = fence_seqno;),
	    TP_printk("dev=%s client=%llu job=%llu core=%u seqno=%llu",
		      __entry->dev, __entry->client_id, __entry->job_id,
		      __entry->core, __entry->fence_seqno)
);

/* The job is on its core's ring, the doorbell rung. */
TRACE_EVENT(loom_job_run,
	    TP_PROTO(struct pci_dev *pdev, u64 client_id, u64 job_id, u32 core,
		     u64 hw_seqno),
	    TP_ARGS(pdev, client_id, job_id, core, hw_seqno),
	    TP_STRUCT__entry(__array(char, dev, LOOM_TRACE_DEV_LEN)
			     __field(u64, client_id)
			     __field(u64, job_id)
			     __field(u32, core)
			     __field(u64, hw_seqno)),
	    TP_fast_assign(strscpy(__entry->dev, pci_name(pdev), LOOM_TRACE_DEV_LEN);
			   __entry->client_id = client_id;
			   __entry->job_id = job_id;
			   __entry->core = core;
			   __entry->hw_seqno = hw_seqno;),
	    TP_printk(LOOM_TRACE_JOB_FMT,
		      __entry->dev, __entry->client_id, __entry->job_id,
		      __entry->core, __entry->hw_seqno)
);

/*
 * The device finished the job: @status and @cycles (fabric cycles) from its
 * completion record, @error the errno its fence carries.
 */
TRACE_EVENT(loom_job_done,
	    TP_PROTO(struct pci_dev *pdev, u64 client_id, u64 job_id, u32 core,
		     u64 hw_seqno, u32 status, int error, u64 cycles),
	    TP_ARGS(pdev, client_id, job_id, core, hw_seqno, status, error,
		    cycles),
	    TP_STRUCT__entry(__array(char, dev, LOOM_TRACE_DEV_LEN)
			     __field(u64, client_id)
			     __field(u64, job_id)
			     __field(u32, core)
			     __field(u64, hw_seqno)
			     __field(u32, status)
			     __field(int, error)
			     __field(u64, cycles)),
	    TP_fast_assign(strscpy(__entry->dev, pci_name(pdev), LOOM_TRACE_DEV_LEN);
			   __entry->client_id = client_id;
			   __entry->job_id = job_id;
			   __entry->core = core;
			   __entry->hw_seqno = hw_seqno;
			   __entry->status = status;
			   __entry->error = error;
			   __entry->cycles = cycles;),
	    TP_printk(LOOM_TRACE_JOB_FMT " status=%d error=%d cycles=%llu",
		      __entry->dev, __entry->client_id, __entry->job_id,
		      __entry->core, __entry->hw_seqno, (int)__entry->status,
		      __entry->error, __entry->cycles)
);

/* The hang check gave up on the running job; recovery follows. */
TRACE_EVENT(loom_job_hang,
	    TP_PROTO(struct pci_dev *pdev, u64 client_id, u64 job_id, u32 core,
		     u64 hw_seqno, u64 ran_ns, u64 stalled_ns),
	    TP_ARGS(pdev, client_id, job_id, core, hw_seqno, ran_ns, stalled_ns),
	    TP_STRUCT__entry(__array(char, dev, LOOM_TRACE_DEV_LEN)
			     __field(u64, client_id)
			     __field(u64, job_id)
			     __field(u32, core)
			     __field(u64, hw_seqno)
			     __field(u64, ran_ns)
			     __field(u64, stalled_ns)),
	    TP_fast_assign(strscpy(__entry->dev, pci_name(pdev), LOOM_TRACE_DEV_LEN);
			   __entry->client_id = client_id;
			   __entry->job_id = job_id;
			   __entry->core = core;
			   __entry->hw_seqno = hw_seqno;
			   __entry->ran_ns = ran_ns;
			   __entry->stalled_ns = stalled_ns;),
	    TP_printk(LOOM_TRACE_JOB_FMT " ran_ns=%llu stalled_ns=%llu",
		      __entry->dev, __entry->client_id, __entry->job_id,
		      __entry->core, __entry->hw_seqno, __entry->ran_ns,
		      __entry->stalled_ns)
);

/* Recovery sets the core's STOP, meaning to end the job with @hw_seqno. */
TRACE_EVENT(loom_core_stop,
	    TP_PROTO(struct pci_dev *pdev, u32 core, u64 hw_seqno),
	    TP_ARGS(pdev, core, hw_seqno),
	    TP_STRUCT__entry(__array(char, dev, LOOM_TRACE_DEV_LEN)
			     __field(u32, core)
			     __field(u64, hw_seqno)),
	    TP_fast_assign(strscpy(__entry->dev, pci_name(pdev), LOOM_TRACE_DEV_LEN);
			   __entry->core = core;
			   __entry->hw_seqno = hw_seqno;),
	    TP_printk("dev=%s core=%u hw_seqno=%llu",
		      __entry->dev, __entry->core, __entry->hw_seqno)
);

/* The core is reset and restarted; @hung: the stop caught the hung job. */
TRACE_EVENT(loom_core_reset,
	    TP_PROTO(struct pci_dev *pdev, u32 core, bool hung),
	    TP_ARGS(pdev, core, hung),
	    TP_STRUCT__entry(__array(char, dev, LOOM_TRACE_DEV_LEN)
			     __field(u32, core)
			     __field(bool, hung)),
	    TP_fast_assign(strscpy(__entry->dev, pci_name(pdev), LOOM_TRACE_DEV_LEN);
			   __entry->core = core;
			   __entry->hung = hung;),
	    TP_printk("dev=%s core=%u hung=%d",
		      __entry->dev, __entry->core, __entry->hung)
);

/* A reset of the PCI function (FLR, AER): before (@done 0) and after. */
TRACE_EVENT(loom_function_reset,
	    TP_PROTO(struct pci_dev *pdev, bool done, bool reachable),
	    TP_ARGS(pdev, done, reachable),
	    TP_STRUCT__entry(__array(char, dev, LOOM_TRACE_DEV_LEN)
			     __field(bool, done)
			     __field(bool, reachable)),
	    TP_fast_assign(strscpy(__entry->dev, pci_name(pdev), LOOM_TRACE_DEV_LEN);
			   __entry->done = done;
			   __entry->reachable = reachable;),
	    TP_printk("dev=%s done=%d reachable=%d",
		      __entry->dev, __entry->done, __entry->reachable)
);

DECLARE_EVENT_CLASS(loom_uring,
		    TP_PROTO(struct pci_dev *pdev, u64 client_id, u64 job_id, int result),
		    TP_ARGS(pdev, client_id, job_id, result),
		    TP_STRUCT__entry(__array(char, dev, LOOM_TRACE_DEV_LEN)
				     __field(u64, client_id)
				     __field(u64, job_id)
				     __field(int, result)),
		    TP_fast_assign(strscpy(__entry->dev, pci_name(pdev), LOOM_TRACE_DEV_LEN);
				   __entry->client_id = client_id;
				   __entry->job_id = job_id;
				   __entry->result = result;),
		    TP_printk("dev=%s client=%llu job=%llu result=%d",
			      __entry->dev, __entry->client_id, __entry->job_id,
			      __entry->result)
);

/*
 * An issue of a uring_cmd SUBMIT: @result 0 when its job was queued (the
 * command completes later), else the issue's error (-EAGAIN: io_uring
 * issues it again from a worker).
 */
DEFINE_EVENT(loom_uring, loom_uring_issue,
	     TP_PROTO(struct pci_dev *pdev, u64 client_id, u64 job_id, int result),
	     TP_ARGS(pdev, client_id, job_id, result)
);

/* A uring_cmd SUBMIT completes: @result is the CQE's res. */
DEFINE_EVENT(loom_uring, loom_uring_complete,
	     TP_PROTO(struct pci_dev *pdev, u64 client_id, u64 job_id, int result),
	     TP_ARGS(pdev, client_id, job_id, result)
);

DECLARE_EVENT_CLASS(loom_bo,
		    TP_PROTO(struct pci_dev *pdev, u64 client_id, u64 va, u64 size),
		    TP_ARGS(pdev, client_id, va, size),
		    TP_STRUCT__entry(__array(char, dev, LOOM_TRACE_DEV_LEN)
				     __field(u64, client_id)
				     __field(u64, va)
				     __field(u64, size)),
		    TP_fast_assign(strscpy(__entry->dev, pci_name(pdev), LOOM_TRACE_DEV_LEN);
				   __entry->client_id = client_id;
				   __entry->va = va;
				   __entry->size = size;),
		    TP_printk("dev=%s client=%llu va=0x%llx size=%llu",
			      __entry->dev, __entry->client_id, __entry->va,
			      __entry->size)
);

/* A BO is mapped at @va in its file's address space. */
DEFINE_EVENT(loom_bo, loom_bo_create,
	     TP_PROTO(struct pci_dev *pdev, u64 client_id, u64 va, u64 size),
	     TP_ARGS(pdev, client_id, va, size)
);

/* A BO is unmapped and its pages released, once no job can reach them. */
DEFINE_EVENT(loom_bo, loom_bo_free,
	     TP_PROTO(struct pci_dev *pdev, u64 client_id, u64 va, u64 size),
	     TP_ARGS(pdev, client_id, va, size)
);

#endif /* LOOM_TRACE_H */

/* Out of tree: define_trace.h finds this file through -I$(src)/kernel. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#include <trace/define_trace.h>
