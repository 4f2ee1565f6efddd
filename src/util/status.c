/* weft_strerror: one message per status code. */
#include "weft/weft.h"

const char *weft_strerror(int status)
{
    switch (status) {
    case WEFT_SUCCESS:
        return "success";
    case WEFT_AGAIN:
        return "in progress";
    case WEFT_ERR_INVALID:
        return "invalid argument";
    case WEFT_ERR_NOMEM:
        return "out of host memory";
    case WEFT_ERR_PARAM:
        return "unknown parameter or malformed value";
    case WEFT_ERR_NODEV:
        return "requested device is absent";
    case WEFT_ERR_DEVMEM:
        return "out of device memory";
    case WEFT_ERR_MPI:
        return "MPI error";
    case WEFT_ERR_UNSUPPORTED:
        return "operation not supported";
    case WEFT_ERR_MISMATCH:
        return "the ranks diverged: different task sequences, data creations or program points "
               "(each rank logged which)";
    case WEFT_ERR_TASK:
        return "a task failed (its body, its device or a transfer of its data)";
    case WEFT_ERR_INTERNAL:
        return "internal error";
    case WEFT_ERR_CANCELLED:
        return "cancelled: a task it depends on failed";
    case WEFT_ERR_DEVICE:
        return "a device failed: its later operations fail, the versions only it held are lost";
    default:
        return "unknown status";
    }
}
