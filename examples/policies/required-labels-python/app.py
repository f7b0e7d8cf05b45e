"""A wasm admission policy in Python (``plugins/sdk-python``, ``wasm_apiserver.admission``):
objects must carry the labels the policy object's settings list — ``{"labels": ["team"]}``
— on create and update of ConfigMaps and Pods; a label missing from the object but present
on its Namespace is copied by nobody: the denial names the namespace's value as a hint,
read from the watch cache (``namespaces`` is declared).
"""

from wasm_apiserver import admission as adm


class RequiredLabels(adm.AdmissionPolicy):
    def describe(self):
        return adm.PolicyDescription(
            rules=[adm.Rule(["CREATE", "UPDATE"], "", "configmaps"),
                   adm.Rule(["CREATE", "UPDATE"], "", "pods")],
            context_reads=[("", "namespaces")])

    def validate_settings(self, settings):
        labels = settings.get("labels", [])
        if not isinstance(labels, list) or not all(isinstance(l, str) for l in labels):
            return "labels: must be a list of label keys"
        return None

    def validate(self, request, settings):
        obj = request.get("object") or {}
        have = (obj.get("metadata") or {}).get("labels") or {}
        missing = [l for l in settings.get("labels", []) if l not in have]
        if not missing:
            return adm.allow()
        hint = ""
        ns = adm.get_object("", "namespaces", "", request.get("namespace", ""))
        ns_labels = ((ns or {}).get("metadata") or {}).get("labels") or {}
        hints = ["%s=%s" % (l, ns_labels[l]) for l in missing if l in ns_labels]
        if hints:
            hint = " (its namespace has %s)" % ", ".join(hints)
        return adm.deny("missing required label(s): %s%s" % (", ".join(missing), hint))


Admission = adm.export(RequiredLabels)
