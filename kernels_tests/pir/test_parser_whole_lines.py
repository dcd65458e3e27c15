"""The parser's two readers agree, and its time grows with the text, not faster.

An op on a line as the printer writes it is read whole (`_Parser._read_printed_op`,
each distinct attribute block, `key:value` and type list read once by the token
reader); any other line, and every error, token by token. Both must give the same
Program (ops, attributes and types as the same uniqued objects, value numbers, lines,
style) and the same errors at the same positions: checked on the samples here (the
spellings that would tell them apart), the generated multi-layer models, every fixture
program and mutated texts.
"""

from __future__ import annotations

import time
from glob import glob
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cinn_py.errors import ParseError
from cinn_py.pir.parser import MAX_NESTING, _Parser, parse_program
from cinn_py.pir.printer import print_program
from cinn_py.pir.program import Program, TextStyle
from kernels_tests.tool_modules import load_tool

FIXTURES = Path(__file__).parent.parent / "fixtures"
TINY = {"batch": 1, "seq": 8, "hidden": 32, "heads": 2}
T = "tensor<4x8xf32>"
DATA_X = (
    '(%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4,8],'
    f"stop_gradient:[true]}} : () -> {T}"
)

gen_big_model = load_tool("gen_big_model")


def lines(*ops: str, indent: str = "    ") -> str:
    return "\n".join(["{", *(indent + op for op in ops), "}", ""])


