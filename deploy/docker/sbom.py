#!/usr/bin/env python3
"""Writes what an image is made of where scanners look for it. Run in the build stage of
deploy/docker/Dockerfile, once per image, after the image's files are staged under ROOT:

  sbom.py --image nccl-operator --root /out/operator --version 0.1.0 [--deps /src/.deps]
          [--wheels /opt/deps/python [--wheels-at PATH]]

- ROOT/usr/share/doc/<image>/sbom.spdx.json: an SPDX 2.3 document. Its first package is the
  image's own program (Apache-2.0); then every component built into it, each with a package URL
  (Debian packages as pkg:deb, NVIDIA's wheels as pkg:pypi) and how it is in there (STATIC_LINK,
  DYNAMIC_LINK, CONTAINS).
- ROOT/var/lib/dpkg/status.d/<package>: one dpkg status record per Debian package whose code is in
  the image (for the FROM scratch images: linked in statically, or glibc's files). Vulnerability
  scanners read this directory in distroless images; without it, the lean static libcurl, OpenSSL
  and mbedTLS of a scratch image are invisible to them.
- with --wheels: the wheels' .dist-info directories under ROOT at the same path (or --wheels-at), so scanners
  inventory NCCL and the CUDA runtime as the Python packages they came from.

Versions are read, never written down here: the Debian packages' from dpkg, the lean libcurl's
and cpp-httplib's from the stamps their scripts leave (the Debian source version they built).
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import uuid

# What each image is made of: (how, where the version comes from, name). "deb" names an installed
# Debian package (dpkg tells its version and source); ("stamp", dir, package) a .deps/<dir>/.stamp
# whose first two words are the Debian source package and version it was built from, recorded as
# that source's binary package `package` (scanners match Debian advisories by source and version).
COMPONENTS = {
    "nccl-operator": [
        ("DYNAMIC_LINK", "deb", "libc6"),
        ("STATIC_LINK", "deb", "libstdc++-12-dev"),
        ("STATIC_LINK", "stamp", ("curl", "libcurl4")),
        ("STATIC_LINK", "deb", "libssl-dev"),
        ("STATIC_LINK", "deb", "libboost1.74-dev"),
        ("STATIC_LINK", "deb", "nlohmann-json3-dev"),
    ],
    "nccl-sidecar": [
        ("DYNAMIC_LINK", "deb", "libc6"),
        ("STATIC_LINK", "deb", "libstdc++-12-dev"),
        ("STATIC_LINK", "stamp", ("curl-mbedtls", "libcurl4")),
        ("STATIC_LINK", "deb", "libmbedtls-dev"),
        ("STATIC_LINK", "stamp", ("httplib", "libcpp-httplib-dev")),
        ("STATIC_LINK", "deb", "nlohmann-json3-dev"),
    ],
    # The runtime has its own HTTP client and JSON reader; NVIDIA's wheels come with --wheels, the
    # trainer base's own Debian packages are in its /var/lib/dpkg/status already.
    "nccl-trainer": [],
}
DEBIAN = "debian-12"


def fail(message):
    sys.exit(f"sbom.py: {message}")


def dpkg_fields(package):
    fields = "${Package}\t${Version}\t${Architecture}\t${source:Package}\t${source:Version}"
    out = subprocess.run(["dpkg-query", "-W", f"-f={fields}", package], capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout:
        fail(f"{package} is not installed in the build stage: {out.stderr.strip()}")
    name, version, arch, source, source_version = out.stdout.split("\t")
    return {"name": name, "version": version, "arch": arch, "source": source, "source_version": source_version}


def stamp_fields(deps, directory, package):
    path = os.path.join(deps, directory, ".stamp")
    try:
        words = open(path).read().split()
    except OSError as e:
        fail(f"cannot read {path} (was the lean build run?): {e}")
    if len(words) < 2:
        fail(f"{path} does not start with a source package and its version")
    source, version = words[0], words[1]
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()
    return {"name": package, "version": version, "arch": arch, "source": source, "source_version": version}


def deb_purl(p):
    purl = f"pkg:deb/debian/{p['name']}@{p['version']}?arch={p['arch']}&distro={DEBIAN}"
    return purl + (f"&upstream={p['source']}" if p["source"] != p["name"] else "")


def wheel_packages(wheels):
    out = []
    for entry in sorted(os.listdir(wheels)):
        if not entry.endswith(".dist-info"):
            continue
        meta = {}
        for line in open(os.path.join(wheels, entry, "METADATA"), encoding="utf-8"):
            if not line.strip():
                break
            key, _, value = line.partition(":")
            meta.setdefault(key.strip(), value.strip())
        out.append({"entry": entry, "name": meta["Name"], "version": meta["Version"],
                    "license": meta.get("License-Expression") or "NOASSERTION"})
    if not out:
        fail(f"no .dist-info directory in {wheels}")
    return out


def spdx_id(text):
    return "SPDXRef-" + "".join(c if c.isalnum() or c in ".-" else "-" for c in text)


def package(name, version, purl, license_declared="NOASSERTION", supplier=None):
    p = {"name": name, "SPDXID": spdx_id(f"{name}-{version}"), "versionInfo": version,
         "downloadLocation": "NOASSERTION", "filesAnalyzed": False,
         "licenseConcluded": "NOASSERTION", "licenseDeclared": license_declared,
         "copyrightText": "NOASSERTION",
         "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                           "referenceLocator": purl}]}
    if supplier:
        p["supplier"] = supplier
    return p


def status_record(p):
    source = p["source"] if p["source_version"] == p["version"] else f"{p['source']} ({p['source_version']})"
    lines = [f"Package: {p['name']}", "Status: install ok installed", f"Architecture: {p['arch']}",
             f"Source: {source}", f"Version: {p['version']}"]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image", required=True, choices=sorted(COMPONENTS))
    ap.add_argument("--root", required=True, help="the image's staged files")
    ap.add_argument("--version", required=True, help="the release version (the file VERSION)")
    ap.add_argument("--deps", default=".deps", help="the prefix of the lean builds' stamps")
    ap.add_argument("--wheels", help="a pip --target prefix whose wheels the image carries")
    ap.add_argument("--wheels-at", help="where the image keeps that prefix (default: --wheels)")
    args = ap.parse_args()

    own = package(args.image, args.version, f"pkg:generic/{args.image}@{args.version}", "Apache-2.0")
    packages, relationships = [own], [
        {"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES", "relatedSpdxElement": own["SPDXID"]}]
    status_dir = os.path.join(args.root, "var/lib/dpkg/status.d")
    for how, kind, name in COMPONENTS[args.image]:
        p = dpkg_fields(name) if kind == "deb" else stamp_fields(args.deps, *name)
        entry = package(p["name"], p["version"], deb_purl(p), supplier="Organization: Debian")
        packages.append(entry)
        relationships.append({"spdxElementId": own["SPDXID"], "relationshipType": how,
                              "relatedSpdxElement": entry["SPDXID"]})
        if args.image != "nccl-trainer":  # a Debian base keeps its own dpkg database
            os.makedirs(status_dir, exist_ok=True)
            with open(os.path.join(status_dir, p["name"]), "w") as f:
                f.write(status_record(p))
    if args.wheels:
        for w in wheel_packages(args.wheels):
            entry = package(w["name"], w["version"], f"pkg:pypi/{w['name'].lower()}@{w['version']}", w["license"],
                            supplier="Organization: NVIDIA")
            packages.append(entry)
            relationships.append({"spdxElementId": own["SPDXID"], "relationshipType": "CONTAINS",
                                  "relatedSpdxElement": entry["SPDXID"]})
            target = os.path.join(args.root, (args.wheels_at or args.wheels).lstrip("/"), w["entry"])
            shutil.copytree(os.path.join(args.wheels, w["entry"]), target, dirs_exist_ok=True)

    # A wheel's licence named as a LicenseRef must be defined in the document to be valid SPDX.
    refs = sorted({ref for p in packages for ref in p["licenseDeclared"].replace("(", " ").replace(")", " ").split()
                   if ref.startswith("LicenseRef-")})
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    document = {
        "spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0", "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"{args.image}-{args.version}", "documentNamespace": f"urn:uuid:{uuid.uuid4()}",
        "creationInfo": {"created": now, "creators": ["Tool: deploy/docker/sbom.py"]},
        "packages": packages, "relationships": relationships,
    }
    if refs:
        document["hasExtractedLicensingInfos"] = [
            {"licenseId": ref, "name": ref[len("LicenseRef-"):],
             "extractedText": "The licence files in the package's .dist-info/licenses directory."} for ref in refs]
    doc_dir = os.path.join(args.root, "usr/share/doc", args.image)
    os.makedirs(doc_dir, exist_ok=True)
    with open(os.path.join(doc_dir, "sbom.spdx.json"), "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
    print(f"sbom.py: {args.image}: {len(packages) - 1} components")


if __name__ == "__main__":
    main()
