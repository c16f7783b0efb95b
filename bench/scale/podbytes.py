#!/usr/bin/env python3
"""Where the bytes of a pod as served go, part by part, for each shape podcost.py measured
(`podcost.py --breakdown FILE` writes FILE; this prints it):

  bench/scale/podbytes.py FILE

Each part is the compact JSON of that part (what every watcher of pods decodes per event); a
container's parts are its env, probes, securityContext, resources, ports, volumeMounts and the
rest; managedFields are split by manager, operation and subresource. A second table lists the
fields of the creator's managedFields entry that the API server fills in with the same value when
they are left out (podcost.py: server-side dry-run creates, one field left out at a time). The
creator owns them either way: a create is decoded, defaults included, before its fields are
recorded (apiserver endpoints/handlers/create.go), so leaving one out of the request saves its
bytes in the request only, not in the pod as served."""

import json
import sys

CONTAINER_PARTS = [("env", ("env", "envFrom")),
                   ("probes", ("readinessProbe", "livenessProbe", "startupProbe")),
                   ("securityContext", ("securityContext",)),
                   ("resources", ("resources",)),
                   ("ports", ("ports",)),
                   ("volumeMounts", ("volumeMounts",))]
SPEC_PARTS = ["volumes", "schedulingGroup", "workloadRef", "affinity", "tolerations", "resourceClaims"]
METADATA_PARTS = ["labels", "annotations", "ownerReferences", "finalizers"]
STATUS_PARTS = ["initContainerStatuses", "containerStatuses", "conditions"]


def size(value):
    """The bytes of `value` as compact JSON; 0 for an absent part."""
    return 0 if value is None else len(json.dumps(value, separators=(",", ":")))


def container_parts(prefix, container):
    out, rest = {}, dict(container)
    for part, keys in CONTAINER_PARTS:
        out[f"{prefix}.{part}"] = sum(size(container.get(k)) for k in keys)
        for k in keys:
            rest.pop(k, None)
    out[f"{prefix}.rest"] = size(rest)
    return out


def split(section, parts, prefix):
    """Bytes of each named part of `section` and of what remains."""
    out, rest = {}, dict(section or {})
    for part in parts:
        out[f"{prefix}.{part}"] = size(rest.pop(part, None))
    out[f"{prefix}.rest"] = size(rest)
    return out


def parts(pod):
    """{part: bytes} of one pod as served; the parts add up to the whole but for JSON's glue."""
    md = dict(pod.get("metadata", {}))
    managed = md.pop("managedFields", [])
    out = split(md, METADATA_PARTS, "metadata")
    for e in managed:
        who = f"{e.get('manager')}/{e.get('operation')}" + (f"/{e['subresource']}" if e.get("subresource") else "")
        out[f"managedFields {who}"] = out.get(f"managedFields {who}", 0) + size(e)
    spec = dict(pod.get("spec", {}))
    for key in ("initContainers", "containers"):
        for c in spec.pop(key, None) or []:
            out.update(container_parts(f"spec.{key}[{c.get('name')}]", c))
    out.update(split(spec, SPEC_PARTS, "spec"))
    out.update(split(pod.get("status"), STATUS_PARTS, "status"))
    out["whole pod"] = size(pod)
    return out


def table(served):
    """Markdown: one row per part, one column per shape; parts absent from every shape left out."""
    shapes = list(served)
    by_shape = {s: parts(served[s]) for s in shapes}
    rows = []
    for p in by_shape[shapes[0]]:
        if p not in rows:
            rows.append(p)
    for s in shapes[1:]:
        rows += [p for p in by_shape[s] if p not in rows]
    rows.remove("whole pod")
    rows.append("whole pod")
    lines = ["| part | " + " | ".join(shapes) + " |", "| --- " * (len(shapes) + 1) + "|"]
    for p in rows:
        cells = [by_shape[s].get(p, 0) for s in shapes]
        if any(cells):
            lines.append(f"| {p} | " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def defaults_table(defaults):
    """Markdown: the fields a shape's creator owns that equal the API server's own defaults."""
    lines = ["| shape | field | value | bytes |", "| --- | --- | --- | --- |"]
    for shape, fields in defaults.items():
        for f in fields:
            lines.append(f"| {shape} | `{f['path']}` | `{json.dumps(f['value'])}` | {f['bytes']} |")
    return "\n".join(lines)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        data = json.load(f)
    print(table(data["served"]))
    print()
    print(defaults_table(data.get("defaults_sent", {})))


if __name__ == "__main__":
    main()
