#!/usr/bin/env python3
"""What kubectl explain and the API server read in the NcclJob CRD, without a cluster:

  - every property has a description (ours written by hand, the pod template's the API server's
    own), so `kubectl explain nccljob.<any field>` says what it is;
  - the pod template is Kubernetes' PodTemplateSpec, not an open object: no property of it keeps
    unknown fields, so a misspelled field is refused at kubectl apply (strict field validation);
  - the CRD stays well inside what the API server stores: etcd refuses a request over 1.5 MiB.
    (Its JSON is over the 256 KiB that client-side `kubectl apply` stores in an annotation, so it
    is installed with `kubectl apply --server-side` or by Helm.)

  check_crd_schema.py
"""
import json
import sys
from pathlib import Path

try:
    import yaml
except ImportError:
    sys.exit("check_crd_schema.py needs PyYAML: apt-get install python3-yaml (or pip install pyyaml)")

ROOT = Path(__file__).resolve().parents[3]
CRD = ROOT / "deploy" / "crd" / "nccl.dev_nccljobs.yaml"
MAX_JSON_BYTES = 1024 * 1024  # a third of etcd's 1.5 MiB left for managedFields and growth


def walk(schema, path, visit):
    visit(path, schema)
    for name, sub in schema.get("properties", {}).items():
        walk(sub, f"{path}.{name}", visit)
    if isinstance(schema.get("items"), dict):
        walk(schema["items"], f"{path}[]", visit)
    if isinstance(schema.get("additionalProperties"), dict):
        walk(schema["additionalProperties"], f"{path}{{}}", visit)


def main():
    crd = yaml.safe_load(CRD.read_text())
    errors = []
    for version in crd["spec"]["versions"]:
        root = version["schema"]["openAPIV3Schema"]

        def described(path, schema):
            # A property is a named field; a list's entries and a map's values are described by it.
            # The object's own metadata may hold nothing but rules on its name (the API server
            # refuses even a description there); kubectl explain shows ObjectMeta's.
            is_property = not path.endswith(("[]", "}")) and path not in ("", ".metadata")
            if is_property and not schema.get("description", "").strip():
                errors.append(f"{version['name']}: {path[1:]} has no description")
        walk(root, "", described)

        template = root["properties"]["spec"]["properties"]["template"]

        def closed(path, schema):
            if schema.get("x-kubernetes-preserve-unknown-fields"):
                errors.append(f"{version['name']}: spec.template{path} keeps unknown fields; "
                              "the template must be the PodTemplateSpec (deploy/crd/gen)")
        walk(template, "", closed)
        if "containers" not in template["properties"]["spec"].get("properties", {}):
            errors.append("spec.template.spec has no containers schema: run deploy/crd/gen/gen-template-schema.py")

    size = len(json.dumps(crd, separators=(",", ":")))
    if size > MAX_JSON_BYTES:
        errors.append(f"the CRD is {size} bytes of JSON, over the {MAX_JSON_BYTES} this check allows "
                      "(etcd refuses requests over 1.5 MiB)")
    for e in errors:
        print(f"check_crd_schema: {e}", file=sys.stderr)
    print(f"check_crd_schema: {CRD.relative_to(ROOT)}: {size} bytes as JSON, "
          f"{'ok' if not errors else str(len(errors)) + ' problems'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
