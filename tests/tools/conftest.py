from __future__ import annotations

import pytest

from tests.fakes.approver import FakeApprover


@pytest.fixture
def approver() -> FakeApprover:
    return FakeApprover("once")
