"""nbgrader's check of every cell's nbgrader metadata, with its schema checked once rather than before each cell.

nbgrader validates each cell with `jsonschema.validate`, which first checks
the schema itself: most of the step's time, about 60 ms of a grading
process per notebook (it runs twice per notebook). Here a cell of the
current schema version is held to the same schema by a validator built
once per process; any other cell, and every check after the schema's, is
nbgrader's own, with its own errors.
"""

from __future__ import annotations

import functools
import json
import traceback
from pathlib import Path

import jsonschema
import nbgrader.nbgraderformat
from nbformat import NotebookNode
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.nbgraderformat.common import BaseMetadataValidator
from nbgrader.preprocessors import CheckCellMetadata

SCHEMA_FOLDER = Path(nbgrader.nbgraderformat.__file__).parent


@functools.cache
def _schema_validator(version: int) -> jsonschema.protocols.Validator:
    """nbgrader's schema of `version`, checked once and made a validator."""
    schema = json.loads((SCHEMA_FOLDER / f"v{version}.json").read_text())
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


class _SchemaCheckedOnce(BaseMetadataValidator):
    """The schema step of nbgrader's cell check, for cells of the current version; nbgrader's for the rest."""

    def validate_cell(self, cell: NotebookNode) -> None:
        metadata = cell.metadata.get("nbgrader")
        if metadata is None or metadata.get("schema_version", 0) != self.schema_version:
            super().validate_cell(cell)
            return
        error = jsonschema.exceptions.best_match(_schema_validator(self.schema_version).iter_errors(metadata))
        if error is not None:
            raise error


# nbgrader's validator calls its base's `validate_cell` first: placed after it, this step is the one it calls.
class _QuickMetadataValidator(MetadataValidator, _SchemaCheckedOnce):
    pass


class QuickCheckCellMetadata(CheckCellMetadata):
    """nbgrader's CheckCellMetadata step, with the schema checked once per process; the same errors and log."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        try:
            _QuickMetadataValidator().validate_nb(nb)
        except ValidationError:
            self.log.error(traceback.format_exc())
            message = "Notebook failed to validate; the nbgrader metadata may be corrupted."
            self.log.error(message)
            raise ValidationError(message) from None
        return nb, resources
