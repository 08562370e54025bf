"""Loading burn-in resources from files, folders or stdin into typed objects.

Every document becomes a model instance (see :mod:`glimmer.api.kinds`). Every problem becomes an
:class:`~glimmer.errors.InputError` naming the file, the document number, the object, the field
path and its line; all problems of one call are gathered, not just the first.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

from pydantic import BaseModel, ValidationError

from glimmer.api.budget import budget, decode_utf8, over_budget, read_bounded, read_text
from glimmer.api.explain import explain
from glimmer.api.fleet_load import validate_document
from glimmer.api.fleet_parts import API_VERSION as FLEET_API_VERSION
from glimmer.api.kinds import known_api_versions, known_kinds, model_for
from glimmer.api.source import Document, looks_like_json, parse
from glimmer.errors import InputError, InputErrors, Location

M = TypeVar("M", bound=BaseModel)

STDIN = "-"
STDIN_NAME = "<stdin>"
SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class Loaded:
    """One typed object and where it came from."""

    obj: BaseModel
    source: str  # file path as given (or "<stdin>")
    document: int  # 1-based number of the document in its file
    kind: str
    name: str
    lines: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)

    @property
    def ref(self) -> str:
        """``Kind/name`` of the object."""
        return f"{self.kind}/{self.name}"

    def line_of(self, path: str = "") -> int | None:
        """The line of a field path, or of its nearest written ancestor."""
        while True:
            if path in self.lines:
                return self.lines[path]
            if not path:
                return None
            path = _parent(path)

    def locate(self, path: str | None = None) -> Location:
        """A Location for an error about this object (and optionally one of its fields)."""
        return Location(
            file=self.source,
            document=self.document,
            obj=self.ref,
            field=path or None,
            line=self.line_of(path or ""),
        )


_TYPE_WORDS = {str: "string", int: "number", float: "number", bool: "boolean"}


def _parent(path: str) -> str:
    cut = max(path.rfind("."), path.rfind("["))
    return path[:cut] if cut > 0 else ""


def _nearest_line(lines: Mapping[str, int], path: str) -> int | None:
    while True:
        if path in lines:
            return lines[path]
        if not path:
            return None
        path = _parent(path)


def _identity(data: dict[Any, Any]) -> tuple[str, str]:
    kind = data.get("kind")
    meta = data.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return (kind if isinstance(kind, str) else "?", name if isinstance(name, str) else "?")


def _model_of(data: dict[Any, Any], where: Location) -> type[BaseModel]:
    api_version, kind = data.get("apiVersion"), data.get("kind")
    for key, value in (("apiVersion", api_version), ("kind", kind)):
        if value is None:
            raise _at(where, key, f"{key} is missing")
        if not isinstance(value, str):
            raise _at(where, key, f"{key} must be a string")
    assert isinstance(api_version, str) and isinstance(kind, str)
    model = model_for(api_version, kind)
    if model is not None:
        return model
    if api_version not in (*known_api_versions(), FLEET_API_VERSION):
        known = ", ".join(sorted((*known_api_versions(), FLEET_API_VERSION)))
        raise _at(where, "apiVersion", f"unknown apiVersion {api_version!r} (known: {known})")
    known = "Fleet" if api_version == FLEET_API_VERSION else ", ".join(known_kinds(api_version))
    raise _at(where, "kind", f"unknown kind {kind!r} in {api_version} (known: {known})")


def _at(
    where: Location, path: str, message: str, lines: Mapping[str, int] | None = None
) -> InputError:
    loc = Location(where.file, where.document, where.obj, path or None, where.line)
    if lines is not None:
        loc.line = _nearest_line(lines, path)
    return InputError(message, loc)


def _load_document(doc: Document, source: str) -> Loaded | list[InputError]:
    where = Location(file=source, document=doc.number, line=doc.line)
    if not isinstance(doc.data, dict):
        what = (
            "a list"
            if isinstance(doc.data, list)
            else f"a {_TYPE_WORDS.get(type(doc.data), 'value')}"
        )
        return [
            InputError(
                f"a document must be a mapping with apiVersion, kind and metadata, not {what}",
                where,
            )
        ]
    kind, name = _identity(doc.data)
    where.obj = f"{kind}/{name}"
    if (doc.data.get("apiVersion"), kind) == (FLEET_API_VERSION, "Fleet"):
        # A Fleet is glimmer's own kind with its own loader rules (whole integers, explicit
        # operating assumptions, the spec's wording); it loads here so that every command
        # reading resource files reads it too.
        try:
            fleet = validate_document(doc, source)
        except InputErrors as e:
            return e.errors
        return Loaded(fleet.fleet, source, doc.number, kind, name, doc.lines)
    try:
        where.line = None
        model = _model_of(doc.data, where)
        obj = model.model_validate(doc.data)
    except InputError as e:
        e.location.line = _nearest_line(doc.lines, e.location.field or "")
        return [e]
    except ValidationError as e:
        return [_at(where, path, message, doc.lines) for path, message in explain(e)]
    return Loaded(obj, source, doc.number, kind, name, doc.lines)


def collect_text(
    text: str, source: str = STDIN_NAME, *, as_json: bool | None = None
) -> tuple[list[Loaded], list[InputError]]:
    """Load every document of one text; return the objects and the errors side by side."""
    loaded: list[Loaded] = []
    errors: list[InputError] = []
    try:
        # Every document is read before any is judged: a text that is not valid YAML/JSON
        # anywhere is one error (its syntax), not a list of complaints about its first part.
        docs = list(parse(text, source, as_json=as_json))
    except InputError as e:
        return [], [e]
    except RecursionError:
        return [], [InputError("the input is nested too deeply to read", Location(source))]
    for doc in docs:
        result = _load_document(doc, source)
        if isinstance(result, Loaded):
            loaded.append(result)
        else:
            errors.extend(result)
    return loaded, errors


def load_text(text: str, source: str = STDIN_NAME, *, as_json: bool | None = None) -> list[Loaded]:
    """Load every document of one text. Raises InputErrors listing every problem found."""
    loaded, errors = collect_text(text, source, as_json=as_json)
    if errors:
        raise InputErrors(errors)
    return loaded


def expand_paths(paths: Sequence[str]) -> Iterator[str]:
    """Files named, or found (recursively, sorted) under the folders named; ``-`` stays ``-``."""
    for given in paths:
        if given == STDIN:
            yield given
            continue
        path = Path(given)
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES
            )
            if not found:
                raise InputError(
                    f"no {'/'.join(SUFFIXES)} files under this folder", Location(given)
                )
            yield from (str(p) for p in found)
        elif path.exists():
            yield given
        else:
            raise InputError("no such file or folder", Location(given))


def _budget_kind(name: str) -> str:
    return "resource-json" if name.lower().endswith(".json") else "resource-yaml"


def _read(name: str, stdin: TextIO | None) -> str:
    """The text of one file (or stdin), refused before reading when over its byte budget."""
    if name == STDIN:
        stream = stdin or sys.stdin
        raw = getattr(stream, "buffer", None)
        if raw is not None:  # a real stdin: read bytes, bounded, then decode
            data = read_bounded(raw, budget("resource-json"), STDIN_NAME)
            text = decode_utf8(data, STDIN_NAME)
        else:
            text = stream.read(budget("resource-json").max_bytes + 1)
        if not looks_like_json(text):
            limit = budget("resource-yaml")
            if len(text) > limit.max_bytes:
                raise over_budget(len(text), limit, STDIN_NAME)
        return text
    return read_text(name, _budget_kind(name))


def collect_paths(
    paths: Sequence[str], *, stdin: TextIO | None = None
) -> tuple[list[Loaded], list[InputError]]:
    """Load every document of every file, folder or ``-`` named; objects and errors side by side."""
    loaded: list[Loaded] = []
    errors: list[InputError] = []
    for given in paths:
        try:
            names = list(expand_paths([given]))
        except InputError as e:
            errors.append(e)
            continue
        for name in names:
            try:
                text = _read(name, stdin)
            except InputError as e:
                errors.append(e)
                continue
            source = STDIN_NAME if name == STDIN else name
            as_json = True if name.lower().endswith(".json") else None
            objs, errs = collect_text(text, source, as_json=as_json)
            loaded.extend(objs)
            errors.extend(errs)
    return loaded, errors


def silent_files(
    paths: Sequence[str], loaded: Sequence[Loaded], errors: Sequence[InputError]
) -> list[InputError]:
    """A refusal for every file named that held no document at all (empty, comments only): a
    check of nothing must not read as a clean bill."""
    spoke = {item.source for item in loaded} | {e.location.file for e in errors}
    out = []
    for given in paths:
        try:
            names = list(expand_paths([given]))
        except InputError:
            continue  # already among the errors
        for name in names:
            source = STDIN_NAME if name == STDIN else name
            if source not in spoke:
                msg = "holds no glimmer resource (no document at all: empty or comments only)"
                out.append(InputError(msg, Location(file=source)))
    return out


def load_paths(paths: Sequence[str], *, stdin: TextIO | None = None) -> list[Loaded]:
    """Load every document of every file, folder or ``-`` named, in order.

    Raises InputErrors listing every problem of every file (valid objects are not returned then;
    use :func:`collect_paths` to keep both).
    """
    loaded, errors = collect_paths(paths, stdin=stdin)
    if errors:
        raise InputErrors(errors)
    return loaded


def of_kind(loaded: Sequence[Loaded], model: type[M]) -> list[tuple[M, Loaded]]:
    """The loaded objects of one model class, each with where it came from, in load order."""
    return [(item.obj, item) for item in loaded if isinstance(item.obj, model)]
