"""Fixtures of the command-line tests."""

import pytest


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A scratch folder per test module, for the files the bad-input tests write."""
    return tmp_path_factory.mktemp("bad-input")
