/* What the library is: its version and the modules it was built with,
 * for a program that may meet a libweft other than the one its headers
 * came from (weft-info --version prints it). */
#include <stddef.h>

#include "weft/weft.h"

#define WEFT_STR_(x) #x
#define WEFT_STR(x) WEFT_STR_(x)

#if defined(WEFT_HAVE_CUDA)
#define WEFT_MOD_CUDA "cuda, "
#else
#define WEFT_MOD_CUDA ""
#endif
#if defined(WEFT_HAVE_NCCL)
#define WEFT_MOD_NCCL "nccl, "
#else
#define WEFT_MOD_NCCL ""
#endif
#if defined(WEFT_HAVE_HIP)
#define WEFT_MOD_HIP "hip, "
#else
#define WEFT_MOD_HIP ""
#endif
#if defined(WEFT_GPU_AWARE_COMM)
#define WEFT_MOD_AWARE "; gpu-aware comm"
#else
#define WEFT_MOD_AWARE "; no gpu-aware comm"
#endif

const char *weft_version(int *major, int *minor, int *patch)
{
    if (major) *major = WEFT_VERSION_MAJOR;
    if (minor) *minor = WEFT_VERSION_MINOR;
    if (patch) *patch = WEFT_VERSION_PATCH;
    /* The emulated device is always built: it is how every device path
     * runs without a GPU. */
    return "weft " WEFT_STR(WEFT_VERSION_MAJOR) "." WEFT_STR(WEFT_VERSION_MINOR) "." WEFT_STR(
        WEFT_VERSION_PATCH) " (" WEFT_MOD_CUDA WEFT_MOD_NCCL WEFT_MOD_HIP "emu" WEFT_MOD_AWARE ")";
}
