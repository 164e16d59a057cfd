"""kubesim.structural: pruning, defaulting and validation of custom resources against a
structural schema, with the apiserver's (field, reason, message) triples. The schemas are
our own small ones. CEL tests need node and @bufbuild/cel (`make deps`)."""
import copy
import os
import shutil
import unittest

from kubesim import cel as celmod
from kubesim import structural as st


def obj(spec=None, **top):
    o = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}}
    if spec is not None:
        o["spec"] = spec
    o.update(top)
    return o


def root(spec_schema, **extra):
    s = {"type": "object", "properties": {"spec": spec_schema}}
    s["properties"].update(extra)
    return s


def obj_schema(props, **kw):
    return dict({"type": "object", "properties": props}, **kw)


def check(spec_props, spec, **kw):
    return st.validate(root(obj_schema(spec_props, **kw)), obj(spec))


class TypeTest(unittest.TestCase):
    def test_integer(self):
        p = {"count": {"type": "integer"}}
        self.assertEqual(check(p, {"count": 3}), [])
        self.assertEqual(check(p, {"count": 2.0}), [])        # a float that is an integer passes
        self.assertEqual(check(p, {"count": "string"}), [
            ("spec.count", "FieldValueTypeInvalid",
             'Invalid value: "string": spec.count in body must be of type integer: "string"')])
        self.assertEqual(check(p, {"count": True}), [
            ("spec.count", "FieldValueTypeInvalid",
             'Invalid value: "boolean": spec.count in body must be of type integer: "boolean"')])
        self.assertEqual(check(p, {"count": 1.5}), [
            ("spec.count", "FieldValueTypeInvalid",
             'Invalid value: "number": spec.count in body must be of type integer: "number"')])

    def test_number_boolean_string_array_object(self):
        p = {"ratio": {"type": "number"}, "on": {"type": "boolean"}, "name": {"type": "string"},
             "list": {"type": "array", "items": {"type": "string"}}, "sub": {"type": "object"}}
        self.assertEqual(check(p, {"ratio": 1, "on": False, "name": "", "list": [], "sub": {}}), [])
        self.assertEqual(check(p, {"ratio": "1", "on": "yes", "name": 5, "list": {}, "sub": []}), [
            ("spec.ratio", "FieldValueTypeInvalid",
             'Invalid value: "string": spec.ratio in body must be of type number: "string"'),
            ("spec.on", "FieldValueTypeInvalid",
             'Invalid value: "string": spec.on in body must be of type boolean: "string"'),
            ("spec.name", "FieldValueTypeInvalid",
             'Invalid value: "integer": spec.name in body must be of type string: "integer"'),
            ("spec.list", "FieldValueTypeInvalid",
             'Invalid value: "object": spec.list in body must be of type array: "object"'),
            ("spec.sub", "FieldValueTypeInvalid",
             'Invalid value: "array": spec.sub in body must be of type object: "array"')])

    def test_null_and_nullable(self):
        p = {"list": {"type": "array", "items": {"type": "string"}},
             "opt": {"type": "array", "items": {"type": "string", "nullable": True}}}
        self.assertEqual(check(p, {"list": ["a"], "opt": [None]}), [])
        self.assertEqual(check(p, {"list": ["a", None]}), [
            ("spec.list[1]", "FieldValueTypeInvalid",
             'Invalid value: "null": spec.list[1] in body must be of type string: "null"')])

    def test_int_or_string(self):
        p = {"port": {"x-kubernetes-int-or-string": True}}
        self.assertEqual(check(p, {"port": 80}), [])
        self.assertEqual(check(p, {"port": "http"}), [])
        self.assertEqual(check(p, {"port": 1.5}), [
            ("spec.port", "FieldValueTypeInvalid",
             'Invalid value: "number": spec.port in body must be of type integer,string: "number"')])

    def test_preserve_unknown_fields_without_type_takes_anything(self):
        p = {"extra": {"x-kubernetes-preserve-unknown-fields": True}}
        for v in (1, "x", [1], {"a": {"b": 1}}):
            self.assertEqual(check(p, {"extra": v}), [])


