"""A graded cell's name: the grade id nbgrader keeps in the cell's metadata."""


def grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def cells_by_grade_id(notebook) -> dict:
    return {grade_id(cell): cell for cell in notebook.cells if grade_id(cell)}
