/* Every runtime parameter, one line each. Adding a parameter is adding a line
 * here: the registry, the env and command line parsing and weft-info pick it
 * up. Defaults are written in user syntax and checked by weft_params_create.
 * Every INT and SIZE parameter has bounds that the runtime can carry: a
 * value outside them is refused when it is set, with the range named,
 * instead of failing later inside MPI or an allocation. */
#include "params/params.h"

#define KIB (INT64_C(1) << 10)
#define MIB (INT64_C(1) << 20)
#define GIB (INT64_C(1) << 30)
#define TIB (INT64_C(1) << 40)

#define INT(n, d, lo, hi, h)                                                                       \
    {                                                                                              \
        .name = n, .kind = WEFT_PARAM_INT, .defval = d, .min = lo, .max = hi, .help = h            \
    }
#define BOOL(n, d, h)                                                                              \
    {                                                                                              \
        .name = n, .kind = WEFT_PARAM_BOOL, .defval = d, .help = h                                 \
    }
#define SIZE(n, d, lo, hi, h)                                                                      \
    {                                                                                              \
        .name = n, .kind = WEFT_PARAM_SIZE, .defval = d, .min = lo, .max = hi, .help = h           \
    }
#define ENUM(n, d, c, h)                                                                           \
    {                                                                                              \
        .name = n, .kind = WEFT_PARAM_ENUM, .defval = d, .choices = c, .help = h                   \
    }
#define STRING(n, d, h)                                                                            \
    {                                                                                              \
        .name = n, .kind = WEFT_PARAM_STRING, .defval = d, .help = h                               \
    }

