/* Everything a non-checking cuda-emu module includes before and after the kernels, in one
 * header so that g++ can precompile it (emu_build.py keeps a .gch per flag set in the
 * cache): parsing these headers is most of a small module's compile time. */
#ifndef CINN_EMU_PCH_H
#define CINN_EMU_PCH_H
#include "cinn_emu.h"
#include "cinn_emu_scheduler.h"
#endif /* CINN_EMU_PCH_H */
