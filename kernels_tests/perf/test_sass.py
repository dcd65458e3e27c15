"""SASS read into instructions: the main path, loop trips, load / store widths and bytes in
flight, on SASS as `cuobjdump -sass` prints it (golden text, no tools needed)."""

from __future__ import annotations

from cinn_py.perf.sass import analyze, main_path, parse_sass

# A load, a counted loop, an IEEE divide's slow-path call, stores, the closing
# self-branch and padding, and the called subroutine after them.
KERNEL = """
	code for sm_90
	.target	sm_90

		Function : fn_test
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                              /* 0x00000a00ff017b82 */
                                                                                       /* 0x000fe20000000800 */
        /*0010*/                   S2R R0, SR_TID.X ;                                  /* 0x0000000000007919 */
                                                                                       /* 0x000e220000002100 */
        /*0020*/                   ULDC.64 UR4, c[0x0][0x208] ;                        /* 0x0000820000047ab9 */
                                                                                       /* 0x000fe20000000a00 */
        /*0030*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;           /* 0x0000000402047981 */
                                                                                       /* 0x000ea2000c1e9d00 */
        /*0040*/                   LDG.E.U16.CONSTANT R8, desc[UR4][R2.64+0x10] ;      /* 0x0000100402087981 */
                                                                                       /* 0x000ea2000c1e9500 */
        /*0050*/                   HFMA2.MMA R10, -RZ, RZ, 0, 0 ;                      /* 0x00000000ff0a7435 */
                                                                                       /* 0x000fe200000001ff */
        /*0060*/                   FADD R9, R4, R5 ;                                   /* 0x0000000504097221 */
                                                                                       /* 0x004fe20000000000 */
        /*0070*/                   LDG.E.CONSTANT R11, desc[UR4][R2.64+0x20] ;         /* 0x00002004020b7981 */
                                                                                       /* 0x000ea2000c1e9900 */
        /*0080*/                   IADD3 R10, R10, 0x1, RZ ;                           /* 0x000000010a0a7810 */
                                                                                       /* 0x000fe20007ffe0ff */
        /*0090*/                   FADD R9, R9, R11 ;                                  /* 0x0000000b09097221 */
                                                                                       /* 0x004fe20000000000 */
        /*00a0*/                   ISETP.NE.AND P0, PT, R10, 0x8, PT ;                 /* 0x000000080a00780c */
                                                                                       /* 0x000fda0003f05270 */
        /*00b0*/               @P0 BRA 0x70 ;                                          /* 0xffffffb000000947 */
                                                                                       /* 0x000fea000383ffff */
        /*00c0*/                   MUFU.RCP R12, R9 ;                                  /* 0x00000009000c7308 */
                                                                                       /* 0x000e300000001000 */
        /*00d0*/                   FCHK P0, R8, R9 ;                                   /* 0x0000000908007302 */
                                                                                       /* 0x000e620000000000 */
        /*00e0*/              @!P0 BRA 0x110 ;                                         /* 0x0000000000088947 */
                                                                                       /* 0x002fec0003800000 */
        /*00f0*/                   MOV R13, 0x110 ;                                    /* 0x00000110000d7802 */
                                                                                       /* 0x000fce0000000f00 */
        /*0100*/                   CALL.REL.NOINC 0x160 ;                              /* 0x0000000000147944 */
                                                                                       /* 0x000fea0003c00000 */
        /*0110*/                   STG.E.128 desc[UR4][R2.64], R4 ;                    /* 0x0000000402007986 */
                                                                                       /* 0x000fe2000c101d04 */
        /*0120*/                   STG.E desc[UR4][R2.64+0x10], R12 ;                  /* 0x0000100c02007986 */
                                                                                       /* 0x000fe2000c101904 */
        /*0130*/                   EXIT ;                                              /* 0x000000000000794d */
                                                                                       /* 0x000fea0003800000 */
        /*0140*/                   BRA 0x140;                                          /* 0xfffffffc00fc7947 */
                                                                                       /* 0x000fc0000383ffff */
        /*0150*/                   NOP;                                                /* 0x0000000000007918 */
                                                                                       /* 0x000fc00000000000 */
        /*0160*/                   FFMA R12, R8, R9, RZ ;                              /* 0x00000009080c7223 */
                                                                                       /* 0x000fc800000000ff */
        /*0170*/                   RET.REL.NODEC R13 0x0 ;                             /* 0xfffffffc0da07950 */
                                                                                       /* 0x000fea0003c3ffff */
        /*0180*/                   BRA 0x180;                                          /* 0xfffffffc00fc7947 */
                                                                                       /* 0x000fc0000383ffff */
		..........
"""


