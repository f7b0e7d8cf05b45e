"""wasm-apiserver's Python SDK: write a strategy plugin as a class.

A strategy plugin is a WebAssembly component exporting ``wit/0.2.0/strategy.wit``; this package
hides the bindings. Subclass :class:`Strategy`, write ``describe`` and the hooks you need
(every other hook has kube-apiserver's default), and bind the export::

    import wasm_apiserver as wa
    from wasm_apiserver import field, Path

    class Widgets(wa.Strategy):
        def describe(self):
            return wa.ResourceDescription("example.dev", "v1", "Widget", "widgets")
        def validate(self, obj):
            size = (obj.get("spec") or {}).get("size")
            return [] if size else [field.required(Path("spec").child("size"))]

    Strategy = wa.export(Widgets)

Build it with ``componentize-py -d <folder of strategy.wit> -w strategy-plugin componentize app
-o x.wasm`` (``wasm-apiserver plugin new NAME --lang python`` writes a project that does).

Admission policies (``wit/admission/0.1.0``) are written with :mod:`wasm_apiserver.admission`
(``from wasm_apiserver import admission``; not imported here, so that a copy of the SDK
without it still builds strategies).
"""

from . import field, validation
from .field import ErrorList, FieldError, Path
from .strategy import PrinterColumn, Rejected, ResourceDescription, ServedVersion, Strategy
from .export import export, log

__all__ = ["field", "validation", "ErrorList", "FieldError", "Path", "PrinterColumn",
           "Rejected", "ResourceDescription", "ServedVersion", "Strategy", "export", "log"]
