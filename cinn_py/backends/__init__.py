"""Backends: CUDA C to something that runs.

`nvrtc` compiles CUDA C to a CUBIN for the GPU and `cuda_module` launches it;
`cuda_emu` compiles the very same source with g++ against emulation headers and runs
it on the CPU with CUDA's semantics. Both launch with the same arguments
(`kernel_args`) and share one on-disk cache (`cache`).
"""
