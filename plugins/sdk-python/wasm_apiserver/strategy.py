"""The strategy base class: kube-apiserver's ``rest.RESTCreateStrategy``,
``rest.RESTUpdateStrategy``, ``rest.RESTGracefulDeleteStrategy`` and the status strategy as
methods on a class, with kube-apiserver's defaults for every hook you do not write.

Objects are plain ``dict``\\ s decoded from the JSON the host sends. Mutating hooks change the
object in place; validation hooks return a list of :class:`~wasm_apiserver.field.FieldError`;
warning hooks return a list of strings. Every hook must be a pure function of its arguments
(the host may call a hook more than once, on any instance): no clock, files, network or
environment — the sandbox gives a fixed clock and no environment.

Around your hooks the SDK does what kube-apiserver's custom-resource strategy does
(``apiextensions-apiserver/pkg/registry/customresource/strategy.go``), as the Rust SDK does:

- create: ``metadata.generation = 1`` (if ``tracks_generation``) and, with a ``status``
  subresource, the client's ``status`` is dropped before ``prepare_for_create``;
- update: with a ``status`` subresource, ``status`` is copied from the stored object before
  ``prepare_for_update``; after it, ``generation`` is bumped when anything outside ``metadata``
  and ``status`` changed;
- status update: the stored object is kept, with only ``status`` (and ``managedFields``) taken
  from the request, before ``prepare_for_status_update``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field as dc_field
from typing import Any, Dict, List, Optional, Tuple

from .field import FieldError


@dataclass
class PrinterColumn:
    """One printer column (a CRD's ``additionalPrinterColumns``). ``json_path`` is kubectl's
    syntax (``.spec.size``), ``@name``/``@age`` for the NAME/AGE columns, or empty for a cell
    computed by :meth:`Strategy.printer_cells`. ``priority`` 0 is shown by ``kubectl get``,
    1 only with ``-o wide``."""

    name: str
    type: str
    json_path: str
    format: str = ""
    description: str = ""
    priority: int = 0

    @staticmethod
    def name_column() -> "PrinterColumn":
        """The NAME column, as kube-apiserver's default table has."""
        return PrinterColumn("Name", "string", "@name", "name",
                             "Name must be unique within a namespace.")

    @staticmethod
    def age_column() -> "PrinterColumn":
        """The AGE column."""
        return PrinterColumn("Age", "date", "@age")

    def wide(self) -> "PrinterColumn":
        """This column, shown only with ``-o wide``."""
        self.priority = 1
        return self


@dataclass
class ServedVersion:
    """One version of a resource served in several (a CRD's ``spec.versions`` entry). Exactly
    one is the ``storage`` version: every hook but :meth:`Strategy.convert` sees objects in it.
    ``openapi_schema``, ``printer_columns`` and ``selectable_fields`` default to the
    description's own."""

    name: str
    served: bool = True
    storage: bool = False
    deprecated: bool = False
    deprecation_warning: Optional[str] = None
    openapi_schema: Optional[Dict[str, Any]] = None
    printer_columns: Optional[List["PrinterColumn"]] = None
    selectable_fields: Optional[List[str]] = None


@dataclass
class ResourceDescription:
    """What a plugin serves (the WIT ``resource-description``). Only ``group``, ``version``,
    ``kind`` and ``plural`` are required; the rest default as a CRD's do: ``list_kind`` is
    ``<Kind>List``, ``singular`` the lower-cased kind, namespaced, a ``status`` subresource,
    the NAME and AGE columns. ``openapi_schema`` is the object's OpenAPI v3 schema (a dict);
    ``example`` an object the host smoke-tests the plugin with at load. ``version`` is the
    storage version; a resource served in several versions lists them all in ``versions``
    (then ``version`` names the storage one)."""

    group: str
    version: str
    kind: str
    plural: str
    list_kind: str = ""
    singular: str = ""
    short_names: List[str] = dc_field(default_factory=list)
    categories: List[str] = dc_field(default_factory=list)
    namespaced: bool = True
    subresources: List[str] = dc_field(default_factory=lambda: ["status"])
    printer_columns: List[PrinterColumn] = dc_field(
        default_factory=lambda: [PrinterColumn.name_column(), PrinterColumn.age_column()])
    selectable_fields: List[str] = dc_field(default_factory=list)
    openapi_schema: Dict[str, Any] = dc_field(
        default_factory=lambda: {"type": "object", "x-kubernetes-preserve-unknown-fields": True})
    example: Optional[Dict[str, Any]] = None
    return_deleted_object: bool = False
    versions: List[ServedVersion] = dc_field(default_factory=list)

    def __post_init__(self) -> None:
        self.list_kind = self.list_kind or self.kind + "List"
        self.singular = self.singular or self.kind.lower()


class Rejected(Exception):
    """Raised by a mutating hook (``prepare_for_*``, ``canonicalize``) to refuse the object:
    with field errors the host answers 422 ``Invalid``, with a message only 400
    ``BadRequest``."""

    def __init__(self, message: str = "", errors: Optional[List[FieldError]] = None) -> None:
        super().__init__(message)
        self.message = message
        self.errors = errors or []


class Strategy:
    """Subclass it, write :meth:`describe` and the hooks you need, then export it from your
    app module with ``Strategy = wasm_apiserver.export(MyStrategy)``."""

    #: Keep ``metadata.generation`` (1 on create, bumped on a spec change), as kube-apiserver
    #: does for custom resources.
    tracks_generation: bool = True

    def describe(self) -> ResourceDescription:
        """The resource served. Must always return the same value."""
        raise NotImplementedError("a strategy must describe its resource")

    def prepare_for_create(self, obj: Dict[str, Any]) -> None:
        """``PrepareForCreate``: normalise a new object (defaults, initial status)."""

    def validate(self, obj: Dict[str, Any]) -> List[FieldError]:
        """``Validate`` on create."""
        return []

    def warnings_on_create(self, obj: Dict[str, Any]) -> List[str]:
        """``WarningsOnCreate``: each sent as a ``Warning: 299`` header."""
        return []

    def canonicalize(self, obj: Dict[str, Any]) -> None:
        """``Canonicalize``: the last hook before a write. Must not change ``metadata``."""

    def allow_create_on_update(self) -> bool:
        """``AllowCreateOnUpdate``. Default false."""
        return False

    def allow_unconditional_update(self) -> bool:
        """``AllowUnconditionalUpdate``. Default true, as for custom resources."""
        return True

    def prepare_for_update(self, new: Dict[str, Any], old: Dict[str, Any]) -> None:
        """``PrepareForUpdate`` (``status`` already restored from ``old``)."""

    def validate_update(self, new: Dict[str, Any], old: Dict[str, Any]) -> List[FieldError]:
        """``ValidateUpdate``."""
        return []

    def warnings_on_update(self, new: Dict[str, Any], old: Dict[str, Any]) -> List[str]:
        """``WarningsOnUpdate``."""
        return []

    def prepare_for_status_update(self, new: Dict[str, Any], old: Dict[str, Any]) -> None:
        """The status strategy's ``PrepareForUpdate`` (everything but ``status`` already
        taken from ``old``)."""

    def validate_status_update(self, new: Dict[str, Any], old: Dict[str, Any]) -> List[FieldError]:
        """The status strategy's ``ValidateUpdate``."""
        return []

    def warnings_on_status_update(self, new: Dict[str, Any], old: Dict[str, Any]) -> List[str]:
        """The status strategy's ``WarningsOnUpdate``."""
        return []

    def check_graceful_delete(self, obj: Dict[str, Any], requested: Optional[int]) -> Optional[int]:
        """``CheckGracefulDelete``: ``None`` deletes at once, seconds delete gracefully."""
        return None

    def validate_delete(self, old: Dict[str, Any]) -> List[FieldError]:
        """Validation of a delete; errors refuse it with 422."""
        return []

    def printer_cells(self, obj: Dict[str, Any]) -> List[Any]:
        """Cells of the printer columns whose ``json_path`` is empty, in column order."""
        return []

    def convert(self, obj: Dict[str, Any], desired_api_version: str) -> Dict[str, Any]:
        """Convert an object to ``desired_api_version`` (a CRD conversion webhook's job), for
        a resource served in several versions; called only when ``obj`` is in another
        version. Keep ``metadata`` but labels and annotations; make A → B → A give back the
        original. The default serves one version and refuses."""
        raise Rejected("cannot convert from %s to %s: this plugin serves one version"
                       % (obj.get("apiVersion"), desired_api_version))

    def get_attrs(self, obj: Dict[str, Any]) -> Tuple[Dict[str, str], Dict[str, str]]:
        """``GetAttrs``: the labels and each selectable field's value (missing or ``null``
        reads ``""``, a non-string as its JSON)."""
        labels = {k: v if isinstance(v, str) else ""
                  for k, v in ((obj.get("metadata") or {}).get("labels") or {}).items()}
        fields = {}
        for path in self._description().selectable_fields:
            cur: Any = obj
            for part in path.split("."):
                cur = cur.get(part) if isinstance(cur, dict) else None
            fields[path] = cur if isinstance(cur, str) else "" if cur is None else json.dumps(
                cur, separators=(",", ":"))
        return labels, fields

    # The description, computed once per instance: describe() may build a large schema.
    def _description(self) -> ResourceDescription:
        d = self.__dict__.get("_wasm_apiserver_description")
        if d is None:
            d = self.describe()
            self.__dict__["_wasm_apiserver_description"] = d
        return d

    def _has_status(self) -> bool:
        return "status" in self._description().subresources
