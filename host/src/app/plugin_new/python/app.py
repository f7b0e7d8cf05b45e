"""``__PLURAL__.__GROUP__/v1``: a wasm-apiserver strategy plugin (written by ``wasm-apiserver
plugin new``). One rule to start from: ``spec.message`` is required.

``wasm_apiserver/`` is the Python SDK and ``wit/`` the contract, copied here so the project
builds on its own; ``./build.sh`` makes ``__NAME__.wasm`` with componentize-py.
"""

import wasm_apiserver as wa
from wasm_apiserver import Path, field

SCHEMA = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {"message": {"type": "string", "description": "What it says."}},
        },
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}


class __KIND__Strategy(wa.Strategy):
    def describe(self):
        return wa.ResourceDescription(
            "__GROUP__", "v1", "__KIND__", "__PLURAL__",
            openapi_schema=SCHEMA,
            example={"apiVersion": "__GROUP__/v1", "kind": "__KIND__",
                     "metadata": {"name": "example", "namespace": "default"},
                     "spec": {"message": "hello"}},
        )

    def validate(self, obj):
        if not (obj.get("spec") or {}).get("message"):
            return [field.required(Path("spec").child("message"), "a __SINGULAR__ must say something")]
        return []

    def validate_update(self, new, old):
        return self.validate(new)


Strategy = wa.export(__KIND__Strategy)
