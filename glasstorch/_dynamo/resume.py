"""``torch._dynamo.resume_execution``: continuing a function after a graph break.

A resume function is the original function's bytecode entered in the middle:
its parameters are the values that were on the stack at the break
(``___stack0``, ...) and the locals still to be read; a short prologue pushes
the stack values back and jumps to the instruction after the break.  It is
named as PyTorch names it, ``torch_dynamo_resume_in_<fn>_at_<line>``, and is
compiled like any other frame when it runs.  ``describe`` prints it as the
source lines it continues with, for people (the bytecode is for CPython).

The bytecode is assembled with the ``bytecode`` package, which handles each
Python version's jump encoding, exception table and line table.
"""
from __future__ import annotations

import dis
import inspect
import textwrap
import types

import bytecode as bc

from .variables import _NULL

_CACHE: dict = {}


def live_locals(code, offset: int) -> set:
    """Locals that may be read from ``offset`` on: every local loaded by an
    instruction reachable from there (following jumps)."""
    instructions = [i for i in dis.get_instructions(code) if i.opname != "EXTENDED_ARG"]
    index = {inst.offset: k for k, inst in enumerate(instructions)}
    seen, todo, names = set(), [index[offset]], set()
    while todo:
        k = todo.pop()
        if k in seen or k >= len(instructions):
            continue
        seen.add(k)
        inst = instructions[k]
        if inst.opname.startswith(("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "DELETE_FAST")):
            names.add(inst.argval)
        if inst.opcode in dis.hasjrel or inst.opcode in dis.hasjabs:
            todo.append(index[inst.argval])
        if inst.opname not in ("RETURN_VALUE", "RETURN_CONST", "JUMP_FORWARD", "JUMP_BACKWARD",
                               "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_ABSOLUTE", "RAISE_VARARGS",
                               "RERAISE"):
            todo.append(k + 1)
    return names & set(code.co_varnames)


def resume_function(fn, offset: int, lineno: int, stack: list, local_names: list):
    """The function continuing ``fn`` at ``offset`` with ``stack`` (values, NULLs
    marked) on the stack; called as ``resume(*non-NULL stack values, *locals)``."""
    nulls = tuple(v is _NULL for v in stack)
    key = (fn.__code__, offset, nulls, tuple(local_names))
    if key not in _CACHE:
        code = _resume_code(fn.__code__, offset, lineno, nulls, local_names)
        _CACHE[key] = code
    return types.FunctionType(_CACHE[key], fn.__globals__, _CACHE[key].co_name, None,
                              fn.__closure__)


def _resume_code(code, offset, lineno, nulls, local_names):
    name = f"torch_dynamo_resume_in_{code.co_name}_at_{lineno}"
    stack_names = [f"___stack{i}" for i, null in enumerate(nulls) if not null]
    real = [i for i in dis.get_instructions(code) if i.opname not in ("EXTENDED_ARG", "CACHE")]
    position = next(k for k, inst in enumerate(real) if inst.offset == offset)
    program = bc.Bytecode.from_code(code)
    target = bc.Label()
    seen, insert_at, prologue_end = 0, None, 0
    for k, item in enumerate(program):
        if isinstance(item, bc.Instr):
            if item.name == "RESUME" and prologue_end == 0:
                prologue_end = k + 1
            if seen == position:
                insert_at = k
                break
            seen += 1
    program.insert(insert_at, target)
    prologue = []
    names = iter(stack_names)
    for null in nulls:
        prologue.append(bc.Instr("PUSH_NULL") if null else bc.Instr("LOAD_FAST", next(names)))
    prologue.append(bc.Instr("JUMP_FORWARD", target))
    program[prologue_end:prologue_end] = prologue
    program.name = name
    program.first_lineno = lineno          # the recompile log's "in file:line", as PyTorch's
    if hasattr(program, "qualname"):
        program.qualname = name
    program.argnames = stack_names + list(local_names)
    program.argcount = len(program.argnames)
    program.posonlyargcount = program.kwonlyargcount = 0
    program.flags &= ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    return program.to_code()


def describe(fn, lineno: int, stack_depth: int, local_names: list) -> str:
    """The resume function as people read it: its signature, then the source
    lines of ``fn`` it continues with."""
    params = [f"___stack{i}" for i in range(stack_depth)] + list(local_names)
    head = f"def torch_dynamo_resume_in_{fn.__code__.co_name}_at_{lineno}({', '.join(params)}):"
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return head + f"\n    # continues {fn.__qualname__} after line {lineno}"
    rest = textwrap.dedent("".join(lines[lineno - first + 1:]))
    body = [f"    # continues {fn.__qualname__} after line {lineno}, the break"]
    body += [f"    {line}" for line in rest.rstrip().splitlines()]
    return "\n".join([head, *body])
