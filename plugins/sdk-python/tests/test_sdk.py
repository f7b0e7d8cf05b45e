"""The Python SDK's helpers against the Kubernetes wording the Rust SDK's tests pin
(plugins/apimachinery/src/validation/mod.rs, field.rs). Run in plugins/sdk-python:
``python3 -m unittest discover -s tests`` (cargo test runs it: language_plugins.rs)."""

import unittest

from wasm_apiserver import Path, field, validation
from wasm_apiserver.strategy import ResourceDescription, Strategy

SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                 "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
                 "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
NAME_PART_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                 "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
                 "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


class PathTest(unittest.TestCase):
    def test_paths_print_as_kubernetes_does(self):
        spec = Path("spec")
        self.assertEqual(str(spec.child("containers").index(0).child("image")), "spec.containers[0].image")
        self.assertEqual(str(Path("metadata").child("labels").key("app")), "metadata.labels[app]")
        self.assertEqual(str(Path().child("spec")), "spec")


class FieldErrorTest(unittest.TestCase):
    def test_not_supported_quotes_the_values(self):
        e = field.not_supported(Path("spec").child("size"), "huge", ["A", "C"])
        self.assertEqual((e.type, e.field, e.detail), (field.NOT_SUPPORTED, "spec.size", 'supported values: "A", "C"'))
        self.assertEqual(field.bad_value_json(e), '"huge"')

    def test_required_has_no_value(self):
        self.assertIsNone(field.bad_value_json(field.required(Path("spec"))))
        self.assertEqual(field.bad_value_json(field.invalid(Path("spec"), None, "x")), "null")


class ValidationTest(unittest.TestCase):
    def test_dns1123_label(self):
        for ok in ["a", "0", "my-name", "123-abc", "a--b", "a" * 63]:
            self.assertEqual(validation.is_dns1123_label(ok), [], ok)
        for bad in ["", "-a", "a-", "A", "my_name", "a.b", "ä", "a b", "a\n"]:
            self.assertNotEqual(validation.is_dns1123_label(bad), [], repr(bad))
        self.assertEqual(validation.is_dns1123_label("a" * 64), ["must be no more than 63 characters"])

    def test_dns1123_subdomain(self):
        for ok in ["a", "example.com", "1.2.3", "a" * 253]:
            self.assertEqual(validation.is_dns1123_subdomain(ok), [], ok)
        for bad in ["", ".", "a.", "a..b", "A.b", "a_b", "a/b"]:
            self.assertEqual(validation.is_dns1123_subdomain(bad), [SUBDOMAIN_MSG], bad)

    def test_qualified_name(self):
        for ok in ["app", "example.com/app", "kubernetes.io/metadata.name", "a/B"]:
            self.assertEqual(validation.is_qualified_name(ok), [], ok)
        self.assertEqual(validation.is_qualified_name(""), ["name part must be non-empty", NAME_PART_MSG])
        self.assertEqual(validation.is_qualified_name("-app"), [NAME_PART_MSG])
        self.assertEqual(validation.is_qualified_name("/app"), ["prefix part must be non-empty"])
        self.assertEqual(validation.is_qualified_name("Example.com/app"), ["prefix part " + SUBDOMAIN_MSG])
        self.assertEqual(validation.is_qualified_name("a" * 64), ["name part must be no more than 63 characters"])

    def test_labels_and_immutable(self):
        errs = validation.validate_labels({"ok": "v", "bad key!": "v", "k": "-v"}, Path("metadata").child("labels"))
        self.assertEqual([(e.field, e.bad_value) for e in errs],
                         [("metadata.labels", "bad key!"), ("metadata.labels", "-v")])
        self.assertEqual(validation.validate_immutable_field("a", "a", Path("spec")), [])
        [e] = validation.validate_immutable_field("b", "a", Path("spec").child("x"))
        self.assertEqual((e.field, e.bad_value, e.detail), ("spec.x", "b", "field is immutable"))


class StrategyTest(unittest.TestCase):
    def test_description_defaults_as_a_crd(self):
        d = ResourceDescription("example.dev", "v1", "Widget", "widgets")
        self.assertEqual((d.list_kind, d.singular, d.namespaced, d.subresources),
                         ("WidgetList", "widget", True, ["status"]))
        self.assertEqual([c.json_path for c in d.printer_columns], ["@name", "@age"])

    def test_default_attrs_read_selectable_fields(self):
        class S(Strategy):
            def describe(self):
                return ResourceDescription("g", "v1", "K", "ks", selectable_fields=["spec.size", "spec.n", "spec.none"])
        labels, fields = S().get_attrs({"metadata": {"labels": {"a": "b"}}, "spec": {"size": "x", "n": 3}})
        self.assertEqual(labels, {"a": "b"})
        self.assertEqual(fields, {"spec.size": "x", "spec.n": "3", "spec.none": ""})


class GenerationTest(unittest.TestCase):
    def test_a_change_of_json_value_is_a_change(self):
        from wasm_apiserver.export import _spec_changed
        old = {"metadata": {"generation": 1}, "spec": {"x": 1, "y": "a"}}
        self.assertFalse(_spec_changed({"metadata": {}, "spec": {"y": "a", "x": 1}}, old))
        self.assertTrue(_spec_changed({"spec": {"x": True, "y": "a"}}, old))
        self.assertTrue(_spec_changed({"spec": {"x": 1.0, "y": "a"}}, old))
        self.assertFalse(_spec_changed({"spec": {"x": 1, "y": "a"}, "status": {"z": 1}}, old))


if __name__ == "__main__":
    unittest.main()


class AdmissionTest(unittest.TestCase):
    def test_responses_and_native_context_reads(self):
        from wasm_apiserver import admission as adm
        self.assertTrue(adm.allow().allowed)
        d = adm.deny("no", 422, "Invalid")
        self.assertEqual((d.allowed, d.code, d.reason, d.message), (False, 422, "Invalid", "no"))
        self.assertEqual(adm.mutate({"a": 1}).mutated_object, {"a": 1})
        ns = {"metadata": {"name": "dev", "labels": {"team": "a"}}}
        cm = {"metadata": {"name": "c", "namespace": "dev"}}
        adm.with_objects([("namespaces", ns), ("configmaps", cm)])
        self.assertEqual(adm.get_object("", "namespaces", "", "dev"), ns)
        self.assertIsNone(adm.get_object("", "namespaces", "", "prod"))
        self.assertEqual(adm.list_objects("", "configmaps", "dev"), [cm])
        self.assertEqual(adm.list_objects("", "configmaps", "prod"), [])