SAMPLES = {
    "paddle_3": lines(
        DATA_X,
        '(%1) = "pd_op.data" () {dtype:float32,name:"a\\"b,}",place:Place(gpu:0),'
        "shape:[-1,8],stop_gradient:[true]} : () -> tensor<-1x8xf32>",
        '(%2) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],'
        "value:-nan} : () -> tensor<1xf32>",
        '(%3) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],'
        "value:-0} : () -> tensor<1xf32>",
        '(%4) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[1],stop_gradient:[true],'
        "value:1e+20} : () -> tensor<1xi64>",
        f'(%5) = "pd_op.relu" (%0) {{stop_gradient:[true]}} : ({T}) -> {T}',
        f'(%6) = "builtin.combine" (%0, %5) {{}} : ({T}, {T}) -> vec[{T},{T}]',
        f'(%7, %8) = "my.op" (%5, <<NULL VALUE>>) {{a:[[1,2],[3]],b:["x","y"],c:5000000000,'
        f"d:NHWC,e:f16,f:{T}}} : ({T}, <<NULL TYPE>>) -> {T}, <<NULL TYPE>>",
        f'() = "builtin.shadow_output" (%7) {{output_name:"out"}} : ({T}) -> ',
    ),
    "typed": lines(
        '(%0) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),'
        "shape:(pd_op.IntArray)[4,8],value:(Double)2} : () -> pd_op.tensor<4x8xf32>",
        '(%1) = "pd_op.scale" (%0) {bias:(Float)0,bias_after_scale:true,scale:(Float)1} : '
        "(pd_op.tensor<4x8xf32>) -> pd_op.tensor<4x8xf32>",
        '(%2) = "my.op" (%1) {a:[(Int64)1,(Int32)2],b:(pd_op.DataLayout)NCHW} : '
        "(pd_op.tensor<4x8xf32>) -> pd_op.tensor<4x8xf32>",
        indent=" ",
    ),
    # the style is the first line's: an untyped line, then typed ones with two prefixes
    "mixed_style": lines(
        DATA_X,
        f'(%1) = "my.op" (%0) {{a:(Int64)5}} : ({T}) -> builtin.tensor<4x8xf32>',
        f'(%2) = "my.op" (%1) {{}} : ({T}) -> pd_op.tensor<4x8xf32>',
    ),
    "regions": lines(
        DATA_X,
        f'(%3, %4) = "cinn_op.group" () {{group_name:"g",kind:"fused"}} -> {T}, {T} {{',
        f'    (%1) = "pd_op.relu" (%0) {{}} : ({T}) -> {T}',
        f'    (%2) = "pd_op.exp" (%1) {{}} : ({T}) -> {T}',
        f'    () = "cf.yield" (%1, %2) {{}} : ({T}, {T}) -> ',
        "}",
        f'(%5) = "pd_op.add" (%3, %4) {{}} : ({T}, {T}) -> {T}',
    ),
    # what a line's end does not end: result types go on after a comma on the next line,
    # an empty result list takes the types on the next line, two ops share a line
    "types_on_the_next_line": lines(
        DATA_X,
        f'(%1, %2) = "my.op" (%0) {{}} : ({T}) -> {T}\n    , {T}',
        f'(%3) = "my.op" (%0) {{}} : ({T}) -> \n    {T}',
        f'() = "my.op" (%0) {{}} : ({T}) -> (%5) = "my.op" (%0) {{}} : ({T}) -> {T}',
    ),
    "one_type_then_another_on_the_next_line": lines(
        DATA_X, f'(%1) = "my.op" (%0) {{}} : ({T}) -> {T}\n    , {T}'
    ),
    "no_type_then_one_on_the_next_line": lines(
        DATA_X, f'() = "my.op" (%0) {{}} : ({T}) -> \n    {T}'
    ),
    "odd_spacing_and_crlf": lines(
        DATA_X,
        f'(%1) = "pd_op.relu" (%0) {{ }} : ( {T} ) -> {T}  ',
        f'(%2) = "pd_op.relu"(%1) {{}} : ({T}) -> {T}\r',
        f'(%3) =\t"pd_op.relu" (%2) {{}} : ({T}) -> {T}',
    ),
    "no_closing_brace": "{\n" + f"    {DATA_X}   ",
    "undefined_operand": lines(DATA_X, f'(%1) = "pd_op.relu" (%9) {{}} : ({T}) -> {T}'),
    "defined_twice": lines(DATA_X, f'(%0) = "pd_op.relu" (%0) {{}} : ({T}) -> {T}'),
    "same_result_twice": lines(DATA_X, f'(%1, %1) = "my.op" (%0) {{}} : ({T}) -> {T}, {T}'),
    "duplicate_attribute": lines(DATA_X, f'(%1) = "my.op" (%0) {{a:1,a:2}} : ({T}) -> {T}'),
    "number_as_a_key": lines(DATA_X, f'(%1) = "my.op" (%0) {{nan:1}} : ({T}) -> {T}'),
    "bad_attribute": lines(DATA_X, f'(%1) = "pd_op.cast" (%0) {{dtype:NCHW}} : ({T}) -> {T}'),
    "operand_type_differs": lines(
        DATA_X, f'(%1) = "pd_op.relu" (%0) {{}} : (tensor<4xf32>) -> {T}'
    ),
    "result_count_differs": lines(DATA_X, f'(%1) = "pd_op.relu" (%0) {{}} : ({T}) -> {T}, {T}'),
    "bad_type": lines(DATA_X, f'(%1) = "pd_op.relu" (%0) {{}} : ({T}) -> tensor<4x8xq9>'),
    "trailing_text": lines(DATA_X, f'(%1) = "pd_op.relu" (%0) {{}} : ({T}) -> {T} junk'),
}

for depth in (MAX_NESTING, MAX_NESTING + 1):  # a region counts towards the nesting limit
    nested = "[" * depth + "1" + "]" * depth
    SAMPLES[f"list_nested_{depth}"] = lines(DATA_X, f'(%1) = "my.op" () {{a:{nested}}} : () -> {T}')
    SAMPLES[f"list_nested_{depth}_in_a_region"] = lines(
        '() = "cinn_op.group" () {} -> {',
        f'    (%1) = "my.op" () {{a:{nested[1:-1]}}} : () -> {T}',
        "}",
    )


def read(text: str, whole_lines: bool) -> Program | tuple:
    """The program, or the error as (message, line, col, source line)."""
    try:
        return _Parser(text, "t.pir", whole_lines=whole_lines).parse_program()
    except ParseError as error:
        return str(error), error.line, error.col, error.source_line