class KeywordTest(unittest.TestCase):
    def test_required(self):
        p = {"image": {"type": "string"}, "tag": {"type": "string"}}
        self.assertEqual(check(p, {"image": "x", "tag": "y"}, required=["image", "tag"]), [])
        self.assertEqual(check(p, {"tag": "y"}, required=["image", "tag"]),
                         [("spec.image", "FieldValueRequired", "Required value")])
        s = root(obj_schema(p, required=["image"]))
        s["required"] = ["spec"]
        self.assertEqual(st.validate(s, obj()), [("spec", "FieldValueRequired", "Required value")])

    def test_enum(self):
        p = {"policy": {"type": "string", "enum": ["a", "b"]}, "level": {"type": "integer", "enum": [1, 2]}}
        self.assertEqual(check(p, {"policy": "b", "level": 2}), [])
        self.assertEqual(check(p, {"policy": "x", "level": 3}), [
            ("spec.policy", "FieldValueNotSupported", 'Unsupported value: "x": supported values: "a", "b"'),
            ("spec.level", "FieldValueNotSupported", 'Unsupported value: 3: supported values: "1", "2"')])

    def test_pattern_min_max_length(self):
        p = {"name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"}}
        self.assertEqual(check(p, {"name": "abc"}), [])
        self.assertEqual(check(p, {"name": "Abc"}), [
            ("spec.name", "FieldValueInvalid", "Invalid value: \"Abc\": spec.name in body should match '^[a-z]+$'")])
        self.assertEqual(check(p, {"name": "a"}), [
            ("spec.name", "FieldValueInvalid",
             'Invalid value: "a": spec.name in body should be at least 2 chars long')])
        self.assertEqual(check(p, {"name": "abcdef"}), [
            ("spec.name", "FieldValueTooLong", "Too long: may not be more than 5 bytes")])
        self.assertEqual(check({"n": {"type": "string", "maxLength": 3}}, {"n": "ééé"}), [])   # characters

    def test_minimum_maximum(self):
        p = {"replicas": {"type": "integer", "minimum": 1, "maximum": 10},
             "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1.5,
                       "exclusiveMaximum": True}}
        self.assertEqual(check(p, {"replicas": 1, "ratio": 0.5}), [])
        self.assertEqual(check(p, {"replicas": 10, "ratio": 1.25}), [])
        self.assertEqual(check(p, {"replicas": 0, "ratio": 0}), [
            ("spec.replicas", "FieldValueInvalid",
             "Invalid value: 0: spec.replicas in body should be greater than or equal to 1"),
            ("spec.ratio", "FieldValueInvalid", "Invalid value: 0: spec.ratio in body should be greater than 0")])
        self.assertEqual(check(p, {"replicas": 11, "ratio": 1.5}), [
            ("spec.replicas", "FieldValueInvalid",
             "Invalid value: 11: spec.replicas in body should be less than or equal to 10"),
            ("spec.ratio", "FieldValueInvalid", "Invalid value: 1.5: spec.ratio in body should be less than 1.5")])

    def test_multiple_of(self):
        p = {"step": {"type": "integer", "multipleOf": 5}, "frac": {"type": "number", "multipleOf": 0.5}}
        self.assertEqual(check(p, {"step": 15, "frac": 2.5}), [])
        self.assertEqual(check(p, {"step": 7, "frac": 2.25}), [
            ("spec.step", "FieldValueInvalid", "Invalid value: 7: spec.step in body should be a multiple of 5"),
            ("spec.frac", "FieldValueInvalid", "Invalid value: 2.25: spec.frac in body should be a multiple of 0.5")])

    def test_min_max_items(self):
        p = {"tags": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}}}
        self.assertEqual(check(p, {"tags": ["a"]}), [])
        self.assertEqual(check(p, {"tags": []}), [
            ("spec.tags", "FieldValueInvalid", "Invalid value: 0: spec.tags in body should have at least 1 items")])
        self.assertEqual(check(p, {"tags": ["a", "b", "c"]}), [
            ("spec.tags", "FieldValueTooMany", "Too many: 3: must have at most 2 items")])

    def test_min_max_properties(self):
        p = {"labels": {"type": "object", "minProperties": 1, "maxProperties": 2,
                        "additionalProperties": {"type": "string"}}}
        self.assertEqual(check(p, {"labels": {"a": "1"}}), [])
        self.assertEqual(check(p, {"labels": {}}), [
            ("spec.labels", "FieldValueInvalid",
             "Invalid value: 0: spec.labels in body should have at least 1 properties")])
        # the apiserver stops at the count: the bad value below is not reported
        self.assertEqual(check(p, {"labels": {"a": "1", "b": "2", "c": 3}}), [
            ("spec.labels", "FieldValueTooMany", "Too many: 3: must have at most 2 items")])

    def test_additional_properties_apply_to_map_values(self):
        p = {"labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 3}}}
        self.assertEqual(check(p, {"labels": {"a": "x", "b": "y"}}), [])
        self.assertEqual(check(p, {"labels": {"a": 5, "b": "long"}}), [
            ("spec.labels.a", "FieldValueTypeInvalid",
             'Invalid value: "integer": spec.labels.a in body must be of type string: "integer"'),
            ("spec.labels.b", "FieldValueTooLong", "Too long: may not be more than 3 bytes")])

    def test_items_paths(self):
        p = {"containers": {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "port": {"type": "integer", "minimum": 1}}}}}
        self.assertEqual(check(p, {"containers": [{"name": "a"}, {"port": 0}]}), [
            ("spec.containers[1].port", "FieldValueInvalid",
             "Invalid value: 0: spec.containers[1].port in body should be greater than or equal to 1"),
            ("spec.containers[1].name", "FieldValueRequired", "Required value")])

    def test_metadata_is_validated_when_the_schema_describes_it(self):
        s = root(obj_schema({}), metadata={"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 1}}})
        self.assertEqual(st.validate(s, obj({})), [
            ("metadata.name", "FieldValueTooLong", "Too long: may not be more than 1 bytes")])


class AlternativesTest(unittest.TestCase):
    def test_any_of_as_kubebuilder_writes_int_or_string(self):
        p = {"surge": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}],
                       "pattern": "^[0-9]+%$"}}
        self.assertEqual(check(p, {"surge": 1}), [])
        self.assertEqual(check(p, {"surge": "25%"}), [])
        self.assertEqual(check(p, {"surge": True}), [
            ("spec.surge", "FieldValueTypeInvalid",
             'Invalid value: "boolean": spec.surge in body must be of type integer,string: "boolean"'),
            ("<nil>", "FieldValueInvalid", 'Invalid value: "": "spec.surge" must validate at least one schema (anyOf)'),
            ("spec.surge", "FieldValueTypeInvalid",
             'Invalid value: "boolean": spec.surge in body must be of type integer: "boolean"')])

    def test_one_of_all_of_not(self):
        p = {"n": {"type": "integer", "oneOf": [{"minimum": 0}, {"maximum": 10}],
                   "allOf": [{"maximum": 100}], "not": {"enum": [13]}}}
        self.assertEqual(check(p, {"n": -5}), [])
        self.assertEqual(check(p, {"n": 5}), [
            ("<nil>", "FieldValueInvalid",
             'Invalid value: "": "spec.n" must validate one and only one schema (oneOf). Found 2 valid alternatives')])
        self.assertEqual(check(p, {"n": 200}), [
            ("spec.n", "FieldValueInvalid", "Invalid value: 200: spec.n in body should be less than or equal to 100"),
            ("<nil>", "FieldValueInvalid", 'Invalid value: "": "spec.n" must validate all the schemas (allOf). '
             "None validated")])
        self.assertEqual(check(p, {"n": 13}), [
            ("<nil>", "FieldValueInvalid", 'Invalid value: "": "spec.n" must not validate the schema (not)')])