def test_parses_every_instruction_with_predicate_opcode_and_operands():
    (function,) = parse_sass(KERNEL).values()
    assert function.name == "fn_test"
    assert len(function.instructions) == 25
    load = function.instructions[3]
    assert (load.address, load.opcode, load.base) == (0x30, "LDG.E.128.CONSTANT", "LDG")
    assert load.operands == ("R4", "desc[UR4][R2.64]")
    assert (load.memory, load.width) == ("load", 16)
    branch = function.instructions[11]
    assert (branch.predicate, branch.opcode, branch.operands) == ("@P0", "BRA", ("0x70",))


def test_main_path_skips_the_slow_path_call_the_subroutine_and_the_padding():
    (function,) = parse_sass(KERNEL).values()
    addresses = [i.address for i in main_path(function)]
    assert addresses == [*range(0, 0xF0, 0x10), 0x110, 0x120, 0x130]


def test_counts_instructions_loops_widths_and_bytes_in_flight():
    (function,) = parse_sass(KERNEL).values()
    stats = analyze(function)
    (loop,) = stats.loops
    assert (loop.start, loop.end, loop.trips, loop.how) == (0x70, 0xB0, 8, "counter")
    assert stats.instructions == 7 + 5 * 8 + 3 + 3
    assert stats.static_instructions == 22
    assert dict(stats.loads) == {16: 1, 2: 1, 4: 8}
    assert dict(stats.stores) == {16: 1, 4: 1}
    assert (stats.load_bytes, stats.store_bytes) == (16 + 2 + 32, 20)
    assert stats.inflight_bytes == 18  # the 16- and 2-byte loads, before the FADD uses one
    assert stats.local_bytes == 0


LABELLED = """
		Function : fn_labels
        /*0000*/                   MOV R0, RZ ;
.L_x_0:
        /*0010*/                   IADD3 R0, R0, 0x2, RZ ;
        /*0020*/                   ISETP.NE.AND P0, PT, R0, 0x10, PT ;
        /*0030*/               @P0 BRA `(.L_x_0) ;
        /*0040*/                   EXIT ;
.L_x_1:
        /*0050*/                   BRA `(.L_x_1);
"""


def test_branch_labels_become_addresses():
    stats = analyze(parse_sass(LABELLED)["fn_labels"])
    assert [(loop.start, loop.trips) for loop in stats.loops] == [(0x10, 8)]
    assert stats.instructions == 1 + 3 * 8 + 1


# A uniform counter tested before its step, leaving by a predicated EXIT, with the
# branch back unconditional (ptxas's shape for a loop whose last pass is cut short).
EXIT_LOOP = """
		Function : fn_exit
        /*0000*/                   UMOV UR8, 0x2000 ;
        /*0010*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0020*/                   UISETP.NE.AND UP0, UPT, UR8, 0x1a000, UPT ;
        /*0030*/                   PLOP3.LUT P0, PT, PT, PT, UP0, 0x80, 0x0 ;
        /*0040*/                   STG.E.128 desc[UR4][R2.64], R4 ;
        /*0050*/              @!P0 EXIT ;
        /*0060*/                   UIADD3 UR8, UR8, 0x4000, URZ ;
        /*0070*/                   BRA 0x10 ;
        /*0080*/                   BRA 0x80;
"""


def test_a_loop_that_exits_from_its_middle_counts_its_passes():
    stats = analyze(parse_sass(EXIT_LOOP)["fn_exit"])
    (loop,) = stats.loops
    assert (loop.trips, loop.how) == (7, "counter")  # 0x2000, 0x6000, ..., 0x1a000
    assert stats.instructions == 1 + 7 * 7
    assert dict(stats.loads) == {16: 7} and dict(stats.stores) == {16: 7}


