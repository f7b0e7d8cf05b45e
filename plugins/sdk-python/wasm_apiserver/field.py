"""Field paths and field errors, as ``k8s.io/apimachinery/pkg/util/validation/field``
(``path.go``, ``errors.go``) words them.

A validation hook returns a list of :class:`FieldError`; the host answers a non-empty list with
422 ``Invalid``, one ``details.causes`` entry per error::

    spec = Path("spec")
    errs = [field.required(spec.child("size"), "")]
    errs.append(field.not_supported(spec.child("size"), "huge", ["small", "large"]))
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, List, Optional

#: The ``field.ErrorType`` names, as ``metav1.StatusCause.type`` carries them.
REQUIRED = "FieldValueRequired"
INVALID = "FieldValueInvalid"
DUPLICATE = "FieldValueDuplicate"
NOT_SUPPORTED = "FieldValueNotSupported"
FORBIDDEN = "FieldValueForbidden"
TOO_LONG = "FieldValueTooLong"
TOO_MANY = "FieldValueTooMany"
INTERNAL = "InternalError"
TYPE_INVALID = "FieldValueTypeInvalid"
NOT_FOUND = "FieldValueNotFound"


class Path:
    """A field path such as ``spec.containers[0].image`` or ``metadata.labels[app]``
    (``field.Path``). Immutable: every method returns a new path."""

    __slots__ = ("_s",)

    def __init__(self, root: str = "") -> None:
        self._s = root

    def child(self, name: str) -> "Path":
        """``spec`` → ``spec.containers``."""
        return Path(name if not self._s else self._s + "." + name)

    def index(self, i: int) -> "Path":
        """``spec.containers`` → ``spec.containers[0]``."""
        return Path("%s[%d]" % (self._s, i))

    def key(self, k: str) -> "Path":
        """``metadata.labels`` → ``metadata.labels[app]`` (keys printed bare, as Kubernetes does)."""
        return Path("%s[%s]" % (self._s, k))

    def __str__(self) -> str:
        return self._s

    def __repr__(self) -> str:
        return "Path(%r)" % self._s

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Path) and other._s == self._s

    def __hash__(self) -> int:
        return hash(self._s)


@dataclass
class FieldError:
    """One validation error (``field.Error``): its type (one of the constants above), the
    path as Kubernetes prints it, the offending value (any JSON value; ``None`` = omitted)
    and a human-readable detail."""

    type: str
    field: str
    bad_value: Any = None
    detail: str = ""
    #: Whether ``bad_value`` is given (``None`` may be a real JSON ``null``).
    has_value: bool = False


def _err(t: str, path: Path | str, value: Any, detail: str, has_value: bool) -> FieldError:
    return FieldError(t, str(path), value, detail, has_value)


def required(path: Path | str, detail: str = "") -> FieldError:
    """``field.Required(path, detail)``: "Required value"."""
    return _err(REQUIRED, path, None, detail, False)


def invalid(path: Path | str, value: Any, detail: str) -> FieldError:
    """``field.Invalid(path, value, detail)``: "Invalid value"."""
    return _err(INVALID, path, value, detail, True)


def duplicate(path: Path | str, value: Any) -> FieldError:
    """``field.Duplicate(path, value)``: "Duplicate value"."""
    return _err(DUPLICATE, path, value, "", True)


def not_supported(path: Path | str, value: Any, valid: Iterable[str]) -> FieldError:
    """``field.NotSupported(path, value, validValues)``: the detail lists the supported values
    quoted, as Kubernetes does (``supported values: "a", "b"``)."""
    quoted = ", ".join('"%s"' % v for v in valid)
    return _err(NOT_SUPPORTED, path, value, "supported values: " + quoted if quoted else "", True)


def forbidden(path: Path | str, detail: str) -> FieldError:
    """``field.Forbidden(path, detail)``."""
    return _err(FORBIDDEN, path, None, detail, False)


def too_long(path: Path | str, value: Any, max_length: int) -> FieldError:
    """``field.TooLong(path, value, maxLength)``: ``must have at most N bytes``."""
    return _err(TOO_LONG, path, value, "must have at most %d bytes" % max_length, True)


def too_many(path: Path | str, actual: int, max_items: int) -> FieldError:
    """``field.TooMany(path, actual, max)``: ``must have at most N items``."""
    return _err(TOO_MANY, path, actual, "must have at most %d items" % max_items, True)


def internal(path: Path | str, detail: str) -> FieldError:
    """``field.InternalError(path, err)``."""
    return _err(INTERNAL, path, None, detail, False)


def type_invalid(path: Path | str, value: Any, detail: str) -> FieldError:
    """``field.TypeInvalid(path, value, detail)``."""
    return _err(TYPE_INVALID, path, value, detail, True)


def not_found(path: Path | str, value: Any) -> FieldError:
    """``field.NotFound(path, value)``."""
    return _err(NOT_FOUND, path, value, "", True)


def bad_value_json(e: FieldError) -> Optional[str]:
    """The error's value as the JSON text the WIT ``field-error.bad-value`` carries."""
    return json.dumps(e.bad_value, separators=(",", ":")) if e.has_value else None


ErrorList = List[FieldError]