class RatchetTest(unittest.TestCase):
    """On update, a value equal to its old value passes even if invalid (1.30+ default)."""
    S = root(obj_schema({
        "name": {"type": "string", "maxLength": 3},
        "size": {"type": "integer", "minimum": 1},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 2}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "properties": {"name": {"type": "string"},
                                                             "port": {"type": "integer", "maximum": 100}}}},
    }, required=["size"]))

    def v(self, new, old=None):
        return st.validate(self.S, obj(new), old=None if old is None else obj(old))

    def test_unchanged_invalid_values_pass(self):
        old = {"name": "toolong", "size": 0, "tags": ["abc"], "ports": [{"name": "a", "port": 500}]}
        self.assertEqual(len(self.v(old)), 4)                                   # create: all four
        new = {"name": "toolong", "size": 0, "tags": ["abc"], "ports": [{"name": "b", "port": 1},
                                                                        {"name": "a", "port": 500}]}
        self.assertEqual(self.v(new, old), [])

    def test_changed_or_new_values_are_checked(self):
        old = {"name": "toolong", "size": 0, "tags": ["abc"], "ports": [{"name": "a", "port": 500}]}
        new = {"name": "toolong2", "size": 0, "tags": ["abc", "x"], "ports": [{"name": "a", "port": 501}]}
        self.assertEqual(self.v(new, old), [
            ("spec.name", "FieldValueTooLong", "Too long: may not be more than 3 bytes"),
            ("spec.tags[0]", "FieldValueTooLong", "Too long: may not be more than 2 bytes"),  # a changed atomic list
            ("spec.ports[0].port", "FieldValueInvalid",
             "Invalid value: 501: spec.ports[0].port in body should be less than or equal to 100")])
        self.assertEqual(self.v({"name": "ok", "tags": []}, {"name": "ok"}),
                         [("spec.size", "FieldValueRequired", "Required value")])