# A loop compared with a register: no counter to read.
POINTER_LOOP = """
		Function : fn_pointer
        /*0000*/                   LDG.E R4, desc[UR4][R2.64] ;
        /*0010*/                   LDG.E R5, desc[UR4][R2.64+0x400] ;
        /*0020*/                   IADD3 R2, P1, R2, 0x800, RZ ;
        /*0030*/                   ISETP.NE.AND P0, PT, R2, R7, PT ;
        /*0040*/                   FADD R4, R4, R5 ;
        /*0050*/               @P0 BRA 0x10 ;
        /*0060*/                   STG.E desc[UR4][R8.64], R4 ;
        /*0070*/                   EXIT ;
"""


def test_loops_without_a_counter_are_sized_by_the_bytes_a_thread_loads():
    function = parse_sass(POINTER_LOOP)["fn_pointer"]
    unknown = analyze(function)
    assert [(loop.trips, loop.how) for loop in unknown.loops] == [(1, "unknown")]
    sized = analyze(function, load_bytes_per_thread=4 + 4 * 10)
    assert [(loop.trips, loop.how) for loop in sized.loops] == [(10, "loads")]
    assert sized.instructions == 1 + 5 * 10 + 2
    assert dict(sized.loads) == {4: 11}


def test_functions_are_told_apart():
    both = parse_sass(KERNEL + LABELLED)
    assert list(both) == ["fn_test", "fn_labels"]
    assert len(both["fn_labels"].instructions) == 6


LANE_ZERO = """
		Function : fn_lane_zero
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   S2R R1, SR_TID.Y ;
        /*0020*/                   STG.E desc[UR4][R2.64], R4 ;
        /*0030*/                   ISETP.NE.AND P1, PT, R1, RZ, PT ;
        /*0040*/              @!P1 STG.E.128 desc[UR4][R2.64], R4 ;
        /*0050*/                   ISETP.GE.U32.AND P2, PT, R0, 0x1, PT ;
        /*0060*/               @P2 BRA 0x80 ;
        /*0070*/                   STG.E.64 desc[UR4][R2.64], R4 ;
        /*0080*/                   ISETP.NE.AND P0, PT, R0, RZ, PT ;
        /*0090*/               @P0 EXIT ;
        /*00a0*/                   STG.E desc[UR4][R2.64], R4 ;
        /*00b0*/                   EXIT ;
        /*00c0*/                   BRA 0xc0;
"""


def test_stores_only_lane_zero_makes_are_told_apart():
    """A store predicated on threadIdx.y == 0, one a branch on threadIdx.x >= 1 skips,
    and one after the exit of the threads with threadIdx.x != 0 (the schedule's
    `if (threadIdx.x < 1)`) are lane-zero stores; the first store is every thread's."""
    (function,) = parse_sass(LANE_ZERO).values()
    stats = analyze(function)
    assert dict(stats.stores) == {4: 1}
    assert dict(stats.lane_stores) == {("y", 16): 1, ("x", 8): 1, ("x", 4): 1}
    assert (stats.lane_store_bytes("x"), stats.lane_store_bytes("y")) == (12, 16)


# A persistent grid's row guard: a forward branch over the whole row, which holds the
# divide's slow-path call and the row's load and store. Only the call's own region is
# the slow path; the row is the common case.
GUARDED_ROW = """
		Function : fn_guard
        /*0000*/                   ISETP.GE.AND P1, PT, R0, 0x1000, PT ;
        /*0010*/               @P1 BRA 0x90 ;
        /*0020*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0030*/                   FCHK P0, R4, R5 ;
        /*0040*/              @!P0 BRA 0x70 ;
        /*0050*/                   MOV R13, 0x70 ;
        /*0060*/                   CALL.REL.NOINC 0xb0 ;
        /*0070*/                   STG.E.128 desc[UR4][R2.64], R4 ;
        /*0080*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0090*/                   EXIT ;
        /*00a0*/                   BRA 0xa0;
        /*00b0*/                   FFMA R12, R8, R9, RZ ;
        /*00c0*/                   RET.REL.NODEC R13 0x0 ;
"""


def test_a_guard_around_a_whole_row_is_not_a_slow_path():
    (function,) = parse_sass(GUARDED_ROW).values()
    addresses = [i.address for i in main_path(function)]
    assert addresses == [0x0, 0x10, 0x20, 0x30, 0x40, 0x70, 0x80, 0x90]
    stats = analyze(function)
    assert (stats.load_bytes, stats.store_bytes) == (16, 16)
