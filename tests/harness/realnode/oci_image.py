#!/usr/bin/env python3
"""Writes an OCI image archive (for `ctr images import`) from files on this machine.

For the real node's own part only: the pod sandbox (pause) image, a static binary, so the node
needs no registry for it. The images the node runs come from deploy/docker/Dockerfile through
the registry of tests/harness/images/build.sh.

  oci_image.py --name NAME:TAG --out FILE.tar [--entrypoint /bin/x] HOST_PATH=IMAGE_PATH ...
"""
import argparse
import hashlib
import io
import json
import os
import sys
import tarfile


def add_file(tar, host_path, image_path, added):
    image_path = image_path.lstrip("/")
    if image_path in added:
        return
    parts = image_path.split("/")
    for i in range(1, len(parts)):
        d = "/".join(parts[:i])
        if d not in added:
            info = tarfile.TarInfo(d)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
            added.add(d)
    real = os.path.realpath(host_path)
    info = tarfile.TarInfo(image_path)
    info.size, info.mode = os.path.getsize(real), os.stat(real).st_mode & 0o777
    with open(real, "rb") as f:
        tar.addfile(info, f)
    added.add(image_path)


def blob(data):
    return "sha256:" + hashlib.sha256(data).hexdigest(), data


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--name", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--entrypoint")
    p.add_argument("files", nargs="+", help="HOST_PATH=IMAGE_PATH")
    a = p.parse_args()

    layer_buf = io.BytesIO()
    added = set()
    with tarfile.open(fileobj=layer_buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for spec in a.files:
            host, _, image = spec.partition("=")
            if not os.path.exists(host):
                sys.exit(f"oci_image.py: {host} does not exist")
            add_file(tar, host, image or host, added)
        for d in ("tmp", "etc"):
            if d not in added:
                info = tarfile.TarInfo(d)
                info.type, info.mode = tarfile.DIRTYPE, 0o1777 if d == "tmp" else 0o755
                tar.addfile(info)
    layer_digest, layer = blob(layer_buf.getvalue())
    config = {
        "architecture": "amd64", "os": "linux",
        "config": {"Env": ["PATH=/usr/local/bin:/usr/bin:/bin"], "WorkingDir": "/",
                   **({"Entrypoint": [a.entrypoint]} if a.entrypoint else {})},
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
    }
    config_digest, config_data = blob(json.dumps(config).encode())
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                           "digest": config_digest, "size": len(config_data)},
                "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                            "digest": layer_digest, "size": len(layer)}]}
    manifest_digest, manifest_data = blob(json.dumps(manifest).encode())
    index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
             "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                            "digest": manifest_digest, "size": len(manifest_data),
                            "annotations": {"io.containerd.image.name": a.name,
                                            "org.opencontainers.image.ref.name": a.name.rsplit(":", 1)[-1]}}]}
    with tarfile.open(a.out, "w") as out:
        def put(name, data):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))
        put("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        put("index.json", json.dumps(index).encode())
        for digest, data in ((layer_digest, layer), (config_digest, config_data), (manifest_digest, manifest_data)):
            put("blobs/sha256/" + digest.split(":")[1], data)


if __name__ == "__main__":
    main()
