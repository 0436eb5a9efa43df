import pytest

from implkit import World


@pytest.fixture
def world():
    return World()
