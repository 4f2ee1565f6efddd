/* Whether a shared library of that soname is in the process already
 * (dlopen RTLD_NOLOAD: a library loaded by path counts too, glibc matching
 * its DT_SONAME). For the tests of what loads cuBLAS and cuSOLVER when. */
#ifndef WEFT_TESTS_LOADED_LIB_H
#define WEFT_TESTS_LOADED_LIB_H

#include <dlfcn.h>

static inline int loaded_lib(const char *soname)
{
    void *so = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
    if (so != NULL) dlclose(so);
    return so != NULL;
}

#endif
