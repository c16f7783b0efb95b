"""The installed package's version is nccl_k8s.__version__ (pyproject.toml reads it from there;
tests/version/check_version.py holds it to the file VERSION)."""
import importlib.metadata

import pytest

import nccl_k8s


def test_the_installed_version_is_the_packages():
    try:
        installed = importlib.metadata.version("nccl-k8s")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("nccl-k8s is not installed here (run from the source tree)")
    assert installed == nccl_k8s.__version__
