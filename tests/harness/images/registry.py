#!/usr/bin/env python3
"""Reads images from the loopback registry of tests/harness/images/build.sh (plain HTTP, Docker
Registry API v2), with the standard library only.

  registry.py sizes REGISTRY REPO... --tag TAG
      one line per image: ref, compressed bytes (config + layers, what a node pulls) and
      uncompressed bytes (the layers unpacked)
  registry.py unpack REGISTRY REPO:TAG DIR
      unpacks the image's layers into DIR (whiteouts applied) and prints its config as JSON
"""
import argparse
import gzip
import io
import json
import os
import shutil
import sys
import tarfile
import urllib.request

MANIFEST_TYPES = ", ".join([
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.docker.distribution.manifest.v2+json",
])


def get(url, accept=None):
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


def manifest(registry, repo, reference):
    """The image manifest for linux/amd64 (an index is resolved to it)."""
    doc = json.loads(get(f"http://{registry}/v2/{repo}/manifests/{reference}", MANIFEST_TYPES))
    if "manifests" in doc:
        for entry in doc["manifests"]:
            platform = entry.get("platform", {})
            if platform.get("os") == "linux" and platform.get("architecture") == "amd64":
                return manifest(registry, repo, entry["digest"])
        raise SystemExit(f"{repo}:{reference}: no linux/amd64 image in its index")
    return doc


def blob(registry, repo, digest):
    return get(f"http://{registry}/v2/{repo}/blobs/{digest}")


def layer_tar(data):
    """A layer blob as an open tar archive (gzip, or uncompressed)."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data, tarfile.open(fileobj=io.BytesIO(data))


def sizes(args):
    for repo in args.repos:
        m = manifest(args.registry, repo, args.tag)
        compressed = m["config"]["size"] + sum(layer["size"] for layer in m["layers"])
        unpacked = 0
        for layer in m["layers"]:
            data, _ = layer_tar(blob(args.registry, repo, layer["digest"]))
            unpacked += len(data)
        print(f"{args.registry}/{repo}:{args.tag} {compressed} {unpacked}")


def unpack(args):
    repo, _, tag = args.image.rpartition(":")
    m = manifest(args.registry, repo, tag)
    config = json.loads(blob(args.registry, repo, m["config"]["digest"]))
    os.makedirs(args.dir, exist_ok=True)
    root = os.path.realpath(args.dir)
    for layer in m["layers"]:
        _, tar = layer_tar(blob(args.registry, repo, layer["digest"]))
        members = []
        for member in tar.getmembers():
            head, name = os.path.split(member.name)
            if name.startswith(".wh."):  # a whiteout: the file below it is deleted
                target = os.path.join(root, head, name[len(".wh."):])
                if name == ".wh..wh..opq":
                    target = os.path.join(root, head)
                    for child in os.listdir(target) if os.path.isdir(target) else []:
                        remove(os.path.join(target, child))
                else:
                    remove(target)
                continue
            members.append(member)
        # Our own images, unpacked as root: owners, modes and links as the image has them.
        trusted = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}
        tar.extractall(root, members=members, numeric_owner=True, **trusted)
    json.dump(config, sys.stdout)


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("sizes")
    p.add_argument("registry")
    p.add_argument("repos", nargs="+")
    p.add_argument("--tag", required=True)
    p.set_defaults(run=sizes)
    p = sub.add_parser("unpack")
    p.add_argument("registry")
    p.add_argument("image")
    p.add_argument("dir")
    p.set_defaults(run=unpack)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
