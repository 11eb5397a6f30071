"""A plain-text table for the terminal: columns padded to their widest cell, a rule under the header.

A cell wider than the cap wraps onto continuation lines of its row, so a long list of diagnoses
keeps every word without stretching the table past a terminal's width.
"""

import textwrap

COLUMN_CAP = 60


def text_table(header: list[str], rows: list[list[str]], cap: int = COLUMN_CAP) -> str:
    top, *body = [[wrap_cell(cell, cap) for cell in row] for row in [header, *rows]]
    widths = [max(len(piece) for row in [top, *body] for piece in row[i]) for i in range(len(header))]
    rule = "  ".join("-" * w for w in widths)
    return "\n".join([*row_lines(top, widths), rule, *(line for row in body for line in row_lines(row, widths))])


def wrap_cell(cell: str, cap: int) -> list[str]:
    """The cell's pieces, each at most `cap` wide; hyphenated names (misconception ids) break only if longer."""
    return textwrap.wrap(cell, cap, break_on_hyphens=False) or [""]


def row_lines(row: list[list[str]], widths: list[int]) -> list[str]:
    """One line per piece of the row's tallest cell; a shorter cell leaves its column blank below."""
    height = max(len(pieces) for pieces in row)
    return [
        "  ".join((pieces[n] if n < len(pieces) else "").ljust(w) for pieces, w in zip(row, widths)).rstrip()
        for n in range(height)
    ]