def facts(program: Program) -> tuple:
    """Everything a parse decides, types and attributes by identity (they are uniqued)."""
    ops = [
        (
            op.name,
            op.loc,
            [(r.id_hint, id(r.type)) for r in op.results],
            [None if v is None else v.id_hint for v in op.operand_values()],
            [(key, id(attribute)) for key, attribute in op.attributes.items()],
            [len(block) for region in op.regions for block in region.blocks],
        )
        for op in program.ops()
    ]
    return vars(program.text_style), program.source, ops


def assert_read_alike(text: str) -> Program | tuple:
    whole, by_tokens = read(text, True), read(text, False)
    if isinstance(whole, Program) and isinstance(by_tokens, Program):
        assert facts(whole) == facts(by_tokens)
    else:
        assert whole == by_tokens
    return whole


VALID = {"paddle_3", "typed", "regions", "mixed_style", "types_on_the_next_line"}
VALID |= {"odd_spacing_and_crlf"}
VALID |= {f"list_nested_{MAX_NESTING}", f"list_nested_{MAX_NESTING}_in_a_region"}


@pytest.mark.parametrize("name", list(SAMPLES))
def test_samples_read_alike(name):
    result = assert_read_alike(SAMPLES[name])
    assert isinstance(result, Program) == (name in VALID)
    if name in ("paddle_3", "typed", "regions"):
        assert print_program(result) == SAMPLES[name]


def test_whole_lines_are_read_whole():
    """The fast path is taken (not only correct): most lines of a model skip the lexer."""
    text = gen_big_model.program_text("llama", 2, **TINY)
    parser = _Parser(text, "t.pir")
    calls = []
    original = parser._parse_result_name
    parser._parse_result_name = lambda: calls.append(1) or original()
    parser.parse_program()
    assert calls == []


@pytest.mark.parametrize("kind", ["llama", "bert"])
def test_generated_model_round_trips_in_both_styles(kind):
    """print -> parse -> print gives the same text (the generator spells some floats
    with more digits than the printer), in Paddle 3.x's style and the typed one."""
    program = assert_read_alike(gen_big_model.program_text(kind, 3, **TINY))
    assert isinstance(program, Program) and len(program.block) > 150
    for style in (program.text_style, TextStyle(typed=True, tensor_prefix="pd_op", indent=2)):
        text = print_program(program, style)
        again = assert_read_alike(text)
        assert print_program(again) == text
        assert facts(again)[2] == facts(program)[2]


@pytest.mark.parametrize(
    "path",
    sorted(glob(str(FIXTURES / "programs" / "*" / "program.pir")))
    + sorted(glob(str(FIXTURES / "models" / "*" / "*.pir"))),
    ids=lambda p: str(Path(p).relative_to(FIXTURES)),
)
def test_fixture_programs_read_alike(path):
    assert isinstance(assert_read_alike(Path(path).read_text(encoding="utf-8")), Program)


def test_every_deleted_character_reads_alike():
    text = SAMPLES["paddle_3"]
    for cut in range(len(text)):
        assert_read_alike(text[:cut] + text[cut + 1 :])


@st.composite
def edited_texts(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from([SAMPLES["paddle_3"], SAMPLES["typed"], SAMPLES["regions"]]))
    characters = st.sampled_from(list('{}()[]<>,:=%"-.x019aefnt \n\t\\')) | st.characters()
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["delete", "insert", "replace"]))
        after = pos + 1 if edit != "insert" else pos
        text = text[:pos] + ("" if edit == "delete" else draw(characters)) + text[after:]
    return text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edited_texts())
def test_edited_texts_read_alike(text):
    assert_read_alike(text)


def test_parse_time_grows_linearly():
    """4 times the layers parse in under 6 times the time (best of 5 each: the machine
    may be busy); a parser that rescanned what it had read would take 16 times."""
    texts = {n: gen_big_model.program_text("llama", n, **TINY) for n in (2, 8)}
    best = {}
    for layers, text in texts.items():
        times = []
        for _ in range(5):
            start = time.perf_counter()
            parse_program(text)
            times.append(time.perf_counter() - start)
        best[layers] = min(times)
    assert best[8] < 6 * best[2], best
