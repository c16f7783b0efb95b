#!/usr/bin/env python3
"""Checks what an unpacked image says about itself (called by check.sh, one image a call):

  check_sbom.py IMAGE ROOTFS CONFIG_JSON VERSION

- labels: title IMAGE, version VERSION, licence Apache-2.0, a revision that names a commit;
- ROOTFS/usr/share/doc/IMAGE/sbom.spdx.json: SPDX 2.3, describing IMAGE at VERSION, every package
  with a package URL and a relationship to IMAGE;
- the scratch images: every dpkg record in /var/lib/dpkg/status.d is in the SBOM at the same
  version, and the libcurl and TLS library linked in are among them;
- the trainer: every NVIDIA wheel's .dist-info is in the image and in the SBOM at its version, the
  driver it needs is labelled and NVIDIA_REQUIRE_CUDA set.
Prints one "ok:" line a check; "FAIL:" lines and exit 1 when one fails.
"""
import glob
import json
import os
import re
import sys

failures = 0


def check(ok, message):
    global failures
    print(("ok: " if ok else "FAIL: ") + message)
    failures += 0 if ok else 1


def status_records(rootfs):
    records = {}
    for path in sorted(glob.glob(os.path.join(rootfs, "var/lib/dpkg/status.d/*"))):
        fields = dict(line.split(": ", 1) for line in open(path).read().splitlines() if ": " in line)
        records[fields.get("Package", "")] = fields.get("Version", "")
    return records


def main():
    image, rootfs, config_path, version = sys.argv[1:5]
    config = json.load(open(config_path))["config"]
    labels = config.get("Labels") or {}
    want = {"org.opencontainers.image.title": image, "org.opencontainers.image.version": version,
            "org.opencontainers.image.licenses": "Apache-2.0"}
    for key, value in want.items():
        check(labels.get(key) == value, f"{image}: label {key}={labels.get(key)!r} (want {value!r})")
    revision = labels.get("org.opencontainers.image.revision", "")
    check(re.fullmatch(r"[0-9a-f]{40}(-dirty)?", revision) is not None,
          f"{image}: label org.opencontainers.image.revision={revision!r} names a commit")

    path = os.path.join(rootfs, "usr/share/doc", image, "sbom.spdx.json")
    try:
        sbom = json.load(open(path))
    except (OSError, ValueError) as e:
        check(False, f"{image}: SBOM {path}: {e}")
        return
    packages = {p["SPDXID"]: p for p in sbom.get("packages", [])}
    described = [r["relatedSpdxElement"] for r in sbom.get("relationships", [])
                 if r["spdxElementId"] == "SPDXRef-DOCUMENT" and r["relationshipType"] == "DESCRIBES"]
    own = packages.get(described[0]) if described else None
    check(sbom.get("spdxVersion") == "SPDX-2.3" and own is not None and own["name"] == image
          and own["versionInfo"] == version, f"{image}: the SBOM is SPDX 2.3 and describes {image} {version}")
    related = {r["relatedSpdxElement"] for r in sbom.get("relationships", []) if own and r["spdxElementId"] == own["SPDXID"]}
    parts = [p for i, p in packages.items() if own is None or i != own["SPDXID"]]
    check(parts != [] and all(p["SPDXID"] in related and any(ref["referenceType"] == "purl" for ref in p.get("externalRefs", []))
                              for p in parts),
          f"{image}: {len(parts)} components in the SBOM, each with a package URL and a relationship to {image}")
    versions = {p["name"]: p["versionInfo"] for p in parts}

    if image == "nccl-trainer":
        infos = glob.glob(os.path.join(rootfs, "opt/deps/python/*.dist-info"))
        wheels = {}
        for info in infos:
            meta = dict(l.split(": ", 1) for l in open(os.path.join(info, "METADATA")).read().split("\n\n")[0].splitlines() if ": " in l)
            wheels[meta["Name"]] = meta["Version"]
        check("nvidia-nccl-cu13" in wheels and all(versions.get(n) == v for n, v in wheels.items()),
              f"{image}: the wheels' .dist-info are in the image and the SBOM at their versions ({wheels})")
        check(labels.get("dev.nccl.cuda.driver-min") == "580", f"{image}: label dev.nccl.cuda.driver-min=580")
        env = dict(e.split("=", 1) for e in config.get("Env") or [])
        check(env.get("NVIDIA_REQUIRE_CUDA", "").startswith("cuda>="), f"{image}: NVIDIA_REQUIRE_CUDA={env.get('NVIDIA_REQUIRE_CUDA')!r}")
    else:
        records = status_records(rootfs)
        check(records != {} and all(versions.get(n) == v for n, v in records.items()),
              f"{image}: the dpkg records in /var/lib/dpkg/status.d ({', '.join(sorted(records))}) are in the SBOM at their versions")
        tls = "libssl-dev" if image == "nccl-operator" else "libmbedtls-dev"
        check("libcurl4" in records and tls in records and "libc6" in records,
              f"{image}: the linked-in libcurl and {tls} and the image's glibc are recorded for scanners")


if __name__ == "__main__":
    main()
    sys.exit(1 if failures else 0)
