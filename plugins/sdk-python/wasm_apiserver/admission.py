"""Admission policies in Python: a component exporting ``wit/admission/0.1.0/admission.wit``
(world ``admission-plugin``), run in-process by the server for the requests it matches, as a
webhook would be. Subclass :class:`AdmissionPolicy`, write ``describe`` and ``validate`` (or
``mutate``), and bind the export in the app module::

    from wasm_apiserver import admission as adm

    class NoLatest(adm.AdmissionPolicy):
        def describe(self):
            return adm.PolicyDescription(rules=[adm.Rule(["CREATE"], "", "pods")])
        def validate(self, request, settings):
            return adm.allow()

    Admission = adm.export(NoLatest)

Build it with ``componentize-py -d wit/admission/0.1.0 -w admission-plugin componentize app
-o x.wasm``. Other objects are read with :func:`get_object` and :func:`list_objects`, for the
resources ``describe`` declares in ``context_reads``; outside a component (tests) they read
what :func:`with_objects` holds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Type


@dataclass
class Rule:
    """One match rule, as ``admissionregistration.k8s.io/v1`` ``RuleWithOperations``."""
    operations: List[str]
    group: str
    resource: str
    versions: List[str] = field(default_factory=lambda: ["*"])
    scope: str = "*"


@dataclass
class PolicyDescription:
    """What the policy is: read once at load."""
    rules: List[Rule]
    mutating: bool = False
    #: ``(group, resource)`` pairs the policy reads (in their storage version).
    context_reads: List[Tuple[str, str]] = field(default_factory=list)


@dataclass
class Response:
    """An ``AdmissionResponse``: allowed, or a denial with ``code`` (0 means 403), ``reason``
    and ``message``; warnings, audit annotations and a mutating policy's object."""
    allowed: bool = True
    code: int = 0
    reason: str = ""
    message: str = ""
    warnings: List[str] = field(default_factory=list)
    audit_annotations: Dict[str, str] = field(default_factory=dict)
    mutated_object: Optional[Dict[str, Any]] = None


def allow() -> Response:
    """Allowed."""
    return Response()


def deny(message: str, code: int = 0, reason: str = "") -> Response:
    """Refused with ``message`` (403 Forbidden unless ``code`` says otherwise)."""
    return Response(allowed=False, code=code, reason=reason, message=message)


def mutate(obj: Dict[str, Any]) -> Response:
    """Allowed, storing ``obj`` instead (a mutating policy)."""
    return Response(mutated_object=obj)


class ReadError(Exception):
    """A context read failed: ``kind`` is ``forbidden`` (not declared), ``invalid`` or
    ``unavailable``."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class AdmissionPolicy:
    """Subclass and override ``describe`` and ``validate`` (or ``mutate``). ``request`` is
    kube's ``AdmissionRequest`` as a dict (``operation``, ``namespace``, ``name``,
    ``object``, ``oldObject``, ``userInfo`` …); ``settings`` the policy object's settings."""

    def describe(self) -> PolicyDescription:
        raise NotImplementedError

    def validate_settings(self, settings: Dict[str, Any]) -> Optional[str]:
        """Why ``settings`` are refused (the object's status then says so, and the last good
        version keeps enforcing), or ``None``."""
        return None

    def validate(self, request: Dict[str, Any], settings: Dict[str, Any]) -> Response:
        return allow()

    def mutate(self, request: Dict[str, Any], settings: Dict[str, Any]) -> Response:
        return allow()


_OBJECTS: List[Tuple[str, Dict[str, Any]]] = []


def with_objects(objects: List[Tuple[str, Dict[str, Any]]]) -> None:
    """Outside a component: what :func:`get_object` and :func:`list_objects` see, as
    ``(resource, object)`` pairs."""
    _OBJECTS[:] = objects


def _host():
    try:
        from wit_world.imports import host, types  # type: ignore
        return host, types
    except ImportError:
        return None, None


def _read_error(e) -> ReadError:
    v = getattr(e, "value", e)
    kind = type(v).__name__.split("_")[-1].lower()
    return ReadError(kind, str(getattr(v, "value", v)))


def get_object(group: str, resource: str, namespace: str, name: str) -> Optional[Dict[str, Any]]:
    """One object of a declared resource from the server's watch cache, ``None`` when it
    does not exist. Raises :class:`ReadError`."""
    host, types = _host()
    if host is None:
        for r, o in _OBJECTS:
            m = o.get("metadata") or {}
            if r == resource and m.get("namespace", "") == namespace and m.get("name") == name:
                return o
        return None
    try:
        text = host.get_object(types.GroupVersionResource(group, "", resource), namespace, name)
    except Exception as e:  # componentize-py's Err
        raise _read_error(e)
    return None if text is None else json.loads(text)


def list_objects(group: str, resource: str, namespace: str = "", label_selector: str = "") -> List[Dict[str, Any]]:
    """The objects of a declared resource in ``namespace`` (all when empty) matching
    ``label_selector``, from the server's watch cache. Raises :class:`ReadError`."""
    host, types = _host()
    if host is None:
        return [o for r, o in _OBJECTS if r == resource
                and (not namespace or (o.get("metadata") or {}).get("namespace") == namespace)]
    try:
        texts = host.list_objects(types.GroupVersionResource(group, "", resource), namespace,
                                  label_selector)
    except Exception as e:
        raise _read_error(e)
    return [json.loads(t) for t in texts]


def export(cls: Type[AdmissionPolicy]):
    """The class ``componentize-py`` exports as the ``admission`` interface, wrapping an
    instance of ``cls``. Bind it to the name ``Admission`` in the app module."""
    from componentize_py_types import Err  # type: ignore
    from wit_world.imports import types  # type: ignore

    p = cls()

    def settings_of(text: str) -> Dict[str, Any]:
        try:
            v = json.loads(text)
        except ValueError:
            return {}
        return v if isinstance(v, dict) else {}

    def answer(r: Response):
        denial = None if r.allowed else types.Denial(r.code, r.reason, r.message)
        mutated = None if r.mutated_object is None else json.dumps(r.mutated_object, separators=(",", ":"))
        return types.AdmissionResponse(r.allowed, denial, list(r.warnings),
                                       list(r.audit_annotations.items()), mutated)

    def run(hook, request: str, settings: str):
        try:
            req = json.loads(request)
        except ValueError as e:
            return answer(deny("the policy cannot decode the request: %s" % e, 400, "BadRequest"))
        return answer(hook(req, settings_of(settings)))

    class Export:
        def describe(self):
            d = p.describe()
            return types.PolicyDescription(
                d.mutating,
                [types.Rule(r.operations, [r.group], r.versions, [r.resource], r.scope) for r in d.rules],
                [types.GroupVersionResource(g, "", res) for g, res in d.context_reads])

        def validate_settings(self, settings: str) -> None:
            try:
                v = json.loads(settings)
            except ValueError as e:
                raise Err("settings are not JSON: %s" % e)
            why = p.validate_settings(v if isinstance(v, dict) else {})
            if why:
                raise Err(why)

        def validate(self, request: str, settings: str):
            return run(p.validate, request, settings)

        def mutate(self, request: str, settings: str):
            return run(p.mutate, request, settings)

    Export.__name__ = "Admission"
    return Export