const weft_param_def_t weft_param_table[] = {
    INT("cores", "0", 0, 4096,
        "worker threads a rank; 0 = one per core of the rank's share of the node (one core "
        "each when its ranks outnumber its cores), less one per accelerator and, on several "
        "ranks, one for the comm thread when the rank uses accelerators, at least one"),
    BOOL("bind", "1", "bind workers to cores with hwloc"),
    INT("debug_verbose", "1", 0, 3,
        "log level: 0 errors, 1 warnings, 2 info, 3 debug (its lines are compiled in only with "
        "-DWEFT_DEBUG_LOG in CFLAGS)"),
    BOOL("show_stats", "0",
         "at weft_fini, per rank: tasks, peak runtime metadata, network bytes by transport; per "
         "device (emu1, cuda1, "
         "... by API index): tasks, H2D/D2H/D2D bytes, evictions, peak memory"),
    BOOL("leak_report", "1",
         "report runtime-owned copies still alive at taskpool and context end (a leak at "
         "context end makes weft_fini return WEFT_ERR_INVALID)"),
    BOOL("check_reads", "0",
         "debug aid: hash each read-only (WEFT_R) flow before and after a body that runs on "
         "the host or an emu device; a body that wrote one fails, naming the flow (CUDA and "
         "HIP bodies are not checked); a host read acquire (weft_data_host_acquire or "
         "weft_matrix_host_acquire with WEFT_R) written through is refused at its release; "
         "may be set after weft_init"),
    BOOL("check_writes", "0",
         "debug aid: fill each write-only (WEFT_W) flow with NaNs before a body that runs on "
         "the host or an emu device, so that a body reading what it was given to write only "
         "(WEFT_W where WEFT_RW was meant) computes wrong results there, not only where the "
         "copy held stale bytes; elements a body leaves unwritten keep the NaNs (in the user's "
         "memory too) and are warned of (CUDA and HIP bodies are not filled); may be set after "
         "weft_init"),
    INT("sched_window", "4096", 2, 1073741824,
        "pending tasks past which the inserting thread runs ready tasks itself"),
    INT("sched_pending_max", "65536", 0, 1073741824,
        "tasks pending on a rank in a taskpool (inserted, not ended; its transfers counted) "
        "past which an insertion returns only once they fell to half of it, so that the tasks' "
        "memory stays bounded when insertion outruns execution (the sequence check keeps 6-12 "
        "bytes a task until the wait); 0 = insertion never waits"),
    INT("sim_nranks", "0", 0, 1 << 24,
        "simulation: this single process acts as one rank of this many (insertion and remote "
        "inference run, nothing is sent, no body runs, no tile memory); 0 = off"),
    INT("sim_rank", "0", 0, (1 << 24) - 1, "simulation: the rank this process acts as"),
    BOOL("sched_steal", "1", "idle workers steal ready tasks from other workers"),
    INT("redux_lanes", "4", 1, 64,
        "partial results a rank keeps for each data under WEFT_REDUX: tasks of one lane run one "
        "after the other, tasks of different lanes at once; read by weft_data_set_reduction; "
        "equal on every rank"),
    ENUM("device_type", "cuda", "cuda|emu|hip", "accelerator type the apps' -g flag asks for"),
    /* At most 16 accelerators a process (WEFT_MAX_DEVICES - 1). */
    INT("device_cuda_enabled", "0", -1, 16, "CUDA devices to use; -1 = all present, 0 = none"),
    INT("device_hip_enabled", "0", -1, 16, "HIP (AMD) devices to use; -1 = all present, 0 = none"),
    INT("device_emu_enabled", "0", 0, 16, "emulated accelerators to create"),
    INT("device_memory_use", "90", 1, 100,
        "percent of each device's memory weft may take, split among the ranks of the node "
        "that use the device"),
    /* A cap: any value above the device's memory is no cap, so none is refused. */
    SIZE("device_memory_limit", "0", 0, INT64_MAX,
         "cap on the zone of each device of this rank in bytes (K/M/G), after the split of "
         "device_memory_use; 0 = no cap"),
    INT("device_peer_mask", "-1", -1, 65535,
        "bit i-1 lets device i copy directly to/from peers; 0 = always through host"),
    INT("device_streams", "4", 1, 6,
        "execution streams per accelerator (plus its stage-in, stage-out and prefetch streams)"),
    BOOL("device_urgent_stream", "1",
         "one more execution stream at the device's highest priority, for tasks that outrank "
         "every task running on the others (the next panel: lookahead)"),
    /* Past it a matrix's creation fails (WEFT_ERR_NOMEM), named: without
     * it a problem larger than the node mapped its tiles and slid,
     * silently, toward the kernel's OOM killer. */
    INT("host_memory_use", "100", 0, 1000,
        "percent of the node's memory (or of its cgroup limit) that the tiles of weft_matrix_new "
        "and weft's other host copies may take, split among the ranks of the node; 0 = no limit"),
    ENUM("host_pin", "auto", "auto|on|off",
         "host copies weft allocates itself (tiles of weft_matrix_new, write-back targets) come "
         "from slabs that are page-locked so copies to and from devices are asynchronous and at "
         "full rate: auto, once they outgrow the rank's device memory (out of core); on, from "
         "the first; off, never (pageable)"),
    BOOL("device_prefetch", "1",
         "stage-in copies go on a prefetch stream as soon as a task is started, while earlier "
         "kernels run (execution streams wait for them); 0: on the task's execution stream"),
    ENUM("device_evict", "next_use", "lru|next_use",
         "which device copy goes when the zone is full: next_use, the one whose next use by "
         "this rank's tasks is farthest (with residency-aware picks and prefetches kept "
         "within device_prefetch_share); lru, the least recently used (the older behaviour)"),
    INT("device_prefetch_share", "50", 1, 100,
        "with device_evict=next_use, percent of a device's zone that the tiles of tasks in "
        "flight may take: past it the next task waits for one to end rather than evict the "
        "tiles of the next tasks"),
    INT("device_prefetch_ahead", "0", 0, 64,
        "with device_evict=next_use, tiles a device may hold ahead (arriving, or in and not used "
        "yet) for tasks homed on it that are not started, within the part of the zone that "
        "device_prefetch_share leaves (soonest use first, final versions only, evicting only "
        "copies used later; on the prefetch stream, device_prefetch=1); 0 (the default: slower "
        "on an H200, docs/RESULTS.md): inputs come once a task is started"),
    BOOL("device_launch_ahead", "1",
         "a task on a device whose last missing input is a tile pulled from another rank (ipc) "
         "goes to the device once the pull is enqueued, its kernel queued behind it; 0: it waits "
         "for the pull to be seen landed"),
    INT("device_inflight", "4", 1, 64,
        "tasks started ahead (inputs staged, kernel queued) per execution stream, counted "
        "over all of a device's execution streams"),
    /* A time, not a count: the holders (a peer's fetch of a send, a peer
     * device) end their hold by what they do, not by what this rank does. */
    INT("device_room_wait_ms", "2000", 1, 86400000,
        "how long a task that does not fit the free part of a device's zone waits for room "
        "that copies held elsewhere keep taken (sends a peer has not fetched, a peer device's "
        "copy), counted from the last time one of them was let go, before it runs elsewhere "
        "(the host, another device), or fails where it can run nowhere else"),
    INT("device_batch", "16", 1, 64,
        "most ready tasks of one class and shape a device manager launches by one call of "
        "the class's batch body (1: never batch)"),
    INT("device_batch_elems", "262144", 0, 1073741824,
        "tasks batch only when each of their tiles has at most this many elements (small "
        "kernels, which alone leave most of a GPU idle; 512 x 512 by default)"),
    SIZE("device_workspace", "16M", 0, 16 * GIB,
         "scratch bytes per execution stream for task bodies (weft_task_workspace)"),
    ENUM("device_alloc", "zone", "zone|tile",
         "device memory: one zone split best-fit (zone), or one allocation per tile (tile)"),
    SIZE("device_emu_memory", "1G", 4 * KIB, TIB,
         "memory of one emulated accelerator of the node, split among the node's ranks that "
         "use it (each rank's share is a shared-memory zone)"),
    /* For tests: a copy that is still landing for a known time (a slow
     * write-back, a slow pull), so that what waits for it can be seen. */
    INT("device_emu_copy_delay_us", "0", 0, 10000000,
        "each copy of an emulated accelerator waits this many microseconds on the device's "
        "thread before it moves its bytes (tests: copies in flight for a known time); 0 = none"),
    /* Each rank keeps 16 control receives of this size posted (memory), and
     * MPI counts them as int. */
    SIZE("comm_eager_limit", "64K", 0, 64 * MIB,
         "tiles up to this size travel inside the activation message; equal on every rank"),
    INT("watchdog_s", "0", 0, 86400,
        "seconds without any progress before each rank reports what it waits for; 0 = off"),
    BOOL("watchdog_abort", "0", "end the run (non-zero exit) when the watchdog fires"),
    INT("halt_wait_s", "10", 1, 86400,
        "once the ranks are found apart, how long a wait waits for task bodies still running "
        "to return before it returns anyway (they may still write the program's memory)"),
    BOOL("seqcheck_detail", "0",
         "keep each inserted task's class, rank, device hint and first 4 flows (152 B a task "
         "until its taskpool's wait) so that a task sequence that differs between ranks is "
         "printed task by task, each rank's; for debugging; equal on every rank"),
    INT("progress", "-1", -1, 1,
        "rank 0 prints a progress line a second; -1 = when stderr is a terminal"),
    INT("comm_nap_us", "500", 0, 100000,
        "when the workers fill the rank's cores, the idle comm thread waits this long between "
        "polls while a task runs (a message to send wakes it at once) instead of yielding the "
        "core until the next scheduler tick; 0 = always yield"),
    INT("comm_nap_max_us", "4000", 0, 100000,
        "on a rank without accelerators, while its threads have its cores to themselves, each "
        "nap that ran out doubles the next, up to this long; a nap where other processes took "
        "the cores returns to comm_nap_us (<= comm_nap_us: naps never grow); while a peer "
        "waits on this rank (a GET to answer, bytes coming) naps are comm_nap_us"),
    ENUM("comm_gpu_aware", "auto", "auto|on|off",
         "send from and receive into device memory; auto: on when compiled in and the rank has "
         "accelerators"),
    ENUM("comm_gpu_aware_send", "auto", "auto|on|off",
         "sends read device memory (auto: as comm_gpu_aware)"),
    ENUM("comm_gpu_aware_recv", "auto", "auto|on|off",
         "receives land in the consumer's device memory (auto: as comm_gpu_aware)"),
    ENUM("comm_transport", "auto", "auto|mpi|ipc|staged|nccl",
         "transport for tiles in device memory; auto: ipc on one node, else mpi when it reads "
         "device memory, else nccl between CUDA devices (when built), else staged"),
    ENUM("comm_node_split", "host", "host|rank",
         "which ranks count as one node for the choice of transport: host (ranks of one host), "
         "or rank (every rank its own node, to exercise the cross-node path on one host); equal on "
         "every rank"),
    ENUM("comm_mpi_device", "auto", "auto|yes|no",
         "MPI reads device memory (auto: ask the library, e.g. MPIX_Query_cuda_support)"),
    SIZE("comm_staged_chunk", "4M", 4 * KIB, GIB,
         "bytes per chunk of the staged transport (pipelined through pinned host buffers); equal "
         "on every rank"),
    /* MPI counts are int, and Open MPI 4.1's shared-memory path crashed on
     * one message of 2 GiB or more: larger tiles go in pieces. */
    SIZE("comm_mpi_piece", "1G", 4 * KIB, GIB,
         "bytes one MPI operation of the mpi transport moves at most: a larger tile goes in "
         "pieces of whole columns (at least one), each its own message; equal on every rank"),
    INT("comm_give_up_s", "10", 1, 86400,
        "how long a control message that MPI keeps refusing is tried again (its peer waits for "
        "it and cannot be told otherwise) before the rank ends the job"),
    INT("comm_max_requests", "16", 1, 1024,
        "network tile transfers in flight at most a rank (more wait, by priority)"),
    STRING("trace", "",
           "write a Chrome/Perfetto trace: FILE.rank<N>.json per rank, N its rank in "
           "MPI_COMM_WORLD (opened at weft_init: an unwritable path fails it)"),
    STRING("fault_inject", "",
           "tests: make the N-th occurrence fail (N+: it and every later one), rules "
           "SITE[:CLASS]:N[+][@RANK] comma-separated "
           "(sites task, comm_alloc, comm_post, device_open, device_copy, task_skip, host_pin, "
           "device_fail: the N-th task completion on an accelerator reports an error and the "
           "device stays broken, span_alloc, refusal_note, device_land, recover, redux_alloc, "
           "mpi_coll, event_record, emu_shm, task_keep, device_alloc, ptg_walk; e.g. "
           "task:gemm:3@1; "
           "docs/SEMANTICS.md section 3)"),
    INT("trace_buffer_events", "1048576", 1, 268435456,
        "slices kept per trace track (worker, stream, comm); later ones are dropped with a "
        "warning"),
};

const int weft_param_count = (int)(sizeof weft_param_table / sizeof weft_param_table[0]);
