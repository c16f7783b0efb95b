#!/usr/bin/env python3
# Helm post-renderer for the local node (tests/node): it runs no images, so containers
# need a command, and the chart (like most charts) relies on the image's ENTRYPOINT. This adds
# the ENTRYPOINT of deploy/docker/operator.Dockerfile as `command` of the operator container;
# everything else passes through unchanged.
import sys

import yaml

docs = [d for d in yaml.safe_load_all(sys.stdin) if d is not None]
for doc in docs:
    if doc.get("kind") != "Deployment":
        continue
    for c in doc["spec"]["template"]["spec"].get("containers", []):
        if c.get("name") == "operator" and "command" not in c:
            c["command"] = ["nccl-operator"]
yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)