class FormatTest(unittest.TestCase):
    def fmt(self, fmt, value, typ="string"):
        return check({"v": {"type": typ, "format": fmt}}, {"v": value})

    def bad(self, fmt, value):
        return [("spec.v", "FieldValueTypeInvalid",
                 "Invalid value: %s: spec.v in body must be of type %s: %s" % (st.go_quote(value), fmt,
                                                                               st.go_quote(value)))]

    def test_string_formats(self):
        cases = {
            "date": ("2026-02-28", "2026-02-30"),
            "date-time": ("2026-02-28T10:00:00Z", "2026-02-28 10:00"),
            "byte": ("aGVsbG8=", "not base64!"),
            "uuid": ("123e4567-e89b-12d3-a456-426614174000", "123e4567"),
            "hostname": ("node-1.example.com", "-bad-.example"),
            "ipv4": ("10.0.0.1", "10.0.0.256"),
            "ipv6": ("fe80::1", "10.0.0.1"),
            "cidr": ("10.0.0.0/8", "10.0.0.0"),
            "mac": ("00:1a:2b:3c:4d:5e", "00:1a"),
            "quantity": ("500Mi", "5 Mi"),
        }
        for fmt, (good, bad) in cases.items():
            with self.subTest(fmt=fmt):
                self.assertEqual(self.fmt(fmt, good), [])
                self.assertEqual(self.fmt(fmt, bad), self.bad(fmt, bad))

    def test_formats_the_apiserver_ignores(self):
        self.assertEqual(self.fmt("int32", 2 ** 40, "integer"), [])     # no range check for CRDs
        self.assertEqual(self.fmt("int64", 2 ** 40, "integer"), [])
        self.assertEqual(self.fmt("k8s-short-name", "Not A Name"), [])  # 1.34+ only
        self.assertEqual(self.fmt("made-up", "anything"), [])
        self.assertEqual(self.fmt("date", 5, "integer"), [])             # stripped on a non-string type


