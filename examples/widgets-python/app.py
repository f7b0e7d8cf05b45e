"""``widgets.example.dev/v1`` in Python: the rules of ``examples/widgets`` (Rust), through the
Python SDK (``plugins/sdk-python``), passing the same fixtures (``examples/widgets/fixtures``).

- a computed default: ``spec.replicas`` from ``spec.size`` (small 1, medium 3, large 5);
- a cross-field rule: ``spec.minReplicas <= spec.replicas <= spec.maxReplicas``;
- a warning above 10 replicas; ``spec.storageClass`` immutable;
- printer columns SIZE, REPLICAS, PHASE (STORAGE-CLASS with ``-o wide``);
- ``status.phase`` starts ``Pending``; a status update may set only Pending, Ready or Failed.
"""

import wasm_apiserver as wa
from wasm_apiserver import Path, PrinterColumn, field, validation

SIZES = ["small", "medium", "large"]
DEFAULT_REPLICAS = {"small": 1, "medium": 3, "large": 5}
PHASES = ["Pending", "Ready", "Failed"]

SCHEMA = {
    "type": "object",
    "description": "A Widget is the tutorial resource of wasm-apiserver.",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "description": "Desired state of the widget.",
            "required": ["size"],
            "properties": {
                "size": {"type": "string", "enum": SIZES, "description": "small, medium or large."},
                "replicas": {"type": "integer", "format": "int32",
                             "description": "Defaults from size: 1, 3 or 5."},
                "minReplicas": {"type": "integer", "format": "int32"},
                "maxReplicas": {"type": "integer", "format": "int32"},
                "storageClass": {"type": "string", "description": "Immutable once set."},
            },
        },
        "status": {
            "type": "object",
            "properties": {"phase": {"type": "string", "description": "Pending, Ready or Failed."}},
        },
    },
}


class Widgets(wa.Strategy):
    def describe(self):
        return wa.ResourceDescription(
            "example.dev", "v1", "Widget", "widgets",
            short_names=["wd"],
            categories=["all"],
            printer_columns=[
                PrinterColumn.name_column(),
                PrinterColumn("Size", "string", ".spec.size"),
                PrinterColumn("Replicas", "integer", ".spec.replicas"),
                PrinterColumn("Phase", "string", ".status.phase"),
                PrinterColumn.age_column(),
                PrinterColumn("Storage-Class", "string", ".spec.storageClass").wide(),
            ],
            selectable_fields=["spec.size"],
            openapi_schema=SCHEMA,
            example={"apiVersion": "example.dev/v1", "kind": "Widget",
                     "metadata": {"name": "example", "namespace": "default"},
                     "spec": {"size": "medium"}},
        )

    def prepare_for_create(self, w):
        spec = w.setdefault("spec", {})
        if spec.get("replicas") is None and spec.get("size") in DEFAULT_REPLICAS:
            spec["replicas"] = DEFAULT_REPLICAS[spec["size"]]
        w["status"] = {"phase": "Pending"}

    def validate(self, w):
        spec = Path("spec")
        s = w.get("spec") or {}
        errs = validation.validate_name(w["metadata"].get("name", ""), Path("metadata").child("name"))
        size = s.get("size") or ""
        if not size:
            errs.append(field.required(spec.child("size"), ""))
        elif size not in SIZES:
            errs.append(field.not_supported(spec.child("size"), size, SIZES))
        r = s.get("replicas")
        if r is not None:
            if r < 0:
                errs.append(field.invalid(spec.child("replicas"), r, "must be greater than or equal to 0"))
            lo, hi = s.get("minReplicas"), s.get("maxReplicas")
            if lo is not None and r < lo:
                errs.append(field.invalid(spec.child("replicas"), r,
                                          "must be greater than or equal to spec.minReplicas (%d)" % lo))
            if hi is not None and r > hi:
                errs.append(field.invalid(spec.child("replicas"), r,
                                          "must be less than or equal to spec.maxReplicas (%d)" % hi))
        return errs

    def warnings_on_create(self, w):
        r = (w.get("spec") or {}).get("replicas")
        if r is not None and r > 10:
            return ["spec.replicas: %d replicas is more than 10; widgets are expensive" % r]
        return []

    def validate_update(self, new, old):
        return self.validate(new) + validation.validate_immutable_field(
            (new.get("spec") or {}).get("storageClass"),
            (old.get("spec") or {}).get("storageClass"),
            Path("spec").child("storageClass"))

    def warnings_on_update(self, new, old):
        return self.warnings_on_create(new)

    def validate_status_update(self, new, old):
        phase = (new.get("status") or {}).get("phase")
        if phase is not None and phase not in PHASES:
            return [field.not_supported(Path("status").child("phase"), phase, PHASES)]
        return []


Strategy = wa.export(Widgets)
