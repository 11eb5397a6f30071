"""What a diagnosis tells the student to do, and whether that leads into another catalogued mistake.

A diagnosis reads as what went wrong, then what to do ("...: pass it the cotangent vjp was given,
as y.backward(v)"). Its advice is the clauses that open with an imperative verb. A catalog entry
may state, under `does`, the phrases of advice that would lead a student into its mistake ("reduce
the output", ".sum()"); the consistency rule refuses a diagnosis of a notebook whose advice holds
such a phrase of another misconception that notebook tests.
"""

from __future__ import annotations

import ast
import dataclasses
import re

# Verbs a diagnosis opens its advice with. A clause that opens with none of them states a fact.
IMPERATIVES = frozenset(
    """
    add apply ask average build call cast catch change check choose clear clone compare compile compute convert
    copy count create cut decide define derive detach differentiate divide do draw fill find follow give
    index inspect keep leave let log look make mark mask move multiply pass push put raise re-raise read record reduce
    register remove replace report reset return run save scale score seed select set start stop store sum
    switch take test time treat turn update use weight work wrap write zero
    """.split()
)
# Clause openers that only say what not to do: advice, but never a recommendation.
NEGATIONS = ("do not ", "don't ", "never ", "avoid ")
# Words after which the rest of a clause is what the student should not do ("... instead of building J").
CONTRASTS = re.compile(r"\b(?:instead of|rather than|without|not|never|no longer)\b")
CLAUSE_BREAKS = re.compile(r"[:;.!?]\s|[:;.!?]$|,\s+(?:or|and|then)?\s*|\s+(?:or|and|then)\s+")
LEADING_FILLER = re.compile(r"^(?:so|first|instead|rather|here|now|please)[, ]+")


@dataclasses.dataclass(frozen=True)
class Diagnosis:
    """A text a student may be shown, with the misconception it names ("" when none) and where it is written."""

    text: str
    misconception: str
    where: str


def clauses(text: str) -> list[str]:
    """The text cut where a new instruction or statement may start, lowercased and trimmed."""
    pieces = (LEADING_FILLER.sub("", piece.strip().lower()) for piece in CLAUSE_BREAKS.split(text))
    return [piece for piece in pieces if piece]


def advice_of(text: str) -> list[str]:
    """The clauses of `text` that tell the student what to do, each cut before what it says not to do."""
    advice = []
    for clause in clauses(text):
        if clause.split(" ", 1)[0] not in IMPERATIVES:
            continue
        contrast = CONTRASTS.search(clause)
        advice.append(clause[: contrast.start()].strip() if contrast else clause)
    return advice


def says_what_to_do(text: str) -> bool:
    """True when some clause of `text` is an instruction, a prohibition included."""
    return any(c.split(" ", 1)[0] in IMPERATIVES or c.startswith(NEGATIONS) for c in clauses(text))


# Messages that only carry another message, written and held to the rule where it is written, with
# what the check found or what the student's code raised: fixed words, each with why it needs none.
CARRIERS = {
    "… (…)": "a message of an error table or a limit, followed by the error or the tensor the answer made",
    "…: shape … instead of …": "expect_close's caller's message, followed by the shapes it compared",
    "… (largest difference …)": "expect_close's caller's message, followed by the difference it found",
}


def carries_another(diagnosis: Diagnosis) -> bool:
    """True for a message that is another message with what was found (see CARRIERS)."""
    return diagnosis.text in CARRIERS


def recommended(text: str, phrases: tuple[str, ...]) -> list[str]:
    """The phrases (of a misconception's `does`) that the advice of `text` recommends."""
    advice = advice_of(text)
    return [phrase for phrase in phrases if any(phrase.lower() in clause for clause in advice)]


# Where a check call names a misconception: the id's position; the message sits just before it.
NAMING_CALLS = {"expect": 2, "expect_close": 3, "expect_within": 2, "Diagnosis": 1, "blaming_stand_ins": 1}
# Calls that word the shared errors (the public module's COMMON_ERRORS) unless given their own table.
ERROR_TABLE_CALLS = frozenset({"call_answer", "call_watched"})
ID_SHAPE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+){2,}$")


def diagnoses_in_code(source: str, where: str) -> tuple[list[Diagnosis], bool]:
    """The diagnoses a cell's code writes, and whether it leaves a call to the shared error table.

    A formatted message keeps its fixed words; each value it fills in reads as "…".
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [], False
    found: list[Diagnosis] = []
    shared = False
    for node in ast.walk(tree):
        found += _named_message(node, where) + _error_row(node, where)
        if isinstance(node, ast.Call) and _call_name(node) in ERROR_TABLE_CALLS:
            shared = shared or not any(k.arg == "known_errors" for k in node.keywords)
    return found, shared


def error_table(source: str, name: str, where: str) -> list[Diagnosis]:
    """The rows (substring, misconception, message) of the table assigned to `name` in `source`."""
    tree = ast.parse(source)
    rows = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            rows += [d for child in ast.walk(node.value) for d in _error_row(child, where)]
    return rows


def _call_name(node: ast.Call) -> str | None:
    return getattr(node.func, "id", getattr(node.func, "attr", None))


def _named_message(node, where: str) -> list[Diagnosis]:
    name = _call_name(node) if isinstance(node, ast.Call) else None
    if name is None or name not in NAMING_CALLS:
        return []
    position = NAMING_CALLS[name]
    named = node.args[position : position + 1] + [k.value for k in node.keywords if k.arg == "misconception"]
    message = node.args[position - 1 : position] + [k.value for k in node.keywords if k.arg == "message"]
    text = _words(message[0]) if message else None
    misconception = _words(named[0]) if named else ""
    return [Diagnosis(text, misconception or "", where)] if text else []


def _error_row(node, where: str) -> list[Diagnosis]:
    """A (substring, misconception, message) triple of an error table."""
    if not isinstance(node, ast.Tuple) or len(node.elts) != 3:
        return []
    words = [_words(e) for e in node.elts]
    if None in words or not ID_SHAPE.match(words[1] or ""):
        return []
    return [Diagnosis(words[2] or "", words[1] or "", where)]


def _words(node) -> str | None:
    """The fixed text of a string, an f-string (values as "…") or a sum of them; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else "…" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _words(node.left), _words(node.right)
        return None if left is None or right is None else left + right
    return None
