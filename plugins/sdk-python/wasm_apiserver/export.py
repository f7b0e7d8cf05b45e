"""The bridge between a :class:`~wasm_apiserver.strategy.Strategy` and the component's
``wasm-apiserver:strategy/strategy`` export (``wit/0.2.0/strategy.wit``): JSON text in and out,
WIT records built from the SDK's types, and the SDK's generic behaviour around the hooks.

The WIT bindings (``wit_world``) exist only inside ``componentize-py``'s build, so they are
imported when :func:`export` runs, not when this package is imported: the rest of the SDK
works in a plain CPython (tests).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Type

from . import field as _field
from .strategy import Rejected, ServedVersion, Strategy

_ERROR_TYPES = {
    _field.REQUIRED: "REQUIRED",
    _field.INVALID: "INVALID",
    _field.DUPLICATE: "DUPLICATE",
    _field.NOT_SUPPORTED: "NOT_SUPPORTED",
    _field.FORBIDDEN: "FORBIDDEN",
    _field.TOO_LONG: "TOO_LONG",
    _field.TOO_MANY: "TOO_MANY",
    _field.INTERNAL: "INTERNAL",
    _field.TYPE_INVALID: "TYPE_INVALID",
    _field.NOT_FOUND: "NOT_FOUND",
}


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _spec_changed(new: Dict[str, Any], old: Dict[str, Any]) -> bool:
    """Whether anything outside ``metadata`` and ``status`` differs (the CRD strategy's rule),
    as JSON values: ``1``, ``1.0`` and ``true`` differ, as they do for the Rust SDK (Python's
    ``==`` would call them equal)."""
    def rest(o: Dict[str, Any]) -> str:
        return json.dumps({k: v for k, v in o.items() if k not in ("metadata", "status")},
                          sort_keys=True)
    return rest(new) != rest(old)


def export(cls: Type[Strategy]):
    """The class ``componentize-py`` exports as the ``strategy`` interface, wrapping an
    instance of ``cls``. Bind it to the name ``Strategy`` in the app module::

        Strategy = wasm_apiserver.export(Widgets)
    """
    from componentize_py_types import Err  # type: ignore
    from wit_world import exports  # type: ignore
    from wit_world.imports import types  # type: ignore

    s = cls()

    def wit_errors(errs: List[_field.FieldError]) -> list:
        return [types.FieldError(getattr(types.ErrorType, _ERROR_TYPES[e.type]), e.field,
                                 _field.bad_value_json(e), e.detail) for e in errs]

    def parse(text: str) -> Dict[str, Any]:
        try:
            obj = json.loads(text)
        except ValueError as e:
            raise Err(types.HookError_BadRequest("malformed JSON: %s" % e))
        if not isinstance(obj, dict):
            raise Err(types.HookError_BadRequest("the object is not a JSON object"))
        return obj

    def run(hook, *objs):
        """The hook's result; a ``Rejected`` becomes the WIT ``hook-error``."""
        try:
            return hook(*objs)
        except Rejected as r:
            if r.errors:
                raise Err(types.HookError_Invalid(wit_errors(r.errors)))
            raise Err(types.HookError_BadRequest(r.message))

    def mutate(hook, *objs) -> str:
        run(hook, *objs)
        return _dumps(objs[0])

    def read(text: str):
        obj = json.loads(text)
        return obj if isinstance(obj, dict) else {}

    def prepare_for_create(obj: Dict[str, Any]) -> None:
        if s._has_status():
            obj.pop("status", None)
        if s.tracks_generation and isinstance(obj.get("metadata"), dict):
            obj["metadata"]["generation"] = 1
        s.prepare_for_create(obj)

    class Export(exports.Strategy):
        def describe(self):
            d = s._description()
            versions = d.versions or [ServedVersion(d.version, storage=True)]
            return types.ResourceDescription(
                group=d.group,
                versions=[types.ServedVersion(
                    v.name, v.served, v.storage, v.deprecated, v.deprecation_warning,
                    _dumps(d.openapi_schema if v.openapi_schema is None else v.openapi_schema),
                    [types.PrinterColumn(c.name, c.type, c.format, c.description, c.priority,
                                         c.json_path)
                     for c in (d.printer_columns if v.printer_columns is None else v.printer_columns)],
                    list(d.selectable_fields if v.selectable_fields is None else v.selectable_fields))
                    for v in versions],
                kind=d.kind, list_kind=d.list_kind,
                plural=d.plural, singular=d.singular, short_names=list(d.short_names),
                categories=list(d.categories), namespaced=d.namespaced,
                subresources=list(d.subresources),
                return_deleted_object=d.return_deleted_object,
                example=None if d.example is None else _dumps(d.example))

        def prepare_for_create(self, obj: str) -> str:
            return mutate(prepare_for_create, parse(obj))

        def validate(self, obj: str) -> list:
            return wit_errors(s.validate(read(obj)))

        def warnings_on_create(self, obj: str) -> List[str]:
            return list(s.warnings_on_create(read(obj)))

        def canonicalize(self, obj: str) -> str:
            return mutate(s.canonicalize, parse(obj))

        def create_sequence(self, obj: str):
            o = parse(obj)
            run(prepare_for_create, o)
            errs = s.validate(o)
            if errs:
                return types.CreateOutcome(_dumps(o), wit_errors(errs), [])
            warnings = list(s.warnings_on_create(o))
            return types.CreateOutcome(mutate(s.canonicalize, o), [], warnings)

        def allow_create_on_update(self) -> bool:
            return bool(s.allow_create_on_update())

        def allow_unconditional_update(self) -> bool:
            return bool(s.allow_unconditional_update())

        def prepare_for_update(self, new: str, old: str) -> str:
            n, o = parse(new), parse(old)
            if s._has_status():
                if "status" in o:
                    n["status"] = o["status"]
                else:
                    n.pop("status", None)
            run(s.prepare_for_update, n, o)
            if s.tracks_generation and _spec_changed(n, o) and isinstance(n.get("metadata"), dict):
                g = (o.get("metadata") or {}).get("generation")
                n["metadata"]["generation"] = (g if isinstance(g, int) and not isinstance(g, bool) else 0) + 1
            return _dumps(n)

        def validate_update(self, new: str, old: str) -> list:
            return wit_errors(s.validate_update(read(new), read(old)))

        def warnings_on_update(self, new: str, old: str) -> List[str]:
            return list(s.warnings_on_update(read(new), read(old)))

        def prepare_for_status_update(self, new: str, old: str) -> str:
            n, o = parse(new), parse(old)
            merged = parse(old)
            if "status" in n:
                merged["status"] = n["status"]
            else:
                merged.pop("status", None)
            managed = (n.get("metadata") or {}).get("managedFields")
            if managed is not None and isinstance(merged.get("metadata"), dict):
                merged["metadata"]["managedFields"] = managed
            return mutate(s.prepare_for_status_update, merged, o)

        def validate_status_update(self, new: str, old: str) -> list:
            return wit_errors(s.validate_status_update(read(new), read(old)))

        def warnings_on_status_update(self, new: str, old: str) -> List[str]:
            return list(s.warnings_on_status_update(read(new), read(old)))

        def check_graceful_delete(self, obj: str, requested):
            return s.check_graceful_delete(read(obj), requested)

        def validate_delete(self, old: str) -> list:
            return wit_errors(s.validate_delete(read(old)))

        def printer_cells(self, obj: str) -> List[str]:
            return [_dumps(c) for c in s.printer_cells(read(obj))]

        def get_attrs(self, obj: str):
            labels, fields = s.get_attrs(parse(obj))
            return types.Attributes(sorted(labels.items()), list(fields.items()))

        def convert(self, obj: str, desired_api_version: str) -> str:
            o = parse(obj)
            if o.get("apiVersion") == desired_api_version:
                return obj
            return _dumps(run(s.convert, o, desired_api_version))

    Export.__name__ = "Strategy"
    return Export


def log(level: str, message: str) -> None:
    """One line in the server's log, tagged with the plugin's name; ``level`` is ``trace``,
    ``debug``, ``info``, ``warn`` or ``error`` (an ``error`` line is quoted in the 500 of a
    call that then fails). Outside a component (tests) it prints to stderr."""
    try:
        from wit_world.imports import host  # type: ignore
    except ImportError:
        import sys
        print("[%s] %s" % (level, message), file=sys.stderr)
        return
    host.log(getattr(host.LogLevel, level.upper()), message)