class ListTypeTest(unittest.TestCase):
    def test_set(self):
        p = {"tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
             "nums": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "number"}}}
        self.assertEqual(check(p, {"tags": ["a", "b"], "nums": [1, 1.5]}), [])
        self.assertEqual(check(p, {"tags": ["a", "b", "a", "a", "b"], "nums": [2, 2]}), [
            ("spec.tags[2]", "FieldValueDuplicate", 'Duplicate value: "a"'),
            ("spec.tags[4]", "FieldValueDuplicate", 'Duplicate value: "b"'),
            ("spec.nums[1]", "FieldValueDuplicate", "Duplicate value: 2")])

    def test_map_type_changes_nothing_here(self):
        for mt in ("atomic", "granular"):
            p = {"sel": {"type": "object", "x-kubernetes-map-type": mt, "additionalProperties": {"type": "string"}}}
            self.assertEqual(check(p, {"sel": {"a": "1"}}), [])
            self.assertEqual(check(p, {"sel": {"a": 1}}), [
                ("spec.sel.a", "FieldValueTypeInvalid",
                 'Invalid value: "integer": spec.sel.a in body must be of type string: "integer"')])

    def test_atomic_allows_duplicates(self):
        p = {"tags": {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string"}}}
        self.assertEqual(check(p, {"tags": ["a", "a"]}), [])

    def test_map_one_key(self):
        p = {"ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                       "items": {"type": "object", "properties": {"name": {"type": "string"},
                                                                  "port": {"type": "integer"}}}}}
        self.assertEqual(check(p, {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 1}]}), [])
        self.assertEqual(check(p, {"ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}, {"port": 3},
                                             {"port": 4}]}), [
            ("spec.ports[1]", "FieldValueDuplicate", 'Duplicate value: map[string]interface {}{"name":"a"}'),
            ("spec.ports[3]", "FieldValueDuplicate", "Duplicate value: map[string]interface {}{}")])

    def test_map_two_keys(self):
        p = {"routes": {"type": "array", "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["host", "port"],
                        "items": {"type": "object", "properties": {"host": {"type": "string"},
                                                                   "port": {"type": "integer"}}}}}
        self.assertEqual(check(p, {"routes": [{"host": "a", "port": 1}, {"host": "a", "port": 2}]}), [])
        self.assertEqual(check(p, {"routes": [{"host": "a", "port": 1}, {"port": 1, "host": "a"}]}), [
            ("spec.routes[1]", "FieldValueDuplicate",
             'Duplicate value: map[string]interface {}{"host":"a", "port":1}')])

    def test_duplicates_already_in_the_old_object_are_let_through(self):
        p = {"tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}
        s = root(obj_schema(p))
        self.assertEqual(st.validate(s, obj({"tags": ["a", "a", "c"]}), old=obj({"tags": ["a", "a"]})), [])
        self.assertEqual(st.validate(s, obj({"tags": ["a", "a"]}), old=obj({"tags": ["a"]})),
                         [("spec.tags[1]", "FieldValueDuplicate", 'Duplicate value: "a"')])

    def test_map_items_must_be_objects(self):
        p = {"ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                       "items": {"x-kubernetes-preserve-unknown-fields": True}}}
        self.assertEqual(check(p, {"ports": [{"name": "a"}, "x"]}), [
            ("spec.ports[1]", "FieldValueInvalid",
             'Invalid value: "x": must be an object for an array of list-type map')])


class EmbeddedResourceTest(unittest.TestCase):
    P = {"template": {"type": "object", "x-kubernetes-embedded-resource": True,
                      "x-kubernetes-preserve-unknown-fields": True}}

    def test_needs_api_version_and_kind(self):
        self.assertEqual(check(self.P, {"template": {"apiVersion": "v1", "kind": "Pod"}}), [])
        self.assertEqual(check(self.P, {"template": {"metadata": {}}}), [
            ("spec.template.apiVersion", "FieldValueRequired", "Required value: must not be empty"),
            ("spec.template.kind", "FieldValueRequired", "Required value: must not be empty")])
        self.assertEqual(check(self.P, {"template": {"apiVersion": "", "kind": 5}}), [
            ("spec.template.apiVersion", "FieldValueInvalid", 'Invalid value: "": must not be empty'),
            ("spec.template.kind", "FieldValueInvalid", "Invalid value: 5: must be a string")])


class PruneTest(unittest.TestCase):
    S = root(obj_schema({
        "image": {"type": "string"},
        "containers": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "labels": {"type": "object", "additionalProperties": {"type": "object",
                                                              "properties": {"v": {"type": "string"}}}},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                  "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
        "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}}},
        "opaque": {"type": "object"},
    }), status={"type": "object", "properties": {"ready": {"type": "boolean"}}})

    def test_nested_and_paths_sorted(self):
        o = obj({"image": "x", "foo": 1, "containers": [{"name": "a", "bar": 1}, {"baz": 2}]}, status={"zz": 1},
                extraTop=True)
        self.assertEqual(st.prune(self.S, o), ["extraTop", "spec.containers[0].bar", "spec.containers[1].baz",
                                               "spec.foo", "status.zz"])
        self.assertEqual(o, obj({"image": "x", "containers": [{"name": "a"}, {}]}, status={}))

    def test_root_meta_fields_and_metadata_content_kept(self):
        o = obj({})
        o["metadata"]["labels"] = {"a": "b"}
        o["metadata"]["bogus"] = 1
        want = copy.deepcopy(o)
        self.assertEqual(st.prune(self.S, o), [])
        self.assertEqual(o, want)

    def test_preserve_unknown_fields_stops_pruning_but_known_fields_are_walked(self):
        o = obj({"extra": {"anything": {"deep": 1}, "known": {"a": "x", "b": 2}}})
        self.assertEqual(st.prune(self.S, o), ["spec.extra.known.b"])
        self.assertEqual(o["spec"]["extra"], {"anything": {"deep": 1}, "known": {"a": "x"}})

    def test_embedded_resource_keeps_its_type_and_object_meta(self):
        o = obj({"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "x": 1},
                              "spec": {"x": "1", "y": 2}, "other": 3}})
        self.assertEqual(st.prune(self.S, o), ["spec.template.other", "spec.template.spec.y"])
        self.assertEqual(o["spec"]["template"], {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "x": 1},
                                                 "spec": {"x": "1"}})

    def test_additional_properties_schema_prunes_map_values(self):
        o = obj({"labels": {"k1": {"v": "a", "w": 1}, "k2": {}}})
        self.assertEqual(st.prune(self.S, o), ["spec.labels.k1.w"])
        self.assertEqual(o["spec"]["labels"], {"k1": {"v": "a"}, "k2": {}})

    def test_object_without_properties_loses_everything(self):
        o = obj({"opaque": {"a": 1, "b": {"c": 2}}})
        self.assertEqual(st.prune(self.S, o), ["spec.opaque.a", "spec.opaque.b"])
        self.assertEqual(o["spec"]["opaque"], {})

    def test_non_nullable_nulls_without_default_are_dropped(self):
        s = root(obj_schema({"a": {"type": "string"}, "b": {"type": "string", "nullable": True},
                             "c": {"type": "string", "default": "x"}}))
        o = obj({"a": None, "b": None, "c": None})
        self.assertEqual(st.prune(s, o), [])
        self.assertEqual(o["spec"], {"b": None, "c": None})
        st.apply_defaults(s, o)
        self.assertEqual(o["spec"], {"b": None, "c": "x"})


