#!/usr/bin/env python3
"""yaml_to_json.py IN.yaml OUT.json: the build turns the CRD into JSON for the unit tests to read."""
import json
import sys

import yaml

with open(sys.argv[1], encoding="utf-8") as source:
    document = yaml.safe_load(source)
with open(sys.argv[2], "w", encoding="utf-8") as out:
    json.dump(document, out, indent=1)
