"""What both ways of computing share: a plan the LLM writes under a grammar, cached, and the arithmetic of a plan,
done by walking its `ast` (never `eval`)."""
from __future__ import annotations

import ast
import operator

OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
             ast.Pow: operator.pow}
COMPARISONS = {ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le}


def written_plan(runner, kind: str, version: str, instruction: str, system: str, message: str, grammar: str, *,
                 max_tokens: int, fresh: bool = False) -> str:
    """What the model writes after the instruction (its KV state kept under `kind`) for this message, held to the
    grammar and cut at the line's end; cached by model, version, instruction, message and grammar."""
    from localcr.cache import key, open_cache
    from localcr.llm import load_grammar

    entry_key = key(kind, runner.spec.fingerprint(), version, instruction, message, grammar)
    with open_cache("answers") as cache:
        written = None if fresh else cache.get(entry_key)
    if not isinstance(written, str):
        prefix, suffix = runner.render(instruction, message, system)
        runner.keep_prefix(prefix, "answers", kind.replace("-", " "), kind, version)
        written = runner.complete(prefix, suffix, max_tokens=max_tokens, stops=("\n",),
                                  grammar=load_grammar(grammar)).text.strip()
        with open_cache("answers") as cache:
            cache.set(entry_key, written, kind.replace("-", " "))
    return written


def evaluate(formula: str, values: dict[str, float]) -> float:
    """The formula's value with each name given its value: the arithmetic of `ast` nodes, never `eval`; a
    comparison is 1 where it holds and 0 where not, so that comparisons added up count (a count plan).
    ZeroDivisionError and OverflowError pass through."""
    def value(node) -> float:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant):
            return float(node.value)
        if isinstance(node, ast.Name):
            return values[node.id]
        if isinstance(node, ast.UnaryOp):
            return -value(node.operand) if isinstance(node.op, ast.USub) else value(node.operand)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARISONS:
            return float(COMPARISONS[type(node.ops[0])](value(node.left), value(node.comparators[0])))
        if isinstance(node, ast.BinOp):
            result = OPERATORS[type(node.op)](value(node.left), value(node.right))
            if isinstance(result, complex):
                raise ValueError("the formula takes a root of a negative number")
            return result
        raise ValueError(f"{type(node).__name__} is no arithmetic")

    return value(ast.parse(formula, mode="eval"))
