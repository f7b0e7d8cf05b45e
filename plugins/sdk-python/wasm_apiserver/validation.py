"""Kubernetes' name and label rules, ported from ``k8s.io/apimachinery/pkg/util/validation``
(``validation.go``) and ``k8s.io/apimachinery/pkg/api/validation`` (``objectmeta.go``,
``generic.go``), with Kubernetes' messages (apimachinery v0.33).

The ``is_*`` functions return the problems as Kubernetes words them (empty = valid); the
``validate_*`` functions return field errors at a path.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping

from . import field
from .field import Path

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1035_LABEL_MAX_LENGTH = 63
QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63

#: ``FieldImmutableErrorMsg``.
FIELD_IMMUTABLE_ERROR_MSG = "field is immutable"

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric "
                      "characters or '-', and must start and end with an alphanumeric character")
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                          "characters, '-' or '.', and must start and end with an alphanumeric "
                          "character")
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or "
                      "'-', start with an alphabetic character, and end with an alphanumeric "
                      "character")
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start "
                       "and end with an alphanumeric character")
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, "
                    "'-', '_' or '.', and must start and end with an alphanumeric character")


def _full(fmt: str) -> "re.Pattern[str]":
    # ASCII-only classes; \Z so that a trailing newline does not match.
    return re.compile("(?:" + fmt + r")\Z")


_DNS1123_LABEL = _full(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN = _full(_DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL = _full(_DNS1035_LABEL_FMT)
_QUALIFIED_NAME = _full(_QUALIFIED_NAME_FMT)
_LABEL_VALUE = _full(_LABEL_VALUE_FMT)


def max_len_error(length: int) -> str:
    """``MaxLenError``."""
    return "must be no more than %d characters" % length


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``RegexError``: ``msg (e.g. 'a',  or 'b', regex used for validation is 'fmt')`` (the
    double space before ``or`` is Kubernetes')."""
    if not examples:
        return "%s (regex used for validation is '%s')" % (msg, fmt)
    shown = " or ".join("'%s', " % e for e in examples)
    return "%s (e.g. %sregex used for validation is '%s')" % (msg, shown, fmt)


def is_dns1123_label(value: str) -> List[str]:
    """``IsDNS1123Label``: at most 63 characters of ``[a-z0-9]([-a-z0-9]*[a-z0-9])?``."""
    errs = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL.match(value):
        errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> List[str]:
    """``IsDNS1123Subdomain``: at most 253 characters, dot-separated DNS-1123 labels."""
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN.match(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str) -> List[str]:
    """``IsDNS1035Label``: at most 63 characters of ``[a-z]([-a-z0-9]*[a-z0-9])?``."""
    errs = []
    if len(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not _DNS1035_LABEL.match(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_qualified_name(value: str) -> List[str]:
    """``IsQualifiedName`` (label keys, annotation keys, finalizers): an optional DNS-1123
    subdomain prefix and ``/``, then a name part of at most 63 characters."""
    errs: List[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return ["a qualified name " + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT,
                                                  "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME.match(name):
        errs.append("name part " + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT,
                                               "MyName", "my.name", "123-abc"))
    return errs


def is_valid_label_value(value: str) -> List[str]:
    """``IsValidLabelValue``: empty, or at most 63 characters of a qualified name part."""
    errs = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE.match(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT,
                                "MyValue", "my_value", "12345"))
    return errs


#: How ``metadata.name`` is checked (``ValidateNameFunc``): ``NameIsDNSSubdomain``,
#: ``NameIsDNSLabel``, ``NameIsDNS1035Label``.
NAME_IS_DNS_SUBDOMAIN = is_dns1123_subdomain
NAME_IS_DNS_LABEL = is_dns1123_label
NAME_IS_DNS1035_LABEL = is_dns1035_label


def validate_name(name: str, path: Path, rule=NAME_IS_DNS_SUBDOMAIN) -> List[field.FieldError]:
    """``field.Invalid(path, name, msg)`` for each problem ``rule`` finds with ``name``."""
    return [field.invalid(path, name, m) for m in rule(name)]


def validate_labels(labels: Mapping[str, str], path: Path) -> List[field.FieldError]:
    """``ValidateLabels`` (``metav1validation``): keys as qualified names, values as label
    values, reported at ``path`` itself as Kubernetes does; keys in sorted order."""
    errs = []
    for k in sorted(labels):
        errs.extend(field.invalid(path, k, m) for m in is_qualified_name(k))
        errs.extend(field.invalid(path, labels[k], m) for m in is_valid_label_value(labels[k]))
    return errs


def validate_immutable_field(new: Any, old: Any, path: Path) -> List[field.FieldError]:
    """``ValidateImmutableField``: ``field is immutable`` when ``new != old``."""
    return [] if new == old else [field.invalid(path, new, FIELD_IMMUTABLE_ERROR_MSG)]


def validate_nonnegative_field(value: int, path: Path) -> List[field.FieldError]:
    """``ValidateNonnegativeField``."""
    return [field.invalid(path, value, "must be greater than or equal to 0")] if value < 0 else []


def get(obj: Mapping[str, Any], dotted: str, default: Any = None) -> Any:
    """The value at a dotted path (``spec.size``), or ``default`` when any step is missing."""
    cur: Any = obj
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return default
        cur = cur[part]
    return cur


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("annotations", "re", "Any", "Dict", "List", "Mapping")]
