/* weft: what a task body may call (the weft_task_* accessors, its
 * device's stream and handles, its failure's words). Part of the public
 * API, included by weft/weft.h (include that one); the conventions of
 * weft/weft.h (handle checks, status values) apply. */
#ifndef WEFT_WEFT_BODY_H
#define WEFT_WEFT_BODY_H

#ifndef WEFT_WEFT_H
#error "include weft/weft.h, which includes this header"
#endif

/* Every accessor checks its index (always on): a flow or value index out
 * of range, or a value size that differs from the inserted one, logs an
 * error naming the task, the call and the index, returns NULL / 0 /
 * WEFT_ERR_INVALID (weft_task_type: WEFT_BYTE), and fails the task: its completion is an error
 * (weft_taskpool_wait returns WEFT_ERR_TASK, docs/SEMANTICS.md section 3)
 * even if the body returns 0. */

/* Pointer of data flow i (in insertion order of the data arguments) on the
 * device the task runs on, and its leading dimension in elements. */
WEFT_API void *weft_task_ptr(const weft_task_t *t, int flow);
WEFT_API int64_t weft_task_ld(const weft_task_t *t, int flow);
WEFT_API int weft_task_rows(const weft_task_t *t, int flow);
WEFT_API int weft_task_cols(const weft_task_t *t, int flow);
/* Element type of data flow i as the data was created, and the bytes of
 * one element (weft_dtype_size of it): a tile of struct elements made with
 * weft_dtype_struct(sizeof (struct s)) has rows x cols structs. */
WEFT_API weft_dtype_t weft_task_type(const weft_task_t *t, int flow);
WEFT_API size_t weft_task_elem_size(const weft_task_t *t, int flow);
/* Number of data flows and of value arguments of the task. */
WEFT_API int weft_task_nflows(const weft_task_t *t);
WEFT_API int weft_task_nvalues(const weft_task_t *t);
/* Bytes of value argument i as inserted (0 after the error above). */
WEFT_API size_t weft_task_value_size(const weft_task_t *t, int i);
/* Value argument i (in insertion order of the values) copied into out,
 * which holds `bytes`: WEFT_ERR_INVALID (and the task fails) when i is out
 * of range or bytes differs from the size given at insertion. */
WEFT_API WEFT_NODISCARD int weft_task_value_get(const weft_task_t *t, int i, void *out,
                                                size_t bytes);
/* Value argument i copied into out (as many bytes as were inserted);
 * nothing is copied, and the task fails, for an index out of range.
 * Prefer weft_task_value_get, which checks the size too. */
WEFT_API void weft_task_value(const weft_task_t *t, int i, void *out);
WEFT_API const weft_task_class_t *weft_task_class(const weft_task_t *t);
/* Device index on this rank (0 = host; -1 after the error for a NULL or
 * bad task) and, on an accelerator, its stream (cudaStream_t; hipStream_t)
 * and library handles (cublasHandle_t, cusolverDnHandle_t; NULL on HIP).
 * On the host all are NULL; on an emulated device the stream is weft's own
 * record of the emulated stream (non-NULL, nothing a body can pass to
 * CUDA: an emu body runs synchronously on the host) and the handles NULL. */
WEFT_API int weft_task_device(const weft_task_t *t);
WEFT_API void *weft_task_stream(const weft_task_t *t);
WEFT_API void *weft_task_blas_handle(const weft_task_t *t);
WEFT_API void *weft_task_solver_handle(const weft_task_t *t);
/* Scratch workspace on the task's device (cuSOLVER needs one); NULL when
 * bytes is 0 or exceeds what the device set aside (parameter
 * device_workspace), and always on the host (a CPU body has none). */
WEFT_API void *weft_task_workspace(const weft_task_t *t, size_t bytes);

/* Says why the task fails, in its own words: logs "task NAME #SEQ: TEXT"
 * (printf-style) as an error line of this rank. The first error line
 * logged while the task ran is its cause, which the failure line every
 * rank logs at the wait carries ("task potrf #12 returned -1 (...): not
 * positive definite at column 3");
 * a message the body printed itself reached its own rank's stderr only.
 * The task fails even if the body then returns 0 (its status then
 * WEFT_ERR_TASK, the line "task NAME #SEQ failed by weft_task_error (...):
 * TEXT"). A thread the body started (an OpenMP team's, a pthread of its
 * own) may call it while the body runs, as it may the accessors; the
 * thread that made the context outside a body is refused (logged, nothing
 * else: the task is gone once its body returned). A body naming another
 * task fails itself, said; but a task is valid only while its body runs:
 * weft may free an ended one at once and give its memory to the next task
 * made, so a pointer kept past its body may name any task, the caller's
 * own included. */
WEFT_API void weft_task_error(const weft_task_t *t, const char *fmt, ...) WEFT_PRINTF_LIKE(2, 3);

#endif /* WEFT_WEFT_BODY_H */