class DefaultTest(unittest.TestCase):
    S = root(obj_schema({
        "replicas": {"type": "integer", "default": 1},
        "strategy": {"type": "object", "default": {}, "properties": {
            "type": {"type": "string", "default": "Rolling"},
            "maxSurge": {"type": "integer", "default": 2}}},
        "labels": {"type": "object", "additionalProperties": {"type": "string", "default": "none"}},
        "ports": {"type": "array", "items": {"type": "object", "default": {"port": 80}, "properties": {
            "port": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"}}}},
        "note": {"type": "string", "nullable": True, "default": "n"},
    }), status={"type": "object", "properties": {"phase": {"type": "string", "default": "Pending"}}})

    def test_nested_defaults_inside_a_defaulted_object(self):
        o = obj({})
        st.apply_defaults(self.S, o)
        self.assertEqual(o["spec"], {"replicas": 1, "strategy": {"type": "Rolling", "maxSurge": 2}, "note": "n"})
        self.assertNotIn("status", o)                        # only properties of present objects

    def test_present_values_are_not_overridden(self):
        o = obj({"replicas": 3, "strategy": {"type": "Recreate"}, "note": None})
        st.apply_defaults(self.S, o)
        self.assertEqual(o["spec"], {"replicas": 3, "strategy": {"type": "Recreate", "maxSurge": 2}, "note": None})

    def test_map_values_and_list_items(self):
        o = obj({"labels": {"a": "x", "b": None}, "ports": [None, {"port": 81}, {"protocol": "UDP"}]})
        st.apply_defaults(self.S, o)
        self.assertEqual(o["spec"]["labels"], {"a": "x", "b": "none"})
        self.assertEqual(o["spec"]["ports"], [{"port": 80, "protocol": "TCP"}, {"port": 81, "protocol": "TCP"},
                                              {"protocol": "UDP"}])

    def test_non_nullable_null_gets_the_default(self):
        o = obj({"replicas": None}, status={})
        st.apply_defaults(self.S, o)
        self.assertEqual(o["spec"]["replicas"], 1)
        self.assertEqual(o["status"], {"phase": "Pending"})

    def test_defaults_are_copies(self):
        a, b = obj({}), obj({})
        st.apply_defaults(self.S, a)
        st.apply_defaults(self.S, b)
        a["spec"]["strategy"]["type"] = "changed"
        self.assertEqual(b["spec"]["strategy"]["type"], "Rolling")
        self.assertEqual(self.S["properties"]["spec"]["properties"]["strategy"]["default"], {})


class CheckSchemaTest(unittest.TestCase):
    def test_missing_types(self):
        s = {"type": "object", "properties": {"spec": {"properties": {
            "list": {"type": "array", "items": {}},
            "port": {"x-kubernetes-int-or-string": True},
            "free": {"x-kubernetes-preserve-unknown-fields": True},
            "map": {"type": "object", "additionalProperties": {}}}}}}
        p = "spec.versions[0].schema.openAPIV3Schema"
        self.assertEqual(st.check_schema(s), [
            (p + ".properties[spec].type", "FieldValueRequired",
             "Required value: must not be empty for specified object fields"),
            (p + ".properties[spec].properties[list].items.type", "FieldValueRequired",
             "Required value: must not be empty for specified array items"),
            (p + ".properties[spec].properties[map].additionalProperties.type", "FieldValueRequired",
             "Required value: must not be empty for specified object fields")])

    def test_root_and_embedded(self):
        p = "spec.versions[1].schema.openAPIV3Schema"
        self.assertEqual(st.check_schema({}, p), [
            (p + ".type", "FieldValueRequired", "Required value: must not be empty at the root")])
        self.assertEqual(st.check_schema({"type": "string"}, p), [
            (p + ".type", "FieldValueInvalid", 'Invalid value: "string": must be object at the root')])
        s = {"type": "object", "properties": {"t": {"type": "array", "x-kubernetes-embedded-resource": True}}}
        self.assertEqual(st.check_schema(s, p), [
            (p + ".properties[t].type", "FieldValueInvalid",
             'Invalid value: "array": must be object if x-kubernetes-embedded-resource is true')])


def cel_missing():
    if shutil.which("node") is None:
        return "node is not installed"
    if not os.path.isdir(os.path.join(celmod.HELPER_DIR, "node_modules", "@bufbuild", "cel")):
        return "@bufbuild/cel is not installed (make deps)"
    return None


@unittest.skipIf(cel_missing(), "CEL rules need the helper: %s" % cel_missing())
class CelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cel = celmod.CelEvaluator()

    @classmethod
    def tearDownClass(cls):
        cls.cel.close()

    def spec_rules(self, rules, props=None):
        props = props or {"min": {"type": "integer"}, "max": {"type": "integer"}, "name": {"type": "string"}}
        return root(obj_schema(props, **{"x-kubernetes-validations": rules}))

    def v(self, schema, spec, old=None):
        return st.validate(schema, obj(spec), old=None if old is None else obj(old), cel=self.cel)

    def test_rule_without_message(self):
        s = self.spec_rules([{"rule": "self.min <= self.max"}])
        self.assertEqual(self.v(s, {"min": 1, "max": 2}), [])
        self.assertEqual(self.v(s, {"min": 3, "max": 2}), [
            ("spec", "FieldValueInvalid", 'Invalid value: "object": failed rule: self.min <= self.max')])

    def test_message_reason_and_field_path(self):
        s = self.spec_rules([
            {"rule": "self.min <= self.max", "message": "min must not exceed max", "fieldPath": ".max"},
            {"rule": "!has(self.name) || self.name != 'forbidden'", "message": "name not allowed ",
             "reason": "FieldValueForbidden"},
            {"rule": "has(self.name)", "message": "name is needed", "reason": "FieldValueRequired"},
            {"rule": "self.min != 0", "reason": "FieldValueDuplicate"}])
        self.assertEqual(self.v(s, {"min": 3, "max": 2, "name": "forbidden"}), [
            ("spec.max", "FieldValueInvalid", 'Invalid value: "object": min must not exceed max'),
            ("spec", "FieldValueForbidden", "Forbidden: name not allowed")])
        self.assertEqual(self.v(s, {"min": 0, "max": 2}), [
            ("spec", "FieldValueRequired", "Required value: name is needed"),
            ("spec", "FieldValueDuplicate", 'Duplicate value: "object"')])

    def test_message_expression(self):
        s = self.spec_rules([
            {"rule": "self.min <= self.max", "message": "fallback",
             "messageExpression": "'min ' + string(self.min) + ' exceeds max ' + string(self.max)"},
            {"rule": "self.min > 0", "message": "fallback used", "messageExpression": "''"}])
        self.assertEqual(self.v(s, {"min": 0, "max": -1}), [
            ("spec", "FieldValueInvalid", 'Invalid value: "object": min 0 exceeds max -1'),
            ("spec", "FieldValueInvalid", 'Invalid value: "object": fallback used')])

    def test_scalar_and_root_rules(self):
        s = root(obj_schema({"name": {"type": "string", "x-kubernetes-validations": [
            {"rule": "self.startsWith('w-')", "message": "must start with w-"}]}}),
            **{})
        s["x-kubernetes-validations"] = [{"rule": "self.metadata.name == 'w1'"}]
        self.assertEqual(self.v(s, {"name": "w-1"}), [])
        o = obj({"name": "x"})
        o["metadata"]["name"] = "other"
        self.assertEqual(st.validate(s, o, cel=self.cel), [
            ("<nil>", "FieldValueInvalid", 'Invalid value: "object": failed rule: self.metadata.name == \'w1\''),
            ("spec.name", "FieldValueInvalid", 'Invalid value: "string": must start with w-')])

    def test_transition_rule_runs_only_with_an_old_value(self):
        props = {"name": {"type": "string", "x-kubernetes-validations": [
            {"rule": "self == oldSelf", "message": "name is immutable"}]}}
        s = root(obj_schema(props))
        self.assertEqual(self.v(s, {"name": "a"}), [])                       # create
        self.assertEqual(self.v(s, {"name": "a"}, old={}), [])               # no old value
        self.assertEqual(self.v(s, {"name": "a"}, old={"name": "a"}), [])
        self.assertEqual(self.v(s, {"name": "b"}, old={"name": "a"}), [
            ("spec.name", "FieldValueInvalid", 'Invalid value: "string": name is immutable')])

    def test_transition_rule_on_list_map_items_follows_the_key(self):
        props = {"ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                           "items": {"type": "object", "x-kubernetes-validations": [
                               {"rule": "self.port == oldSelf.port", "message": "port is immutable"}],
                               "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}}}
        s = root(obj_schema(props))
        old = {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}]}
        self.assertEqual(self.v(s, {"ports": [{"name": "b", "port": 2}, {"name": "a", "port": 1},
                                              {"name": "c", "port": 9}]}, old=old), [])
        self.assertEqual(self.v(s, {"ports": [{"name": "b", "port": 3}]}, old=old), [
            ("spec.ports[0]", "FieldValueInvalid", 'Invalid value: "object": port is immutable')])

    def test_unchanged_values_ratchet_but_transition_rules_do_not(self):
        props = {"name": {"type": "string", "x-kubernetes-validations": [
            {"rule": "self.size() <= 3", "message": "name too long"},
            {"rule": "oldSelf == 'keep'", "message": "was not keep"}]}, "other": {"type": "integer"}}
        s = root(obj_schema(props))
        self.assertEqual(self.v(s, {"name": "toolong"}), [
            ("spec.name", "FieldValueInvalid", 'Invalid value: "string": name too long')])
        self.assertEqual(self.v(s, {"name": "toolong", "other": 1}, old={"name": "toolong"}), [
            ("spec.name", "FieldValueInvalid", 'Invalid value: "string": was not keep')])
        self.assertEqual(self.v(s, {"name": "toolong2"}, old={"name": "keep"}), [
            ("spec.name", "FieldValueInvalid", 'Invalid value: "string": name too long')])

    def test_map_values_are_keyed(self):
        props = {"limits": {"type": "object", "additionalProperties": {"type": "integer", "x-kubernetes-validations": [
            {"rule": "self >= 0", "message": "must not be negative"}]}}}
        self.assertEqual(self.v(root(obj_schema(props)), {"limits": {"cpu": 1, "mem": -1}}), [
            ("spec.limits[mem]", "FieldValueInvalid", 'Invalid value: "integer": must not be negative')])

    def test_evaluation_error(self):
        s = self.spec_rules([{"rule": "self.name == 'x'", "message": "name must be x"}])
        self.assertEqual(self.v(s, {"min": 1}), [
            ("spec", "FieldValueInvalid",
             'Invalid value: "object": no such key: name evaluating rule: name must be x')])

    def test_schema_errors_block_the_rules(self):
        s = self.spec_rules([{"rule": "self.min <= self.max"}])
        self.assertEqual(self.v(s, {"min": "1", "max": 0}), [
            ("spec.min", "FieldValueTypeInvalid",
             'Invalid value: "string": spec.min in body must be of type integer: "string"'),
            ("<nil>", "FieldValueInvalid", 'Invalid value: "null": some validation rules were not checked because '
             "the object was invalid; correct the existing errors to complete validation")])

    def test_no_evaluator_no_rules(self):
        s = self.spec_rules([{"rule": "false"}])
        self.assertEqual(st.validate(s, obj({})), [])

    def test_check_schema_compiles_rules(self):
        s = self.spec_rules([{"rule": "self.min <= self.max"}, {"rule": "self.min <=", "message": "m"}])
        got = st.check_schema(s, cel=self.cel)
        self.assertEqual(len(got), 1, got)
        path, reason, msg = got[0]
        self.assertEqual((path, reason), ("spec.versions[0].schema.openAPIV3Schema.properties[spec]"
                                          ".x-kubernetes-validations[1].rule", "FieldValueInvalid"))
        self.assertTrue(msg.startswith('Invalid value: apiextensions.ValidationRule{Rule:"self.min <=", '
                                       'Message:"m", MessageExpression:"", '
                                       "Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", "
                                       "OptionalOldSelf:(*bool)(nil)}: compilation failed: "), msg)


class GoTextTest(unittest.TestCase):
    def test_go_float(self):
        for f, want in ((1.0, "1"), (0.5, "0.5"), (123456.0, "123456"), (1e6, "1e+06"),
                        (1234567.0, "1.234567e+06"), (0.0001, "0.0001"), (0.00001, "1e-05"), (-2.5, "-2.5")):
            self.assertEqual(st.go_float(f), want)

    def test_go_quote_and_gosyntax(self):
        self.assertEqual(st.go_quote('a"b\n\x01é'), '"a\\"b\\n\\x01é"')
        self.assertEqual(st.go_gosyntax({"b": [1, 2.5, None], "a": True}),
                         'map[string]interface {}{"a":true, "b":[]interface {}{1, 2.5, interface {}(nil)}}')


if __name__ == "__main__":
    unittest.main()
