"""__NAME__: a wasm-apiserver admission policy in Python (written by ``wasm-apiserver plugin
new --lang python --policy``). One rule to start from: a ConfigMap must carry the label named
by the settings' ``label`` (``owner`` by default).

``wasm_apiserver/`` is the Python SDK and ``wit/`` the contract, copied here so the project
builds on its own; ``./build.sh`` makes ``__NAME__.wasm`` with componentize-py.
"""

import json

from wasm_apiserver import admission as adm


def label(settings):
    """The label every ConfigMap must carry."""
    return settings.get("label", "owner")


class Policy(adm.AdmissionPolicy):
    def describe(self):
        return adm.PolicyDescription(rules=[adm.Rule(["CREATE", "UPDATE"], "", "configmaps")])

    def validate_settings(self, settings):
        if not isinstance(label(settings), str):
            return "label: must be a string"
        return None

    def validate(self, request, settings):
        key = label(settings)
        labels = ((request.get("object") or {}).get("metadata") or {}).get("labels") or {}
        if isinstance(labels.get(key), str):
            return adm.allow()
        return adm.deny("a ConfigMap must carry the label %s" % json.dumps(key))


Admission = adm.export(Policy)
